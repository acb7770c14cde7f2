"""A client side of `subscriptions/listen` with `taskIds` (SEP-2663), on fastmcp's `Client`.

fastmcp's client has no API for task notifications, so a test sends the request through the
SDK session's public `send_request` and receives `notifications/tasks` through a client
extension's notification binding (the SDK's way to observe a notification it does not
define). Each notification is kept with the time it arrived.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from fastmcp import Client
from mcp.client.extension import ClientExtension, NotificationBinding
from pydantic import ConfigDict


class TaskNotice(types.NotificationParams):
    model_config = ConfigDict(extra="allow")


class Listening(ClientExtension):
    """Receives every `notifications/tasks`: `notices` in arrival order, `arrived` their times."""

    identifier = "dev.mcp-resolve/test-task-listener"

    def __init__(self) -> None:
        self.notices: list[dict[str, Any]] = []
        self.arrived: list[float] = []
        self._changed = anyio.Event()

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return [
            NotificationBinding(
                method="notifications/tasks", params_type=TaskNotice, handler=self._received
            )
        ]

    async def _received(self, params: TaskNotice) -> None:
        self.arrived.append(time.time())
        self.notices.append(params.model_dump(by_alias=True, exclude_none=True))
        self._changed.set()

    async def status(self, task_id: str, status: str, timeout: float = 60) -> dict[str, Any]:
        """The first notice of `task_id` at `status`, waited for."""
        with anyio.fail_after(timeout):
            while True:
                for notice in self.notices:
                    if notice.get("taskId") == task_id and notice.get("status") == status:
                        return notice
                self._changed = anyio.Event()
                await self._changed.wait()

    def statuses(self, task_id: str) -> list[str]:
        return [n["status"] for n in self.notices if n.get("taskId") == task_id]


async def listen(client: Client, task_ids: list[str], timeout: float = 120) -> types.Result:
    """One `subscriptions/listen` for `task_ids`; returns when the server ends the stream."""
    request = types.SubscriptionsListenRequest(
        params=types.SubscriptionsListenRequestParams(
            notifications=types.SubscriptionFilter.model_validate({"taskIds": task_ids})
        )
    )
    return await client.session.send_request(
        request, types.SubscriptionsListenResult, request_read_timeout_seconds=timeout
    )
