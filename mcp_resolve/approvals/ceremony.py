"""The WebAuthn ceremonies, checked by Yubico's `fido2` library: the only module importing it.

`Ceremony` makes the options a page hands to `navigator.credentials.create()` (register a
passkey) and `.get()` (sign a challenge with one), and checks what the browser sends back
with `fido2.server.Fido2Server`: the client data's type, the challenge (the server's own,
compared in constant time), the origin (this server's, exactly), the RP ID hash, the
user-present and user-verified flags (verification is *required* in both ceremonies), the
attestation object's and the assertion's CBOR and COSE (parsed by fido2, never here), and
the assertion's signature under the public key registered for that credential. The
signature counter, which fido2 leaves to the caller, is checked here: a counter that does
not grow (where the authenticator keeps one) is an authenticator that was cloned.

Anything refused is a `CeremonyRefused` with the reason for the server's log; the page
shows the user less. Attestation is not asked for (`none`): the approval proves a user
verified on a credential they registered while signed in, not which maker built it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:
    from fido2.server import Fido2Server
    from fido2.utils import websafe_decode, websafe_encode
    from fido2.webauthn import (
        AttestationConveyancePreference,
        AttestedCredentialData,
        AuthenticationResponse,
        PublicKeyCredentialDescriptor,
        PublicKeyCredentialRpEntity,
        PublicKeyCredentialType,
        PublicKeyCredentialUserEntity,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )
except ImportError as missing:  # pragma: no cover - the extra is part of every test venv
    raise ImportError(
        "mcp_resolve.approvals needs fido2: pip install 'mcp-resolve[passkeys]'"
    ) from missing

REQUIRED = UserVerificationRequirement.REQUIRED
MAX_RESPONSE = 8 * 1024  # characters of a browser's JSON answer; larger is refused unread


class CeremonyRefused(Exception):
    """The browser's answer does not prove what the page asked; the reason is for the log."""


@dataclass(frozen=True, slots=True)
class Registered:
    """A credential the browser registered: its id, what verifies it, its counter."""

    credential_id: bytes
    credential: bytes  # the attested credential data: AAGUID, id and COSE public key
    counter: int


@dataclass(frozen=True, slots=True)
class Asserted:
    """A verified assertion: which credential signed, and its counter now."""

    credential_id: bytes
    counter: int


class Ceremony:
    """The two ceremonies of one relying party: `rp_id` (the page's host), `origin` (the
    only origin an answer may come from) and the `timeout` (ms) the browser is given."""

    def __init__(self, rp_id: str, rp_name: str, origin: str, timeout_ms: int) -> None:
        self.rp_id = rp_id
        self.timeout_ms = timeout_ms
        self._server = Fido2Server(
            PublicKeyCredentialRpEntity(name=rp_name, id=rp_id),
            attestation=AttestationConveyancePreference.NONE,
            verify_origin=lambda given: given == origin,
        )
        self._server.timeout = timeout_ms  # type: ignore[assignment]  # fido2 types it None

    def creation_options(
        self, challenge: bytes, handle: bytes, name: str, existing: Sequence[bytes]
    ) -> dict[str, Any]:
        """What `navigator.credentials.create()` takes, as JSON (bytes in base64url)."""
        options, _ = self._server.register_begin(
            PublicKeyCredentialUserEntity(name=name, id=handle, display_name=name),
            credentials=[_descriptor(c) for c in existing],
            resident_key_requirement=ResidentKeyRequirement.PREFERRED,
            user_verification=REQUIRED,
            challenge=challenge,
        )
        return _plain(options.public_key)

    def request_options(self, challenge: bytes, credential_ids: Sequence[bytes]) -> dict[str, Any]:
        """What `navigator.credentials.get()` takes, as JSON, for these credentials."""
        options, _ = self._server.authenticate_begin(
            [_descriptor(c) for c in credential_ids],
            user_verification=REQUIRED,
            challenge=challenge,
        )
        return _plain(options.public_key)

    def register(self, challenge: bytes, answer: str) -> Registered:
        """The credential the browser's `create()` answer registers, over `challenge`."""
        response = _json(answer)
        try:
            data = self._server.register_complete(_state(challenge), response)
        except Exception as exc:  # fido2 raises ValueError, KeyError, TypeError, struct.error...
            raise CeremonyRefused(f"registration: {_reason(exc)}") from None
        credential = data.credential_data
        if credential is None:  # pragma: no cover - fido2 refuses a create() without one
            raise CeremonyRefused("registration: no credential data")
        return Registered(bytes(credential.credential_id), bytes(credential), data.counter)

    def verify(
        self,
        challenge: bytes,
        answer: str,
        credentials: Mapping[bytes, tuple[bytes, int]],
    ) -> Asserted:
        """The credential (one of `credentials`: id to attested data and stored counter)
        whose `get()` answer signed `challenge` with the user verified."""
        response = _json(answer)
        try:
            parsed = AuthenticationResponse.from_dict(response)
            known = [AttestedCredentialData(data) for data, _ in credentials.values()]
            signer = self._server.authenticate_complete(_state(challenge), known, parsed)
        except Exception as exc:
            raise CeremonyRefused(f"assertion: {_reason(exc)}") from None
        credential_id = bytes(signer.credential_id)
        counter = parsed.response.authenticator_data.counter
        stored = credentials[credential_id][1]
        if (counter or stored) and counter <= stored:  # both zero: the authenticator keeps none
            raise CeremonyRefused(f"assertion: counter {counter} after {stored} (cloned?)")
        return Asserted(credential_id, counter)


def encode(data: bytes) -> str:
    """base64url without padding, as WebAuthn's JSON writes bytes."""
    return websafe_encode(data)


def decode(text: str) -> bytes:
    return websafe_decode(text)


def _descriptor(credential_id: bytes) -> PublicKeyCredentialDescriptor:
    return PublicKeyCredentialDescriptor(type=PublicKeyCredentialType.PUBLIC_KEY, id=credential_id)


def _state(challenge: bytes) -> dict[str, Any]:
    """What fido2 checks an answer against: our challenge, with verification required."""
    return {"challenge": websafe_encode(challenge), "user_verification": REQUIRED}


def _plain(options: Any) -> dict[str, Any]:
    """fido2's options as plain JSON values (its data objects are mappings)."""
    plain: dict[str, Any] = json.loads(json.dumps(dict(options), default=_nested))
    return plain


def _nested(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def _json(answer: str) -> dict[str, Any]:
    if not isinstance(answer, str) or not answer or len(answer) > MAX_RESPONSE:
        raise CeremonyRefused("no answer, or one too large")
    try:
        parsed = json.loads(answer)
    except ValueError:
        raise CeremonyRefused("the answer is not JSON") from None
    if not isinstance(parsed, dict):
        raise CeremonyRefused("the answer is not a JSON object")
    return parsed


def _reason(exc: Exception) -> str:
    """fido2's message, kept short: what failed, never the data it failed on."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:120]}"
