"""A person answers an elicitation in the terminal: the demo's `--interactive` mode.

A URL question is shown with its link, and the person says whether to open it (without
`--interactive` the demo accepts). A form works from the requested JSON Schema alone (the
MCP PrimitiveSchemaDefinition shapes): booleans as yes/no, single and multi-select choices
as numbered lists, defaults offered as the answer to an empty line, and a value that does
not fit asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import anyio.to_thread

Ask = Callable[[str], str]


class Dismissed(Exception):
    """The person chose to decline (`-`) or cancel (`!`) instead of filling the form."""

    def __init__(self, action: str) -> None:
        super().__init__(action)
        self.action = action


async def consent_to_open(
    message: str, url: str, interactive: bool
) -> Literal["accept", "decline"]:
    """Show a URL question and its link; "accept", or what the person answered."""
    print(f"    ? {message}")
    print(f"      Open this link to continue: {url}")
    action: Literal["accept", "decline"] = "accept"
    if interactive:
        raw = await anyio.to_thread.run_sync(input, "      Open it? [yes/no]: ")
        action = "accept" if raw.strip().lower() in ("y", "yes") else "decline"
    print(f"    > {action}")
    return action


def fill_form(
    schema: Mapping[str, Any], ask: Ask = input, say: Callable[[str], None] = print
) -> dict[str, Any]:
    """Ask for every field of `schema`; return the content. Raise `Dismissed` to refuse."""
    say("  (answer '-' to decline, '!' to cancel)")
    required = set(schema.get("required", ()))
    content: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        value = _field(name, prop, name in required, ask, say)
        if value is not _SKIP:
            content[name] = value
    return content


_SKIP: Any = object()


def _field(
    name: str, prop: Mapping[str, Any], required: bool, ask: Ask, say: Callable[[str], None]
) -> Any:
    label = prop.get("description") or prop.get("title") or name
    default = prop.get("default", _SKIP)
    choices = _choices(prop)
    if choices:
        for number, (_, title) in enumerate(choices, 1):
            say(f"    {number}. {title}")
    while True:
        hint = _hint(prop, default, required)
        raw = ask(f"  {label}{hint}: ").strip()
        if raw in ("-", "!"):
            raise Dismissed("decline" if raw == "-" else "cancel")
        if not raw:
            if default is not _SKIP:
                return default
            if not required:
                return _SKIP
            say("    a value is required")
            continue
        try:
            return _parse(raw, prop, choices)
        except ValueError as exc:
            say(f"    {exc}; try again")


def _choices(prop: Mapping[str, Any]) -> list[tuple[Any, str]]:
    source = prop["items"] if prop.get("type") == "array" else prop
    if "oneOf" in source or "anyOf" in source:
        return [
            (c["const"], c.get("title", str(c["const"])))
            for c in source.get("oneOf") or source["anyOf"]
        ]
    values = source.get("enum", ())
    titles = source.get("enumNames") or [str(v) for v in values]  # the legacy titled enum
    return list(zip(values, titles, strict=False))


def _hint(prop: Mapping[str, Any], default: Any, required: bool) -> str:
    kind = prop.get("type")
    parts = []
    if kind == "boolean":
        parts.append("yes/no")
    elif kind == "array":
        parts.append("numbers separated by commas")
    elif "enum" in prop or "oneOf" in prop:
        parts.append("number")
    if default is not _SKIP:
        shown = ("yes" if default else "no") if kind == "boolean" else default
        parts.append(f"default {shown}")
    elif not required:
        parts.append("optional")
    return f" [{', '.join(parts)}]" if parts else ""


def _parse(raw: str, prop: Mapping[str, Any], choices: list[tuple[Any, str]]) -> Any:
    kind = prop.get("type")
    if kind == "boolean":
        if raw.lower() in ("y", "yes", "true", "1"):
            return True
        if raw.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer yes or no")
    if kind == "array":
        picked = [_pick(part.strip(), choices) for part in raw.split(",") if part.strip()]
        low, high = prop.get("minItems", 0), prop.get("maxItems", len(choices))
        if not low <= len(picked) <= high:
            raise ValueError(f"choose between {low} and {high}")
        return picked
    if choices:
        return _pick(raw, choices)
    if kind in ("integer", "number"):
        try:
            number: float = int(raw) if kind == "integer" else float(raw)
        except ValueError:
            raise ValueError(
                f"expected {'a whole number' if kind == 'integer' else 'a number'}"
            ) from None
        if "minimum" in prop and number < prop["minimum"]:
            raise ValueError(f"at least {prop['minimum']}")
        if "maximum" in prop and number > prop["maximum"]:
            raise ValueError(f"at most {prop['maximum']}")
        return number
    if "minLength" in prop and len(raw) < prop["minLength"]:
        raise ValueError(f"at least {prop['minLength']} characters")
    if "maxLength" in prop and len(raw) > prop["maxLength"]:
        raise ValueError(f"at most {prop['maxLength']} characters")
    return raw


def _pick(raw: str, choices: list[tuple[Any, str]]) -> Any:
    if raw.isdigit() and 1 <= int(raw) <= len(choices):
        return choices[int(raw) - 1][0]
    raise ValueError(f"choose a number from 1 to {len(choices)}")
