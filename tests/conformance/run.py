"""Run the official MCP conformance suite's server scenarios against tests/conformance/server.py.

`make conformance` installs the suite (both lines, pinned) and a Node 22 into .conformance/
and calls this. Five runs, two at a time, each against its own server process:

- stable line, every legacy scenario (`--suite all`);
- alpha line, its active scenarios at the legacy protocol it defaults to;
- alpha line, `--suite draft` (the 2026-07-28 scenarios);
- alpha line, its active scenarios at `--spec-version 2026-07-28`;
- alpha line, `--requirements 2026-07-28`, against tests/conformance/tasks_server.py
  (fastmcp + fastmcp-tasks).

`--run TEXT` keeps only the runs whose label contains TEXT (`--run fastmcp-tasks`: the
fifth), `--scenario NAME` only that scenario in each run kept.

A scenario run passes when none of its checks failed or warned (`--lenient`: warnings
pass); the few warnings in `ACCEPTED` are shown, with why they are not ours to fix. Prints
one line per run, every failed or warned check, and `conformance: P passed, F failed`
(F: failed and not listed as expected; the listed ones are counted on the next line).
Exits 1 if a scenario not listed in expected-failures.txt failed, or a listed one passed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SERVER = HERE / "server.py"


TASKS_SERVER = HERE / "tasks_server.py"


@dataclass(frozen=True)
class Run:
    label: str
    package: str
    arguments: tuple[str, ...]
    server: Path = SERVER
    expected: str = "expected-failures.txt"


RUNS = (
    Run("stable, all legacy scenarios", "stable", ("--suite", "all")),
    Run("alpha, active (legacy)", "alpha", ()),
    Run("alpha, draft (2026-07-28)", "alpha", ("--suite", "draft")),
    Run("alpha, active at 2026-07-28", "alpha", ("--spec-version", "2026-07-28")),
    # What 2026-07-28 requires, the tasks extension's scenarios included, against fastmcp +
    # fastmcp-tasks (the SDK's servers have no tasks): tests/conformance/tasks_server.py.
    Run(
        "alpha, requirements 2026-07-28 (fastmcp-tasks)",
        "alpha",
        ("--requirements", "2026-07-28"),
        TASKS_SERVER,
        "expected-failures-tasks.txt",
    ),
)


@dataclass
class Outcome:
    run: Run
    passed: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)
    accepted: list[str] = field(default_factory=list)
    seconds: float = 0.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(server: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, str(server), "--port", str(port)],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 120  # importing fastmcp takes a while on a busy machine
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the conformance server exited: see {log}\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the conformance server did not start within 120 s: see {log}")


def run_one(run: Run, node: str, suites: Path, scratch: Path, scenario: str | None) -> Outcome:
    out = scratch / run.label.replace(" ", "_").replace(",", "").replace("(", "").replace(")", "")
    port = free_port()
    server = start_server(run.server, port, out.with_suffix(".server.log"))
    started = time.monotonic()
    try:
        command = [
            node,
            str(suites / run.package / "dist" / "index.js"),
            "server",
            "--url",
            f"http://127.0.0.1:{port}/mcp",
            "-o",
            str(out),
            *run.arguments,
            *(("--scenario", scenario) if scenario else ()),
        ]
        log = out.with_suffix(".suite.log")
        subprocess.run(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, check=False)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    outcome = Outcome(run, seconds=time.monotonic() - started)
    for checks in sorted(out.glob("*/checks.json")):
        name = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", checks.parent.name).removeprefix("server-")
        problems = []
        for check in json.loads(checks.read_text()):
            said = f"{check['status']} {check['id']}: {check.get('errorMessage') or ''}"
            if check["status"] == "WARNING" and (run.package, check["id"]) in ACCEPTED:
                outcome.accepted.append(f"{name}: {said} ({ACCEPTED[run.package, check['id']]})")
            elif check["status"] in BAD:
                problems.append(said.rstrip(": "))
        if problems:
            outcome.failed[name] = problems
        else:
            outcome.passed.append(name)
    return outcome


BAD = {"FAILURE"}

# Warnings taken as passes, each with the reason it is not ours to fix. Nothing else is.
ACCEPTED = {
    ("stable", "server-sse-priming-event"): "0.1.x sends its tools/call with the header "
    "MCP-Protocol-Version 2025-03-26 on a 2025-11-25 session; the SDK primes SSE streams "
    "(a 2025-11-25 feature) by that header; 0.2.0's version of the scenario passes",
    ("stable", "server-sse-retry-field"): "the retry field rides the priming event (above)",
    ("alpha", "sep-2322-ignore-unexpected-params"): "its first call answers 'user_name' "
    "without the request state or the question's digest, so nothing shows which words its "
    "user saw: the question is asked again, as the SDK's own resolvers ask again "
    "(docs/protocol-generations.md, answers without a request state)",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--node", required=True, help="a node >= 22")
    parser.add_argument("--suites", required=True, type=Path, help="folder of the two lines")
    parser.add_argument("--scenario", help="run only this scenario")
    parser.add_argument(
        "--run",
        metavar="TEXT",
        help="only the runs whose label contains TEXT (e.g. fastmcp-tasks: the fifth run)",
    )
    parser.add_argument("--lenient", action="store_true", help="warnings do not fail")
    parser.add_argument("--keep", type=Path, help="keep each scenario's checks.json here")
    options = parser.parse_args()
    if not options.lenient:
        BAD.add("WARNING")
    runs = [run for run in RUNS if options.run is None or options.run in run.label]
    if not runs:
        labels = "; ".join(run.label for run in RUNS)
        parser.error(f"--run {options.run!r} matches no run (the runs: {labels})")
    started = time.monotonic()
    jobs = int(os.environ.get("CONFORMANCE_JOBS", "2"))
    if options.keep is not None:
        options.keep.mkdir(parents=True, exist_ok=True)
    folder = (
        contextlib.nullcontext(str(options.keep))
        if options.keep is not None
        else tempfile.TemporaryDirectory(prefix="conformance-")
    )
    with folder as scratch, ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(
            pool.map(
                lambda run: run_one(
                    run, options.node, options.suites, Path(scratch), options.scenario
                ),
                runs,
            )
        )
    passed = failed = 0
    for outcome in outcomes:
        total = len(outcome.passed) + len(outcome.failed)
        print(
            f"{outcome.run.label}: {len(outcome.passed)}/{total} passed ({outcome.seconds:.0f} s)"
        )
        for accepted in outcome.accepted:
            print(f"  accepted {accepted[:400]}")
        for name, problems in sorted(outcome.failed.items()):
            print(f"  ✗ {name}")
            for problem in problems:
                print(f"      {problem[:300]}")
        passed += len(outcome.passed)
        failed += len(outcome.failed)
    # As pytest's xfail: a listed failure is counted apart, so the closing line's "failed"
    # means failed and not expected to.
    known = sum(n in expected_failures(o.run.expected) for o in outcomes for n in o.failed)
    seconds = time.monotonic() - started
    print(f"conformance: {passed} passed, {failed - known} failed ({seconds:.0f} s)")
    if known:
        print(f"{known} expected failures, each listed with why in its run's file")
    surprises = sorted(
        {n for o in outcomes for n in o.failed if n not in expected_failures(o.run.expected)}
    )
    fixed = sorted(
        {
            n
            for o in outcomes
            for n in expected_failures(o.run.expected)
            if n not in o.failed and not options.scenario
        }
    )
    if surprises:
        print(f"failed and not expected to: {', '.join(surprises)}")
    if fixed:
        print(f"passes now, take it off its expected-failures file: {', '.join(fixed)}")
    elif failed and not surprises:
        print("every failure is listed in its run's expected-failures file, with why")
    return 1 if surprises or fixed or not passed else 0


def expected_failures(name: str) -> set[str]:
    """Scenario names listed in a run's expected-failures file (first word of each line)."""
    path = HERE / name
    lines = path.read_text().splitlines() if path.exists() else []
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


if __name__ == "__main__":
    sys.exit(main())
