"""Asking on a legacy connection (2025-11-25 and earlier): one request per question, mid-call.

A form or URL question goes out as `elicitation/create`, a `Sample` as
`sampling/createMessage` and a `ListRoots` as `roots/list`, each related to the tool call
so a Streamable HTTP client gets it on the call's own stream. What the client sends back
becomes an `Answer` for the engine; a client that fails, or answers with something of
the wrong kind, gives a tool error naming the resolver and parameter.

A question holds the call open, and with it every resource its resolvers opened, until
the client answers. A client that never answers, or went away without a word, must not
hold them for long: each answer, and each URL question's wait for completion, has a
deadline (the question's `timeout`, else the tool's `ask_timeout`), and over HTTP the
request is watched for the client hanging up. Either way the call ends at once with a
tool error naming the resolver and parameter, and cleanups run as it unwinds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import ValidationError

from ..client_requests import ListRoots, Sample
from ..engine.questions import Answer, Question
from ..errors import ResolutionError
from ..markers import Elicit, ElicitURL
from ..seconds import seconds
from . import completion, hangups, wire
from .client_request_wire import result_type
from .held_limits import HeldLimits

T = TypeVar("T")

DEFAULT_ASK_TIMEOUT = 600.0  # seconds a legacy question, or a URL wait, may hold a call


_DEFAULT_LIMITS = HeldLimits()


def check_ask_timeout(timeout: object) -> float:
    """A tool's `ask_timeout` must be a positive, finite number of seconds (refused when built)."""
    return seconds(timeout, "ask_timeout")


async def ask_all(
    conn: Any,
    questions: tuple[Question, ...],
    tool: str,
    derived: dict[str, str],
    ask_timeout: float = DEFAULT_ASK_TIMEOUT,
    limits: HeldLimits | None = None,
) -> dict[str, Any]:
    """Every question of one round: asked in order, or answered by its fallback when this
    client cannot be asked; refused (-32021) when one cannot be asked and has none.
    `derived` keeps the URL elicitation ids made for this call (see `wire.elicitation_id`)."""
    answers: dict[str, Any] = {}
    back_channel = conn.session.can_send_request
    caps = conn.session.client_capabilities
    unaskable = [q for q in questions if not (back_channel and wire.can_ask(caps, q))]
    refused = [q for q in unaskable if not wire.has_fallback(q)]
    if refused:
        why = None if back_channel else no_channel_reason(conn.session)
        raise wire.missing_capability(refused, why=why)
    for question in questions:
        if question in unaskable:
            answers[question.key] = wire.fallback_outcome(question)
            continue
        answers[question.key] = await ask_one(conn, question, tool, derived, ask_timeout, limits)
    return answers


def no_channel_reason(session: Any) -> str:
    """Why `session` cannot carry a question: a call with no request says so itself."""
    reason = getattr(session, "no_channel_reason", None)
    if isinstance(reason, str):
        return reason
    return "this connection has no channel back to the client"


def client_failed(question: Question, verb: str, detail: str, tool: str) -> ResolutionError:
    """The client `verb` (did something wrong with) `question`: a tool error naming it."""
    asked = f"resolver {question.resolver!r} for parameter {question.parameter!r}"
    return question.failed(
        f"The client {verb} {asked}{detail} (tool {tool!r})",
        tool=tool,
    )


async def ask_one(
    conn: Any,
    question: Question,
    tool: str,
    derived: dict[str, str],
    ask_timeout: float = DEFAULT_ASK_TIMEOUT,
    limits: HeldLimits | None = None,
) -> Answer:
    request = question.request
    related = conn.request_id
    deadline = getattr(request, "timeout", None) or ask_timeout

    def send() -> Awaitable[Any]:
        if isinstance(request, Elicit):
            return conn.session.elicit_form(  # type: ignore[no-any-return]
                request.message,
                wire.request_params(question).requested_schema,  # type: ignore[union-attr]
                related_request_id=related,
            )
        if isinstance(request, ElicitURL):
            eid = wire.elicitation_id(question, derived)
            return conn.session.elicit_url(  # type: ignore[no-any-return]
                request.message, request.url, eid, related_request_id=related
            )
        return _ask_client(conn, question, tool)

    try:
        result = await within(conn, question, tool, deadline, "answer", send)
    except MCPError as exc:
        raise client_failed(question, "could not answer", f": {exc.message}", tool) from None
    except ValidationError:  # the reply was not a result of the kind asked for
        what = "an elicitation result" if question.kind in ("form", "url") else "its result"
        raise client_failed(
            question, "answered", f" with something that is not {what}", tool
        ) from None
    answer = wire.answer_from(
        result,
        kind=question.kind,
        resolver=question.resolver,
        parameter=question.parameter,
        tool=tool,
    )
    del result, send  # the reply and the closure: not kept by a call that now waits
    if isinstance(request, ElicitURL) and request.wait and answer.action == "accept":
        eid = wire.elicitation_id(question, derived)
        limits = limits or _DEFAULT_LIMITS
        admitted = limits.admit(conn, question, tool)
        try:  # the call's own frame waits: no coroutine of ours between it and `receive()`
            done = await completion.wait_for_completion(
                eid, deadline, conn.session, conn.request_id, http_request(conn)
            )
        except completion.ClientGone:
            raise gone_while_waiting(question, tool) from None
        finally:
            limits.release(admitted)
        if not done:
            raise not_completed(question, tool, deadline)
    return answer


def gone_while_waiting(question: Question, tool: str) -> ResolutionError:
    """The tool error of a client that hung up while its call waited for a step."""
    return client_failed(question, "went away while", " waited for its completion", tool)


async def _ask_client(conn: Any, question: Question, tool: str) -> Any:
    """Send a `Sample` or `ListRoots` as its own request; the result is validated by type."""
    request: Sample | ListRoots = question.request  # type: ignore[assignment]
    return await conn.session.send_request(
        wire.wire_request(question, tool),
        result_type(request),
        metadata=ServerMessageMetadata(related_request_id=conn.request_id),
    )


async def within(
    conn: Any,
    question: Question,
    tool: str,
    deadline: float,
    step: str,
    work: Callable[[], Awaitable[T]],
    *,
    said: float | None = None,
) -> T:
    """`work()`, unless `deadline` passes or the HTTP client hangs up first.

    `said` is the deadline the timeout error names, when `deadline` is what is left of it
    (a 2026-07-28 retry held across several checks, `held`)."""
    done: list[T] = []
    failed: list[Exception] = []
    gone: list[bool] = []
    request = http_request(conn)
    with anyio.move_on_after(deadline):
        if request is None:  # stdio, in memory: the SDK cancels the call when they close
            return await work()
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                await hangups.hung_up(request)
                gone.append(True)
                group.cancel_scope.cancel()

            group.start_soon(watch)
            try:
                done.append(await work())
            except Exception as exc:  # re-raised below, outside the task group
                failed.append(exc)
            group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    if done:
        return done[0]
    if gone:
        noun = "answer" if step == "answer" else "completion"
        raise client_failed(question, "went away while", f" waited for its {noun}", tool)
    if step == "complete":
        raise not_completed(question, tool, deadline if said is None else said)
    raise client_failed(question, "did not answer", f" within {deadline:g} s", tool)


def not_completed(question: Question, tool: str, deadline: float) -> ResolutionError:
    """The tool error of a URL step not completed in time: the same on both generations."""
    asked: Any = question.request
    return question.failed(
        f"The step at {asked.url} for parameter {question.parameter!r} was not "
        f"completed within {deadline:g} s (tool {tool!r}, resolver {question.resolver!r})",
        tool=tool,
    )


def http_request(conn: Any) -> Any:
    """The HTTP request a call came on, when it can tell that its client hung up."""
    request = getattr(conn.request_context, "request", None)
    return request if callable(getattr(request, "is_disconnected", None)) else None
