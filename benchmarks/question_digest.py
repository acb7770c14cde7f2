"""What a form question's digest costs a round: hashed from the whole rendered question (the
form schema rendered and deep-copied each time, as before) beside hashed from the schema's
canonical text kept per model class (`engine/questions.py`, now).

Run from the repository root:

    .venv/bin/python benchmarks/question_digest.py            # about 1 minute
    .venv/bin/python benchmarks/question_digest.py --quick    # smoke run

The tool is `pay_plain` of benchmarks/once.py (no recorded resolver): round 1 asks one form
question (one digest: the question sent), rounds 2 and 3 check the answer to the last
round's question against it and round 2 asks another (two digests each). Each round runs
through the tool's real `ToolFlow`, once with each digest in turn, alternating which goes
first; the figure is the median of the per-pair differences (`paired.py`'s method). The
workload is checked: through the warm-up, both digests of every question asked are the
same (the saving is in how the same bytes are hashed).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from once import Tool, pay_plain
from paired import Paired
from workloads import WorkloadError, header, run

import mcp_resolve.engine.questions as questions

NOW = questions.question_digest


def before(request: Any) -> str:
    """The digest as it was computed before: the whole question rendered, then hashed."""
    canonical = json.dumps(
        questions.render_question(request), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.blake2b(canonical.encode("ascii"), digest_size=12).hexdigest()


def checked(request: Any) -> str:
    digest = NOW(request)
    if digest != before(request):
        raise WorkloadError(f"the digests differ for {request!r}")
    return digest


async def main(quick: bool) -> None:
    print(header())
    tool = Tool(pay_plain)
    questions.question_digest = checked  # the workload: the same digest both ways
    await tool.prepare()
    for _ in range(200):
        for r in range(3):
            await tool.round(r)
    rounds, pairs = (3, 300) if quick else (9, 2000)
    clock = time.perf_counter_ns
    print("Per round, the digest now beside before (µs, median of per-pair differences):")
    try:
        for r in range(3):
            found = Paired()
            for _ in range(rounds):
                differences = []
                gc.collect()
                gc.disable()
                for i in range(pairs):
                    first, second = (before, NOW) if i % 2 else (NOW, before)
                    questions.question_digest = first
                    t0 = clock()
                    await tool.round(r)
                    questions.question_digest = second
                    t1 = clock()
                    await tool.round(r)
                    t2 = clock()
                    now, then = (t2 - t1, t1 - t0) if i % 2 else (t1 - t0, t2 - t1)
                    differences.append((now - then) / 1000)
                gc.enable()
                found.add_round(differences)
            print(f"  round {r + 1}: {found.median:+6.2f} µs   spread over rounds {found.spread()}")
    finally:
        questions.question_digest = NOW


if __name__ == "__main__":
    run(main, __doc__)
