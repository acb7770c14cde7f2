"""Passkey approvals seen from the MCP side, no browser: the client's own "accept" is not an
approval, a client without URL mode is refused (or told the link, never given a form),
the deadline ends the wait and the link, a browser with no user is sent to the server's
`SignIn` and back (or told what is missing), and an `Approvals` that could not keep its
promise is refused when it is built. The SDK's `Client` over Streamable HTTP on
127.0.0.1, on both generations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from support.approval_site import approval_site, mcp_client
from support.oidc_provider import Provider
from support.trust_kit import KEY, MODES

from mcp_resolve import User
from mcp_resolve.approvals import ApprovalConfigError, Approvals
from mcp_resolve.pages import Pages, SignedInCookie, another_user
from mcp_resolve.protocol.shared_stores import warn_if_mixed
from mcp_resolve.redis import RedisApprovalStore, RedisStores
from mcp_resolve.seal import KeyRing

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_answering_accept_without_the_page_is_not_an_approval(
    mode: str,
) -> None:
    async with approval_site() as site, mcp_client(site, mode, "alice") as client:
        result = await client.call_tool("quick_delete", {"repo": "acme/web"})  # 2 s deadline
    assert result.is_error
    text = getattr(result.content[0], "text", "")
    assert "quick_delete" in text
    assert "not completed within 2 s" in text
    assert site.links  # it was asked, it accepted, and nobody approved on the page
    assert site.ran == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_url_mode_is_refused_with_32021(mode: str) -> None:
    async with approval_site() as site, mcp_client(site, mode, "alice", answer=None) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("delete_repository", {"repo": "acme/web"})
    assert refused.value.code == -32021
    assert site.ran == []


@pytest.mark.parametrize("mode", MODES)
async def test_the_link_policy_tells_the_link_in_a_tool_error_and_asks_no_form(
    mode: str,
) -> None:
    async with (
        approval_site(without_url_mode="link") as site,
        mcp_client(site, mode, "alice", answer=None) as client,
    ):
        result = await client.call_tool("delete_repository", {"repo": "acme/web"})
    text = getattr(result.content[0], "text", "")
    assert result.is_error
    assert f"Open {site.base}/mcp-resolve/approvals/" in text
    assert site.ran == []


async def test_the_deadline_ends_the_link() -> None:
    async with approval_site() as site:
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("quick_delete", {"repo": "acme/web"})
        link = site.links[-1]
        cookie = SignedInCookie(KeyRing(KEY), secure=False).value(User("alice"))
        async with httpx2.AsyncClient(cookies={"mcp_resolve_user": cookie}) as browser:
            assert (await browser.get(link)).status_code == 200  # "Add a passkey first"
            await anyio.sleep(3)
            late = await browser.get(link)
    assert late.status_code == 410
    assert "time is up" in late.text


async def test_another_signed_in_user_cannot_open_the_approval_page(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with approval_site() as site:
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("delete_repository", {"repo": "acme/web"})
        link = site.links[-1]
        keys = KeyRing(KEY)
        bob = SignedInCookie(keys, secure=False).value(User("bob"))
        async with httpx2.AsyncClient() as browser:
            nobody = await browser.get(link)
            page = await browser.get(f"{site.base}/mcp-resolve/approvals/passkeys")
        async with httpx2.AsyncClient(cookies={"mcp_resolve_user": bob}) as browser:
            other = await browser.get(link)
    assert nobody.status_code == 401
    assert other.status_code == 403
    assert page.status_code == 401
    assert "offers no way to sign in from here" in nobody.text  # no SignIn: what is missing
    assert caplog.text.count("its Approvals has no sign_in=") == 1  # logged once
    for response in (nobody, other, page):
        policy = response.headers["content-security-policy"]
        assert "unsafe-inline" not in policy
        assert response.headers["x-frame-options"] == "DENY"


async def test_a_token_verifier_giving_no_issuer_is_named_at_the_approval_page(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(another_user, "_told", set())  # as in a fresh process
    async with approval_site() as site:  # its token verifier gives no issuer
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("delete_repository", {"repo": "acme/web"})
        link = site.links[-1]
        alice = SignedInCookie(KeyRing(KEY), secure=False).value(
            User("alice", "https://id.example")
        )
        async with httpx2.AsyncClient(cookies={"mcp_resolve_user": alice}) as browser:
            refused = await browser.get(link)
    assert refused.status_code == 403
    assert "Not the same sign-in" in refused.text
    told = [r.getMessage() for r in caplog.records if "no issuer" in r.getMessage()]
    assert len(told) == 1, told
    assert "https://id.example" in told[0]
    assert "alice" not in told[0]
    assert site.ran == []


@pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning")
async def test_a_browser_with_no_user_is_sent_to_the_sign_in_and_back(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    async with approval_site(provider=provider) as site:
        async with mcp_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("delete_repository", {"repo": "acme/web"})
        link = site.links[-1]
        path = urlsplit(link).path
        token = path.rsplit("/", 1)[1]
        passkeys = f"/mcp-resolve/approvals/passkeys?back={token}"
        async with httpx2.AsyncClient() as browser:
            to_link = await browser.get(link)
            to_passkeys = await browser.get(f"{site.base}{passkeys}")
            sent = await browser.post(link, data={"csrf": "x", "assertion": "{}"})
            start = await browser.get(to_link.headers["location"])  # mounted with the pages
            forged = await browser.get(f"{site.base}/mcp-resolve/approvals/forged")
    for response, back in ((to_link, path), (to_passkeys, passkeys)):
        assert response.status_code == 303
        where = urlsplit(response.headers["location"])
        assert f"{where.scheme}://{where.netloc}{where.path}" == f"{site.base}/mcp-resolve/sign-in"
        assert parse_qs(where.query) == {"next": [back]}  # and back to the same address
    assert start.status_code == 303
    assert start.headers["location"].startswith(provider.authorize_url + "?")
    assert sent.status_code == 401  # a form sent without a sign-in: a page, no redirect
    assert "Sign in, then open the page again" in sent.text
    assert forged.status_code == 404  # a link that is none is not worth a sign-in
    assert site.ran == []
    assert "no sign_in=" not in caplog.text


async def test_a_call_without_a_signed_in_user_is_refused() -> None:
    approvals = Approvals(KeyRing(KEY), "http://localhost:8000")
    with pytest.raises(ToolError, match="given by a signed-in user with their passkey"):
        await approvals.require("Delete repository acme/web", ref="delete acme/web")


@pytest.mark.parametrize(
    ("base", "options", "says"),
    [
        ("http://127.0.0.1:8000", {}, "names an IP address"),
        ("https://[::1]:8000", {}, "names an IP address"),
        ("http://tools.example.com", {}, r"base_url must use https \(plain http only on"),
        ("ftp://tools.example.com", {}, r"must be an absolute http\(s\) URL"),
        ("https://tools.example.com", {"rp_id": "example.org"}, "parent domain"),
        ("https://tools.example.com", {"without_url_mode": "form"}, "never stands in"),
    ],
)
def test_an_approvals_that_could_not_keep_its_promise_is_refused_when_built(
    base: str, options: dict[str, str], says: str
) -> None:
    with pytest.raises(ApprovalConfigError, match=says):
        Approvals(KeyRing(KEY), base, **options)  # type: ignore[arg-type]


class EarlierStore:
    """A store of one's own written for the contract before `owner=`."""

    async def get(self, key: str) -> str | None:
        return None

    async def put(self, key: str, value: str, ttl: float) -> None:
        pass

    async def add(self, key: str, value: str, ttl: float) -> bool:
        return True

    async def take(self, key: str) -> str | None:
        return None

    async def delete(self, key: str) -> None:
        pass


def test_a_store_that_cannot_be_told_whose_record_it_keeps_is_refused_when_built() -> None:
    """It would fail on the first approval; refused when `Approvals` is built instead."""
    with pytest.raises(
        TypeError, match=r"EarlierStore.put\(\) must accept the keyword argument owner="
    ):
        Approvals(KeyRing(KEY), "http://localhost:8000", store=EarlierStore())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"needs async get, put, add, take and delete"):
        Approvals(KeyRing(KEY), "http://localhost:8000", store=object())  # type: ignore[arg-type]


def test_the_package_imports_without_fido2_and_the_approvals_say_which_extra() -> None:
    script = (
        "import sys\n"
        "sys.modules['fido2'] = None\n"  # what a venv without the extra has
        "import mcp_resolve, mcp_resolve.pages, mcp_resolve.redis\n"
        "try:\n"
        "    import mcp_resolve.approvals\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=os.environ
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "mcp_resolve.approvals needs fido2: pip install 'mcp-resolve[passkeys]'"
    )


def test_a_server_whose_approvals_alone_stay_in_memory_says_so_at_start_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    keys = KeyRing(KEY)
    stores = RedisStores("redis://127.0.0.1:1/0", keys=keys, audience="repos")  # not dialled
    assert isinstance(stores.approvals, RedisApprovalStore)
    assert stores.approvals.redis is stores.redis  # one client, one pool
    server = MCPServer("repos")
    Pages(keys, "http://localhost:8000", stores=stores).mount(server)
    Approvals(keys, "http://localhost:8000").mount(server)  # in memory: forgotten
    warn_if_mixed(server, user_scoped=False)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "store of approvals (a passkey added, or an approval given, on one worker" in said
    shared = MCPServer("repos")
    Pages(keys, "http://localhost:8000", stores=stores).mount(shared)
    Approvals(keys, "http://localhost:8000", store=stores.approvals).mount(shared)
    caplog.clear()
    warn_if_mixed(shared, user_scoped=False)
    assert "store of approvals" not in " ".join(r.getMessage() for r in caplog.records)
