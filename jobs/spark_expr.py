"""Local predicates of a plan pushed down into Spark, never failing and never stricter
than the engine.

Pushdown only narrows what replay reads: the engine evaluates every predicate
again on the events it receives. So a pushed-down condition may keep an event
the engine will reject, but must never drop one the engine would keep, and must
never fail where the engine would not. The rules that guarantee it:

* An expression is pushed down only when every operand's kind is known and the
  kinds agree (integers with integers, floats with floats, strings with
  strings): under Spark's ANSI mode a string compared with a number is cast and
  fails on ``'north'``, while the engine simply finds the comparison false; and
  Spark compares a long with a double as two doubles, while the engine compares
  ``2**53 + 1 > 9007199254740992.0`` exactly. An integer literal within
  ``±2**53`` (exact as a double) goes with floats too. Boolean and other
  columns are not pushed down.
* Arithmetic uses Spark's ``try_`` functions (``try_add``, ``try_subtract``,
  ``try_multiply``): an overflow gives NULL instead of ``ARITHMETIC_OVERFLOW``,
  and a NULL condition keeps the event (``coalesce(cond, true)``), since the
  engine computes with exact integers. ``/`` and ``%`` are not pushed down
  (Python's true division of big integers and its modulo sign rule differ
  from Spark's), nor are literals outside the 64-bit range.
* A column narrower than the engine's numbers is widened first (``tinyint`` /
  ``smallint`` / ``int`` to ``bigint``, ``float`` to ``double``; exact): Spark
  would otherwise add two ``float`` values in single precision.
* NaN: the engine follows IEEE for a NaN arithmetic makes (``inf - inf``):
  false in every comparison but ``!=``. Spark orders NaN above every double and
  makes ``NaN = NaN`` true, so its ``=``, ``<``, ... may keep more events than
  the engine (harmless), but its ``NaN != NaN`` is false: a float ``!=`` also
  keeps the event when either side is NaN. (A NaN in the data is missing for
  the engine: dropping or keeping it is both safe there.) ``-0.0`` and ``0.0``
  are equal in both.
* Required attributes (the engine's "a missing value fails the variable") and
  the event type are pushed down as they are: exact in both.

``tests/fixtures/expr/*.jsonl`` holds the cases every backend is checked
against (``tests/integration/spark/test_pushdown_conformance.py``).
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from trendlake.engine.expr import attributes

INTEGER_TYPES = ("tinyint", "smallint", "int", "bigint")
FLOAT_TYPES = ("float", "double")
STRING_TYPES = ("string", "varchar", "char")
_INT64 = 2**63
_EXACT_DOUBLE = 2**53


_WIDEN = {"tinyint": "bigint", "smallint": "bigint", "int": "bigint", "float": "double"}


def widened(dtypes: list[tuple[str, str]] | dict[str, str]) -> dict[str, str]:
    """The Spark type each narrower numeric column is cast to before it is used."""
    items = dtypes.items() if isinstance(dtypes, dict) else dtypes
    return {name: _WIDEN[t.lower()] for name, t in items if t.lower() in _WIDEN}


def column_kinds(dtypes: list[tuple[str, str]] | dict[str, str]) -> dict[str, str]:
    """``int`` / ``float`` / ``string`` per column of a DataFrame's ``dtypes``; other types
    (boolean, decimal, ...) are left out and never pushed down."""
    items = dtypes.items() if isinstance(dtypes, dict) else dtypes
    kinds = {}
    for name, spark_type in items:
        t = spark_type.lower()
        if t in INTEGER_TYPES:
            kinds[name] = "int"
        elif t in FLOAT_TYPES:
            kinds[name] = "float"
        elif t.startswith(STRING_TYPES):
            kinds[name] = "string"
    return kinds


def _literal_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "int" if -_INT64 <= value < _INT64 else None
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return None


def spark_value(
    expr: dict[str, Any], kinds: dict[str, str], widen: dict[str, str] | None = None
) -> tuple[Any, str] | None:
    """(Spark Column, kind) of a value expression, or None when it is not safe to push down.
    ``widen``: the type a narrower column is cast to first (``widened``)."""
    from pyspark.sql import functions as F

    if "lit" in expr:
        kind = _literal_kind(expr["lit"])
        if kind == "int" and abs(expr["lit"]) <= _EXACT_DOUBLE:
            kind = "int-literal"  # exact as a double too
        return None if kind is None else (F.lit(expr["lit"]), kind)
    if "attr" in expr:
        name = expr["attr"]
        if expr.get("next") or name not in kinds:
            return None
        column = F.col(name)
        if widen and name in widen:
            column = column.cast(widen[name])
        return column, kinds[name]
    op = expr.get("op")
    args = [spark_value(a, kinds, widen) for a in expr.get("args", [])]
    if any(a is None for a in args):
        return None
    if op == "neg":
        ((col, kind),) = args
        if kind == "int-literal":
            kind = "int"
        if kind == "int":
            return F.try_subtract(F.lit(0), col), kind
        return (-col, kind) if kind == "float" else None
    arithmetic = {"+": F.try_add, "-": F.try_subtract, "*": F.try_multiply}
    if op in arithmetic:
        (left, lk), (right, rk) = args
        kind = _common_kind(lk, rk)
        if kind not in ("int", "float"):
            return None
        return arithmetic[op](left, right), kind
    return None


def _common_kind(a: str, b: str) -> str | None:
    """The kind two operands are compared or combined in, or None when Spark would
    convert one of them inexactly (or fail)."""
    if a == b:
        return "int" if a == "int-literal" else a
    pair = {a, b}
    if pair == {"int", "int-literal"}:
        return "int"
    if pair == {"float", "int-literal"}:
        return "float"
    return None


def spark_condition(expr: dict[str, Any], kinds: dict[str, str], widen: dict[str, str] | None = None) -> Any:
    """A Spark condition that holds wherever the engine's predicate holds (it may hold
    more often), or None when the predicate is not pushed down."""
    from pyspark.sql import functions as F

    op = expr.get("op")
    if op == "in":
        (inner,) = expr["args"]
        value = spark_value(inner, kinds, widen)
        if value is None:
            return None
        col, kind = value
        values = list(expr["values"])
        for v in values:
            vk = _literal_kind(v)
            if vk == "int" and abs(v) <= _EXACT_DOUBLE:
                vk = "int-literal"
            if vk is None or _common_kind(kind, vk) is None:
                return None
        if not values:
            return None
        return F.coalesce(col.isin(values), F.lit(True))
    compare = {
        "=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    }
    if op not in compare:
        return None
    left, right = (spark_value(a, kinds, widen) for a in expr["args"])
    if left is None or right is None:
        return None
    kind = _common_kind(left[1], right[1])
    if kind is None:
        return None
    cond = compare[op](left[0], right[0])
    if op == "!=" and kind == "float":  # IEEE: NaN != NaN holds; Spark finds NaN = NaN
        cond = cond | F.isnan(left[0]) | F.isnan(right[0])
    return F.coalesce(cond, F.lit(True))


def pushdown_filter(
    plan_raw: dict[str, Any], dtypes: list[tuple[str, str]] | dict[str, str], queries: list[str] | None = None
) -> Any:
    """A Spark condition keeping every event some query (of ``queries``; default all)
    may use (None: keep all).

    Contiguous queries see every event of their partition, so a set with one
    pushes down nothing. Otherwise an event is kept when it may match some
    variable: its type, required attributes present and the local predicates
    that can be pushed down safely (the others are left to the engine).
    """
    from pyspark.sql import functions as F

    kinds = column_kinds(dtypes)
    widen = widened(dtypes)
    columns = set(dtypes) if isinstance(dtypes, dict) else {name for name, _ in dtypes}
    chosen = [q for q in plan_raw["queries"] if queries is None or q["name"] in queries]
    if any(q["semantics"] == "contiguous" for q in chosen):
        return None
    options = []
    for q in chosen:
        required = q.get("required_attributes", {})
        for var in q["variables"]:
            cond = F.col("type") == F.lit(var["type"])
            for attr in required.get(var["name"], []):
                if attr not in columns:
                    cond = F.lit(False)
                    break
                cond = cond & F.col(attr).isNotNull()
            for expr in q.get("local_predicates", {}).get(var["name"], []):
                if attributes(expr) <= columns:
                    pushed = spark_condition(expr, kinds, widen)
                    if pushed is not None:
                        cond = cond & pushed
            options.append(cond)
    if not options:
        return F.lit(False)
    return reduce(lambda a, b: a | b, options)
