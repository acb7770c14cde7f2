"""Worker processes of tests/support/once_server.py, forked from one that imported it already.

A worker killed by the chaos test (tests/deploy/test_once_chaos.py) is replaced at once.
Starting a Python process that imports fastmcp, fastmcp-tasks and Docket takes seconds on
a busy machine (8 s measured at a load of 7 on 2 cores); forking one that has imported
them takes milliseconds, and the child is a process of its own: its own pid, its own
sockets, its own Docket worker, killed alone with SIGKILL.

Run as `python tests/support/once_workers.py`; each line on stdin is a port: a child
serving MCP over Streamable HTTP on 127.0.0.1 at that port (and running Docket legs) is
forked, and its pid is written on stdout. Children are reaped here; the test stops each
by its pid, and this process when its stdin closes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support import once_server


def serve(port: int) -> None:
    """The child: MCP on `port`, Docket legs from the shared queue, until it is killed (or
    its parent ends: a test that failed half-way leaves no worker behind)."""
    with contextlib.suppress(OSError, AttributeError):  # Linux: PR_SET_PDEATHSIG, SIGKILL
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sys.stdin.close()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stdout carries the parent's pids
    once_server.app.run(transport="http", host="127.0.0.1", port=port, show_banner=False)


def main() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
    for line in sys.stdin:
        port = int(line)
        pid = os.fork()
        if pid == 0:
            try:
                serve(port)
            finally:
                os._exit(0)
        print(pid, flush=True)


if __name__ == "__main__":
    main()
