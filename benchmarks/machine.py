"""What a benchmark's header records about the run: the CPU, the commit measured, the load."""

from __future__ import annotations

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu() -> str | None:
    """The CPU's model name, where the system says (Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def commit() -> tuple[str, bool] | None:
    """The commit measured, and whether mcp_resolve/ had uncommitted changes."""
    try:
        head, dirty = (
            subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout.strip()
            for args in (
                ["rev-parse", "--short", "HEAD"],
                ["status", "--porcelain", "--", "mcp_resolve"],
            )
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return head, bool(dirty)


def load() -> str:
    """1, 5 and 15 minute load averages: other work on the machine skews every figure."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def idle_polling() -> str | None:
    """How long an idle CPU polls before it halts (KVM guests with the `haltpoll` cpuidle
    driver): waking a halted virtual CPU costs tens of µs, so a worker-thread hop's cost
    depends on it. `None` where the system does not say."""
    base = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"
    try:
        with open(base, encoding="utf-8") as value:
            return f"haltpoll guest_halt_poll_ns={value.read().strip()}"
    except OSError:
        return None
