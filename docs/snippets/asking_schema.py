"""Asking with a resolver: the form a client draws, rendered from a flat pydantic model.

Run it with `python docs/snippets/asking_schema.py`.
"""

from __future__ import annotations

import datetime
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field

from mcp_resolve import render_elicitation_schema


class Reservation(BaseModel):
    day: datetime.date = Field(description="Day of the visit")
    party_size: int = Field(ge=1, le=12, description="Number of guests")
    seating: Literal["inside", "terrace"] = Field(default="inside", description="Where to sit")
    allergies: str | None = Field(description="Allergies we should know about")


class Address(BaseModel):
    street: str
    city: str


class Delivery(BaseModel):
    name: str
    address: Address  # a nested model: no client can draw it as one form


class Voucher(BaseModel):
    code: str = Field(pattern=r"^[A-Z]{4}-\d{4}$")  # a form cannot carry a pattern


def refusal(model: type[BaseModel]) -> str:
    try:
        render_elicitation_schema(model)
    except TypeError as exc:
        return f"TypeError: {exc}"
    return "rendered"


async def main() -> dict[str, Any]:
    return {
        "reservation": render_elicitation_schema(Reservation),
        "delivery": refusal(Delivery),
        "voucher": refusal(Voucher),
    }


if __name__ == "__main__":
    for name, value in anyio.run(main).items():
        print(f"{name}: {value}")
