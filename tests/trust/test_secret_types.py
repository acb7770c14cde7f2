"""Every pydantic secret type on a secret form's page: a password input, never written back.

`SecretStr`, `SecretBytes`, `Secret[T]` and the same under `Optional` or `Annotated`: the
page the user's browser gets (a real uvicorn on 127.0.0.1, an HTTP client as the browser,
the link from a call made with the testing kit) masks each, and a submission refused by
the model's validation shows the form again with no secret in it.
"""

from __future__ import annotations

import re
from typing import Annotated, Optional

import httpx2
import pytest
from pydantic import BaseModel, Field, Secret, SecretBytes, SecretStr
from starlette.applications import Starlette
from support.live_server import serving
from support.load_balancer import free_port

from mcp_resolve import ElicitURL, ResolutionError, Resolve, User
from mcp_resolve.pages import Pages, SignedInCookie
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import AskedQuestion, call

pytestmark = pytest.mark.anyio

KEY = "k" * 32
SECRETS = {
    "token": "tok-3b9f1c0e7d",
    "pin": "58213907",
    "blob": "blob-d4e8a6",
    "maybe": "maybe-c7a2f9",
    "either": "either-a51e0b",
}


class Credentials(BaseModel):
    token: Secret[str]
    pin: Annotated[Secret[int], Field(description="Digits only")]
    blob: Optional[Annotated[SecretBytes, Field(min_length=4)]] = None  # noqa: UP045
    maybe: SecretStr | None = None
    either: SecretStr | SecretBytes
    project: str = Field(min_length=3)


PAGES = Pages(KeyRing(KEY), "http://127.0.0.1:1", browser=SignedInCookie(KeyRing(KEY)))
FORM = PAGES.secret_form(Credentials)


async def credentials() -> Credentials | ElicitURL:
    return FORM.ask("Enter your credentials on this server's page", ref="credentials")


async def connect(entered: Annotated[Credentials, Resolve(credentials)]) -> str:
    return entered.project


async def test_every_secret_type_is_masked_and_never_written_back() -> None:
    links: list[str] = []

    def visit(question: AskedQuestion) -> str:
        links.append(question.url or "")
        return "decline"

    with pytest.raises(ResolutionError, match="decline"):
        await call(connect, user="alice", answers=visit)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    path = links[0].removeprefix("http://127.0.0.1:1")
    cookie = SignedInCookie(KeyRing(KEY), secure=False).value(User("alice"))
    async with (
        serving(Starlette(routes=PAGES.routes()), port),
        httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser,
    ):
        page = await browser.get(base + path)
        assert page.status_code == 200, page.text
        for field in SECRETS:
            assert re.search(rf'name="{field}" type="password"', page.text), field
        assert 'name="project" type="text"' in page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None
        refused = await browser.post(
            base + path, data={"csrf": csrf.group(1), **SECRETS, "project": "x"}
        )
    assert refused.status_code == 400
    assert "at least 3 characters" in refused.text
    assert 'value="x"' in refused.text  # a plain field is shown again
    for field, secret in SECRETS.items():
        assert secret not in refused.text, field
        assert re.search(rf'name="{field}" type="password" value=""', refused.text), field
