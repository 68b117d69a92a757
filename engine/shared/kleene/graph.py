"""Event-grained shared Kleene execution (Hamlet with adjacent predicates): one GRETA graph of
the shared type for a sharable set.

A ``kleene`` group whose queries have adjacent predicates runs here (the
type-grained ones in ``shared.kleene``). The members match the same events
of the shared type ``K`` (equal local predicates) and connect them alike
(equal adjacent predicates on ``K -> K``); the transitions into and out of
``K`` carry no adjacent predicate. Everything else of a member (its other
variables, their adjacent predicates, its aggregates) is its own, evaluated
as GRETA does.

Why the ``K`` graph is shared exactly (docs/engine.md, "Shared Kleene
execution"). In GRETA a vertex ``e`` of ``K`` holds, per window, the
aggregate ``Φ_e(B + Σ_p agg(p))``: ``B`` what it extends from (the
running totals of ``K``'s predecessor variables, plus one trend when ``K``
starts the pattern), the sum over its ``K`` predecessors ``p`` (edges the
adjacent predicate allows), and ``Φ_e`` adding ``e`` itself to the count of
``K``, to the sums and to the extrema of ``K``'s attributes. ``B`` is the
only part that differs between queries, and it changes only when a query's
predecessor of ``K`` gets a new vertex or the set of windows changes. The
``K`` events between two such changes form a *snapshot* ``s`` (a graphlet),
and every vertex is a combination of snapshots:

    count(e) = Σ_s M[e,s]·B_s[count]
    count_K(e) = Σ_s C[e,s]·B_s[count]               (+ M[e,s]·B_s[count_K] = 0)
    sum_K.a(e) = Σ_s A_a[e,s]·B_s[count]
    other additive entries: Σ_s M[e,s]·B_s[entry]
    min_K.a(e) = min over s with M[e,s] > 0 and B_s[count] != 0 of N_a[e,s]

with the *shared coefficients* ``M[e] = δ_s(e) + Σ_p M[p]``, ``C[e] = Σ_p C[p] +
M[e]``, ``A_a[e] = Σ_p A_a[p] + a_e·M[e]`` and ``N_a[e,s] = min(a_e, N_a[p,s]
over p)``: the graph (every adjacent predicate, every edge) is built once
for the group, and a query evaluates ``B`` once per snapshot and the
combination only where its own events read ``K``'s running total (an event
of a successor variable of ``K``) or a window closes (``K`` ends the
pattern). A snapshot holds events with one set of windows, so the snapshots a
window ``k`` includes are those whose windows contain ``k``.

Counts saturate as in GRETA: a coefficient past ``CAP`` is kept at ``CAP + 1``
(the count it multiplies is then past ``CAP`` for any query that has trends
there) and the sums it carries become NaN.

``GraphPartition`` runs one partition in that order: ``snapshot`` (a new
snapshot; a member whose ``B`` changed starts an epoch with it),
``shared_vertices`` (the rows ``M``, ``C``, ``A_a``, ``N_a``, ``X_a`` of new
events of ``K``, kept in ``coefficients.Coefficients``), ``k_total`` (the
combination ``Σ_s`` over a window's snapshots), ``own_vertex`` and
``predecessors`` (a member's own events, as GRETA evaluates them), ``commit``
and ``close_before`` (results where ``K`` ends the pattern).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

import numpy as np
from trendlake.engine.aggregates import Aggs, Algebra, merge_aggs, results_of, scale
from trendlake.engine.columns import Event
from trendlake.engine.expr.vector import NEXT, NoVector, vec_predicate
from trendlake.engine.negation import Negations, max_bound
from trendlake.engine.query import ANY, CompiledQuery, has_cycle
from trendlake.engine.results import WindowResult
from trendlake.engine.shared.kleene.coefficients import Coefficients, column_dtype, magnitude
from trendlake.engine.timeline import window_range
from trendlake.engine.vertices import VarList, Vertex

__all__ = [
    "GraphMember", "GraphPartition", "member_problem", "run_group", "supports", "time_stamp_groups", "uses_graph",
    "visited_column",
]

M_KEY, C_KEY = ("M", ""), ("C", "")


def uses_graph(queries: Sequence[CompiledQuery]) -> bool:
    """Whether a group runs on the shared graph (a query has adjacent predicates or negation)."""
    return any(q.has_adjacent or q.negations for q in queries)


def supports(queries: Sequence[CompiledQuery], shared: Mapping[str, str]) -> str | None:
    """None when the shared graph evaluates the group, else why not."""
    first = queries[0]
    keys = None
    for q in queries:
        var = shared.get(q.name)
        problem = member_problem(q, var, first)
        if problem is not None:
            return problem
        loop = [t for t in q.transitions if t.src == var and t.dst == var]
        if not loop:
            return f"query {q.name}: {var} is not a Kleene sub-pattern"
        for t in q.transitions:
            if (t.src == var) != (t.dst == var) and t.adjacent is not None:
                return f"query {q.name}: adjacent predicate on {t.src} -> {t.dst} (into or out of the shared {var})"
            if (t.src == var or t.dst == var) and t.negations:
                return f"query {q.name}: negation on {t.src} -> {t.dst} (into, out of or within the shared {var})"
        if (q.start_negations and var in q.start) or (q.end_negations and var in q.end):
            return f"query {q.name}: a leading or trailing NOT next to the shared {var}"
        if _has_cycle(q):
            return f"query {q.name}: nested Kleene (a cycle through several variables)"
        k = (q.variables[var].type, q.variables[var].key, loop[0].adjacent_key)
        if keys is None:
            keys = k
        elif k != keys:
            return (
                f"query {q.name}: the shared {var} must match and connect the same events as in "
                f"{first.name} (same type, local and adjacent predicates)"
            )
    return None


def member_problem(q: CompiledQuery, var: str | None, first: CompiledQuery) -> str | None:
    """Why query ``q`` cannot share its variable ``var`` in a group with ``first`` (both kinds of
    kleene group): a positive shared variable, skip-till-any-match, the group's windows and
    partitioning, every positive type once."""
    if var is None or var not in q.variables or q.variables[var].negated:
        return f"query {q.name}: no positive shared variable"
    if q.semantics != ANY:
        return f"query {q.name}: {q.semantics} is not shared (skip-till-any-match only)"
    if (q.within, q.slide, q.partition_by) != (first.within, first.slide, first.partition_by):
        return f"query {q.name}: windows or partitioning differ within the group"
    if len({q.variables[v].type for v in q.positive}) != len(q.positive):
        return f"query {q.name}: a type occurs more than once"
    return None


def _has_cycle(q: CompiledQuery) -> bool:
    return has_cycle((t.src, t.dst) for t in q.transitions)


class GraphMember:
    """One query of the group: its algebra and where the shared variable sits in it."""

    def __init__(self, q: CompiledQuery, var: str) -> None:
        self.q = q
        self.var = var
        self.alg = alg = Algebra(q)
        self.k_start = var in q.start
        self.k_end = var in q.end
        self.into_k = [t.src for t in q.predecessors[var] if t.src != var]
        self.others = [v for v in q.positive if v != var]
        # list layout offsets of what the shared coefficients feed
        self.k_count = [1 + i for i, v in enumerate(alg.count_vars) if v == var]
        self.k_sums = [(alg.n_counts + i, a) for i, (v, a) in enumerate(alg.sum_keys) if v == var]
        self.k_mins = [(alg.n_additive + i, a) for i, (v, a) in enumerate(alg.min_keys) if v == var]
        self.k_maxs = [(alg.n_min + i, a) for i, (v, a) in enumerate(alg.max_keys) if v == var]
        own = {i for i in self.k_count} | {i for i, _ in self.k_sums}
        self.plain = [i for i in range(1, alg.n_additive) if i not in own]  # B_s[entry]·M
        kx = {i for i, _ in self.k_mins} | {i for i, _ in self.k_maxs}
        self.ext = [i for i in range(alg.n_additive, alg.size) if i not in kx]
        self.free = {
            (t.src, t.dst) for t in q.transitions if t.src != var and t.adjacent is None and not t.negations
        }
        self.negated = [v for v, x in q.variables.items() if x.negated]


def run_group(
    queries: Sequence[CompiledQuery],
    shared: Mapping[str, str],
    masks: Mapping[str, Mapping[str, np.ndarray]],
    idx: np.ndarray,
    ts: np.ndarray,
    attrs: Mapping[str, Any],
    kid: np.ndarray,
    stats: Any,
) -> dict[str, dict[tuple[int, int], WindowResult]]:
    """Results per query and (partition id, window index); arguments as ``typed.run_group``."""
    members = [GraphMember(q, shared[q.name]) for q in queries]
    first = queries[0]
    within, slide = first.within, first.slide
    exact = any(m.alg.exact for m in members)
    names = sorted({a for a in attrs})
    cols = {a: visited_column(attrs, a, idx) for a in names}
    # the events' attribute values as predicates read them: a missing float (NaN) is None
    col_lists = {
        a: ([None if x != x else x for x in c.tolist()] if c.dtype.kind == "f" else c.tolist())
        if isinstance(c, np.ndarray) else list(c)
        for a, c in cols.items()
    }
    kmask = masks[members[0].q.name][members[0].var][idx].tolist()
    matches, neg_rows = _own_rows(members, masks, idx)
    sum_attrs = sorted({a for m in members for _, a in m.k_sums})
    min_attrs = sorted({a for m in members for _, a in m.k_mins})
    max_attrs = sorted({a for m in members for _, a in m.k_maxs})
    need_c = any(m.k_count for m in members)
    adj_k, adj_exprs = None, None
    for t in first.transitions:
        if t.src == t.dst == members[0].var and t.adjacent is not None:
            # the predicate as expressions (roles for variables) too, for numpy
            adj_k, adj_exprs = t.adjacent, json.loads(t.adjacent_key)
    ts_l = ts[idx].tolist()
    kid_l = kid.tolist()
    n = len(ts_l)
    out: dict[str, dict[tuple[int, int], WindowResult]] = {m.q.name: {} for m in members}
    dtypes = {a: column_dtype(c) for a, c in cols.items()}

    row_cache: dict[int, dict[str, Any]] = {}

    def row_attrs(r: int) -> dict[str, Any]:
        d = row_cache.get(r)
        if d is None:
            d = row_cache[r] = {a: col_lists[a][r] for a in names}
        return d

    lo = 0
    while lo < n:
        hi = lo
        part = kid_l[lo]
        while hi < n and kid_l[hi] == part:
            hi += 1
        runner = GraphPartition(
            members, within, slide, adj_k, exact, need_c, sum_attrs, min_attrs, max_attrs, stats, dtypes, adj_exprs
        )
        runner.part_key = part
        results = runner.run(lo, hi, ts_l, kmask, matches, row_attrs, neg_rows)
        row_cache.clear()
        for j, res in results.items():
            m = members[j]
            for k, r in results_of(m.alg, res).items():
                out[m.q.name][(part, k)] = r
        lo = hi
    return out


def _own_rows(members: list[GraphMember], masks: Mapping[str, Mapping[str, np.ndarray]],
              idx: np.ndarray) -> tuple[dict[int, list[tuple[int, str]]], dict[int, dict[int, str]]]:
    """Per visited row the (member, variable) pairs it matches, the shared variable aside; per
    member with negation the rows its negated variables match, with their type."""
    matches: dict[int, list[tuple[int, str]]] = {}
    for j, m in enumerate(members):
        for v in m.others:
            for r in np.flatnonzero(masks[m.q.name][v][idx]).tolist():
                matches.setdefault(r, []).append((j, v))
    neg_rows: dict[int, dict[int, str]] = {}
    for j, m in enumerate(members):
        if m.negated:
            rows_j = neg_rows[j] = {}
            for v in m.negated:
                for r in np.flatnonzero(masks[m.q.name][v][idx]).tolist():
                    rows_j[r] = m.q.variables[v].type
    return matches, neg_rows


class GraphPartition:
    """The shared graph and the members' own vertices over one partition."""

    def __init__(
        self, members: list[GraphMember], within: int, slide: int, adj_k: Any, exact: bool,
        need_c: bool, sum_attrs: list[str], min_attrs: list[str], max_attrs: list[str], stats: Any,
        dtypes: dict[str, Any], adj_exprs: list[dict[str, Any]] | None,
    ) -> None:
        self.members = members
        self.within, self.slide = within, slide
        self.adj_k = adj_k
        self.exact = exact
        self.need_c = need_c
        self.sum_attrs, self.min_attrs, self.max_attrs = sum_attrs, min_attrs, max_attrs
        self.stats = stats
        # the adjacent predicate on K -> K for numpy (None once numpy cannot be exact here)
        self.adj_exprs = adj_exprs
        self.adj_attrs = sorted(_attrs_of(self.adj_exprs or []))
        self.coef = Coefficients(
            need_c, {a: dtypes[a] for a in sum_attrs}, {a: dtypes[a] for a in min_attrs},
            {a: dtypes[a] for a in max_attrs}, exact, {a: dtypes.get(a, object) for a in self.adj_attrs},
        )
        # snapshot id -> its windows; per member: snapshot id -> B (window -> aggregate)
        self.snap_windows: list[range] = []
        # per member with trends to extend in K (K starts its pattern, or a predecessor of K has
        # a vertex: ``active``): its epochs (first snapshot id, windows, B per window), the first
        # live one, and whether its B changed since its last epoch (``dirty``)
        self.active: set[int] = {j for j, m in enumerate(members) if m.k_start}
        self.dirty: set[int] = set(self.active)
        self.epochs: dict[int, list[tuple[int, range, Aggs]]] = {}
        self.epoch_off: dict[int, int] = {}
        # per member, created on its first event: running totals and kept vertices per variable
        self.totals: dict[int, dict[str, Aggs]] = {}
        self.first_live = 0  # snapshots before it are in no open window
        # the pass (``run``): per member with results its aggregates per window, its kept
        # vertices per variable and the kmin they were pruned to; the open windows; the
        # snapshot K events join while no B changes; negation state per member
        self.results: dict[int, Aggs] = {}
        self.lists: dict[int, dict[str, VarList]] = {}
        self.pruned: dict[int, int] = {}
        self.open_windows: set[int] = set()
        self.cur: int | None = None
        self.negs: dict[int, Negations] = {}
        self.neg_groups: dict[int, list[tuple[int, list[Event]]]] = {}
        # per time stamp: (member, window) -> k_total, and per member with negation the
        # latest matches before it
        self.k_totals: dict[tuple[int, int], Any] = {}
        self.latest: dict[int, dict[int, int | None]] = {}

    # -- a member's running total of K in window k: Σ over the window's snapshots -----------
    def k_total(self, j: int, k: int) -> Any:
        """Member j's running total of K in window k: for each of its epochs (snapshots with
        one B), the coefficient totals over the epoch's snapshots combined with that B."""
        m = self.members[j]
        alg = m.alg
        coef = self.coef
        epochs = self.epochs.get(j, ())
        n_snap = len(self.snap_windows)
        total: Any = None
        for e in range(self.epoch_off.get(j, 0), len(epochs)):
            start, windows, acc = epochs[e]
            b = acc.get(k)
            if b is None:
                continue
            lo = max(start, self.first_live)
            hi = epochs[e + 1][0] if e + 1 < len(epochs) else n_snap
            if lo >= hi:
                continue
            tm = coef.range_total(M_KEY, lo, hi)
            if not tm:
                continue
            if alg.scalar:
                total = scale(tm, b) + (total or 0)
                continue
            c = b[0]
            a = alg.zero.copy()
            a[0] = scale(tm, c)
            for i in m.plain:
                a[i] = scale(tm, b[i])
            for i in m.k_count:
                a[i] = scale(coef.range_total(C_KEY, lo, hi), c)
            for i, attr in m.k_sums:
                a[i] = scale(coef.range_total(("A", attr), lo, hi), c)
            for i in m.ext:
                a[i] = b[i]
            for i, attr in m.k_mins:
                a[i] = coef.range_total(("N", attr), lo, hi)
            for i, attr in m.k_maxs:
                a[i] = coef.range_total(("X", attr), lo, hi)
            if total is None:
                total = a
            else:
                alg.merge(total, a)
        return total

    def snapshot(self, windows: range) -> int:
        """A new snapshot. A member whose B changed (a new vertex of a predecessor of K, other
        windows) starts a new epoch with its B for the windows of the events it will hold."""
        sid = self.coef.add_column()
        assert sid == len(self.snap_windows)
        self.snap_windows.append(windows)
        kmin = windows.start
        for j in self.active:
            m = self.members[j]
            epochs = self.epochs.setdefault(j, [])
            if j not in self.dirty and epochs and epochs[-1][1] == windows:
                continue
            self.dirty.discard(j)
            alg = m.alg
            acc: Aggs = {}
            totals = self.totals.get(j, {})
            for x in m.into_k:
                if x in totals:
                    alg.add_into(acc, totals[x], kmin)
            if m.k_start:
                for k in windows:
                    if alg.scalar:
                        acc[k] = acc.get(k, 0) + 1
                    else:
                        a = acc.get(k)
                        if a is None:
                            a = acc[k] = alg.zero.copy()
                        a[0] += 1
            acc = {k: a for k, a in acc.items() if k in windows and (a if alg.scalar else a[0])}
            if not acc and (not epochs or not epochs[-1][2]):
                continue  # nothing to extend, and no epoch with something to end
            epochs.append((sid, windows, acc))
            if acc:
                self.stats.snapshots += 1
                if self.stats.per_window is not None:
                    for k in acc:
                        self.stats.per_window.setdefault((self.part_key, k), [0, 0, 0, 0, 0])[4] += 1
        self.stats.graphlets += 1
        return sid

    def _adjacent(self, live: list[dict[str, Any]], e_attrs: dict[str, Any], cache: dict[str, Any]) -> np.ndarray:
        """Which live vertices of K the adjacent predicate lets precede a new one: vectorized
        where numpy is exact (``engine.expr.vector``), else pair by pair."""
        n = len(live)
        if self.adj_exprs is not None and n >= 8:
            try:
                env: dict[str, Any] = dict(self.coef.live_columns())
                for a in self.adj_attrs:
                    env[NEXT + a] = e_attrs.get(a)
                mask = np.ones(n, dtype=bool)
                for expr in self.adj_exprs:
                    mask &= vec_predicate(expr, env, cache, n)
                return mask
            except NoVector:
                self.adj_exprs = None  # not exact in numpy: pair by pair from now on
        adj_k = self.adj_k
        return np.fromiter((adj_k(p, e_attrs) for p in live), dtype=bool, count=n)

    # -- the pass over the partition, one time stamp at a time -----------------------------
    def run(
        self, lo: int, hi: int, ts_l: list[int], kmask: list[bool], matches: dict[int, list[tuple[int, str]]],
        row_attrs: Any, neg_rows: dict[int, dict[int, str]],
    ) -> dict[int, Aggs]:
        """Per member (index) with results: its aggregates per window. Per time stamp: close the
        windows that ended, prune, add the events of K to the shared graph (``shared_vertices``),
        evaluate the members' own events (``own_vertex``), then commit both."""
        bounds = time_stamp_groups(ts_l, lo, hi)
        self.start_negations(bounds, ts_l, row_attrs, neg_rows)
        for gi, (r, g_hi) in enumerate(bounds):
            t = ts_l[r]
            windows = window_range(t, self.within, self.slide)
            self.close_before(windows.start)
            self.advance(windows)
            self.k_totals = {}
            self.latest = {}
            new_k = self.shared_vertices([x for x in range(r, g_hi) if kmask[x]], windows, row_attrs)
            new_v: dict[int, list[Vertex]] = {}
            for x in range(r, g_hi):
                for j, v in matches.get(x, ()):
                    vx = self.own_vertex(j, v, t, gi, windows, row_attrs(x))
                    if vx is not None:
                        new_v.setdefault(j, []).append(vx)
            self.commit(new_k, new_v, windows)
            for j, negs_j in self.negs.items():
                negs_j.advance(t, self.neg_groups[j][gi][1])
        self.close_before(10**30 if not self.open_windows else max(self.open_windows) + 1)
        return self.results

    def start_negations(self, bounds: list[tuple[int, int]], ts_l: list[int], row_attrs: Any,
                        neg_rows: dict[int, dict[int, str]]) -> None:
        """Negation (a member's own transitions, leading and trailing NOTs): GRETA's state per
        member over the partition's time-stamp groups, holding the events its negated
        variables match."""
        for j, rows_j in neg_rows.items():
            groups_j = [
                (ts_l[a], [Event(ts_l[x], x, rows_j[x], row_attrs(x)) for x in range(a, b) if x in rows_j])
                for a, b in bounds
            ]
            self.neg_groups[j] = groups_j
            self.negs[j] = Negations(self.members[j].q, groups_j)

    def close_before(self, kmin: int) -> None:
        """Close the windows before ``kmin``: where K ends a member's pattern, its running total
        of K in the window is a result."""
        for k in sorted(w for w in self.open_windows if w < kmin):
            self.open_windows.discard(k)
            for j in self.epochs:
                m = self.members[j]
                if m.k_end:
                    total = self.k_total(j, k)
                    if total is not None:
                        merge_aggs(m.alg, self.results.setdefault(j, {}), {k: _bounded(m.alg, total)})

    def advance(self, windows: range) -> None:
        """Open the new windows; prune the expired vertices of K and the snapshots in no open
        window (a member's own vertices when it reads them, ``own_state``)."""
        kmin = windows.start
        new_windows = [k for k in windows if k not in self.open_windows]
        self.open_windows.update(windows)
        self.stats.windows += len(new_windows)
        self.coef.prune(kmin)
        first_live = self.first_live
        while self.first_live < len(self.snap_windows) and self.snap_windows[self.first_live].stop <= kmin:
            self.first_live += 1
        if self.first_live != first_live:
            for j, epochs in self.epochs.items():
                off = self.epoch_off.get(j, 0)
                while off + 1 < len(epochs) and epochs[off + 1][0] <= self.first_live:
                    off += 1
                self.epoch_off[j] = off
        self.coef.drop_columns_before(self.first_live)

    def shared_vertices(self, k_rows: list[int], windows: range,
                        row_attrs: Any) -> list[tuple[dict[Any, np.ndarray], dict[str, Any]]]:
        """The coefficient rows of this time stamp's events of K (in the current snapshot, a new
        one when B changed or the windows did), connected to the live vertices of K the
        adjacent predicate allows; committed after the members' own events."""
        new_k: list[tuple[dict[Any, np.ndarray], dict[str, Any]]] = []
        if not k_rows:
            return new_k
        if self.cur is None or self.snap_windows[self.cur] != windows:
            self.cur = self.snapshot(windows)
        stats = self.stats
        stats.bursts += len(windows)
        stats.shared_bursts += len(windows)
        stats.shared_events += len(k_rows) * len(windows)
        if stats.per_window is not None:
            for k in windows:
                pw = stats.per_window.setdefault((self.part_key, k), [0, 0, 0, 0, 0])
                pw[0] += 1
                pw[1] += 1
        live = self.coef.live_attrs() if self.adj_k is not None else None
        cache: dict[str, Any] = {}
        for x in k_rows:
            e_attrs = row_attrs(x)
            mask = None if live is None else self._adjacent(live, e_attrs, cache)
            new_k.append((self.coef.vertex(self.cur, mask, e_attrs), e_attrs))
        return new_k

    def own_state(self, j: int, kmin: int) -> tuple[dict[str, VarList], dict[str, Aggs]]:
        """Member j's kept vertices and running totals per own variable, created on its first
        event, pruned to ``kmin``."""
        m = self.members[j]
        lists_j = self.lists.get(j)
        if lists_j is None:
            lists_j = self.lists[j] = {x: VarList() for x in m.others}
            totals_j = self.totals[j] = {x: {} for x in m.others}
        else:
            totals_j = self.totals[j]
        if self.pruned.get(j) != kmin:
            self.pruned[j] = kmin
            for vl in lists_j.values():
                vl.prune(kmin, None)
            for tot in totals_j.values():
                for k in [k for k in tot if k < kmin]:
                    del tot[k]
        return lists_j, totals_j

    def own_vertex(self, j: int, v: str, t: int, gi: int, windows: range, e_attrs: dict[str, Any]) -> Vertex | None:
        """Member j's event of its variable ``v`` (time-stamp group ``gi``), as GRETA evaluates
        it: its aggregates from its predecessors, counted where ``v`` ends the pattern; the
        vertex to keep when ``v`` has successors."""
        m = self.members[j]
        alg = m.alg
        lists_j, totals_j = self.own_state(j, windows.start)
        starts = _ALWAYS if v in m.q.start else None
        end_bound = None
        negs_j = self.negs.get(j)
        if negs_j is not None:
            lat = self.latest.get(j)
            if lat is None:
                lat = self.latest[j] = negs_j.latest()
            sb = negs_j.start_bound(lat)
            if starts is not None and sb is not None:
                starts = _starts_after(sb, self.slide)
            end_bound = negs_j.end_bound(gi)
        acc = self.predecessors(j, v, windows, e_attrs, lists_j, totals_j)
        aggs = alg.finish(acc, windows, starts, v, e_attrs)
        if not aggs:
            return None
        if v in m.q.end:
            counted = aggs if end_bound is None else {
                # a trailing NOT matched before these windows' end
                k: a for k, a in aggs.items() if not end_bound < k * self.slide + self.within
            }
            merge_aggs(alg, self.results.setdefault(j, {}), counted)
        if m.q.successors[v]:
            return Vertex(t, e_attrs, v, aggs, windows.stop - 1)
        return None

    def predecessors(self, j: int, v: str, windows: range, e_attrs: dict[str, Any],
                     lists_j: dict[str, VarList], totals_j: dict[str, Aggs]) -> Aggs:
        """What member j's event of ``v`` extends, summed per window: K's running total (from
        the shared coefficients), a predecessor's running total where the transition is free,
        else its kept vertices the adjacent predicate and the negations allow."""
        m = self.members[j]
        alg = m.alg
        kmin = windows.start
        acc: Aggs = {}
        for tr in m.q.predecessors[v]:
            src = tr.src
            if src == m.var:
                for k in windows:
                    key = (j, k)
                    if key not in self.k_totals:
                        self.k_totals[key] = self.k_total(j, k)
                    tot = self.k_totals[key]
                    if tot is not None:
                        alg.add_into(acc, {k: tot}, kmin)
            elif (src, v) in m.free:
                alg.add_into(acc, totals_j[src], kmin)
            else:
                vl = lists_j[src]
                adjacent = tr.adjacent
                bound = None
                if tr.negations:
                    bound = max_bound([self.latest[j][n] for n in tr.negations])
                for p in islice(vl.vertices, vl.from_time(bound), None):
                    if adjacent is None or adjacent(p.attrs, e_attrs):
                        alg.add_into(acc, p.prop, kmin)
        return acc

    def commit(self, new_k: list[tuple[dict[Any, np.ndarray], dict[str, Any]]], new_v: dict[int, list[Vertex]],
               windows: range) -> None:
        """This time stamp's vertices become predecessors of later ones. A new vertex of a
        predecessor of K changes its member's B: the next events of K start a new snapshot."""
        kmin, kmax = windows.start, windows.stop - 1
        for row, e_attrs in new_k:
            self.coef.commit(row, e_attrs, kmax, self.adj_k is not None)
        for j, vxs in new_v.items():
            m = self.members[j]
            for vx in vxs:
                self.lists[j][vx.var].append(vx)
                m.alg.add_into(self.totals[j][vx.var], vx.prop, kmin)
                if vx.var in m.into_k:
                    self.cur = None
                    self.dirty.add(j)
                    self.active.add(j)

    part_key: Any = None


def time_stamp_groups(ts_l: list[int], lo: int, hi: int) -> list[tuple[int, int]]:
    """The (first, end) rows of each time stamp of rows ``lo`` to ``hi`` (sorted by time)."""
    bounds: list[tuple[int, int]] = []
    x = lo
    while x < hi:
        y = x
        while y < hi and ts_l[y] == ts_l[x]:
            y += 1
        bounds.append((x, y))
        x = y
    return bounds


def _ALWAYS(k: int) -> bool:
    return True


def _starts_after(bound: int, slide: int) -> Any:
    """A START vertex counts in the windows starting after a leading NOT's latest match."""
    return lambda k: bound < k * slide


def _attrs_of(value: Any) -> set[str]:
    """The attribute names an expression reads."""
    if isinstance(value, dict):
        found = {value["attr"]} if isinstance(value.get("attr"), str) else set()
        for v in value.values():
            found |= _attrs_of(v)
        return found
    if isinstance(value, list):
        return set().union(*(_attrs_of(v) for v in value)) if value else set()
    return set()


def visited_column(attrs: Mapping[str, Any], name: str, idx: np.ndarray) -> Any:
    """The values of attribute ``name`` at the visited rows ``idx`` (int64 or float64 arrays
    where they fit, else a list with None for missing values)."""
    col = attrs.get(name)
    if col is None:
        return [None] * len(idx)
    arr = col if isinstance(col, np.ndarray) else np.asarray(col, dtype=object)
    sub = arr[idx]
    if sub.dtype.kind in "iu" and magnitude(sub) < 2**62:
        return sub.astype(np.int64)
    if sub.dtype.kind == "f":
        return sub.astype(np.float64)
    return [None if x is None or (isinstance(x, float) and x != x) else x for x in sub.tolist()]


def _bounded(alg: Algebra, total: Any) -> Any:
    """A running total of K as a result aggregate: counts and sums bounded as GRETA keeps them."""
    if alg.scalar:
        return alg.sat(total)
    a = list(total)
    for i in range(alg.n_counts):
        a[i] = alg.sat(a[i])
    for i in range(alg.n_counts, alg.n_additive):
        a[i] = alg.sum_sat(a[i])
    return a
