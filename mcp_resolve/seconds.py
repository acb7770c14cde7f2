"""Durations given by users (timeouts, lifetimes): positive, finite numbers of seconds.

Checked where they are given, so that a zero, a negative, an infinite or a NaN timeout (or
a `True` that Python would take for 1) is refused when a tool or a component is built,
never found out when a call waits forever or not at all.
"""

from __future__ import annotations

import math


def seconds(value: object, name: str, error: type[Exception] = ValueError) -> float:
    """`value` as a float, or `error` saying that `name` must be a number of seconds."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise error(f"{name} must be a positive, finite number of seconds, got {value!r}")
    return float(value)
