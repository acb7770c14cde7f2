"""The worker of benchmarks/held_waits.py: tests/support/held_app.py with its floors beside it.

benchmarks/hangup_app.py (held_app's `pay_by_card` waiting on a URL step, `GET /cpu`), plus
what a held mcp_resolve call is compared with, in the same process:

- `plain_wait(order)`: a plain tool of the SDK's `MCPServer` (no mcp_resolve) awaiting an
  event, the floor of an in-flight tool call on either generation;
- `plain_retry(order)`: the same on 2026-07-28, as a retry the SDK itself carries: its first
  round returns an `InputRequiredResult` of the same shape as `pay_by_card`'s (one URL
  question under the same key, a request state of the same length, sealed by the SDK), and
  the retry that echoes it with the same `inputResponses` awaits the event. The fair floor
  of a held mcp_resolve retry: the SDK parses and keeps that bigger body for the whole call
  (the plain call's body has neither field), whoever serves the tool;
- `plain_url(order)`: on legacy, the SDK's own tool asking mid-call, as `pay_by_card` does:
  `ctx.elicit_url` with the same message, page and elicitation id, and once the client
  consents it awaits the event. The fair floor of a legacy mcp_resolve call waiting after
  the consent: the SDK's machinery for a request sent mid-call (its request, the client's
  answer, the session's bookkeeping) is in both;
- `GET /pending/<order>`: a bare Starlette request awaiting the same event on its open
  connection, the floor of any pending HTTP request;
- `POST /release`: sets the event, so that every such call and request returns
  `released <order>`; with `HELD_FLOOR_ONE_BY_ONE=1` (`--floor-one-by-one`) each call
  waits on an event of its own (which costs memory: read latency from such a run, not
  memory), and `POST /release/<order>` releases that one;
- `GET /stats`: held_app's figures, with `waiting` counting these as well;
- `POST /collect`: a full collection now (what the held calls' opening left due), and how
  long it took;
- with `HELD_TRACEMALLOC=1`, `POST /tracemalloc/mark` keeps a snapshot and `GET
  /tracemalloc/diff` returns what was allocated since, by file (the largest first).
"""

from __future__ import annotations

import gc
import json
import os
import time
import tracemalloc

if os.environ.get("HELD_TRACEMALLOC") == "1":
    tracemalloc.start(1)

import anyio
from hangup_app import app as held
from held_app import mcp, stats
from mcp.server.mcpserver import Context
from mcp_types import ElicitRequest, ElicitRequestURLParams, InputRequiredResult
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mcp_resolve.protocol import completion

_released: anyio.Event | None = None
_pending = 0
_mark: list[tracemalloc.Snapshot] = []
_gc = {"seconds": 0.0, "longest_ms": 0.0, "full": 0, "began": 0.0}


def _timed(phase: str, info: dict[str, int]) -> None:
    """The garbage collector's pauses: a full collection walks every object the held
    calls keep, so its time grows with them."""
    now = time.perf_counter()
    if phase == "start":
        _gc["began"] = now
        return
    spent = now - _gc["began"]
    _gc["seconds"] += spent
    _gc["longest_ms"] = max(_gc["longest_ms"], spent * 1000)
    _gc["full"] += info.get("generation") == 2


gc.callbacks.append(_timed)
if os.environ.get("HELD_GC_THRESHOLD"):  # `--gc-threshold`: the operator's tuning
    gc.set_threshold(*(int(n) for n in os.environ["HELD_GC_THRESHOLD"].split(",")))


_ONE_BY_ONE = os.environ.get("HELD_FLOOR_ONE_BY_ONE") == "1"
_each: dict[str, anyio.Event] = {}  # `--floor-one-by-one` only: an event per call costs memory


async def _wait(order: str) -> None:
    global _released, _pending
    if _released is None:
        _released = anyio.Event()
    _pending += 1
    try:
        if _ONE_BY_ONE:
            event = _each[order] = anyio.Event()
            await event.wait()
        else:
            await _released.wait()
    finally:
        _pending -= 1


async def plain_wait(order: str) -> str:
    """Wait until the benchmark releases every waiting call (no mcp_resolve here)."""
    await _wait(order)
    return f"released {order}"


mcp.add_tool(plain_wait)

# What `pay_by_card`'s first round returns, in size and shape: its question's key, and its
# request state (mcp_resolve's round state, 85 characters before the SDK seals it).
RETRY_KEY = "support.held_app:card_payment"
RETRY_STATE = json.dumps(
    {"a": {}, "n": 1, "q": {RETRY_KEY: "0" * 24}, "v": 1}, separators=(",", ":")
)


def _card_page(order: str) -> ElicitRequestURLParams:
    """`pay_by_card`'s URL question for `order`: its message, page and elicitation id."""
    return ElicitRequestURLParams(
        message=f"Pay for order {order}", url=f"https://pay.example.com/{order}",
        elicitation_id=f"card-{order}",
    )  # fmt: skip


async def plain_retry(order: str, ctx: Context) -> str | InputRequiredResult:
    """Ask for a URL step, then wait on the retry until the benchmark releases every call."""
    if ctx.request_state is None:
        question = ElicitRequest(params=_card_page(order))
        return InputRequiredResult(input_requests={RETRY_KEY: question}, request_state=RETRY_STATE)
    await _wait(order)
    return f"released {order}"


mcp.add_tool(plain_retry)


async def plain_url(order: str, ctx: Context) -> str:
    """Ask for a URL step mid-call (legacy), then wait until the benchmark releases it."""
    page = _card_page(order)
    consent = await ctx.elicit_url(page.message, page.url, page.elicitation_id)
    if consent.action != "accept":
        return f"{consent.action} {order}"
    await _wait(order)
    return f"released {order}"


mcp.add_tool(plain_url)


async def pending(request: Request) -> PlainTextResponse:
    await _wait(request.path_params["order"])
    return PlainTextResponse(f"released {request.path_params['order']}")


bare = Starlette(routes=[Route("/pending/{order}", pending)])


async def _send(send: Send, body: bytes, kind: bytes = b"application/json") -> None:
    headers = [(b"content-type", kind)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _by_file() -> list[tuple[str, int, int]]:
    now = tracemalloc.take_snapshot()
    diff = now.compare_to(_mark[-1], "lineno")  # mcp_resolve's lines, the rest by file
    return [
        (_where(stat.traceback[0]), stat.size_diff, stat.count_diff)
        for stat in diff
        if stat.size_diff
    ][:4000]


def _where(frame: tracemalloc.Frame) -> str:
    name = str(frame.filename)
    return f"{name}:{frame.lineno}" if "/mcp_resolve/" in name else name


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    global _released
    path = scope.get("path", "") if scope["type"] == "http" else ""
    if path.startswith("/pending/"):
        await bare(scope, receive, send)
    elif path == "/release":
        if _released is not None:
            _released.set()
            _released = None
        for event in _each.values():
            event.set()
        _each.clear()
        await _send(send, b"{}")
    elif path.startswith("/release/"):  # one call, as a completion wakes one held call
        event = _each.pop(path.removeprefix("/release/"), None)
        if event is not None:
            event.set()
        await _send(send, b"{}")
    elif path == "/stats":
        response = await stats(None)  # type: ignore[arg-type]
        figures = json.loads(bytes(response.body))
        held_here = sum(completion.waiting(eid) for eid in completion.waiting_ids())
        figures["waiting"] = held_here + _pending
        figures["gc"] = {k: v for k, v in _gc.items() if k != "began"}
        figures["pid"] = os.getpid()
        if scope.get("query_string") == b"objects":  # walks every object: not in a poll
            figures["gc_objects"] = len(gc.get_objects())
        await _send(send, json.dumps(figures).encode())
    elif path == "/collect":  # the full collection the opening left due, run now
        began = time.perf_counter()
        gc.collect()
        await _send(send, json.dumps({"seconds": time.perf_counter() - began}).encode())
    elif path == "/objects":  # what the collector tracks, by type
        counts: dict[str, int] = {}
        for thing in gc.get_objects():
            name = type(thing).__qualname__
            counts[name] = counts.get(name, 0) + 1
        await _send(send, json.dumps(counts).encode())
    elif path == "/tracemalloc/mark":
        _mark[:] = [tracemalloc.take_snapshot()]
        await _send(send, b"{}")
    elif path == "/tracemalloc/diff":
        await _send(send, json.dumps(_by_file()).encode())
    else:
        await held(scope, receive, send)
