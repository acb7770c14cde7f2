"""Who a call is for: the signed-in user that user-scoped values are kept per.

A `User` is what the MCP access token says, never what the client claims: the token's
subject (`sub`) and, when the token verifier gives one, its issuer (`iss`), since a
subject is unique only per issuer. The OAuth client the user signed in with is left out
on purpose: one person using two MCP clients is one user, and a user-scoped value (a
third-party token, say) belongs to the person.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class User:
    """The signed-in user of a call, as the server's token verifier identified them.

    A parameter annotated `User` in a user-scoped resolver (`Resolve(fn, scope="user")`)
    receives the user the value is built for. Per-call resolvers read the token itself
    with the SDK's `get_access_token()`.
    """

    subject: str
    issuer: str | None = None
