"""Calls that carry nothing, on MCPServer, each seen as the client and the tool see it, and
which of mcp_resolve's functions ran it (tests/hosts/test_first_round.py).

Run as a script, in a process of its own: a tracer provider (which a tracing test sets for
the rest of its process) sends every call the flow's own way, and these calls are here to
show the other way, `protocol/first_round.py`, and each of its hand-overs to the flow.
Prints one JSON object: per scenario and generation, the result, what the resolvers and
the tool recorded, and the names of mcp_resolve's functions that ran (`bytecodes.count`).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.server import MCPServer
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_resolve import Elicit, Resolve
from mcp_resolve.errors import ResolveAgain
from mcp_resolve.mcp import resolved
from mcp_resolve.testing import override
from support.bytecodes import count

EVENTS: list[str] = []
RUNS: Counter[str] = Counter()


class Name(BaseModel):
    name: str


async def double(x: int) -> int:
    RUNS["double"] += 1
    return 2 * x


async def plain(x: int, v: Annotated[int, Resolve(double)]) -> int:
    return v + 1


def opened() -> Iterator[str]:
    EVENTS.append("open")
    try:
        yield "handle"
    except Exception as exc:
        EVENTS.append(f"close after {type(exc).__name__}")
        raise
    EVENTS.append("close")


async def cleanup(x: int, h: Annotated[str, Resolve(opened, blocking=False)]) -> str:
    EVENTS.append(f"body with {h}")
    return h


async def cleanup_failing(x: int, h: Annotated[str, Resolve(opened, blocking=False)]) -> str:
    EVENTS.append(f"body with {h}")
    raise ValueError("the body failed")


async def ask_name() -> Name | Elicit[Name]:
    RUNS["ask_name"] += 1
    return Elicit("Your name?", Name)


async def asks(
    x: int, name: Annotated[Name, Resolve(ask_name)], v: Annotated[int, Resolve(double)]
) -> str:
    return f"{name.name} {v}"


def sampling(text: str) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(messages=[message], max_tokens=8)
    )


async def body_asks(x: int, v: Annotated[int, Resolve(double)]) -> Any:
    RUNS["body_asks"] += 1
    if RUNS["body_asks"] == 1:  # its own question, once: the retry has it answered
        return types.InputRequiredResult(
            input_requests={"word": sampling("a word")}, request_state="body's own"
        )
    return f"answered {v}"


async def forget() -> None:
    EVENTS.append("forgot")


async def again(x: int, v: Annotated[int, Resolve(double)]) -> int:
    RUNS["again"] += 1
    if RUNS["again"] == 1:
        raise ResolveAgain("the service refused the value", forget=forget)
    return v


async def always_again(x: int, v: Annotated[int, Resolve(double)]) -> int:
    raise ResolveAgain("the service refused the value")


async def broken(x: int) -> int:
    raise RuntimeError("a secret in the message")


async def fails(x: int, v: Annotated[int, Resolve(broken)]) -> int:
    return v


async def overridden(x: int, v: Annotated[int, Resolve(double)]) -> int:
    return v


async def triple(x: int) -> int:
    return 3 * x


TOOLS = (plain, cleanup, cleanup_failing, asks, body_asks, again, always_again, fails, overridden)


async def answer_name(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    EVENTS.append("asked")
    return types.ElicitResult(action="accept", content={"name": "Ann"})


async def sample(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    EVENTS.append("sampled")
    content = types.TextContent(type="text", text="word")
    return types.CreateMessageResult(role="assistant", content=content, model="m")


async def observe(call: Callable[[], Awaitable[types.CallToolResult]]) -> dict[str, Any]:
    EVENTS.clear()
    RUNS.clear()
    seen: dict[str, Any] = {}

    async def calling() -> None:
        result = await call()
        texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
        seen.update(error=result.is_error, text=texts[0] if texts else None)

    _, _, functions = await count(calling)
    seen.update(events=list(EVENTS), runs=dict(RUNS), ran=sorted(functions))
    return seen


async def main() -> dict[str, Any]:
    server = MCPServer("first-round")
    for tool in TOOLS:
        server.tool()(resolved(tool))
    observed: dict[str, Any] = {}
    # The override last: leaving one makes each graph's next call run the flow's own round.
    for tool, mode in [(t, m) for t in TOOLS for m in ("2026-07-28", "legacy")]:
        if tool is body_asks and mode == "legacy":
            continue  # a body's own input requests are a 2026-07-28 round's
        async with Client(
            server, mode=mode, elicitation_callback=answer_name, sampling_callback=sample
        ) as client:
            for _ in range(3):  # warm: the plan learns on first calls
                await client.call_tool("plain", {"x": 1})
            # Python 3.12 and later instrument the code on its first trace, which then
            # reports nothing: trace one plain call first
            await count(lambda: client.call_tool("plain", {"x": 1}))

            def call(name: str = tool.__name__) -> Awaitable[types.CallToolResult]:
                return client.call_tool(name, {"x": 1})

            if tool is overridden:
                with override(double, triple):
                    observed[f"{tool.__name__} {mode}"] = await observe(call)
            else:
                observed[f"{tool.__name__} {mode}"] = await observe(call)
    return observed


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)))
