"""A passkey in software and a browser made of an HTTP client, for docs/snippets/approvals.py.

`SoftwarePasskey` stands in for the user's authenticator (a phone, a laptop's fingerprint
reader, a security key) so that the page's example runs anywhere, in a second: it makes an
ES256 key pair and answers `create` and `get` with the structures WebAuthn defines, built
with fido2's own data classes (`AttestedCredentialData`, `AuthenticatorData`,
`AttestationObject`, `CollectedClientData`), and signs with `cryptography`. It sets the
user-present and user-verified flags, as an authenticator does once the person touched it
and gave their fingerprint or PIN; `verified=False` leaves the second out. The test suite
does the same with a real browser and chromium's virtual authenticator instead
(tests/trust/test_browser_approvals.py).

`Browser` is what the page's own script does, with an HTTP client: read the form's
`data-create` / `data-get` options, ask the passkey, post the answer with the form.
"""

from __future__ import annotations

import hashlib
import json
import os
from html.parser import HTMLParser
from typing import Any

import httpx2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from fido2.cose import ES256
from fido2.utils import websafe_decode, websafe_encode
from fido2.webauthn import (
    AttestationObject,
    AttestedCredentialData,
    AuthenticatorData,
    CollectedClientData,
)

FLAGS = AuthenticatorData.FLAG


class SoftwarePasskey:
    """One credential, for one relying party, held in memory."""

    def __init__(self, origin: str, rp_id: str) -> None:
        self.origin = origin
        self.rp_hash = hashlib.sha256(rp_id.encode()).digest()
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(16)
        self.counter = 0

    def create(self, options: dict[str, Any]) -> str:
        client = CollectedClientData.create("webauthn.create", options["challenge"], self.origin)
        public = ES256.from_cryptography_key(self.key.public_key())
        credential = AttestedCredentialData.create(bytes(16), self.credential_id, public)
        flags = FLAGS.UP | FLAGS.UV | FLAGS.AT
        data = AuthenticatorData.create(self.rp_hash, flags, self.counter, credential)
        attestation = AttestationObject.create("none", data, {})
        response = {"clientDataJSON": _b64(client), "attestationObject": _b64(attestation)}
        return self._answer(response)

    def get(self, options: dict[str, Any], *, verified: bool = True) -> str:
        client = CollectedClientData.create("webauthn.get", options["challenge"], self.origin)
        self.counter += 1
        flags = FLAGS.UP | FLAGS.UV if verified else FLAGS.UP
        data = AuthenticatorData.create(self.rp_hash, flags, self.counter)
        signature = self.key.sign(data + client.hash, ec.ECDSA(hashes.SHA256()))
        response = {
            "clientDataJSON": _b64(client),
            "authenticatorData": _b64(data),
            "signature": _b64(signature),
        }
        return self._answer(response)

    def _answer(self, response: dict[str, str]) -> str:
        ident = websafe_encode(self.credential_id)
        return json.dumps(
            {
                "id": ident,
                "rawId": ident,
                "type": "public-key",
                "response": response,
                "clientExtensionResults": {},
            }
        )


class Browser:
    """An HTTP client as the user's browser, with their passkey."""

    def __init__(self, http: httpx2.AsyncClient, passkey: SoftwarePasskey) -> None:
        self.http = http
        self.passkey = passkey
        self.sent: tuple[str, dict[str, str]] = ("", {})  # the last approval posted

    async def add_passkey(self, url: str) -> int:
        """Add the passkey on the passkeys page at `url`; the page's status."""
        page = await self.http.get(url)
        form = _first_form(page.text)
        options = json.loads(form["data-create"])
        fields = {**form["fields"], "attestation": self.passkey.create(options), "label": "laptop"}
        return (await self.http.post(url, data=fields)).status_code

    async def approve(self, url: str, *, verified: bool = True) -> list[int | str]:
        """Open an approval link and approve with the passkey: the status and what it says."""
        page = await self.http.get(url)
        form = _first_form(page.text)
        options = json.loads(form["data-get"])
        answer = self.passkey.get(options, verified=verified)
        self.sent = (url, {**form["fields"], "assertion": answer})
        done = await self.http.post(url, data=self.sent[1])
        return [done.status_code, _text(done.text)]

    async def send_again(self) -> list[int | str]:
        """Post the last approval again, byte for byte (a replay)."""
        done = await self.http.post(self.sent[0], data=self.sent[1])
        return [done.status_code, _text(done.text)]


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append({**found, "fields": {}})
        elif tag == "input" and self.forms and found.get("type") == "hidden":
            self.forms[-1]["fields"][found.get("name", "")] = found.get("value", "")


def _first_form(html: str) -> dict[str, Any]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms[0]


def _text(html: str) -> str:
    """The first paragraph of a page, as the user reads it."""
    start = html.index("<p>") + 3
    return html[start : html.index("</p>", start)]


def _b64(data: bytes) -> str:
    return websafe_encode(data)


def decode(text: str) -> bytes:
    return websafe_decode(text)
