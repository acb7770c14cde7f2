"""What both conformance servers serve alike: server.py on the SDK's MCPServer and
tasks_fixtures.py on fastmcp. Every question a fixture asks comes from one of these
resolvers; resolvers know no host, so the two servers share them, each registering its tools
with its own `@resolved`. Also the fixtures' data: a 1x1 PNG, a short WAV, and the input
schema the json-schema-2020-12 scenario lists.
"""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
from pydantic import BaseModel

from mcp_resolve import Elicit, ListRoots, Resolve, Sample


class Name(BaseModel):
    name: str


class Ok(BaseModel):
    ok: bool


class Color(BaseModel):
    color: str


class PromptContext(BaseModel):
    context: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_confirmation() -> Elicit[Ok]:
    return Elicit("Please confirm", Ok)


def ask_step1() -> Elicit[Name]:
    return Elicit("Step 1: What is your name?", Name)


def ask_step2(step1: Annotated[Name, Resolve(ask_step1, key="step1")]) -> Elicit[Color]:
    return Elicit("Step 2: What is your favorite color?", Color)


def ask_prompt_context() -> Elicit[PromptContext]:
    return Elicit("What context should the prompt use?", PromptContext)


def sample(text: str, max_tokens: int) -> Sample:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    return Sample([message], max_tokens=max_tokens)


def said(result: types.CreateMessageResult) -> str:
    content = result.content
    return content.text if isinstance(content, types.TextContent) else f"({content.type})"


def ask_capital() -> Sample:
    return sample("What is the capital of France?", 100)


def ask_greeting() -> Sample:
    return sample("Generate a greeting", 50)


def ask_roots() -> ListRoots:
    return ListRoots()


def ask_what_the_client_can_answer(capabilities: types.ClientCapabilities | None) -> object:
    """A form if the client can show one, else its LLM, else a default: the capability choice.

    It may ask either of two questions, so its return annotation declares none."""
    if capabilities is not None and capabilities.elicitation is not None:
        return ask_name()
    if capabilities is not None and capabilities.sampling is not None:
        return sample("Say hello", 50)
    return "no way to ask"


def embedded(uri: str, body: str, mime_type: str = "text/plain") -> types.EmbeddedResource:
    contents = types.TextResourceContents(uri=uri, mime_type=mime_type, text=body)
    return types.EmbeddedResource(type="resource", resource=contents)


PNG = (  # a 1x1 pixel
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

# A signature cannot say `$schema`, `$anchor`, `if`/`then`/`else`: this input schema is
# given whole, as the json-schema-2020-12 scenario lists it.
JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
