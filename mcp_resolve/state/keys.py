"""The server's secret keys: the ring that seals request states, and tags made under it.

A `KeyRing` holds one or more secrets (the first signs and seals, every one verifies and
opens, for rotation). Nothing keeps a secret itself: each use has its own keys derived
by HKDF-SHA256 (sealing, and one per `authenticator(purpose)` or `cipher(purpose)`), so a
value made for one use is never valid for another. `mcp_resolve.seal` re-exports `KeyRing`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MIN_KEY_BYTES = 32
_INFO = b"mcp_resolve/requestState/v1/aes-256-gcm"
_MAC_INFO = b"mcp_resolve/authenticator/v1/hmac-sha256"
_KID_LABEL = b"mcp_resolve/requestState/v1/key-id"
# What a sealed value starts with and ends with, for the seal and the key ring's cipher
# alike: the id of the key that sealed it, the AES-GCM nonce, and (last) the GCM tag.
KEY_ID_BYTES = 4
NONCE_BYTES, TAG_BYTES = 12, 16


def _key_id(derived: bytes) -> bytes:
    return hashlib.sha256(_KID_LABEL + derived).digest()[:KEY_ID_BYTES]


class KeyRing:
    """Secret keys for sealing: the first one seals, every one unseals (for rotation).

    Each secret (bytes, or str taken as its UTF-8 text) must be at least 32 bytes; the AES
    key is derived from it with HKDF-SHA256, so the raw secret is never used or kept. A
    4-byte key id, a hash of the derived key, goes in each token, so unsealing picks its
    key without trial decryption. To rotate across several workers, in three phases, each
    rolled out everywhere before the next: (1) add the new key *second*, [old, new], so
    every worker can read it while all still seal with the old one; (2) move it first,
    [new, old], which also moves each stored record under the new key when it is read
    (`record_names`); (3) drop the old key, [new], once the records worth keeping were
    read (docs/security.md, "Rotating a key").
    """

    def __init__(self, *secrets: bytes | bytearray | str) -> None:
        if not secrets:
            raise ValueError("KeyRing needs at least one secret key")
        derived_keys: list[bytes] = []
        for number, secret in enumerate(secrets, 1):
            if isinstance(secret, str):
                raw = secret.encode("utf-8", "surrogatepass")
            elif isinstance(secret, (bytes, bytearray)):
                raw = bytes(secret)
            else:
                raise TypeError(
                    f"key #{number} must be bytes or str, not {type(secret).__name__} "
                    "(pass several keys as separate arguments: KeyRing(*keys))"
                )
            if len(raw) < MIN_KEY_BYTES:
                raise ValueError(
                    f"key #{number} is {len(raw)} bytes; each key needs at least "
                    f"{MIN_KEY_BYTES} (e.g. secrets.token_urlsafe(32))"
                )
            derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(raw)
            for other, earlier in enumerate(derived_keys, 1):
                if earlier == derived:
                    raise ValueError(f"key #{number} is the same as key #{other}")
                if _key_id(earlier) == _key_id(derived):
                    raise ValueError(f"keys #{other} and #{number} share a key id; replace one")
            derived_keys.append(derived)
        self._keys = tuple((_key_id(d), AESGCM(d)) for d in derived_keys)
        self._by_id = dict(self._keys)
        # Roots for `authenticator()`: derived apart from the sealing keys, never the secret.
        self._mac_roots = tuple(
            HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_MAC_INFO).derive(d)
            for d in derived_keys
        )

    @classmethod
    def from_env(cls, name: str = "MCP_RESOLVE_STATE_KEYS") -> KeyRing:
        """Keys from a comma-separated environment variable, sealing key first.

        Each entry is raw text (surrounding spaces stripped), read exactly as
        `KeyRing("...")` reads a str, so both ways of configuring agree; generate one with
        `python -c "import secrets; print(secrets.token_urlsafe(32))"`.
        """
        value = os.environ.get(name, "").strip()
        if not value:
            raise ValueError(f"environment variable {name} is not set or is empty")
        entries = [entry.strip() for entry in value.split(",")]
        if not all(entries):
            raise ValueError(f"{name} has an empty entry; separate keys with single commas")
        try:
            return cls(*entries)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None

    @classmethod
    def generate(cls) -> KeyRing:
        """A random key held only by this process: tokens die with it and other workers."""
        return cls(os.urandom(32))

    def authenticator(self, purpose: str) -> Authenticator:
        """HMAC-SHA256 tags for `purpose` (e.g. the completion bus) under this ring: the
        first key signs, every key verifies, so rotation works as for sealing. Each purpose
        has its own keys, derived from the ring's, so a tag made for one purpose (or a
        sealed state) is never valid for another."""
        label = purpose.encode("utf-8")
        keys = tuple(hmac.new(root, label, hashlib.sha256).digest() for root in self._mac_roots)
        return Authenticator(keys)

    def cipher(self, purpose: str) -> FixedCipher:
        """Deterministic authenticated encryption for `purpose` under this ring (the first
        key seals, every key opens): see `FixedCipher`."""
        label = purpose.encode("utf-8")
        keys = tuple(
            (
                kid,
                AESGCM(hmac.new(root, b"cipher/key\0" + label, hashlib.sha256).digest()),
                hmac.new(root, b"cipher/nonce\0" + label, hashlib.sha256).digest(),
            )
            for (kid, _), root in zip(self._keys, self._mac_roots, strict=True)
        )
        return FixedCipher(keys)

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(kid.hex() for kid, _ in self._keys)

    def __repr__(self) -> str:
        return f"KeyRing(key_ids={list(self.key_ids)!r})"


class Authenticator:
    """Tags messages with the first key of a `KeyRing`, checks them against every key."""

    __slots__ = ("_keys",)

    def __init__(self, keys: tuple[bytes, ...]) -> None:
        self._keys = keys

    def sign(self, message: bytes) -> str:
        """The tag of `message`: 43 characters of base64url, without `.` or padding."""
        tag = hmac.new(self._keys[0], message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(tag).rstrip(b"=").decode("ascii")

    def tags(self, message: bytes) -> tuple[str, ...]:
        """`message`'s tag under each key of the ring, the first key's first: the names a
        record stored under its tag has had since each key joined (`record_names`)."""
        return tuple(
            base64.urlsafe_b64encode(hmac.new(key, message, hashlib.sha256).digest())
            .rstrip(b"=")
            .decode("ascii")
            for key in self._keys
        )

    def verify(self, message: bytes, tag: str) -> bool:
        """Whether `tag` is `message`'s under any key of the ring (in constant time)."""
        given = tag.encode("ascii", "replace")
        found = False
        for key in self._keys:
            expected = hmac.new(key, message, hashlib.sha256).digest()
            made = base64.urlsafe_b64encode(expected).rstrip(b"=")
            found |= hmac.compare_digest(made, given)
        return found

    def __repr__(self) -> str:
        return f"Authenticator(keys={len(self._keys)})"


class FixedCipher:
    """AES-256-GCM whose nonce is an HMAC of the context and the text (a synthetic IV).

    For text that must travel encrypted in something that may not change from one request
    to the next (a page link a client answers pinned to its digest): the same text in the
    same context under the same key is the same token, on every worker. That equality is
    all it reveals; a token opens only in the context it was sealed for. Token: base64url
    of key id (4) || nonce (12) || ciphertext and tag.
    """

    __slots__ = ("_by_id", "_keys")

    def __init__(self, keys: tuple[tuple[bytes, AESGCM, bytes], ...]) -> None:
        self._keys = keys
        self._by_id = {kid: (aead, mac) for kid, aead, mac in keys}

    def seal(self, text: bytes, context: bytes) -> str:
        kid, aead, mac = self._keys[0]
        nonce = _synthetic_nonce(mac, context, text)
        sealed = kid + nonce + aead.encrypt(nonce, text, kid + context)
        return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode("ascii")

    def open(self, token: str, context: bytes) -> bytes | None:
        """The text, or None for anything not sealed here for `context`."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (ValueError, binascii.Error):
            return None
        found = self._by_id.get(raw[:KEY_ID_BYTES])
        if found is None or len(raw) < KEY_ID_BYTES + NONCE_BYTES + TAG_BYTES:
            return None
        aead, mac = found
        nonce = raw[KEY_ID_BYTES : KEY_ID_BYTES + NONCE_BYTES]
        try:
            text = aead.decrypt(
                nonce, raw[KEY_ID_BYTES + NONCE_BYTES :], raw[:KEY_ID_BYTES] + context
            )
        except InvalidTag:
            return None
        if not hmac.compare_digest(nonce, _synthetic_nonce(mac, context, text)):
            return None
        return text


def _synthetic_nonce(mac: bytes, context: bytes, text: bytes) -> bytes:
    framed = len(context).to_bytes(4, "big") + context + text
    return hmac.new(mac, framed, hashlib.sha256).digest()[:NONCE_BYTES]
