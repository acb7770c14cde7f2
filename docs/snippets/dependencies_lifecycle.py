"""Dependencies: sync, async and generator resolvers, and when the code after `yield` runs.

A ledger: `deposit` books an amount in euros. The exchange rate and the account's
balance are fetched concurrently; the booking happens in a transaction that a generator
resolver opens on a connection that another generator resolver opens.

Run it with `python docs/snippets/dependencies_lifecycle.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.mcp import resolved

LOG: list[str] = []

mcp = MCPServer("Ledger")


async def exchange_rate() -> Decimal:
    LOG.append("rate: start")
    await anyio.sleep(0.05)  # a request to a rates service
    LOG.append("rate: end")
    return Decimal("0.92")


async def balance(account: str) -> Decimal:
    LOG.append("balance: start")
    await anyio.sleep(0.05)  # a query on another service
    LOG.append("balance: end")
    return Decimal("250.00")


class Transaction:
    def __init__(self) -> None:
        self.committed = False

    def commit(self) -> None:
        self.committed = True


async def connection() -> AsyncIterator[str]:
    LOG.append("connection: open")
    try:
        yield "db-connection"
    finally:
        LOG.append("connection: closed")


def transaction(conn: Annotated[str, Resolve(connection)]) -> Iterator[Transaction]:
    tx = Transaction()
    try:
        yield tx
    except Exception as exc:  # the body's exception, thrown in at the yield
        LOG.append(f"transaction: failed with {exc}")
        raise
    finally:
        LOG.append("transaction: committed" if tx.committed else "transaction: rolled back")


@mcp.tool()
@resolved
async def deposit(
    account: str,
    amount: Decimal,
    rate: Annotated[Decimal, Resolve(exchange_rate)],
    before: Annotated[Decimal, Resolve(balance)],
    tx: Annotated[Transaction, Resolve(transaction)],
) -> str:
    """Deposit an amount given in dollars; the account is kept in euros."""
    if amount <= 0:
        raise ToolError("the amount must be positive")
    LOG.append("body")
    tx.commit()
    return f"{account}: {before} EUR -> {before + amount * rate} EUR"


class Confirm(BaseModel):
    ok: bool


async def confirm_withdrawal(account: str, amount: Decimal) -> Elicit[Confirm]:
    return Elicit(f"Withdraw {amount} EUR from {account}?", Confirm)


@mcp.tool()
@resolved
async def withdraw(
    account: str,
    amount: Decimal,
    confirm: Annotated[Confirm, Resolve(confirm_withdrawal)],
    tx: Annotated[Transaction, Resolve(transaction)],
) -> str:
    """Withdraw an amount in euros, after the user confirms."""
    LOG.append("body")
    if confirm.ok:
        tx.commit()
        return f"{account}: withdrew {amount} EUR"
    return "nothing withdrawn"


async def yes(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def main() -> dict[str, Any]:
    async with Client(mcp) as client:
        LOG.clear()
        ok = await client.call_tool("deposit", {"account": "acc-1", "amount": "100"})
        success_log = list(LOG)
        LOG.clear()
        refused = await client.call_tool("deposit", {"account": "acc-1", "amount": "-5"})
        failure_log = list(LOG)
    async with Client(mcp, mode="2026-07-28", elicitation_callback=yes) as client:
        LOG.clear()
        withdrawn = await client.call_tool("withdraw", {"account": "acc-1", "amount": "20"})
        two_rounds_log = list(LOG)
    return {
        "ok": ok.content[0].text,  # type: ignore[union-attr]
        "success_log": success_log,
        "refused": refused.content[0].text,  # type: ignore[union-attr]
        "failure_log": failure_log,
        "withdrawn": withdrawn.content[0].text,  # type: ignore[union-attr]
        "two_rounds_log": two_rounds_log,
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
