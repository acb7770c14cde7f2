"""The client side of benchmarks/held_waits.py: raw MCP calls that wait, one process of several.

`held_waits.py --clients N` starts N of these processes, each opening its share of the
waits on worker A and printing one line per call as its result arrives:

    done <order> <time.perf_counter()>

(CLOCK_MONOTONIC on Linux, one clock for every process of the machine, so the parent
subtracts the moment it sent the order's completion). A wrong result or a failed request
prints `error <why>` and ends the process with status 1.

    python benchmarks/held_clients.py URL MODE KIND TAG FIRST COUNT

KIND is what waits: `resolve` (mcp_resolve's `pay_by_card`: on 2026-07-28 round one
returns the URL question and the consenting retry is held; on legacy the call's stream
brings `elicitation/create`, the client consents and the call waits), `sdk` (the SDK's
`MCPServer` with a plain tool awaiting an event: the floor of an in-flight tool call),
`sdk-retry` (2026-07-28 only: the SDK's plain tool that asks first, whose retry, as big as
`resolve`'s, awaits the event: the floor of a held retry), `sdk-url` (legacy only: the
SDK's own tool asking for the same URL step mid-call, then awaiting the event once the
client consents: the floor of a legacy call waiting after its consent) or
`starlette` (a bare Starlette route awaiting the same event: the floor of a pending
request on an open connection). Calls share an HTTP client 32 at a time: one client's
connection pool is scanned on every request and every response closed (httpcore), so
one pool of ten thousand connections costs the client process more per call than the
server spends (what held this benchmark to about 16 waits opened a second).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import anyio
import httpx2

MODERN, LEGACY = "2026-07-28", "2025-11-25"
CAPS = {"elicitation": {"url": {}}}
INFO = {"name": "held-bench", "version": "1"}
PER_CLIENT = 32  # calls sharing one HTTP client (one connection pool)
TOOLS = {
    "resolve": "pay_by_card", "sdk": "plain_wait", "sdk-retry": "plain_retry",
    "sdk-url": "plain_url",
}  # fmt: skip
ASKS_FIRST = ("resolve", "sdk-retry")  # on 2026-07-28: a question, then the retry waits


class WorkloadError(RuntimeError):
    pass


def result_of(response: httpx2.Response, order: str) -> dict[str, Any]:
    """The JSON-RPC result, from a JSON body or an SSE stream (whichever the server chose)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "result" in message or "error" in message:
                    return dict(message.get("result") or {})
        raise WorkloadError(f"{order}: HTTP {response.status_code}, no result in the stream")
    try:
        return dict(response.json().get("result") or {})
    except ValueError:
        got = f"HTTP {response.status_code} {response.text[:200]!r}"
        raise WorkloadError(f"{order}: {got}") from None


Done = dict[str, float]


async def modern_call(
    http: httpx2.AsyncClient, url: str, order: str, done: Done, kind: str = "resolve"
) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": INFO,
        "io.modelcontextprotocol/clientCapabilities": CAPS,
    }
    tool = TOOLS[kind]
    headers = {
        "accept": "application/json, text/event-stream", "content-type": "application/json",
        "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool,
    }  # fmt: skip
    params: dict[str, Any] = {"name": tool, "arguments": {"order": order}, "_meta": meta}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    if kind in ASKS_FIRST:
        first = result_of(await http.post(url, json=body, headers=headers), order)
        (key,) = first.get("inputRequests") or {None: None}
        if key is None:
            raise WorkloadError(f"{order}: no question: {first!r}")
        params["inputResponses"] = {key: {"action": "accept"}}
        params["requestState"] = first["requestState"]
    result = result_of(await http.post(url, json=body, headers=headers), order)
    done[order] = time.perf_counter()
    check(order, result, kind)


async def legacy_call(
    http: httpx2.AsyncClient, url: str, order: str, done: Done, kind: str = "resolve"
) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": CAPS, "clientInfo": INFO},
    }  # fmt: skip
    response = await http.post(url, json=init, headers=headers)
    session = {**headers, "mcp-session-id": response.headers["mcp-session-id"],
               "mcp-protocol-version": LEGACY}  # fmt: skip
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=session)  # fmt: skip
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": TOOLS[kind], "arguments": {"order": order}}}  # fmt: skip
    async with http.stream("POST", url, json=call, headers=session) as stream:
        async for line in stream.aiter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("method") == "elicitation/create":
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept"}}
                await http.post(url, json=answer, headers=session)
            elif message.get("id") == 1:
                done[order] = time.perf_counter()
                check(order, message.get("result") or {}, kind)
                break
    await http.delete(url, headers=session)


async def starlette_call(
    http: httpx2.AsyncClient, url: str, order: str, done: Done, kind: str = "starlette"
) -> None:
    response = await http.get(url.removesuffix("/mcp") + f"/pending/{order}")
    done[order] = time.perf_counter()
    if response.text != f"released {order}":
        raise WorkloadError(f"{order}: HTTP {response.status_code} {response.text[:200]!r}")


def check(order: str, result: dict[str, Any], kind: str = "resolve") -> None:
    content = result.get("content") or [{}]
    want = f"paid: receipt for {order}" if kind == "resolve" else f"released {order}"
    if result.get("isError") or content[0].get("text") != want:
        raise WorkloadError(f"{order}: wrong result {result!r}")


def call_for(mode: str, kind: str) -> Any:
    if kind == "starlette":
        return starlette_call
    return modern_call if mode == MODERN else legacy_call


async def open_waits(url: str, mode: str, kind: str, orders: list[str]) -> None:
    """Open a wait for each of `orders`, 32 to an HTTP client; print each as it ends."""
    call = call_for(mode, kind)
    done: Done = {}

    async def one(http: httpx2.AsyncClient, order: str) -> None:
        try:
            await call(http, url, order, done, kind)
        except Exception as exc:  # the parent stops the run
            print(f"error {order}: {exc!r}"[:500], flush=True)
            raise SystemExit(1) from None
        print(f"done {order} {done[order]!r}", flush=True)

    limits = httpx2.Limits(max_connections=PER_CLIENT + 8, max_keepalive_connections=PER_CLIENT)
    timeout = httpx2.Timeout(3600.0)
    clients = [
        httpx2.AsyncClient(limits=limits, timeout=timeout)
        for _ in range(0, len(orders), PER_CLIENT)
    ]
    try:
        async with anyio.create_task_group() as group:
            for n, order in enumerate(orders):
                group.start_soon(one, clients[n // PER_CLIENT], order)
                if n % 50 == 49:  # a ramp, not one burst of connections
                    await anyio.sleep(0.05)
    finally:
        for client in clients:
            await client.aclose()


def main() -> None:
    url, mode, kind, tag, first, count = sys.argv[1:7]
    orders = [f"{tag}-{i}" for i in range(int(first), int(first) + int(count))]
    anyio.run(open_waits, url, mode, kind, orders)


if __name__ == "__main__":
    main()
