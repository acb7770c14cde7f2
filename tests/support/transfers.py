"""A money transfer the user must confirm: the tools the replay attacks aim at.

Shared by the replay tests (tests/trust/test_trust_replay.py) and the Redis guard's
(tests/deploy/test_redis_guard.py), which replays the same states against Redis.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve

from .trust_kit import accept, call

RUNS: list[str] = []


class Go(BaseModel):
    ok: bool


class Note(BaseModel):
    note: str


async def confirm(to: str) -> Elicit[Go]:
    return Elicit(f"Send money to {to}?", Go)


async def transfer(amount: int, to: str, go: Annotated[Go, Resolve(confirm, key="go")]) -> str:
    """Send money once the user confirms."""
    RUNS.append(f"{amount} to {to}")
    return f"sent {amount} to {to}" if go.ok else "nothing sent"


async def whoami(secret: Annotated[Note, Resolve(lambda: Elicit("Your secret?", Note))]) -> str:
    """Echo the user's own answer: whoever reads it must be whoever gave it."""
    return f"secret: {secret.note}"


async def yes(context: Any, params: Any) -> Any:
    return accept(ok=True)


async def answered(client: Any, tool: str = "transfer", args: dict[str, Any] | None = None) -> Any:
    """A first round and the state it returned, for a transfer the user confirms."""
    first = await call(client, tool, args or {"amount": 10, "to": "bob"})
    assert first.asked is not None, first
    assert first.state is not None, first
    return first
