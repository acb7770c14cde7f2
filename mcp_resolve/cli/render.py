"""Drawing graphs: a tree per function (plain text, or rich on a terminal) and mermaid.

A resolver's question is drawn from what analysis recorded (`Node.asks`, and the form's
model where there is one), whatever kinds of question there are.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..analysis.nodes import ASYNC, ASYNC_GEN, SYNC, SYNC_GEN, Node
from .registered import Function

KINDS = {ASYNC: "async", SYNC: "sync", ASYNC_GEN: "async generator", SYNC_GEN: "generator"}
RECORDED = "recorded once per call"
"""How a resolver declared `Resolve(fn, once=True)` is marked: its value is recorded."""


def kind(node: Node) -> str:
    """What the resolver is, and for sync code where a call runs it (a worker thread,
    unless declared non-blocking)."""
    label = KINDS.get(node.kind, "?")
    if node.kind in (SYNC, SYNC_GEN) and not node.app:
        label += " (inline)" if node.inline else " (worker thread)"
    return label


Segment = tuple[str, str]  # (text, style name)


@dataclass
class Item:
    """One line of a tree and the lines under it."""

    label: list[Segment]
    children: list[Item] = field(default_factory=list)


_STYLES = {
    "tool": "bold",
    "param": "cyan",
    "resolver": "bold blue",
    "meta": "dim",
    "asks": "bold yellow",
    "app": "bold cyan",
    "once": "bold magenta",
    "argument": "green",
    "context": "magenta",
    "problem": "bold red",
    "ok": "bold green",
    "": "",
}


class Output:
    """Writes lines and trees: with rich on a terminal when it is installed, else plain."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.console: Any = None
        isatty = getattr(stream, "isatty", None)
        if callable(isatty) and isatty():
            with contextlib.suppress(ImportError):
                from rich.console import Console

                self.console = Console(file=stream, highlight=False)
        encoding = getattr(stream, "encoding", None) or "utf-8"  # None: a str buffer
        try:
            "├└│←✓✗·".encode(encoding)
        except (LookupError, UnicodeEncodeError):
            self.unicode = False
        else:
            self.unicode = True

    @property
    def arrow(self) -> str:
        return "←" if self.unicode else "<-"

    @property
    def dot(self) -> str:
        return "·" if self.unicode else "-"

    def mark(self, ok: bool) -> str:
        if self.unicode:
            return "✓" if ok else "✗"
        return "ok" if ok else "error:"

    def line(self, *segments: Segment | str) -> None:
        parts = [(s, "") if isinstance(s, str) else s for s in segments]
        if self.console is not None:
            self.console.print(self._text(parts), soft_wrap=True)
        else:
            self.stream.write("".join(text for text, _ in parts) + "\n")

    def tree(self, item: Item) -> None:
        if self.console is not None:
            from rich.tree import Tree

            def build(node: Item, into: Any) -> None:
                for child in node.children:
                    build(child, into.add(self._text(child.label)))

            root = Tree(self._text(item.label), guide_style="dim")
            build(item, root)
            self.console.print(root)
            return
        branch, last, pipe = ("├── ", "└── ", "│   ") if self.unicode else ("|-- ", "`-- ", "|   ")
        lines = ["".join(text for text, _ in item.label)]

        def walk(children: list[Item], prefix: str) -> None:
            for index, child in enumerate(children):
                final = index == len(children) - 1
                label = "".join(text for text, _ in child.label)
                lines.append(prefix + (last if final else branch) + label)
                walk(child.children, prefix + ("    " if final else pipe))

        walk(item.children, "")
        self.stream.write("\n".join(lines) + "\n")

    @staticmethod
    def _text(parts: list[Segment]) -> Any:
        from rich.text import Text

        return Text.assemble(*((text, _STYLES.get(style, style)) for text, style in parts))


# -- graph -----------------------------------------------------------------------------------


def _asks(node: Node) -> str | None:
    """`asks: form Model`, `asks: url`, `asks: <kind>`: the question a resolver declares;
    `asks once per user: ...` for a user-scoped one, whose accepted answer is kept."""
    if node.asks is None:
        return None
    model = f" {node.schema.__name__}" if node.schema is not None else ""
    return f"asks{' once per user' if node.user else ''}: {node.asks}{model}"


def title(function: Function) -> str:
    """How a function is named in a drawing: a tool by its name, others with their kind."""
    return function.name if function.kind == "tool" else f"{function.kind} {function.name}"


def _order(fn: Callable[..., Any]) -> dict[str, int]:
    try:
        return {name: i for i, name in enumerate(inspect.signature(fn).parameters)}
    except (TypeError, ValueError):
        return {}


def tool_tree(tool: Function, out: Output) -> Item:
    """The tree of one function: resolved parameters, their resolvers, what those take."""
    graph = tool.graph
    label: list[Segment] = [(title(tool), "tool")]
    if graph is None:
        if tool.problems:
            return Item([*label, ("  ", ""), ("invalid graph", "problem")])
        return Item([*label, ("  (no resolvers)", "meta")])
    sep = f" {out.dot} "
    details = []
    if graph.model_parameters:
        asked = graph.asked_parameters  # Ask(...): the user is asked when the client omits it
        listed = (
            p.name + (" (asked if missing)" if p.name in asked else "")
            for p in graph.model_parameters
        )
        details.append("arguments: " + ", ".join(listed))
    if graph.context_parameters:
        details.append("context: " + ", ".join(graph.context_parameters))
    if details:
        label.append(("  " + sep.join(details), "meta"))
    if not graph.nodes:
        label.append(("  (no resolvers)", "meta"))
    shown: set[int] = set()

    def resolver(consumer: str, index: int) -> Item:
        node = graph.nodes[index]
        head: list[Segment] = [(consumer, "param"), (f" {out.arrow} ", ""), (node.name, "resolver")]
        if index in shown:
            once = (
                "runs once per signed-in user"
                if node.user
                else "runs once per server lifespan"
                if node.app
                else RECORDED
                if node.once
                else "runs once per call"
            )
            return Item([*head, (f"  (shown above; {once})", "meta")])
        shown.add(index)
        head.append((f"  {kind(node)}{sep}key {node.key}", "meta"))
        if node.app:
            head.extend([(sep, "meta"), (_scope(node), "app")])
        if node.once:
            head.extend([(sep, "meta"), (RECORDED, "once")])
        asks = _asks(node)
        if asks is not None:
            head.extend([(sep, "meta"), (asks, "asks")])
        entries: list[tuple[str, Item]] = []
        for name, dep, *_ in node.dep_params:
            entries.append((name, resolver(name, dep)))
        for name, argument in node.argument_params:
            what = "tool argument" if tool.kind == "tool" else f"{tool.kind} argument"
            text = what + ("" if name == argument else f" {argument}")
            entries.append(
                (name, Item([(name, "param"), (f" {out.arrow} ", ""), (text, "argument")]))
            )
        for name in node.context_params:
            entries.append(
                (name, Item([(name, "param"), (f" {out.arrow} ", ""), ("context", "context")]))
            )
        for name in node.capability_params:
            caps = ("client capabilities", "context")
            entries.append((name, Item([(name, "param"), (f" {out.arrow} ", ""), caps])))
        for name in node.user_params:
            who = ("signed-in user", "context")
            entries.append((name, Item([(name, "param"), (f" {out.arrow} ", ""), who])))
        for name in node.key_params:
            key = ("idempotency key of the call", "context")
            entries.append((name, Item([(name, "param"), (f" {out.arrow} ", ""), key])))
        order = _order(node.fn)
        known = {name for name, _ in entries}
        with contextlib.suppress(TypeError, ValueError):
            for param in inspect.signature(node.fn).parameters.values():
                if param.name in known or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    continue
                if param.default is not param.empty:
                    default = Item([(param.name, "param"), (f" = {param.default!r}", "meta")])
                    entries.append((param.name, default))
        entries.sort(key=lambda entry: order.get(entry[0], len(order)))
        return Item(head, [item for _, item in entries])

    children = [resolver(target.parameter, target.node) for target in graph.targets]
    return Item(label, children)


def mermaid(tools: Sequence[Function]) -> str:
    """A mermaid `graph TD` of the functions: each, its resolvers, arguments and context."""
    lines = ["```mermaid", "graph TD"]
    for t, tool in enumerate(tools):
        tid = f"t{t}"
        lines.append(f'  {tid}["{_mm(title(tool))}"]:::tool')
        graph = tool.graph
        if graph is None or not graph.nodes:
            note = "invalid graph" if graph is None and tool.problems else "no resolvers"
            lines.append(f'  {tid}_none["{note}"]:::{"problem" if tool.problems else "note"}')
            lines.append(f"  {tid} -.- {tid}_none")
            continue
        arguments: dict[str, str] = {}
        for node in graph.nodes:
            text = [f"<b>{_mm(node.name)}</b>", KINDS.get(node.kind, "?")]
            asks = _asks(node)
            if asks is not None:
                text.append(_mm(asks))
            if node.app:
                text.append(_scope(node))
            if node.once:
                text.append(RECORDED)
            style = "asks" if asks is not None else "app" if node.app else "resolver"
            lines.append(f'  {tid}_r{node.index}["{"<br/>".join(text)}"]:::{style}')
        for target in graph.targets:
            lines.append(f"  {tid} -->|{_mm(target.parameter)}| {tid}_r{target.node}")
        for node in graph.nodes:
            source = f"{tid}_r{node.index}"
            for name, dep, *_ in node.dep_params:
                lines.append(f"  {source} -->|{_mm(name)}| {tid}_r{dep}")
            for name, argument in node.argument_params:
                if argument not in arguments:
                    arguments[argument] = f"{tid}_a{len(arguments)}"
                    lines.append(f'  {arguments[argument]}(["{_mm(argument)}"]):::argument')
                edge = "" if name == argument else f"|{_mm(name)}|"
                lines.append(f"  {source} -.->{edge} {arguments[argument]}")
            if node.context_params:
                lines.append(f'  {tid}_ctx[/"context"/]:::context')
                for name in node.context_params:
                    lines.append(f"  {source} -.->|{_mm(name)}| {tid}_ctx")
            if node.user_params:
                lines.append(f'  {tid}_user[/"signed-in user"/]:::context')
                for name in node.user_params:
                    lines.append(f"  {source} -.->|{_mm(name)}| {tid}_user")
            if node.capability_params:
                lines.append(f'  {tid}_caps[/"client capabilities"/]:::context')
                for name in node.capability_params:
                    lines.append(f"  {source} -.->|{_mm(name)}| {tid}_caps")
            if node.key_params:
                lines.append(f'  {tid}_key[/"idempotency key"/]:::context')
                for name in node.key_params:
                    lines.append(f"  {source} -.->|{_mm(name)}| {tid}_key")
    lines += [
        "  classDef tool font-weight:bold,stroke-width:2px",
        "  classDef resolver fill:#eef4ff,stroke:#5b7bd5",
        "  classDef asks fill:#fff4d6,stroke:#d4a017",
        "  classDef argument fill:#eaf7ea,stroke:#4b9b4b",
        "  classDef context fill:#f6eaf7,stroke:#9b4b9b",
        "  classDef problem fill:#fde8e8,stroke:#c53030",
        "  classDef note fill:#f4f4f4,stroke:#999",
        "```",
    ]
    if any(node.app for tool in tools if tool.graph for node in tool.graph.nodes):
        lines.insert(-1, "  classDef app fill:#e6f6f6,stroke:#2c8c8c")
    return "\n".join(lines)


def _scope(node: Node) -> str:
    """How a scoped resolver is marked: once per server lifespan, or per signed-in user."""
    if node.user:
        return "user-scoped" if node.ttl is None else f"user-scoped, kept {node.ttl:g} s"
    return "app-scoped, built at startup" if node.eager else "app-scoped"


def _mm(text: str) -> str:
    """Text safe inside a quoted mermaid label or an edge label."""
    for raw, entity in (
        ("&", "#amp;"),
        ('"', "#quot;"),
        ("<", "#lt;"),
        (">", "#gt;"),
        ("|", "#124;"),
    ):
        text = text.replace(raw, entity)
    return text
