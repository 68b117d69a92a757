"""A window's result: its state (``WindowResult``), merge, JSON form, and finishing it.

A ``WindowResult`` is what one window of one partition contributed; the
states of partitions of the same (group, window) merge (:func:`merge`), travel
as JSON (:func:`to_state` / :func:`from_state`) and are finished into result
columns here (:func:`finalize`). OVERFLOW is decided here, at output: a COUNT
or SUM whose exact value exceeds a decimal(38,0) column (``CAP``), or that
saturated (``NAN``) or left the exact range (a ``Far`` number), is
``OVERFLOW``; AVG is the exact sum over the exact count rounded once to a
float (to float precision when they are Far numbers), a number whenever that
is finite. A result is exact or marked, never wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.numbers import CAP, Far, FSum, decode_counts, norm, out_value
from trendlake.engine.query import CompiledQuery

__all__ = [
    "OVERFLOW",
    "WindowResult",
    "finalize",
    "finalizer",
    "from_state",
    "is_equal",
    "merge",
    "merge_into",
    "to_state",
    "count_results",
]


@dataclass
class WindowResult:
    """What one window of one partition contributed, before finalization."""

    trends: int | float = 0
    counts: dict[str, int | float] = field(default_factory=dict)
    sums: dict[tuple[str, str], int | float] = field(default_factory=dict)
    mins: dict[tuple[str, str], Any] = field(default_factory=dict)
    maxs: dict[tuple[str, str], Any] = field(default_factory=dict)


def _add(a: Any, b: Any) -> Any:
    """The sum of two partitions' values. Merging is not repeated along a stream, so the
    value is not saturated here (``finalize`` decides OVERFLOW); it is only kept bounded."""
    try:
        return norm(a + b)
    except OverflowError:  # a float plus an int beyond the float range
        return Far.of(a) + b


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


def _encode(x: Any) -> Any:
    if x.__class__ is FSum:
        return {"fsum": [_encode(x.n), _encode(x.pinf), _encode(x.ninf)]}
    return {"far": [x.m, x.e]} if isinstance(x, Far) else x


def _decode(x: Any) -> Any:
    if isinstance(x, dict):
        if "fsum" in x:
            return FSum(*(_decode(v) for v in x["fsum"]))
        return Far(*x["far"])
    return x


def to_state(result: WindowResult) -> dict[str, Any]:
    """A JSON-able form of a partial result: exact ints (at most ``BIG``, so within the
    int <-> str digit limit) and floats as they are (NAN stays a float NaN), a Far number
    as ``{"far": [m, e]}``."""
    return {
        "trends": _encode(result.trends),
        "counts": {v: _encode(x) for v, x in result.counts.items()},
        "sums": [[v, a, _encode(x)] for (v, a), x in result.sums.items()],
        "mins": [[v, a, x] for (v, a), x in result.mins.items()],
        "maxs": [[v, a, x] for (v, a), x in result.maxs.items()],
    }


def from_state(state: dict[str, Any]) -> WindowResult:
    """The partial result of a :func:`to_state` form."""
    return WindowResult(
        trends=_decode(state["trends"]),
        counts={v: _decode(x) for v, x in state["counts"].items()},
        sums={(v, a): _decode(x) for v, a, x in state["sums"]},
        mins={(v, a): x for v, a, x in state["mins"]},
        maxs={(v, a): x for v, a, x in state["maxs"]},
    )


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


def count_results(values: bytes, rows: int, count_vars: list[str]) -> list[WindowResult]:
    """The results of ``rows`` windows from a compiled kernel's counts (per window the trends,
    then COUNT(E) per variable of ``count_vars``; ``numbers.decode_counts``)."""
    width = 1 + len(count_vars)
    flat = decode_counts(values, rows, width).reshape(-1).tolist()
    trends = flat[::width]
    if width == 1:
        return [WindowResult(t) for t in trends]
    per_key = [flat[1 + j :: width] for j in range(len(count_vars))]
    return [WindowResult(t, dict(zip(count_vars, c, strict=True))) for t, *c in zip(trends, *per_key, strict=True)]
