"""Dependencies: values coerced to the declared type, and the mistakes caught at start-up.

The tools below are not decorated at import; `main()` applies `resolved` to each and
collects what it raises, which is what `@resolved` would raise when the server module is
imported.

Run it with `python docs/snippets/dependencies_checks.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server import MCPServer
from pydantic import BaseModel

from mcp_resolve import Elicit, ElicitURL, InvalidSignature, Resolve
from mcp_resolve.mcp import resolved

# -- coercion -------------------------------------------------------------------------------

SETTINGS = {"port": "8080", "retries": "three"}  # strings, as read from a file or environment


def port_setting() -> str:
    return SETTINGS["port"]


def retries_setting() -> str:
    return SETTINGS["retries"]


async def connect(host: str, port: Annotated[int, Resolve(port_setting)]) -> str:
    return f"connecting to {host}:{port} (port is {type(port).__name__})"


async def reconnect(host: str, retries: Annotated[int, Resolve(retries_setting)]) -> str:
    return f"retrying {retries} times"


# -- values of the declared class pass as they are ------------------------------------------

AUDIT: list[list[str]] = []


def audit_log() -> Iterator[list[str]]:
    lines: list[str] = []
    yield lines  # the tool receives this very list
    AUDIT.append(lines)  # after the body: it holds what the body wrote


async def rename(old: str, new: str, log: Annotated[list[str], Resolve(audit_log)]) -> str:
    log.append(f"renamed {old} to {new}")
    return f"{old} -> {new}"


# -- mistakes caught at start-up --------------------------------------------------------------


def lookup(user: str) -> str:  # `user` is not a tool argument of `whoami`
    return user


async def whoami(user_id: str, name: Annotated[str, Resolve(lookup)]) -> str:
    return name


def plan_of(account: Annotated[str, Resolve(account_of)]) -> str:
    return f"plan of {account}"


def account_of(plan: Annotated[str, Resolve(plan_of)]) -> str:
    return f"account on {plan}"


async def upgrade(plan: Annotated[str, Resolve(plan_of)]) -> str:
    return plan


async def default_note() -> str:
    return ""


async def annotate(note: Annotated[str, Resolve(default_note)] | None) -> str:
    return note or ""


class Credentials(BaseModel):
    username: str
    password: str


def sign_in() -> Credentials | Elicit[Credentials] | ElicitURL:
    return ElicitURL("Sign in", "https://login.example.com")


async def profile(credentials: Annotated[Any, Resolve(sign_in)]) -> str:
    return "profile"


class Address(BaseModel):
    street: str
    city: str


class Customer(BaseModel):
    name: str
    address: Address


def ask_customer() -> Customer | Elicit[Customer]:
    return Elicit("Who is the customer?", Customer)


async def register(customer: Annotated[Customer, Resolve(ask_customer)]) -> str:
    return customer.name


MISTAKES = {
    "unfillable": whoami,
    "cycle": upgrade,
    "union": annotate,
    "two_questions": profile,
    "nested_form": register,
}


def decorate(tool: Any) -> str:
    """What `@resolved` raises for `tool`: the exception's class, message and notes."""
    try:
        resolved(tool)
    except (InvalidSignature, TypeError) as exc:
        notes = "".join(f"\n{note}" for note in getattr(exc, "__notes__", ()))
        return f"{type(exc).__name__}: {exc}{notes}"
    return "no error"


# -- `from __future__ import annotations` and functions defined inside functions ------------


def build_inside_a_function() -> str:
    class Tier(BaseModel):
        name: str

    def tier() -> Tier:
        return Tier(name="gold")

    async def show_tier(tier: Annotated[Tier, Resolve(tier)]) -> str:
        return tier.name

    return decorate(show_tier)


async def main() -> dict[str, Any]:
    server = MCPServer("Settings")
    server.tool()(resolved(connect))
    server.tool()(resolved(reconnect))
    server.tool()(resolved(rename))
    async with Client(server) as client:
        connected = await client.call_tool("connect", {"host": "db.internal"})
        retried = await client.call_tool("reconnect", {"host": "db.internal"})
        await client.call_tool("rename", {"old": "draft.md", "new": "final.md"})
    results: dict[str, Any] = {
        "connected": connected.content[0].text,  # type: ignore[union-attr]
        "retried": retried.content[0].text,  # type: ignore[union-attr]
        "audit": AUDIT[-1],
    }
    results.update({name: decorate(tool) for name, tool in MISTAKES.items()})
    results["inside_a_function"] = build_inside_a_function()
    return results


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
