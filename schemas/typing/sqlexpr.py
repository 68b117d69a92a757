"""Spark SQL expressions built as text, sent to the JVM once.

Every call of PySpark's ``functions`` / ``Column`` API is one or more round trips to
the driver JVM (py4j). Building ingest's typing and validation rules that way for
the sample ride stream (18 attributes) was most of the 4,845 round trips of an
ingest of one landing file; built here, the ingest makes 1,838 (docs/lake.md).
``Sql`` is the same small algebra (``when``/``otherwise``, comparisons,
``&``/``|``/``~``, casts, ``rlike``, ``isin``, functions) written as SQL text;
``column()`` hands the finished expression to Spark as one ``F.expr``.

Literals are written so Spark reads the same value and type as ``F.lit`` would make:
Python ints as INT when they fit 32 bits and BIGINT otherwise, floats as DOUBLE
(``inf``/``nan`` through a cast), text as an escaped string literal (backslash escapes
are on in Spark's parser by default). Every operator is parenthesised, so the
text's precedence is the tree's.
"""

from __future__ import annotations

import math
from typing import Any

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


class NotWritable(ValueError):
    """A name or value that Spark SQL text cannot hold as given."""


def quote_string(text: str) -> str:
    """A Spark SQL string literal for ``text``.

    ``$`` is written as the escape ``\\u0024``: Spark substitutes ``${name}`` in
    expression text before parsing it (``spark.sql.variable.substitute``).
    """
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("$", "\\u0024")
    return f"'{escaped}'"


def quote_name(name: str) -> str:
    """A column reference for ``name``; a name holding ``${`` cannot be written (see ``quote_string``)."""
    if "${" in name:
        raise NotWritable(f"column name {name!r}: '${{' cannot appear in a Spark SQL expression")
    return "`" + name.replace("`", "``") + "`"


def literal(value: Any) -> str:
    """SQL text of a Python value, typed as ``F.lit`` types it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if INT_MIN <= value <= INT_MAX:
            return f"({value})"
        if LONG_MIN <= value <= LONG_MAX:
            return f"({value}L)"
        raise NotWritable(f"integer {value} does not fit a Spark BIGINT")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"CAST({quote_string(repr(value))} AS DOUBLE)"
        return f"({value!r}D)"
    if isinstance(value, str):
        return quote_string(value)
    raise TypeError(f"no SQL literal for {type(value).__name__} {value!r}")


class Sql:
    """A Spark SQL expression as text; operators build larger expressions.

    ``when(...)`` makes an open ``CASE`` (it keeps its branches): ``.when`` adds a
    branch, ``.otherwise`` closes it with an ``ELSE``, as on a Column.
    """

    __slots__ = ("text", "_branches")
    __hash__ = None  # type: ignore[assignment]  # == builds an expression, as on a Column

    def __init__(self, text: str, branches: tuple[tuple[str, str], ...] = ()) -> None:
        self.text = text
        self._branches = branches

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Sql({self.text!r})"

    def column(self) -> Any:
        """The expression as a PySpark ``Column`` (one round trip)."""
        from pyspark.sql import functions as F

        return F.expr(self.text)

    def _op(self, op: str, other: Any) -> Sql:
        return Sql(f"({self.text} {op} {sql(other).text})")

    def __and__(self, other: Any) -> Sql:
        return self._op("AND", other)

    def __or__(self, other: Any) -> Sql:
        return self._op("OR", other)

    def __invert__(self) -> Sql:
        return Sql(f"(NOT {self.text})")

    def __eq__(self, other: Any) -> Sql:  # type: ignore[override]
        return self._op("=", other)

    def __ne__(self, other: Any) -> Sql:  # type: ignore[override]
        return self._op("!=", other)

    def __lt__(self, other: Any) -> Sql:
        return self._op("<", other)

    def __le__(self, other: Any) -> Sql:
        return self._op("<=", other)

    def __gt__(self, other: Any) -> Sql:
        return self._op(">", other)

    def __ge__(self, other: Any) -> Sql:
        return self._op(">=", other)

    def __add__(self, other: Any) -> Sql:
        return self._op("+", other)

    def __sub__(self, other: Any) -> Sql:
        return self._op("-", other)

    def __mul__(self, other: Any) -> Sql:
        return self._op("*", other)

    def __truediv__(self, other: Any) -> Sql:
        return self._op("/", other)

    def isNull(self) -> Sql:  # noqa: N802 - the Column API's name
        return Sql(f"({self.text} IS NULL)")

    def isNotNull(self) -> Sql:  # noqa: N802
        return Sql(f"({self.text} IS NOT NULL)")

    def isin(self, values: list[Any]) -> Sql:
        if not values:  # Spark's In over an empty list is false, NULL input included
            return Sql("false")
        return Sql(f"({self.text} IN ({', '.join(literal(v) for v in values)}))")

    def rlike(self, pattern: str) -> Sql:
        return Sql(f"({self.text} RLIKE {quote_string(pattern)})")

    def cast(self, kind: str) -> Sql:
        return Sql(f"CAST({self.text} AS {kind})")

    def try_cast(self, kind: str) -> Sql:
        return Sql(f"TRY_CAST({self.text} AS {kind})")

    def when(self, condition: Any, value: Any) -> Sql:
        """Another branch of a ``CASE`` made by ``when``."""
        return _case((*self._open(), (sql(condition).text, sql(value).text)))

    def otherwise(self, value: Any) -> Sql:
        """The ``CASE`` closed: ``ELSE value``."""
        return _case(self._open(), otherwise=sql(value).text)

    def _open(self) -> tuple[tuple[str, str], ...]:
        if not self._branches:
            raise ValueError(f"when()/otherwise() on an expression that is not an open CASE: {self.text[:60]}")
        return self._branches


def _case(branches: tuple[tuple[str, str], ...], otherwise: str | None = None) -> Sql:
    """``CASE WHEN ... THEN ... [ELSE ...] END`` of ``(condition, value)`` texts: open
    (more branches may follow) without ``otherwise``, closed with it."""
    whens = " ".join(f"WHEN {c} THEN {v}" for c, v in branches)
    if otherwise is None:
        return Sql(f"CASE {whens} END", branches)
    return Sql(f"CASE {whens} ELSE {otherwise} END")


def sql(value: Any) -> Sql:
    """``value`` as an expression: an ``Sql`` as is, a Python value as its literal."""
    return value if isinstance(value, Sql) else Sql(literal(value))


def col(name: str) -> Sql:
    return Sql(quote_name(name))


def lit(value: Any) -> Sql:
    return Sql(literal(value))


def when(condition: Any, value: Any) -> Sql:
    return _case(((sql(condition).text, sql(value).text),))


def call(function: str, *args: Any) -> Sql:
    """``function(args...)``: Spark SQL's function of that name."""
    return Sql(f"{function}({', '.join(sql(a).text for a in args)})")
