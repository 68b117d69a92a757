"""The intermediate aggregate every row-based strategy and kernel keeps (:class:`Algebra`).

One layout serves all strategies: an intermediate aggregate (of a GRETA
vertex, of a COGRA variable in a window) is either a number (COUNT(*) only)
or a list ``[count, count_E..., sum..., min..., max...]`` with the keys in
sorted order; per window index they are an :data:`Aggs` dict, and the final
ones become ``engine.results.WindowResult`` values (:func:`results_of`). The
values are kept saturated, or exact for a query with AVG
(:func:`exact_mode`), by the rules of ``engine.numbers``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trendlake.engine.numbers import norm, sat, scale, scale_exact, sum_sat
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult

__all__ = ["Agg", "Aggs", "Algebra", "copy_aggs", "exact_mode", "merge_aggs", "results_of"]

Agg = Any  # a number (COUNT(*) only) or a list laid out by Algebra
Aggs = dict[int, Agg]  # window index -> aggregate


def exact_mode(query: CompiledQuery) -> bool:
    """Whether the query's state is kept exact (it asks for an AVG), not saturated."""
    return any(agg.fn == "avg" for agg in query.aggregates)


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
        # exact mode (an AVG): values kept exact (norm), else saturated (sat / sum_sat)
        self.exact = exact_mode(query)
        self.sat: Callable[[Any], Any] = norm if self.exact else sat
        self.sum_sat: Callable[[Any], Any] = norm if self.exact else sum_sat
        self.scale: Callable[[Any, Any], Any] = scale_exact if self.exact else scale
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
        keep_count, keep_sum, times = self.sat, self.sum_sat, self.scale
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
                a[i] = keep_count(a[i])
            for i in range(n_counts, n_additive):
                a[i] = keep_sum(a[i])
            c = a[0]
            for i in own_counts:
                a[i] = keep_count(a[i] + c)
            for i, attr in own_sums:
                a[i] = keep_sum(a[i] + times(attrs[attr], c))
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
        keep_count, keep_sum = self.sat, self.sum_sat
        return WindowResult(
            trends=keep_count(a[0]),
            counts={v: keep_count(a[1 + i]) for i, v in enumerate(self.count_vars)},
            sums={key: keep_sum(a[n_counts + i]) for i, key in enumerate(self.sum_keys)},
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
