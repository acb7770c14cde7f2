"""Paired differences: what a resolved call costs over its floor, measured so it holds still.

On a shared 2-core VM the speed of the machine drifts by tens of percent within seconds, so
two medians taken a few seconds apart do not subtract well. Here every resolved call is
timed right next to a plain call of the same server (alternating which goes first), and
the figure is the median of those per-pair differences. Spread: the per-round medians of
the differences (each round is a few hundred pairs), reported as min..max and IQR.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass
class Paired:
    """The per-pair differences of one scenario on one server, round by round."""

    rounds: list[list[float]] = field(default_factory=list)

    def add_round(self, differences: list[float]) -> None:
        self.rounds.append(differences)

    @property
    def median(self) -> float:
        return statistics.median(d for r in self.rounds for d in r)

    @property
    def round_medians(self) -> list[float]:
        return [statistics.median(r) for r in self.rounds]

    def spread(self) -> str:
        medians = sorted(self.round_medians)
        if len(medians) < 2:
            return "-"
        q1, _, q3 = statistics.quantiles(medians, n=4)
        return f"{medians[0]:.1f}..{medians[-1]:.1f} (IQR {q3 - q1:.1f})"


def ratio(theirs: Paired, ours: Paired) -> tuple[float, str]:
    """Their overhead over ours, pooled, and its min..max over rounds."""
    pooled = theirs.median / ours.median if ours.median > 0 else float("inf")
    per_round = sorted(
        t / o for t, o in zip(theirs.round_medians, ours.round_medians, strict=True) if o > 0
    )
    spread = f"{per_round[0]:.1f}..{per_round[-1]:.1f}" if per_round else "-"
    return pooled, spread
