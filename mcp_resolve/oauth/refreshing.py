"""One refresh at a time per user and provider, across workers; and what a refusal does.

Providers that rotate refresh tokens (Google, Okta, Auth0, GitHub Apps) accept each one
once: two workers refreshing the same user's token at the same instant would spend it
twice, and the second would be refused. So every change to a user's stored token (a
refresh, the callback storing a new one, a disconnect, a refused token dropped) happens
under `exclusive(key)`: an `anyio.Lock` per key in the process, then the store's own lock
across workers when it has one (`RedisOAuthStore.lock`: redis-py's `Lock`, with a
deadline, so a worker that dies holding it holds nobody back for longer). A worker that
finds the token expired waits for the lock and reads the record again before refreshing:
when another worker refreshed it meanwhile, it takes that token and asks the provider
nothing.

A refresh the provider refuses (`invalid_grant`) is read again the same way: when the
store already holds another token than the one refused (a worker whose lock ran out
refreshed it first: the loser of that race spent an already rotated token), that one is
used, renewed if it must be; only when the refused token is still the stored one is it
dropped and the user asked to connect again.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError

from ..state.record_names import RecordName
from .grants import Refused, Unreachable, refresh
from .provider import OAuthProvider
from .tokens import Record, Vault

MAX_RENEWALS = 3  # records tried in one renewal: the one seen, then newer ones stored meanwhile


class Refresher:
    """Renews and drops the stored tokens of one `OAuth`, one change per key at a time."""

    def __init__(
        self, vault: Vault, redirect_url: str, clock: Callable[[], float], deadline: float
    ) -> None:
        self._vault = vault
        self._redirect_url = redirect_url
        self._clock = clock
        self.deadline = deadline
        self._locks: weakref.WeakValueDictionary[str, anyio.Lock] = weakref.WeakValueDictionary()

    @contextlib.asynccontextmanager
    async def exclusive(self, name: RecordName) -> AsyncIterator[None]:
        """Hold the record: in this process, then across workers when the store can lock
        (under the name it is written under: the ring's first key's)."""
        key = name.current
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = anyio.Lock()
        async with lock:
            shared: Any = getattr(self._vault.store, "lock", None)
            if shared is None:
                yield
                return
            async with shared(key, self.deadline):
                yield

    async def renewed(self, provider: OAuthProvider, key: RecordName) -> Record | None:
        """The user's token, valid now: refreshed under the lock unless another worker did
        it first; None when the user must connect again."""
        try:
            async with self.exclusive(key):
                return await self._renew(provider, key)
        except Unreachable as exc:
            raise ToolError(
                f"The {provider.title} token could not be refreshed now ({exc}); try again"
            ) from exc
        except TimeoutError as exc:  # the store's lock stayed held (`refresh_lock`)
            raise ToolError(
                f"The {provider.title} token could not be refreshed now (another worker's "
                "refresh held it too long); try again"
            ) from exc

    async def refused(self, provider: OAuthProvider, key: RecordName, access_token: str) -> None:
        """The provider refused `access_token`: renew the stored token when it is still that
        one (and has a refresh token), else drop it; a token stored since is left alone."""
        async with self.exclusive(key):
            current = await self._vault.load(key)
            if current is None or current.access_token != access_token:
                return
            if current.refresh_token is None:
                await self._vault.forget(key)
                return
            try:
                renewed = await refresh(provider, self._redirect_url, current, self._clock())
            except Refused:
                await self._vault.forget(key)
                return
            except Unreachable as exc:
                raise ToolError(
                    f"The {provider.title} token was refused and could not be renewed now "
                    f"({exc}); try again"
                ) from exc
            await self._vault.save(key, renewed)

    async def _renew(self, provider: OAuthProvider, key: RecordName) -> Record | None:
        for _ in range(MAX_RENEWALS):
            current = await self._vault.load(key)
            if current is None:
                return None  # dropped meanwhile: connect again
            now = self._clock()
            if current.usable(now):
                return current  # another worker renewed it while this one waited
            if current.refresh_token is None:
                await self._vault.forget(key)
                return None
            try:
                renewed = await refresh(provider, self._redirect_url, current, now)
            except Refused:
                if await self._vault.load(key) != current:
                    continue  # the loser of a race: another worker stored a newer token
                await self._vault.forget(key)
                return None
            await self._vault.save(key, renewed)
            return renewed
        return None
