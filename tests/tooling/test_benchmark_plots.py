"""The plots in benchmarks/README.md are drawn from the committed results, and stay so.

benchmarks/plots.py reads the JSON the benchmarks write (`--json`) into benchmarks/results/
and writes benchmarks/plots/*.svg. These tests run it as the README says, into a
temporary directory: the committed plots must be its output byte for byte (a result
re-run without the plots redrawn fails here), the figures a plot shows must be the
results' own, and the table must quote the command that made each result file.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
PLOTS = ("held_memory.svg", "held_wakeup.svg", "overhead.svg")


def draw(results: Path, out: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "plots.py"),
            "--results",
            str(results),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )


def load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((RESULTS / name).read_text(encoding="utf-8"))
    return loaded


def test_the_committed_plots_are_those_of_the_committed_results(tmp_path: Path) -> None:
    draw(RESULTS, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.svg")) == list(PLOTS)
    assert sorted(p.name for p in (BENCHMARKS / "plots").glob("*.svg")) == list(PLOTS)
    for name in PLOTS:
        assert (tmp_path / name).read_bytes() == (BENCHMARKS / "plots" / name).read_bytes(), (
            f"benchmarks/plots/{name} is not drawn from benchmarks/results/: run "
            ".venv/bin/python benchmarks/plots.py and commit what it writes"
        )


def test_the_plots_show_the_figures_of_the_results(tmp_path: Path) -> None:
    draw(RESULTS, tmp_path)
    overhead = (tmp_path / "overhead.svg").read_text(encoding="utf-8")
    for name in ("host.json", "sdk.json", "fastmcp_depends.json"):
        found = load(name)
        assert found["command"] in overhead
        for row in found["results"]["scenarios"]:
            assert f">{row['peer_us']:.1f}<" in overhead
            assert f">{row['ours_us']:.1f}<" in overhead
            assert f">{row['ratio']:.1f}x ({row['ratio_min']:.1f}..{row['ratio_max']:.1f})<" in (
                overhead
            )
    memory = (tmp_path / "held_memory.svg").read_text(encoding="utf-8")
    wakeup = (tmp_path / "held_wakeup.svg").read_text(encoding="utf-8")
    held = sorted(RESULTS.glob("held_waits_*.json"))
    assert len(held) >= 3
    for path in held:
        found = load(path.name)
        calls = found["results"]["calls"]
        assert f">{calls:,}<" in memory
        assert f">{calls:,}<" in wakeup
        (ours,) = (k for k in found["results"]["kinds"] if k["kind"] == "resolve")
        assert f">{ours['runs'][0]['kib_collected']:.1f}<" in memory
        assert f">{ours['runs'][0]['p99_ms']:.1f}<" in wakeup


def test_a_changed_result_changes_its_plot(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    host = load("host.json")
    host["results"]["scenarios"][0]["ours_us"] = 123.456
    (results / "host.json").write_text(json.dumps(host), encoding="utf-8")
    held = json.loads((results / "held_waits_1000.json").read_text(encoding="utf-8"))
    for kind in held["results"]["kinds"]:
        if kind["kind"] == "resolve":
            kind["runs"][0]["p99_ms"] = 4321.0
    (results / "held_waits_1000.json").write_text(json.dumps(held), encoding="utf-8")
    draw(results, tmp_path / "plots")
    assert ">123.5<" in (tmp_path / "plots" / "overhead.svg").read_text(encoding="utf-8")
    assert ">4321.0<" in (tmp_path / "plots" / "held_wakeup.svg").read_text(encoding="utf-8")


def test_the_table_quotes_the_command_and_the_figures_of_every_result() -> None:
    table = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    for name in ("host.json", "sdk.json", "fastmcp_depends.json"):
        assert f"`{load(name)['command']}`" in table, name
    held = [load(p.name) for p in sorted(RESULTS.glob("held_waits_*.json"))]
    numbers = sorted(found["results"]["calls"] for found in held)
    (command,) = {f["command"].replace(str(f["results"]["calls"]), "$n") for f in held}
    assert f"`for n in {' '.join(map(str, numbers))}; do {command}; done`" in table
    quoted = {
        "host.json": [("", "async5"), ("", "sync5"), ("", "inline5")],
        "sdk.json": [("", "async5")],
        "fastmcp_depends.json": [
            ("app.call_tool()", "async5a"),
            ("in-memory Client", "async5a"),
            ("app.call_tool()", "inline5a"),
            ("app.call_tool()", "sync5"),
        ],
    }
    for name, rows in quoted.items():
        scenarios = load(name)["results"]["scenarios"]
        for path_, scenario in rows:
            (row,) = (
                r for r in scenarios if r["scenario"] == scenario and r.get("path", "") == path_
            )
            assert f"{row['ours_us']:.1f} µs against {row['peer_us']:.1f}" in table, (name, row)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_tables_links_into_the_history_find_their_sections() -> None:
    table = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    history = (BENCHMARKS / "HISTORY.md").read_text(encoding="utf-8")
    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", history, flags=re.M)}
    linked = re.findall(r"\(HISTORY\.md#([^)]+)\)", table)
    assert len(linked) >= 5
    assert set(linked) <= anchors, set(linked) - anchors
