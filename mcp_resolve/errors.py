"""The ways resolution fails: a bad graph at decoration, a call that cannot finish, or a
store the server shares between workers that cannot be asked, or a value the tool found
refused (resolve again)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TypedDict

from typing_extensions import Unpack

FunctionKind = str
"""What a decorated function is served as: "tool", "prompt" or "resource template"."""


class Who(TypedDict, total=False):
    """The resolver and parameter a failure is about, when it is that precise."""

    resolver: str | None
    parameter: str | None


class Where(Who, total=False):
    """Where in a graph a signature problem is, and the one clear thing to do about it."""

    fix: str | None


class InvalidSignature(TypeError):
    """A tool or resolver signature cannot form a valid graph; raised at decoration.

    A `TypeError` subclass because it is one: the functions' types do not fit together.
    The parts are kept apart for tooling: `kind` and `name` (the decorated function: a
    tool, a prompt or a resource template), `resolver` and `parameter` (where, when the
    problem is that precise), `problem` (what is wrong) and `fix` (what to do, when there
    is one clear thing). `str(exc)` is one sentence naming them all, for example
    `Tool 'transfer': parameter 'user' of resolver 'lookup' cannot be filled: ...; rename it`.

    With a resolver and a parameter, the parameter is the resolver's own; with only a
    parameter, it is the function's.
    """

    def __init__(
        self,
        problem: str,
        *,
        kind: FunctionKind = "tool",
        name: str | None = None,
        **where: Unpack[Where],
    ) -> None:
        super().__init__(problem)
        self.problem = problem
        self.kind = kind
        self.name = name
        self.resolver = where.get("resolver")
        self.parameter = where.get("parameter")
        self.fix = where.get("fix")

    @property
    def where(self) -> str | None:
        """The resolver and parameter as a phrase (`parameter 'x' of resolver 'r'`), if any."""
        if self.resolver is not None and self.parameter is not None:
            return f"parameter {self.parameter!r} of resolver {self.resolver!r}"
        if self.resolver is not None:
            return f"resolver {self.resolver!r}"
        if self.parameter is not None:
            return f"parameter {self.parameter!r}"
        return None

    def __str__(self) -> str:
        where = self.where
        text = self.problem if where is None else f"{where} {self.problem}"
        if self.name is not None:
            text = f"{self.kind[:1].upper()}{self.kind[1:]} {self.name!r}: {text}"
        return text if self.fix is None else f"{text}; {self.fix}"

    def served_as(self, kind: FunctionKind, name: str) -> InvalidSignature:
        """The same problem, for the function as a host serves it (a prompt, a template).

        `@resolved` cannot know whether it decorates a tool, a prompt or a resource
        template; tooling that later finds the registration names it correctly with this.
        """
        copy = InvalidSignature(
            self.problem,
            kind=kind,
            name=name,
            resolver=self.resolver,
            parameter=self.parameter,
            fix=self.fix,
        )
        copy.__cause__ = self.__cause__
        return copy


class ResolutionError(Exception):
    """A call could not be resolved: a question was refused or answered badly, or a value
    did not fit its parameter. The message is safe to show to the model and the user: it
    names the parameter (and the tool and resolver where known) and never carries
    validation dumps or tracebacks.
    """

    def __init__(self, message: str, *, tool: str | None = None, **who: Unpack[Who]) -> None:
        super().__init__(message)
        self.tool = tool
        self.resolver = who.get("resolver")
        self.parameter = who.get("parameter")


class ResolveAgain(ResolutionError):
    """Raised by a tool's body when a value its resolvers gave was refused by the service
    it is for (a provider's API answered 401 to a token): the call awaits `forget` (which
    drops the stored value), then resolves its parameters again, once, in the same call:
    a resolver that now asks makes a 2026-07-28 call return its question and a legacy
    call ask it mid-call; a recorded resolver (`once=True`) that returned keeps its value,
    and the call its idempotency keys. Raised again in that call, it is a tool error with
    `message`.
    `ProviderToken.refused()` makes one; the message is safe to show."""

    def __init__(
        self, message: str, *, forget: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        super().__init__(message)
        self.forget = forget


class StoreUnavailable(RuntimeError):
    """A store the server keeps a promise in (the replay guard, the completion bus, the
    pages' records, user-scoped values, OAuth tokens) could not be asked in time, so what
    needed it fails closed: the tool does not run, the page says to try again.

    `str(exc)` is what a client may read: which store, and to try again later. `detail`
    (where the store is and why it failed, such as `Redis at 10.0.0.5:6379/0 failed:
    ConnectionError: ...`) is for the server log alone, and `logged` says that the store
    already wrote its one log line. A store of your own may raise it: a call gets the same
    tool error naming the tool, resolver and parameter, a page the same 503.
    """

    def __init__(
        self, store: str, detail: str = "", *, message: str | None = None, logged: bool = False
    ) -> None:
        super().__init__(message or f"the server's {store} is unavailable; try again later")
        self.store = store
        self.detail = detail or str(self)
        self.logged = logged


COLLECTING: ContextVar[object | None] = ContextVar("mcp_resolve_collecting", default=None)
"""The problem collector in force (see `mcp_resolve.analysis.collecting`), or None.

While one is set, hosts record a function whose analysis fails instead of raising, and
register a stand-in under its name, so that tooling can import a whole module and report
on every function. It lives here, at the bottom of the layers, because the markers
consult it too.
"""
