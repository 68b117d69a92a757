"""Shared Kleene execution (Hamlet): one pass over the events of a sharable set.

A sharing group of kind ``kleene`` names queries that contain the same Kleene
sub-pattern ``K+`` (same event type, same local predicates and required
attributes on ``K``, same partitioning and windows, skip-till-any-match,
type-grained, no negation). Each query keeps COGRA's type-grained window
state (``strategies/cogra/layout.py``); the events of ``K`` are processed
once for the whole group instead of once per query.

Why that is exact (docs/engine.md, "Shared Kleene execution"). Let ``s`` be
what a query's ``K`` events extend from (1 when ``K`` starts the pattern,
plus the trend counts of ``K``'s other predecessors) and ``u = count(K) + s``.
A time stamp with ``k`` events of ``K`` multiplies ``u`` by ``f = 1 + k``
(each event extends every trend before its time stamp, or starts one), and
the sums ``W = count_K(K) + Σ count_K(others)`` and ``Z = sum_a(K) + Σ
sum_a(others)`` become ``f·W + k·u`` and ``f·Z + S·u`` (``S``: the sum of
``a`` over the ``k`` events). As long as ``s`` does not change, a run of such
time stamps is therefore the same affine map for every query of the group:

    u' = F·u,   W' = F·W + G·u,   Z' = F·Z + H_a·u

with ``F = Π f_j``, ``G = Σ_j k_j Π_{i≠j} f_i``, ``H_a = Σ_j S_j Π_{i≠j} f_i``.
The graphlet (the run of ``K`` time stamps) keeps these *shared
coefficients* per window; each query keeps a *snapshot* of them taken when
its own state was last brought up to date. A query's state is brought up to
date (``F``/``G``/``H`` since its snapshot, exact integer arithmetic) only
when one of its own non-``K`` events arrives or its window closes: between
two such events ``s`` is constant, so the affine map applies. Events of the
other types of a query go through that query's own generated step code.

Within one time stamp every event sees the state before it: per query, the
steps of variables ranked before ``K`` (its successors) run before the
shared ``K`` update, the others after it (``Layout.rank``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from trendlake.engine.layout import Layout
from trendlake.engine.numbers import (
    CAP,
    NAN,
    FSum,
    contribution,
    exact_sum,
    float_terms,
    max_present,
    min_present,
    norm,
    sat,
    sum_sat,
)
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.shared.kleene import compiled, graph
from trendlake.engine.shared.kleene.graph import visited_column
from trendlake.engine.timeline import panes, window_range

__all__ = ["SharedStats", "run_group", "supports"]

REBASE_BITS = 2048  # shared coefficients are rebased (every query brought up to date) beyond this size


def supports(queries: Sequence[CompiledQuery], shared: Mapping[str, str]) -> str | None:
    """None when the type-grained shared executor evaluates the group, else why not."""
    first = queries[0]
    ktype = None
    for q in queries:
        var = shared.get(q.name)
        problem = graph.member_problem(q, var, first)
        if problem is not None:
            return problem
        assert var is not None
        layout = Layout.of(q)
        i = layout.index[var]
        if not layout.ok or layout.rank is None or not layout.selfloop[i]:
            return f"query {q.name}: {var} is not a flat Kleene sub-pattern"
        if ktype is None:
            ktype = q.variables[var].type
        elif q.variables[var].type != ktype:
            return f"query {q.name}: shared variables of different types"
    return None


@dataclass
class SharedStats:
    """What the shared executor did (per group, summed over partitions)."""

    windows: int = 0
    graphlets: int = 0  # runs of shared-type time stamps with no other event of the group between
    bursts: int = 0  # time stamps holding events of the shared type, per open window
    shared_events: int = 0  # events of the shared type, once per window they are in
    snapshots: int = 0  # states brought up to date from the shared coefficients
    rebases: int = 0
    shared_bursts: int = 0  # shared-type time stamps (per window) propagated through the graphlet
    split_bursts: int = 0  # ... applied to each matching query on its own (predicates differ)
    event_snapshots: int = 0  # queries kept out of a shared update because they do not match it
    # with a dict: (partition, window) -> [bursts, shared, split, event snapshots, snapshots]
    # (the executor replaces its partition ids by the partition's key values)
    per_window: dict[tuple[Any, int], list[int]] | None = None
    # with a list: (partition id, window, query, events of K applied, u) per snapshot,
    # u = count(K) + s before the graphlet's time stamps were applied
    trace: list[tuple[Any, int, str, int, Any]] | None = None


@dataclass
class _Entry:
    """One query's state in one window and its snapshot of the shared coefficients."""

    st: tuple
    epoch: int  # index of the first graphlet time stamp not yet applied
    F: int
    G: int
    H: dict[str, int]


@dataclass
class _Window:
    k: int = 0
    F: int = 1
    G: int = 0
    H: dict[str, int] = field(default_factory=dict)
    # per graphlet run applied: (F, events, sums, mins, maxs, H) of the run
    steps: list[tuple[int, int, dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]] = field(
        default_factory=list
    )
    entries: dict[int, _Entry] = field(default_factory=dict)


class _Member:
    """A query of the group: its layout, compiled step code and shared variable."""

    def __init__(self, query: CompiledQuery, var: str) -> None:
        self.query = query
        self.layout = layout = Layout.of(query)
        self.i = i = layout.index[var]
        self.var = var
        self.nv = len(layout.vars)
        self.base = i * layout.stride
        self.start = 1 if layout.start[i] else 0
        self.others = layout.others[i]
        self.rank = layout.rank
        assert self.rank is not None
        self.before = [self.rank[v] < self.rank[i] for v in range(self.nv)]
        self.kernel: Any = None
        # how the member's own step code bounds values: saturation, or exact (queries with AVG)
        self.keep_count = norm if layout.exact else sat
        self.keep_sum = norm if layout.exact else sum_sat

    def compile(self) -> None:
        # the generated kernel applies a block of (code, k, stats...) rows to a state
        _, self.kernel = self.layout.instantiate([], [], [[] for _ in self.layout.stat_cols], [])


def run_group(
    queries: Sequence[CompiledQuery],
    shared: Mapping[str, str],
    masks: Mapping[str, Mapping[str, np.ndarray]],
    idx: np.ndarray,
    ts: np.ndarray,
    attrs: Mapping[str, Any],
    kid: np.ndarray,
    stats: SharedStats | None = None,
    *,
    dynamic: bool,
    snapshot_cost: float,
) -> dict[str, dict[tuple[int, int], WindowResult]]:
    """Results per query and (partition id, window index) of a sharing group.

    ``masks[q][v]``: which rows match variable ``v`` of query ``q`` (over all
    rows, False outside the partitions the query keeps); ``idx``: the rows to
    visit in (partition, ts) order; ``kid``: their partition ids.

    Queries may match different events of the shared type (different local
    predicates): per time stamp the queries are split by the events they match.
    The largest class goes through the shared update, the others are kept out of
    it (brought up to date before and re-snapshotted after: snapshots at event
    level) and apply their events on their own. ``dynamic`` (Hamlet's per-burst
    decision): the burst is shared only when that is cheaper, ``1 + c·|kept out| <
    (1 + c)·|class|`` with ``c`` = ``snapshot_cost``, else split: every matching query
    on its own. Otherwise (static) always shared."""
    stats = stats if stats is not None else SharedStats()
    # count states: one compiled pass, every class of queries on its own coefficients
    fast = compiled.run(queries, shared, masks, idx, ts, kid, stats)
    if fast is not None:
        return fast
    members = [_Member(q, shared[q.name]) for q in queries]
    for m in members:
        m.compile()
    # the shared type's events, per member (members with other local predicates on K match
    # other events; pruned partitions match none)
    kmasks = np.vstack([masks[m.query.name][m.var][idx] for m in members])
    kmask = np.logical_or.reduce(kmasks, axis=0)
    # members that match every event of K they could (the same predicates): one class always
    uniform = bool(np.all(kmasks[:, kmask] == kmasks[0, kmask])) if len(members) > 1 else True
    km_lists = [km.tolist() for km in kmasks] if not uniform else []
    # per member: variable code of every visited row (-1: not this member's), K rows excluded
    codes = []
    for m in members:
        code = np.full(len(idx), -1, dtype=np.int64)
        for v_index, v in enumerate(m.layout.vars):
            if v_index != m.i:
                code[masks[m.query.name][v][idx]] = v_index
        codes.append(code)
    names = sorted({a for m in members for a in m.layout.attrs})
    cols = {a: visited_column(attrs, a, idx) for a in names}
    k_attrs = sorted({a for m in members for a in m.layout.own[m.i]})
    # the shared coefficients H of an attribute are exact integers: ints as they are, floats
    # scaled by the power of two that makes every value of the column an integer
    scale = {a: _scale(cols[a], kmask) for a in k_attrs}
    int_attrs = {a for a, sc in scale.items() if sc is not None}
    first = members[0].query
    within, slide = first.within, first.slide
    out: dict[str, dict[tuple[int, int], WindowResult]] = {m.query.name: {} for m in members}

    code_lists = [c.tolist() for c in codes]
    kmask_l = kmask.tolist()
    ts_l = ts[idx].tolist()
    kid_l = kid.tolist()
    col_lists = {a: (c.tolist() if isinstance(c, np.ndarray) else list(c)) for a, c in cols.items()}
    n = len(ts_l)
    windows: dict[int, _Window] = {}
    part = None
    in_graphlet = False

    def bring_up_to_date(win: _Window, j: int, e: _Entry) -> tuple:
        m = members[j]
        if e.epoch == len(win.steps):
            return e.st
        st = e.st
        lay = m.layout
        stride, o_w, o_z, o_n, o_x = lay.stride, lay.o_w, lay.o_z, lay.o_n, lay.o_x
        base = m.base
        s = m.start
        for p in m.others:
            s += st[p * stride]
        u = st[base] + s
        if not u:
            _snapshot(win, e)
            return st
        stats.snapshots += 1
        if stats.per_window is not None:
            stats.per_window.setdefault((part, win.k), [0, 0, 0, 0, 0])[4] += 1
        if stats.trace is not None:
            stats.trace.append((part, win.k, m.query.name, sum(step[1] for step in win.steps[e.epoch:]), u))
        nan = u != u
        f_rel = win.F // e.F
        # counts that saturate whatever the rest: u >= 1 times F > CAP (not in exact mode)
        past = not lay.exact and (nan or f_rel > CAP + 1)  # then u F - s >= F - 1 > CAP
        new = list(st)
        new[base] = NAN if past else m.keep_count(u * f_rel - s)
        if lay.cvars:
            g_rel = 0 if past else (win.G - e.G * f_rel) // e.F
            for jj, ev in enumerate(lay.cvars):
                sw = 0
                for p in m.others:
                    sw += st[p * stride + o_w + jj]
                w0 = st[base + o_w + jj] + sw
                if past:  # W = W0 F + (u G if own): saturated unless nothing is counted
                    new[base + o_w + jj] = NAN if (w0 or ev == m.var) else st[base + o_w + jj]
                    continue
                w = w0 * f_rel + (u * g_rel if ev == m.var else 0)
                new[base + o_w + jj] = m.keep_count(w - sw)
        for jj, (ev, a) in enumerate(lay.skeys):
            sz = 0
            for p in m.others:
                sz += st[p * stride + o_z + jj]
            z0 = st[base + o_z + jj] + sz
            z = z0 * f_rel
            if ev == m.var:
                h_rel = _h_rel(win, e, a, f_rel, a in int_attrs)
                if nan:
                    if any(_nonzero(step[2][a]) for step in win.steps[e.epoch:]):
                        z = NAN
                elif h_rel:  # exact: ints, or FSum values for a float column
                    z = z + u * h_rel
            new[base + o_z + jj] = m.keep_sum(z - sz)
        for keys, off, fn, pos in ((lay.nkeys, o_n, min_present, 3), (lay.xkeys, o_x, max_present, 4)):
            for jj, (ev, a) in enumerate(keys):
                mm = st[base + off + jj]
                for p in m.others:
                    mm = fn(mm, st[p * stride + off + jj])
                if ev == m.var:
                    for step in win.steps[e.epoch:]:
                        mm = fn(mm, step[pos][a])
                new[base + off + jj] = mm
        st = tuple(new)
        e.st = st
        _snapshot(win, e)
        return st

    def close(k: int) -> None:
        win = windows.pop(k)
        for j, e in win.entries.items():
            st = bring_up_to_date(win, j, e)
            r = members[j].layout.result(st)
            if r is not None:
                out[members[j].query.name][(part, k)] = r

    def window(k: int) -> _Window:
        win = windows.get(k)
        if win is None:
            win = windows[k] = _Window(k=k, H={a: 0 for a in int_attrs})
            stats.windows += 1
            # a member whose K starts its pattern extends from the window's start; the others
            # get their state at their first event in the window (before it, u = 0: the shared
            # updates leave them unchanged)
            for j in starters:
                win.entries[j] = _Entry(members[j].layout.zero, 0, 1, 0, {a: 0 for a in int_attrs})
        return win

    def entry(win: _Window, j: int) -> _Entry:
        e = win.entries.get(j)
        if e is None:
            e = win.entries[j] = _Entry(members[j].layout.zero, len(win.steps), win.F, win.G, dict(win.H))
        return e

    def apply_steps(j: int, steps: list[tuple], live: range) -> None:
        m = members[j]
        for k in live:
            win = windows[k]
            e = entry(win, j)
            st = bring_up_to_date(win, j, e)
            e.st = m.kernel(st, steps)

    def step_row(j: int, v: int, rows: list[int]) -> tuple:
        """Member j's step of its variable v over the events ``rows`` of one time stamp:
        (code, k, S/MN/MX of each statistics column), as its generated kernel reads it."""
        m = members[j]
        k = len(rows)
        code = m.nv + v if (k > 1 and m.layout.selfloop[v]) else v
        row: list[Any] = [code, k]
        for kind, a_index in m.layout.stat_cols:
            values = [x for x in (col_lists[m.layout.attrs[a_index]][r] for r in rows) if x is not None] or [0]
            row.append(exact_sum(values) if kind == "S" else min(values) if kind == "MN" else max(values))
        return tuple(row)

    def member_steps(j: int, rows: list[int], before: bool) -> list[tuple]:
        """The rank-ordered steps of member j's rows of one time stamp (one per variable),
        of the variables ranked before K (``before``) or after it (not ``before``)."""
        m = members[j]
        by_var: dict[int, list[int]] = {}
        for r in rows:
            v = code_lists[j][r]
            if m.before[v] == before:
                by_var.setdefault(v, []).append(r)
        return [step_row(j, v, by_var[v]) for v in sorted(by_var, key=lambda x: m.rank[x])]

    def shared_update(live: range, f_run: int, g_run: int, h_scaled: dict[str, int], entry: tuple, stamps: int) -> None:
        """Compose the window coefficients with those of a graphlet run (F, G, H)."""
        kk = entry[1]
        for k in live:
            win = windows[k]
            F = win.F
            win.G = win.G * f_run + g_run * F
            for a in int_attrs:
                win.H[a] = win.H[a] * f_run + h_scaled[a] * F
            win.F = F * f_run
            win.steps.append(entry)
            stats.bursts += stamps
            stats.shared_bursts += stamps
            stats.shared_events += kk
            if stats.per_window is not None:
                counts = stats.per_window.setdefault((part, k), [0, 0, 0, 0, 0])
                counts[0] += stamps
                counts[1] += stamps

    starters = [j for j, m in enumerate(members) if m.start]
    kept_out: dict[int, list[int]] = {}  # window -> members kept out of the shared update
    own_k: list[tuple[int, list[tuple]]] = []  # members' own steps of K events

    def k_classes(krows: list[int], live: range) -> list[int]:
        """Split the members by the events of K they match at this time stamp; returns the
        events of the shared update (empty: the burst is split), after arranging the rest."""
        classes: dict[tuple[int, ...], list[int]] = {}
        for j in range(len(members)):
            km = km_lists[j]
            classes.setdefault(tuple(r for r in krows if km[r]), []).append(j)
        best = max((c for c in classes if c), key=lambda c: len(classes[c]))
        size = len(classes[best])
        out_count = len(members) - size
        share = not dynamic or 1 + snapshot_cost * out_count < (1 + snapshot_cost) * size
        for rows_c, js in classes.items():
            if rows_c and (not share or rows_c != best):
                for j in js:
                    own_k.append((j, [step_row(j, members[j].i, list(rows_c))]))
        for k in live:
            counts = stats.per_window.setdefault((part, k), [0, 0, 0, 0, 0]) if stats.per_window is not None else None
            if share:
                win = windows[k]
                chosen = set(classes[best])
                out = [j for j in win.entries if j not in chosen]  # members without state: unaffected
                for j in out:  # up to date before the update, re-snapshotted after it
                    bring_up_to_date(win, j, win.entries[j])
                kept_out[k] = out
                stats.event_snapshots += len(out)
                if counts is not None:
                    counts[3] += len(out)
            else:
                stats.split_bursts += 1
                stats.bursts += 1
                if counts is not None:
                    counts[0] += 1
                    counts[2] += 1
        return list(best) if share else []

    # time-stamp groups of a partition, and per group the (member, row) pairs of the
    # members' own (non-K) events, in row order
    newg = np.ones(n, dtype=bool)
    ts_arr = np.asarray(ts_l, dtype=np.int64)
    if n > 1:
        newg[1:] = (ts_arr[1:] != ts_arr[:-1]) | (kid[1:] != kid[:-1])
    gstart = np.flatnonzero(newg)
    gend = np.append(gstart[1:], n)
    own = np.vstack(codes) >= 0 if codes else np.zeros((0, n), dtype=bool)
    own &= ~kmask
    members_of_pairs, rows_of_pairs = np.nonzero(own)  # sorted by member, then row
    by_row = np.argsort(rows_of_pairs, kind="stable")  # by row, then member
    rows_of_pairs, members_of_pairs = rows_of_pairs[by_row], members_of_pairs[by_row]
    pair_lo = np.searchsorted(rows_of_pairs, gstart).tolist()
    pair_hi = np.searchsorted(rows_of_pairs, gend).tolist()
    pair_rows = rows_of_pairs.tolist()
    pair_members = members_of_pairs.tolist()
    kcount = np.add.reduceat(kmask.astype(np.int64), gstart).tolist() if n else []
    # member -> row -> its one-event step (code, 1, the event's value per statistics column)
    single: list[dict[int, tuple]] = [{} for _ in members]
    for j, m in enumerate(members):
        rows_j = np.flatnonzero(own[j]).tolist()
        stat_values = [[0 if x is None else (contribution(x) if kind == "S" else x)
                        for x in (col_lists[m.layout.attrs[a]][r] for r in rows_j)]
                       for kind, a in m.layout.stat_cols]
        code_j = code_lists[j]
        single[j] = {r: (code_j[r], 1, *vals) for r, *vals in zip(rows_j, *stat_values, strict=True)}

    gstart_l, gend_l = gstart.tolist(), gend.tolist()
    ng = len(gstart_l)
    # a run of time stamps holding only events of K (no member event), in one pane of one
    # partition, is one shared update (its coefficients composed in closed form)
    k_only = [kcount[g] == gend_l[g] - gstart_l[g] and pair_lo[g] == pair_hi[g] for g in range(ng)] if uniform else []
    gpane = panes(ts_arr[gstart], within, slide).tolist() if n > 1 else [0] * ng
    # the values as terms of the exact H: ints as they are, floats as exact FSum values
    scaled_lists = {a: (float_terms(cols[a]) if scale[a] != 1 else col_lists[a]) for a in int_attrs}
    g = 0
    while g < ng:
        lo, hi = gstart_l[g], gend_l[g]
        g_last = g
        if uniform and k_only[g]:
            while (g_last + 1 < ng and k_only[g_last + 1] and kid_l[gstart_l[g_last + 1]] == kid_l[lo]
                   and gpane[g_last + 1] == gpane[g]):
                g_last += 1
        t = ts_l[lo]
        p_id = kid_l[lo]
        if p_id != part:
            for k in list(windows):
                close(k)
            part = p_id
            in_graphlet = False
        live = window_range(t, within, slide)
        while windows:
            k = next(iter(windows))  # windows open in increasing order
            if k >= live.start:
                break
            close(k)
        for k in live:
            if k not in windows:
                window(k)
        # this time stamp's own events per member: one step each, or rank-ordered steps
        touched: dict[int, list[int]] = {}
        for x in range(pair_lo[g], pair_hi[g]):
            touched.setdefault(pair_members[x], []).append(pair_rows[x])
        after = []
        for j, mine in touched.items():  # successors of K: they see K before this time stamp
            if len(mine) == 1:
                step = single[j][mine[0]]
                if members[j].before[step[0]]:
                    apply_steps(j, [step], live)
                else:
                    after.append((j, [step]))
                continue
            steps = member_steps(j, mine, True)
            if steps:
                apply_steps(j, steps, live)
            steps = member_steps(j, mine, False)
            if steps:
                after.append((j, steps))
        kk = kcount[g]
        stamps = 1
        if g_last > g:  # a run of K-only time stamps: all its rows are events of K
            hi = gend_l[g_last]
            kk = hi - lo
            stamps = g_last - g + 1
            if not in_graphlet:
                stats.graphlets += 1
            sums = {a: exact_sum(col_lists[a][lo:hi]) for a in k_attrs}
            mins = {a: min(col_lists[a][lo:hi]) for a in k_attrs}
            maxs = {a: max(col_lists[a][lo:hi]) for a in k_attrs}
            if kk == stamps:  # one event per time stamp: F = 2**n, G = n 2**(n-1), H = 2**(n-1) S
                f_run = 1 << kk
                g_run = kk << (kk - 1)
                h_run = {a: sums[a] * (1 << (kk - 1)) for a in k_attrs}
                h_scaled = {a: sum(scaled_lists[a][lo:hi]) * (1 << (kk - 1)) for a in int_attrs}
            else:
                f_run, g_run = 1, 0
                h_run = {a: 0 for a in k_attrs}
                h_scaled = {a: 0 for a in int_attrs}
                for x in range(g, g_last + 1):
                    a_lo, a_hi = gstart_l[x], gend_l[x]
                    kx = a_hi - a_lo
                    fx = 1 + kx
                    g_run = g_run * fx + kx * f_run
                    for a in k_attrs:
                        h_run[a] = h_run[a] * fx + exact_sum(col_lists[a][a_lo:a_hi]) * f_run
                    for a in int_attrs:
                        h_scaled[a] = h_scaled[a] * fx + sum(scaled_lists[a][a_lo:a_hi]) * f_run
                    f_run *= fx
            shared_update(live, f_run, g_run, h_scaled, (f_run, kk, sums, mins, maxs, h_run), stamps)
        elif kk:
            if not in_graphlet:
                stats.graphlets += 1
            krows = [r for r in range(lo, hi) if kmask_l[r]]
            if not uniform:
                krows = k_classes(krows, live)
                kk = len(krows)
            if kk:
                # a member reading an attribute of K requires it: a class holding events
                # without it has no member that reads it (those values are skipped)
                present = {a: [v for v in (col_lists[a][r] for r in krows) if v is not None] or [0] for a in k_attrs}
                sums = {a: exact_sum(vs) for a, vs in present.items()}
                h_scaled = {a: sum(scaled_lists[a][r] for r in krows) for a in int_attrs}
                mins = {a: min(vs) for a, vs in present.items()}
                maxs = {a: max(vs) for a, vs in present.items()}
                shared_update(live, 1 + kk, kk, h_scaled, (1 + kk, kk, sums, mins, maxs, sums), 1)
        for k in kept_out:  # members kept out of this time stamp's shared update
            win = windows[k]
            for j in kept_out[k]:
                _snapshot(win, win.entries[j])
        kept_out.clear()
        if kk:
            for k in live:
                win = windows[k]
                if win.F.bit_length() > REBASE_BITS:
                    _rebase(win, bring_up_to_date)
                    stats.rebases += 1
        for j, steps in own_k:  # members applying their events of K on their own
            apply_steps(j, steps, live)
        own_k.clear()
        for j, steps in after:  # predecessors of K (and the rest): after K's update
            apply_steps(j, steps, live)
        in_graphlet = bool(kk) and not touched
        g = g_last + 1
    for k in list(windows):
        close(k)
    return out


def _snapshot(win: _Window, e: _Entry) -> None:
    e.epoch = len(win.steps)
    e.F = win.F
    e.G = win.G
    e.H = dict(win.H)


def _rebase(win: _Window, bring_up_to_date: Any) -> None:
    """Bring every query up to date and restart the shared coefficients at the identity."""
    for j, e in win.entries.items():
        bring_up_to_date(win, j, e)
    win.F, win.G = 1, 0
    win.H = {a: 0 for a in win.H}
    win.steps = []
    for e in win.entries.values():
        _snapshot(win, e)


def _h_rel(win: _Window, e: _Entry, a: str, f_rel: int, exact: bool) -> Any:
    """``H_a`` of the graphlet time stamps since the snapshot ``e``."""
    if exact:
        return (win.H[a] - e.H[a] * f_rel) // e.F
    h: Any = 0
    big = 1
    for step in win.steps[e.epoch:]:
        f = step[0]
        h = h * f + step[5][a] * big  # the entry's own H (its sum for one time stamp)
        big *= f
    return h


def _nonzero(x: Any) -> bool:
    """Whether a step's sum is not zero (an FSum of 0.0 values is zero)."""
    return not x.is_zero() if x.__class__ is FSum else bool(x)


def _scale(col: Any, kmask: np.ndarray) -> int | None:
    """How the shared coefficients H of a column are kept exact: 1 for an int column (the
    values as they are), 2 for a float column (its values as exact ``FSum`` terms), None
    for anything else (H composed per step from the steps' exact sums, ``_h_rel``)."""
    if isinstance(col, np.ndarray) and col.dtype.kind in "iu":
        return 1
    if isinstance(col, np.ndarray) and col.dtype.kind == "f":
        return 2
    return None
