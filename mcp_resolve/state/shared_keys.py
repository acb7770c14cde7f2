"""Request-state keys that only this process holds, said where an operator looks: the log.

A worker that seals 2026-07-28 request states under a key made when it started refuses
every state sealed by another worker, or by itself before a restart: behind a load
balancer the round fails and the user is asked again. The wire cannot say why (the
refusal, -32602 `Invalid or expired requestState`, is the same for every bad state, so
that a client cannot probe the checks), and nothing fails until a round reaches another
worker. So the worker says it in its log: once when it starts serving HTTP with such a
key, and on each state sealed under a key it does not hold.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("mcp_resolve")

VARIABLE = "MCP_RESOLVE_STATE_KEYS"
"""Where the docs and `KeyRing.from_env()` read the keys every worker shares."""


def warn_keys_of_this_process(server: str, how: str) -> None:
    """At start-up over HTTP: the keys were made for this process alone; `how` says how
    this host takes shared ones."""
    logger.warning(
        "%s serves HTTP with request-state keys made for this process alone: a "
        "2026-07-28 round sealed by another worker, or before a restart, is refused "
        "(-32602 Invalid or expired requestState) and the user is asked again. With "
        "several workers, set %s (the same on every worker) and %s",
        server, VARIABLE, how,
    )  # fmt: skip


def warn_unknown_key(server: str) -> None:
    """A state sealed under a key this worker does not hold: most likely another worker's."""
    logger.warning(
        "%s refused a request state sealed under a key it does not hold: sealed by "
        "another worker, or before a restart? Give every worker the same keys (%s)",
        server, VARIABLE,
    )  # fmt: skip
