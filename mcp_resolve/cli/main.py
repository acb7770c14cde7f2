"""The commands: `graph` and `check` on loaded targets, `demo`, and the exit statuses."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from types import UnionType
from typing import Any, Union, get_args, get_origin

from ..analysis.blocking import hops
from ..analysis.nodes import ASYNC_GEN, SYNC_GEN, Node, type_hints
from ..errors import InvalidSignature
from .failures import EXIT_BROKEN_PIPE, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, TargetError
from .registered import KINDS, Function, Target
from .render import Output, mermaid, tool_tree
from .targets import load_all


def report(problems: Sequence[InvalidSignature], out: Output) -> None:
    """Each problem: what it concerns on one line, then what is wrong and the fix."""
    for problem in problems:
        subject = [f"{problem.kind} {problem.name!r}"]
        if problem.resolver is not None:
            subject.append(f"resolver {problem.resolver!r}")
        if problem.parameter is not None:
            subject.append(f"parameter {problem.parameter!r}")
        out.line((out.mark(False) + " ", "problem"), (", ".join(subject), "problem"))
        for text in problem.problem.splitlines():
            out.line("    " + text)
        if problem.fix is not None:
            out.line(("    fix: ", "meta"), problem.fix)


def command_graph(options: argparse.Namespace, out: Output) -> int:
    targets = load_all(options.targets)
    functions = [function for target in targets for function in target.functions]
    if options.mermaid:
        out.stream.write(mermaid(functions) + "\n")
    else:
        first = True
        for target in targets:
            if target.is_server:
                if not first:
                    out.line("")
                out.line((target.title, "tool"), (f"  {target.spec}, {_served(target)}", "meta"))
            for function in target.functions:
                if not first or target.is_server:
                    out.line("")
                first = False
                out.tree(tool_tree(function, out))
    problems = [problem for function in functions for problem in function.problems]
    if problems:
        (sys.stderr if options.mermaid else out.stream).flush()
        err = out if not options.mermaid else Output(sys.stderr)
        err.line("")
        report(problems, err)
        err.line(f"{_count(len(problems), 'problem')}")
        return EXIT_PROBLEMS
    return EXIT_OK


def command_check(options: argparse.Namespace, out: Output) -> int:
    targets = load_all(options.targets)
    functions = [function for target in targets for function in target.functions]
    problems = [problem for function in functions for problem in function.problems]
    graphs = [function.graph for function in functions if function.graph is not None]
    resolvers = sum(len(graph.nodes) for graph in graphs)
    kinds = [node.asks for graph in graphs for node in graph.questions.values()]
    first = ["form", "url", "sampling", "roots"]
    order = sorted(set(kinds), key=lambda k: (first.index(k) if k in first else 4, str(k)))
    asks = ", ".join(f"{kinds.count(k)} {k}" for k in order)
    unseen = sum(1 for graph in graphs for node in graph.nodes if may_ask_unseen(node))
    hopping = sorted({node.name for graph in graphs for node in graph.nodes if hops(node)})
    recorded = sorted({node.name for graph in graphs for node in graph.recorded})
    where = ", ".join(options.targets)
    if problems:
        report(problems, out)
        failing = sum(1 for function in functions if function.problems)
        out.line(
            (f"{out.mark(False)} {where}: ", "problem"),
            f"{_count(len(problems), 'problem')} in {failing} of {_counted(functions)}",
        )
        return EXIT_PROBLEMS
    out.line(
        (f"{out.mark(True)} {where}: ", "ok"),
        f"{_counted(functions)} checked, {_count(resolvers, 'resolver')}, "
        f"{_count(len(kinds), 'question')}{f' ({asks})' if asks else ''}"
        f"{_unseen(unseen)}{_hopping(hopping)}{_recorded(recorded)}; no problems",
    )
    return EXIT_OK


def may_ask_unseen(node: Node) -> bool:
    """Whether a resolver may return a question that no return annotation declares: one
    annotated with nothing, `Any` or `object` (its questions are checked when asked)."""
    if node.asks is not None or node.app:  # declared; an app-scoped one cannot ask
        return False
    try:
        returns = type_hints(node.fn).get("return", inspect.Parameter.empty)
    except Exception:  # annotations that cannot be read say nothing either
        return True
    if node.kind in (ASYNC_GEN, SYNC_GEN) and get_args(returns):
        returns = get_args(returns)[0]
    members = get_args(returns) if get_origin(returns) in (Union, UnionType) else (returns,)
    return any(m in (inspect.Parameter.empty, Any, object) for m in members)


def _unseen(n: int) -> str:
    """How many resolvers `check` cannot see the questions of, when there are any."""
    if not n:
        return ""
    which = "resolver declares" if n == 1 else "resolvers declare"
    return f"; {n} {which} no questions in a return annotation (checked when asked)"


def _hopping(names: list[str]) -> str:
    """Which sync resolvers cost each call a worker-thread hop, when there are any."""
    if not names:
        return ""
    which = "sync resolver hops" if len(names) == 1 else "sync resolvers hop"
    return f"; {len(names)} {which} to a worker thread ({', '.join(names)})"


def _recorded(names: list[str]) -> str:
    """Which resolvers run once per call, their values recorded, when there are any."""
    if not names:
        return ""
    which = "resolver is" if len(names) == 1 else "resolvers are"
    return f"; {len(names)} {which} recorded once per call ({', '.join(names)})"


def _served(target: Target) -> str:
    """`5 tools`, or `2 tools, 1 prompt, 1 resource template` for a server that has them."""
    return ", ".join(_kinds(target.functions))


def _counted(functions: Sequence[Function]) -> str:
    """`3 tools`, or `3 tools, 1 prompt and 1 resource template`."""
    parts = _kinds(functions)
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _kinds(functions: Sequence[Function]) -> list[str]:
    """`["3 tools", "1 prompt"]`: each kind there is (tools alone when there is none)."""
    counts = [(kind, sum(1 for f in functions if f.kind == kind)) for kind in KINDS]
    return [_count(n, kind) for kind, n in counts if n] or [_count(0, "tool")]


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-resolve",
        description="Draw and check the resolver graphs of MCP tools, prompts and resource "
        "templates; run the demo.",
        epilog="A TARGET is module:attribute or path/to/file.py:attribute (a tool function, "
        "an MCPServer, a FastMCP server, a low-level Server with ResolvedTools, or "
        "ResolvedTools).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    on_targets = {
        "graph": (
            command_graph,
            "draw the resolver graph of a tool, or of everything a server serves",
            "Draw the resolver graph of a tool, or of every tool, prompt and resource "
            "template of a server.",
        ),
        "check": (
            command_check,
            "build every graph and report every problem (exit status 1 if any)",
            "Build the graph of every tool, prompt and resource template and report every "
            "problem, with the resolver, the parameter and the fix. Exit status 1 if any.",
        ),
    }
    for name, (run, summary, description) in on_targets.items():
        command = commands.add_parser(name, help=summary, description=description)
        command.add_argument("targets", nargs="+", metavar="TARGET")
        command.set_defaults(run=run)
        if name == "graph":
            command.add_argument(
                "--mermaid", action="store_true", help="print a mermaid `graph TD` block for docs"
            )
    commands.add_parser(
        "demo",
        help="the README's demo (options: see `mcp-resolve demo --help`)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The `mcp-resolve` console script; returns the exit status."""
    try:
        status = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # now, while a reader that went away can still be handled
    except BrokenPipeError:
        return _reader_gone()
    return status


def _main(args: list[str]) -> int:
    if args and args[0] == "demo":
        try:
            from ..demo import main as demo
        except ImportError as exc:
            print(
                f"mcp-resolve: error: the demo needs the MCP SDK ({exc}); "
                'install it with: pip install "mcp-resolve[mcp]"',
                file=sys.stderr,
            )
            return EXIT_USAGE
        demo(args[1:])
        return EXIT_OK
    try:
        options = _parser().parse_args(args)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE
    run: Callable[[argparse.Namespace, Output], int] = options.run
    try:
        return run(options, Output(sys.stdout))
    except TargetError as error:
        sys.stdout.flush()
        print(f"mcp-resolve: error: {error}", file=sys.stderr)
        return error.status


def _reader_gone() -> int:
    """The reader of standard output stopped early (`| head`): stop quietly.

    Whatever is still buffered cannot be written; pointing standard output at the null
    device keeps the interpreter's final flush from reporting the broken pipe again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (captured), nothing left to flush
        pass
    return EXIT_BROKEN_PIPE
