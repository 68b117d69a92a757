"""COGRA's per-time-stamp interpreter for skip-till-any-match with negation and/or
adjacent predicates (type- and mixed-grained), and for small partitions."""

from __future__ import annotations

from typing import Any

from trendlake.engine.aggregates import Aggs, Algebra, copy_aggs, merge_aggs, results_of
from trendlake.engine.columns import Event
from trendlake.engine.negation import Negations, max_bound
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.timeline import time_groups, window_range
from trendlake.engine.vertices import VarList, Vertex


class Coarse:
    """Per time-stamp group interpreter: type-grained aggregates per (variable, window),
    "since" aggregates for negated transitions, kept events only for the sources of
    transitions with adjacent predicates (mixed-grained)."""

    _cache: dict[int, tuple[CompiledQuery, Coarse]] = {}

    @classmethod
    def of(cls, query: CompiledQuery) -> Coarse:
        """The interpreter of ``query``, built once (it keeps no state between runs)."""
        hit = cls._cache.get(id(query))
        if hit is None or hit[0] is not query:
            if len(cls._cache) > 256:
                cls._cache.clear()
            hit = (query, cls(query))
            cls._cache[id(query)] = hit
        return hit[1]

    def __init__(self, query: CompiledQuery) -> None:
        q = query
        self.q = q
        self.alg = Algebra(q)
        self.kind: dict[tuple[str, str], str] = {}
        for t in q.transitions:
            if t.adjacent is not None:
                self.kind[(t.src, t.dst)] = "events"
            elif t.negations:
                self.kind[(t.src, t.dst)] = "since"
            else:
                self.kind[(t.src, t.dst)] = "type"
        self.type_vars = {
            t.src for t in q.transitions if self.kind[(t.src, t.dst)] in ("type", "since")
        }
        self.list_vars = {t.src for t in q.transitions if self.kind[(t.src, t.dst)] == "events"}
        # (variable, negation) pairs that need since aggregates
        self.since_keys = sorted(
            {
                (t.src, n)
                for t in q.transitions
                if self.kind[(t.src, t.dst)] == "since"
                for n in t.negations
            }
        )
        self.has_succ = {v for v in q.positive if q.successors[v]}

    def run(self, events: list[Event]) -> dict[int, WindowResult]:
        q, alg = self.q, self.alg
        within, slide = q.within, q.slide
        groups = time_groups(events)
        negs = Negations(q, groups)
        list_trs: dict[str, list[Any]] = {v: [] for v in self.list_vars}
        for t in q.transitions:
            if self.kind[(t.src, t.dst)] == "events":
                list_trs[t.src].append(t)

        totals: dict[str, Aggs] = {v: {} for v in self.type_vars}
        since: dict[tuple[str, int], list[Aggs]] = {
            (v, n): [{} for _ in q.negations[n]] for v, n in self.since_keys
        }
        since_by_var: dict[str, list[tuple[int, list[Aggs]]]] = {}
        for (v, n), lst in since.items():
            since_by_var.setdefault(v, []).append((n, lst))
        lists = {v: VarList() for v in self.list_vars}
        results: Aggs = {}
        start_vars, end_vars = q.start, q.end
        variables, vars_by_type, predecessors = q.variables, q.vars_by_type, q.predecessors
        kinds = self.kind

        for gi, (t, group) in enumerate(groups):
            windows = window_range(t, within, slide)
            kmin, kmax = windows.start, windows.stop - 1
            latest = negs.latest()
            start_bound = negs.start_bound(latest)
            end_bound = negs.end_bound(gi)

            def starts(k: int, sb: int | None = start_bound) -> bool:
                return sb is None or sb < k * slide

            # expired windows and invalidated kept events
            for aggs in totals.values():
                if aggs and min(aggs) < kmin:
                    for k in [k for k in aggs if k < kmin]:
                        del aggs[k]
            for lst in since.values():
                for aggs in lst:
                    if aggs and min(aggs) < kmin:
                        for k in [k for k in aggs if k < kmin]:
                            del aggs[k]
            for v, vl in lists.items():
                vl.prune(kmin, negs.blocked_before(list_trs[v], latest))

            new: list[Vertex] = []
            for e in group:
                for var in vars_by_type.get(e.type, ()):
                    if not variables[var].matches(e.type, e.attrs):
                        continue
                    acc: Aggs = {}
                    for tr in predecessors[var]:
                        src = tr.src
                        kind = kinds[(src, var)]
                        if kind == "type":
                            alg.add_into(acc, totals[src], kmin)
                        elif kind == "since":
                            n_best, bound = None, None
                            for n in tr.negations:
                                b = latest[n]
                                if b is not None and (bound is None or b > bound):
                                    n_best, bound = n, b
                            if n_best is None:
                                alg.add_into(acc, totals[src], kmin)
                            else:
                                alg.add_into(acc, since[(src, n_best)][-1], kmin)
                        else:
                            bound = (
                                max_bound([latest[n] for n in tr.negations])
                                if tr.negations
                                else None
                            )
                            vl = lists[src]
                            adjacent = tr.adjacent
                            attrs = e.attrs
                            vs = vl.vertices
                            for i in range(vl.from_time(bound), len(vs)):
                                p = vs[i]
                                if adjacent(p.attrs, attrs):
                                    alg.add_into(acc, p.prop, kmin)
                    aggs = alg.finish(
                        acc, windows, starts if var in start_vars else None, var, e.attrs
                    )
                    if not aggs:
                        continue
                    if var in end_vars:
                        if end_bound is None:
                            merge_aggs(alg, results, aggs)
                        else:
                            merge_aggs(
                                alg,
                                results,
                                {
                                    k: a
                                    for k, a in aggs.items()
                                    if not end_bound < k * slide + within
                                },
                            )
                    if var in self.has_succ:
                        new.append(Vertex(t, e.attrs, var, aggs, kmax))

            # the group is done: its vertices become predecessors for later time stamps
            for v in new:
                if v.var in totals:
                    alg.add_into(totals[v.var], v.prop, kmin)
                for _, lst in since_by_var.get(v.var, ()):
                    for aggs in lst:
                        alg.add_into(aggs, v.prop, kmin)
                if v.var in lists:
                    lists[v.var].append(v)
            # negation matches advanced by the group: "since" aggregates follow their prefixes
            for n, prefixes in negs.advance(t, group).items():
                for j in prefixes:  # descending: lst[j - 1] is still the old value
                    for (sv, sn), lst in since.items():
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
        return results_of(alg, results)

