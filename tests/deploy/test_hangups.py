"""Clients that hang up free their waiting calls, straight to a worker and behind HAProxy.

Real processes on 127.0.0.1: two `uvicorn hangup_worker:app` workers sharing keys and a
ledger, HAProxy running docs/snippets/haproxy.cfg as it is, and each client a process of
its own (tests/support/hangup_client.py) that consents to a URL wait nothing completes and
is then killed (SIGKILL: its sockets close as in a crash). The worker must free the call
(nothing waits on it any more) soon after, not at the wait's deadline: on legacy a call
waiting mid-call, whose generator resolver (it stands for a pooled database connection)
is cleaned up then; on 2026-07-28 a held retry, which gave that connection back before it
began to wait.

Behind HAProxy that takes the recipe's `option abortonclose` (without it HAProxy keeps
the worker's connection open and the calls stay held). The workers poll for hang-ups only
once a minute, where they cannot await them, so a legacy call freed at once shows that
the worker awaited the disconnect (on 2026-07-28 the SDK's transport awaits it too).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from support.load_balancer import SUPPORT, haproxy, uvicorn_worker

KEYS = "hangup-key-" + "k" * 32
FREED_WITHIN = 3.0  # seconds; the wait's own deadline is 120 s, HAProxy's timeouts minutes


@dataclass
class Workers:
    balancer: str  # the load balancer's address
    addresses: list[str]  # each worker's own address
    ledger: Path

    def waiting(self) -> int:
        """Calls waiting on either worker."""
        return sum(int(httpx2.get(f"http://{a}/waiting").json()) for a in self.addresses)

    def stamps(self, what: str, order: str) -> list[float]:
        """When the connection of `order`'s call was `opened` or `closed`, on any worker."""
        lines = self.ledger.read_text().splitlines() if self.ledger.exists() else []
        return [float(stamp) for w, o, _, stamp in map(str.split, lines) if (w, o) == (what, order)]


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    folder = tmp_path_factory.mktemp("hangups")
    env = {"MCP_RESOLVE_STATE_KEYS": KEYS, "HANGUP_LEDGER": str(folder / "ledger")}
    with (
        uvicorn_worker("hangup_worker:app", env) as one,
        uvicorn_worker("hangup_worker:app", env) as two,
        haproxy([one, two]) as balancer,
    ):
        yield Workers(balancer, [one, two], folder / "ledger")


def until(condition: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.01)


@pytest.mark.parametrize("route", ["behind HAProxy", "straight to a worker"])
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_a_killed_client_frees_its_waiting_call_and_its_resources(
    workers: Workers, mode: str, route: str
) -> None:
    order = f"{mode}-{route}".replace(" ", "-")
    address = workers.balancer if route == "behind HAProxy" else workers.addresses[0]
    client = subprocess.Popen(
        [sys.executable, str(SUPPORT / "hangup_client.py"), f"http://{address}/mcp", mode, order],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert client.stdout is not None
        assert client.stdout.readline() == b"consented\n"

        def held() -> bool:
            # The call waits; on legacy with its connection taken, while a held 2026-07-28
            # retry gave its connection back before it began to wait (and takes it again
            # when woken), so nobody thinking or paying pins a pooled connection.
            opened, closed = workers.stamps("opened", order), workers.stamps("closed", order)
            taken = len(opened) - len(closed)
            return workers.waiting() == 1 and taken == (1 if mode == "legacy" else 0)

        until(held, 30, f"the {mode} call never waited")
    finally:
        killed_at = time.time()
        os.kill(client.pid, signal.SIGKILL)
        client.wait()
        client.stdout.close()  # type: ignore[union-attr]

    def freed() -> bool:
        opened, closed = workers.stamps("opened", order), workers.stamps("closed", order)
        return workers.waiting() == 0 and len(opened) == len(closed)

    until(freed, 20, f"the {mode} call still waits 20 s after its client was killed")
    # Legacy: when the cleanup ran; 2026-07-28 (nothing left to clean): when the wait ended.
    freed_after = (
        max(workers.stamps("closed", order)) if mode == "legacy" else time.time()
    ) - killed_at
    print(f"{mode} {route}: freed {freed_after * 1000:.0f} ms after the kill")
    assert freed_after < FREED_WITHIN, f"the cleanup ran {freed_after:.1f} s after the kill"
