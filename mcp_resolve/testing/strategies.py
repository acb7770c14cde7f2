"""Hypothesis strategies for every answer a client can send to a question.

Built from the rendered form (`render_elicitation_schema`), not from the model: a user
answers the form the client draws, so the content generated is exactly what a client may
send, including optional fields left out. A property test over `answers_for(Model)` thus
covers every answer a tool can receive; a failure is a case the tool (or the model's
hidden constraints, such as validators the form cannot show) does not handle.

Optional fields typed `T | None` without a default are left out as often as filled in,
as a client leaves an input empty; the engine fills them with None before validating
(`Model.model_validate` alone would call them missing).
"""

from __future__ import annotations

import math
from datetime import timedelta, timezone
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from ..client_requests import ListRoots, Sample
from ..engine.questions import Answer
from ..schema import render_elicitation_schema

_DOMAIN = st.from_regex(r"[a-z]([a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True)
_TLD = st.sampled_from(["com", "org", "net", "io", "dev", "co.uk"])
_LOCAL = st.from_regex(r"[a-z0-9]{1,10}([._+-][a-z0-9]{1,8}){0,2}", fullmatch=True)
_PATH = st.lists(st.from_regex(r"[A-Za-z0-9_~-]{1,10}", fullmatch=True), max_size=3)
_OFFSET = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


def content_for(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """Form content a client may send for `model`: every allowed field shape, as JSON.

    Strings respect `minLength`/`maxLength` and the formats `email`, `uri`, `date` and
    `date-time`; numbers their `minimum`/`maximum`; enums and titled choices give one of
    their values; multi-selects a list of distinct choices within `minItems`/`maxItems`;
    fields the form does not require are present or absent.
    """
    schema = render_elicitation_schema(model)
    required = set(schema.get("required", ()))
    fields = {name: _value(prop) for name, prop in schema["properties"].items()}
    return st.fixed_dictionaries(
        {name: s for name, s in fields.items() if name in required},
        optional={name: s for name, s in fields.items() if name not in required},
    )


def answers_for(model: Any) -> st.SearchStrategy[Answer]:
    """Every answer to a question about `model`: accept with valid content, decline, cancel.

    Pass None for a URL question: its accept carries no content. Pass `Sample` (or the
    `Sample` a resolver returns, whose `tools` put it in tools mode) or `ListRoots` for
    every result a client can send to them: completions of any text from any model with
    any stop reason (and tool uses in tools mode), root lists of any length; these have no
    decline. For a question met at run time, `answers_for(question)` (see `AskedQuestion`).
    """
    kind = getattr(model, "kind", None)
    if kind is not None and not isinstance(model, type):  # an AskedQuestion
        tools = bool(model.params and ("tools" in model.params or "toolChoice" in model.params))
        model = {"form": model.model, "url": None, "roots": ListRoots}.get(
            kind, _TOOLS_SAMPLE if tools else Sample
        )
    if model is Sample or isinstance(model, Sample):
        tools = isinstance(model, Sample) and model.uses_tools
        return _completions(tools).map(lambda result: Answer("accept", result))
    if model is ListRoots or isinstance(model, ListRoots):
        return _root_lists().map(lambda result: Answer("accept", result))
    accept: st.SearchStrategy[Answer] = (
        st.just(Answer("accept"))
        if model is None
        else content_for(model).map(lambda content: Answer("accept", content))
    )
    return st.one_of(accept, st.just(Answer("decline")), st.just(Answer("cancel")))


_TOOLS_SAMPLE = Sample([], max_tokens=1, tools=[])
_STOP = st.sampled_from(["endTurn", "stopSequence", "maxTokens"])


def _completions(tools: bool) -> st.SearchStrategy[dict[str, Any]]:
    """`CreateMessageResult` JSON (`CreateMessageResultWithTools` in tools mode)."""
    text = st.builds(lambda t: {"type": "text", "text": t}, st.text())
    block = text
    stop = _STOP
    if tools:
        use = st.builds(
            lambda i, n: {"type": "tool_use", "id": i, "name": n, "input": {}},
            _DOMAIN,
            _DOMAIN,
        )
        block = st.one_of(text, use)
        stop = st.one_of(_STOP, st.just("toolUse"))
    content = st.one_of(block, st.lists(block, min_size=1, max_size=3)) if tools else block
    return st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": content, "model": _DOMAIN},
        optional={"stopReason": stop},
    )


def _root_lists() -> st.SearchStrategy[dict[str, Any]]:
    """`ListRootsResult` JSON: `file://` roots, named or not."""
    root = st.fixed_dictionaries(
        {"uri": _PATH.map(lambda parts: "file:///" + "/".join(parts))},
        optional={"name": st.text(min_size=1, max_size=12)},
    )
    return st.fixed_dictionaries({"roots": st.lists(root, max_size=4)})


def _value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = prop.get("type")
    if kind == "string" and "enum" in prop:
        return st.sampled_from(prop["enum"])
    if kind == "string" and "oneOf" in prop:
        return st.sampled_from([option["const"] for option in prop["oneOf"]])
    if kind == "string":
        low, high = prop.get("minLength", 0), prop.get("maxLength")
        fmt = prop.get("format")
        if fmt is None:
            return st.text(min_size=low, max_size=high)
        text = _formatted(fmt)
        return text.filter(lambda s: low <= len(s) and (high is None or len(s) <= high))
    if kind == "integer":
        low, high = _bound(prop.get("minimum"), math.ceil), _bound(prop.get("maximum"), math.floor)
        return st.integers(min_value=low, max_value=high)
    if kind == "number":
        minimum, maximum = prop.get("minimum"), prop.get("maximum")
        whole = _bound(minimum, math.ceil), _bound(maximum, math.floor)
        floats = st.floats(
            min_value=minimum, max_value=maximum, allow_nan=False, allow_infinity=False
        )
        if whole[0] is not None and whole[1] is not None and whole[0] > whole[1]:
            return floats
        return st.one_of(st.integers(min_value=whole[0], max_value=whole[1]), floats)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = prop["items"]
        choices = items["enum"] if "enum" in items else [o["const"] for o in items["anyOf"]]
        low, high = prop.get("minItems", 0), prop.get("maxItems")
        distinct = low <= len(choices)
        if distinct:  # what a multi-select can send; the schema does not forbid repeats
            high = len(choices) if high is None else min(high, len(choices))
        return st.lists(st.sampled_from(choices), min_size=low, max_size=high, unique=distinct)
    raise TypeError(f"no strategy for the form field {prop!r}")  # the renderer refuses these


def _bound(value: float | None, rounding: Any) -> int | None:
    return None if value is None else int(rounding(value))


def _formatted(fmt: str) -> st.SearchStrategy[str]:
    if fmt == "email":
        return st.builds(lambda local, host, tld: f"{local}@{host}.{tld}", _LOCAL, _DOMAIN, _TLD)
    if fmt == "uri":
        return st.builds(
            lambda host, tld, path: f"https://{host}.{tld}/{'/'.join(path)}", _DOMAIN, _TLD, _PATH
        )
    if fmt == "date":
        return st.dates().map(lambda d: d.isoformat())
    if fmt == "date-time":
        return st.datetimes(timezones=_OFFSET).map(lambda d: d.isoformat())
    raise TypeError(f"no strategy for the string format {fmt!r}")
