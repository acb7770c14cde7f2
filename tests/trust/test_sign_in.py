"""The pages' built-in sign-in (`SignIn`), against a real MCPServer on 127.0.0.1 (uvicorn)
whose MCP authorization and sign-in are the same real OpenID Connect provider
(oidc-provider-mock, `support.oidc_provider`), the SDK `Client` over Streamable HTTP as
the user's MCP client, and an HTTP client with its own cookies as the user's browser
(chromium does the same in tests/trust/test_browser_sign_in.py).

The attacks: an open redirect through the return address, a replayed callback, a forged
`state`, a callback in another browser than the one that started the sign-in (login CSRF),
a code from another sign-in (the nonce), an expired sign-in, an issuer that is not the
configured one; and what a browser is told when the server has no sign-in at all."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from urllib.parse import quote

import httpx2
import pytest
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from support.live_server import serving
from support.load_balancer import free_port
from support.oidc_provider import Provider, consent, deny
from support.secret_site import mcp_client as secret_client
from support.secret_site import secret_site
from support.sign_in_site import Site, a_link, query, sign_in_site

from mcp_resolve import User
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.pages import Pages, SignIn, SignInConfigError, another_user
from mcp_resolve.pages.openid import OpenIDConnect
from mcp_resolve.pages.pending_sign_in import COOKIE_PREFIX
from mcp_resolve.redis import RedisStores
from mcp_resolve.seal import KeyRing

pytestmark = [
    pytest.mark.anyio,
    # the provider (oidc-provider-mock) calls an authlib API that authlib deprecates
    pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning"),
]

KEYS = KeyRing("s" * 32)
NOT_HERE = [
    "https://evil.example/x",
    "HTTPS://evil.example/x",
    "//evil.example/x",
    "/\\evil.example/x",
    "\\\\evil.example/x",
    "https:/evil.example",
    "javascript:alert(1)",
    "/\r\nSet-Cookie: a=b",
    "/\t/evil.example",
    " /x",
    "/x#@evil.example",
    "x/y",
    "/caf\u00e9",
]


@pytest.fixture
async def site(provider: Provider) -> AsyncIterator[Site]:
    async with sign_in_site(provider) as running:
        yield running


def browser() -> httpx2.AsyncClient:
    """A fresh browser: its own cookies, redirects followed by the test, one at a time."""
    return httpx2.AsyncClient(follow_redirects=False, timeout=20)


async def to_provider(client: httpx2.AsyncClient, site: Site, link: str) -> str:
    """Open `link` with no sign-in: the redirects to the sign-in and on to the provider;
    the provider's authorization URL."""
    opened = await client.get(link)
    assert opened.status_code == 303, opened.text
    start = opened.headers["location"]
    assert (
        start
        == f"{site.sign_in.origin}{site.sign_in.path}?next={quote(link_path(site, link), safe='')}"
    )
    started = await client.get(start)
    assert started.status_code == 303, started.text
    return str(started.headers["location"])


def link_path(site: Site, link: str) -> str:
    return link.removeprefix(site.base)


async def signed_in_as(site: Site, client: httpx2.AsyncClient) -> User | None:
    """Who the server's sign-in cookie in `client` names (None: none, or not valid)."""
    raw = client.cookies.get(site.sign_in.cookie.name)
    if raw is None:
        return None
    header = f"{site.sign_in.cookie.name}={raw}".encode()
    return await site.sign_in.user_of(Request({"type": "http", "headers": [(b"cookie", header)]}))


async def test_a_link_opened_without_sign_in_signs_in_at_the_provider_and_comes_back(
    site: Site,
) -> None:
    link = await a_link(site, "approve", {"order": "7"})
    async with browser() as client:
        authorize = await to_provider(client, site, link)
        asked = query(authorize)
        assert authorize.startswith(site.provider.authorize_url + "?")
        assert asked["client_id"] == "mcp-pages"
        assert asked["redirect_uri"] == site.sign_in.redirect_url
        assert asked["response_type"] == "code"
        assert asked["scope"] == "openid"
        assert asked["code_challenge_method"] == "S256"
        assert len(asked["code_challenge"]) == 43
        assert len(asked["state"]) >= 43
        assert len(asked["nonce"]) >= 43
        assert link not in authorize  # the provider never sees the link
        back = await consent(client, authorize, "alice")
        done = await client.get(back)
        assert done.status_code == 303, done.text
        assert done.headers["location"] == link  # the exact link, on this server
        assert site.sign_in.cookie.name in done.headers["set-cookie"]
        page = await client.get(link)
        assert page.status_code == 200
        assert "Continue only if you started it" in page.text
        assert await signed_in_as(site, client) == User("alice", site.provider.base)


async def test_the_connect_page_signs_in_first_then_goes_on_to_the_consent(site: Site) -> None:
    link = await a_link(site, "whoami", {})
    assert "/mcp-resolve/oauth/connect/" in link
    async with browser() as client:
        authorize = await to_provider(client, site, link)
        assert query(authorize)["client_id"] == "mcp-pages"  # the sign-in, not the connection
        done = await client.get(await consent(client, authorize, "alice"))
        assert done.headers["location"] == link
        connect = await client.get(link)  # now signed in: on to the third party's consent
        assert connect.status_code == 303
        assert query(connect.headers["location"])["client_id"] == "mcp-tracker"


@pytest.mark.parametrize("where", NOT_HERE)
async def test_a_sign_in_never_returns_to_another_place(site: Site, where: str) -> None:
    async with browser() as client:
        started = await client.get(f"{site.base}{site.sign_in.path}", params={"next": where})
        assert started.status_code == 400
        assert "location" not in started.headers
        assert not any(name.startswith(COOKIE_PREFIX) for name in client.cookies)
    assert site.sign_in.return_to(where) is None


async def test_the_return_address_may_name_this_server_in_full(site: Site) -> None:
    link = await a_link(site, "approve", {"order": "8"})
    assert site.sign_in.return_to(link) == link
    assert site.sign_in.return_to(link_path(site, link)) == link
    for lookalike in (f"{site.base}.evil.example/x", f"{site.base}@evil.example/x"):
        assert site.sign_in.return_to(lookalike) is None
    async with browser() as client:
        started = await client.get(f"{site.base}{site.sign_in.path}", params={"next": link})
        authorize = started.headers["location"]
        done = await client.get(await consent(client, authorize, "alice"))
        assert done.headers["location"] == link


async def test_a_replayed_callback_is_refused(site: Site) -> None:
    link = await a_link(site, "approve", {"order": "9"})
    async with browser() as client:
        authorize = await to_provider(client, site, link)
        pending = dict(client.cookies)  # the sign-in under way, as the browser holds it
        back = await consent(client, authorize, "alice")
        assert (await client.get(back)).status_code == 303
    async with httpx2.AsyncClient(cookies=pending, follow_redirects=False) as replayer:
        replayed = await replayer.get(back)
        assert replayed.status_code == 400
        assert "already used" in replayed.text
        assert site.sign_in.cookie.name not in replayed.headers.get("set-cookie", "")


async def test_a_forged_state_or_another_browser_is_refused(site: Site) -> None:
    link = await a_link(site, "approve", {"order": "10"})
    async with browser() as victim, browser() as attacker:
        authorize = await to_provider(attacker, site, link)
        back = await consent(attacker, authorize, "mallory")  # the attacker's own code
        for forged in (back, f"{site.sign_in.redirect_url}?state=forged&code=x"):
            refused = await victim.get(forged)  # the victim's browser never started it
            assert refused.status_code == 400, forged
            assert await signed_in_as(site, victim) is None
        state = query(back)["state"]
        swapped = await attacker.get(f"{site.sign_in.redirect_url}?state={state[:-2]}xx&code=x")
        assert swapped.status_code == 400


async def test_a_code_from_another_sign_in_is_refused_by_its_nonce(site: Site) -> None:
    link = await a_link(site, "approve", {"order": "11"})
    async with browser() as client:
        first = await to_provider(client, site, link)
        second = await to_provider(client, site, link)  # a second tab: its own sign-in
        back = await consent(client, second, "mallory")
        injected = (
            f"{site.sign_in.redirect_url}?state={query(first)['state']}&code={query(back)['code']}"
        )
        refused = await client.get(injected)
        assert refused.status_code == 403
        assert "could not be verified" in refused.text
        assert await signed_in_as(site, client) is None


async def test_two_sign_ins_in_two_tabs_each_come_back(site: Site) -> None:
    seven = await a_link(site, "approve", {"order": "12"})
    eight = await a_link(site, "approve", {"order": "13"})
    async with browser() as client:
        first = await to_provider(client, site, seven)
        second = await to_provider(client, site, eight)
        assert (await client.get(await consent(client, second, "alice"))).headers[
            "location"
        ] == eight
        assert (await client.get(await consent(client, first, "alice"))).headers[
            "location"
        ] == seven


async def test_an_expired_sign_in_is_refused(site: Site) -> None:
    link = await a_link(site, "approve", {"order": "14"})
    async with browser() as client:
        authorize = await to_provider(client, site, link)
        site.clock.t += 301  # the user took more than the 5 minutes a sign-in may take
        refused = await client.get(await consent(client, authorize, "alice"))
        assert refused.status_code == 400
        assert "expired" in refused.text
        assert await signed_in_as(site, client) is None


async def test_a_sign_in_denied_at_the_provider_says_so_and_offers_to_try_again(
    site: Site,
) -> None:
    link = await a_link(site, "approve", {"order": "15"})
    async with browser() as client:
        authorize = await to_provider(client, site, link)
        denied = await client.get(await deny(client, authorize))  # this provider: no state
        assert denied.status_code == 401
        assert "You did not sign in. Open your link again" in denied.text
        authorize = await to_provider(client, site, link)
        state = query(authorize)["state"]  # a provider that sends it back with its refusal
        refused = await client.get(f"{site.sign_in.redirect_url}?state={state}&error=access_denied")
        assert refused.status_code == 401
        assert "You did not sign in" in refused.text
        again = re.search(r'href="([^"]+)"', refused.text)
        assert again is not None
        assert again.group(1) == (
            f"{site.base}{site.sign_in.path}?next={quote(link_path(site, link), safe='')}"
        )
        assert await signed_in_as(site, client) is None


async def test_a_page_sent_after_the_sign_in_ended_offers_to_sign_in_again(site: Site) -> None:
    link = await a_link(site, "approve", {"order": "16"})
    async with browser() as client:
        posted = await client.post(link, data={"csrf": "x"})
        assert posted.status_code == 401
        assert "Sign in, then open the page again" in posted.text
        assert f"next={quote(link_path(site, link), safe='')}" in posted.text


async def test_a_discovery_document_naming_another_issuer_is_refused(provider: Provider) -> None:
    """A document served at the configured issuer that names another one (a mix-up: here
    the real provider's document, republished elsewhere) starts no sign-in."""

    async def republished(request: Request) -> Response:
        async with httpx2.AsyncClient() as http:
            document = await http.get(provider.metadata_url)
        return Response(document.content, media_type="application/json")

    port = free_port()
    elsewhere = Starlette(routes=[Route("/.well-known/openid-configuration", republished)])
    async with serving(elsewhere, port) as issuer:
        sign_in = SignIn(KEYS, "http://127.0.0.1:9", openid=OpenIDConnect(issuer, client_id="x"))
        app = Starlette(routes=sign_in.routes())
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:9"
        ) as client:
            started = await client.get(sign_in.path, params={"next": "/x"})
    assert started.status_code == 503
    assert "location" not in started.headers


async def test_without_a_sign_in_the_page_says_what_is_missing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with secret_site() as site:
        async with secret_client(site, "legacy", "alice", answer="decline") as client:
            await client.call_tool("approve", {"order": "1"})
        with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
            async with browser() as client:
                for _ in range(2):
                    shown = await client.get(site.links[-1])
                    assert shown.status_code == 401
                    assert "this browser is not signed in to this server" in shown.text
                    assert "offers no way to sign in from here" in shown.text
    told = [r.getMessage() for r in caplog.records if "no sign_in=" in r.getMessage()]
    assert len(told) == 1  # the operator is told once


async def test_nothing_secret_is_logged_or_shown(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    link = await a_link(site, "approve", {"order": "17"})
    seen: list[str] = []
    with caplog.at_level(logging.DEBUG):
        async with browser() as client:
            authorize = await to_provider(client, site, link)
            back = await consent(client, authorize, "alice")
            done = await client.get(back)
            replayed = await client.get(back)  # refused: the state was used
            seen += [done.text, replayed.text, str(replayed.headers)]
            again = (await client.get(site.sign_in.sign_in_url(link_path(site, link)))).headers[
                "location"
            ]
            state, code = query(again)["state"], query(back)["code"]
            wrong = f"{site.sign_in.redirect_url}?state={state}&code={code}"
            seen.append((await client.get(wrong)).text)  # refused by the provider
    ours = "\n".join(  # the server's own lines (the test's browser logs its URLs)
        r.getMessage() for r in caplog.records if r.name.startswith(("mcp_resolve", "authlib"))
    )
    for secret in (query(back)["code"], query(back)["state"], query(authorize)["nonce"]):
        assert secret not in ours
        assert not any(secret in text for text in seen)
    assert "A sign-in was refused" in ours


@pytest.mark.parametrize(("tool", "arguments"), [("approve", {"order": "8"}), ("whoami", {})])
async def test_a_token_verifier_giving_no_issuer_is_named_not_taken_for_another_user(
    provider: Provider,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    arguments: dict[str, str],
) -> None:
    """The MCP user is `User("alice", None)`, the browser's `User("alice", issuer)`: each
    page refuses her, and says why, and the operator reads which setting to fix, once."""
    monkeypatch.setattr(another_user, "_told", set())  # as in a fresh process
    async with sign_in_site(provider, issuer=False) as site:
        link = await a_link(site, tool, arguments)
        with caplog.at_level(logging.WARNING, logger="mcp_resolve"):
            async with browser() as client:
                authorize = await to_provider(client, site, link)
                done = await client.get(await consent(client, authorize, "alice"))
                assert done.headers["location"] == link
                refused = [await client.get(link) for _ in range(2)]
    for page in refused:
        assert page.status_code == 403
        assert "Not the same sign-in" in page.text
        assert "token verifier give each token&#x27;s issuer" in page.text
    told = [r.getMessage() for r in caplog.records if "no issuer" in r.getMessage()]
    assert len(told) == 1, told
    assert 'AccessToken(claims={"iss": ...})' in told[0]
    assert site.provider.base in told[0]
    assert "alice" not in told[0]
    assert not any("another user" in r.getMessage() for r in caplog.records)


def test_a_sign_in_that_could_not_be_kept_safe_is_refused_when_built() -> None:
    openid = OpenIDConnect("https://id.example", client_id="pages")
    refusals = [
        (lambda: SignIn(KEYS, "http://mcp.example", openid=openid), "base_url must use https"),
        (lambda: SignIn(KEYS, "https://mcp.example"), "exactly one of openid="),
        (
            lambda: SignIn(KEYS, "https://mcp.example", openid=openid, login_url="/login"),
            "exactly one of openid=",
        ),
        (
            lambda: SignIn(KEYS, "https://mcp.example", login_url="http://login.example/"),
            "login_url must use https",
        ),
        (lambda: SignIn(KEYS, "https://mcp.example", login_url="//evil.example"), "login_url"),
        (
            lambda: SignIn(KEYS, "https://mcp.example", openid=openid, pending_ttl=3600),
            "pending_ttl must be between 30 and 1800",
        ),
        (
            lambda: SignIn(KEYS, "https://mcp.example", openid=openid, return_param="a b"),
            "return_param",
        ),
        (lambda: OpenIDConnect("http://id.example", client_id="x"), "issuer must use https"),
        (lambda: OpenIDConnect("https://id.example", client_id=""), "needs client_id"),
        (
            lambda: OpenIDConnect("https://id.example", client_id="x", client_secret=""),
            "client_secret must be a non-empty string, or None",
        ),
        (
            lambda: OpenIDConnect("https://id.example", client_id="x", scopes=["a b"]),
            "is not a scope",
        ),
    ]
    for build, says in refusals:
        with pytest.raises(SignInConfigError, match=re.escape(says)):
            build()
    with pytest.raises(TypeError, match="KeyRing"):
        SignIn("not keys", "https://mcp.example", openid=openid)  # type: ignore[arg-type]
    public = OpenIDConnect("http://127.0.0.1:9400", client_id="x")  # loopback: plain http
    assert public.auth_method == "none"  # no secret: a public client, PKCE alone
    assert "secret" not in repr(
        OpenIDConnect("https://id.example", client_id="x", client_secret="s3")
    )


def test_pages_over_plain_http_off_the_loopback_are_refused_when_built() -> None:
    """Their cookies could not be `Secure`, and a secret typed on them would cross the
    network in clear: the pages' one rule, as SignIn's, OAuth's and Approvals'."""
    with pytest.raises(ValueError, match=re.escape("Pages() base_url must use https (plain")):
        Pages(KEYS, "http://mcp.example")
    with pytest.raises(ValueError, match=re.escape("Pages() base_url must be an absolute")):
        Pages(KEYS, "ftp://mcp.example")
    for local in ("http://localhost:8000", "http://127.0.0.1:8000", "http://[::1]:8000"):
        assert Pages(KEYS, local).base == local + "/mcp-resolve/pages"


def test_the_sign_in_cookie_is_secure_wherever_the_server_is_https() -> None:
    response = Response()
    sign_in = SignIn(KEYS, "https://mcp.example", login_url="https://login.example/in")
    sign_in.set(response, User("alice", "https://id.example"))
    cookie = response.headers["set-cookie"]
    assert "Secure" in cookie
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie
    assert sign_in.sign_in_url("/mcp-resolve/pages/abc") == (
        "https://login.example/in?next=https%3A%2F%2Fmcp.example%2Fmcp-resolve%2Fpages%2Fabc"
    )


async def test_a_sign_in_left_in_memory_beside_shared_stores_is_named_at_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Across workers the sign-in's replay guard is shared too (`guard=stores.replay_guard`);
    left in memory beside shared stores, the server's start-up line names it."""
    stores = RedisStores("redis://127.0.0.1:1/0", keys=KEYS, audience="tracker")  # not asked
    stores.install()
    caplog.set_level(logging.WARNING)
    try:
        for guard in (None, stores.replay_guard):
            server = ResolvingMCPServer("tracker")
            openid = OpenIDConnect("https://id.example", client_id="pages")
            sign_in = SignIn(KEYS, "https://tracker.example", openid=openid, guard=guard)
            Pages(KEYS, "https://tracker.example", stores=stores, sign_in=sign_in).mount(server)
            async with Client(server):
                pass
    finally:
        await stores.aclose()
    lines = [r.getMessage() for r in caplog.records if "stores are shared" in r.getMessage()]
    assert len(lines) == 1, caplog.text  # the first server only
    assert "the sign-in's replay guard (a sign-in's callback can be used once on each" in lines[0]
