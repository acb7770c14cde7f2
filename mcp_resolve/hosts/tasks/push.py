"""Push instead of polling: `notifications/tasks` on a `subscriptions/listen` stream (SEP-2663).

A client that polls `tasks/get` learns of a change at its next poll; fastmcp's client backs
off from 20 ms to the server's `pollIntervalMs` (5 s by default), so a task that finishes
after a few seconds is known up to seconds late, and every poll costs the front a few
Redis reads. SEP-2663 lets the client listen instead: a `subscriptions/listen` request
whose filter carries `taskIds` opens a stream on which the server sends a
`notifications/tasks` for each of those tasks whenever its status changes, with the
task's whole state (what `tasks/get` would return at that moment: the `inputRequests` of
an `input_required` task, the `result` of a completed one).

The change happens on a Docket worker; the stream is held by a front. Docket announces
every change of an execution's state on Redis, and each process keeps **one** subscription
(`task_changes`) that follows the channels of the legs its listeners' tasks are at, and
wakes those listeners; a cancellation, which changes no execution when the task is parked,
is announced by the front that handled it on a channel of ours. A woken
listener reads the task as `tasks/get` does, in the listener's own request context: the
owner rule of `tasks/get` (the task's auth scope) is the listener's too, and a task id
that is not the client's reads as not found and refuses the whole listen before its
acknowledgement. The client gets the state of each task right after the acknowledgement
(nothing is missed between creating a task and listening), then one notification per
change of status (or of the questions asked); the stream ends gracefully once every task
it names has ended, and at once when the client hangs up.

Bounded: `max_task_ids` per listen, `max_listeners_per_owner` streams per owner (the
task scope, else the client's address), `max_listeners` per process. A refusal is a
JSON-RPC error before the acknowledgement, naming the bound.

A task store that cannot be read (`task_changes.BROKEN`: Redis down, or failing over) is a
hiccup to an open stream, which reads again soon; before the acknowledgement it refuses
the listen with its own code (`STORE_UNAVAILABLE`), which a client can tell from an
internal error and try again on.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import anyio
import mcp_types as types
from fastmcp.server.dependencies import bind_request_context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp_tasks.context import get_task_scope
from fastmcp_tasks.handlers import tasks_get
from fastmcp_tasks.input_store import load_current_leg
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from ...state.at_most_once import owner_of
from .task_changes import BROKEN, Changes

LISTEN = "subscriptions/listen"
NOTIFICATION = "notifications/tasks"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
DEFAULT_MAX_TASK_IDS = 64
DEFAULT_MAX_LISTENERS_PER_OWNER = 16
DEFAULT_MAX_LISTENERS = 1024
TERMINAL = frozenset({"completed", "failed", "cancelled"})
_REREADS = 5
RECHECK = 5.0
"""Seconds a stream waits for a change before it reads its tasks anyway: a safety net (a
change Redis lost, or one nothing announces); `task_changes` says why none is missed."""
_AGAIN_FIRST, _AGAIN_MOST = 0.05, 2.0  # a stream's pauses before it reads again after a hiccup
UNAVAILABLE = (
    "Task notifications are unavailable right now: the task store did not answer. "
    "Try again, or poll tasks/get"
)
STORE_UNAVAILABLE = -32010
"""The JSON-RPC code of a listen refused because the task store (Redis) could not be read:
not the server's fault nor the client's, and worth trying again, so not -32603 (an
internal error). The spec names no code for it; this one is in the band it leaves to
implementations (-32000 to -32019; the SDK's client uses -32000 and -32001, -32002 is
retired). A tool call meeting an unavailable store is a tool error instead, a page 503."""
logger = logging.getLogger("mcp_resolve")


class _Pushed(BaseModel):
    method: str
    params: dict[str, Any]


class _Listener:
    """One stream: the tasks it names that changed since it last looked."""

    __slots__ = ("changed", "wake")

    def __init__(self) -> None:
        self.changed: set[str] = set()
        self.wake = anyio.Event()

    def __call__(self, task_id: str) -> None:
        self.changed.add(task_id)
        self.wake.set()


class TaskPush:
    """Serves `subscriptions/listen` with `taskIds` on a fastmcp server with `ResolvingTasks`."""

    def __init__(
        self,
        server: Any,
        *,
        max_task_ids: int = DEFAULT_MAX_TASK_IDS,
        max_listeners_per_owner: int = DEFAULT_MAX_LISTENERS_PER_OWNER,
        max_listeners: int = DEFAULT_MAX_LISTENERS,
    ) -> None:
        self.server = server
        self.max_task_ids = max_task_ids
        self.per_owner = max_listeners_per_owner
        self.per_process = max_listeners
        self.changes: Changes | None = None
        self._by_owner: dict[str, int] = {}
        self._total = 0

    def _changes(self) -> Changes:
        docket = self.server._docket
        if docket is None:
            raise MCPError(types.INTERNAL_ERROR, "Task notifications are not available")
        if self.changes is None or self.changes.docket is not docket:
            self.changes = Changes(docket)
        return self.changes

    async def announce(self, task_id: str) -> None:
        if self.server._docket is not None:
            await self._changes().announce(task_id)

    async def aclose(self) -> None:
        if self.changes is not None:
            await self.changes.aclose()

    async def __call__(
        self, ctx: Any, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        with bind_request_context(ctx):
            return await self._serve(ctx, params)

    async def _serve(
        self, ctx: Any, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        subscription_id = ctx.request_id
        if subscription_id is None:
            raise MCPError(types.INVALID_REQUEST, "subscriptions/listen requires a request id")
        meta: dict[str, Any] = {SUBSCRIPTION_ID: subscription_id}
        task_ids = _task_ids(params.notifications, self.max_task_ids)
        if not task_ids:  # nothing this server pushes was asked for: acknowledged, and ended
            await self._acknowledge(ctx, [], meta)
            return types.SubscriptionsListenResult(_meta=meta)
        owner = owner_of(ctx, lambda _: get_task_scope())
        self._admit(owner)
        listener = _Listener()
        changes = self._changes()
        unwatch = changes.watch(task_ids, listener)
        followed: dict[str, set[str]] = {}
        try:
            try:
                await changes.listening()
                first = {t: await self._look(changes, t, followed) for t in task_ids}  # authorises
            except BROKEN as exc:  # before anything was sent: a refusal, not an internal error
                logger.warning("Task push: a listen was refused, its tasks' read failed (%s)", exc)
                raise MCPError(STORE_UNAVAILABLE, UNAVAILABLE) from None
            await self._acknowledge(ctx, task_ids, meta)
            sent: dict[str, tuple[Any, ...]] = {}
            for task in first.values():
                await self._push(ctx, task, sent, meta)
            again = _AGAIN_FIRST
            while any(sent[t][0] not in TERMINAL for t in task_ids):
                with anyio.move_on_after(RECHECK) as quiet:
                    await listener.wake.wait()
                listener.wake = anyio.Event()
                changed, listener.changed = listener.changed, set()
                if quiet.cancelled_caught:
                    changed = set(task_ids)
                for task_id in task_ids:
                    if task_id in changed and sent[task_id][0] not in TERMINAL:
                        try:
                            task = await self._look(changes, task_id, followed)
                        except BROKEN as exc:  # Redis dropped or stalled: read it again soon
                            logger.warning("Task push: a task's read failed (%s); again", exc)
                            listener(task_id)
                            await anyio.sleep(again)
                            again = min(again * 2, _AGAIN_MOST)
                            continue
                        again = _AGAIN_FIRST
                        await self._push(ctx, task, sent, meta)
        finally:
            unwatch()
            self._release(owner)
            with anyio.move_on_after(5, shield=True):  # even when the client hung up
                await changes.unfollow(c for channels in followed.values() for c in channels)
        return types.SubscriptionsListenResult(_meta=meta)

    async def _look(
        self, changes: Changes, task_id: str, followed: dict[str, set[str]]
    ) -> dict[str, Any]:
        """Follow the task's current and next leg (confirmed by Redis), then read it: a
        change after the read is announced on a followed channel."""
        _, leg = await load_current_leg(self.server._docket, get_task_scope(), task_id)
        channels = await changes.legs(get_task_scope(), task_id, leg)
        before = followed.get(task_id, set())
        if channels != before:
            followed[task_id] = before | channels  # counted at once, even if Redis fails
            await changes.follow(channels - before)
            await changes.unfollow(before - channels)
            followed[task_id] = channels
        return await self._read(task_id)

    async def _read(self, task_id: str) -> dict[str, Any]:
        """The task as `tasks/get` shows it to this listener (not found if not its own).

        Read again when the task's current leg moved meanwhile: a read that overlaps
        `tasks/update` can see the answered leg's execution after its questions were
        cleared, which reads as `completed` with no result. A poll rarely lands there; a
        listener is woken exactly then (by the next leg's enqueueing)."""
        docket, scope = self.server._docket, get_task_scope()
        for _ in range(_REREADS):
            before = await load_current_leg(docket, scope, task_id)
            task = await tasks_get(self.server, task_id)
            if await load_current_leg(docket, scope, task_id) == before:
                break
        body: dict[str, Any] = task.model_dump(by_alias=True, mode="json", exclude_none=True)
        body.pop("resultType", None)
        return body

    async def _push(
        self, ctx: Any, task: dict[str, Any], sent: dict[str, tuple[Any, ...]], meta: dict[str, Any]
    ) -> None:
        """Send the task's state unless the client already has this status (and questions)."""
        seen = (task["status"], tuple(sorted(task.get("inputRequests") or ())))
        if sent.get(task["taskId"]) == seen:
            return
        sent[task["taskId"]] = seen
        pushed = _Pushed(method=NOTIFICATION, params={**task, "_meta": meta})
        await ctx.session.send_notification(cast(Any, pushed), related_request_id=ctx.request_id)

    async def _acknowledge(self, ctx: Any, task_ids: list[str], meta: dict[str, Any]) -> None:
        honored = types.SubscriptionFilter.model_validate({"taskIds": task_ids} if task_ids else {})
        ack = types.SubscriptionsAcknowledgedNotification(
            params=types.SubscriptionsAcknowledgedNotificationParams(
                notifications=honored, _meta=meta
            )
        )
        await ctx.session.send_notification(ack, related_request_id=ctx.request_id)

    def _admit(self, owner: str | None) -> None:
        if owner is not None and self._by_owner.get(owner, 0) >= self.per_owner:
            raise MCPError(
                types.INTERNAL_ERROR,
                "Subscription limit reached: this client already listens on as many task "
                f"streams as its limit allows (max_listeners_per_owner={self.per_owner})",
            )
        if self._total >= self.per_process:
            raise MCPError(
                types.INTERNAL_ERROR,
                f"Subscription limit reached (max_listeners={self.per_process}); try again later",
            )
        self._total += 1
        if owner is not None:
            self._by_owner[owner] = self._by_owner.get(owner, 0) + 1

    def _release(self, owner: str | None) -> None:
        self._total -= 1
        if owner is not None:
            left = self._by_owner[owner] - 1
            if left:
                self._by_owner[owner] = left
            else:
                del self._by_owner[owner]


def serve(server: Any, push: TaskPush) -> None:
    """Serve `subscriptions/listen` on a fastmcp front, advertising only what it pushes.

    The SDK derives a 2026-07-28 front's `listChanged` (tools, prompts, resources) and
    `resources.subscribe` from whether the front serves `subscriptions/listen` at all; this
    stream pushes task changes only, and fastmcp has no list changes to give it on 2026-07-28
    (its own go to a legacy session), so `server/discover` says false for those: a client
    must not wait for a list change that never comes. Through fastmcp's own `on_discover`
    middleware hook; the handshake era's `initialize` keeps fastmcp's flags."""
    server._mcp_server.add_request_handler(LISTEN, types.SubscriptionsListenRequestParams, push)
    server.add_middleware(_OnlyTasksPushed())


class _OnlyTasksPushed(Middleware):
    async def on_discover(
        self,
        context: MiddlewareContext[types.DiscoverRequest],
        call_next: CallNext[types.DiscoverRequest, types.DiscoverResult | dict[str, Any]],
    ) -> types.DiscoverResult | dict[str, Any]:
        discovered = await call_next(context)
        if not isinstance(discovered, types.DiscoverResult):
            return discovered  # a shape this hook does not know: left as it came
        advertised = discovered.capabilities
        honest: dict[str, Any] = {}
        for name in ("tools", "prompts", "resources"):
            capability = getattr(advertised, name)
            if capability is not None:
                off = {
                    "list_changed": False,
                    **({"subscribe": False} if name == "resources" else {}),
                }
                honest[name] = capability.model_copy(update=off)
        return discovered.model_copy(update={"capabilities": advertised.model_copy(update=honest)})


def _task_ids(requested: types.SubscriptionFilter, most: int) -> list[str]:
    raw = (requested.model_extra or {}).get("taskIds")
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(t, str) and t for t in raw):
        raise MCPError(types.INVALID_PARAMS, "taskIds must be a list of task ids")
    ids = list(dict.fromkeys(raw))
    if len(ids) > most:
        raise MCPError(
            types.INVALID_PARAMS,
            f"Too many taskIds in one subscriptions/listen ({len(ids)}; max_task_ids={most})",
        )
    return ids


__all__ = [
    "DEFAULT_MAX_LISTENERS_PER_OWNER",
    "DEFAULT_MAX_TASK_IDS",
    "NOTIFICATION",
    "STORE_UNAVAILABLE",
    "UNAVAILABLE",
    "TaskPush",
    "serve",
]
