"""A user-scoped value as JSON and back, for the store that seals it (`RedisUserValues`).

By the resolver's return annotation, the question it may ask left out: `Elicit[M]` keeps
`M` (an accepted form's data is what the user's value becomes), a URL question nothing
(a page that waits ends with the resolver's own value). Secrets stay secrets: pydantic
writes `SecretStr`, `SecretBytes` and `Secret[...]` as `**********` in JSON, which would
turn a kept API key into stars on the next worker; here their values are written, for
the store to seal at once, and read back into the same secret types.

A type with no JSON form (a client object, a connection) has no `ValueJson`: `of` says
so once, when the store first meets the resolver, so the store never tries, fails and
warns on each call; a value of such a type met under `Any` fails `dump` with one of
`NO_JSON`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

from pydantic import PydanticSchemaGenerationError, Secret, SecretBytes, SecretStr, TypeAdapter
from pydantic_core import PydanticSerializationError, to_json

from ..analysis.edges import union_members
from ..analysis.nodes import type_hints
from ..client_requests import ListRoots, Sample
from ..markers import Elicit, ElicitURL

_SECRETS = (SecretStr, SecretBytes, Secret)
_ASKED_ELSEWHERE = (ElicitURL, Sample, ListRoots)
NO_JSON = (PydanticSerializationError, PydanticSchemaGenerationError)
"""What building or using a `ValueJson` raises for a type with no JSON form."""


class ValueJson:
    """How the values of one resolver go to JSON and back."""

    __slots__ = ("_adapter",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self._adapter: TypeAdapter[Any] = TypeAdapter(kept_type(type_hints(fn).get("return")))

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> ValueJson | None:
        """`fn`'s, or None when its return type has no JSON form."""
        try:
            return cls(fn)
        except NO_JSON:
            return None

    def dump(self, value: Any) -> str:
        """`value` as JSON, its secrets included (for sealing only)."""
        return to_json(_revealed(self._adapter.dump_python(value, mode="python"))).decode()

    def load(self, text: str) -> Any:
        return self._adapter.validate_json(text)


def kept_type(returns: Any) -> Any:
    """What a resolver annotated `-> returns` keeps: its value, or its form's data."""
    if returns is None:
        return Any
    kept = []
    for member in union_members(returns) or (returns,):
        origin = get_origin(member) or member
        if origin is Elicit:
            args = get_args(member)
            kept.append(args[0] if args else Any)
        elif origin not in _ASKED_ELSEWHERE:
            kept.append(member)
    if not kept:
        return Any
    return kept[0] if len(kept) == 1 else Union[tuple(kept)]  # noqa: UP007


def _revealed(value: Any) -> Any:
    if isinstance(value, _SECRETS):
        return _revealed(value.get_secret_value())
    if isinstance(value, dict):
        return {key: _revealed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_revealed(item) for item in value]
    return value
