"""The command line: `mcp-resolve check` reports every problem of a tool, not just the first.

`transfer` has two problems that do not depend on each other and `profile` has one. The
tools are not decorated, so this module imports; `@resolved` would raise at the first
problem (the command line records it and goes on). `main()` runs the check as

    mcp-resolve check docs/snippets/cli_check.py:transfer docs/snippets/cli_check.py:profile

from the repository's root does.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import BaseModel

from mcp_resolve import Elicit, ElicitURL, Resolve
from mcp_resolve.cli import main as mcp_resolve

ROOT = Path(__file__).resolve().parents[2]


def owner_of(account: str) -> str:  # `account` is not an argument of `transfer`
    return f"owner of {account}"


class Address(BaseModel):
    street: str
    city: str


class Payee(BaseModel):
    name: str
    address: Address  # a form is flat: a nested model cannot be asked


def ask_payee() -> Payee | Elicit[Payee]:
    return Elicit("Who is the payment for?", Payee)


async def transfer(
    account_id: str,
    amount: int,
    owner: Annotated[str, Resolve(owner_of)],
    payee: Annotated[Payee, Resolve(ask_payee)],
) -> str:
    return f"{owner} paid {amount} to {payee.name}"


def sign_in() -> str | Elicit[Payee] | ElicitURL:  # two questions: one resolver asks one
    return ElicitURL("Sign in", "https://login.example.com")


async def profile(session: Annotated[str, Resolve(sign_in)]) -> str:
    return session


async def main() -> dict[str, Any]:
    targets = [f"docs/snippets/cli_check.py:{tool}" for tool in ("transfer", "profile")]
    output = io.StringIO()
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(output):  # a command line: it reads files, off the loop
            status = await anyio.to_thread.run_sync(mcp_resolve, ["check", *targets])
    finally:
        os.chdir(here)
    return {"status": status, "output": output.getvalue().splitlines()}


if __name__ == "__main__":
    import anyio

    result = anyio.run(main)
    print("\n".join(result["output"]))
