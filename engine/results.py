"""Finishing per-window aggregate states into result columns, and the overflow marker.

The states themselves (``WindowResult``, ``merge``, saturation, exact mode) are
defined in ``engine.aggregates`` and re-exported here. OVERFLOW is decided here,
at output: a COUNT or SUM whose exact value exceeds a decimal(38,0) column
(``CAP``), or that saturated (``NAN``) or left the exact range (a ``Far``
number), is ``OVERFLOW``; AVG is the exact sum over the exact count rounded once
to a float (to float precision when they are Far numbers), a number whenever
that is finite. A result is exact or marked, never wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from trendlake.engine.aggregates import (
    CAP,
    NAN,
    Far,
    FSum,
    WindowResult,
    from_state,
    merge,
    merge_into,
    out_value,
    sat,
    scale,
    to_state,
)
from trendlake.engine.query import CompiledQuery

__all__ = [
    "CAP",
    "NAN",
    "OVERFLOW",
    "WindowResult",
    "finalize",
    "from_state",
    "is_equal",
    "merge",
    "merge_into",
    "sat",
    "scale",
    "to_state",
]


class _Overflow:
    """The marker of a value too large for its result column."""

    _instance: _Overflow | None = None

    def __new__(cls) -> _Overflow:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "OVERFLOW"

    def __reduce__(self) -> str:
        return "OVERFLOW"


OVERFLOW = _Overflow()


def _exact(value: Any) -> Any:
    """A COUNT or SUM as reported: the value, or OVERFLOW when it does not fit a
    decimal(38,0) column, saturated (NaN, not finite) or is no longer exact (Far)."""
    if type(value) is int and -CAP <= value <= CAP:  # the common case, first
        return value
    if isinstance(value, Far):
        return OVERFLOW
    if isinstance(value, float) and not math.isfinite(value):
        return OVERFLOW
    if abs(value) > CAP:
        return OVERFLOW
    return value


def _sum(value: Any) -> Any:
    """A SUM as reported: of ints as :func:`_exact`; of floats (an exact ``FSum``) the
    exact sum rounded once to a float; ±inf or NaN when infinite values are summed (IEEE:
    NaN for both infinities); OVERFLOW when the exact sum of finite values is beyond the
    float range (it does not fit the double column), when it is no longer exact (past
    ``BIG``-sized counts) or saturated (NaN: a count overflowed)."""
    if value.__class__ is FSum:
        if value.pinf > 0 or value.ninf > 0:
            return value.value()
        if not value.exact():
            return OVERFLOW
        v = value.value()
        return v if math.isfinite(v) else OVERFLOW
    if value.__class__ is float and value == value:
        return value + 0.0
    return _exact(value)


def _mean(total: Any, n: Any) -> Any:
    """AVG: ``total / n`` rounded once to a float (exactly rounded for ints of any size,
    and for exact float sums); None without events; OVERFLOW when a saturated value is
    involved or the mean of ints is beyond the float range. A mean of float values is
    IEEE's: ±inf or NaN when infinities are among the values."""
    for v in (total, n):
        if v.__class__ is float and v != v:
            return OVERFLOW
    if n == 0:
        return None
    if total.__class__ is FSum:
        return total.mean(n)
    if total.__class__ is float:
        if not math.isfinite(total):
            return total
        total = FSum.of(total)
        return total.mean(n)
    try:
        if type(total) is int and type(n) is int:
            return total / n + 0.0  # int / int: correctly rounded, whatever their size
        return Far.of(total).ratio(n) + 0.0
    except OverflowError:
        return OVERFLOW


def finalize(query: CompiledQuery, result: WindowResult) -> dict[str, Any]:
    """The aggregate columns of one result row, by output name."""
    return {name: read(result) for name, read in finalizer(query)}


def finalizer(query: CompiledQuery) -> list[tuple[str, Callable[[WindowResult], Any]]]:
    """Per aggregate of ``query``, its output name and the function reading its value off a
    window's result (made once per query: result rows are many)."""
    out: list[tuple[str, Callable[[WindowResult], Any]]] = []
    for agg in query.aggregates:
        out.append((agg.name, _reader(agg.fn, agg.var, agg.attr)))
    return out


def _reader(fn: str, var: Any, attr: Any) -> Callable[[WindowResult], Any]:
    key = (var, attr)
    if fn == "count_star":
        return lambda r: _exact(r.trends)
    if fn == "count":
        return lambda r: _exact(r.counts.get(var, 0))
    if fn == "sum":
        return lambda r: _sum(r.sums.get(key, 0))
    if fn == "avg":
        return lambda r: _mean(r.sums.get(key, 0), r.counts.get(var, 0))
    if fn == "min":
        return lambda r: out_value(r.mins.get(key))
    if fn == "max":
        return lambda r: out_value(r.maxs.get(key))
    raise ValueError(f"unknown aggregate function {fn!r}")


def is_equal(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Result-value equality for tests: exact for ints, relative for floats."""
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None or a is OVERFLOW or b is OVERFLOW:
            return a is b
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)
    return a == b
