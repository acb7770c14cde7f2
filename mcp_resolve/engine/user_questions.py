"""A question a user-scoped resolver asks, as one call of that user sees it.

A user-scoped value missing from the user's values is built by the call that needs it
(`app_scope.app_value`). When the resolver returns a question instead (a form, or a URL
page that waits, such as `mcp_resolve.pages`), the call asks it like any other: it
stops what depends on it, joins the round's questions, and is answered mid-call on a
legacy connection or by the retry on 2026-07-28. The answer is taken when the resolver
runs again with it (so on every round alike): an accepted form's data is kept as the
user's value (`UserValues.keep`) and serves their later calls; a decline, a cancel, or a
declared fallback serves this call alone and keeps nothing (the next call asks again). A
URL page that waits is kept the same way, as what the resolver returns once its page is
done.

A question here must be one the person answers: `Sample` and `ListRoots` belong to the
connection (refused when the tool is decorated, and here if undeclared), and a URL
question that does not wait proves nothing worth keeping (its accept only says the user
agreed to open the link).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..analysis.edges import NotAccepted
from ..analysis.nodes import Node
from ..client_requests import QUESTION_CLASSES, ListRoots, Sample
from ..errors import ResolutionError
from ..markers import ElicitURL
from ..outcomes import AcceptedElicitation, CancelledElicitation, DeclinedElicitation
from .app_scope import AppScope, Caller
from .app_scope import app_value as scoped_value
from .refusal import refused
from .user_scope import UserValues

_NOT_ACCEPTED = (DeclinedElicitation, CancelledElicitation)


class Asker(Caller, Protocol):
    """What asking for a user-scoped value needs of the call (the engine's `Resolution`)."""

    used: Any

    def _settle(self, node: Node, result: Any) -> None: ...


async def app_value(caller: Asker, app: AppScope | None, node: Node) -> Any:
    """The value of scoped `node` that the call's walk missed: built now, or the question
    its user-scoped resolver asks (settled in the call, kept once accepted)."""
    if node.user and node.dep_params:
        declined(caller, node)
    value = await scoped_value(caller, app, node)
    if type(value) not in QUESTION_CLASSES:
        return value
    graph = caller.graph
    problem = _not_kept(node, value)
    if problem is not None:
        caller._fail(node)
        raise ResolutionError(
            f"Resolver {node.name!r} for parameter {node.parameter!r} is user-scoped, but "
            f"{problem} (tool {graph.tool!r})",
            tool=graph.tool,
            resolver=node.name,
            parameter=node.parameter,
        )
    caller._settle(node, value)
    settled = caller._values[node.index]
    if (
        type(settled) is AcceptedElicitation
        and node.key in (caller.used or ())
        and isinstance(app, UserValues)  # always: only a user's scope returns a question
    ):
        kept = await app.keep(graph, node, settled.data)
        if kept is not settled.data:  # another call of this user's answered first
            settled = caller._values[node.index] = kept
    return settled


def declined(caller: Caller, node: Node) -> None:
    """A user-scoped value is built only from accepted answers: a user-scoped dependency
    this call's user declined (or cancelled) ends the call, as an unwrapped consumer of
    the answer would (per-call resolvers and the tool receive the outcome itself)."""
    values = caller._values
    for name, dep, _, _ in node.dep_params:
        value = values[dep]
        if isinstance(value, _NOT_ACCEPTED):
            caller._fail(node)
            graph = caller.graph
            where = f"{node.name}.{name}"
            raise refused(graph.tool, graph.nodes[dep], where, NotAccepted(value.action), value)


def _not_kept(node: Node, question: Any) -> str | None:
    """Why this question cannot give a user-scoped value, or None."""
    if isinstance(question, (Sample, ListRoots)):
        return (
            f"it asked the client ({type(question).__name__}), whose answer belongs to one "
            "connection, not to the user: ask it in a per-call resolver"
        )
    if node.asks is None:
        return (
            "it returned a question its return annotation does not declare: declare it "
            f"(-> Value | {type(question).__name__}[...]) so that it is checked at start-up "
            "and every worker knows the value comes from an answer"
        )
    if isinstance(question, ElicitURL) and not question.wait:
        return (
            "it asked a URL question that does not wait, whose accept only says the user "
            "agreed to open the link: ask with ElicitURL(..., wait=True) and return the "
            "value once the work is done, or with a page of mcp_resolve.pages"
        )
    return None
