"""At most once on every host: each request state is claimed once, and remembered while it lives.

With a replay guard the flow stamps every state it hands out with a random id and its own
expiry (issue time plus the host's state lifetime). When the state comes back the flow
refuses it past that expiry, then claims the id with the guard until the later of that
expiry and the sealer's own (when the host can say), plus clock skew. So the guard always
remembers a state for as long as any worker would accept it, whatever TTL is configured:

- on the low-level host mcp_resolve seals the state, and the sealer reports the token's
  real expiry;
- on MCPServer and fastmcp the SDK seals it under its own TTL, which mcp_resolve cannot
  read. The state's own expiry (from `state_ttl`, the SDK's default 600 s unless told
  otherwise) is what counts: a state older than that is refused here even where the SDK
  would still take it, so a longer SDK TTL can never outlive the guard's memory.

Every refusal is the same MCP error as a forged state's, and one WARNING line in the log.
A guard that fails (its store unreachable) fails closed: a tool error saying so, the body
not run, and the cause in the log.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import mcp_types as types
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from ..errors import StoreUnavailable
from ..seconds import seconds
from .replay_guard import ReplayGuard
from .round_state import RoundState

logger = logging.getLogger("mcp_resolve.seal")

STATE_REFUSED = "Invalid or expired requestState"
DEFAULT_STATE_TTL = 600.0  # the SDK's RequestStateSecurity default
CLOCK_SKEW = 60.0  # as the sealers allow for a token issued by a worker whose clock runs ahead
_OWNER_LABEL = b"mcp_resolve/replay-owner/v1\0"

Principal = Callable[[Any], "str | None"]


def state_refused() -> MCPError:
    """The one refusal for any request state we will not use, whatever the reason.

    Its code, message and data match the official SDK's own refusal, so a client cannot
    tell a replay from a forgery or an expired state. Which host refused is not hidden:
    the token's prefix already says which sealer made it.
    """
    return MCPError(
        code=types.INVALID_PARAMS,
        message=STATE_REFUSED,
        data={"reason": "invalid_request_state"},
    )


def check_state_ttl(ttl: object) -> float:
    """A state lifetime must be a positive, finite number of seconds (refused at decoration)."""
    return seconds(ttl, "state_ttl")


@dataclass(frozen=True, slots=True)
class Unsealed:
    """A state a host's codec opened, and the token's real expiry when the codec knows it."""

    state: str
    expires_at: float | None = None


def owner_of(request_context: Any, principal: Principal | None) -> str | None:
    """Who presented a state, as an opaque tag: the authenticated principal, else the
    client's network (`network_of`). Hashed, so a shared store (Redis) never holds who a
    user is. A failing principal function counts as no principal here; the binding,
    which also calls it, refuses then."""
    found = owner_and_kind(request_context, principal)
    return None if found is None else found[0]


def owner_and_kind(request_context: Any, principal: Principal | None) -> tuple[str, bool] | None:
    """`owner_of`'s tag and whether it is an authenticated principal (True) or only a
    network (False); None when the call has neither (stdio, in memory)."""
    who: str | None = None
    if principal is not None and request_context is not None:
        try:
            found = principal(request_context)
        except Exception:
            found = None
        if isinstance(found, str):
            who = "p:" + found
    signed_in = who is not None
    if who is None:
        client = getattr(getattr(request_context, "request", None), "client", None)
        host = getattr(client, "host", None)
        if isinstance(host, str) and host:
            who = "a:" + network_of(host)
    if who is None:
        return None
    digest = hashlib.sha256(_OWNER_LABEL + who.encode("utf-8", "surrogatepass")).digest()
    return base64.urlsafe_b64encode(digest[:12]).decode("ascii"), signed_in


def network_of(host: str) -> str:
    """The network an unauthenticated client counts as: its /64 for IPv6 (what one
    subscriber or one server is given, so a client cannot become 2**64 owners), its
    address for IPv4 (an IPv4 address is scarce; everyone behind one NAT shares it, and
    with it the bound of one owner), the host as given otherwise (a Unix socket)."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class AtMostOnce:
    """The replay guard as one tool's flow uses it: stamp states going out, claim them coming in."""

    __slots__ = ("clock", "guard", "principal", "tool", "ttl")

    def __init__(
        self,
        guard: ReplayGuard,
        tool: str,
        *,
        ttl: float,
        clock: Callable[[], float],
        principal: Principal | None,
    ) -> None:
        self.guard = guard
        self.tool = tool
        self.ttl = ttl
        self.clock = clock
        self.principal = principal

    def stamp(self, state: RoundState) -> None:
        state.token = secrets.token_hex(16)
        state.expires = float(self.clock()) + self.ttl

    async def claim(
        self, state: RoundState, request_context: Any, sealed_expiry: float | None
    ) -> None:
        token, expires = state.token, state.expires
        if token is None or expires is None:
            self.refuse("carries no id (sealed before the guard was on, or not ours)")
        if float(self.clock()) >= expires:
            self.refuse("expired")
        until = max(expires, sealed_expiry or expires) + CLOCK_SKEW
        owner = owner_of(request_context, self.principal)
        try:
            first_use = await self.guard.claim(token, until, owner=owner)
        except Exception as exc:
            self.unavailable(exc)
        if not first_use:
            self.refuse("already used, or the guard is at capacity")

    def unavailable(self, exc: Exception) -> NoReturn:
        """The guard could not say whether the state was used: fail closed, and say so.

        Not the refusal of a bad state: nothing is wrong with this one, and the client
        should learn that trying again later may work. Why goes to the log only.
        """
        why = exc.detail if isinstance(exc, StoreUnavailable) else f"{type(exc).__name__}: {exc}"
        logger.warning(
            "Tool %r: request state refused, the replay guard failed (%s); the tool did not run",
            self.tool,
            why,
        )
        raise ToolError(
            f"Tool {self.tool!r} could not check that this request is used only once (its "
            "replay store is unavailable), so it did not run; try again later"
        ) from None

    def refuse(self, why: str) -> NoReturn:
        logger.warning("Tool %r: request state refused (%s)", self.tool, why)
        raise state_refused()
