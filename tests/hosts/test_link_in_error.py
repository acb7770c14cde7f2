"""A URL question with `fallback=LINK_IN_ERROR`, on a client that cannot open pages: the
tool error gives the user the link, in these exact words, on every host and generation."""

from __future__ import annotations

from typing import Annotated

import pytest
from mcp import Client
from support.trust_kit import HOSTS, MODES, serve

from mcp_resolve import LINK_IN_ERROR, ElicitURL, Resolve

pytestmark = pytest.mark.anyio

PAGE = "https://shop.example/pay/7"


async def payment() -> str | ElicitURL:
    return ElicitURL("Pay order 7", PAGE, wait=True, fallback=LINK_IN_ERROR)


async def pay(receipt: Annotated[str, Resolve(payment)]) -> str:
    return receipt


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_the_link_is_told_in_one_sentence_with_nothing_after_it(host: str, mode: str) -> None:
    served = serve(host, pay)
    async with Client(served.server, mode=mode) as client:  # declares no elicitation
        result = await client.call_tool("pay", {})
    assert result.is_error
    told = str(getattr(result.content[0], "text", ""))
    assert told.endswith(  # after the host's own prefix, if any
        f"This needs a step in your browser, which this app cannot open itself. Open {PAGE}, "
        "finish there, then ask again (call this tool again)."
    ), told
