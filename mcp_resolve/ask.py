"""`Ask`: a tool argument the user is asked for when the client leaves it out."""

from __future__ import annotations

from typing import Any

from .errors import COLLECTING
from .unwrapped import unwrapped_error


class Ask:
    """Marks a tool parameter the user is asked for when the client leaves it out:
    `project: Annotated[str, Ask("Which project?")]`.

    The parameter stays in the tool's input schema, optional: a client that sends it is
    not asked, and one that leaves it out makes the call ask the user for exactly that
    field, with `message`, on either protocol generation. The form is
    built from the parameter's own type and constraints (`Field(description=..., ge=...)`,
    a `Literal` or an enum for choices), and the answer is validated as the argument
    would have been. A value the client sends that fails validation is refused as any
    invalid argument is, by the framework, before anything is asked: the model reads
    which field was wrong and can send it again. A type no form can ask for (a list of
    numbers, a nested model) is refused when the tool is registered.
    """

    __slots__ = ("message",)

    def __init__(self, message: str, /) -> None:
        if not isinstance(message, str) or not message.strip():
            raise TypeError(f"Ask(...) takes the question to show the user, got {message!r}")
        self.message = message

    def __repr__(self) -> str:
        return f"Ask({self.message!r})"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        """Refuse to become a plain required input: registered without mcp_resolve's
        wrapper, the framework would make the client send it and never ask (see
        `Resolve.__get_pydantic_core_schema__`)."""
        if COLLECTING.get() is not None:
            return handler(source)
        raise unwrapped_error(self, repr(self), getattr(handler, "field_name", None))
