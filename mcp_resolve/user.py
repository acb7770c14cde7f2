"""Who a call is for: the signed-in user that user-scoped values are kept per.

A `User` is what the MCP access token says, never what the client claims: the token's
subject (`sub`) and, when the token verifier gives one, its issuer (`iss`), since a
subject is unique only per issuer. The OAuth client the user signed in with is left out
on purpose: one person using two MCP clients is one user, and a user-scoped value (a
third-party token, say) belongs to the person.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class User:
    """The signed-in user of a call, as the server's token verifier identified them.

    A parameter annotated `User` receives it: in a user-scoped resolver
    (`Resolve(fn, scope="user")`), the user the value is built for; in a per-call one, the
    user of the call (a call with nobody signed in is then the no-user tool error, naming
    the resolver).
    """

    subject: str
    issuer: str | None = None


CALLING: ContextVar[User | None] = ContextVar("mcp_resolve_calling_user", default=None)
"""The signed-in user of the call running in this context, set by the host around the call
(`protocol/signed_in.py`, and the testing kit): what a per-call resolver's `User`
parameter receives. Never read from the client's messages."""
