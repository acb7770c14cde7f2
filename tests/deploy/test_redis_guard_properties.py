"""Claims and expiries interleaved at random against a real redis-server.

A model keeps, for each id, the window in which Redis set its expiry (between sending the
claim and its reply, plus the lifetime asked). A claim made clearly after that window must
succeed, one made clearly before it must be refused; near the edge either answer is
right, and the model follows what Redis said. Concurrent claims of one id: exactly one wins
when the id is free, none when it is held.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.redis_server import RedisServer

from mcp_resolve.redis import RedisReplayGuard

MARGIN = 0.005  # Redis keeps expiries in milliseconds; this is a few of them
IDS = 3


@dataclass(frozen=True)
class Claim:
    which: int
    lifetime_ms: int
    together: int  # how many claims of the id are sent at once


@dataclass(frozen=True)
class Wait:
    ms: int


steps = st.lists(
    st.one_of(
        st.builds(Claim, st.integers(0, IDS - 1), st.integers(20, 150), st.sampled_from((1, 1, 4))),
        st.builds(Wait, st.integers(0, 120)),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(script=steps)
def test_claims_and_expiries_interleaved_agree_with_the_model(
    redis_server: RedisServer, script: list[Claim | Wait]
) -> None:
    run = secrets.token_hex(4)  # examples share the server; each uses ids of its own

    async def play() -> None:
        guard = RedisReplayGuard(redis_server.url, audience="props")
        expiry: dict[int, tuple[float, float]] = {}  # id -> (earliest, latest) expiry
        try:
            for step in script:
                if isinstance(step, Wait):
                    await anyio.sleep(step.ms / 1000)
                    continue
                token = f"{run}-{step.which}"
                lifetime = step.lifetime_ms / 1000
                results: list[bool] = []

                async def one() -> None:
                    results.append(await guard.claim(token, time.time() + lifetime))  # noqa: B023

                sent = time.time()
                async with anyio.create_task_group() as group:
                    for _ in range(step.together):
                        group.start_soon(one)
                replied = time.time()
                won = results.count(True)
                outlived = replied - sent >= lifetime - MARGIN  # a slow machine outlives it
                if not outlived:
                    assert won <= 1, (step, results)
                held = expiry.get(step.which)
                if held is None or sent > held[1] + MARGIN:
                    assert won == 1 or (outlived and won > 1), (step, held, sent, results)
                elif replied < held[0] - MARGIN:
                    assert won == 0, (step, held, replied, results)
                if won:
                    expiry[step.which] = (sent + lifetime, replied + lifetime + 0.001)
        finally:
            await guard.aclose()

    anyio.run(play)
