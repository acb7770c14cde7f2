"""The digest that pins a recorded answer to the exact question it answers: the canonical
JSON of the rendered question, a form's schema text kept per model class
(`engine/questions.py`). States sealed by a worker of the previous release carry digests
made from the whole rendering, so the bytes hashed must stay the same."""

from __future__ import annotations

import gc
import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field, create_model

from mcp_resolve import Elicit, ElicitURL, ListRoots, Sample
from mcp_resolve.client_requests import AnyQuestion
from mcp_resolve.engine.questions import question_digest, render_question


class Ship(BaseModel):
    ok: bool = Field(description="Ship it now?")
    note: str | None = None


def rendered_digest(request: AnyQuestion) -> str:
    """The digest as the whole rendering hashes (what every earlier release computed)."""
    canonical = json.dumps(
        render_question(request), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.blake2b(canonical.encode("ascii"), digest_size=12).hexdigest()


QUESTIONS: list[Any] = [
    Elicit("Charged 10. Ship?", Ship),
    Elicit('Grüße, "quoted" \\ and \U0001f600 \n new line', Ship),
    Elicit("", Ship),
    ElicitURL("Pay", "https://pay.example.com/o", elicitation_id="card-1"),
    Sample([], max_tokens=50, system_prompt="Summarise"),
    ListRoots(),
]


def test_the_digest_is_the_rendered_questions_own() -> None:
    for request in QUESTIONS:
        assert question_digest(request) == rendered_digest(request), request
    assert question_digest(QUESTIONS[0]) == question_digest(Elicit("Charged 10. Ship?", Ship))


def test_another_wording_or_schema_is_another_digest() -> None:
    class Other(BaseModel):
        ok: bool = Field(description="Ship it later?")

    digests = {
        question_digest(Elicit("Charged 10. Ship?", Ship)),
        question_digest(Elicit("Charged 11. Ship?", Ship)),
        question_digest(Elicit("Charged 10. Ship?", Other)),
    }
    assert len(digests) == 3


def test_a_form_built_at_run_time_gets_its_own_schemas_digest() -> None:
    """Forms of the same name built one after the other (the first collected in between,
    so the next may reuse its address) are told apart by what they ask."""
    seen = {}
    for kind in ("apples", "pears", "apples"):
        form = create_model("Detail", **{kind: (int, ...)})  # type: ignore[call-overload]
        request = Elicit("How many?", form)
        digest = question_digest(request)
        assert digest == rendered_digest(request)
        seen.setdefault(kind, set()).add(digest)
        del form, request
        gc.collect()
    assert len(seen["apples"]) == 1
    assert seen["apples"] != seen["pears"]
