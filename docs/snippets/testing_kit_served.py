"""Testing with the kit: `call()` does what the server does before and around the resolvers.

An expense tool takes an amount as a `Decimal`; a client sends it as the string "42.50",
and the server validates it into a `Decimal` before any resolver runs: so does `call()`.
A summary resolver samples the client's LLM, with a fallback for a client that cannot.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_kit_served.py`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

import anyio
import pytest
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mcp_resolve import Resolve, Sample
from mcp_resolve.mcp import ResolvingMCPServer
from mcp_resolve.testing import call, context

pytestmark = pytest.mark.anyio

mcp = ResolvingMCPServer("Expenses")


def in_cents(amount: Decimal) -> int:
    return int(amount * 100)


def summary_of(note: str) -> Sample:
    message = {"role": "user", "content": {"type": "text", "text": f"Summarise: {note}"}}
    return Sample([message], max_tokens=32, fallback=None)  # None: the client cannot sample


def channel(ctx: Context) -> str:  # the SDK's Context, recognised without context_types
    return "HTTP" if ctx.headers else "stdio"


@mcp.tool()
async def submit(
    amount: Decimal,
    note: str,
    cents: Annotated[int, Resolve(in_cents)],
    summary: Annotated[Any, Resolve(summary_of)],
    via: Annotated[str, Resolve(channel)],
) -> str:
    """Submit an expense."""
    said = "no summary" if summary is None else summary.content.text
    return f"{cents} cents ({said}) over {via}"


LLM = {"role": "assistant", "content": {"type": "text", "text": "a taxi"}, "model": "m"}


async def test_the_amount_arrives_as_the_server_validates_it() -> None:
    done = await call(
        submit, {"amount": "42.50", "note": "taxi"}, context=context(), answers={summary_of: LLM}
    )
    assert done.result == "4250 cents (a taxi) over stdio"


async def test_an_amount_the_server_refuses_is_refused_the_same_way() -> None:
    with pytest.raises(ToolError, match="Error executing tool submit: 1 validation error"):
        await call(submit, {"amount": "a lot", "note": "taxi"}, context=context())


async def test_a_client_that_cannot_sample_gets_the_fallback() -> None:
    forms_only = context(client_capabilities={"elicitation": {"form": {}}})
    done = await call(submit, {"amount": "3", "note": "taxi"}, context=forms_only)
    assert done.result == "300 cents (no summary) over stdio"
    assert done.questions == []  # the client was never asked


async def main() -> dict[str, Any]:
    passed = []
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            await test()
            passed.append(name)
    return {"passed": passed}


if __name__ == "__main__":
    print(anyio.run(main))
