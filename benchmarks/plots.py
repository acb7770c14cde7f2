"""The plots of benchmarks/README.md, drawn from the benchmarks' own JSON output.

Run from the repository root:

    .venv/bin/python benchmarks/plots.py    # benchmarks/results/*.json -> benchmarks/plots/*.svg

The JSON files are what `--json PATH` of host.py, sdk.py, fastmcp_depends.py and
held_waits.py write (the commands are in the README's table and in each file's `command`).
The SVG is written by hand here, a few rectangles, lines and labels, so that the plots need
no plotting library; every number a plot shows is printed from the JSON, and the same JSON
gives the same bytes, which tests/tooling/test_benchmark_plots.py checks against the
committed plots.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
WIDTH = 780
PEER_COLOUR = "#9a9a9a"
OURS_COLOUR = "#2f6db5"
SERIES_COLOURS = ("#2f6db5", "#9a9a9a", "#d0782a")
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'


class Svg:
    """An SVG document built element by element, every coordinate rounded to a tenth, so
    that the same figures always give the same bytes."""

    def __init__(self, width: int, height: float, title: str) -> None:
        self.width, self.height, self.title = width, height, title
        self.parts: list[str] = []

    def text(self, x: float, y: float, words: str, anchor: str = "start", **style: Any) -> None:
        extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in style.items())
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(words)}</text>'
        )

    def line(self, x1: float, y1: float, x2: float, y2: float, colour: str, **style: Any) -> None:
        extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in style.items())
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{colour}"{extra}/>'
        )

    def rect(self, x: float, y: float, w: float, h: float, colour: str) -> None:
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{h:.1f}" '
            f'fill="{colour}"/>'
        )

    def polyline(self, points: Iterable[tuple[float, float]], colour: str) -> None:
        joined = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.parts.append(
            f'<polyline points="{joined}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )

    def dot(self, x: float, y: float, colour: str) -> None:
        self.parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>')

    def __str__(self) -> str:
        width, height = self.width, round(self.height)
        head = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {FONT} font-size="12">',
            f"<title>{escape(self.title)}</title>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        ]
        return "\n".join([*head, *self.parts, "</svg>"]) + "\n"


class LogScale:
    """Positions on a logarithmic axis from `low` to `high`, drawn from `start` to `end`."""

    def __init__(self, low: float, high: float, start: float, end: float) -> None:
        self.low, self.high = math.log10(low), math.log10(high)
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        share = (math.log10(max(value, 10**self.low)) - self.low) / (self.high - self.low)
        return self.start + share * (self.end - self.start)

    def ticks(self) -> list[float]:
        """1, 2 and 5 times each power of ten inside the axis."""
        found = []
        for power in range(math.floor(self.low), math.ceil(self.high) + 1):
            for step in (1, 2, 5):
                tick = step * 10.0**power
                if 10**self.low <= tick * 1.0001 and tick <= 10**self.high * 1.0001:
                    found.append(tick)
        return found


def bounds(values: Iterable[float]) -> tuple[float, float]:
    """A log axis that holds `values`: from the power of ten below the least to the next 1,
    2 or 5 step above the greatest."""
    values = [v for v in values if v > 0]
    low = 10.0 ** math.floor(math.log10(min(values)))
    top = max(values)
    power = 10.0 ** math.floor(math.log10(top))
    high = next(step * power for step in (1, 2, 5, 10) if step * power >= top)
    return low, high


def number(value: float) -> str:
    """A tick label: no trailing `.0`, thousands without separators."""
    return f"{value:g}" if value < 1 else f"{value:.0f}"


def caption(svg: Svg, y: float, results: list[dict[str, Any]]) -> float:
    """Where the figures come from: each result file's date, commit, load at its start, and
    its command, wrapped to the plot's width; returns the height used."""
    used = 0.0
    for record in results:
        svg.text(12, y + used, f"{record['date']}, code {record['commit']}, load average at "
                 f"the start {record['load_before']}:", font_size="10", fill="#555555")  # fmt: skip
        for line in textwrap.wrap(record["command"], 118, break_on_hyphens=False):
            used += 13
            svg.text(24, y + used, line, font_size="10", fill="#555555")
        used += 17
    return used


def overhead_rows(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every comparison of host.py, sdk.py and fastmcp_depends.py, as one bar pair each."""
    rows = []
    for name, where in (("host", "MCPServer, server side"), ("sdk", "MCPServer, in-memory Client")):
        if name in results:
            for row in results[name]["results"]["scenarios"]:
                rows.append({"group": where, "peer_name": "SDK"} | row)
    if "fastmcp_depends" in results:
        found = results["fastmcp_depends"]["results"]
        for row in found["scenarios"]:
            where = f"fastmcp {found['fastmcp']}, {row['path']}"
            rows.append({"group": where, "peer_name": "Depends"} | row)
    return rows


def quartiles(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles, as paired.py reports its IQR: robust to a round that
    other work on the machine took over."""
    if len(values) < 2:
        return values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4)
    return q1, q3


def overhead(results: dict[str, dict[str, Any]]) -> str:
    """Per comparison, the peer's overhead over a plain tool and ours (µs, log scale), each
    with the min..max of its per-round medians, and the ratio of the two."""
    rows = overhead_rows(results)
    spread = [v for r in rows for k in ("peer_rounds", "ours_rounds") for v in quartiles(r[k])]
    low, high = bounds([*spread, *(r["peer_us"] for r in rows), *(r["ours_us"] for r in rows)])
    left, right, top, bar = 280, WIDTH - 170, 64, 11
    scale = LogScale(low, high, left, right)
    groups = list(dict.fromkeys(r["group"] for r in rows))
    bottom = top + len(rows) * (2 * bar + 12) + len(groups) * 22
    svg = Svg(WIDTH, 0, "Overhead over a plain tool: the peer's resolvers against ours")
    svg.text(12, 20, "Overhead of 5 resolvers over a plain tool, µs per call (log scale)",
             font_size="15", font_weight="bold")  # fmt: skip
    svg.rect(12, 32, 12, 10, PEER_COLOUR)
    svg.text(28, 41, "peer: the SDK's Resolve, or fastmcp's Depends")
    svg.rect(360, 32, 12, 10, OURS_COLOUR)
    svg.text(376, 41, "mcp_resolve")
    svg.text(WIDTH - 12, 41, "peer / ours", anchor="end", font_weight="bold")
    y = top
    for tick in scale.ticks():
        svg.line(scale(tick), top - 6, scale(tick), bottom, "#e4e4e4")
        svg.text(scale(tick), bottom + 14, number(tick), anchor="middle", fill="#555555")
    for group in groups:
        svg.text(12, y + 12, group, font_weight="bold")
        y += 22
        for row in (r for r in rows if r["group"] == group):
            svg.text(24, y + bar + 4, row["label"])
            for value, rounds, colour, dy in (
                (row["peer_us"], row["peer_rounds"], PEER_COLOUR, 0),
                (row["ours_us"], row["ours_rounds"], OURS_COLOUR, bar + 1),
            ):
                svg.rect(left, y + dy, scale(value) - left, bar, colour)
                whisker, (q1, q3) = y + dy + bar / 2, quartiles(rounds)
                svg.line(scale(q1), whisker, scale(q3), whisker, "#222222")
                for end in (q1, q3):
                    svg.line(scale(end), whisker - 3, scale(end), whisker + 3, "#222222")
                svg.text(scale(max(value, q3)) + 4, y + dy + bar - 1, f"{value:.1f}",
                         font_size="10")  # fmt: skip
            svg.text(
                WIDTH - 12, y + bar + 4, f"{row['ratio']:.1f}x ({row['ratio_min']:.1f}.."
                f"{row['ratio_max']:.1f})", anchor="end", font_weight="bold",
            )  # fmt: skip
            y += 2 * bar + 12
    svg.text(12, bottom + 34, "Bars: the median of the per-pair differences over a plain tool; "
             "whiskers: the IQR of the per-round medians.", font_size="10")  # fmt: skip
    svg.text(12, bottom + 48, "Right: the peer's overhead over ours (min..max of the per-round "
             "ratios). Paired method: benchmarks/paired.py.", font_size="10")  # fmt: skip
    files = [results[n] for n in ("host", "sdk", "fastmcp_depends") if n in results]
    svg.height = bottom + 64 + caption(svg, bottom + 68, files)
    return str(svg)


def held_series(
    held: list[dict[str, Any]], generation: str, kind: str, key: str
) -> list[tuple[int, float]]:
    """(calls held, the median over repeats of `key`) for one kind, by calls held."""
    points = []
    for record in held:
        found = record["results"]
        for entry in found["kinds"]:
            values = sorted(r[key] for r in entry["runs"] if key in r)
            if entry["generation"] == generation and entry["kind"] == kind and values:
                points.append((found["calls"], values[len(values) // 2]))
    return sorted(points)


def lines(
    title: str,
    unit: str,
    series: list[tuple[str, list[tuple[int, float]]]],
    held: list[dict[str, Any]],
    log_y: bool,
) -> str:
    """A line chart against the number of calls held (log scale), each point labelled."""
    left, right, top = 70, WIDTH - 190, 48
    bottom = 330
    xs = sorted({x for _, points in series for x, _ in points})
    x_scale = LogScale(xs[0] / 1.3, xs[-1] * 1.3, left, right)
    ys = [y for _, points in series for _, y in points]
    y_scale: Callable[[float], float]
    if log_y:
        log_scale = LogScale(*bounds(ys), bottom, top)
        y_scale, y_ticks = log_scale, log_scale.ticks()
    else:
        high = bounds(ys)[1]
        y_ticks = [high / 5 * i for i in range(6)]

        def y_scale(value: float) -> float:
            return bottom - value / high * (bottom - top)

    svg = Svg(WIDTH, 0, title)
    svg.text(12, 22, title, font_size="15", font_weight="bold")
    for tick in y_ticks:
        svg.line(left, y_scale(tick), right, y_scale(tick), "#e4e4e4")
        svg.text(left - 6, y_scale(tick) + 4, number(tick), anchor="end", fill="#555555")
    for x in xs:
        svg.line(x_scale(x), top, x_scale(x), bottom, "#e4e4e4")
        svg.text(x_scale(x), bottom + 16, f"{x:,}", anchor="middle", fill="#555555")
    svg.text((left + right) / 2, bottom + 32, "calls held at once on one worker (log scale)",
             anchor="middle")  # fmt: skip
    svg.text(14, (top + bottom) / 2, unit, anchor="middle",
             transform=f"rotate(-90 14 {(top + bottom) / 2:.1f})")  # fmt: skip
    names = []
    highest = {x: max(y for _, points in series for px, y in points if px == x) for x in xs}
    for (name, points), colour in zip(series, SERIES_COLOURS, strict=False):
        svg.polyline(((x_scale(x), y_scale(y)) for x, y in points), colour)
        for x, y in points:  # the highest point's label above it, the others' below theirs
            svg.dot(x_scale(x), y_scale(y), colour)
            svg.text(x_scale(x), y_scale(y) + (-7 if y == highest[x] else 15), f"{y:.1f}",
                     anchor="middle", font_size="10", fill=colour)  # fmt: skip
        names.append((y_scale(points[-1][1]) + 4, name, colour))
    at = -math.inf
    for y, name, colour in sorted(names):  # the series' names, at least a line apart
        at = max(y, at + 15)
        svg.text(right + 10, at, name, fill=colour, font_weight="bold")
    svg.height = bottom + 46 + caption(svg, bottom + 50, held)
    return str(svg)


def held_memory(held: list[dict[str, Any]]) -> str:
    ours = held_series(held, "2026-07-28", "resolve", "kib_collected")
    floor = dict(held_series(held, "2026-07-28", "sdk-retry", "kib_collected"))
    part = [(x, y - floor[x]) for x, y in ours if x in floor]
    return lines(
        "Memory per held 2026-07-28 URL wait (resident KiB, after a full collection)",
        "KiB per held call",
        [
            ("mcp_resolve", ours),
            ("SDK's own retry", sorted(floor.items())),
            ("mcp_resolve's part", part),
        ],
        held,
        log_y=False,
    )


def held_wakeup(held: list[dict[str, Any]]) -> str:
    return lines(
        "Wake-up latency of held 2026-07-28 URL waits, woken through Redis",
        "ms from report to result (log scale)",
        [
            (f"{name} ", held_series(held, "2026-07-28", "resolve", key))
            for name, key in (("p50", "p50_ms"), ("p99", "p99_ms"), ("max", "max_ms"))
        ],
        held,
        log_y=True,
    )


def read(results: Path) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The overhead benchmarks' files by name, and held_waits' files by the calls held."""
    named = {
        name: json.loads((results / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("host", "sdk", "fastmcp_depends")
        if (results / f"{name}.json").exists()
    }
    held = [json.loads(p.read_text(encoding="utf-8")) for p in results.glob("held_waits_*.json")]
    held.sort(key=lambda record: int(record["results"]["calls"]))
    return named, held


def plots(results: Path, out: Path) -> list[Path]:
    """Every plot whose results are there, written to `out`; the paths written."""
    named, held = read(results)
    drawn = {}
    if named:
        drawn["overhead.svg"] = overhead(named)
    if held:
        drawn["held_memory.svg"] = held_memory(held)
        drawn["held_wakeup.svg"] = held_wakeup(held)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in drawn.items():
        (out / name).write_text(text, encoding="utf-8")
    return [out / name for name in drawn]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--results", type=Path, default=HERE / "results")
    parser.add_argument("--out", type=Path, default=HERE / "plots")
    options = parser.parse_args()
    for path in plots(options.results, options.out):
        print(path)


if __name__ == "__main__":
    main()
