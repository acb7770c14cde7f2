"""`SecretForm`: a form the user fills on a page of the server, never through the client.

URL mode exists for what must not pass through the model or the client: an API key, a
password. A resolver asks with `form.ask(message, ref=...)`, an `ElicitURL` to a page of
this server (the same link, user binding, CSRF, one-time use and expiry as `Pages.ask`);
the MCP client only learns that the user agreed to open it. The page renders the pydantic
model's fields (every pydantic secret type as `type="password"`), validates what the browser
submits against the model (errors re-render the form; a secret field's value is never
written back into the page), and keeps the submitted fields sealed with the key ring
(AES-256-GCM, bound to the form, the question and the user) in the answers store until
the link expires. The resolver, woken by `complete()`, reads them with
`await form.answer(ref)`, validated into the model again.

Nothing here logs a value: pydantic's errors are read without their input, and a refused
answer is logged by its form's name alone.
"""

from __future__ import annotations

import html
import json
import logging
import types
import typing
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Secret, SecretBytes, SecretStr, ValidationError

from ..markers import LINK_IN_ERROR, ElicitURL
from ..state.seal import Binding, InvalidState, StateSealer
from .form_answers import PageAnswers
from .link import Link

logger = logging.getLogger("mcp_resolve")

M = TypeVar("M", bound=BaseModel)
MAX_FIELDS = 12  # a page's POST carries at most 16 form fields, the anti-forgery one included
SEAL_METHOD = "mcp_resolve/pages/form"


class SecretForm(Generic[M]):
    """One form, rendered from `model`, that `Pages.secret_form()` registered on its pages.

    Made at import time on every worker (`pages.secret_form(Model)`), so whichever worker
    a browser reaches knows how to show and check it. `title`, `text` and `button` are
    what the page says, fixed by the server (never taken from the link). From its pages
    it takes how to make the question (`question`), how to name it for the signed-in
    user (`identify`: the elicitation id and the user's tag), where answers are kept and
    the sealer that seals them.
    """

    def __init__(
        self,
        model: type[M],
        *,
        name: str,
        title: str,
        text: str,
        button: str,
        question: Callable[[str, str, str, float | None, Any], ElicitURL],
        identify: Callable[[str], tuple[str, str]],
        answers: PageAnswers,
        sealer: StateSealer,
    ) -> None:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"secret_form() takes a pydantic model class, got {model!r}")
        if not model.model_fields:
            raise ValueError(f"secret_form({model.__name__}): the model has no fields")
        if len(model.model_fields) > MAX_FIELDS:
            raise ValueError(
                f"secret_form({model.__name__}): at most {MAX_FIELDS} fields on one page"
            )
        self.model = model
        self.name = name
        self.page = f"form:{name}"
        self.title = title
        self.text = text
        self.button = button
        self._question = question
        self._identify = identify
        self._answers = answers
        self._sealer = sealer
        self._fields = [
            (field.alias or attribute, field.title or _label(attribute), field)
            for attribute, field in model.model_fields.items()
        ]
        if any(key == "csrf" for key, _, _ in self._fields):
            raise ValueError(
                f"secret_form({model.__name__}): 'csrf' is the page's own field; rename it"
            )

    def ask(
        self,
        message: str,
        *,
        ref: str,
        timeout: float | None = None,
        fallback: Any = LINK_IN_ERROR,
    ) -> ElicitURL:
        """The question that sends the signed-in user to this form and waits until they
        submit it; `ref` as `Pages.ask`'s, `timeout` and `fallback` as `ElicitURL`'s."""
        return self._question(self.page, message, self._ref(ref), timeout, fallback)

    async def answer(self, ref: str) -> M | None:
        """What the signed-in user submitted for `ref`, validated into the model; None until
        they did (or once the link expired)."""
        eid, user_tag = self._identify(self._ref(ref))
        sealed = await self._answers.read(eid)
        if sealed is None:
            return None
        try:
            opened = self._sealer.unseal(sealed, binding=self._binding(eid, user_tag))
            return self.model.model_validate(json.loads(opened))
        except (InvalidState, ValueError, TypeError):  # ValidationError is a ValueError
            logger.warning("A kept answer of the form %r was refused; asking again", self.name)
            return None

    # What the page's routes call.

    def render(self, csrf: str, errors: dict[str, str], echo: dict[str, str]) -> str:
        """The form's HTML: each field, its description and error; `echo` holds the values
        of non-secret fields to show again after an error (secret fields start empty)."""
        parts = [f"<p>{html.escape(self.text)}</p>"]
        if "" in errors:
            parts.append(f'<p role="alert"><strong>{html.escape(errors[""])}</strong></p>')
        parts.append('<form method="post" autocomplete="off">')
        parts.append(f'<input type="hidden" name="csrf" value="{html.escape(csrf)}">')
        for key, label, field in self._fields:
            kind = _input_type(field.annotation)
            ident = f"field-{html.escape(key)}"
            value = "" if kind in ("password", "checkbox") else echo.get(key, "")
            attributes = f'id="{ident}" name="{html.escape(key)}" type="{kind}"'
            if kind == "checkbox":
                attributes += ' value="on"' + (" checked" if echo.get(key) else "")
            else:
                attributes += f' value="{html.escape(value)}"'
                if field.is_required():
                    attributes += " required"
            if kind == "password":
                attributes += ' autocomplete="new-password"'
            parts.append(f'<p><label for="{ident}">{html.escape(label)}</label><br>')
            parts.append(f"<input {attributes}>")
            if field.description:
                parts.append(f"<br><small>{html.escape(field.description)}</small>")
            if key in errors:
                parts.append(f'<br><strong role="alert">{html.escape(errors[key])}</strong>')
            parts.append("</p>")
        parts.append(f'<button type="submit">{html.escape(self.button)}</button></form>')
        return "".join(parts)

    def check(self, form: dict[str, str]) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """The submitted fields of the model, if they validate; else the error of each
        field (pydantic's message, without the value it refused)."""
        submitted: dict[str, Any] = {}
        for key, _, field in self._fields:
            if _input_type(field.annotation) == "checkbox":
                submitted[key] = key in form
            elif key in form:
                submitted[key] = form[key]
        try:
            self.model.model_validate(submitted)
        except ValidationError as error:
            found: dict[str, str] = {}
            for problem in error.errors(include_input=False, include_url=False):
                where = problem.get("loc") or ("",)
                found.setdefault(str(where[0]), str(problem.get("msg", "Not valid")))
            return None, found
        return submitted, {}

    def echo(self, form: dict[str, str]) -> dict[str, str]:
        """The values worth showing again after an error: non-secret fields only."""
        return {
            key: form[key]
            for key, _, field in self._fields
            if key in form and _input_type(field.annotation) != "password"
        }

    async def keep(self, link: Link, submitted: dict[str, Any], expires_at: float) -> bool:
        """Seal what the user submitted and keep it for the resolver (once per question);
        True also when an answer of this user to this question is kept already (the
        user's earlier POST, which may have failed after it: what they entered first
        stays), False when what is kept there is not theirs."""
        binding = self._binding(link.elicitation_id, link.user_tag)
        payload = json.dumps(submitted, separators=(",", ":"), ensure_ascii=True)
        sealed = self._sealer.seal(payload, binding=binding)
        if await self._answers.keep(link.elicitation_id, sealed, expires_at):
            return True
        kept = await self._answers.read(link.elicitation_id)
        try:
            return kept is not None and bool(self._sealer.unseal(kept, binding=binding))
        except InvalidState:
            return False

    def _binding(self, elicitation_id: str, user_tag: str) -> Binding:
        return Binding(SEAL_METHOD, self.name, elicitation_id, user_tag or None)

    def _ref(self, ref: str) -> str:
        if not isinstance(ref, str) or not ref:
            raise TypeError(f"SecretForm.ask() needs a non-empty ref, got {ref!r}")
        return f"{self.page}\x1f{ref}"  # a form's refs never meet Pages.ask()'s


def _input_type(annotation: Any) -> str:
    """`password` for a secret, `checkbox` for a bool, else `text`.

    A secret is any of pydantic's secret types (`SecretStr`, `SecretBytes`, `Secret[T]`
    and subclasses), also under `Optional`, a union of secrets, or `Annotated` at any
    depth: what the model hides when printed is never shown in the page either.
    """
    kinds = _alternatives(annotation)
    if kinds and all(_is_secret(a) for a in kinds):
        return "password"
    if kinds == {bool}:
        return "checkbox"
    return "text"


def _alternatives(annotation: Any) -> set[Any]:
    """The types `annotation` may hold, `Annotated` and `Optional` read through (None out)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _alternatives(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        found: set[Any] = set()
        for option in typing.get_args(annotation):
            found |= _alternatives(option)
        return found
    return set() if annotation is type(None) else {annotation}


def _is_secret(annotation: Any) -> bool:
    kind = typing.get_origin(annotation) or annotation  # `Secret[str]` is an alias of `Secret`
    return isinstance(kind, type) and issubclass(kind, (SecretStr, SecretBytes, Secret))


def _label(attribute: str) -> str:
    return attribute.replace("_", " ").capitalize()
