"""What a user-scoped value costs a call, once built, beside an app-scoped one.

    .venv/bin/python benchmarks/user_scope.py            # 9 interleaved rounds
    .venv/bin/python benchmarks/user_scope.py --quick    # 3 short rounds

Per call, on the engine alone (no MCP): `app`, a graph whose one resolver is app-scoped;
`user`, the same with a user-scoped resolver, including finding the user's values
(`users_of(app).of(user)`, which sweeps expired values) among 1,000 users. The workload
is asserted: each user's value is built once, whatever the number of calls.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Annotated

import anyio

from mcp_resolve import AppScope, Resolve, ResolverGraph, User
from mcp_resolve.engine.user_scope import users_of

BUILT: list[str] = []


async def pool() -> str:
    return "pool"


async def account(user: User) -> str:
    BUILT.append(user.subject)
    return f"account of {user.subject}"


async def with_app(p: Annotated[str, Resolve(pool, scope="app")]) -> str:
    return p


async def with_user(a: Annotated[str, Resolve(account, scope="user", ttl=3600)]) -> str:
    return a


async def main(rounds: int, calls: int) -> None:
    app_graph = ResolverGraph.from_function(with_app)
    user_graph = ResolverGraph.from_function(with_user)
    users = [User(f"user-{i}") for i in range(1000)]
    timings: dict[str, list[float]] = {"app": [], "user": []}
    async with AppScope() as app:
        scope = users_of(app)
        for user in users:  # every user's value built once, before timing
            async with user_graph.start({}, app=await scope.of(user)) as call:
                await call.resolve()
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls):
                async with app_graph.start({}, app=app) as call:
                    await call.resolve()
            timings["app"].append((time.perf_counter() - start) / calls)
            start = time.perf_counter()
            for i in range(calls):
                mine = await scope.of(users[i % len(users)])
                async with user_graph.start({}, app=mine) as call:
                    await call.resolve()
            timings["user"].append((time.perf_counter() - start) / calls)
    assert sorted(BUILT) == sorted(u.subject for u in users), "each user's value built once"
    for name, values in timings.items():
        print(f"{name:5} {statistics.median(values) * 1e6:7.2f} µs per call (median of {rounds})")
    extra = statistics.median(timings["user"]) - statistics.median(timings["app"])
    print(f"user scope adds {extra * 1e6:.2f} µs per call")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    anyio.run(main, 3 if quick else 9, 2_000 if quick else 20_000)
