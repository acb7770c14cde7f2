"""Replace a resolver everywhere it is used, for the duration of a block or a test."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar, cast

from ..analysis.overrides import overrides as _overrides

F = TypeVar("F", bound=Callable[..., Any])


class override:
    """Run `replacement` wherever a graph uses the resolver `original`, until the block ends.

    ```python
    with override(check_stock, lambda isbn: Stock(isbn=isbn, title="Test", copies=0)):
        result = await call(order_book, {"isbn": "x"}, answers=...)
    ```

    Tools are analysed once, usually at import, so replacing a resolver cannot mean
    rebuilding them by hand. While an override is active, every graph that uses `original`
    (already built or not, called through `call()`, `graph.start()` or a real MCP server)
    runs a copy analysed again with `replacement` in its place; outside any override a
    call pays one integer comparison. The replacement may have another signature (its
    parameters are classified as usual: tool arguments, context, `Resolve(...)`
    dependencies), and keeps `original`'s question key, so answers keyed for the original
    still apply. Names in errors and traces are the replacement's.

    Overrides nest (the innermost wins), are undone on exit even when the block raises,
    and may be used as a decorator on sync or async functions (tests included). They are
    process-wide, not per task: don't run tests that override the same resolver in
    parallel threads of one process.
    """

    __slots__ = ("_tokens", "original", "replacement")

    def __init__(self, original: Callable[..., Any], replacement: Callable[..., Any]) -> None:
        if not callable(original):
            raise TypeError(f"override() takes the resolver to replace, got {original!r}")
        if not callable(replacement):
            raise TypeError(f"override() takes a callable replacement, got {replacement!r}")
        self.original = original
        self.replacement = replacement
        self._tokens: list[object] = []

    def __enter__(self) -> override:
        self._tokens.append(_overrides.push(self.original, self.replacement))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _overrides.pop(self._tokens.pop())

    def __call__(self, fn: F) -> F:
        """Decorate a function (or an async test) to run with the override in force."""
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await fn(*args, **kwargs)

            return cast(F, run_async)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return cast(F, run)

    def __repr__(self) -> str:
        return f"override({self.original!r}, {self.replacement!r})"
