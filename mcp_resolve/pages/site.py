"""`Pages`: questions answered on a page the MCP server serves itself, bound to the user.

A resolver asks with `pages.ask(message, ref=...)`, an `ElicitURL` whose link is this
server's own page (see `link`), and which waits (`wait=True`): on a legacy connection the
call stays open, on 2026-07-28 the consenting retry is held, until the user finishes the
page; the resolver then runs again and `await pages.finished(question)` is True. `ref` is
the author's name for the question, stable across the rounds of a call (an order number,
"connect-github"): with the signed-in user, the server and the question's text it makes
the elicitation id, so one user's page can never finish another user's question, even
under the same ref, and a question whose text changed (another amount) needs a consent
of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel
from starlette.routing import Route

from ..engine.fresh_questions import question_epoch
from ..markers import LINK_IN_ERROR, ElicitURL
from ..protocol.signed_in import signed_in_user
from ..seconds import seconds
from ..state.at_most_once import CLOCK_SKEW
from ..state.keys import KeyRing
from ..state.replay_guard import ReplayGuard
from ..state.seal import StateSealer
from .browser import BrowserIdentity, SignInStep, identity_of
from .finished import FinishedPages, FinishedRecords, check_finished_pages
from .form_answers import PageAnswers
from .forms import SecretForm
from .link import Signer, digest
from .mounting import mount_routes
from .page_stores import PageStores, check_answers, check_together, chosen, mounted
from .routes import PageRoutes, PageText, origin_of
from .secure_url import https_or_loopback
from .signed_out import SignedOut

DEFAULT_PATH = "/mcp-resolve/pages"
DEFAULT_TTL = 600.0
CONTINUE = PageText(
    title="Continue",
    text="Your app asked you to confirm this step. Continue only if you started it.",
    button="Continue",
)
M = TypeVar("M", bound=BaseModel)


class Pages:
    """Pages this server serves at `<base_url><path>/<token>`, for its URL questions.

    `keys` signs the links (the server's `KeyRing`; the same keys on every worker).
    `base_url` is the server's public origin as browsers reach it (HTTPS; plain HTTP only
    on the loopback, where its cookies cannot be `Secure`); it is also the audience links
    are bound to. `ttl` bounds a link's life (between one and two `ttl`s,
    see `link`). `sign_in` (a `SignIn`) sends a browser with no user to sign in and back
    to the link; without it, such a browser is told what is missing. `browser` says how a
    browser proves its user (by default `sign_in`'s cookie, or a `SignedInCookie` that
    the server's own sign-in step sets). `guard` makes each question
    finishable once (across workers, a shared guard such as `RedisReplayGuard`);
    `finished` records which were finished (in memory by default: one process);
    `answers` keeps what users submitted on form pages, sealed (`secret_form`; in memory
    by default, `RedisPageAnswers` across workers). `stores` gives all three at once
    (`RedisStores(url, keys=..., audience=...)`, one Redis); a guard and a finished store
    of which only one is shared between workers are refused (`page_stores`).

    Without MCP authorization there is no user to bind a page to: `ask()` is refused
    unless `anonymous=True`, in which case whoever holds the link may finish it (the link
    is then the only secret; it is still one-time, expiring and bound to the question).
    """

    def __init__(
        self,
        keys: KeyRing,
        base_url: str,
        *,
        path: str = DEFAULT_PATH,
        ttl: float = DEFAULT_TTL,
        browser: BrowserIdentity | None = None,
        sign_in: SignInStep | None = None,
        guard: ReplayGuard | None = None,
        finished: FinishedPages | None = None,
        answers: PageAnswers | None = None,
        stores: PageStores | None = None,
        anonymous: bool = False,
        page: PageText = CONTINUE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(keys, KeyRing):
            raise TypeError(f"Pages() needs the server's KeyRing, got {keys!r}")
        origin = origin_of(https_or_loopback(base_url, "Pages() base_url"))
        if not path.startswith("/") or path.endswith("/") or "{" in path:
            raise ValueError(f"Pages() path must start with / and not end with one, got {path!r}")
        self.ttl = seconds(ttl, "Pages(ttl=...)")
        self.base = base_url.rstrip("/") + path
        self.path = path
        self.anonymous = bool(anonymous)
        self.sign_in = sign_in
        self.browser = identity_of(browser, sign_in, keys, origin, clock)
        self.guard, self.store, self.answers = chosen(stores, guard, finished, answers)
        check_finished_pages(self.store)
        self._shared = check_together(self.guard, self.store)
        self._clock = clock
        self._signer = Signer(keys, self.base)
        self._sealer = StateSealer(  # the answers of form pages, for as long as a link lives
            keys, ttl=2 * self.ttl + CLOCK_SKEW, audience=self.base, now=clock
        )
        self._endpoint = PageRoutes(
            signer=self._signer,
            browser=self.browser,
            guard=self.guard,
            finished=FinishedRecords(self.store, self._sealer),
            answers=self.answers,
            texts={"continue": page},
            origin=origin,
            path=path,
            secure=origin.startswith("https://"),
            clock=clock,
            signed_out=SignedOut(sign_in, "Pages", "A page"),
        )

    def ask(
        self,
        message: str,
        *,
        ref: str,
        timeout: float | None = None,
        fallback: Any = LINK_IN_ERROR,
    ) -> ElicitURL:
        """The question that sends the signed-in user to this server's page, which shows
        `message` (at most 1 KiB of UTF-8: the link carries it, encrypted), and waits
        until they finish it (`timeout`: as `ElicitURL`'s). Call it in a resolver, and
        hand it to `finished()` first.

        A client without URL mode gets, by default, a tool error with the link
        (`LINK_IN_ERROR`): the user opens it, finishes, and calls the tool again, which
        finds the page finished. `fallback=` takes any `ElicitURL` fallback instead."""
        if not isinstance(ref, str) or not ref:
            raise TypeError(f"Pages.ask() needs a non-empty ref, got {ref!r}")
        return self._question("continue", message, ref, timeout, fallback, digest(message))

    async def finished(self, question: ElicitURL) -> bool:
        """Whether the signed-in user finished `question` (what `ask()` made in this call):
        that very question, so a changed message is not finished by an earlier page."""
        if isinstance(question, str):
            raise TypeError(
                "Pages.finished() takes the question pages.ask() made, not its ref: "
                "question = pages.ask(message, ref=...); if await pages.finished(question): "
                "... (a question counts as finished only with the very text the user saw)"
            )
        link = self._signer.read(str(getattr(question, "url", "")).removeprefix(self.base + "/"))
        if link is None or not isinstance(question, ElicitURL):
            raise TypeError(f"Pages.finished() takes a question these pages made, got {question!r}")
        if link.user_tag != self._signer.user_tag(signed_in_user()):
            return False  # made for another user than this call's
        return await self._endpoint.finished.finished(link.elicitation_id, link.user_tag)

    def secret_form(
        self,
        model: type[M],
        *,
        name: str | None = None,
        title: str = "Enter it here",
        text: str = "Your app asked for this. It goes to the server only, never to the app.",
        button: str = "Save",
    ) -> SecretForm[M]:
        """A form page for `model` (a pydantic model; `SecretStr` fields masked), whose
        answer goes to the resolver and never through the MCP client: see `SecretForm`.
        Call it at import time, on every worker. `name` (the model's name by default)
        tells the forms of these pages apart and is part of their links."""
        form = SecretForm(
            model,
            name=name or model.__name__,
            title=title,
            text=text,
            button=button,
            question=self._question,
            identify=self._identify,
            answers=self.answers,
            sealer=self._sealer,
        )
        check_answers(self.store, self.answers)
        known = self._endpoint.forms.get(form.page)
        if known is not None and known.model is not model:
            raise ValueError(f"Pages.secret_form(): a form named {form.name!r} exists already")
        self._endpoint.forms[form.page] = form
        return form

    def routes(self) -> list[Route]:
        """The Starlette routes to add to the server's HTTP app (see `mount`)."""
        return [Route(f"{self.path}/{{token}}", self._endpoint.handle, methods=["GET", "POST"])]

    def mount(self, server: Any) -> None:
        """Serve the pages on `server`'s HTTP app: an `MCPServer` or a fastmcp server (by
        their `custom_route`, which no MCP authorization guards: the page checks the
        browser's user itself), or a Starlette app (such as the low-level `Server`'s
        `streamable_http_app()`); and the routes of its `sign_in` (once per server)."""
        mounted(server, self._shared)
        mount_routes(server, self.routes(), "Pages.mount()")
        if self.sign_in is not None:
            self.sign_in.mount(server)

    def _question(
        self,
        page: str,
        message: str,
        ref: str,
        timeout: float | None,
        fallback: Any,
        question_digest: str = "",
    ) -> ElicitURL:
        eid, tag = self._identify(ref, question_digest)
        token = self._signer.token(page, eid, tag, message, self._clock(), self.ttl)
        url = f"{self.base}/{token}"
        return ElicitURL(
            message, url, elicitation_id=eid, wait=True, timeout=timeout, fallback=fallback
        )

    def _identify(self, ref: str, question_digest: str = "") -> tuple[str, str]:
        """The elicitation id of `ref` (and of the question of `question_digest`, when
        given) for the signed-in user, and the user's tag."""
        tag = self._user_tag(ref)
        epoch = question_epoch()  # asked by a user-scoped value its user forgot: a new id
        return self._signer.elicitation_id(tag, ref, question_digest, epoch), tag

    def _user_tag(self, ref: str) -> str:
        user = signed_in_user()
        if user is None and not self.anonymous:
            shown = ref.rsplit("\x1f", 1)[-1]  # a form's ref as its author wrote it
            raise ToolError(
                f"The page {shown!r} must be bound to a signed-in user, and this call has none: "
                "the server needs MCP authorization (or Pages(anonymous=True), where whoever "
                "holds the link may finish it)"
            )
        return self._signer.user_tag(user)
