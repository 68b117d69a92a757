"""Compile plan expressions (docs/plan-format.md §Expressions) into Python callables.

A local predicate becomes ``f(attrs) -> bool`` over one event's attribute dict;
an adjacent predicate becomes ``f(attrs, next_attrs) -> bool``. Missing values
are ``None``: arithmetic on them gives ``None`` and every comparison with them
is false, as is a comparison between a number and a string.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

Attrs = dict[str, Any]
Value = Callable[[Attrs, Attrs | None], Any]

_NUMBER = (int, float)


def _arith(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        if not isinstance(a, _NUMBER) or not isinstance(b, _NUMBER):
            return None
        try:
            return fn(a, b)
        except ZeroDivisionError:
            return None

    return apply


def _compare(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def apply(a: Any, b: Any) -> bool:
        if a is None or b is None:
            return False
        if isinstance(a, _NUMBER) != isinstance(b, _NUMBER):
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
    "=": _compare(operator.eq),
    "!=": _compare(operator.ne),
    "<": _compare(operator.lt),
    "<=": _compare(operator.le),
    ">": _compare(operator.gt),
    ">=": _compare(operator.ge),
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
        return lambda cur, nxt: (
            -v if isinstance(v := inner(cur, nxt), _NUMBER) else None
        )
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
