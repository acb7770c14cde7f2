"""`ResolvingMCPServer`: an `MCPServer` in every respect, which applies `@resolved` itself.

It is a drop-in: generic in its lifespan's value as the SDK's class is
(`ResolvingMCPServer[State]`), and every method it overrides takes the SDK's parameters,
with their names, defaults and annotations, so editors, type checkers and `inspect` see
what they see on `MCPServer` (tests/hosts/test_drop_in.py compares each signature with the
installed SDK's, so an SDK release that changes one is caught).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, TypeVar

from mcp.server.auth.provider import OAuthAuthorizationServerProvider, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.context import ServerMiddleware
from mcp.server.extension import Extension
from mcp.server.lowlevel.server import LifespanResultT
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import DEFAULT_RESOURCE_SECURITY, Resource, ResourceSecurity
from mcp.server.mcpserver.tools import Tool
from mcp.server.request_state import RequestStateSecurity
from mcp.server.streamable_http import EventStore
from mcp.server.streamable_http_manager import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT
from mcp.server.subscriptions import SubscriptionBus
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from mcp.shared.uri_template import UriTemplate
from mcp_types import Annotations, Icon, ToolAnnotations
from starlette.applications import Starlette

from ...analysis.graph import Graph
from ...engine.app_scope import AppScope
from ...protocol.lifespan import app_value, graphs_of, keeping_scope
from ...state.shared_keys import warn_keys_of_this_process
from .sdk_markers import translated, uses_sdk_resolve
from .server import ScopedHost, uses_resolve
from .unknown_keys import telling_unknown_keys

# The SDK's name for its decorators' type variable, so that signatures print alike.
_CallableT = TypeVar("_CallableT", bound=Callable[..., Any])


class ResolvingMCPServer(MCPServer[LifespanResultT]):
    """An `MCPServer` that applies `@resolved` wherever a function has resolved parameters.

    Covers tools (`@tool()` and `add_tool`), prompts (`@prompt()`) and resource templates
    (`@resource("scheme://{var}")`); functions without any `Resolve(...)` parameter are
    registered untouched. Only public methods are overridden, and each wraps the function
    before the SDK reads its signature, so the SDK never sees a resolved parameter. A
    `Prompt` object built by hand and given to `add_prompt` is taken as it is: build it
    from `resolved(fn)`.

    Its lifespan keeps the application scope of `Resolve(..., scope="app")` resolvers: the
    `lifespan=` given (if any) is entered first, then `eager=True` values are built; when
    the SDK ends the lifespan, generator cleanups run, then the given lifespan ends. A
    plain `MCPServer` offers no way to learn when its lifespan ends, so `@resolved` refuses
    a function with app-scoped resolvers when it is decorated, naming this class.
    """

    # The SDK's parameters, one for one (no `-> None`: the SDK's `__init__` has none).
    def __init__(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        version: str = "",
        auth_server_provider: OAuthAuthorizationServerProvider[Any, Any, Any] | None = None,
        token_verifier: TokenVerifier | None = None,
        *,
        tools: list[Tool] | None = None,
        resources: list[Resource] | None = None,
        extensions: Sequence[Extension] | None = None,
        debug: bool = False,
        log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO",
        warn_on_duplicate_resources: bool = True,
        warn_on_duplicate_tools: bool = True,
        warn_on_duplicate_prompts: bool = True,
        dependencies: list[str] | None = None,
        lifespan: Callable[
            [MCPServer[LifespanResultT]], AbstractAsyncContextManager[LifespanResultT]
        ]
        | None = None,
        auth: AuthSettings | None = None,
        resource_security: ResourceSecurity = DEFAULT_RESOURCE_SECURITY,
        request_state_security: RequestStateSecurity | None = None,
        cache_hints: Mapping[CacheableMethod, CacheHint] | None = None,
        subscriptions: SubscriptionBus | Literal[False] | None = None,
        middleware: Sequence[ServerMiddleware[Any]] | None = None,
    ):
        self._resolved_graphs: list[Graph] = []
        self._open_scopes: list[AppScope] = []
        kept = keeping_scope(lifespan, lambda: self._resolved_graphs, self._open_scopes)
        # Without request_state_security the SDK seals under a key of this process alone.
        self._keys_of_this_process = request_state_security is None
        super().__init__(
            name,
            title,
            description,
            instructions,
            website_url,
            icons,
            version,
            auth_server_provider,
            token_verifier,
            tools=tools,
            resources=resources,
            extensions=extensions,
            debug=debug,
            log_level=log_level,
            warn_on_duplicate_resources=warn_on_duplicate_resources,
            warn_on_duplicate_tools=warn_on_duplicate_tools,
            warn_on_duplicate_prompts=warn_on_duplicate_prompts,
            dependencies=dependencies,
            lifespan=kept,
            auth=auth,
            resource_security=resource_security,
            request_state_security=telling_unknown_keys(request_state_security, name),
            cache_hints=cache_hints,
            subscriptions=subscriptions,
            middleware=middleware,
        )

    async def app_value(self, resolver: Callable[..., Any]) -> Any:
        """The value app-scoped `resolver` has while this server serves (built now if no
        call needed it yet): the one its tools receive, for code outside a tool, such as a
        webhook route of its HTTP app (`@server.custom_route(...)`).

        `LookupError` if no function of this server uses `resolver` with `scope="app"`;
        `RuntimeError` if the server is not serving (its lifespan is not running). Where
        one server runs several lifespans at once (an in-memory `Client` opens one per
        connection), the value is the latest started one's.
        """
        return await app_value(
            resolver, self._resolved_graphs, self._open_scopes, f"Server {self.name!r}"
        )

    def streamable_http_app(
        self,
        *,
        streamable_http_path: str = "/mcp",
        json_response: bool = False,
        stateless_http: bool = False,
        event_store: EventStore | None = None,
        retry_interval: int | None = None,
        max_request_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
        session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
        max_sessions: int | None = DEFAULT_MAX_SESSIONS,
        transport_security: TransportSecuritySettings | None = None,
        host: str = "127.0.0.1",
    ) -> Starlette:
        """The SDK's app; built with keys of this process alone, it says so in the log
        (each worker builds its app when it starts, `run("streamable-http")` too)."""
        if self._keys_of_this_process:
            warn_keys_of_this_process(
                f"MCPServer {self.name!r}",
                "build the server with request_state_security=RequestStateSecurity("
                "keys=[...]) from it",
            )
        return super().streamable_http_app(
            streamable_http_path=streamable_http_path,
            json_response=json_response,
            stateless_http=stateless_http,
            event_store=event_store,
            retry_interval=retry_interval,
            max_request_body_size=max_request_body_size,
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions,
            transport_security=transport_security,
            host=host,
        )

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        super().add_tool(
            self._resolved(fn),
            name=name,
            title=title,
            description=description,
            annotations=annotations,
            icons=icons,
            meta=meta,
            structured_output=structured_output,
        )

    resolved = staticmethod(
        ScopedHost.decorator(
            """`mcp_resolve.mcp.resolved` for this server, app-scoped resolvers included
            (its lifespan keeps their scope): for settings such as `max_rounds`, as
            `@server.tool()` over `@server.resolved(max_rounds=8)`."""
        )
    )

    def _resolved(self, fn: _CallableT) -> _CallableT:
        """`fn` wrapped where it needs it, its graph kept for the lifespan's eager values;
        the SDK's own `Resolve` markers are translated into ours first."""
        if not hasattr(fn, "__mcp_resolve_graph__") and uses_sdk_resolve(fn):
            fn = ScopedHost.wrap(translated(fn))  # type: ignore[assignment]
        elif uses_resolve(fn):
            fn = ScopedHost.wrap(fn)  # type: ignore[assignment]
        self._resolved_graphs.extend(graphs_of([fn]))
        return fn

    def prompt(
        self,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
    ) -> Callable[[_CallableT], _CallableT]:
        register = super().prompt(name=name, title=title, description=description, icons=icons)

        def decorator(fn: _CallableT) -> _CallableT:
            register(self._resolved(fn))
            return fn

        return decorator

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Icon] | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
        security: ResourceSecurity | None = None,
    ) -> Callable[[_CallableT], _CallableT]:
        register = super().resource(
            uri,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            icons=icons,
            annotations=annotations,
            meta=meta,
            security=security,
        )

        def decorator(fn: _CallableT) -> _CallableT:
            if not (uses_resolve(fn) or uses_sdk_resolve(fn)):
                return register(self._resolved(fn))
            if not UriTemplate.parse(uri).variable_names:
                # The SDK gives a static resource no Context, and resolvers need one.
                raise ValueError(
                    f"Resource {uri!r}: {getattr(fn, '__name__', fn)!r} has resolved "
                    "parameters, which only a resource template can have (its reads get "
                    "a request context); add a {variable} to the URI, or compute the "
                    "value inside the function"
                )
            register(self._resolved(fn))
            return fn

        return decorator


__all__ = ["ResolvingMCPServer"]
