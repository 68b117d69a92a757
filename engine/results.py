"""Per-window aggregate state shared by all strategies, exact counts and the overflow rule.

Strategies compute, per window, the number of trends and, for the query's
aggregates, per-variable event counts, sums, minima and maxima over all
trends. Counts and integer sums are Python ints kept *exact* in the state,
however large; only ``finalize`` compares them with ``CAP`` (the bound of the
result columns) and reports ``OVERFLOW``. AVG is the exact sum over the exact
count, rounded once, so it is a number whenever the mean fits. A float sum
that leaves the float range is ``NAN`` (sticky), reported as OVERFLOW.
A result is therefore exact or marked, never wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from trendlake.engine.query import CompiledQuery

CAP = 10**38 - 1  # the largest value of a decimal(38,0) result column
NAN = float("nan")


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


def sat(count: int | float) -> int | float:
    """A state count as kept: exact (the OVERFLOW rule is applied by ``finalize`` only)."""
    return count


def scale(value: int | float, count: int | float) -> int | float:
    """``value * count`` for a sum contribution; 0 stays 0; a float product past the float range is NAN."""
    if value == 0 or count == 0:
        return 0
    try:
        return value * count
    except OverflowError:  # a float times an int beyond float range
        return NAN


@dataclass
class WindowResult:
    """What one window of one partition contributed, before finalization."""

    trends: int | float = 0
    counts: dict[str, int | float] = field(default_factory=dict)
    sums: dict[tuple[str, str], int | float] = field(default_factory=dict)
    mins: dict[tuple[str, str], Any] = field(default_factory=dict)
    maxs: dict[tuple[str, str], Any] = field(default_factory=dict)


def _add(a: int | float, b: int | float) -> int | float:
    try:
        return a + b
    except OverflowError:  # a float plus an int beyond float range
        return NAN


def merge(into: WindowResult, other: WindowResult) -> WindowResult:
    """Fold the state of another partition of the same (group, window) into ``into``.

    Trends of different partitions are disjoint, so counts and sums add and
    minima/maxima combine; an overflowed (NAN) count stays overflowed.
    """
    into.trends = _add(into.trends, other.trends)
    for var, n in other.counts.items():
        into.counts[var] = _add(into.counts.get(var, 0), n)
    for key, v in other.sums.items():
        into.sums[key] = _add(into.sums.get(key, 0), v)
    for key, v in other.mins.items():
        if v is not None and (into.mins.get(key) is None or v < into.mins[key]):
            into.mins[key] = v
    for key, v in other.maxs.items():
        if v is not None and (into.maxs.get(key) is None or v > into.maxs[key]):
            into.maxs[key] = v
    return into


def merge_into(partials: dict[Any, WindowResult], key: Any, result: WindowResult) -> None:
    """Fold ``result`` into ``partials[key]``, or store it there if the key is new."""
    if key in partials:
        merge(partials[key], result)
    else:
        partials[key] = result


def to_state(result: WindowResult) -> dict[str, Any]:
    """A JSON-able form of a partial result (NAN stays a float NaN)."""
    return {
        "trends": result.trends,
        "counts": result.counts,
        "sums": [[v, a, x] for (v, a), x in result.sums.items()],
        "mins": [[v, a, x] for (v, a), x in result.mins.items()],
        "maxs": [[v, a, x] for (v, a), x in result.maxs.items()],
    }


def from_state(state: dict[str, Any]) -> WindowResult:
    return WindowResult(
        trends=state["trends"],
        counts=dict(state["counts"]),
        sums={(v, a): x for v, a, x in state["sums"]},
        mins={(v, a): x for v, a, x in state["mins"]},
        maxs={(v, a): x for v, a, x in state["maxs"]},
    )


def _exact(value: int | float) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return OVERFLOW
    if abs(value) > CAP:
        return OVERFLOW
    return value


def _mean(total: int | float, n: int | float) -> Any:
    """The exact ``total / n`` rounded once to a float; None without events, OVERFLOW if not finite."""
    if isinstance(n, float) and not math.isfinite(n):
        return OVERFLOW
    if n == 0:
        return None
    if isinstance(total, float) and not math.isfinite(total):
        return OVERFLOW
    try:
        return float(Fraction(total) / Fraction(n))  # ints of any size; one rounding
    except OverflowError:
        return OVERFLOW


def finalize(query: CompiledQuery, result: WindowResult) -> dict[str, Any]:
    """The aggregate columns of one result row, by output name."""
    out: dict[str, Any] = {}
    for agg in query.aggregates:
        if agg.fn == "count_star":
            out[agg.name] = _exact(result.trends)
        elif agg.fn == "count":
            out[agg.name] = _exact(result.counts.get(agg.var, 0))
        elif agg.fn == "sum":
            out[agg.name] = _exact(result.sums.get((agg.var, agg.attr), 0))
        elif agg.fn == "avg":
            out[agg.name] = _mean(result.sums.get((agg.var, agg.attr), 0), result.counts.get(agg.var, 0))
        elif agg.fn == "min":
            out[agg.name] = result.mins.get((agg.var, agg.attr))
        elif agg.fn == "max":
            out[agg.name] = result.maxs.get((agg.var, agg.attr))
        else:
            raise ValueError(f"unknown aggregate function {agg.fn!r}")
    return out


def is_equal(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Result-value equality for tests: exact for ints, relative for floats."""
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None or a is OVERFLOW or b is OVERFLOW:
            return a is b
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)
    return a == b
