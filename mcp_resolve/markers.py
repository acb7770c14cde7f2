"""What authors write: the `Resolve` marker and the two kinds of question a resolver returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from .errors import COLLECTING
from .seconds import seconds
from .unwrapped import unwrapped_error

ModelT = TypeVar("ModelT", bound=BaseModel)
Scope = Literal["call", "app", "user"]
"""How long a resolver's value lives: one call (the default), the server's lifespan, or
the server's lifespan for one signed-in user (and at most its `ttl`)."""


class Resolve:
    """Marks a parameter as filled by a resolver: `Annotated[T, Resolve(fn)]`.

    `key` fixes the wire key of the question `fn` may ask. Without it the key is derived
    from the resolver's module and qualified name, which is stable across processes but
    changes when the function is renamed or moved; set it when questions must survive a
    deploy that renames resolvers while 2026-07-28 rounds are in flight.

    `scope="app"` makes `fn` application-scoped: it runs once per server lifespan and its
    value is shared by every call (a connection pool, an HTTP client, a loaded model); a
    generator's code after `yield` runs when the server shuts down. It may depend only on
    other app-scoped resolvers, never on anything of one call. It is built on first use,
    or when the server starts with `eager=True`. Its build has a deadline, `build_timeout`
    seconds (60 by default): past it, the calls waiting for the value get a tool error
    naming the resolver, and the next call builds it again.

    `blocking=False` says that a sync (`def`) resolver only computes: it never waits on a
    socket, a file, a lock or `time.sleep`. It then runs on the event loop's thread, with
    no hop to a worker thread (tens of microseconds a call). Left out, a sync resolver
    runs in a worker thread, so one that blocks cannot stall every other call. Said once
    for a resolver, it holds wherever it is used. Async resolvers run on the event loop
    already and take no `blocking`.

    `scope="user"` keeps one value per signed-in user (the subject of the MCP access
    token): built by that user's first call that needs it, served to their later calls,
    never to another user's. A call with no signed-in user is a tool error naming the
    resolver. It may depend on app- and user-scoped resolvers and take the `User`; the
    SDK's `get_access_token()` works inside it. `ttl` (seconds) bounds how long the value
    is kept: the first call after it builds a new one, and a generator's code after
    `yield` runs then (or when the server stops). See docs/accounts-and-secrets.md.

    `once=True` records the resolver's value the first time a call computes it: every
    later round, retry, task leg or redelivery of that call reuses the record instead of
    calling `fn` again (a 2026-07-28 call runs its resolvers again on each round). For
    resolvers that *do* something (create, reserve, send, charge). The value must be of a
    declared type that survives JSON exactly; a parameter annotated `IdempotencyKey`
    receives a key stable for the call, for the outside API. See docs/asking.md.
    """

    __slots__ = ("blocking", "build_timeout", "eager", "fn", "key", "once", "scope", "ttl")

    def __init__(
        self,
        fn: Callable[..., Any],
        /,
        *,
        key: str | None = None,
        scope: Scope = "call",
        eager: bool = False,
        build_timeout: float | None = None,
        blocking: bool | None = None,
        ttl: float | None = None,
        once: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(_not_a_resolver(fn))
        if blocking is not None and not isinstance(blocking, bool):
            raise TypeError(
                f"Resolve({_name(fn)}, blocking=...) must be True or False, got {blocking!r}"
            )
        if key is not None and (not isinstance(key, str) or not key):
            raise TypeError(f"Resolve(key=...) must be a non-empty string, got {key!r}")
        if scope not in ("call", "app", "user"):
            raise TypeError(f'Resolve(scope=...) must be "call", "app" or "user", got {scope!r}')
        if not isinstance(eager, bool):
            raise TypeError(f"Resolve(eager=...) must be True or False, got {eager!r}")
        if not isinstance(once, bool):
            raise TypeError(f"Resolve(once=...) must be True or False, got {once!r}")
        if eager and scope != "app":
            raise TypeError(
                "Resolve(eager=True) builds a value when the server starts, which only an "
                'app-scoped resolver has: add scope="app"'
            )
        if build_timeout is not None:
            build_timeout = seconds(build_timeout, "Resolve(build_timeout=...)", TypeError)
            if scope == "call":
                raise TypeError(
                    "Resolve(build_timeout=...) bounds the build of a value several calls "
                    'share, which only an app- or user-scoped resolver has: add scope="app" '
                    'or scope="user"'
                )
        if ttl is not None:
            ttl = seconds(ttl, "Resolve(ttl=...)", TypeError)
            if scope != "user":
                raise TypeError(
                    "Resolve(ttl=...) is how long a value kept for one user lives, which only "
                    'a user-scoped resolver has: add scope="user"'
                )
        self.fn = fn
        self.key = key
        self.scope: Scope = scope
        self.eager = eager
        self.build_timeout = build_timeout
        self.blocking = blocking
        self.ttl = ttl
        self.once = once

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", type(self.fn).__qualname__)
        options = "" if self.key is None else f", key={self.key!r}"
        if self.scope != "call":
            options += f", scope={self.scope!r}"
        if self.eager:
            options += ", eager=True"
        if self.build_timeout is not None:
            options += f", build_timeout={self.build_timeout:g}"
        if self.blocking is not None:
            options += f", blocking={self.blocking}"
        if self.ttl is not None:
            options += f", ttl={self.ttl:g}"
        if self.once:
            options += ", once=True"
        return f"Resolve({name}{options})"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        """Refuse to become an input the client fills.

        Frameworks build a pydantic model of a registered function's parameters, and that
        is the one moment they meet this marker when the function was registered without
        mcp_resolve's wrapper (`@resolved` forgotten, or written above `@server.tool()`,
        which then registers the unwrapped function). The framework would silently ask the
        client for the value, so registration fails here instead. While tooling collects
        problems, the framework is let through and the tooling reports it.
        """
        if COLLECTING.get() is not None:
            return handler(source)
        name = getattr(self.fn, "__qualname__", type(self.fn).__qualname__)
        parameter = getattr(handler, "field_name", None)  # the function's parameter
        raise unwrapped_error(self, name.rsplit("<locals>.", 1)[-1], parameter)


def _name(fn: Any) -> str:
    name: str = getattr(fn, "__qualname__", type(fn).__qualname__)
    return name.rsplit("<locals>.", 1)[-1]


def _not_a_resolver(value: Any) -> str:
    """Why `Resolve(value)` is refused, with the one fix that fits what `value` is.

    The usual slip is `Resolve(ask())`: the resolver called where it should be named. What
    the call returned says so: a coroutine or generator (closed here, so Python does not
    also warn that it was never awaited) names its function; a question is what a
    resolver returns, not a resolver.
    """
    code = getattr(value, "cr_code", None) or getattr(value, "gi_code", None)
    code = code or getattr(value, "ag_code", None)
    if code is not None:
        close = getattr(value, "close", None)
        if callable(close):
            close()
        name = getattr(value, "__qualname__", code.co_name)
        return (
            f"Resolve() takes the resolver function, got what calling {name}() returned; "
            f"write Resolve({name}), not Resolve({name}())"
        )
    kind = type(value)
    if kind in (Elicit, ElicitURL) or (
        kind.__module__ == "mcp_resolve.client_requests" and kind.__name__ in _REQUESTS
    ):
        return (
            f"Resolve() takes the resolver function, got the question {value!r}, which a "
            "resolver returns: write Resolve(fn) with the function that returns it, "
            "Resolve(ask) rather than Resolve(ask())"
        )
    return (
        f"Resolve() takes the resolver function, got {value!r} (of type {kind.__name__}): "
        "pass the function itself, Resolve(fn) rather than Resolve(fn())"
    )


_REQUESTS = ("Sample", "ListRoots")


class _NoFallback:
    """There is no fallback: a client that cannot be asked refuses the call."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_FALLBACK"


NO_FALLBACK: Any = _NoFallback()


class _LinkInError:
    """A URL question's fallback: tell the user the link in a tool error, to open and retry."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "LINK_IN_ERROR"


LINK_IN_ERROR: Any = _LinkInError()
"""`ElicitURL(..., fallback=LINK_IN_ERROR)`: a client that cannot open URL questions (it
declared forms only, or nothing) gets a tool error that gives the user the link and asks
them to call the tool again once the page is done; the resolver then finds the work done.
For links that are safe to show the model (a server's own page, bound to the user)."""


class Elicit(Generic[ModelT]):
    """A form question: returned by a resolver that needs the user to fill `schema`.

    The schema must be a flat pydantic model (see `render_elicitation_schema`). The
    consumer receives `AcceptedElicitation[ModelT]` (or the bare model when it annotates
    the unwrapped type), `DeclinedElicitation` or `CancelledElicitation`.

    `fallback` is what to use when the client cannot be asked (it declared no elicitation
    capability, or the connection has no way back to it): an outcome such as
    `DeclinedElicitation()`, or a model instance, which counts as accepted. Without one,
    such a call is refused before the tool body runs.

    `timeout` is how many seconds the user has to answer on a legacy connection, where
    the question holds the call (and what its resolvers opened) open; by default the
    tool's `ask_timeout`. When it passes the call ends with a tool error.
    """

    __slots__ = ("fallback", "message", "schema", "timeout")

    def __init__(
        self,
        message: str,
        schema: type[ModelT],
        *,
        fallback: Any = NO_FALLBACK,
        timeout: float | None = None,
    ) -> None:
        if not isinstance(message, str):
            raise TypeError(f"Elicit() message must be a string, got {type(message).__name__}")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError(f"Elicit() schema must be a pydantic model class, got {schema!r}")
        self.message = message
        self.schema = schema
        self.fallback = fallback
        self.timeout = _seconds("Elicit", timeout)

    def __repr__(self) -> str:
        return f"Elicit({self.message!r}, {self.schema.__name__})"


def _seconds(marker: str, timeout: object) -> float | None:
    """A question's timeout: None, or a positive, finite number of seconds."""
    if timeout is None:
        return None
    return seconds(timeout, f"{marker}() timeout", TypeError)


class ElicitURL:
    """A URL question: asks the user's consent to open `url` for work done out of band.

    Accepting means the user agreed to go there, not that the work is finished; no content
    comes back. `elicitation_id` identifies the flow within the server so that it can later
    be marked complete; when omitted the host derives one from the question.

    With `wait=True` consent is not enough: after the user accepts, the resolver runs again
    and decides from real state (the payment provider, a store) whether the work is done,
    returning a value or asking again. On a legacy connection the call first waits for
    the server to mark the elicitation complete. `timeout` bounds, on a legacy
    connection, the wait for the user's answer and then the wait for completion, each
    (by default the tool's `ask_timeout`). `fallback` works as for `Elicit`; or
    `LINK_IN_ERROR` puts the link in a tool error for a client without URL mode.
    """

    __slots__ = ("elicitation_id", "fallback", "message", "timeout", "url", "wait")

    def __init__(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        wait: bool = False,
        timeout: float | None = None,
        fallback: Any = NO_FALLBACK,
    ) -> None:
        if not isinstance(message, str):
            raise TypeError(f"ElicitURL() message must be a string, got {type(message).__name__}")
        if not isinstance(url, str) or not url:
            raise TypeError(f"ElicitURL() url must be a non-empty string, got {url!r}")
        if elicitation_id is not None and (
            not isinstance(elicitation_id, str) or not elicitation_id
        ):
            raise TypeError(
                f"ElicitURL() elicitation_id must be a non-empty string, got {elicitation_id!r}"
            )
        self.message = message
        self.url = url
        self.elicitation_id = elicitation_id
        self.wait = bool(wait)
        self.timeout = _seconds("ElicitURL", timeout)
        self.fallback = fallback

    def __repr__(self) -> str:
        return f"ElicitURL({self.message!r}, {self.url!r})"


Question = Elicit[Any] | ElicitURL
QUESTION_TYPES: tuple[type, ...] = (Elicit, ElicitURL)
