"""The server the official MCP conformance suite runs against (`make conformance`).

It serves every tool, prompt and resource the suite's server scenarios call, under the
names the scenarios use. Every question it asks the client comes from a resolver: the
tools ask nothing themselves, so a scenario that passes shows mcp_resolve's questions on
the wire, on legacy connections (mid-call requests) and on 2026-07-28 connections
(input-required results), not the SDK's. Content the scenarios only read back (images,
audio, embedded resources, logs, progress) is built with the SDK's types directly.

Run it alone with `python tests/conformance/server.py --port 3001`; the suite then talks
to `http://127.0.0.1:3001/mcp`.
"""

from __future__ import annotations

import argparse
import base64
import json
from typing import Annotated, Any, Literal

import anyio
from mcp import types
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.mcpserver.tools import Tool
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from pydantic import BaseModel, Field
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
    sample,
)

from mcp_resolve import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
    Sample,
)
from mcp_resolve.mcp import ResolvingMCPServer


def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, str] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features"""
    return "ok"


# A signature cannot say `$schema`, `$anchor`, `if`/`then`/`else`: this tool's input schema
# is given whole, as the json-schema-2020-12 scenario lists it.
JSON_SCHEMA_TOOL = Tool.from_function(json_schema_2020_12_tool, structured_output=False)
JSON_SCHEMA_TOOL.parameters = JSON_SCHEMA

server = ResolvingMCPServer("mcp-resolve-conformance", version="1.0.0", tools=[JSON_SCHEMA_TOOL])


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def outcome(result: ElicitationResult[Any]) -> str:
    """`action=..., content=...` as the elicitation scenarios read it back."""
    if isinstance(result, AcceptedElicitation):
        return f"action=accept, content={result.data.model_dump_json()}"
    return f"action={result.action}, content={{}}"


# -- content ------------------------------------------------------------------------------


@server.tool(structured_output=False)
def test_simple_text() -> str:
    """Returns one text block."""
    return "This is a simple text response for testing."


@server.tool(structured_output=False)
def test_image_content() -> list[types.ImageContent]:
    """Returns one image block."""
    return [types.ImageContent(type="image", data=PNG, mime_type="image/png")]


@server.tool(structured_output=False)
def test_audio_content() -> list[types.AudioContent]:
    """Returns one audio block."""
    return [types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


@server.tool(structured_output=False)
def test_embedded_resource() -> list[types.EmbeddedResource]:
    """Returns one embedded resource."""
    return [embedded("test://embedded-resource", "This is an embedded resource content.")]


@server.tool(structured_output=False)
def test_multiple_content_types() -> list[types.ContentBlock]:
    """Returns text, an image and an embedded resource."""
    return [
        text("Multiple content types test:"),
        types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        embedded(
            "test://mixed-content-resource", '{"test": "data", "value": 123}', "application/json"
        ),
    ]


@server.tool(structured_output=False)
async def test_tool_with_logging(ctx: Context) -> str:
    """Logs three messages while it runs."""
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(message)
        await anyio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool(structured_output=False)
async def test_logging_tool(ctx: Context) -> str:
    """Logs one message, which a 2026-07-28 client only sees when it asked for a level."""
    await ctx.info("test_logging_tool ran")
    return "logged"


@server.tool(structured_output=False)
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress three times."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        await anyio.sleep(0.05)
    meta = ctx.request_context.meta
    token = meta.get("progress_token") if isinstance(meta, dict) else None
    return str(token if token is not None else getattr(meta, "progress_token", 0))


@server.tool(structured_output=False)
def test_error_handling() -> str:
    """Always fails, as a tool error."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@server.tool(structured_output=False)
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call, so the client resumes it from the event store."""
    await ctx.info("Before disconnect")
    await ctx.close_sse_stream()
    await anyio.sleep(0.2)
    await ctx.info("After reconnect")
    return "Reconnection test completed"


@server.tool(structured_output=False)
async def test_trigger_tool_change(ctx: Context) -> str:
    """Announces a changed tool list to `subscriptions/listen` streams."""
    await ctx.notify_tools_changed()
    return "tools changed"


@server.tool(structured_output=False)
async def test_trigger_prompt_change(ctx: Context) -> str:
    """Announces a changed prompt list to `subscriptions/listen` streams."""
    await ctx.notify_prompts_changed()
    return "prompts changed"


@server.tool(structured_output=False)
def test_custom_headers(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    priority: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Priority"})],
    query: str,
    verbose: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Verbose"})] = False,  # noqa: PT028
) -> str:
    """Mirrors some of its arguments into `Mcp-Param-*` HTTP headers."""
    return f"region={region} priority={priority} query={query} verbose={verbose}"


# -- questions from resolvers -------------------------------------------------------------


class UserDetails(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


def ask_user(message: str) -> Elicit[UserDetails]:
    return Elicit(message, UserDetails)


@server.tool(structured_output=False)
async def test_elicitation(
    message: str, answer: Annotated[ElicitationResult[UserDetails], Resolve(ask_user)]
) -> str:
    """Asks the user the message it is given."""
    return f"User response: {outcome(answer)}"


class Profile(BaseModel):
    name: str = Field("John Doe", description="User name")
    age: int = Field(30, description="User age")
    score: float = Field(95.5, description="User score")
    status: Literal["active", "inactive", "pending"] = Field("active", description="User status")
    verified: bool = Field(True, description="Verification status")


def ask_profile() -> Elicit[Profile]:
    return Elicit("Please provide user information", Profile)


@server.tool(structured_output=False)
async def test_elicitation_sep1034_defaults(
    answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)],
) -> str:
    """Asks a form whose every field has a default."""
    return f"Elicitation completed: {outcome(answer)}"


class Choices(BaseModel):
    """The five kinds of choice field the spec knows; answers are checked against the values."""

    untitledSingle: Literal["option1", "option2", "option3"] = Field(description="Simple enum")
    titledSingle: Literal["value1", "value2", "value3"] = Field(
        description="Enum with titled options",
        json_schema_extra={
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]
        },
    )
    legacyEnum: Literal["opt1", "opt2", "opt3"] = Field(
        description="Legacy titled enum",
        json_schema_extra={"enumNames": ["Option One", "Option Two", "Option Three"]},
    )
    untitledMulti: list[Literal["option1", "option2", "option3"]] = Field(
        description="Multi-select"
    )
    titledMulti: list[Literal["value1", "value2", "value3"]] = Field(
        description="Multi-select with titled options",
        json_schema_extra={
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            }
        },
    )


def ask_choices() -> Elicit[Choices]:
    return Elicit("Please select values using different enum schema types", Choices)


@server.tool(structured_output=False)
async def test_elicitation_sep1330_enums(
    answer: Annotated[ElicitationResult[Choices], Resolve(ask_choices)],
) -> str:
    """Asks a form with every kind of choice field the spec knows."""
    return f"Elicitation completed: {outcome(answer)}"


@server.tool(structured_output=False)
async def test_input_required_result_elicitation(
    user: Annotated[Name, Resolve(ask_name, key="user_name")],
) -> str:
    """Greets the user by the name it asks for."""
    return f"Hello, {user.name}!"


@server.tool(structured_output=False)
async def test_streaming_elicitation(
    user: Annotated[Name, Resolve(ask_name, key="user_name")],
) -> str:
    """Asks one question; on 2026-07-28 the stream carries only its input-required result."""
    return f"Hello, {user.name}!"


@server.tool(structured_output=False)
async def test_input_required_result_request_state(
    confirmation: Annotated[Ok, Resolve(ask_confirmation, key="confirm")],
) -> str:
    """Asks for a confirmation; the answer is pinned in the sealed request state."""
    return f"state-ok: confirmed={confirmation.ok}"


@server.tool(structured_output=False)
async def test_input_required_result_tampered_state(
    confirmation: Annotated[Ok, Resolve(ask_confirmation, key="confirm")],
) -> str:
    """Asks for a confirmation; a request state changed by the client is refused."""
    return f"state-ok: confirmed={confirmation.ok}"


@server.tool(structured_output=False)
async def test_input_required_result_multi_round(
    step1: Annotated[Name, Resolve(ask_step1, key="step1")],
    step2: Annotated[Color, Resolve(ask_step2, key="step2")],
) -> str:
    """Asks a name, then (knowing it) a colour: two rounds."""
    return f"{step1.name} likes {step2.color}."


def ask_model(prompt: str) -> Sample:
    return sample(prompt, 100)


@server.tool(structured_output=False)
async def test_sampling(
    prompt: str, completion: Annotated[types.CreateMessageResult, Resolve(ask_model)]
) -> str:
    """Has the client's LLM answer the prompt it is given."""
    return f"LLM response: {said(completion)}"


@server.tool(structured_output=False)
async def test_input_required_result_sampling(
    completion: Annotated[types.CreateMessageResult, Resolve(ask_capital, key="capital_question")],
) -> str:
    """Asks the client's LLM a question."""
    return f"Model said: {said(completion)}"


@server.tool(structured_output=False)
async def test_input_required_result_list_roots(
    roots: Annotated[types.ListRootsResult, Resolve(ask_roots, key="client_roots")],
) -> str:
    """Reports the client's roots."""
    uris = ", ".join(str(root.uri) for root in roots.roots)
    return f"Client exposed {len(roots.roots)} root(s): {uris}"


@server.tool(structured_output=False)
async def test_input_required_result_multiple_inputs(
    user: Annotated[Name, Resolve(ask_name, key="user_name")],
    greeting: Annotated[types.CreateMessageResult, Resolve(ask_greeting, key="greeting")],
    roots: Annotated[types.ListRootsResult, Resolve(ask_roots, key="client_roots")],
) -> str:
    """Asks a form, the client's LLM and its roots, all in one round."""
    return f"{said(greeting)} {user.name} ({len(roots.roots)} root(s))"


@server.tool(structured_output=False)
async def test_input_required_result_capabilities(
    answer: Annotated[Any, Resolve(ask_what_the_client_can_answer, key="ask")],
) -> str:
    """Asks only what the client declared it can answer."""
    if isinstance(answer, types.CreateMessageResult):
        return f"Model said: {said(answer)}"
    return f"Answer: {answer}"


@server.tool(structured_output=False)
async def test_missing_capability(
    completion: Annotated[types.CreateMessageResult, Resolve(ask_capital)],
) -> str:
    """Needs the client's LLM; a client that declared no sampling gets -32021."""
    return said(completion)


@server.prompt()
async def test_input_required_result_prompt(
    context: Annotated[PromptContext, Resolve(ask_prompt_context, key="user_context")],
) -> str:
    """A prompt whose text needs an answer from the user."""
    return f"Write with this context: {context.context}"


# -- resources ----------------------------------------------------------------------------


@server.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource."""
    return base64.b64decode(PNG)


@server.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template with one variable."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("test://watched-resource", mime_type="text/plain")
def watched() -> str:
    """A resource clients subscribe to."""
    return "Watched resource content"


# -- prompts ------------------------------------------------------------------------------


@server.prompt()
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
    """A prompt that embeds a resource."""
    return [
        UserMessage(embedded(resourceUri, "Embedded resource content for testing.")),
        UserMessage("Please process the embedded resource above."),
    ]


@server.prompt()
def test_prompt_with_image() -> list[UserMessage]:
    """A prompt that carries an image."""
    return [
        UserMessage(types.ImageContent(type="image", data=PNG, mime_type="image/png")),
        UserMessage("Please analyze the image above."),
    ]


@server.completion()
async def complete(ref: Any, argument: Any, context: Any) -> types.Completion:
    """Offers no suggestions: the scenarios check that completion is served."""
    return types.Completion(values=[], total=0, has_more=False)


# -- legacy handlers the SDK leaves to the server -----------------------------------------


async def on_subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def on_unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def on_set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


class Events(EventStore):
    """Keeps every SSE event in memory, so a client that reconnects is replayed what it missed."""

    def __init__(self) -> None:
        self.events: list[tuple[StreamId, EventId, Any]] = []

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        event_id = str(len(self.events) + 1)
        self.events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        stream = next((s for s, e, _ in self.events if e == last_event_id), None)
        if stream is None:
            return None
        for stream_id, event_id, message in self.events:
            if stream_id == stream and int(event_id) > int(last_event_id) and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


def main() -> None:
    parser = argparse.ArgumentParser(description="The conformance server.")
    parser.add_argument("--port", type=int, default=3001)
    options = parser.parse_args()
    lowlevel = server._lowlevel_server  # the SDK offers no public hook for these three
    lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
    lowlevel.add_request_handler(
        "resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe
    )
    lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    server.settings.log_level = "WARNING"
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=options.port,
        event_store=Events(),
        retry_interval=100,
    )


if __name__ == "__main__":
    main()
