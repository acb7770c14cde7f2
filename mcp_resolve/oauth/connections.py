"""`OAuth`: third-party tokens for the signed-in user, as a resolver.

`oauth.token(provider, scopes=[...])` is a resolver: it gives the tool a `ProviderToken`
of `provider` for the signed-in user, valid and holding at least those scopes. A stored
token that expired is refreshed (refresh_token grant); one the provider refuses to
refresh (revoked), one lacking a scope the tool needs, or none at all, makes the
resolver ask instead: an `ElicitURL` to this server's connect page (`endpoints`), which
waits. On a legacy connection the call stays open, on 2026-07-28 the consenting retry is
held, until the provider's callback stores the token and completes the question; the
resolver then runs again and returns the token. The token never enters an MCP message:
the client sees the connect link and the user's consent only.

Incremental consent: a new connection asks for the scopes already granted and the ones
now needed, so one stored token serves every tool of that provider.

Refreshes are one at a time per user and provider across workers (`refreshing`); a tool
whose token the provider refused raises `token.refused()` and the call resolves again
(`ResolveAgain`). No token is refreshed ahead of a call: a token is renewed when a call
finds it expiring, and a provider that drops refresh tokens left unused for months asks
that user to connect again (refreshing in the background would keep every departed
user's tokens alive, from a scheduler shared by the workers).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from starlette.routing import Route

from ..markers import LINK_IN_ERROR, ElicitURL
from ..pages.browser import BrowserIdentity, SignInStep, identity_of
from ..pages.link import Signer
from ..pages.mounting import mount_routes
from ..pages.routes import origin_of
from ..pages.signed_out import SignedOut
from ..protocol.shared_stores import note
from ..protocol.signed_in import signed_in_user
from ..seconds import seconds
from ..state.keys import KeyRing
from .connect_link import LinkSigner
from .connections_page import ConnectionsPage
from .endpoints import ConnectRoutes
from .pending import PendingConsents
from .provider import OAuthConfigError, OAuthProvider, scope_set, secure_url
from .refreshing import Refresher
from .tokens import MemoryOAuthStore, OAuthStore, ProviderToken, Vault

DEFAULT_PATH = "/mcp-resolve/oauth"
DEFAULT_LINK_TTL = 600.0
DEFAULT_REFRESH_LOCK = 30.0


class OAuth:
    """Connections of this server's users to third-party providers.

    `keys` is the server's `KeyRing` (the same on every worker): it signs the connect
    links and seals the stored tokens. `base_url` is the server's public origin as
    browsers reach it (HTTPS; plain HTTP only on the loopback); the provider redirects
    back to `redirect_url`, `<base_url><path>/callback`, which must be registered with
    each provider. `sign_in` (the server's `SignIn`) sends a browser with no user to sign
    in and back to the connect link. `browser` says how a browser proves its user (by
    default `sign_in`'s cookie, or the same `SignedInCookie` as `Pages`). `store` keeps the
    sealed tokens and pending requests (in memory by default: one process; across
    workers `RedisOAuthStore`). `link_ttl` bounds a connect link and a pending consent.
    `refresh_lock` bounds how long one worker's refresh holds the others back (a worker
    that dies mid-refresh frees it after this). `<base_url><path>/connections` is the
    page where a signed-in user sees their connections and disconnects them.
    """

    def __init__(
        self,
        keys: KeyRing,
        base_url: str,
        *,
        path: str = DEFAULT_PATH,
        browser: BrowserIdentity | None = None,
        sign_in: SignInStep | None = None,
        store: OAuthStore | None = None,
        link_ttl: float = DEFAULT_LINK_TTL,
        refresh_lock: float = DEFAULT_REFRESH_LOCK,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(keys, KeyRing):
            raise TypeError(f"OAuth() needs the server's KeyRing, got {keys!r}")
        if not isinstance(base_url, str) or not base_url:
            raise OAuthConfigError(
                "OAuth() needs base_url, the server's public origin: the provider redirects "
                "the browser back to <base_url>/mcp-resolve/oauth/callback"
            )
        origin = origin_of(secure_url(base_url, "OAuth() base_url"))
        if not path.startswith("/") or path.endswith("/") or "{" in path:
            raise OAuthConfigError(f"OAuth() path must start with / and not end with one: {path!r}")
        self.base = base_url.rstrip("/") + path
        self.path = path
        self.redirect_url = f"{self.base}/callback"
        self.link_ttl = seconds(link_ttl, "OAuth(link_ttl=...)")
        self.sign_in = sign_in
        self.browser = identity_of(browser, sign_in, keys, origin, clock)
        self.store: OAuthStore = store if store is not None else MemoryOAuthStore(now=clock)
        self._clock = clock
        self._signer = LinkSigner(keys, self.base)
        self._vault = Vault(keys, self.store, self.base, clock)
        self._providers: dict[str, OAuthProvider] = {}
        self._refresher = Refresher(
            self._vault, self.redirect_url, clock, seconds(refresh_lock, "OAuth(refresh_lock=...)")
        )
        signed_out = SignedOut(sign_in, "OAuth", "A connect or connections page")
        self._routes = ConnectRoutes(
            signer=self._signer,
            vault=self._vault,
            pending=PendingConsents(self._vault, self.link_ttl, clock),
            refresher=self._refresher,
            browser=self.browser,
            providers=self._providers,
            redirect_url=self.redirect_url,
            link_ttl=self.link_ttl,
            clock=clock,
            signed_out=signed_out,
        )
        self._connections = ConnectionsPage(
            vault=self._vault,
            refresher=self._refresher,
            browser=self.browser,
            signed_out=signed_out,
            providers=self._providers,
            signer=Signer(keys, self.base),
            origin=origin,
            path=path,
            secure=origin.startswith("https://"),
        )

    def token(
        self,
        provider: OAuthProvider,
        *,
        scopes: Iterable[str] = (),
        timeout: float | None = None,
        fallback: Any = LINK_IN_ERROR,
    ) -> Callable[[], Any]:
        """The resolver of a valid `provider` token with `scopes` (and the provider's own)
        for the signed-in user: `Annotated[ProviderToken, Resolve(oauth.token(github,
        scopes=["repo"]))]`. `timeout` bounds the wait for the user (as `ElicitURL`'s);
        a client without URL mode gets `fallback` (by default a tool error with the link)."""
        self._register(provider)
        needed = provider.scopes | scope_set(scopes, f"OAuth.token({provider.name!r})")

        async def resolver() -> ProviderToken | ElicitURL:
            return await self._token_or_question(provider, needed, timeout, fallback)

        resolver.__name__ = f"{provider.name}_token"
        resolver.__qualname__ = resolver.__name__
        return resolver

    async def forget(self, provider: OAuthProvider) -> None:
        """Drop the signed-in user's token of `provider`; their next call asks. (A tool
        whose token the provider refused raises `token.refused()` instead.)"""
        user = signed_in_user()
        if user is not None:
            key = self._vault.user_key(user, provider.name)
            async with self._refresher.exclusive(key):
                await self._vault.forget(key)

    def routes(self) -> list[Route]:
        """The Starlette routes to add to the server's HTTP app (see `mount`)."""
        return [
            Route(f"{self.path}/connect/{{token}}", self._routes.connect, methods=["GET"]),
            Route(f"{self.path}/callback", self._routes.callback, methods=["GET"]),
            Route(f"{self.path}/connections", self._connections.handle, methods=["GET", "POST"]),
        ]

    @property
    def connections_url(self) -> str:
        """The page where the signed-in user sees and undoes their connections."""
        return f"{self.base}/connections"

    def mount(self, server: Any) -> None:
        """Serve the connect page, the callback and the connections page on `server`'s HTTP
        app: an `MCPServer` or a fastmcp server (their `custom_route`, which MCP
        authorization does not guard: every route checks the browser's user itself), or a
        Starlette app; and the routes of its `sign_in` (once per server)."""
        note(server, "store of OAuth tokens", not isinstance(self.store, MemoryOAuthStore))
        mount_routes(server, self.routes(), "OAuth.mount()")
        if self.sign_in is not None:
            self.sign_in.mount(server)

    def _register(self, provider: OAuthProvider) -> None:
        if not isinstance(provider, OAuthProvider):
            raise TypeError(f"OAuth.token() takes an OAuthProvider, got {provider!r}")
        known = self._providers.setdefault(provider.name, provider)
        if known is not provider:
            raise OAuthConfigError(f"two different OAuthProviders are named {provider.name!r}")

    async def _token_or_question(
        self, provider: OAuthProvider, needed: frozenset[str], timeout: float | None, fallback: Any
    ) -> ProviderToken | ElicitURL:
        user = signed_in_user()
        if user is None:
            raise ToolError(
                f"{provider.title} tokens are kept per signed-in user, and this call has none: "
                "the server needs MCP authorization, and the client must sign in"
            )
        key = self._vault.user_key(user, provider.name)
        record = await self._vault.load(key)
        if record is not None and needed <= record.scopes:
            fresh = record if record.usable(self._clock()) else None
            if fresh is None:
                fresh = await self._refresher.renewed(provider, key)
            if fresh is not None and needed <= fresh.scopes:
                refused = partial(self._refresher.refused, provider, key, fresh.access_token)
                return fresh.token(provider.name, on_refused=refused)
        wanted = needed | (record.scopes if record is not None else frozenset())
        tag = self._signer.user_tag(user)
        link = self._signer.token(provider.name, wanted, tag, self._clock(), self.link_ttl)
        return ElicitURL(
            f"Connect your {provider.title} account in your browser",
            f"{self.base}/connect/{link}",
            elicitation_id=self._signer.elicitation_id(tag, provider.name, wanted),
            wait=True,
            timeout=timeout,
            fallback=fallback,
        )
