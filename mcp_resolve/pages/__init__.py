"""Pages the MCP server serves itself, for URL questions that must not pass through the client.

What belongs here: the routes a server mounts on its own HTTP app (Starlette), the signed,
one-time, expiring links to them, and how a browser proves its user. A page finishing
calls `complete()` (protocol/completion.py), so the waiting call wakes on any worker.
This layer stands above `protocol` (it uses the completion bus and the signed-in user)
and below `hosts`; it knows Starlette, and of each framework only that it can mount
routes; a form page (`SecretForm`) keeps the user's answer sealed until its resolver
reads it; `SignIn` sends a browser with no user to sign in (at an OpenID provider,
`openid.OpenIDConnect`, the one module here that imports authlib, so this package imports
without it; or at the deployment's own login) and back to its link. What does not belong
here: the questions themselves (`ElicitURL`, authoring) and the flow of a call (protocol).
docs/accounts-and-secrets.md states what it promises.
"""

from .browser import BearerBrowser, BrowserIdentity, SignedInCookie, SignInStep
from .finished import FinishedPages, MemoryFinishedPages
from .form_answers import MemoryPageAnswers, PageAnswers
from .forms import SecretForm
from .page_stores import PageStores
from .routes import PageText
from .sign_in import SignIn, SignInConfigError
from .site import Pages

__all__ = [
    "BearerBrowser",
    "BrowserIdentity",
    "FinishedPages",
    "MemoryFinishedPages",
    "MemoryPageAnswers",
    "PageAnswers",
    "PageStores",
    "PageText",
    "Pages",
    "SecretForm",
    "SignIn",
    "SignInConfigError",
    "SignInStep",
    "SignedInCookie",
]
