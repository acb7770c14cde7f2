"""fastmcp-tasks' `TasksExtension`, plus what a resolved task needs from the call that made it.

A resolved tool registered with `task=True` already runs as a task under the plain
`TasksExtension`: its questions become the task's `input_required` status (`task_legs`).
`ResolvingTasks` adds three things. Two are written to Redis beside the task when the
front creates it, sealed with the server's key ring (`records`), and read back by each leg
on whichever worker runs it (`_prepare_leg`):

- **what the client declared** (its capabilities on the call that made the task): a leg
  has no request of its own, and without this it would ask a client for what it cannot
  give (sampling, say) and leave its task stuck at `input_required`. With it, such a
  question takes its `fallback=` or fails the task with the -32021 refusal, as in a
  foreground round;
- **the answers of foreground rounds**, for tools marked `@asks_first` (SEP-2663's MRTR
  composition): the questions are asked in ordinary 2026-07-28 rounds (the client answers
  by retrying `tools/call`), and the round on which the resolvers have every answer
  returns a `CreateTaskResult` instead of running the body. The task's first leg starts
  from the state that records those answers, so no resolver asks again.

The third is a **deadline** for every question a leg asks (`deadlines`).

fastmcp-tasks mints the task id when it enqueues the first leg, so the records can only be
written after that, all in one transaction (`stored`); a task's first leg that outruns
the front waits for them (`CARRY_WAIT` seconds at most, a few milliseconds in practice),
and a later leg finds them at once, in one round trip either way. A record that is not what
this server sealed for this task stops the task (`RefusedRecord`), as does a state whose
question keys this process does not derive: answered questions are never asked again
silently.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Collection
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import mcp_types as types
from fastmcp.exceptions import NotFoundError
from fastmcp.server.context import Context
from fastmcp.server.dependencies import _is_client_tool_call
from fastmcp.utilities.tasks import TASKS_EXTENSION_ID
from fastmcp_tasks import TasksExtension
from fastmcp_tasks.context import get_task_context, get_task_leg_number, get_task_scope
from fastmcp_tasks.creation import create_task
from fastmcp_tasks.dependencies import _current_docket
from fastmcp_tasks.handlers import _task_key_ttl_seconds
from fastmcp_tasks.models import CreateTaskResult
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ...protocol import completion
from ...protocol.connection import Connection
from ...state.keys import KeyRing
from ...state.round_state import RoundState, StateError
from ...state.shared_keys import VARIABLE
from . import deadlines, scheduled_legs, stored, task_user, waiting_owners
from . import legs as task_legs
from . import push as task_push
from .legs import ASKS_FIRST, ESCALATING, Escalation
from .records import RefusedRecord, TaskRecords
from .stored import CARRY_WAIT

logger = logging.getLogger("mcp_resolve")

F = TypeVar("F", bound=Callable[..., Any])
CARRY_TTL = 3600  # at least; a task that lives longer keeps them as long as it lives
_DECLARED: OrderedDict[str, types.ClientCapabilities] = OrderedDict()  # by task id, this worker
_DECLARED_AT_MOST = 4096


def asks_first(fn: F) -> F:
    """Ask a task tool's questions in foreground rounds, then run it as a task.

    Put between `@app.tool(task=...)` and `@resolved`; the server needs `ResolvingTasks`.
    """
    if getattr(fn, "__mcp_resolve_graph__", None) is None:
        raise TypeError(
            f"@asks_first goes on a @resolved function (above @resolved), not on {fn!r}"
        )
    setattr(fn, ASKS_FIRST, True)
    return fn


def _key_ring(keys: KeyRing | None, url: str) -> KeyRing:
    """The ring that seals the task records: given, else `MCP_RESOLVE_STATE_KEYS`; a ring of
    this process alone only where nothing but this process reads them (`memory://`)."""
    if keys is not None:
        if not isinstance(keys, KeyRing):
            raise TypeError(f"keys must be a KeyRing, not {type(keys).__name__}")
        return keys
    if os.environ.get(VARIABLE, "").strip():
        return KeyRing.from_env(VARIABLE)
    if url.startswith("memory://"):
        return KeyRing.generate()
    raise ValueError(
        f"ResolvingTasks seals what it keeps in Redis about each task with the server's key "
        f"ring, the same in the front and every worker: set {VARIABLE}, or pass "
        "keys=KeyRing(...)"
    )


class ResolvingTasks(TasksExtension):
    """`TasksExtension`, plus the client's capabilities in every leg of a resolved task,
    foreground questions before the task for `@asks_first` tools, and a deadline for every
    question a task asks.

    Takes the same arguments, `keys` (a `KeyRing`; default: `MCP_RESOLVE_STATE_KEYS`,
    required with Redis) to seal what it keeps in Redis, and `push` (default on: serve
    `subscriptions/listen` with `taskIds`, `push`, so a client may listen instead of
    polling; the front still advertises no `listChanged`, which it does not push);
    register it in place of
    `TasksExtension` (`app.add_extension(ResolvingTasks(url=...))`) on the server and so
    on its workers.
    """

    def __init__(self, *, keys: KeyRing | None = None, push: bool = True, **settings: Any) -> None:
        super().__init__(**settings)
        self.records = TaskRecords(_key_ring(keys, self.docket_settings.url))
        self.push = push
        self._push: task_push.TaskPush | None = None
        task_legs.prepare = _prepare_leg
        task_legs.parked = _parked

    @asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[None, None]:
        """fastmcp-tasks' lifespan, with the deadline job registered on this process's
        Docket, so that any worker can run it."""
        async with super().lifespan():
            docket: Any = self.server._docket
            if docket is not None:
                docket.register(self._deadline, names=[deadlines.JOB])
            completion.observe(self._woken)
            lowlevel: Any = self.server._mcp_server
            if self.push and lowlevel.get_request_handler(task_push.LISTEN) is None:
                self._push = task_push.TaskPush(self.server)
                task_push.serve(self.server, self._push)
            try:
                yield
            finally:
                completion.unobserve(self._woken)
                if self._push is not None:
                    await self._push.aclose()

    async def _handle_cancel(self, ctx: Any, params: Any) -> Any:
        """fastmcp-tasks' `tasks/cancel`; the task no longer counts as waiting against its
        owner, and its listeners are told (a parked task's cancellation changes no
        execution, so Docket announces nothing)."""
        cancelled = await super()._handle_cancel(ctx, params)
        docket: Any = self.server._docket
        if docket is not None:  # a task cancelled while it waits for a step waits no more
            await scheduled_legs.resumed(docket, self.records, params.task_id)
        if self._push is not None:
            await self._push.announce(params.task_id)
        return cancelled

    async def _woken(self, elicitation_id: str) -> None:
        await scheduled_legs.woken(self.server, self.records, elicitation_id)

    async def _deadline(self, task_id: str, scope: str | None, leg: int, after: float) -> None:
        await deadlines.reached(self.server, self.records, task_id, scope, leg, after)

    async def intercept_tool_call(
        self, params: Any, context: Context, call_next: Callable[[], Any]
    ) -> Any:
        tool = await _resolved_task_tool(params.name, context)
        if tool is None:
            return await super().intercept_tool_call(params, context, call_next)
        rc = context.request_context
        opted_in = (
            rc is not None
            and rc.protocol_version in MODERN_PROTOCOL_VERSIONS
            and context.client_extension_settings(TASKS_EXTENSION_ID) is not None
        )
        if not getattr(tool.fn, ASKS_FIRST, False) or not opted_in or not _is_client_tool_call():
            outcome = await super().intercept_tool_call(params, context, call_next)
            if isinstance(outcome, CreateTaskResult):
                await self._record(context, outcome, None)
            return outcome
        escalation = Escalation()
        token = ESCALATING.set(escalation)
        try:
            outcome = await call_next()  # one foreground round: questions, or every answer
        finally:
            ESCALATING.reset(token)
        if escalation.state is None:
            return outcome
        created = await create_task(tool, params.arguments, context)
        await self._record(context, created, escalation.state)
        return created

    async def _record(self, context: Context, created: CreateTaskResult, state: str | None) -> None:
        """Beside the new task, sealed, in one transaction (`stored`): what the client
        declared, who signed in (`task_user`), for `@asks_first` the state its rounds
        carried, and the task's owner (whom its waits count against, `waiting_owners`). A
        leg that sees the declaration sees the others."""
        docket: Any = context.fastmcp._docket or _current_docket.get()
        rc = context.request_context
        declared = getattr(rc.session, "client_capabilities", None) if rc is not None else None
        if not isinstance(declared, types.ClientCapabilities):
            declared = types.ClientCapabilities()  # declared nothing: can be asked nothing
        ttl = max(CARRY_TTL, int((created.ttl_ms or 0) / 1000) + 60)
        task_id = created.task_id
        seal = self.records.seal
        text = declared.model_dump_json(by_alias=True, exclude_none=True)
        sealed = {"declared": seal("declared", task_id, text, ttl)}
        user = task_user.sealed(self.records, task_id, ttl)
        if user is not None:
            sealed[task_user.KIND] = user
        if state is not None:
            sealed["carried"] = seal("carried", task_id, state, ttl)
        owner = waiting_owners.owner_at_creation(rc, get_task_scope())
        if owner is not None:
            sealed["owner"] = seal("owner", task_id, owner, ttl)
        await stored.write(docket, task_id, ttl, sealed)

    async def prepare(
        self, conn: Connection, docket: Any, task: Any, keys: Collection[str], asks_first: bool
    ) -> None:
        """A leg of a resolved task starts with what the front recorded when it made the
        task, and with whether its questions passed their deadline."""
        leg = get_task_leg_number()
        try:
            await self._prepare(conn, docket, task, leg, asks_first)
        except RefusedRecord:
            raise MCPError(
                code=types.INTERNAL_ERROR,
                message=f"Task {task.task_id}: a record kept for it failed verification; "
                "the task was stopped",
            ) from None
        _same_keys(conn.request_state, keys, task.task_id)

    def _declared(self, task_id: str, sealed: str | None) -> types.ClientCapabilities | None:
        """What the task's client declared, from its record, kept for the task's later legs
        on this worker (a task's client never changes it)."""
        if sealed is None:
            logger.warning(
                "Task %s: no record of what its client declared (is the front's extension "
                "ResolvingTasks?); its questions assume the client can answer any",
                task_id,
            )
            return None
        text = self.records.open("declared", task_id, sealed)
        declared = _DECLARED[task_id] = types.ClientCapabilities.model_validate_json(text)
        while len(_DECLARED) > _DECLARED_AT_MOST:
            _DECLARED.popitem(last=False)
        return declared

    async def _prepare(
        self, conn: Connection, docket: Any, task: Any, leg: int, asks_first: bool
    ) -> None:
        task_id = task.task_id
        first = leg == 1
        expired = None
        # A consented step that waits ends the leg (`scheduled_legs`), not held; the state it
        # leaves is sealed for the task (`_parked`), records of `once=True` values included.
        conn.session.defers_waits = True
        conn.session.sealed = True
        if conn.request_state is not None:  # the state an earlier leg left, sealed
            opened = self.records.open_state(task_id, conn.request_state)
            conn.request_state, expired = opened.get("s"), opened.get("expired")
            conn.session.waiting = opened.get("waiting")
            if conn.session.waiting is not None:  # a scheduled leg: it runs, or ends here
                await scheduled_legs.starting(docket, self.records, task.task_scope, task_id, leg)
        # One round trip for what this worker has not read yet (none, for a later leg on the
        # worker that ran an earlier one): the records the front wrote together.
        carry = asks_first and first and conn.request_state is None
        cached = _DECLARED.get(task_id)
        found = await stored.read(
            docket, task_id, declared=cached is None,
            user=not task_user.known(task_id), carried=carry, wait=first,
        )  # fmt: skip
        declared = cached if cached is not None else self._declared(task_id, found.declared)
        task_user.enter(self.records, task_id, found.user)
        if declared is not None:
            conn.session.client_capabilities = declared
        if expired is not None:  # nobody answered in time: nothing more is asked
            conn.session.expired = deadlines.Expired(expired)
            conn.session.client_capabilities = types.ClientCapabilities()
        if carry:
            if found.carried is None:
                logger.warning(
                    "Task %s: the answers of its foreground rounds never arrived", task_id
                )
                return
            conn.request_state = self.records.open("carried", task_id, found.carried)


def _leg(ctx: Any) -> tuple[ResolvingTasks, Any, Any] | None:
    """The extension of the server a leg runs on, its Docket and the task (each server in a
    process has its own extension, and its own keys)."""
    task = get_task_context()
    server = getattr(ctx, "fastmcp", None)
    extension = getattr(server, "_extensions", {}).get(TASKS_EXTENSION_ID)
    docket: Any = getattr(server, "_docket", None) or _current_docket.get()
    if task is None or docket is None or not isinstance(extension, ResolvingTasks):
        return None
    return extension, docket, task


async def _prepare_leg(conn: Connection, ctx: Any, keys: Collection[str], asks_first: bool) -> None:
    found = _leg(ctx)
    if found is not None:
        extension, docket, task = found
        await extension.prepare(conn, docket, task, keys, asks_first)


async def _parked(
    conn: Connection, ctx: Any, result: types.InputRequiredResult, flow: Any
) -> types.InputRequiredResult | None:
    """A leg asked and ends: its questions' deadline is scheduled, and the state that
    records the answers so far goes to fastmcp-tasks (into Redis) sealed for this task. A
    leg that waits for a consented step ends too, with its next leg scheduled (`scheduled_legs`)."""
    found = _leg(ctx)
    if found is None:
        return result
    extension, docket, task = found
    leg = get_task_leg_number()
    if conn.session.waits is not None:
        server = getattr(ctx, "fastmcp", None)
        state = result.request_state
        await scheduled_legs.defer(server, extension.records, docket, task, leg, conn, state, flow)
        return None
    after = task_legs.deadline(conn, flow.ask_timeout)
    await deadlines.schedule(docket, task.task_id, task.task_scope, leg, after)
    if result.request_state is None:
        return result
    ttl = _task_key_ttl_seconds(docket)
    sealed = extension.records.seal_state(task.task_id, result.request_state, ttl)
    return result.model_copy(update={"request_state": sealed})


def _same_keys(state: str | None, keys: Collection[str], task_id: str) -> None:
    """A state recording answers under keys this process does not derive came from a
    process that derives them differently: refused, for its questions would be asked again."""
    if state is None:
        return
    try:
        recorded = RoundState.decode(state)
    except StateError:
        return  # the flow says so, and asks again
    unknown = sorted(
        (set(recorded.answers) | set(recorded.asked) | set(recorded.records)) - set(keys)
    )
    if unknown:
        logger.error(
            "Task %s: its state records answers under question keys this process does not "
            "derive (%s): the processes serving this server import its code differently. "
            "Give those resolvers Resolve(fn, key=...)",
            task_id, ", ".join(unknown),
        )  # fmt: skip
        raise MCPError(
            code=types.INTERNAL_ERROR,
            message=f"Task {task_id}: its answers are recorded under question keys this "
            f"server does not use ({', '.join(unknown)}); give those resolvers "
            "Resolve(fn, key=...)",
        )


async def _resolved_task_tool(name: str, context: Context) -> Any:
    try:
        tool = await context.fastmcp.get_tool(name)
    except NotFoundError:
        return None
    fn = getattr(tool, "fn", None)
    if tool is None or not tool.task_config.supports_tasks():
        return None
    return tool if getattr(fn, "__mcp_resolve_graph__", None) is not None else None


__all__ = ["CARRY_WAIT", "ResolvingTasks", "asks_first"]
