"""The per-window aggregate state every strategy keeps, its merge and its saturation.

One layout serves all strategies: an intermediate aggregate (of a GRETA
vertex, of a COGRA variable in a window) is either a number (COUNT(*) only)
or a list ``[count, count_E..., sum..., min..., max...]`` with the keys in
sorted order (:class:`Algebra`); a window's contribution is a
:class:`WindowResult`, merged across partitions with :func:`merge`.

Counts are Python ints saturated to ``NAN`` beyond ``CAP`` (:func:`sat`,
sticky under + and *); partial sums saturate beyond ``SUM_BOUND``
(:func:`sum_sat`); ``0 * overflow`` stays 0 (:func:`scale`). A result is
exact or marked as overflowed, never wrong (docs/engine.md, "Exactness").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.query import CompiledQuery

__all__ = [
    "CAP",
    "NAN",
    "SUM_BOUND",
    "Aggs",
    "Algebra",
    "WindowResult",
    "copy_aggs",
    "from_state",
    "max_present",
    "merge",
    "merge_aggs",
    "merge_into",
    "min_present",
    "results_of",
    "sat",
    "scale",
    "sum_sat",
    "to_state",
]

CAP = 10**38 - 1  # the largest value of a decimal(38,0) result column
NAN = float("nan")
# A partial sum whose magnitude passed this bound becomes NaN (overflow). Counts saturate at
# CAP, which bounds sums over non-saturated counts far below this; the bound only stops the
# unbounded growth of sums propagated from events whose downstream trend counts saturated.
SUM_BOUND = CAP * CAP

Agg = Any  # a number (COUNT(*) only) or a list laid out by Algebra
Aggs = dict[int, Agg]  # window index -> aggregate


def sat(count: int | float) -> int | float:
    """A count, or NAN once it passed CAP (keeps big-int arithmetic bounded)."""
    return count if count <= CAP else NAN


def sum_sat(value: Any) -> Any:
    """A partial sum, or NAN once its magnitude passed ``SUM_BOUND``."""
    if value > SUM_BOUND or value < -SUM_BOUND:
        return NAN
    return value


def scale(value: int | float, count: int | float) -> int | float:
    """``value * count`` for a sum contribution; 0 stays 0 even for an overflowed count."""
    if value == 0 or count == 0:
        return 0
    return value * count


def min_present(a: Any, b: Any) -> Any:
    """The smaller of two optional values (None: no value)."""
    if b is None:
        return a
    if a is None or b < a:
        return b
    return a


def max_present(a: Any, b: Any) -> Any:
    """The larger of two optional values (None: no value)."""
    if b is None:
        return a
    if a is None or b > a:
        return b
    return a


@dataclass
class WindowResult:
    """What one window of one partition contributed, before finalization."""

    trends: int | float = 0
    counts: dict[str, int | float] = field(default_factory=dict)
    sums: dict[tuple[str, str], int | float] = field(default_factory=dict)
    mins: dict[tuple[str, str], Any] = field(default_factory=dict)
    maxs: dict[tuple[str, str], Any] = field(default_factory=dict)


def _add(a: int | float, b: int | float) -> int | float:
    total = a + b
    return NAN if isinstance(total, int) and abs(total) > CAP else total


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
    """The partial result of a :func:`to_state` form."""
    return WindowResult(
        trends=state["trends"],
        counts=dict(state["counts"]),
        sums={(v, a): x for v, a, x in state["sums"]},
        mins={(v, a): x for v, a, x in state["mins"]},
        maxs={(v, a): x for v, a, x in state["maxs"]},
    )


class Algebra:
    """The intermediate aggregate of a query (Theorem 12.1) and its operations.

    With only COUNT(*) an aggregate is a number. Otherwise it is a list:
    ``[count, counts..., sums..., mins..., maxs...]``: ``count_vars``,
    ``sum_keys``, ``min_keys``, ``max_keys`` in sorted order, at offsets
    1, ``n_counts``, ``n_additive``, ``n_min``.
    """

    def __init__(self, query: CompiledQuery) -> None:
        needs = query.needs
        self.count_vars = sorted(needs.counts)
        self.sum_keys = sorted(needs.sums)
        self.min_keys = sorted(needs.mins)
        self.max_keys = sorted(needs.maxs)
        self.scalar = not (self.count_vars or self.sum_keys or self.min_keys or self.max_keys)
        self.n_counts = 1 + len(self.count_vars)
        self.n_additive = self.n_counts + len(self.sum_keys)
        self.n_min = self.n_additive + len(self.min_keys)
        self.size = self.n_min + len(self.max_keys)
        self.zero: list[Any] = [0] * self.n_additive + [None] * (self.size - self.n_additive)
        self.own_counts: dict[str, list[int]] = {}
        self.own_sums: dict[str, list[tuple[int, str]]] = {}
        self.own_mins: dict[str, list[tuple[int, str]]] = {}
        self.own_maxs: dict[str, list[tuple[int, str]]] = {}
        for var in query.positive:
            self.own_counts[var] = [1 + i for i, v in enumerate(self.count_vars) if v == var]
            self.own_sums[var] = [
                (self.n_counts + i, a) for i, (v, a) in enumerate(self.sum_keys) if v == var
            ]
            self.own_mins[var] = [
                (self.n_additive + i, a) for i, (v, a) in enumerate(self.min_keys) if v == var
            ]
            self.own_maxs[var] = [
                (self.n_min + i, a) for i, (v, a) in enumerate(self.max_keys) if v == var
            ]

    def add_into(self, acc: Aggs, aggs: Aggs, kmin: int) -> None:
        """``acc[k] += aggs[k]`` for the windows k >= kmin (the ones still open)."""
        if self.scalar:
            for k, a in aggs.items():
                if k >= kmin:
                    acc[k] = acc.get(k, 0) + a
            return
        for k, a in aggs.items():
            if k < kmin:
                continue
            cur = acc.get(k)
            if cur is None:
                acc[k] = a.copy()
            else:
                self.merge(cur, a)

    def merge(self, cur: list[Any], a: list[Any]) -> None:
        """``cur += a`` for list aggregates (sums add, minima and maxima combine)."""
        for i in range(self.n_additive):
            cur[i] += a[i]
        for i in range(self.n_additive, self.n_min):
            v = a[i]
            if v is not None and (cur[i] is None or v < cur[i]):
                cur[i] = v
        for i in range(self.n_min, self.size):
            v = a[i]
            if v is not None and (cur[i] is None or v > cur[i]):
                cur[i] = v

    def finish(
        self,
        acc: Aggs,
        windows: range,
        starts: Callable[[int], bool] | None,
        var: str,
        attrs: dict[str, Any],
    ) -> Aggs:
        """A vertex's aggregates: predecessor sums, +1 trend if it starts one, then its own event."""
        out: Aggs = {}
        if self.scalar:
            for k in windows:
                c = acc.get(k, 0)
                if starts is not None and starts(k):
                    c += 1
                if c:
                    out[k] = sat(c)
            return out
        own_counts = self.own_counts[var]
        own_sums = self.own_sums[var]
        own_mins = self.own_mins[var]
        own_maxs = self.own_maxs[var]
        n_counts = self.n_counts
        n_additive = self.n_additive
        for k in windows:
            a = acc.get(k)
            start = starts is not None and starts(k)
            if a is None:
                if not start:
                    continue
                a = self.zero.copy()
            if start:
                a[0] += 1
            for i in range(n_counts):
                a[i] = sat(a[i])
            for i in range(n_counts, n_additive):
                a[i] = sum_sat(a[i])
            c = a[0]
            for i in own_counts:
                a[i] = sat(a[i] + c)
            for i, attr in own_sums:
                a[i] = sum_sat(a[i] + scale(attrs[attr], c))
            for i, attr in own_mins:
                v = attrs[attr]
                if a[i] is None or v < a[i]:
                    a[i] = v
            for i, attr in own_maxs:
                v = attrs[attr]
                if a[i] is None or v > a[i]:
                    a[i] = v
            out[k] = a
        return out

    def result(self, a: Agg) -> WindowResult:
        """The window result of a (final) aggregate."""
        if self.scalar:
            return WindowResult(trends=a)
        n_counts, n_additive, n_min = self.n_counts, self.n_additive, self.n_min
        return WindowResult(
            trends=sat(a[0]),
            counts={v: sat(a[1 + i]) for i, v in enumerate(self.count_vars)},
            sums={key: sum_sat(a[n_counts + i]) for i, key in enumerate(self.sum_keys)},
            mins={
                key: a[n_additive + i]
                for i, key in enumerate(self.min_keys)
                if a[n_additive + i] is not None
            },
            maxs={
                key: a[n_min + i] for i, key in enumerate(self.max_keys) if a[n_min + i] is not None
            },
        )


def merge_aggs(alg: Algebra, results: Aggs, aggs: Aggs) -> None:
    """``results[k] += aggs[k]`` for every window of ``aggs``."""
    for k, a in aggs.items():
        cur = results.get(k)
        if cur is None:
            results[k] = a if alg.scalar else a.copy()
        elif alg.scalar:
            results[k] = cur + a
        else:
            alg.merge(cur, a)


def results_of(alg: Algebra, results: Aggs) -> dict[int, WindowResult]:
    """Window results (windows with at least one trend) of final per-window aggregates."""
    out: dict[int, WindowResult] = {}
    for k in sorted(results):
        r = alg.result(results[k])
        if r.trends:
            out[k] = r
    return out


def copy_aggs(alg: Algebra, aggs: Aggs) -> Aggs:
    """An independent copy of per-window aggregates."""
    if alg.scalar:
        return dict(aggs)
    return {k: a.copy() for k, a in aggs.items()}
