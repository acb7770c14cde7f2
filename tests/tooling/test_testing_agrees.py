"""`testing.call()` and a real server agree: each tool runs through `call()` and through the
SDK's `Client` against a real `ResolvingMCPServer` (or `ResolvedTools` on the low-level
`Server`), and both give the same result or the same error."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from support.hosts import MODES, only_text, protocol_error

from mcp_resolve import Resolve, Sample
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import ResolvingMCPServer, resolved
from mcp_resolve.testing import call, context

pytestmark = pytest.mark.anyio


def doubled(amount: Decimal) -> str:
    """Takes the tool's argument by name: the server hands it over validated, a Decimal."""
    return f"{type(amount).__name__} {amount * 2}"


async def expense(amount: Decimal, check: Annotated[str, Resolve(doubled)]) -> str:
    """Record an expense."""
    return f"{type(amount).__name__} {amount}; {check}"


def tenant(ctx: Context) -> str:
    return ctx.protocol_version or "none"


async def whose(owner: Annotated[str, Resolve(tenant)]) -> str:
    """Say which protocol the call came on."""
    return f"on {owner}"


def gist(text: str) -> Sample:
    message = {"role": "user", "content": {"type": "text", "text": f"Summarise {text}"}}
    return Sample([message], max_tokens=16, fallback=None)


def strict_gist(text: str) -> Sample:
    message = {"role": "user", "content": {"type": "text", "text": f"Summarise {text}"}}
    return Sample([message], max_tokens=16)


async def summary(text: str, said: Annotated[Any, Resolve(gist)]) -> str:
    """Summarise, or say there is no summary."""
    return "no summary" if said is None else "summarised"


async def strict_summary(text: str, said: Annotated[Any, Resolve(strict_gist)]) -> str:
    """Summarise, or refuse."""
    return "summarised"


def server() -> ResolvingMCPServer:
    app = ResolvingMCPServer("agree")
    for fn in (expense, whose, summary, strict_summary):
        app.add_tool(fn)
    return app


async def served(
    tool: str, arguments: dict[str, Any], mode: str, **callbacks: Any
) -> tuple[bool, str]:
    """(is_error, text) from the real server; a protocol error as `-code: message`."""
    try:
        with anyio.fail_after(20):
            async with Client(server(), mode=mode, **callbacks) as client:
                result = await client.call_tool(tool, arguments)
    except BaseException as exc:  # the client raises a refusal inside an exception group
        error = protocol_error(exc)
        return True, f"{error.error.code}: {error.error.message}"
    return only_text(result)


async def by_kit(tool: Any, arguments: dict[str, Any], **options: Any) -> tuple[bool, str]:
    """(is_error, text) from `call()`, errors read as the client reads them."""
    try:
        with anyio.fail_after(20):
            done = await call(tool, arguments, **options)
    except ToolError as exc:
        return True, str(exc)
    except MCPError as exc:
        return True, f"{exc.error.code}: {exc.error.message}"
    return False, str(done.result)


@pytest.mark.parametrize("mode", MODES)
async def test_a_decimal_argument_reaches_resolver_and_body_as_a_decimal_in_both(mode: str) -> None:
    real = await served("expense", {"amount": "42.50"}, mode)
    kit = await by_kit(expense, {"amount": "42.50"})
    assert kit == real == (False, "Decimal 42.50; Decimal 85.00")


async def test_arguments_that_do_not_fit_get_the_servers_own_error() -> None:
    real = await served("expense", {"amount": "lots"}, "legacy")
    kit = await by_kit(expense, {"amount": "lots"})
    assert real[0] is True
    assert kit == real
    assert kit[1].startswith("Error executing tool expense: 1 validation error")


async def test_a_resolved_wrapper_is_validated_like_the_function_it_wraps() -> None:
    kit = await by_kit(resolved(expense), {"amount": 3})
    assert kit == (False, "Decimal 3; Decimal 6")


async def test_a_missing_argument_is_refused_as_the_server_refuses_it() -> None:
    real = await served("expense", {}, "legacy")
    kit = await by_kit(expense, {})
    assert real[0] is True
    assert kit == real


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdks_context_is_recognised_in_a_plain_function_as_on_the_server(
    mode: str,
) -> None:
    version = "2026-07-28" if mode == "2026-07-28" else "2025-11-25"
    real = await served("whose", {}, mode)
    kit = await by_kit(whose, {}, context=context(protocol_version=version))
    assert kit == real
    assert kit[1] == f"on {version}"


FORMS_ONLY = {"elicitation": {"form": {}}}


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_sample_gets_the_fallback_in_both(mode: str) -> None:
    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        raise AssertionError("nothing is asked")

    real = await served("summary", {"text": "tides"}, mode, elicitation_callback=elicit)
    kit = await by_kit(summary, {"text": "tides"}, context=context(client_capabilities=FORMS_ONLY))
    assert kit == real == (False, "no summary")


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_sample_is_refused_with_32021_in_both(mode: str) -> None:
    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        raise AssertionError("nothing is asked")

    real = await served("strict_summary", {"text": "tides"}, mode, elicitation_callback=elicit)
    kit = await by_kit(
        strict_summary, {"text": "tides"}, context=context(client_capabilities=FORMS_ONLY)
    )
    assert kit == real
    assert kit[1].startswith("-32021: Client did not declare the sampling capability")


async def test_in_process_mode_applies_the_same_gate() -> None:
    forms_only = context(client_capabilities=FORMS_ONLY)
    done = await call(summary, {"text": "tides"}, context=forms_only, mode="in_process")
    assert done.result == "no summary"
    assert done.questions == []  # the client never saw the question
    with pytest.raises(MCPError) as refused:
        await call(strict_summary, {"text": "tides"}, context=forms_only, mode="in_process")
    assert refused.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY


async def test_the_default_context_declares_what_call_answers() -> None:
    reply = {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m"}
    done = await call(
        strict_summary, {"text": "tides"}, context=context(), answers={strict_gist: reply}
    )
    assert done.result == "summarised"


async def test_the_low_level_servers_arguments_are_validated_with_its_own_model() -> None:
    tools = ResolvedTools(keys=KeyRing("k" * 32), audience="agree")
    tools.add(expense)
    app = Server("agree", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    async with Client(app, mode="legacy") as client:
        good = await client.call_tool("expense", {"amount": "42.50"})
        bad = await client.call_tool("expense", {"amount": "lots"})
    lowlevel = (ServerRequestContext,)
    kit_good = await by_kit(expense, {"amount": "42.50"}, context_types=lowlevel)
    kit_bad = await by_kit(expense, {"amount": "lots"}, context_types=lowlevel)
    assert kit_good == (good.is_error, good.content[0].text)  # type: ignore[union-attr]
    assert kit_bad == (bad.is_error, bad.content[0].text)  # type: ignore[union-attr]
    assert kit_bad == (True, "Invalid arguments for tool 'expense' (fields: amount)")
