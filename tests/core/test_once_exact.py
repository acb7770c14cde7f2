"""A recorded value must come back from its record exactly: the exact test of the declared
types whose JSON round trip is known (`analysis/exact_values.py`), and the read-back that
the other types keep (`state/call_records.written`).

The hosts' side is tests/hosts/test_once_hosts.py; the rest of the engine's, test_once.py.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    computed_field,
    field_validator,
)

from mcp_resolve import Elicit, ResolutionError, Resolve, ResolverGraph
from mcp_resolve.analysis.nodes import Node
from mcp_resolve.state.call_records import written
from mcp_resolve.testing import call

pytestmark = pytest.mark.anyio


class Receipt(BaseModel):
    id: str
    amount: int


class Refund(Receipt):
    """A subclass: its record reads back as a `Receipt`, its own class lost."""


class Tagged(str):
    """A `str` with an attribute of its own, which JSON does not keep."""

    source = "card"


class Colour(str, enum.Enum):
    RED = "red"


class Basket(BaseModel):
    receipt: Receipt
    items: list[int] = []
    note: str | None = None
    colour: Colour = Colour.RED
    size: Literal["s", "m"] = "s"
    flags: dict[str, bool] = Field(default_factory=dict)


class Aliased(BaseModel):
    amount: int = Field(alias="total")


class Lowered(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.lower()


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str


class Private(BaseModel):
    id: str
    _seen: int = PrivateAttr(0)


class Computed(BaseModel):
    amount: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def doubled(self) -> int:
        return 2 * self.amount


class Stripped(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)
    name: str


@dataclass
class Slot:
    day: str


class Yes(BaseModel):
    ok: bool


async def confirm() -> Elicit[Yes]:
    return Elicit("Go on?", Yes)


def node_for(declared: Any) -> Node:
    """The recorded node of a resolver declared to return `declared`."""

    def make() -> Any:
        return None

    make.__annotations__ = {"return": declared}

    async def tool(value: Any) -> str:
        return "x"

    tool.__annotations__ = {"value": Annotated[Any, Resolve(make, once=True)]}
    (node,) = ResolverGraph.from_function(tool).recorded
    return node


def _tool(make: Any, declared: Any, body: Any) -> Any:
    """A tool whose value `make` records (declared `declared`), then asks, then gives the
    value to `body`: the record is written after the first round and read in the second."""
    make.__annotations__ = {"return": declared}

    async def tool(made: Any, ok: Any) -> Any:
        return body(made)

    tool.__annotations__ = {
        "made": Annotated[declared, Resolve(make, once=True)],
        "ok": Annotated[Yes, Resolve(confirm)],
    }
    return tool


# -- which declared types are told exact at registration ---------------------------------------


EXACT_TYPES: list[Any] = [
    int,
    str,
    bool,
    None,
    list[int],
    dict[str, int | None],
    Literal["a", 1],
    Colour,
    Receipt,
    Basket,
    list[Receipt],
]
# Not known by type alone: floats (an `int` would read back as a float), datetimes (their
# zone reads back as pydantic's), unions, and models whose JSON is not their fields.
READ_BACK_TYPES: list[Any] = [
    float,
    datetime,
    tuple[int, str],
    int | str,
    dict[int, str],
    Slot,
    Aliased,
    Lowered,
    Open,
    Private,
    Computed,
    Stripped,
    Annotated[int, Field(gt=0)],
    list[float],
]


@pytest.mark.parametrize("declared", EXACT_TYPES)
def test_types_that_json_gives_back_exactly_get_an_exact_test(declared: Any) -> None:
    assert node_for(declared).exact is not None


@pytest.mark.parametrize("declared", READ_BACK_TYPES)
def test_every_other_type_keeps_the_read_back(declared: Any) -> None:
    assert node_for(declared).exact is None


# -- a value that would not come back the same fails the call ----------------------------------


def _constructed() -> Receipt:
    return Receipt.model_construct(id="r1", amount=True)  # built without validation


def _with_attribute() -> Receipt:
    receipt = Receipt(id="r1", amount=3)
    object.__setattr__(receipt, "secret", "kept by no record")
    return receipt


INEXACT = [
    (int, lambda: True),  # serialised as 1: read back equal, but not a bool
    (int, lambda: 2.0),  # read back as 2
    (str, lambda: Tagged("r1")),  # read back as a plain str, `source` lost
    (bool | None, lambda: 0),
    (Literal[1], lambda: True),
    (list[int], lambda: [1, True]),
    (dict[str, int], lambda: {"a": 1.0}),
    (Receipt, lambda: Refund(id="r1", amount=3)),
    (Receipt, _constructed),
    (Receipt, _with_attribute),
    (Basket, lambda: Basket(receipt=Refund(id="r1", amount=3))),
]


@pytest.mark.parametrize(("declared", "value"), INEXACT)
async def test_an_inexact_value_of_an_exact_type_fails_the_call_naming_the_resolver(
    declared: Any, value: Any
) -> None:
    def make() -> Any:
        return value()

    with pytest.raises(ResolutionError) as raised:
        await call(_tool(make, declared, lambda made: "done"), answers={confirm: Yes(ok=True)})
    message = str(raised.value)
    assert "Resolver 'make' for parameter 'made' is recorded (once=True)" in message
    assert "would not read back the same" in message


EXACT = [
    (int, 10**40),
    (str, 'Grüße \U0001f600 "quoted" \n'),
    (None, None),
    (Literal["a", 1], 1),
    (Colour, Colour.RED),
    (Receipt, Receipt(id="r1", amount=3)),
    (Basket, Basket(receipt=Receipt(id="r", amount=1), items=[1, 2], flags={"x": True})),
    (float, 2.5),  # the read-back's
    (Aliased, Aliased(total=3)),  # written by its alias, as it is read
]


@pytest.mark.parametrize(("declared", "value"), EXACT)
async def test_an_exact_value_is_recorded_and_its_resolver_runs_once(
    declared: Any, value: Any
) -> None:
    runs: list[int] = []

    def make() -> Any:
        runs.append(1)
        return value

    def same(made: Any) -> bool:
        return bool(made == value and type(made) is type(value))

    done = await call(_tool(make, declared, same), answers={confirm: Yes(ok=True)})
    assert done.result is True
    assert done.rounds == 2
    assert runs == [1]


# -- the exact test says yes exactly when the record would read back identical -----------------


def _identical(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (`True` is not `1` here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_identical, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_identical(a[k], b[k]) for k in a)
    if isinstance(a, BaseModel):
        return a.__dict__.keys() == b.__dict__.keys() and all(
            _identical(a.__dict__[k], b.__dict__[k]) for k in a.__dict__
        )
    return bool(a == b)


def _reads_back_identical(node: Node, value: Any) -> bool:
    adapter = node.record
    try:
        return _identical(
            adapter.validate_json(adapter.dump_json(value, by_alias=True, warnings=False)), value
        )
    except Exception:
        return False


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
DECLARED = [int, str, bool | None, list[int], dict[str, list[str | None]], Literal["a", 1, True]]
NODES = [node_for(declared) for declared in DECLARED]


@settings(max_examples=300, deadline=None)
@given(value=JSONISH, which=st.integers(0, len(DECLARED) - 1))
def test_a_value_is_recorded_exactly_when_it_reads_back_identical(value: Any, which: int) -> None:
    node = NODES[which]
    try:
        written(node, value, "tool")
        recorded = True
    except ResolutionError:
        recorded = False
    assert recorded == _reads_back_identical(node, value)
