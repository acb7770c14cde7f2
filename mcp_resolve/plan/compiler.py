"""The walk of one graph as straight-line code, generated once per graph.

A generic loop over nodes spends most of a trivial call on interpretation: list lookups,
attribute reads and branches that are the same on every call. Generating the walk per
graph leaves only what hand-written wiring would do (call each resolver with its
arguments, await it, store the value) plus two cheap checks per resolver: whether it
asked a question, and whether the concurrent scheduler has taken over. Only references
and indices are spliced into the source; names come from `str.isidentifier()` parameter
names, so no user text is ever executed.

Each level is planned from what the engine has learned about its resolvers. Those known
to finish without waiting are called inline. If two or more things in the level wait or
may (async resolvers not yet seen, or seen waiting, and the level's sync resolvers as one
thread hop), the rest of the graph is handed to the scheduler, which starts each resolver
in a task group; otherwise the one waiting thing is awaited inline too. What is learned
flips a per-level flag the walk reads (the code is never generated again), so a graph of
trivial resolvers ends up as straight calls and a graph of slow ones as tasks.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Coroutine
from typing import Any

from ..analysis.graph import Graph
from ..analysis.nodes import ASYNC, SYNC, Node
from ..analysis.scopes import answer_bound
from ..client_requests import QUESTION_CLASSES
from ..outcomes import OUTCOME_TYPES
from ..user import CALLING
from .finish import Finish, finish_lines

PENDING: Any = object()
"""A resolver's value before it has run."""
STARTED: Any = object()
"""A call's result while its first walk runs (`compile_first`): neither resolved nor asked."""
BLOCKED: Any = object()
"""A resolver that cannot run this round: something it depends on asked a question."""

Walk = Callable[[Any], Coroutine[Any, Any, None]]
"""The generated walk, called with the call's resolution (whose attributes it drives)."""
First = Callable[[Any], Coroutine[Any, Any, Any]]
"""The generated first walk of a straight plan: a walk and its finish in one."""


def compile_walk(graph: Graph, concurrent: list[bool], straight: bool = False) -> Walk:
    """The walk of `graph`, reading `concurrent` (one flag per level) as it goes.

    The code is the same whatever the engine learns; only the flags change: a level whose
    flag is set hands the rest of the graph to the scheduler, any other level runs inline.
    So learning never regenerates code on a live call. A level with at most one thing
    that can wait (one async resolver, or its sync resolvers as one hop) can never need
    the scheduler and gets no check at all. A `straight` walk (`Plan.straight`: nothing in
    it can wait, so no driver watches it) does not record which resolver it awaits.
    """
    namespace: dict[str, Any] = {
        "_PENDING": PENDING,
        "_QUESTIONS": QUESTION_CLASSES,
        "_OUTCOMES": OUTCOME_TYPES,
        "_CONCURRENT": concurrent,
        "_STARTED": STARTED,
    }
    body = _levels(graph, namespace, straight) or ["    return"]  # a graph with no resolver
    source = "\n".join(["async def walk(res):", *_loads(body), *body]) + "\n"
    code = compile(source, f"<mcp_resolve walk of {graph.tool}>", "exec")
    exec(code, namespace)
    walk: Walk = namespace["walk"]
    return walk


_LOADS = (
    ("values", "res._values", r"\bvalues\["),
    ("args", "res._args", r"\bargs\."),
    ("ctx", "res._context", r"\bctx\b"),
)


def _loads(body: list[str]) -> list[str]:
    """The call's attributes a walk's `body` reads, each into a local once, and only those
    it reads (a load nothing reads is bytecode on every call)."""
    text = "\n".join(body)
    return [f"    {name} = {source}" for name, source, used in _LOADS if re.search(used, text)]


def _levels(
    graph: Graph, namespace: dict[str, Any], straight: bool, local: dict[int, bool] | None = None
) -> list[str]:
    """The walk's body, level by level (see `compile_walk`; `compile_first` passes `local`,
    an empty dict it reads afterwards: which values are in locals, and which are vetted)."""
    fresh = local is not None
    vetted = _vetted(graph, namespace) if fresh else {}
    lines = []
    # App-scoped values the call itself uses; those only other app-scoped resolvers use
    # are the scope's business (it builds them with what needs them). A user-scoped value
    # that comes from an answer is the call's business too: its question stops what
    # depends on it, so the call looks each of them up itself, in order.
    looked_up = {t.node for t in graph.targets}
    looked_up.update(d for n in graph.nodes if not n.app for d in n.deps)
    answered = answer_bound(graph.nodes)
    looked_up.update(answered)
    if any(node.app for node in graph.nodes):
        lines.append("    appv = res._app_values")
    done = "return _finish(res)" if fresh else "return"
    # A first walk keeps plain resolvers' values in locals (`r3`), stored into the call's
    # list only where other code reads it: before the scheduler, a hop or the general walk.
    for depth, level in enumerate(graph.levels):
        nodes = [graph.nodes[i] for i in level]
        for node in nodes:
            if node.app and node.index in looked_up:
                asks = node.index in answered
                lines.extend(_app_node(node, namespace, asks, local if asks else None))
        waiting = [n for n in nodes if n.is_async and not n.app]
        sync = [n for n in nodes if not n.is_async]
        # A straight plan's levels never run concurrently (nothing in them is learned to wait).
        if not straight and sum(1 for n in waiting if not n.inline) + (1 if sync else 0) >= 2:
            lines.append(f"    if _CONCURRENT[{depth}]:")
            lines.extend(_stored(local, "        "))
            lines.append("        await res._concurrently()")
            lines.append(f"        {done}")
        for node in waiting:
            test = vetted.get(node.index)
            lines.extend(_async_node(node, namespace, not straight, local, test))
        if sync:
            lines.extend(_stored(local, "    "))
            names = []
            for node in sync:
                namespace[f"N{node.index}"] = node
                names.append(f"N{node.index}")
            lines.append(f"    batch = [n for n in ({', '.join(names)},)")
            lines.append("             if values[n.index] is _PENDING")
            lines.append("             and not (res._stuck and res._blocked(n))]")
            later = [graph.nodes[i] for lv in graph.levels[depth + 1 :] for i in lv]
            for node in later:
                if not node.is_async:
                    namespace[f"N{node.index}"] = node
            extend = ", ".join(f"N{n.index}" for n in later if not n.is_async)
            lines.append("    if batch:")
            lines.append(f"        await res._hop_walk(batch, ({extend}{',' if extend else ''}))")
            if fresh:  # a sync resolver asked: the general walk takes the rest
                lines.append("        if res._stuck:")
                lines.append("            return await _rest(res)")
    return lines


def concurrent_levels(graph: Graph) -> list[bool]:
    """Per level: do two or more of its things wait, or may they (so the scheduler runs it)?

    A thing is an async resolver not known to finish at once, or the level's sync
    resolvers, which share one worker-thread hop.
    """
    return [concurrent_level(graph, level) for level in graph.levels]


def concurrent_level(graph: Graph, level: tuple[int, ...]) -> bool:
    nodes = [graph.nodes[i] for i in level]
    maybe = sum(1 for n in nodes if n.is_async and not n.app and n.suspends is not False)
    sync = any(not n.is_async for n in nodes)
    return maybe + (1 if sync else 0) >= 2


def _app_node(
    node: Node, namespace: dict[str, Any], asks: bool = False, local: dict[int, bool] | None = None
) -> list[str]:
    """An app-scoped value: a lookup in the server's scope, which builds it when missing.

    Once built it costs a dictionary lookup, less than calling a resolver that returns a
    constant. A build that waits is not learned from (it happens once per lifespan), so
    the walk's current resolver is cleared for the driver first. A user-scoped value that
    may come from an answer (`asks`) may instead settle a question in the call: it is
    not looked up while something it depends on asked, and a first walk (`local` given)
    hands over to the general walk once it asked.
    """
    i = node.index
    namespace[f"N{i}"] = node
    namespace[f"K{i}"] = node.app_key
    condition = f"values[{i}] is _PENDING"
    if asks and node.deps:
        condition += f" and not (res._stuck and res._blocked(N{i}))"
    lines = [
        f"    if {condition}:",
        f"        v = appv.get(K{i}, _PENDING)",
        "        if v is _PENDING:",
        "            res._current = None",
        f"            v = await res._app_value(N{i})",
    ]
    if local is not None:  # a first walk: what is known so far goes to the list
        lines += ["            if res._stuck:", f"                values[{i}] = v"]
        lines += _stored(local, "                ")
        lines.append("                return await _rest(res)")
    lines.append(f"        values[{i}] = v")
    return lines


def _stored(local: dict[int, bool] | None, indent: str) -> list[str]:
    """The first walk's local values stored into the call's list (see `_levels`), on a
    branch that leaves it (so the walk loads the list only where it reads it)."""
    return [f"{indent}res._values[{j}] = r{j}" for j in local or ()]


def _vetted(graph: Graph, namespace: dict[str, Any]) -> dict[int, str]:
    """For a first walk: per resolver whose every consumer (resolver or tool parameter)
    takes its value unchanged when the value's class passes one test, that test.

    The resolver's value is tested once, right after it returns, where it is already
    tested for being a question: a value that fails (a question, or one some consumer
    converts) hands the call to the general walk, which converts per consumer; the
    others reach every consumer with no test of their own. A consumer that converts
    every value (an `ElicitationResult` parameter) leaves its resolver's consumers to
    test each value as before.
    """
    exacts: dict[int, list[frozenset[type] | None]] = {}
    for node in graph.nodes:
        for _, dep, _, exact in node.dep_params:
            exacts.setdefault(dep, []).append(exact)
    for target in graph.targets:
        exacts.setdefault(target.node, []).append(target.exact)
    namespace["_ASKS_OR_CONVERTS"] = QUESTION_CLASSES | OUTCOME_TYPES
    tests = {}
    for i, found in exacts.items():
        sets = [exact for exact in found if exact is not None]
        if not sets:  # every consumer converts outcomes only
            tests[i] = "in _ASKS_OR_CONVERTS"
            continue
        passing = frozenset.intersection(*sets) - OUTCOME_TYPES - QUESTION_CLASSES
        if passing:
            namespace[f"V{i}"] = passing
            tests[i] = f"not in V{i}"
    return tests


def _async_node(
    node: Node,
    namespace: dict[str, Any],
    track: bool = True,
    local: dict[int, bool] | None = None,
    test: str | None = None,
) -> list[str]:
    """One resolver called and its value stored. For a first walk (`compile_first`),
    `local` holds the resolvers whose values are in locals so far (True: vetted): this
    leaves out the checks a first walk cannot need (nothing is settled yet and nothing has
    asked) and keeps a plain resolver's value in a local of its own, added to `local`,
    tested with `test` for all its consumers when it has one (`_vetted`)."""
    fresh = local is not None
    i = node.index
    namespace[f"N{i}"] = node
    namespace[f"f{i}"] = node.fn
    condition = f"values[{i}] is _PENDING"
    if node.deps:
        condition += f" and not (res._stuck and res._blocked(N{i}))"
    if fresh:  # `if True` compiles to nothing; a generator keeps the check the rehearsal
        # relies on to skip it (`rehearsal._bare_call` settles it in advance); a recorded
        # resolver's value goes to the list, where the host reads it to record it
        plain = (node.kind == ASYNC or (node.inline and node.kind == SYNC)) and not node.once
        condition = "True" if plain else f"values[{i}] is _PENDING"
    else:
        plain = False
    lines = [f"    if {condition}:"]
    call_args: list[str] = []
    for name in node.context_params:
        call_args.append(_keyword(name, "ctx", namespace, i, len(call_args)))
    for name in node.capability_params:
        caps = "res._capabilities"  # None unless a host gives them
        call_args.append(_keyword(name, caps, namespace, i, len(call_args)))
    for name in node.user_params:  # the call's signed-in user, as its host set it
        namespace["_USER"] = CALLING.get
        call_args.append(_keyword(name, "_USER()", namespace, i, len(call_args)))
    for name in node.key_params:  # the call's idempotency key for this resolver
        call_args.append(_keyword(name, f"res._keys[{i}]", namespace, i, len(call_args)))
    for name, argument in node.argument_params:
        a = f"a{len(call_args)}"  # each value straight into its own local: no shuffling
        lines.append(f"        {a} = args.get({argument!r}, _PENDING)")
        lines.append(f"        if {a} is _PENDING:")
        lines.append(f"            res._missing(N{i}, {name!r}, {argument!r})")
        call_args.append(_keyword(name, a, namespace, i, len(call_args)))
    for k, (name, dep, convert, exact) in enumerate(node.dep_params):
        namespace[f"C{i}_{k}"] = convert
        where = f"{node.name}.{name}"
        a = f"a{len(call_args)}"
        if local and local.get(dep):  # vetted where it was made: taken as it is
            call_args.append(_keyword(name, f"r{dep}", namespace, i, len(call_args)))
            continue
        held = f"r{dep}" if local and dep in local else f"values[{dep}]"  # a local, if any
        lines.append(f"        {a} = {held}")
        if exact is None:
            lines.append(f"        if {a}.__class__ in _OUTCOMES:")
        else:
            namespace[f"E{i}_{k}"] = exact
            lines.append(f"        if {a}.__class__ not in E{i}_{k}:")
        lines.append(f"            {a} = res._convert(C{i}_{k}, {a}, {dep}, {where!r})")
        call_args.append(_keyword(name, a, namespace, i, len(call_args)))
    call = f"f{i}({', '.join(call_args)})"
    if node.inline:  # sync, declared non-blocking: called on the loop, never waits
        awaited = call if node.kind == SYNC else f"res._first_sync(N{i}, {call})"
    else:
        awaited = "await " + (call if node.kind == ASYNC else f"res._first(N{i}, {call})")
        if track:  # what the driver reads when the walk waits
            lines.append(f"        res._current = N{i}")
    r = f"r{i}" if plain else "r"
    vetted = plain and test is not None
    lines += [
        "        try:",
        f"            {r} = {awaited}",
        "        except BaseException:",
        f"            res._fail(N{i})",
        "            raise",
        f"        if {r}.__class__ {test if vetted else 'in _QUESTIONS'}:",
    ]
    # It asked, or a consumer converts its value: what is known so far goes to the list,
    # the general walk goes on (and converts per consumer).
    if fresh:
        lines += _stored(local, "            ")
        lines += [f"            res._settle(N{i}, {r})", "            return await _rest(res)"]
    else:
        lines += [f"            res._settle(N{i}, r)", "        else:"]
        lines.append(f"            values[{i}] = r")
    if plain and local is not None:
        local[i] = vetted
    elif fresh:
        lines.append(f"        values[{i}] = r")
    if node.suspends is None:  # learn: had it waited, the driver would have said so
        lines += [
            f"        if N{i}.suspends is None:",
            f"            res._learned(N{i})",
        ]
    return lines


def _keyword(name: str, expression: str, namespace: dict[str, Any], i: int, k: int) -> str:
    """`name=expression`, or a `**{...}` splat for a name that is not a plain identifier."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return f"{name}={expression}"
    namespace[f"K{i}_{k}"] = name
    return f"**{{K{i}_{k}: {expression}}}"


def compile_first(graph: Graph, walk: Walk, finish: Finish, resolved: type) -> First:
    """The first walk of a call of a `straight` plan, ending with its finish.

    Most calls are one walk that asks nothing, and on a host every bytecode of it counts
    (cold caches between calls make each one several times dearer than in a loop: see
    benchmarks/HISTORY.md, issue 32). This walk is the general one without what only a
    later walk or a question needs: no value is checked for being settled (none is yet),
    no dependency for having asked (none has), and the finish is inlined, with no
    coroutine of `resolve` around it. The moment a resolver asks, it settles the question
    and hands over to the general walk, which skips what is settled and goes on.
    Generated into the walk's namespace, so that the rehearsal stages both at once.
    """
    namespace = walk.__globals__
    namespace["_finish"] = finish
    local: dict[int, bool] = {}
    body = _levels(graph, namespace, True, local)
    body += finish_lines(graph, namespace, resolved, local)
    lines = [
        "async def _rest(res):",
        "    await walk(res)",
        "    return _finish(res)",
        "async def first(res):",
        "    res._result = _STARTED",  # a second `resolve()` after a failure walks generally
        *_loads(body),
        *body,
    ]
    code = compile("\n".join(lines) + "\n", f"<mcp_resolve first walk of {graph.tool}>", "exec")
    exec(code, namespace)
    first: First = namespace["first"]
    return first
