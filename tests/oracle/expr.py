"""The oracle's evaluator of plan expressions (docs/plan-format.md §Expressions).

Written from the format description only, not from ``engine/expr.py``:

* a missing attribute (absent, ``None``, empty text or NaN: the format's NULL rule)
  is the value MISSING (``None``);
  arithmetic or negation involving MISSING, a string or a boolean gives MISSING;
* division and modulo by zero and an integer too large for a float give
  MISSING; ``/`` is true division, ``%`` is Python's modulo (the sign of the
  divisor), integers stay exact; a NaN computed by arithmetic (``inf - inf``)
  is a number: IEEE's, unequal to everything;
* a comparison is true only between two numbers or two strings (or two
  booleans, for ``=`` / ``!=``); with MISSING, or between a number and a
  string, it is false;
* ``IN`` holds when the value equals one of the listed values;
* outside an adjacent predicate (no next event) ``NEXT(v).a`` is MISSING.
"""

from __future__ import annotations

import math
from typing import Any

MISSING = None
Attrs = dict[str, Any]


def _kind(v: Any) -> str:
    if v is None:
        return "missing"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "other"


def _in_data(v: Any) -> Any:
    """An attribute's value under the NULL rule: absent, None, NaN and empty text are MISSING."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v == "":
        return MISSING
    return v


def value(expr: dict[str, Any], event: Attrs, nxt: Attrs | None = None) -> Any:
    """The value of ``expr`` for the current event's attributes (and the next event's)."""
    if "lit" in expr:
        return expr["lit"]
    if "attr" in expr:
        source = nxt if expr.get("next") else event
        if source is None:
            return MISSING
        return _in_data(source.get(expr["attr"]))
    op = expr["op"]
    args = [value(a, event, nxt) for a in expr.get("args", [])]
    if op == "neg":
        (a,) = args
        return -a if _kind(a) == "number" else MISSING
    if op in ("+", "-", "*", "/", "%"):
        a, b = args
        if _kind(a) != "number" or _kind(b) != "number":
            return MISSING
        return _arithmetic(op, a, b)
    if op in ("=", "!=", "<", "<=", ">", ">="):
        a, b = args
        return _compare(op, a, b)
    if op == "in":
        (a,) = args
        return any(_compare("=", a, v) for v in expr["values"])
    raise ValueError(f"oracle: unknown expression operator {op!r}")


def _arithmetic(op: str, a: Any, b: Any) -> Any:
    if op in ("/", "%") and b == 0:
        return MISSING
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        return a / b if op == "/" else a % b
    except OverflowError:  # an integer too large for a float
        return MISSING


def _compare(op: str, a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb or ka not in ("number", "string", "bool"):
        return False
    if ka == "bool" and op not in ("=", "!="):
        return False
    if op == "=":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


def holds(expr: dict[str, Any], event: Attrs, nxt: Attrs | None = None) -> bool:
    """Whether ``expr`` holds as a predicate: its value is exactly ``True``."""
    return value(expr, event, nxt) is True


def attributes(expr: dict[str, Any], nxt: bool = False) -> set[str]:
    """Attribute names ``expr`` reads from the current event (``nxt``: from the next one)."""
    found = set()
    if "attr" in expr and bool(expr.get("next")) == nxt:
        found.add(expr["attr"])
    for a in expr.get("args", []):
        found |= attributes(a, nxt)
    return found
