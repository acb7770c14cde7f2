"""A consumer takes what its resolver's question can give: a bare `ElicitationResult` takes a
URL question's outcome too (on every host and generation), and a combination that could
never take the user's accept is refused at decoration, not found at call time."""

import importlib.util
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import MCPServer, Server
from pydantic import BaseModel, ConfigDict
from support.hosts import MODES, text_of

from mcp_resolve import (
    AcceptedUrlElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    ElicitURL,
    InvalidSignature,
    ListRoots,
    Resolve,
    ResolverGraph,
    Sample,
    UrlElicitationResult,
)
from mcp_resolve.lowlevel import KeyRing, ResolvedTools
from mcp_resolve.mcp import resolved

pytestmark = pytest.mark.anyio

HOSTS = ("MCPServer", "low-level") + (("fastmcp",) if importlib.util.find_spec("fastmcp") else ())


class Confirm(BaseModel):
    ok: bool


class Other(BaseModel):
    name: str


class Loose(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    ok: bool


class Receipt(BaseModel):
    number: str


def ask_form() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


def ask_url() -> ElicitURL:
    return ElicitURL("Sign in", "https://example.com/sign-in", elicitation_id="sign-in")


def ask_model() -> Sample:
    text = types.TextContent(type="text", text="Hello?")
    return Sample([types.SamplingMessage(role="user", content=text)], max_tokens=10)


def ask_roots() -> ListRoots:
    return ListRoots()


def receipt_or_url() -> Receipt | ElicitURL:
    return ElicitURL("Pay", "https://example.com/pay", elicitation_id="pay", wait=True)


@pytest.mark.parametrize(
    ("annotation", "resolver", "problem", "fix"),
    [
        pytest.param(
            UrlElicitationResult,
            ask_form,
            "takes UrlElicitationResult, which has no place for the form its resolver asks "
            "(Confirm)",
            "annotate it ElicitationResult[Confirm]",
            id="url-outcome-of-a-form",
        ),
        pytest.param(
            ElicitationResult[Other],
            ask_form,
            "takes Other, but its resolver asks a form of Confirm",
            "annotate it with Confirm",
            id="outcome-of-another-model",
        ),
        pytest.param(
            Other,
            ask_form,
            "takes Other, but its resolver asks a form of Confirm",
            "annotate it with Confirm",
            id="another-model",
        ),
        pytest.param(
            ElicitationResult[Confirm],
            ask_url,
            "takes ElicitationResult[Confirm], but its resolver only asks a URL question, "
            "whose accept carries no form data",
            "annotate it UrlElicitationResult",
            id="form-outcome-of-a-url",
        ),
        pytest.param(
            str,
            ask_url,
            "only asks a URL question, whose accept carries no value",
            "annotate it UrlElicitationResult",
            id="value-of-a-url",
        ),
        pytest.param(
            Confirm,
            ask_model,
            "only asks the client's LLM (Sample): its answer is a CreateMessageResult",
            "annotate it with the SDK's CreateMessageResult",
            id="model-of-a-sample",
        ),
        pytest.param(
            UrlElicitationResult,
            ask_roots,
            "takes UrlElicitationResult, but its resolver only asks the client's roots "
            "(ListRoots), which has no decline",
            "annotate it with the SDK's ListRootsResult",
            id="url-outcome-of-roots",
        ),
        pytest.param(
            ElicitationResult[Confirm],
            ask_roots,
            "takes Confirm, but its resolver only asks the client's roots (ListRoots)",
            "annotate it with the SDK's ListRootsResult",
            id="form-outcome-of-roots",
        ),
    ],
)
def test_a_consumer_that_could_never_take_the_accept_is_refused_at_decoration(
    annotation: Any, resolver: Any, problem: str, fix: str
) -> None:
    async def tool(value: Annotated[annotation, Resolve(resolver)]) -> None: ...

    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(tool)
    assert (info.value.parameter, info.value.resolver) == ("value", None)
    assert problem in info.value.problem
    assert f"(resolver {resolver.__name__!r})" in info.value.problem
    assert info.value.fix is not None
    assert info.value.fix.startswith(fix)


def test_the_same_refusal_names_the_resolver_that_consumes() -> None:
    def reads(c: Annotated[UrlElicitationResult, Resolve(ask_form)]) -> str:
        return c.action

    async def tool(value: Annotated[str, Resolve(reads)]) -> None: ...

    with pytest.raises(InvalidSignature) as info:
        ResolverGraph.from_function(tool)
    assert (info.value.resolver, info.value.parameter) == ("reads", "c")


@pytest.mark.parametrize(
    ("annotation", "resolver"),
    [
        pytest.param(ElicitationResult, ask_url, id="bare-outcome-of-a-url"),
        pytest.param(ElicitationResult[Any], ask_url, id="any-outcome-of-a-url"),
        pytest.param(ElicitationResult, ask_form, id="bare-outcome-of-a-form"),
        pytest.param(ElicitationResult[Receipt], receipt_or_url, id="waiting-url"),
        pytest.param(Receipt, receipt_or_url, id="waiting-url-unwrapped"),
        pytest.param(DeclinedElicitation, ask_form, id="stops-on-any-accept"),
        pytest.param(Loose, ask_form, id="from-attributes"),
        pytest.param(str | None, ask_url, id="optional-value-of-a-url"),
        pytest.param(types.CreateMessageResult, ask_model, id="sample-result"),
        pytest.param(types.CreateMessageResult | None, ask_model, id="optional-sample-result"),
        pytest.param(Any, ask_model, id="any-of-a-sample"),
        pytest.param(types.ListRootsResult, ask_roots, id="roots-result"),
        pytest.param(ElicitationResult, ask_roots, id="bare-outcome-of-roots"),
    ],
)
def test_combinations_that_can_work_are_accepted(annotation: Any, resolver: Any) -> None:
    async def tool(value: Annotated[annotation, Resolve(resolver)]) -> None: ...

    ResolverGraph.from_function(tool)


def serve(host: str, tool: Any) -> Any:
    if host == "fastmcp":
        from fastmcp import FastMCP

        from mcp_resolve.fastmcp import resolved as fastmcp_resolved

        app = FastMCP("fit")
        app.tool(fastmcp_resolved(tool))
        return app
    if host == "low-level":
        tools = ResolvedTools(keys=KeyRing("k" * 32), audience="fit")
        tools.add(tool)
        return Server("fit", on_list_tools=tools.list_tools, on_call_tool=tools.call_tool)
    server = MCPServer("fit")
    server.tool()(resolved(tool))
    return server


async def sign_in(consent: Annotated[ElicitationResult, Resolve(ask_url)]) -> str:  # type: ignore[type-arg]
    return f"{type(consent).__name__}: {consent.action}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_a_bare_elicitation_result_receives_an_accepted_url_question(
    host: str, mode: str
) -> None:
    app = serve(host, sign_in)
    if host == "fastmcp":
        from fastmcp import Client as FastMCPClient
        from fastmcp.client.elicitation import ElicitResult

        async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
            return ElicitResult(action="accept")

        async with FastMCPClient(app, mode=mode, elicitation_handler=handler) as c:
            result = await c.call_tool("sign_in", {}, raise_on_error=False)
    else:

        async def callback(context: Any, params: Any) -> types.ElicitResult:
            assert isinstance(params, types.ElicitRequestURLParams)
            return types.ElicitResult(action="accept")

        async with Client(app, mode=mode, elicitation_callback=callback) as client:
            result = await client.call_tool("sign_in", {})
    assert not result.is_error, text_of(result)
    assert text_of(result) == f"{AcceptedUrlElicitation.__name__}: accept"
