"""The README's demo: the seed's stories against real example servers, on every transport.

Starts example servers (files, bistro, order_book, notes, warehouse, connector, ...) as real
subprocesses and drives them with the official SDK's `Client`, over stdio and over
Streamable HTTP on 127.0.0.1, on a legacy connection and on a 2026-07-28 one, printing what
each section shows, then every question and the answer given. `--interactive` lets a
person answer instead. `--serve NAME` runs one example server for another client instead.
The servers ship inside the installed package, so this works from a wheel as from a
checkout.

    mcp-resolve demo [--interactive] [--transport stdio|http] [--mode legacy|2026-07-28]
    mcp-resolve demo --serve NAME [--http HOST:PORT]
"""

from __future__ import annotations

import argparse
import contextlib
import runpy
import secrets
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.session import ElicitationFnT, SamplingFnT
from mcp.shared.exceptions import MCPError

from .accounts import missing, signed_in_client
from .payments import pay_soon
from .processes import async_http_server, example_names, example_path
from .repositories import approving_client
from .repositories import missing as passkeys_missing
from .terminal import Dismissed, consent_to_open, fill_form


@dataclass(frozen=True)
class Section:
    """One story of the demo: which server, what it shows (one line), the calls it makes."""

    server: str
    shows: str
    calls: tuple[tuple[str, dict[str, Any]], ...]
    sampling: bool = True  # whether the client lends its LLM (declares sampling)
    webhook: bool = False  # over HTTP whatever the transport: a payment provider reports to it
    browser: bool = False  # over HTTP whatever the transport: a signed-in user's browser acts
    passkey: bool = False  # the same, with chromium and its virtual authenticator


BOOKING = {"date": "2025-12-25", "party_size": 2}

# The seed's "Try it", then the rest of its stories, then sampling and app scope.
SECTIONS: dict[str, list[Section]] = {
    mode: [
        Section(
            "files",
            "a resolver asks for confirmation only when the folder has files (a form)",
            (("delete_folder", {"path": "/tmp/project"}),),
        ),
        Section(
            "bistro",
            "asking from the tool body (legacy only), the user picking another date"
            if mode == "legacy"
            else "a resolver offers another date when the one asked for is full",
            (("book_table" if mode == "legacy" else "book_table_anywhere", BOOKING),),
        ),
        Section(
            "bistro",
            "a URL question: the user opens a payment page, out of band",
            (("pay_deposit", {"booking_id": "b42"}),),
        ),
        Section(
            "bistro",
            "a URL step that waits until the payment provider's signed webhook reports it",
            (("pay_deposit_and_wait", {"booking_id": "b17"}),),
            webhook=True,
        ),
        Section(
            "order_book",
            "a question that depends on a value another resolver computed (stock)",
            (("order_book", {"isbn": "978-0199535569"}),),
        ),
        Section(
            "notes",
            "Sample: the client's LLM writes the note's title",
            (("save_note", {"text": "eggs, milk and bread for sunday"}),),
        ),
        Section(
            "notes",
            "Sample's fallback: a client without an LLM still gets its note saved",
            (("save_note", {"text": "eggs, milk and bread for sunday"}),),
            sampling=False,
        ),
        Section(
            "warehouse",
            "app scope: one connection pool, built once, serves every call",
            (("stock", {"sku": "apple"}), ("pool_info", {}), ("pool_info", {})),
        ),
        Section(
            "connector",
            "a connector: sign-in, a workspace asked once, a token by OAuth, an API key on "
            "the server's page, a purchase paid through a signed webhook",
            (("my_issues", {}), ("remind", {"issue": 12}), ("buy_seats", {"seats": 2})),
            browser=True,
        ),
        Section(
            "repositories",
            "approvals: deleting a repository waits for the user's passkey on the server's page",
            (("delete_repository", {"repo": "acme/web"}),),
            passkey=True,
        ),
    ]
    for mode in ("legacy", "2026-07-28")
}

SCRIPTED = {"No tables for": {"accept_alternative": True, "date": "2025-12-27"}}


def scripted_content(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    """What the scripted user types: the seed's answer where it has one, else a plain yes."""
    for prefix, answer in SCRIPTED.items():
        if message.startswith(prefix):
            return answer
    content: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "boolean":
            content[name] = True
        elif "enum" in prop:
            content[name] = prop["enum"][0]
        elif prop.get("type") in ("integer", "number"):
            content[name] = prop.get("minimum", 1)
        elif name in schema.get("required", ()):
            content[name] = "yes"
    return content


class PaymentProvider:
    """Stands in for the payment provider of `examples/bistro.py`: once the user has opened
    the payment page, it reports the payment to the server's webhook (`payments`)."""

    def __init__(self, url: str, secret: str) -> None:
        self.webhook = url.removesuffix("/mcp") + "/webhooks/payments"
        self.secret = secret
        self.payments: list[threading.Thread] = []

    def pays_soon(self, booking: str) -> None:
        event = {"id": f"evt-{booking}", "type": "deposit.paid", "booking_id": booking}
        paid = pay_soon(self.webhook, self.secret, {**event, "created": time.time()})
        self.payments.append(paid)

    def settle(self) -> None:
        """Wait for the reports sent, so that what the webhook answered is told before the
        call's result (the server may answer the call before the report's response)."""
        while self.payments:
            self.payments.pop().join(30)


def make_callback(interactive: bool, provider: PaymentProvider | None = None) -> ElicitationFnT:
    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            action = await consent_to_open(params.message, params.url, interactive)
            if provider is not None and action == "accept":
                provider.pays_soon(params.url.rsplit("/", 1)[-1])
            return types.ElicitResult(action=action)
        print(f"    ? {params.message}")
        schema = params.requested_schema
        if interactive:
            try:
                content = await anyio.to_thread.run_sync(fill_form, schema)
            except Dismissed as dismissed:
                print(f"    > {dismissed.action}")
                return types.ElicitResult(action=dismissed.action)  # type: ignore[arg-type]
        else:
            content = scripted_content(params.message, schema)
        print(f"    > accept {content}")
        return types.ElicitResult(action="accept", content=content)

    return callback


SCRIPTED_TITLE = "Groceries for Sunday"


def make_sampling(interactive: bool) -> SamplingFnT:
    """The client's LLM: a scripted reply, or the person's in `--interactive` mode."""

    async def callback(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        prompt = " ".join(getattr(m.content, "text", "") for m in params.messages)
        print(f"    ? (the client's LLM) {prompt}")
        reply = SCRIPTED_TITLE
        if interactive:
            raw = await anyio.to_thread.run_sync(input, "      You are the LLM; reply: ")
            reply = raw.strip() or SCRIPTED_TITLE
        print(f"    > {reply}")
        text = types.TextContent(type="text", text=reply)
        return types.CreateMessageResult(role="assistant", content=text, model="demo")

    return callback


@contextlib.asynccontextmanager
async def connect(
    server: str, transport: str, mode: str, interactive: bool, sampling: bool, webhook: bool
) -> AsyncIterator[tuple[Client, Callable[[], None] | None]]:
    """A client of `server`, and what to wait for before telling a result (the payment
    provider's reports, for a section with a webhook)."""
    callbacks: dict[str, Any] = {"elicitation_callback": make_callback(interactive)}
    if sampling:
        callbacks["sampling_callback"] = make_sampling(interactive)
    if webhook:  # the provider reaches the server over HTTP, whatever the client's transport
        secret = secrets.token_urlsafe(32)
        async with async_http_server(server, env={"BISTRO_WEBHOOK_SECRET": secret}) as url:
            provider = PaymentProvider(url, secret)
            callbacks["elicitation_callback"] = make_callback(interactive, provider)
            async with Client(url, mode=mode, **callbacks) as client:
                yield client, provider.settle
        return
    if transport == "stdio":
        path = await anyio.to_thread.run_sync(example_path, server)  # it looks at the disk
        params = StdioServerParameters(command=sys.executable, args=[str(path)])
        async with Client(params, mode=mode, **callbacks) as client:
            yield client, None
        return
    async with async_http_server(server) as url, Client(url, mode=mode, **callbacks) as client:
        yield client, None


async def run(transports: list[str], modes: list[str], interactive: bool) -> None:
    for transport in transports:
        for mode in modes:
            print(f"\n== {transport}, {mode} " + "=" * 40)
            for section in SECTIONS[mode]:
                print(f"\n  -- {section.server}: {section.shows}")
                if section.browser or section.passkey:
                    await signed_in(section, mode, interactive)
                    continue
                async with connect(
                    section.server, transport, mode, interactive, section.sampling, section.webhook
                ) as (client, settle):
                    for tool, arguments in section.calls:
                        await tell(client, tool, arguments, settle=settle)


async def signed_in(section: Section, mode: str, interactive: bool) -> None:
    """A section whose user is signed in, with a browser that does their part: an HTTP
    client, or chromium whose passkey approves (`passkey`)."""
    opened: Callable[[str, str, bool], AbstractAsyncContextManager[tuple[Client, Any]]]
    if section.passkey:
        lacking_of, opened, hint = passkeys_missing, approving_client, ""
    else:
        lacking_of, opened, hint = missing, signed_in_client, ": pip install 'mcp-resolve[demo]'"
    lacking = await anyio.to_thread.run_sync(lacking_of)  # it looks for programs on disk
    if lacking:
        print(f"    (not shown: it needs {', '.join(lacking)}{hint})")
        return
    async with opened(section.server, mode, interactive) as (client, browser):
        for tool, arguments in section.calls:
            await tell(client, tool, arguments, settle=browser.settle)


async def tell(
    client: Client,
    tool: str,
    arguments: dict[str, Any],
    settle: Callable[[], None] | None = None,
) -> None:
    """One call: the tool and its arguments, the questions and answers, then the result
    (after what the user's browser or the payment provider did meanwhile, `settle`)."""
    print(f"  {tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")
    try:
        result = await client.call_tool(tool, arguments)
    except MCPError as error:
        print(f"    ! {error.message}")
        return
    if settle is not None:
        await anyio.to_thread.run_sync(settle)
    text = " ".join(" ".join(getattr(c, "text", "").split()) for c in result.content)
    print(f"    = {'error: ' if result.is_error else ''}{text}")


def serve(name: str, args: list[str]) -> None:
    """Run one example server in this process, as `python examples/<name>.py ARGS` would."""
    path = example_path(name)
    sys.argv = [str(path), *args]
    runpy.run_path(str(path), run_name="__main__")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="mcp-resolve demo",
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog="--serve NAME runs one of the example servers instead (stdio, or Streamable "
        "HTTP with --http HOST:PORT), for another client to connect to: "
        f"{', '.join(example_names())}.",
    )
    parser.add_argument("--interactive", action="store_true", help="answer the questions yourself")
    parser.add_argument("--transport", choices=["stdio", "http"], action="append")
    parser.add_argument("--mode", choices=["legacy", "2026-07-28"], action="append")
    parser.add_argument(
        "--serve", metavar="NAME", choices=example_names(), help="run one example server"
    )
    parser.add_argument("--http", metavar="HOST:PORT", help="with --serve: serve Streamable HTTP")
    options = parser.parse_args(argv)
    if options.serve is not None:
        serve(options.serve, ["--http", options.http] if options.http else [])
        return
    if options.http is not None:
        parser.error("--http goes with --serve NAME")
    transports = options.transport or ["stdio", "http"]
    modes = options.mode or ["legacy", "2026-07-28"]
    anyio.run(run, transports, modes, options.interactive)


if __name__ == "__main__":
    main()
