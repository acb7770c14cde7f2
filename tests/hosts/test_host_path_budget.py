"""The host path's cost, held to a budget: what mcp_resolve's own code executes in one warm
call of five trivial resolvers on MCPServer (benchmarks/host.py's `5 trivial async`), as
frames entered and bytecodes run, on each protocol generation.

Counted, not timed (tests/support/bytecodes.py): the same on every run of one Python, busy
machine or not, so a change that adds a frame or a few dozen bytecodes to every call
fails here instead of going unseen in a noisy benchmark. Counted in a process of its own,
so that nothing another test left behind (a tracer provider, an override) changes the
path. Bytecodes differ between Python versions, hence one budget per version.

When a change makes the path cheaper, lower the budget to the new count (the message
says it); when it must make it dearer, say why in the commit and raise it.
"""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "support" / "bytecodes.py"

# (frames, bytecodes) per call, by Python version and generation, as measured when each
# was last changed. Issue 41 took the 2026-07-28 path on Python 3.11 from 14 frames and 603
# bytecodes to 5 and 517 (legacy: 15 and 574 to 12 and 543); recorded resolvers (`once`,
# merged beside it) added 12 and 14; setting `Resolution._capabilities` in `__init__` added
# 3 (it saves a `__getattr__` call of about 2 µs wherever a resolver takes the capabilities).
# A call that carries nothing then ran its first round without a `Connection` or the flow's
# round (protocol/first_round.py), its first walk testing each value once for all its
# consumers: on 3.11, 5 frames and 532 bytecodes to 4 and 316 (legacy: 12 and 560 to 4 and 311).
BUDGET: dict[tuple[int, int], dict[str, tuple[int, int]]] = {
    (3, 10): {"2026-07-28": (4, 318), "legacy": (4, 313)},
    (3, 11): {"2026-07-28": (4, 316), "legacy": (4, 311)},
    (3, 12): {"2026-07-28": (4, 304), "legacy": (4, 299)},
    (3, 13): {"2026-07-28": (4, 301), "legacy": (4, 296)},
}


def test_the_host_path_stays_within_its_budget_of_frames_and_bytecodes() -> None:
    version = sys.version_info[:2]
    assert version in BUDGET, f"no budget for Python {version}: run {SCRIPT} and add one"
    out = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    counted = {mode: tuple(pair) for mode, pair in json.loads(out).items()}
    for mode, (frames, bytecodes) in BUDGET[version].items():
        got_frames, got_bytecodes = counted[mode]
        assert got_frames <= frames, f"{mode}: {got_frames} frames a call, budget {frames}"
        assert got_bytecodes <= bytecodes, f"{mode}: {got_bytecodes} bytecodes, budget {bytecodes}"
