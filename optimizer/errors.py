"""Diagnostics and the WorkloadError that carries all of them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_PATH = "<workload>"


@dataclass(frozen=True)
class Diagnostic:
    """One error: the query it is in (None before any query name), position, message."""

    query: str | None
    line: int
    column: int
    message: str

    def sort_key(self) -> tuple[int, int, str]:
        return (self.line, self.column, self.message)

    def format(self, path: str | None = None) -> str:
        where = f"{path or DEFAULT_PATH}:{self.line}:{self.column}: "
        if self.query is not None:
            where += f"query {self.query}: "
        return where + self.message


class OptimizerError(Exception):
    """The optimizer's error root: anything wrong with a workload or a planning request."""


class WorkloadError(OptimizerError, ValueError):
    """An invalid workload; ``str()`` is one ``path:line:column: query q: message`` line per error."""

    def __init__(self, diagnostics: Iterable[Diagnostic], path: str | None = None) -> None:
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.path = path or DEFAULT_PATH
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(d.format(self.path) for d in self.diagnostics)
