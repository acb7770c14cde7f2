"""Long-running tools: an approval halfway through a background task (fastmcp-tasks).

Run it with `python docs/snippets/long_running.py`. Docket runs on its memory backend here,
with the server's own worker; the deployment recipe on the page puts it on Redis.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

import anyio
import mcp_types as types
from fastmcp import Client, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks.client import call_tool_task
from pydantic import BaseModel

from mcp_resolve import Elicit, Resolve
from mcp_resolve.fastmcp import resolved
from mcp_resolve.tasks import ResolvingTasks

app = FastMCP("Deployments")
app.add_extension(ResolvingTasks())  # ResolvingTasks(url="redis://...") in production

BUILDS: list[str] = []


class Approval(BaseModel):
    approve: bool
    reason: str = ""


async def build(service: str) -> str:
    """Resolver: the long part before anyone needs to look (here, a pretend build)."""
    await anyio.sleep(0.1)
    BUILDS.append(service)
    return f"{service}:1.4.2"


async def release_approval(
    image: Annotated[str, Resolve(build, once=True)],
) -> Approval | Elicit[Approval]:
    """Resolver: asked once the build is done; the worker is freed while nobody answers."""
    return Elicit(f"Release {image} to production?", Approval)


@app.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=200)))
@resolved
async def deploy(
    service: str,
    image: Annotated[str, Resolve(build, once=True)],
    approval: Annotated[Approval, Resolve(release_approval)],
) -> str:
    """Build a service, ask for the release, then roll it out."""
    if not approval.approve:
        return f"{image} built, not released: {approval.reason or 'no reason given'}"
    return f"{image} released"


async def release_manager(message: str, response_type: Any, params: Any, context: Any) -> Any:
    """The person the client asks (here, one who approves). A handler also declares that
    the client answers forms and URL questions: a leg asks it nothing else."""
    return {"approve": True}


async def main() -> dict[str, Any]:
    async with Client(app, elicitation_handler=release_manager) as client:
        task = await call_tool_task(client, "deploy", {"service": "billing"})
        parked = await task.wait(state="input_required", timeout=30)
        (request,) = (parked.input_requests or {}).values()
        result = await task.result()  # asks release_manager, sends tasks/update, polls
        done = await task.status()
    return {
        "created": task.create_result.status,
        "waiting": {"status": parked.status, "asks": request["params"]["message"]},
        "finished": {
            "status": done.status,
            "result": [c.text for c in result.content if isinstance(c, types.TextContent)],
        },
        "builds": len(BUILDS),
    }


if __name__ == "__main__":
    print(anyio.run(main))
