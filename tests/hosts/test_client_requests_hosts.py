"""Sample and ListRoots from resolvers on every host and both generations, through real clients."""

from __future__ import annotations

import pytest
from support.client_requests import HOSTS, ClientSide, call_on
from support.hosts import MODES

pytestmark = pytest.mark.anyio


@pytest.fixture(params=HOSTS)
def host(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_gets_a_form_answer_a_completion_and_the_roots(host: str, mode: str) -> None:
    client = ClientSide()
    is_error, text = await call_on(host, mode, "everything", {"topic": "tides"}, client)
    assert (is_error, text) == (False, "Ann|<Summarize tides>|file:///work")
    assert sorted(client.asked) == ["form", "roots", "sampling"]  # each asked once per call


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_sampling_and_roots_is_refused_before_the_body(
    host: str, mode: str
) -> None:
    client = ClientSide()
    is_error, text = await call_on(
        host, mode, "everything", {"topic": "tides"}, client, sampling=False, roots=False
    )
    assert is_error
    assert text.startswith("-32021")
    assert "sampling and roots capabilities" in text
    assert "'support.client_requests:summarize'" in text  # named by key, as the SDK does
    assert "'support.client_requests:client_roots'" in text
    assert "sampling" not in client.asked
    assert "roots" not in client.asked


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ({"form": True, "sampling": True}, "form:Ann"),
        ({"form": False, "sampling": True}, "llm:<Summarize tides>"),
        ({"form": False, "sampling": False}, "default:tides (untitled)"),
    ],
)
async def test_a_resolver_chooses_what_to_ask_from_the_client_capabilities(
    host: str, mode: str, declared: dict[str, bool], expected: str
) -> None:
    client = ClientSide()
    is_error, text = await call_on(
        host, mode, "choose", {"topic": "tides"}, client, roots=False, **declared
    )
    assert (is_error, text) == (False, expected)
