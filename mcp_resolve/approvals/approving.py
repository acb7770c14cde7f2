"""`Approvals`: a step only a person can approve, with a passkey, on the server's own page.

A resolver of a destructive or costly step returns `await approvals.require(message,
ref=...)`: the `Approval` once the signed-in user approved those exact words on this
server's page with a passkey (user verification required), or, until then, the URL
question that sends them there and waits. The MCP client sees a URL question; its
"accept" only says the user agreed to open the page, and no answer of the client or the
model can stand in for the passkey's signature, which only the page's POST verifies.

One approval lets one call through (`asks`): the call that takes it runs, the next call of
the same deed is asked again. `four_eyes=True` also needs another registered user's
approval, through their own link; a client without URL mode is refused (or, with
`without_url_mode="link"`, told the link in a tool error, never a form the model could
fill); every approval has a deadline. docs/approvals.md states what it promises.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit

from mcp.server.mcpserver.exceptions import ToolError
from starlette.routing import Route

from ..markers import LINK_IN_ERROR, NO_FALLBACK, ElicitURL
from ..pages.browser import BrowserIdentity, SignInStep, identity_of
from ..pages.mounting import mount_routes
from ..pages.routes import origin_of
from ..pages.secure_url import https_or_loopback
from ..pages.signed_out import SignedOut
from ..protocol.shared_stores import note
from ..protocol.signed_in import signed_in_user
from ..seconds import seconds
from ..state.keys import KeyRing
from ..user import User
from .approval_link import ApprovalLinks
from .approval_page import ApprovalPage, DisplayName, SecondApprovers
from .approval_store import ApprovalStore, MemoryApprovalStore, check_approval_store
from .asks import Approval, Asks
from .ceremony import Ceremony
from .page_parts import Forgery, plain
from .passkey_page import PasskeyPage
from .passkeys import UserPasskeys
from .vault import Vault

DEFAULT_PATH = "/mcp-resolve/approvals"
DEFAULT_DEADLINE = 600.0
MAX_MESSAGE = 2000


class ApprovalConfigError(ValueError):
    """An `Approvals` that could not keep its promise (refused when it is built)."""


class Approvals:
    """Passkey approvals served at `<base_url><path>/...` (the passkeys page at `.../passkeys`).

    `keys` is the server's `KeyRing` (the same on every worker): it signs the links and
    seals every record. `base_url` is the server's public origin as browsers reach it:
    HTTPS, or plain HTTP on `localhost` only (WebAuthn needs a secure context, and takes no
    IP address as the relying party: a local server is `http://localhost:PORT`). Its host
    is the relying party id (`rp_id`, which may be a parent domain of it), so passkeys
    registered here work on this host only. `sign_in` (the server's `SignIn`, the one
    `Pages` and `OAuth` take) sends a browser with no user to sign in and back to the
    approval link or the passkeys page. `browser` says how a browser proves its user (by
    default `sign_in`'s cookie, or the same `SignedInCookie` as `Pages`). `store` keeps
    the sealed passkeys and approvals (in memory by default: one process;
    `RedisApprovalStore` across workers, with `RedisCompletionBus` to wake the call on
    whichever worker waits).
    `second_approvers(user)` says who may be the second approver of a four-eyes approval
    (any other user with a passkey by default); `display_name(user)` how the second
    approver's page names the user who asks (by default it names nobody: a subject is
    often an email address or an account id). `without_url_mode`: "refuse" (the
    default: the -32021 error naming the capability) or "link" (a tool error giving the
    user the link). `ceremony_timeout` is how long the browser waits for the passkey.

    Raises:
        ApprovalConfigError: a configuration that cannot keep its promise (such as a
            `base_url` that is not http(s)), when it is built.
        TypeError: `keys` is not a `KeyRing`, or `second_approvers` is not a function.
    """

    def __init__(
        self,
        keys: KeyRing,
        base_url: str,
        *,
        path: str = DEFAULT_PATH,
        browser: BrowserIdentity | None = None,
        sign_in: SignInStep | None = None,
        store: ApprovalStore | None = None,
        rp_id: str | None = None,
        rp_name: str | None = None,
        second_approvers: SecondApprovers | None = None,
        display_name: DisplayName | None = None,
        without_url_mode: Literal["refuse", "link"] = "refuse",
        ceremony_timeout: float = 120.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(keys, KeyRing):
            raise TypeError(f"Approvals() needs the server's KeyRing, got {keys!r}")
        origin, host = _secure_origin(base_url)
        relying = _relying_party(host, rp_id)
        if not path.startswith("/") or path.endswith("/") or "{" in path:
            raise ApprovalConfigError(
                f"Approvals() path must start with / and not end with one: {path!r}"
            )
        if without_url_mode not in ("refuse", "link"):
            raise ApprovalConfigError(
                'Approvals(without_url_mode=...) is "refuse" or "link": an approval never '
                f"stands in for a person, got {without_url_mode!r}"
            )
        for name, hook in (("second_approvers", second_approvers), ("display_name", display_name)):
            if hook is not None and not callable(hook):
                raise TypeError(f"Approvals({name}=...) takes a function of the User")
        timeout = seconds(ceremony_timeout, "Approvals(ceremony_timeout=...)")
        self.base = base_url.rstrip("/") + path
        self.path = path
        self.passkeys_url = f"{self.base}/passkeys"
        self.sign_in = sign_in
        self.browser = identity_of(browser, sign_in, keys, origin, clock)
        self.store: ApprovalStore = store if store is not None else MemoryApprovalStore(now=clock)
        check_approval_store(self.store)
        self._fallback: Any = NO_FALLBACK if without_url_mode == "refuse" else LINK_IN_ERROR
        self._clock = clock
        self._vault = Vault(keys, self.store, self.base, clock)
        self._asks = Asks(keys, self._vault, self.base, clock)
        self._links = ApprovalLinks(keys, self.base)
        self._passkeys = UserPasskeys(self._vault)
        ceremony = Ceremony(relying, rp_name or relying, origin, int(timeout * 1000))
        forgery = Forgery(
            keys.authenticator("mcp_resolve/approvals/csrf"), path, origin.startswith("https://")
        )
        signed_out = SignedOut(sign_in, "Approvals", "An approval or passkeys page", plain)
        self._approval_page = ApprovalPage(
            links=self._links,
            asks=self._asks,
            passkeys=self._passkeys,
            ceremony=ceremony,
            browser=self.browser,
            forgery=forgery,
            origin=origin,
            base=self.base,
            clock=clock,
            second_approvers=second_approvers,
            display_name=display_name,
            signed_out=signed_out,
        )
        self._passkey_page = PasskeyPage(
            keys,
            vault=self._vault,
            passkeys=self._passkeys,
            ceremony=ceremony,
            links=self._links,
            browser=self.browser,
            forgery=forgery,
            signed_out=signed_out,
            origin=origin,
            base=self.base,
            clock=clock,
        )

    async def require(
        self,
        message: str,
        *,
        ref: str,
        four_eyes: bool = False,
        timeout: float = DEFAULT_DEADLINE,
        call: str | None = None,
    ) -> Approval | ElicitURL:
        """The signed-in user's passkey approval of exactly `message`, once they gave it
        (taken: this call runs, the next one is asked again); until then the question
        that sends them to the approval page and waits, at most `timeout` seconds from
        the first ask (the deadline). `ref` names the deed (stable across the rounds of a
        call: "delete acme/web"); `four_eyes` also needs another user's approval. `call`
        is the call's identity, the resolver's `IdempotencyKey`: given, the approval is
        bound to this call by what the call carries, so that no record of the store
        (nor a writer of it) can make it let another call through."""
        if not isinstance(message, str) or not message.strip() or len(message) > MAX_MESSAGE:
            raise TypeError(
                f"Approvals.require() needs the words to approve, 1 to {MAX_MESSAGE} characters"
            )
        if not isinstance(ref, str) or not ref:
            raise TypeError(f"Approvals.require() needs a non-empty ref, got {ref!r}")
        deadline = seconds(timeout, "Approvals.require(timeout=...)", TypeError)
        user = signed_in_user()
        if user is None:
            raise ToolError(
                "An approval is given by a signed-in user with their passkey, and this call "
                "has none: the server needs MCP authorization, and the client must sign in"
            )
        if call is not None and (not isinstance(call, str) or not call):
            raise TypeError(
                "Approvals.require(call=...) takes the call's IdempotencyKey (a resolver "
                f"parameter annotated IdempotencyKey), got {call!r}"
            )
        if call is not None and self._fallback is LINK_IN_ERROR:
            raise ToolError(
                "Approvals.require(call=...) binds an approval to its call, and "
                'Approvals(without_url_mode="link") has the user approve for the next call: '
                "use one or the other"
            )
        tag = self._asks.user_tag(user)
        base = self._asks.base(tag, ref, message)
        eyes = bool(four_eyes)
        nonce = None if call is None else self._asks.nonce_of_call(base, call, eyes)
        if nonce is None:
            asked = await self._asks.current(base)
        else:
            asked = await self._asks.find(base, nonce)
        if asked is not None and asked.four_eyes == eyes:
            said = await self._asks.approvers(asked)
            if all(role in said for role in asked.roles):
                if await self._asks.take(asked, call_bound=nonce is not None):
                    approvers = tuple(said[role] for role in asked.roles)
                    return Approval(message, approvers, self._clock())
                asked = None  # another call took it: this one is asked anew
        if asked is None or asked.four_eyes != eyes:
            asked = await self._asks.open(base, message, user, tag, deadline, eyes, nonce)
        left = max(math.ceil(asked.deadline - self._clock()), 1)  # whole seconds, as said
        return ElicitURL(
            message,
            f"{self.base}/{self._links.token(asked, 'first')}",
            elicitation_id=self._asks.elicitation_id(asked),
            wait=True,
            timeout=left,
            fallback=self._fallback,
        )

    async def forget_passkeys(self, user: User) -> None:
        """Drop every passkey of `user` (an operator's reset after a lost device: the user
        adds a new one with their sign-in alone, so check who they are first)."""
        await self._passkeys.forget(user)

    def routes(self) -> list[Route]:
        """The Starlette routes to add to the server's HTTP app (see `mount`)."""
        both = ["GET", "POST"]
        return [
            Route(f"{self.path}/passkeys", self._passkey_page.handle, methods=both),
            Route(f"{self.path}/{{token}}", self._approval_page.handle, methods=both),
        ]

    def mount(self, server: Any) -> None:
        """Serve the pages on `server`'s HTTP app: an `MCPServer` or a fastmcp server (their
        `custom_route`, which MCP authorization does not guard: the pages check the
        browser's user themselves), or a Starlette app; and the routes of its `sign_in`
        (once per server)."""
        note(server, "store of approvals", not isinstance(self.store, MemoryApprovalStore))
        mount_routes(server, self.routes(), "Approvals.mount()")
        if self.sign_in is not None:
            self.sign_in.mount(server)


def _secure_origin(base_url: object) -> tuple[str, str]:
    """The origin and host of `base_url`, refused where a browser would refuse WebAuthn:
    the pages' rule (HTTPS, plain HTTP only on the loopback; `*.localhost` too, which
    browsers count as the loopback), and no IP address."""
    if not isinstance(base_url, str) or not base_url:
        raise ApprovalConfigError(
            "Approvals() needs base_url, the server's public origin (its host is the passkeys' "
            "relying party)"
        )
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host and _is_ip(host):
        raise ApprovalConfigError(
            f"Approvals() base_url {base_url!r} names an IP address, which browsers refuse as "
            "a passkey's relying party: use the server's domain (http://localhost:PORT for "
            "a local server)"
        )
    if not (parts.scheme == "http" and host.endswith(".localhost")):
        https_or_loopback(base_url, "Approvals() base_url", ApprovalConfigError)
    return origin_of(base_url), host


def _relying_party(host: str, rp_id: str | None) -> str:
    if rp_id is None:
        return host
    if not isinstance(rp_id, str) or not (host == rp_id or host.endswith("." + rp_id)):
        raise ApprovalConfigError(
            f"Approvals(rp_id={rp_id!r}) must be the host of base_url ({host}) or a parent "
            "domain of it"
        )
    return rp_id


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True
