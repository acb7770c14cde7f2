"""The suite's other server fixtures on fastmcp, for tests/conformance/tasks_server.py.

The `--requirements 2026-07-28` run calls the tools, prompts and resources of the plain
server scenarios too. tests/conformance/server.py serves them on the SDK's MCPServer; this
module serves the same fixtures, under the same names, on fastmcp, so that run checks the
fastmcp host as well. Every question a fixture asks (the `input-required-result-*`
scenarios, `server-stateless`) comes from a resolver under `mcp_resolve.fastmcp.resolved`,
with the keys the scenarios name, the prompt's included (`@resolved` under `app.prompt()`).
What the scenarios only read back (images, audio, embedded resources, logs, progress,
prompts, resources, completion) is fastmcp's own API. `test_simple_text`,
`test_error_handling`, `test_logging_tool` and `test_streaming_elicitation` are here
although their scenarios passed without them: a call to a missing tool gets an error
result, which those checks also accept.

`serve(app)` registers them all on a `FastMCP`; their resolvers and data are shared.py's,
the same as server.py's.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any

import anyio
import mcp_types as types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.prompts import Message
from fastmcp.tools import Tool
from pydantic import Field
from shared import (
    JSON_SCHEMA,
    PNG,
    WAV,
    Color,
    Name,
    Ok,
    PromptContext,
    ask_capital,
    ask_confirmation,
    ask_greeting,
    ask_name,
    ask_prompt_context,
    ask_roots,
    ask_step1,
    ask_step2,
    ask_what_the_client_can_answer,
    embedded,
    said,
)

from mcp_resolve import Resolve
from mcp_resolve.fastmcp import resolved


def image() -> types.ImageContent:
    return types.ImageContent(type="image", data=PNG, mime_type="image/png")


# -- content ------------------------------------------------------------------------------


def test_simple_text() -> str:
    """Returns one text block."""
    return "This is a simple text response for testing."


def test_image_content() -> list[types.ImageContent]:
    """Returns one image block."""
    return [image()]


def test_audio_content() -> list[types.AudioContent]:
    """Returns one audio block."""
    return [types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


def test_embedded_resource() -> list[types.EmbeddedResource]:
    """Returns one embedded resource."""
    return [embedded("test://embedded-resource", "This is an embedded resource content.")]


def test_multiple_content_types() -> list[types.ContentBlock]:
    """Returns text, an image and an embedded resource."""
    return [
        types.TextContent(type="text", text="Multiple content types test:"),
        image(),
        embedded(
            "test://mixed-content-resource", '{"test": "data", "value": 123}', "application/json"
        ),
    ]


async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress three times."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        await anyio.sleep(0.05)
    return "Progress reported"


async def test_logging_tool(ctx: Context) -> str:
    """Logs one message, which a 2026-07-28 client only sees when it asked for a level."""
    await ctx.info("test_logging_tool ran")
    return "logged"


def test_error_handling() -> str:
    """Always fails, as a tool error."""
    raise ToolError("This tool intentionally returns an error for testing")


def test_custom_headers(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    priority: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Priority"})],
    query: str,
    verbose: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Verbose"})] = False,  # noqa: PT028
) -> str:
    """Mirrors some of its arguments into `Mcp-Param-*` HTTP headers."""
    return f"region={region} priority={priority} query={query} verbose={verbose}"


def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, str] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features"""
    return "ok"


# -- questions from resolvers -------------------------------------------------------------


@resolved
async def test_input_required_result_elicitation(
    user: Annotated[Name, Resolve(ask_name, key="user_name")],
) -> str:
    """Greets the user by the name it asks for."""
    return f"Hello, {user.name}!"


@resolved
async def test_streaming_elicitation(
    user: Annotated[Name, Resolve(ask_name, key="user_name")],
) -> str:
    """Asks one question; on 2026-07-28 the stream carries only its input-required result."""
    return f"Hello, {user.name}!"


@resolved
async def test_input_required_result_request_state(
    confirmation: Annotated[Ok, Resolve(ask_confirmation, key="confirm")],
) -> str:
    """Asks for a confirmation; the answer is pinned in the sealed request state."""
    return f"state-ok: confirmed={confirmation.ok}"


@resolved
async def test_input_required_result_tampered_state(
    confirmation: Annotated[Ok, Resolve(ask_confirmation, key="confirm")],
) -> str:
    """Asks for a confirmation; a request state changed by the client is refused."""
    return f"state-ok: confirmed={confirmation.ok}"


@resolved
async def test_input_required_result_multi_round(
    step1: Annotated[Name, Resolve(ask_step1, key="step1")],
    step2: Annotated[Color, Resolve(ask_step2, key="step2")],
) -> str:
    """Asks a name, then (knowing it) a colour: two rounds."""
    return f"{step1.name} likes {step2.color}."


@resolved
async def test_input_required_result_sampling(
    completion: Annotated[types.CreateMessageResult, Resolve(ask_capital, key="capital_question")],
) -> str:
    """Asks the client's LLM a question."""
    return f"Model said: {said(completion)}"


@resolved
async def test_input_required_result_list_roots(
    roots: Annotated[types.ListRootsResult, Resolve(ask_roots, key="client_roots")],
) -> str:
    """Reports the client's roots."""
    uris = ", ".join(str(root.uri) for root in roots.roots)
    return f"Client exposed {len(roots.roots)} root(s): {uris}"


@resolved
async def test_input_required_result_multiple_inputs(
    user: Annotated[Name, Resolve(ask_name, key="user_name")],
    greeting: Annotated[types.CreateMessageResult, Resolve(ask_greeting, key="greeting")],
    roots: Annotated[types.ListRootsResult, Resolve(ask_roots, key="client_roots")],
) -> str:
    """Asks a form, the client's LLM and its roots, all in one round."""
    return f"{said(greeting)} {user.name} ({len(roots.roots)} root(s))"


@resolved
async def test_input_required_result_capabilities(
    answer: Annotated[Any, Resolve(ask_what_the_client_can_answer, key="ask")],
) -> str:
    """Asks only what the client declared it can answer."""
    if isinstance(answer, types.CreateMessageResult):
        return f"Model said: {said(answer)}"
    return f"Answer: {answer}"


@resolved
async def test_missing_capability(
    completion: Annotated[types.CreateMessageResult, Resolve(ask_capital)],
) -> str:
    """Needs the client's LLM; a client that declared no sampling gets -32021."""
    return said(completion)


QUESTIONS = (
    test_input_required_result_elicitation,
    test_streaming_elicitation,
    test_input_required_result_request_state,
    test_input_required_result_tampered_state,
    test_input_required_result_multi_round,
    test_input_required_result_sampling,
    test_input_required_result_list_roots,
    test_input_required_result_multiple_inputs,
    test_input_required_result_capabilities,
    test_missing_capability,
)


# -- resources ----------------------------------------------------------------------------


def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


def static_binary() -> bytes:
    """A static binary resource."""
    return base64.b64decode(PNG)


def template_data(id: str) -> str:
    """A resource template with one variable."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts ------------------------------------------------------------------------------


def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
    """A prompt that embeds a resource."""
    return [
        Message(embedded(resourceUri, "Embedded resource content for testing.")),
        Message("Please process the embedded resource above."),
    ]


def test_prompt_with_image() -> list[Message]:
    """A prompt that carries an image."""
    return [Message(image()), Message("Please analyze the image above.")]


@resolved
async def test_input_required_result_prompt(
    context: Annotated[PromptContext, Resolve(ask_prompt_context, key="user_context")],
) -> str:
    """A prompt whose text needs an answer from the user."""
    return f"Write with this context: {context.context}"


def complete(ref: Any, argument: Any, context: Any) -> types.Completion:
    """Offers no suggestions: the scenario checks that completion is served."""
    return types.Completion(values=[], total=0, has_more=False)


def serve(app: FastMCP[Any]) -> None:
    """Register every fixture on `app`."""
    content = (
        test_simple_text,
        test_image_content,
        test_audio_content,
        test_embedded_resource,
        test_multiple_content_types,
        test_tool_with_progress,
        test_logging_tool,
        test_error_handling,
        test_custom_headers,
    )
    for fn in (*content, *QUESTIONS):  # content only, as MCPServer's structured_output=False
        app.tool(fn, output_schema=None)
    tool = Tool.from_function(json_schema_2020_12_tool, output_schema=None)
    app.add_tool(tool.model_copy(update={"parameters": JSON_SCHEMA}))
    app.resource("test://static-text", mime_type="text/plain")(static_text)
    app.resource("test://static-binary", mime_type="image/png")(static_binary)
    app.resource("test://template/{id}/data", mime_type="application/json")(template_data)
    for prompt in (
        test_simple_prompt,
        test_prompt_with_arguments,
        test_prompt_with_embedded_resource,
        test_prompt_with_image,
        test_input_required_result_prompt,
    ):
        app.prompt(prompt)
    app.completion(complete)
