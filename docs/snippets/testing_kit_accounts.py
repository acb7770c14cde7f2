"""Testing tools that take a third-party token or send the user to a page of the server.

A tracker whose `my_issues` reads the signed-in user's token of the tracker's API
(`oauth.token(...)`), and whose `close_issue` waits until the user confirmed on the
server's own page (`pages.ask(...)`). The tests run without a provider, a browser or a
server: they sign a user in with `call(user=...)` and replace the resolvers that need the
outside world.

The functions named `test_*` are pytest tests (with the anyio plugin); `main()` runs them.
Run it with `python docs/snippets/testing_kit_accounts.py`.
"""

from __future__ import annotations

from typing import Annotated, Any, Protocol

import anyio
import pytest

from mcp_resolve import ElicitURL, Resolve
from mcp_resolve.errors import ResolutionError
from mcp_resolve.oauth import OAuth, OAuthProvider, ProviderToken
from mcp_resolve.pages import Pages
from mcp_resolve.seal import KeyRing
from mcp_resolve.testing import AskedQuestion, call, override

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8000"
keys = KeyRing("a secret of 32 bytes or more, from the environment")
oauth = OAuth(keys, BASE)
pages = Pages(keys, BASE)
tracker = OAuthProvider(
    "tracker",
    title="Tracker",
    client_id="mcp-tracker",
    authorize_url="https://tracker.example/oauth/authorize",
    token_url="https://tracker.example/oauth/token",
)
tracker_token = oauth.token(tracker, scopes=["issues"])  # named, so a test can replace it


async def my_issues(token: Annotated[ProviderToken, Resolve(tracker_token)]) -> str:
    """The user's open issues, asked of the tracker's API with their own token."""
    return f"asked the tracker with {token.headers()['Authorization']}"


async def confirmed(issue: str) -> str | ElicitURL:
    question = pages.ask(f"Confirm closing issue {issue} in your browser", ref=f"close-{issue}")
    if await pages.finished(question):
        return "confirmed"
    return question


async def close_issue(issue: str, confirmation: Annotated[str, Resolve(confirmed)]) -> str:
    return f"Closed issue {issue}."


def a_token() -> ProviderToken:
    return ProviderToken("test-token", "tracker", frozenset({"issues"}))


@override(tracker_token, a_token)
async def test_a_token_stands_in_for_the_users_connection() -> None:
    done = await call(my_issues, user="alice")
    assert done.result == "asked the tracker with Bearer test-token"
    assert done.questions == []


async def test_a_user_without_a_token_is_sent_to_connect() -> None:
    asked: list[str] = []

    def declines(question: AskedQuestion) -> str:
        asked.append(question.message)
        return "decline"

    with pytest.raises(ResolutionError, match="decline"):
        await call(my_issues, user="alice", answers=declines)
    assert asked == ["Connect your Tracker account in your browser"]


async def test_a_fake_of_another_class_is_refused_saying_why() -> None:
    class FakeToken:
        def headers(self) -> dict[str, str]:
            return {"Authorization": "Bearer fake"}

    with override(tracker_token, FakeToken), pytest.raises(ResolutionError) as refused:
        await call(my_issues, user="alice")
    assert "a Protocol that both satisfy" in str(refused.value)


class Bearer(Protocol):
    def headers(self) -> dict[str, str]: ...


async def my_issues_of_any_token(token: Annotated[Bearer, Resolve(tracker_token)]) -> str:
    return f"asked the tracker with {token.headers()['Authorization']}"


async def test_a_parameter_typed_by_a_protocol_takes_any_fake_that_fits() -> None:
    class FakeToken:
        def headers(self) -> dict[str, str]:
            return {"Authorization": "Bearer fake"}

    with override(tracker_token, FakeToken):
        done = await call(my_issues_of_any_token, user="alice")
    assert done.result == "asked the tracker with Bearer fake"


async def test_a_confirmed_page_stands_in_for_the_browser() -> None:
    with override(confirmed, lambda issue: "confirmed"):
        done = await call(close_issue, {"issue": "42"}, user="alice")
    assert done.result == "Closed issue 42."


async def test_a_page_nobody_finishes_ends_in_the_servers_error() -> None:
    links: list[str | None] = []

    def opens_the_page(question: AskedQuestion) -> str:
        links.append(question.url)
        return "accept"  # and never finishes it

    with pytest.raises(ResolutionError, match=r"was not completed within 0\.2 s"):
        await call(
            close_issue, {"issue": "42"}, user="alice", answers=opens_the_page, ask_timeout=0.2
        )
    assert [(link or "").startswith(f"{BASE}/mcp-resolve/pages/") for link in links] == [True]


async def main() -> dict[str, Any]:
    passed = []
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            await test()
            passed.append(name)
    return {"passed": passed}


if __name__ == "__main__":
    print(anyio.run(main))
