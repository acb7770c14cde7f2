"""Sealed `requestState`: authenticated encryption for the state a client carries between rounds.

On 2026-07-28 connections the client echoes `requestState` back on its retry, so it is
attacker-controlled input. `MCPServer` seals it itself; hosts on the SDK's low-level `Server`
use this module instead: AES-256-GCM under keys derived by HKDF-SHA256 from a rotation ring,
an encrypted envelope with issue and expiry times, a binding to the request (method, tool,
arguments, principal) and optional at-most-once use. Every rejection is the same
`InvalidState`; its reason goes to the server log only. This module never imports `mcp`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from cryptography.exceptions import InvalidTag

from .keys import KEY_ID_BYTES, MIN_KEY_BYTES, NONCE_BYTES, TAG_BYTES, Authenticator, KeyRing
from .replay_guard import MemoryReplayGuard, ReplayGuard, check_replay_guard

logger = logging.getLogger("mcp_resolve.seal")

MESSAGE = "Invalid or expired requestState"
PREFIX = "mrs1."  # versioned, and authenticated as associated data
DEFAULT_TTL = 600.0
FUTURE_SKEW = 60.0
MAX_TOKEN_LENGTH = 64 * 1024
_PRINCIPAL_LABEL = b"mcp_resolve/requestState/v1/principal"
_AAD_PREFIX = PREFIX.encode("ascii")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
_FIELDS = {"m": "method", "t": "tool", "a": "arguments", "p": "principal", "aud": "audience"}

Reason = Literal[
    "oversized", "malformed", "unknown_key", "tampered", "expired", "not_yet_valid", "binding",
    "replayed",
]  # fmt: skip


class InvalidState(ValueError):
    """A `requestState` was refused; hosts answer MCP -32602 with `str(exc)` and nothing else.

    The message never varies, so a client cannot probe which check failed; `reason` (one
    of `Reason`) and `detail` (a fixed phrase) are for the server log.
    """

    def __init__(self, reason: Reason, detail: str = "") -> None:
        super().__init__(MESSAGE)
        self.reason: Reason = reason
        self.detail = detail

    def __reduce__(self) -> tuple[type[InvalidState], tuple[str, str]]:
        return type(self), (self.reason, self.detail)


def _b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """Base64url of the first 16 bytes of sha256 over canonical JSON of `arguments`.

    Canonical means sorted keys, compact separators and ASCII only, so every worker
    computes the same digest. Pass the arguments as they came over the wire (JSON
    values): a value JSON cannot hold raises `TypeError` rather than being digested by
    its `str()`, which may hide a field (a `SecretStr`, a `repr=False` amount) and so
    bind a state to other values too.
    """
    text = json.dumps(dict(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return _b64e(hashlib.sha256(text.encode("ascii")).digest()[:16])


def _principal_tag(principal: str) -> str:
    """A hash, so the token never holds who the user is, even encrypted."""
    data = _PRINCIPAL_LABEL + b"\0" + principal.encode("utf-8", "surrogatepass")
    return _b64e(hashlib.sha256(data).digest()[:16])


@dataclass(frozen=True)
class Binding:
    """The request a token is valid for; replaying it on any other request is refused.

    `principal` is whoever the transport authenticated (None on unauthenticated ones);
    a token sealed for one principal, or for none, is refused for any other.
    """

    method: str
    tool: str
    arguments_digest: str
    principal: str | None = None

    @classmethod
    def of(
        cls, method: str, tool: str, arguments: Mapping[str, Any], principal: str | None = None
    ) -> Binding:
        return cls(method, tool, arguments_digest(arguments), principal)


class Opened(NamedTuple):
    """A token that passed every check: its payload, its random id, and when it expires."""

    payload: str
    token_id: str
    expires_at: float


class OversizedState(ValueError):
    """The sealed token would exceed the sealer's `max_token_length` (its length is `length`)."""

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"sealed state is {length} chars, over max_token_length ({limit})")
        self.length = length


def _number(value: Any) -> float | None:
    if type(value) not in (int, float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


class StateSealer:
    """Seals a state string into an opaque token bound to its request, and opens it again.

    Token: `PREFIX` + base64url(no padding) of key id (4) || nonce (12) || AES-GCM output,
    with the prefix and key id as associated data. The plaintext is a compact JSON envelope
    (issued-at, expiry, request binding, a random token id, the payload), so clients can
    neither read nor alter it. A token is accepted until `min(exp, iat + ttl)`, so lowering
    `ttl` also shortens tokens already issued; nonces are random, so rotate the sealing key
    long before 2**32 seals. `audience` (e.g. the server name) keeps servers that share
    keys from accepting each other's tokens.
    """

    def __init__(
        self,
        keys: KeyRing,
        *,
        ttl: float = DEFAULT_TTL,
        audience: str | None = None,
        replay_guard: ReplayGuard | None = None,
        now: Callable[[], float] = time.time,
        max_token_length: int = MAX_TOKEN_LENGTH,
    ) -> None:
        if not isinstance(keys, KeyRing):
            raise TypeError(f"keys must be a KeyRing, not {type(keys).__name__}")
        if _number(ttl) is None or ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        if max_token_length < 1:
            raise ValueError("max_token_length must be positive")
        if replay_guard is not None:
            check_replay_guard(replay_guard)
        self._keys, self._ttl, self._audience = keys, float(ttl), audience
        self._guard, self._now, self._max = replay_guard, now, max_token_length
        self.replay_guard = replay_guard
        self.max_token_length = max_token_length

    @property
    def ttl(self) -> float:
        """Seconds a token stays valid after it is sealed."""
        return self._ttl

    @property
    def audience(self) -> str | None:
        return self._audience

    @property
    def now(self) -> Callable[[], float]:
        """The clock this sealer reads (Unix seconds); what it seals expires by it."""
        return self._now

    def seal(self, payload: str, *, binding: Binding) -> str:
        """An opaque token for `payload`, usable only on `binding` and only for `ttl` seconds."""
        if not isinstance(payload, str):
            raise TypeError(f"payload must be str, not {type(payload).__name__}")
        issued = float(self._now())
        envelope = {"v": 1, "iat": issued, "exp": issued + self._ttl, "j": _b64e(os.urandom(16))}
        envelope.update(self._claims(binding), s=payload)
        token = self._encrypt(json.dumps(envelope, separators=(",", ":")).encode("ascii"))
        if len(token) > self._max:
            raise OversizedState(len(token), self._max)
        return token

    def unseal(self, token: str, *, binding: Binding) -> str:
        """The payload, or `InvalidState` for any token that is not fully valid here."""
        return self._open(token, binding).payload

    def open(self, token: str, *, binding: Binding) -> Opened:
        """As `unseal`, with the token's id and its real expiry (to remember it that long)."""
        return self._open(token, binding)

    async def unseal_once(self, token: str, *, binding: Binding, owner: str | None = None) -> str:
        """`unseal`, then claim the token id with the replay guard: a second use is refused.

        The id is claimed until the token's real expiry plus `FUTURE_SKEW`, so it is
        remembered for as long as any worker with a clock a little behind would accept it.
        """
        if self._guard is None:
            raise RuntimeError("unseal_once needs a StateSealer built with replay_guard=")
        opened = self._open(token, binding)
        until = opened.expires_at + FUTURE_SKEW
        if not await self._guard.claim(opened.token_id, until, owner=owner):
            raise self._refused(InvalidState("replayed", "token id already used"), binding)
        return opened.payload

    def _claims(self, binding: Binding) -> dict[str, str]:
        if not isinstance(binding, Binding):
            raise TypeError(f"binding must be a Binding, not {type(binding).__name__}")
        claims = {"m": binding.method, "t": binding.tool, "a": binding.arguments_digest}
        if binding.principal is not None:
            claims["p"] = _principal_tag(binding.principal)
        if self._audience is not None:
            claims["aud"] = self._audience
        return claims

    def _encrypt(self, plaintext: bytes) -> str:
        kid, aead = self._keys._keys[0]
        nonce = os.urandom(NONCE_BYTES)
        return PREFIX + _b64e(kid + nonce + aead.encrypt(nonce, plaintext, _AAD_PREFIX + kid))

    def _refused(self, exc: InvalidState, binding: Binding) -> InvalidState:
        logger.warning(
            "requestState rejected on %r %r: %s (%s)",
            binding.method, binding.tool, exc.reason, exc.detail,
        )  # fmt: skip
        return exc

    def _open(self, token: object, binding: Binding) -> Opened:
        expected = self._claims(binding)
        try:
            return self._read(token, expected)
        except InvalidState as exc:
            raise self._refused(exc, binding) from None

    def _read(self, token: object, expected: dict[str, str]) -> Opened:
        if not isinstance(token, str):
            raise InvalidState("malformed", "not a string")
        if len(token) > self._max:
            raise InvalidState("oversized", "longer than max_token_length")
        if not token.startswith(PREFIX):
            raise InvalidState("malformed", "prefix")
        body = token[len(PREFIX) :]
        if not _BASE64URL.fullmatch(body) or len(body) % 4 == 1:
            raise InvalidState("malformed", "base64url")
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError):
            raise InvalidState("malformed", "base64url") from None
        if _b64e(raw) != body:  # one token string per byte string: no malleable encodings
            raise InvalidState("malformed", "non-canonical base64url")
        if len(raw) <= KEY_ID_BYTES + NONCE_BYTES + TAG_BYTES:
            raise InvalidState("malformed", "too short")
        kid, nonce, sealed = (
            raw[:KEY_ID_BYTES],
            raw[KEY_ID_BYTES : KEY_ID_BYTES + NONCE_BYTES],
            raw[KEY_ID_BYTES + NONCE_BYTES :],
        )
        aead = self._keys._by_id.get(kid)
        if aead is None:
            raise InvalidState(
                "unknown_key", "key id not in ring: sealed by another worker, or before a "
                "restart? give every worker the same keys (MCP_RESOLVE_STATE_KEYS)",
            )  # fmt: skip
        try:
            plaintext = aead.decrypt(nonce, sealed, _AAD_PREFIX + kid)
        except InvalidTag:
            raise InvalidState("tampered", "authentication failed") from None
        try:
            claims = json.loads(plaintext)
        except (ValueError, RecursionError):
            raise InvalidState("malformed", "envelope is not JSON") from None
        if not isinstance(claims, dict) or type(claims.get("v")) is not int or claims["v"] != 1:
            raise InvalidState("malformed", "envelope version")
        issued, expires = _number(claims.get("iat")), _number(claims.get("exp"))
        strings = [claims.get(f) for f in ("m", "t", "a", "j", "s")]
        strings += [claims[f] for f in ("p", "aud") if f in claims]
        if issued is None or expires is None or not all(isinstance(s, str) for s in strings):
            raise InvalidState("malformed", "envelope fields")
        now = float(self._now())
        if issued > now + FUTURE_SKEW:
            raise InvalidState("not_yet_valid", "issued in the future")
        expires = min(expires, issued + self._ttl)
        if now >= expires:
            raise InvalidState("expired", "past expiry")
        for field, name in _FIELDS.items():
            if claims.get(field) != expected.get(field):
                raise InvalidState("binding", f"{name} differs")
        return Opened(claims["s"], claims["j"], expires)


__all__ = [
    "DEFAULT_TTL",
    "FUTURE_SKEW",
    "MAX_TOKEN_LENGTH",
    "MESSAGE",
    "MIN_KEY_BYTES",
    "PREFIX",
    "Authenticator",
    "Binding",
    "InvalidState",
    "KeyRing",
    "MemoryReplayGuard",
    "Opened",
    "OversizedState",
    "ReplayGuard",
    "StateSealer",
    "arguments_digest",
]
