"""Compile plan expressions (docs/plan-format.md §Expressions) into Python callables.

A local predicate becomes ``f(attrs) -> bool`` over one event's attribute dict;
an adjacent predicate becomes ``f(attrs, next_attrs) -> bool``. This evaluator is
the reference the other backends (``engine.expr.vector``, replay's Spark pushdown)
are checked against (``tests/fixtures/expr/*.jsonl``):

* Missing values are ``None`` (the engine's NULL rule has already made a NaN, an
  empty text or a null in the data ``None``): arithmetic on them gives ``None`` and
  every comparison with them is false, ``!=`` included.
* Numbers are Python ints (exact at any size, no 64-bit wrap-around) and IEEE
  doubles; an int and a float compare exactly (``2**63 - 1 < 9.223372036854776e18``);
  int-with-float arithmetic rounds the int to a double first, as Python does.
* A NaN made by arithmetic (``inf - inf``) is an IEEE NaN: every comparison with it
  is false except ``!=``, which is true; ``-0.0 == 0.0``.
* Division or modulo by zero (either sign), and an int too large for a double in
  float arithmetic, give ``None``; ``/`` is true division and ``%`` is floored (the
  result has the divisor's sign).
* A number never equals a string or a boolean; booleans compare with ``=`` and
  ``!=`` only and take no arithmetic.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

Attrs = dict[str, Any]
Value = Callable[[Attrs, Attrs | None], Any]

_NUMBER, _TEXT, _BOOL, _OTHER = 1, 2, 3, 0


def _kind(value: Any) -> int:
    """The comparison kind of a value: number, text, boolean (never a number) or other."""
    t = type(value)
    if t is int or t is float:
        return _NUMBER
    if t is str:
        return _TEXT
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, (int, float)):
        return _NUMBER
    if isinstance(value, str):
        return _TEXT
    return _OTHER


def _is_number(value: Any) -> bool:
    t = type(value)
    return t is int or t is float or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _arith(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        if not _is_number(a) or not _is_number(b):
            return None
        try:
            return fn(a, b)
        except (ZeroDivisionError, OverflowError):  # x / 0, x % 0; an int too large for a float
            return None

    return apply


def _compare(fn: Callable[[Any, Any], bool], equality: bool) -> Callable[[Any, Any], bool]:
    def apply(a: Any, b: Any) -> bool:
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float) or (ta is str and tb is str):
            return fn(a, b)  # the common case: two numbers or two texts
        if a is None or b is None:
            return False
        ka = _kind(a)
        if ka != _kind(b):
            return False
        if ka == _BOOL and not equality:
            return False
        if ka == _OTHER and type(a) is not type(b):
            return False
        try:
            return bool(fn(a, b))
        except TypeError:
            return False

    return apply


def _true_div(a: float, b: float) -> float:
    return a / b


ARITHMETIC = {
    "+": _arith(operator.add),
    "-": _arith(operator.sub),
    "*": _arith(operator.mul),
    "/": _arith(_true_div),
    "%": _arith(operator.mod),
}
COMPARISON = {
    "=": _compare(operator.eq, True),
    "!=": _compare(operator.ne, True),
    "<": _compare(operator.lt, False),
    "<=": _compare(operator.le, False),
    ">": _compare(operator.gt, False),
    ">=": _compare(operator.ge, False),
}


def compile_value(expr: dict[str, Any]) -> Value:
    """A function of (attrs, next_attrs) giving the expression's value."""
    if "lit" in expr:
        lit = expr["lit"]
        return lambda cur, nxt: lit
    if "attr" in expr:
        name = expr["attr"]
        if expr.get("next"):
            return lambda cur, nxt: None if nxt is None else nxt.get(name)
        return lambda cur, nxt: cur.get(name)
    op = expr["op"]
    args = [compile_value(a) for a in expr.get("args", [])]
    if op == "neg":
        (inner,) = args
        return lambda cur, nxt: -v if _is_number(v := inner(cur, nxt)) else None
    if op in ARITHMETIC:
        fn = ARITHMETIC[op]
        left, right = args
        return lambda cur, nxt: fn(left(cur, nxt), right(cur, nxt))
    if op in COMPARISON:
        fn = COMPARISON[op]
        left, right = args
        return lambda cur, nxt: fn(left(cur, nxt), right(cur, nxt))
    if op == "in":
        (inner,) = args
        eq = COMPARISON["="]
        values = list(expr["values"])
        return lambda cur, nxt: any(eq(inner(cur, nxt), v) for v in values)
    raise ValueError(f"unknown expression operator {op!r}")


def compile_local(exprs: list[dict[str, Any]], required: list[str]) -> Callable[[Attrs], bool] | None:
    """One predicate for a variable: all conjuncts hold and required attributes are present."""
    parts = [compile_value(e) for e in exprs]
    required = list(required)
    if not parts and not required:
        return None

    def local(attrs: Attrs) -> bool:
        for name in required:
            if attrs.get(name) is None:
                return False
        for part in parts:
            if part(attrs, None) is not True:
                return False
        return True

    return local


def compile_adjacent(exprs: list[dict[str, Any]]) -> Callable[[Attrs, Attrs], bool]:
    """One predicate over consecutive trend events (e, e'): all conjuncts hold."""
    parts = [compile_value(e) for e in exprs]
    if len(parts) == 1:
        (only,) = parts
        return lambda cur, nxt: only(cur, nxt) is True
    return lambda cur, nxt: all(p(cur, nxt) is True for p in parts)


def attributes(exprs: dict[str, Any] | list[dict[str, Any]]) -> set[str]:
    """Attribute names an expression (or a list of them) reads, ``NEXT(...)`` ones included."""
    found: set[str] = set()
    stack = list(exprs) if isinstance(exprs, list) else [exprs]
    while stack:
        expr = stack.pop()
        if "attr" in expr:
            found.add(expr["attr"])
        stack.extend(expr.get("args", []))
    return found
