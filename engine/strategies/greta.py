"""GRETA: event-grained trend aggregation over the GRETA graph, for every query.

The engine's general strategy (dissertation ch. 10-13, and the event-grained
baseline of ch. 16 for skip-till-next-match and contiguous): a vertex per
(event, matched variable), per-window intermediate aggregates summed from
predecessor vertices, negation by invalidation (``engine.negation``), running
totals per variable where a transition has no adjacent predicate or negation.

:class:`TimeStampDriver` is the one per-time-stamp driver of the engine's
row-based strategies: GRETA runs it as it is; COGRA's per-time-stamp
interpreter (type- and mixed-grained with negation) runs it with ``since``
aggregates, which keep a negated transition type-grained instead of a list of
vertices. Design notes: docs/engine.md, "GRETA" and "COGRA".
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from trendlake.engine.aggregates import Aggs, Algebra, copy_aggs, merge_aggs, results_of
from trendlake.engine.columns import Event
from trendlake.engine.negation import Negations, max_bound
from trendlake.engine.query import ANY, CONTIGUOUS, NEXT, CompiledQuery, Transition
from trendlake.engine.results import WindowResult
from trendlake.engine.timeline import time_groups, window_range
from trendlake.engine.vertices import VarList, Vertex

__all__ = ["TimeStampDriver", "run", "supports"]

# how a transition's source reaches its destination (TimeStampDriver.kind)
TOTAL = "total"  # skip-till-any-match, no adjacent predicate, no negation: a running total per window
SINCE = "since"  # the same with negation (``since`` drivers): totals since each negation prefix's latest start
LIST = "list"  # skip-till-any-match otherwise: the source's kept vertices, from the negation bound on
OPEN = "open"  # skip-till-next-match: the source's vertices not yet extended
PREVIOUS = "previous"  # contiguous: the source's vertices of the previous time stamp


def supports(query: CompiledQuery) -> str | None:
    """GRETA evaluates every query the plan format can express."""
    return None


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    if not events:
        return {}
    return TimeStampDriver.of(query, since=False).run(events)


class TimeStampDriver:
    """One pass over a partition's time-stamp groups: windows of each group, pruning of
    expired windows and invalidated vertices, per event and matched variable the sum over
    its predecessors (by the transition's ``kind``), results of the END variables (trailing
    ``NOT`` bound applied), then the group's vertices handed on. Keeps no state between runs.

    ``since=False`` is GRETA; ``since=True`` is COGRA's interpreter (skip-till-any-match
    only): a negated transition without adjacent predicate reads the "since" aggregate of
    the negation prefix whose match started last instead of a list of vertices."""

    _cache: dict[tuple[int, bool], tuple[CompiledQuery, TimeStampDriver]] = {}

    @classmethod
    def of(cls, query: CompiledQuery, *, since: bool) -> TimeStampDriver:
        """The driver of ``query``, built once."""
        hit = cls._cache.get((id(query), since))
        if hit is None or hit[0] is not query:
            if len(cls._cache) > 256:
                cls._cache.clear()
            hit = (query, cls(query, since=since))
            cls._cache[(id(query), since)] = hit
        return hit[1]

    def __init__(self, query: CompiledQuery, *, since: bool = False) -> None:
        q = query
        self.q = q
        self.alg = Algebra(q)
        self.semantics = q.semantics
        if since and q.semantics != ANY:
            raise ValueError("since aggregates need skip-till-any-match")
        self.kind: dict[tuple[str, str], str] = {}
        for t in q.transitions:
            if q.semantics == NEXT:
                kind = OPEN
            elif q.semantics == CONTIGUOUS:
                kind = PREVIOUS
            elif t.adjacent is None and not t.negations:
                kind = TOTAL
            elif t.adjacent is None and since:
                kind = SINCE
            else:
                kind = LIST
            self.kind[(t.src, t.dst)] = kind
        kinds = self.kind
        self.total_vars = {t.src for t in q.transitions if kinds[(t.src, t.dst)] in (TOTAL, SINCE)}
        self.list_vars = {t.src for t in q.transitions if kinds[(t.src, t.dst)] == LIST}
        # (variable, negation) pairs that need since aggregates
        self.since_keys = sorted(
            {(t.src, n) for t in q.transitions if kinds[(t.src, t.dst)] == SINCE for n in t.negations}
        )
        self.has_succ = {v for v in q.positive if q.successors[v]}

    def run(self, events: list[Event]) -> dict[int, WindowResult]:
        q, alg, kinds = self.q, self.alg, self.kind
        within, slide = q.within, q.slide
        semantics = self.semantics
        scalar = alg.scalar
        groups = time_groups(events)
        negs = Negations(q, groups)
        # the negated transitions read through lists, and how far back a kept vertex is needed
        list_negs = {(t.src, t.dst): t for t in q.transitions if t.negations and kinds[(t.src, t.dst)] != SINCE}
        list_trs: dict[str, list[Transition]] = {v: [] for v in self.list_vars}
        for t in q.transitions:
            if kinds[(t.src, t.dst)] == LIST:
                list_trs[t.src].append(t)

        lists = {v: VarList() for v in self.list_vars}  # any-match
        totals: dict[str, Aggs] = {v: {} for v in self.total_vars}  # any-match
        since_aggs: dict[tuple[str, int], list[Aggs]] = {
            (v, n): [{} for _ in q.negations[n]] for v, n in self.since_keys
        }
        since_by_var: dict[str, list[list[Aggs]]] = {}
        for (v, _), lst in since_aggs.items():
            since_by_var.setdefault(v, []).append(lst)
        open_: dict[str, list[Vertex]] = {v: [] for v in self.has_succ}  # next-match
        prev: dict[str, list[Vertex]] = {}  # contiguous: vertices of the previous time stamp
        results: Aggs = {}
        starts_vars = q.start
        end_vars = q.end
        variables = q.variables
        vars_by_type = q.vars_by_type
        predecessors = q.predecessors

        for gi, (t, group) in enumerate(groups):
            windows = window_range(t, within, slide)
            kmin, kmax = windows.start, windows.stop - 1
            latest = negs.latest()
            bounds = {key: max_bound([latest[n] for n in tr.negations]) for key, tr in list_negs.items()}
            start_bound = negs.start_bound(latest)
            end_bound = negs.end_bound(gi)

            def starts(k: int, sb: int | None = start_bound) -> bool:
                return sb is None or sb < k * slide

            # prune: expired windows and invalidated vertices
            for aggs in totals.values():
                if aggs and min(aggs) < kmin:
                    for k in [k for k in aggs if k < kmin]:
                        del aggs[k]
            for lst in since_aggs.values():
                for aggs in lst:
                    if aggs and min(aggs) < kmin:
                        for k in [k for k in aggs if k < kmin]:
                            del aggs[k]
            for v, vl in lists.items():
                vl.prune(kmin, negs.blocked_before(list_trs[v], latest))
            if semantics == NEXT:
                for v, ol in open_.items():
                    if ol and ol[0].last_window < kmin:
                        open_[v] = [p for p in ol if p.last_window >= kmin]

            new: list[Vertex] = []
            any_closed = False
            for e in group:
                for var in vars_by_type.get(e.type, ()):
                    if not variables[var].matches(e.type, e.attrs):
                        continue
                    acc: Aggs = {}
                    for tr in predecessors[var]:
                        src = tr.src
                        key = (src, var)
                        kind = kinds[key]
                        if kind == TOTAL:
                            alg.add_into(acc, totals[src], kmin)
                            continue
                        if kind == SINCE:
                            n_best, nb = None, None
                            for n in tr.negations:
                                b = latest[n]
                                if b is not None and (nb is None or b > nb):
                                    n_best, nb = n, b
                            alg.add_into(acc, totals[src] if n_best is None else since_aggs[(src, n_best)][-1], kmin)
                            continue
                        adjacent = tr.adjacent
                        bound = bounds.get(key)
                        if kind == LIST:
                            vl = lists[src]
                            cands: Any = islice(vl.vertices, vl.from_time(bound), None)
                        elif kind == OPEN:
                            cands = open_.get(src, ())
                        else:
                            cands = prev.get(src, ())
                        attrs = e.attrs
                        for p in cands:
                            if adjacent is not None and not adjacent(p.attrs, attrs):
                                continue
                            if kind != LIST:
                                if p.last_window < kmin or (bound is not None and bound > p.ts):
                                    continue
                                if kind == OPEN:
                                    p.closed = True
                                    any_closed = True
                            if scalar:  # inlined add_into for COUNT(*) only
                                for k, a in p.prop.items():
                                    if k >= kmin:
                                        acc[k] = acc.get(k, 0) + a
                            else:
                                alg.add_into(acc, p.prop, kmin)
                    aggs = alg.finish(acc, windows, starts if var in starts_vars else None, var, e.attrs)
                    if not aggs:
                        continue
                    if var in end_vars:
                        if end_bound is not None:
                            aggs_end = {k: a for k, a in aggs.items() if not end_bound < k * slide + within}
                        else:
                            aggs_end = aggs
                        merge_aggs(alg, results, aggs_end)
                    if var not in self.has_succ:
                        continue
                    prop = aggs
                    if semantics == CONTIGUOUS and len(group) > 1:
                        # a middle event must be alone at its time stamp: pass on only
                        # the trends this vertex starts
                        if var not in starts_vars:
                            continue
                        prop = alg.finish({}, windows, starts, var, e.attrs)
                        if not prop:
                            continue
                    new.append(Vertex(t, e.attrs, var, prop, kmax))

            # the group is done: its vertices become predecessors for later time stamps
            if semantics == ANY:
                for v in new:
                    if v.var in lists:
                        lists[v.var].append(v)
                    if v.var in totals:
                        alg.add_into(totals[v.var], v.prop, kmin)
                    for lst in since_by_var.get(v.var, ()):
                        for aggs in lst:
                            alg.add_into(aggs, v.prop, kmin)
            elif semantics == NEXT:
                if any_closed:
                    for var, ol in open_.items():
                        open_[var] = [p for p in ol if not p.closed]
                for v in new:
                    open_[v.var].append(v)
            else:
                prev = {}
                for v in new:
                    prev.setdefault(v.var, []).append(v)
            # negation matches advanced by the group: "since" aggregates follow their prefixes
            advanced = negs.advance(t, group)
            if since_aggs:  # a since driver with negated transitions
                self._follow(advanced, since_aggs, new, kmin)

        return results_of(alg, results)

    def _follow(
        self, advanced: dict[int, list[int]], since_aggs: dict[tuple[str, int], list[Aggs]], new: list[Vertex], kmin: int
    ) -> None:
        """Prefix j of negation n took prefix j-1's latest start: its since aggregate does too;
        prefix 0 started at this group, so it holds only the group's own vertices."""
        alg = self.alg
        for n, prefixes in advanced.items():
            for j in prefixes:  # descending: lst[j - 1] is still the old value
                for (sv, sn), lst in since_aggs.items():
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
