"""Third-party OAuth as a resolver: a provider token of the signed-in user, for a tool.

What belongs here: `OAuthProvider` (one provider's client and endpoints, checked at
start-up), `OAuth` (the resolver factory `token()`, the connect page and the callback a
server mounts, the stored tokens: sealed, refreshed, asked for again), the stores. It
stands with the facades (what a server author imports) above `pages`, whose browser
identity and headers it reuses; only `grants` imports authlib, an optional extra
(`pip install 'mcp-resolve[oauth]'`). docs/accounts-and-secrets.md states what it
promises.
"""

from .connections import OAuth
from .provider import OAuthConfigError, OAuthProvider
from .tokens import MemoryOAuthStore, OAuthStore, ProviderToken

__all__ = [
    "MemoryOAuthStore",
    "OAuth",
    "OAuthConfigError",
    "OAuthProvider",
    "OAuthStore",
    "ProviderToken",
]
