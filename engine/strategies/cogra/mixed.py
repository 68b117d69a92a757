"""COGRA's per-time-stamp interpreter: mixed-grained queries, and type-grained ones with
negation or off the kernel (skip-till-any-match).

It runs the engine's time-stamp driver (``engine.timestamps``) with
:class:`SinceAnyMatch`, skip-till-any-match keeping "since" aggregates: a negated
transition without adjacent predicate reads, instead of a list of vertices, a
type-grained aggregate per (source variable, negation, prefix of the negation's
sequence). ``since[(v, n)][j]`` sums the aggregates of the ``v`` vertices at or
after the latest start of a match of prefix ``j`` of negation ``n``: when prefix
``j`` takes prefix ``j - 1``'s start (``Negations.advance``), its aggregate becomes
prefix ``j - 1``'s; prefix 0 starts at the group that matched, so its aggregate
holds only that group's vertices. A transition reads the complete prefix of the
negation whose match started last (or, before any match, the running total).
Design notes: docs/engine.md, "COGRA".
"""

from __future__ import annotations

from typing import Any

from trendlake.engine.aggregates import Aggs, copy_aggs
from trendlake.engine.columns import Event
from trendlake.engine.query import CompiledQuery, Transition
from trendlake.engine.results import WindowResult
from trendlake.engine.semantics import AnyMatch, Reader, drop_before
from trendlake.engine.timestamps import TimeStampDriver
from trendlake.engine.vertices import Vertex

__all__ = ["SinceAnyMatch", "run_mixed"]


def run_mixed(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index of one time-ordered partition (skip-till-any-match)."""
    return TimeStampDriver.of(query, SinceAnyMatch).run(events)


class SinceAnyMatch(AnyMatch):
    """skip-till-any-match where a negated transition without adjacent predicate reads a
    "since" aggregate (see the module docstring), not a list of vertices."""

    def __init__(self, query: CompiledQuery, alg: Any) -> None:
        super().__init__(query, alg)
        # (variable, negation) pairs that need since aggregates
        self.since_keys = sorted(
            {(t.src, n) for t in query.transitions if self.reads_since(t) for n in t.negations}
        )

    @staticmethod
    def reads_since(t: Transition) -> bool:
        return t.adjacent is None and bool(t.negations)

    def reads_vertices(self, t: Transition) -> bool:
        return t.adjacent is not None

    def reset(self) -> None:
        super().reset()
        self.latest: dict[int, int | None] = {}
        self.since: dict[tuple[str, int], list[Aggs]] = {
            (v, n): [{} for _ in self.q.negations[n]] for v, n in self.since_keys
        }
        self.since_by_var: dict[str, list[list[Aggs]]] = {}
        for (v, _), lst in self.since.items():
            self.since_by_var.setdefault(v, []).append(lst)

    def begin_group(self, kmin: int, latest: dict[int, int | None]) -> None:
        super().begin_group(kmin, latest)
        self.latest = latest
        for lst in self.since.values():
            for aggs in lst:
                if aggs and min(aggs) < kmin:
                    drop_before(aggs, kmin)

    def reader(self, t: Transition) -> Reader:
        return self.read_since if self.reads_since(t) else super().reader(t)

    def total(self, t: Transition) -> Aggs | None:
        return None if self.reads_since(t) else super().total(t)

    def read_since(self, acc: Aggs, t: Transition, attrs: dict[str, Any], kmin: int) -> None:
        """The since aggregate of the negation whose match started last (the running total
        before any match)."""
        n_best, nb = None, None
        for n in t.negations:
            b = self.latest[n]
            if b is not None and (nb is None or b > nb):
                n_best, nb = n, b
        self.alg.add_into(acc, self.totals[t.src] if n_best is None else self.since[(t.src, n_best)][-1], kmin)

    def end_group(self, new: list[Vertex], kmin: int) -> None:
        super().end_group(new, kmin)
        for v in new:
            for lst in self.since_by_var.get(v.var, ()):
                for aggs in lst:
                    self.alg.add_into(aggs, v.prop, kmin)

    def negations_advanced(self, advanced: dict[int, list[int]], new: list[Vertex], kmin: int) -> None:
        """Prefix j of negation n took prefix j-1's latest start: its since aggregate does too;
        prefix 0 started at this group, so it holds only the group's own vertices."""
        if not self.since:
            return
        alg = self.alg
        for n, prefixes in advanced.items():
            for j in prefixes:  # descending: lst[j - 1] is still the old value
                for (sv, sn), lst in self.since.items():
                    if sn != n:
                        continue
                    if j == 0:
                        fresh: Aggs = {}
                        for v in new:
                            if v.var == sv:
                                alg.add_into(fresh, v.prop, kmin)
                        lst[0] = fresh
                    else:
                        lst[j] = copy_aggs(alg, lst[j - 1])
