"""The run order and the question keys of a graph's resolvers, fixed once at analysis."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .nodes import Node
from .package_names import qualified_name


def number(discovered: list[Node], by_id: Mapping[object, Node]) -> list[Node]:
    """Number the nodes by (level, discovery order) and link each to its dependencies.

    A node's level is the longest path from it to a leaf; dependencies come first in
    discovery order, so one pass computes every level.
    """
    for node in discovered:
        node.level = 1 + max((by_id[d[1]].level for d in node.pending_deps), default=-1)
    ordered = sorted(discovered, key=lambda node: node.level)
    for index, node in enumerate(ordered):
        node.index = index
    for node in ordered:
        node.dep_params = tuple((p, by_id[d].index, c, e) for p, d, c, e in node.pending_deps)
        node.deps = tuple(dict.fromkeys(by_id[d[1]].index for d in node.pending_deps))
        for dep in node.deps:
            ordered[dep].dependents.append(node.index)
    return ordered


def assign_keys(nodes: list[Node]) -> Iterator[tuple[str, str, str]]:
    """Give each node its question key; yield (first, second, key) for each shared key.

    An explicit `Resolve(key=...)` wins; otherwise the key is the resolver's
    `module:qualname` (the original's, for a substituted resolver), with `#2`, `#3`... for
    the same function reached as several nodes.
    """
    explicit: dict[str, str] = {}
    for node in nodes:
        if node.explicit_key is not None:
            if node.explicit_key in explicit:
                yield explicit[node.explicit_key], node.name, node.explicit_key
                continue
            explicit[node.explicit_key] = node.name
            node.key = node.explicit_key
    taken = set(explicit)
    for node in nodes:
        if node.explicit_key is not None:
            continue
        base = qualified_name(node.replaces or node.fn)
        key, n = base, 1
        while key in taken:
            n += 1
            key = f"{base}#{n}"
        taken.add(key)
        node.key = key
