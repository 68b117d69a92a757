"""COGRA's pattern-grained interpreter: skip-till-next-match and contiguous queries
without adjacent predicates or negation (one open aggregate per variable and window)."""

from __future__ import annotations

from trendlake.engine.aggregates import Aggs, Algebra, merge_aggs, results_of
from trendlake.engine.columns import Event
from trendlake.engine.query import CONTIGUOUS, CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.timeline import time_groups, window_range


def run_pattern(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    q = query
    alg = Algebra(q)
    within, slide = q.within, q.slide
    contiguous = q.semantics == CONTIGUOUS
    has_succ = {v for v in q.positive if q.successors[v]}
    start_vars, end_vars = q.start, q.end
    variables, vars_by_type, predecessors = q.variables, q.vars_by_type, q.predecessors
    open_: dict[str, Aggs] = {}  # per variable: the open trend ends (per window)
    results: Aggs = {}

    def always(k: int) -> bool:
        return True

    for t, group in time_groups(events):
        windows = window_range(t, within, slide)
        kmin = windows.start
        for aggs in open_.values():
            for k in [k for k in aggs if k < kmin]:
                del aggs[k]
        new: list[tuple[str, Aggs]] = []
        closed: set[str] = set()
        for e in group:
            for var in vars_by_type.get(e.type, ()):
                if not variables[var].matches(e.type, e.attrs):
                    continue
                acc: Aggs = {}
                for tr in predecessors[var]:
                    src = open_.get(tr.src)
                    if src:
                        alg.add_into(acc, src, kmin)
                        closed.add(tr.src)
                aggs = alg.finish(acc, windows, always if var in start_vars else None, var, e.attrs)
                if not aggs:
                    continue
                if var in end_vars:
                    merge_aggs(alg, results, aggs)
                if var not in has_succ:
                    continue
                if contiguous and len(group) > 1:
                    # a middle event must be alone at its time stamp
                    if var not in start_vars:
                        continue
                    aggs = alg.finish({}, windows, always, var, e.attrs)
                new.append((var, aggs))
        if contiguous:
            open_ = {}
        else:
            for v in closed:
                open_[v] = {}
        for var, aggs in new:
            alg.add_into(open_.setdefault(var, {}), aggs, kmin)
    return results_of(alg, results)
