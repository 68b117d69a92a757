"""The workload AST: frozen dataclasses, each node carrying its source line and column.

``to_dict()`` gives a plain, JSON-ready form (used by the parser fixtures):
every node becomes ``{"node": <class name>, ...fields..., "at": "line:column"}``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Union

UNIT_MICROSECONDS = {
    "seconds": 1_000_000,
    "minutes": 60_000_000,
    "hours": 3_600_000_000,
    "days": 86_400_000_000,
}


@dataclass(frozen=True)
class Node:
    """Base of every AST node: its 1-based source position."""

    line: int = field(kw_only=True, default=0)
    column: int = field(kw_only=True, default=0)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": type(self).__name__}
        for f in dataclasses.fields(self):
            if f.name in ("line", "column"):
                continue
            out[f.name] = _plain(getattr(self, f.name))
        out["at"] = f"{self.line}:{self.column}"
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Node):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


# ---- expressions -------------------------------------------------------------


@dataclass(frozen=True)
class Literal(Node):
    """A number, a string or a boolean."""

    value: int | float | str | bool


@dataclass(frozen=True)
class AttrRef(Node):
    """``var.attr`` (``next=False``) or ``NEXT(var).attr`` (``next=True``)."""

    var: str
    attr: str
    next: bool = False


@dataclass(frozen=True)
class BinOp(Node):
    """Arithmetic ``left op right`` with op in ``+ - * / %``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Neg(Node):
    """Unary minus of a non-literal expression (``-5`` is a Literal)."""

    operand: Expr


Expr = Union[Literal, AttrRef, BinOp, Neg]  # noqa: UP007 - forward references


# ---- WHERE conditions ----------------------------------------------------------


@dataclass(frozen=True)
class Name(Node):
    """A bare attribute name (GROUP-BY, equivalence, RETURN group attribute)."""

    name: str


@dataclass(frozen=True)
class Equivalence(Node):
    """``[a, b, ...]``: every event of a trend has equal values of these attributes."""

    attrs: tuple[Name, ...]


@dataclass(frozen=True)
class Comparison(Node):
    """``left op right`` with op in ``= != < <= > >=``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class InList(Node):
    """``expr IN (v1, v2, ...)`` over literal values."""

    expr: Expr
    values: tuple[int | float | str | bool, ...]


Condition = Union[Equivalence, Comparison, InList]  # noqa: UP007


# ---- patterns ------------------------------------------------------------------


@dataclass(frozen=True)
class Atom(Node):
    """One event type occurrence, optionally aliased (``Check C``)."""

    type: str
    alias: str | None = None

    @property
    def var(self) -> str:
        """The variable name of this occurrence: its alias, else its type."""
        return self.alias or self.type


@dataclass(frozen=True)
class Seq(Node):
    """``SEQ(P1, P2, ...)``; a bare comma list in PATTERN is a Seq too."""

    items: tuple[Pattern, ...]


@dataclass(frozen=True)
class Kleene(Node):
    """``P+``."""

    inner: Pattern


@dataclass(frozen=True)
class Not(Node):
    """``NOT P`` (only meaningful inside a SEQ)."""

    inner: Pattern


Pattern = Union[Atom, Seq, Kleene, Not]  # noqa: UP007


# ---- RETURN, window, query -----------------------------------------------------


@dataclass(frozen=True)
class Aggregate(Node):
    """``COUNT(*)``, ``COUNT(E)``, ``SUM|AVG|MIN|MAX(E.a)`` with optional alias.

    ``fn`` is the plan's function name (count_star, count, sum, avg, min, max);
    ``text`` is the aggregate as written with whitespace removed.
    """

    fn: str
    var: str | None
    attr: str | None
    alias: str | None
    text: str

    @property
    def output_name(self) -> str:
        return self.alias or self.text


ReturnItem = Union[Name, Aggregate]  # noqa: UP007


@dataclass(frozen=True)
class Duration(Node):
    """``n unit``; ``unit`` is canonical (seconds, minutes, hours, days)."""

    value: int | float
    unit: str

    @property
    def microseconds(self) -> int:
        """The duration in µs, rounded to the nearest µs."""
        return round(self.value * UNIT_MICROSECONDS[self.unit])


@dataclass(frozen=True)
class Window(Node):
    """``WITHIN d [SLIDE s]``; ``slide`` is None for a tumbling window."""

    within: Duration
    slide: Duration | None = None

    @property
    def within_us(self) -> int:
        return self.within.microseconds

    @property
    def slide_us(self) -> int:
        return self.slide.microseconds if self.slide is not None else self.within.microseconds


@dataclass(frozen=True)
class Query(Node):
    """One query; ``semantics`` is canonical lower case (default skip-till-any-match)."""

    name: str
    returns: tuple[ReturnItem, ...]
    pattern: Pattern
    semantics: str
    conditions: tuple[Condition, ...]
    group_by: tuple[Name, ...]
    window: Window | None


@dataclass(frozen=True)
class Workload(Node):
    """A parsed workload file; ``path`` names it in error messages, ``text`` is its source."""

    queries: tuple[Query, ...]
    path: str | None = field(default=None, compare=False)
    text: str = field(default="", repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.pop("path", None)
        out.pop("text", None)
        return out
