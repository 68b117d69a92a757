"""The brute-force two-step reference: construct every trend, then aggregate.

This is DESIGN §5 written as directly as possible, for tests and as the
enumeration baseline of benchmarks. It is exponential in the events per
window. Every other strategy must produce exactly its results.

A trend is a path through the template (one variable per event), so for a
pattern where a type occurs once it is just a sequence of events; when a type
occurs under several aliases, one event sequence matched with different
aliases counts once per assignment (docs/language.md).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from trendlake.engine.columns import Event
from trendlake.engine.numbers import exact_sum
from trendlake.engine.query import ANY, CONTIGUOUS, CompiledQuery, Transition
from trendlake.engine.results import WindowResult

__all__ = ["evaluate_window", "negation_matches", "run", "supports", "trends"]

Step = tuple[int, str]  # (event index in the window, variable)


def negation_matches(
    query: CompiledQuery, events: list[Event], neg: int, lo: int, hi: int, lo_inclusive: bool
) -> bool:
    """Whether negation ``neg`` has a match starting after ``lo`` and ending before ``hi``."""
    t = lo
    inclusive = lo_inclusive
    idx = 0
    for name in query.negations[neg]:
        var = query.variables[name]
        found = None
        while idx < len(events):
            e = events[idx]
            idx += 1
            if e.ts >= hi:
                return False
            if (e.ts > t or (inclusive and e.ts == t)) and var.matches(e.type, e.attrs):
                found = e
                break
        if found is None:
            return False
        t, inclusive = found.ts, False
    return True


def _blocked(query: CompiledQuery, events: list[Event], negs: tuple[int, ...], lo: int, hi: int, lo_inclusive: bool = False) -> bool:
    return any(negation_matches(query, events, n, lo, hi, lo_inclusive) for n in negs)


def _may_follow(query: CompiledQuery, events: list[Event], i: int, t: Transition, j: int) -> bool:
    """Event j may follow event i (matched to t.src) as t.dst under skip-till-any-match."""
    e, f = events[i], events[j]
    if f.ts <= e.ts or not query.variables[t.dst].matches(f.type, f.attrs):
        return False
    if t.adjacent is not None and not t.adjacent(e.attrs, f.attrs):
        return False
    return not _blocked(query, events, t.negations, e.ts, f.ts)


def _earliest_follower_ts(query: CompiledQuery, events: list[Event], i: int, var: str) -> int | None:
    for j in range(i + 1, len(events)):
        if events[j].ts <= events[i].ts:
            continue
        if any(_may_follow(query, events, i, t, j) for t in query.successors[var]):
            return events[j].ts
    return None


def trends(query: CompiledQuery, events: list[Event], window: tuple[int, int]) -> Iterator[list[Step]]:
    """Every trend of ``query`` among ``events`` (one partition, all inside ``window``)."""
    w_start, w_end = window

    def extend(path: list[Step]) -> Iterator[list[Step]]:
        i, var = path[-1]
        if var in query.end and not _blocked(
            query, events, query.end_negations, events[i].ts, w_end
        ):
            yield list(path)
        for t in query.successors[var]:
            for j in range(i + 1, len(events)):
                if _may_follow(query, events, i, t, j):
                    path.append((j, t.dst))
                    yield from extend(path)
                    path.pop()

    for i, e in enumerate(events):
        for var in query.vars_by_type.get(e.type, ()):
            if var not in query.start or not query.variables[var].matches(e.type, e.attrs):
                continue
            if _blocked(query, events, query.start_negations, w_start, e.ts, lo_inclusive=True):
                continue
            yield from extend([(i, var)])


def _is_next_match(query: CompiledQuery, events: list[Event], path: list[Step]) -> bool:
    for (i, var), (j, _) in zip(path, path[1:], strict=False):
        if _earliest_follower_ts(query, events, i, var) != events[j].ts:
            return False
    return True


def _is_contiguous(events: list[Event], path: list[Step]) -> bool:
    first, last = events[path[0][0]].ts, events[path[-1][0]].ts
    between = sum(1 for e in events if first < e.ts < last)
    return between == len(path) - 2 if len(path) > 1 else True


def evaluate_window(query: CompiledQuery, events: list[Event], window: tuple[int, int]) -> WindowResult:
    """Step one: construct every trend of the window; step two: aggregate them."""
    result = WindowResult()
    needs = query.needs
    for path in trends(query, events, window):
        if query.semantics != ANY and not _is_next_match(query, events, path):
            continue
        if query.semantics == CONTIGUOUS and not _is_contiguous(events, path):
            continue
        result.trends += 1
        for var in needs.counts:
            result.counts[var] = result.counts.get(var, 0) + sum(1 for _, v in path if v == var)
        for key in needs.sums | needs.mins | needs.maxs:
            var, attr = key
            values = [events[i].attrs[attr] for i, v in path if v == var]
            if key in needs.sums:
                result.sums[key] = result.sums.get(key, 0) + exact_sum(values)
            if key in needs.mins and values:
                low = min(values)
                result.mins[key] = low if key not in result.mins else min(result.mins[key], low)
            if key in needs.maxs and values:
                high = max(values)
                result.maxs[key] = high if key not in result.maxs else max(result.maxs[key], high)
    return result


def supports(query: CompiledQuery) -> str | None:
    """The reference evaluates every query (exponentially in the events per window)."""
    return None


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    out: dict[int, WindowResult] = {}
    if not events:
        return out
    stamps = [e.ts for e in events]
    windows = sorted({k for e in events for k in query.window_range(e.ts)})
    for k in windows:
        start, end = query.window_bounds(k)
        lo, hi = bisect.bisect_left(stamps, start), bisect.bisect_left(stamps, end)
        result = evaluate_window(query, events[lo:hi], (start, end))
        if result.trends:
            out[k] = result
    return out
