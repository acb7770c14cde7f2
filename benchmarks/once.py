"""What a recorded resolver (`Resolve(fn, once=True)`) costs a call, per round, and per leg.

Run from the repository root (part 2 needs `redis-server`, which `make test` installs):

    .venv/bin/python benchmarks/once.py            # both parts (about 2 minutes)
    .venv/bin/python benchmarks/once.py --quick    # smoke run

The call: `pay(amount)` asks how many (`quantity`), charges (`charge`, which depends on
the answer), then asks to ship what was charged (`ship`, which depends on the charge).
On 2026-07-28 it takes three rounds: round 1 asks how many; round 2 charges and asks to
ship; round 3 runs the body. `once` is that tool with `Resolve(charge, once=True)`, `plain`
the same tool without it. The resolvers are trivial coroutines, so what is measured is the
machinery: minting the call's identity (round 1), writing the record and checking it reads
back equal (round 2), reading it back and settling it (round 3), and the state's bytes.

1. Per round, in process: each round runs through the tool's real `ToolFlow` (the flow
   every host shares) with a connection that carries the previous round's state and the
   answers, as a host hands them over; no transport, no sealing (MCPServer and fastmcp
   seal the state themselves, the low-level host with `StateSealer`: its token size is
   shown). Each `once` round is timed right next to the same round of `plain`,
   alternating which goes first; the figure is the median of the per-pair differences,
   with the spread of the per-round medians (`paired.py`'s method). The workload is
   checked: over the pairs of a round, `charge` ran exactly once per `once` call (in
   round 2, never in round 3) and once per `plain` call in each of rounds 2 and 3.
2. Per task, on a real Redis: `order` and `order_every_round` of tests/support/once_server.py
   (the same shape) run as background tasks on one in-process fastmcp server and Docket
   worker; Redis's `MONITOR` counts the commands of each task's three legs (the pretend
   outside API's own keys left out).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
)

import mcp_types as types
from paired import Paired
from pydantic import BaseModel
from workloads import WorkloadError, header, run

from mcp_resolve import Elicit, Resolve, ResolverGraph
from mcp_resolve.protocol.connection import Connection
from mcp_resolve.protocol.flow import ToolFlow
from mcp_resolve.state.call_records import written
from mcp_resolve.state.keys import KeyRing
from mcp_resolve.state.round_state import RoundState
from mcp_resolve.state.seal import Binding, StateSealer

CHARGED: list[int] = []


class Quantity(BaseModel):
    n: int


class Ok(BaseModel):
    ok: bool


class Receipt(BaseModel):
    id: str
    amount: int


async def quantity() -> Elicit[Quantity]:
    return Elicit("How many?", Quantity)


async def charge(amount: int, q: Annotated[Quantity, Resolve(quantity)]) -> Receipt:
    CHARGED.append(1)
    return Receipt(id="ch_3PmxQk2eZvKYlo2C1x0qJ5a1", amount=amount * q.n)


async def ship(receipt: Annotated[Receipt, Resolve(charge, once=True)]) -> Elicit[Ok]:
    return Elicit(f"Charged {receipt.amount}. Ship?", Ok)


async def ship_plain(receipt: Annotated[Receipt, Resolve(charge)]) -> Elicit[Ok]:
    return Elicit(f"Charged {receipt.amount}. Ship?", Ok)


async def pay(
    amount: int,
    receipt: Annotated[Receipt, Resolve(charge, once=True)],
    ok: Annotated[Ok, Resolve(ship)],
) -> str:
    return receipt.id


async def pay_plain(
    amount: int,
    receipt: Annotated[Receipt, Resolve(charge)],
    ok: Annotated[Ok, Resolve(ship_plain)],
) -> str:
    return receipt.id


class _Session:
    client_capabilities = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    can_send_request = False


SESSION = _Session()


async def _body(conn: Any, arguments: dict[str, Any], values: dict[str, Any]) -> Any:
    return values["receipt"].id


class Tool:
    """One tool's flow, and the connection of each of its three rounds, made before timing."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.flow = ToolFlow(ResolverGraph.from_function(fn))
        self.states: list[str | None] = [None]
        self.answers: list[dict[str, Any] | None] = [None]
        self.sizes: list[int] = []

    async def prepare(self) -> None:
        """Rounds 1 and 2 once, to have the states rounds 2 and 3 start from."""
        content = [{"n": 2}, {"ok": True}]
        for r in range(2):
            result = await self.flow.run(self.conn(r), {"amount": 5}, _body)
            assert isinstance(result, types.InputRequiredResult), result
            ((key, _),) = (result.input_requests or {}).items()
            state = result.request_state
            assert state is not None
            self.states.append(state)
            self.sizes.append(len(state.encode()))
            self.answers.append({key: types.ElicitResult(action="accept", content=content[r])})

    def conn(self, r: int) -> Connection:
        return Connection("2026-07-28", SESSION, 1, self.states[r], self.answers[r], None)

    async def round(self, r: int) -> Any:
        return await self.flow.run(self.conn(r), {"amount": 5}, _body)


async def paired_rounds(once: Tool, plain: Tool, r: int, pairs: int) -> list[float]:
    differences = []
    clock = time.perf_counter_ns
    CHARGED.clear()
    gc.collect()
    gc.disable()
    try:
        for i in range(pairs):
            first, second = (plain, once) if i % 2 else (once, plain)
            t0 = clock()
            await first.round(r)
            t1 = clock()
            await second.round(r)
            t2 = clock()
            mine, floor = (t2 - t1, t1 - t0) if i % 2 else (t1 - t0, t2 - t1)
            differences.append((mine - floor) / 1000)
    finally:
        gc.enable()
    expected = {0: 0, 1: 2 * pairs, 2: pairs}[r]  # round 2: both charge; round 3: plain only
    if len(CHARGED) != expected:
        raise WorkloadError(f"round {r + 1}: charge ran {len(CHARGED)} times, not {expected}")
    return differences


def _timed(fn: Callable[[], Any], calls: int = 20_000) -> float:
    """Mean µs per call of `fn` over `calls` calls, the collector off."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        return (time.perf_counter_ns() - start) / calls / 1000
    finally:
        gc.enable()


def sealed_size(state: str) -> int:
    """The token the low-level host sends (mcp_resolve's `StateSealer`, AES-256-GCM)."""
    sealer = StateSealer(KeyRing("k" * 32), audience="bench")
    return len(sealer.seal(state, binding=Binding.of("tools/call", "pay", {"amount": 5})))


async def per_round(quick: bool) -> None:
    once, plain = Tool(pay), Tool(pay_plain)
    await once.prepare()
    await plain.prepare()
    rounds, pairs = (3, 300) if quick else (9, 3000)
    for _ in range(200):  # warm up both, every round
        for r in range(3):
            await once.round(r)
            await plain.round(r)
    print("Per round, once beside plain (µs, median of per-pair differences):")
    for r in range(3):
        found = Paired()
        for _ in range(rounds):
            found.add_round(await paired_rounds(once, plain, r, pairs))
        print(f"  round {r + 1}: {found.median:+6.2f} µs   spread over rounds {found.spread()}")
    node = once.flow.graph.recorded[0]
    value = Receipt(id="ch_3PmxQk2eZvKYlo2C1x0qJ5a1", amount=10)
    text = written(node, value, "pay")
    write = statistics.median(_timed(lambda: written(node, value, "pay")) for _ in range(rounds))
    read = statistics.median(
        _timed(lambda: node.record.validator.validate_json(text)) for _ in range(rounds)
    )
    print(
        f"  of which the record itself: written and checked to read back equal {write:.2f} µs "
        f"(round 2), read back {read:.2f} µs (round 3)"
    )
    print("State sent after each round (bytes): plain JSON (what MCPServer and fastmcp seal),")
    print("and the low-level host's sealed token:")
    for r in range(2):
        o, p = once.states[r + 1], plain.states[r + 1]
        assert o is not None
        assert p is not None
        record = RoundState.decode(o)
        print(
            f"  after round {r + 1}: plain {len(p):4} / once {len(o):4} (+{len(o) - len(p)}); "
            f"sealed {sealed_size(p):4} / {sealed_size(o):4} (+{sealed_size(o) - sealed_size(p)})"
            f"; records {list(record.records) or 'none'}"
        )


async def per_leg(quick: bool) -> None:
    from support.redis_monitor import watching
    from support.redis_server import RedisServer

    server = RedisServer()
    server.start()
    os.environ["FASTMCP_DOCKET_URL"] = server.url
    os.environ["FASTMCP_DOCKET_NAME"] = "once-bench"
    os.environ["MCP_RESOLVE_STATE_KEYS"] = "once-bench-" + "b" * 32
    try:
        from fastmcp import Client
        from fastmcp_tasks.client import _send_update, call_tool_task
        from support import once_server

        async def by_hand(*args: Any) -> Any:
            raise AssertionError("answered with tasks/update")

        async def one_task(client: Any, tool: str, n: int) -> None:
            task = await call_tool_task(client, tool, {"item": f"bench{n}"})
            for content in ({"n": 2}, {"ok": True}):
                parked = await task.wait(state="input_required", timeout=30)
                ((key, _),) = (parked.input_requests or {}).items()
                answer = {key: {"action": "accept", "content": content}}
                await _send_update(client.session, task.task_id, answer)
            done = await task.wait(timeout=30)
            if done.status != "completed":
                raise WorkloadError(f"{tool}: task ended {done.status}")

        tasks = 3 if quick else 10
        found: dict[str, list[tuple[int, int, int]]] = {"order": [], "order_every_round": []}
        async with Client(once_server.app, elicitation_handler=by_hand) as client:
            await one_task(client, "order", -1)  # warm up: the worker, the scripts, the pool
            for n in range(tasks):
                tools = ("order", "order_every_round") if n % 2 else ("order_every_round", "order")
                for tool in tools:
                    async with watching(server.url) as seen:
                        await one_task(client, tool, n)
                    state = [c for _, c in seen if "request_state" in c]
                    ours = [c for _, c in seen if "mcp_resolve:" in c]
                    stored = max(len(c) for c in state if c.startswith("SET"))
                    found[tool].append((len(state), len(ours), stored))
        print(
            f"Redis commands of a three-leg task (median of {tasks}): on the state the legs "
            "pass on, on mcp_resolve's task records; the longest state SET (bytes, sealed)"
        )
        for tool, rows in found.items():
            state_n, ours_n, size = (statistics.median(col) for col in zip(*rows, strict=True))
            print(
                f"  {tool:18} state {state_n:4.0f}   records {ours_n:4.0f}   state SET {size:6.0f}"
            )
        if [r[:2] for r in found["order"]] != [r[:2] for r in found["order_every_round"]]:
            print("  (the command counts differ: see above)")
    finally:
        server.close()


async def main(quick: bool) -> None:
    print(header())
    await per_round(quick)
    await per_leg(quick)


if __name__ == "__main__":
    run(main, __doc__)
