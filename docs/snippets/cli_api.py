"""The analysis API the command line is built on: `check()` and `collecting()`.

`check(fn)` analyses a function as `@resolved` would, but reports every problem instead of
raising the first; each is an `InvalidSignature` whose parts (`kind`, `name`, `resolver`,
`parameter`, `problem`, `fix`) tooling can read. `collecting()` lets a whole server module
import even where a function is broken, and records what the hosts found.

Run it with `python docs/snippets/cli_api.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server import MCPServer

from mcp_resolve import Resolve
from mcp_resolve.analysis import check, collecting
from mcp_resolve.mcp import resolved


def issue_title(issue: int) -> str:  # the argument is `issue_id`
    return f"issue {issue}"


def assignee(issue_id: int, /) -> str:  # positional-only: resolvers get keywords
    return "ada"


async def close_issue(
    issue_id: int,
    title: Annotated[str, Resolve(issue_title)],
    owner: Annotated[str, Resolve(assignee)],
) -> str:
    return f"closed {title} of {owner}"


def every_problem() -> list[dict[str, Any]]:
    report = check(close_issue)
    return [
        {
            "kind": problem.kind,
            "name": problem.name,
            "resolver": problem.resolver,
            "parameter": problem.parameter,
            "problem": problem.problem,
            "fix": problem.fix,
        }
        for problem in report.problems
    ]


def a_whole_server() -> list[str]:
    server = MCPServer("Issues")
    with collecting() as collected:
        server.tool()(resolved(close_issue))  # would raise here, outside the block
    return [str(problem) for entry in collected.analysed for problem in entry.report.problems]


async def main() -> dict[str, Any]:
    return {"problems": every_problem(), "server": a_whole_server()}


if __name__ == "__main__":
    import json

    import anyio

    print(json.dumps(anyio.run(main), indent=2))
