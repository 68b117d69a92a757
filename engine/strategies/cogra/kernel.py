"""COGRA's kernel driver: bursts collapsed into steps, panes, open windows per pane."""

from __future__ import annotations

from typing import Any

import numpy as np
from trendlake.engine.aggregates import NAN, FSum, exact_sum
from trendlake.engine.layout import LIMIT, Layout, frozen
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.strategies.cogra.prepare import Prepared
from trendlake.engine.timeline import panes, window_range

try:  # the compiled count kernel (setup.py builds it where a C compiler is at hand)
    from trendlake.engine.strategies.cogra import _steps
except ImportError:  # pragma: no cover - exercised by installs without a compiler
    _steps = None

CHUNK = 2048  # steps between checks whether a window's state saturated completely
# skip the rest of a window whose state saturated completely (benchmarks switch it off)
SKIP_SATURATED = True
# run count states on the compiled kernel when it is built (tests and benchmarks switch it off)
COMPILED = True
_ALL_ONES = (1 << 64) - 1


def run_kernel(
    query: CompiledQuery, layout: Layout, prep: Prepared, kid: np.ndarray | None = None
) -> dict[Any, WindowResult]:
    """Results per window index of one partition; with ``kid`` (a non-decreasing
    partition id per event) of many partitions at once, keyed ``(kid, window index)``:
    no time-stamp group, step or pane spans two partitions, and every open window
    closes where the next partition starts."""
    ts, code, cols = prep.ts, prep.code, prep.cols
    n = len(ts)
    if n == 0:
        return {}
    within, slide = query.within, query.slide
    if kid is None and compiled_for(layout) and not prep.multi:
        masks = [code == i for i in range(len(layout.vars))]
        got = run_compiled(query, layout, ts, masks, None, None)
        if got is not None:
            return got
    nv = len(layout.vars)
    # time-stamp groups
    newg = np.ones(n, dtype=bool)
    newg[1:] = ts[1:] != ts[:-1]
    if kid is not None:
        newg[1:] |= kid[1:] != kid[:-1]
    sim = None
    if layout.rank is not None and not prep.multi and int(np.count_nonzero(newg)) < n:
        # Simultaneous events without aliases: within a time stamp, order the events by
        # variable (a variable before its predecessors), so that applying one step per
        # variable, each reading the state its predecessors had before the time stamp, is
        # exactly the time stamp's effect; k events of one Kleene variable become one
        # "simultaneous" step (code nv + i). No event leaves the generated kernel.
        code, cols, newg, sim = _simultaneous_steps(layout, code, cols, newg, nv)
    gstart = np.flatnonzero(newg)
    ng = len(gstart)
    gcode = code[gstart]
    if sim is not None:
        gsize = np.diff(np.append(gstart, n))
        simultaneous = (gsize > 1) & np.asarray(layout.selfloop, dtype=bool)[gcode]
        gcode = np.where(simultaneous, gcode + nv, gcode)
        impure = np.zeros(ng, dtype=bool)
    elif ng < n:
        gid = np.cumsum(newg) - 1
        impure = np.zeros(ng, dtype=bool)
        diff = code != gcode[gid]
        if diff.any():
            impure[gid[diff]] = True
        gsize = np.diff(np.append(gstart, n))
    else:
        impure = np.zeros(ng, dtype=bool)
        gsize = np.ones(ng, dtype=np.int64)
    selfloop = np.asarray(layout.selfloop + [False], dtype=bool)  # index -1 -> False
    if sim is not None:
        special = np.zeros(ng, dtype=bool)
    else:
        special = impure | (gcode < 0) | ((gsize > 1) & selfloop[gcode])
    gseg = panes(ts[gstart], within, slide)
    gkid = kid[gstart] if kid is not None else None
    brk = np.ones(ng, dtype=bool)
    if ng > 1:
        brk[1:] = special[1:] | special[:-1] | (gcode[1:] != gcode[:-1]) | (gseg[1:] != gseg[:-1])
        if sim is not None:  # a simultaneous step never merges with the next time stamp's
            brk[1:] |= gcode[:-1] >= nv
        if gkid is not None:
            brk[1:] |= gkid[1:] != gkid[:-1]
    sstart = np.flatnonzero(brk)
    if len(sstart) < ng:  # cut bursts longer than LIMIT
        sid = np.cumsum(brk) - 1
        pos = np.arange(ng) - sstart[sid]
        brk |= pos % LIMIT == 0
        sstart = np.flatnonzero(brk)
    ev_lo = gstart[sstart]
    ev_hi = np.append(ev_lo[1:], n)
    scode = gcode[sstart].copy()
    sspecial = special[sstart]
    scode[sspecial] = -1
    kk = (ev_hi - ev_lo).astype(np.int64)
    nsteps = len(scode)
    # group steps: (variable, attribute values) per vertex, evaluated from the state before
    groups: list[Any] = []
    if sspecial.any():
        attrs = layout.attrs
        for s in np.flatnonzero(sspecial).tolist():
            infos = []
            for e in range(int(ev_lo[s]), int(ev_hi[s])):
                c = int(code[e])
                vs = prep.multi[e] if c < 0 else [c]
                values = {a: _item(cols[a][e]) for a in attrs}
                infos.extend((v, values) for v in vs)
            kk[s] = len(groups)
            groups.append(infos)
    # per-step attribute statistics of the events (for a variable's own sums / min / max)
    code_list = scode.tolist()
    per_attr = {}
    for a_index, a in enumerate(layout.attrs):
        kinds = {kind for kind, i in layout.stat_cols if i == a_index}
        owners = {i for i in range(nv) if a in layout.own[i]}
        owners |= {nv + i for i in owners}
        per_attr[a_index] = _step_stats(
            cols[a], ev_lo, ev_hi, code_list, owners, kinds, nsteps
        )
    stats = [per_attr[a][kind] for kind, a in layout.stat_cols]
    kk_list = kk.tolist()
    rows, kernel = layout.instantiate(code_list, kk_list, stats, groups)
    # panes: runs of steps in the same segment
    sseg = gseg[sstart]
    newseg = sseg[1:] != sseg[:-1]
    if gkid is not None:
        newseg |= gkid[sstart[1:]] != gkid[sstart[:-1]]
    cut = np.flatnonzero(newseg) + 1
    seg_lo = np.concatenate(([0], cut)).tolist()
    seg_hi = np.concatenate((cut, [nsteps])).tolist()
    seg_ts_arr = ts[ev_lo[seg_lo]]
    seg_kid_arr = gkid[sstart[seg_lo]] if gkid is not None else None
    # a pane with no step of a START variable (group steps may hold one) leaves an all-zero
    # window state all-zero: windows open at the first such pane and zero states are skipped
    # index nv + i (simultaneous step of variable i) -> start of i; -1 (group step) -> True
    starts = np.asarray(layout.start + layout.start + [True], dtype=bool)
    seg_start_arr = np.logical_or.reduceat(starts[scode], seg_lo)
    # panes after every window opened by an earlier START pane (same partition) closed: skipped
    last = np.maximum.accumulate(np.where(seg_start_arr, np.arange(len(seg_lo)), -1))
    since = np.maximum(last, 0)
    alive = (last >= 0) & ((seg_ts_arr[since] // slide) * slide + within > seg_ts_arr)
    if seg_kid_arr is not None:
        alive &= seg_kid_arr[since] == seg_kid_arr
    visit = np.flatnonzero(alive).tolist()
    seg_ts = seg_ts_arr.tolist()
    seg_kid = seg_kid_arr.tolist() if seg_kid_arr is not None else None
    seg_start = seg_start_arr.tolist()
    zero = layout.zero
    frozen_ok = layout.frozen_ok and SKIP_SATURATED
    result = layout.result
    states: dict[int, tuple] = {}  # open windows, in increasing order
    out: dict[Any, WindowResult] = {}
    part: Any = None  # the partition of the open windows (keyed runs)

    def close(k: int) -> None:
        st = states.pop(k)
        if st is zero:
            return
        r = result(st)
        if r is not None:
            out[k if seg_kid is None else (part, k)] = r

    for i in visit:
        lo, hi, t = seg_lo[i], seg_hi[i], seg_ts[i]
        if seg_kid is not None and seg_kid[i] != part:
            for k in list(states):
                close(k)
            part = seg_kid[i]
        windows = window_range(t, within, slide)
        kmin = windows.start
        while states:
            k = next(iter(states))
            if k >= kmin:
                break
            close(k)
        if seg_start[i]:
            for k in windows:
                if k not in states:
                    states[k] = zero
        step = CHUNK if frozen_ok else hi - lo
        for c in range(lo, hi, step):
            live = [
                k
                for k, st in states.items()
                if (st is not zero or seg_start[i]) and not (frozen_ok and frozen(st))
            ]
            if not live:
                break
            block = rows(c, min(hi, c + step))
            if len(live) > 1:
                block = list(block)  # the pane's steps, shared by its open windows
            for k in live:
                states[k] = kernel(states[k], block)
    for k in list(states):
        close(k)
    return out


def compiled_for(layout: Layout) -> bool:
    """Whether the compiled kernel evaluates ``layout``'s queries: states of counts only
    (COUNT(*), COUNT(E); no sums, minima, maxima, not exact mode)."""
    return _steps is not None and COMPILED and layout.counts_only


def run_compiled(
    query: CompiledQuery,
    layout: Layout,
    ts: np.ndarray,
    masks: list[np.ndarray],
    idx: np.ndarray | None,
    starts: np.ndarray | None,
) -> dict[Any, WindowResult] | None:
    """Results of the compiled kernel (``_steps.c``), per window index, or with ``starts``
    per (partition index, window index); None where it leaves the run to the Python
    kernel (a visited row matching several variables, several events at one time stamp of
    a template with no simultaneous order, a window spanning millions of slides).

    ``ts``: time stamps of the rows; ``masks``: per variable of ``layout.vars`` whether a
    row matches it; ``idx``: the increasing rows to visit (None: all); ``starts``: the rows
    where the partitions start (None: one partition), rows in time order within each."""
    index = layout.index
    owners = tuple(index[e] if e in index else -1 for e in layout.cvars)
    got = _steps.run(
        np.ascontiguousarray(ts, dtype=np.int64),
        None if idx is None else np.ascontiguousarray(idx),
        tuple(np.ascontiguousarray(m, dtype=bool) for m in masks),
        None if starts is None else np.ascontiguousarray(starts),
        len(layout.vars),
        None if layout.rank is None else tuple(layout.rank),
        tuple(int(x) for x in layout.selfloop),
        tuple(int(x) for x in layout.start),
        tuple(tuple(p) for p in layout.preds),
        owners,
        tuple(layout.end),
        int(query.within),
        int(query.slide),
    )
    if got is None:
        return None
    kids_b, ks_b, vals_b = got
    ks = np.frombuffer(ks_b, dtype=np.int64).tolist()
    if not ks:
        return {}
    # per window: the trends, then COUNT(E) per key, summed over the END variables
    width = 1 + len(owners)
    pairs = np.frombuffer(vals_b, dtype=np.uint64).reshape(len(ks) * width, 2)
    low, high = pairs[:, 0], pairs[:, 1]
    if high.any():
        saturated = (low == _ALL_ONES) & (high == _ALL_ONES)
        big = low.astype(object) + (high.astype(object) << 64)
        big[saturated] = NAN
        values = big.tolist()
    else:
        values = low.tolist()
    trends = values[::width]
    if width == 1:
        results = [WindowResult(t) for t in trends]
    else:
        names = layout.cvars
        per_key = [values[1 + j :: width] for j in range(len(names))]
        results = [
            WindowResult(t, dict(zip(names, counts, strict=True)))
            for t, *counts in zip(trends, *per_key, strict=True)
        ]
    if starts is None:
        return dict(zip(ks, results, strict=True))
    kids = np.frombuffer(kids_b, dtype=np.int64).tolist()
    return dict(zip(zip(kids, ks, strict=True), results, strict=True))


def _simultaneous_steps(
    layout: Layout, code: np.ndarray, cols: dict[str, Any], newg: np.ndarray, nv: int
) -> tuple[np.ndarray, dict[str, Any], np.ndarray, bool]:
    """Events of each time-stamp group ordered by ``layout.rank`` of their variable, and
    the group starts refined to runs of one variable."""
    key = (np.cumsum(newg) - 1) * nv + np.asarray(layout.rank, dtype=np.int64)[code]
    if not bool(np.all(key[1:] >= key[:-1])):
        order = np.argsort(key, kind="stable")
        code = code[order]
        cols = {
            a: (c[order] if isinstance(c, np.ndarray) else [c[i] for i in order.tolist()])
            for a, c in cols.items()
        }
    runs = newg.copy()
    runs[1:] |= code[1:] != code[:-1]
    return code, cols, runs, True


def _item(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _step_stats(
    col: Any,
    ev_lo: np.ndarray,
    ev_hi: np.ndarray,
    code_list: list[int],
    owners: set[int],
    kinds: set[str],
    nsteps: int,
) -> dict[str, list[Any]]:
    """Per step: sum (S), min (MN) and max (MX) of the attribute over the step's events;
    only meaningful for steps of the variables in ``owners``. Sums are exact: of ints as
    Python ints (numpy's int64 only where a bound in Python ints shows it cannot wrap), of
    floats as exact ``FSum`` values (never numpy's order-dependent float sums)."""
    out: dict[str, list[Any]] = {}
    if isinstance(col, np.ndarray) and nsteps and len(col):
        kind_of = col.dtype.kind
        ufunc = {"S": np.add, "MN": np.minimum, "MX": np.maximum}
        vector = {"MN", "MX"} & kinds if kind_of in "iuf" else set()
        if "S" in kinds and kind_of in "iu":
            # |a sum of a step| <= the longest step times the largest magnitude, both exact
            bound = max(-int(col.min()), int(col.max())) * int((ev_hi - ev_lo).max())
            if col.dtype.kind == "i" and bound < 2**63:
                vector.add("S")
        elif "S" in kinds and kind_of == "f":
            out["S"] = float_step_sums(col, ev_lo)
        with np.errstate(invalid="ignore"):
            for kind in vector:
                out[kind] = ufunc[kind].reduceat(col, ev_lo).tolist()
        if len(out) == len(kinds):
            return out
        col = col.tolist()
    rest = kinds - out.keys()
    for kind in rest:
        out[kind] = [0] * nsteps
    fns = {"S": exact_sum, "MN": min, "MX": max}
    for s, (lo, hi, c) in enumerate(zip(ev_lo.tolist(), ev_hi.tolist(), code_list, strict=True)):
        if c not in owners:
            continue
        values = [_item(x) for x in col[lo:hi]]
        for kind in rest:
            out[kind][s] = fns[kind](values)
    return out


def float_step_sums(col: np.ndarray, ev_lo: np.ndarray) -> list[Any]:
    """The exact sum (an ``FSum``) of a float column over each step ``ev_lo[i]`` up to the
    next step's start; NaN (missing) values count as 0.

    Each finite value is ``m * 2**(e - 53)`` with an integer ``m`` (``np.frexp``). Relative
    to the smallest such exponent ``b`` of the column every value is the integer
    ``m << (e - 53 - b)``; the steps sum those integers (in int64 where a bound shows they
    cannot wrap, else as Python ints), and each step's sum times ``2**b`` is its multiple
    of 2**-1074, exact. Infinities are counted apart."""
    col = np.asarray(col, dtype=np.float64)
    finite = np.isfinite(col)
    vals = np.where(finite, col, 0.0)
    mant, exp = np.frexp(vals)
    m = (mant * 2.0**53).astype(np.int64)
    nonzero = m != 0
    if not nonzero.any():
        sums = [0] * len(ev_lo)
        to_units = 0
    else:
        e = exp.astype(np.int64) - 53
        base = int(e[nonzero].min())
        shift = np.where(nonzero, e - base, 0)
        longest = int(np.diff(np.append(ev_lo, len(col))).max()) if len(ev_lo) else 0
        if int(shift.max()) + 53 + longest.bit_length() < 63:
            sums = np.add.reduceat(m << shift, ev_lo).tolist()
        else:
            scaled = np.empty(len(m), dtype=object)
            scaled[:] = [x << k for x, k in zip(m.tolist(), shift.tolist(), strict=True)]
            sums = np.add.reduceat(scaled, ev_lo).tolist()
        to_units = base + 1074  # the sums times 2**base, in units of 2**-1074
    if to_units >= 0:
        ns = [n << to_units for n in sums]
    else:  # subnormal values: every sum is still a multiple of 2**-1074
        ns = [n >> -to_units for n in sums]
    if finite.all():
        return [FSum(n) for n in ns]
    pinf = np.add.reduceat((col == np.inf).astype(np.int64), ev_lo).tolist()
    ninf = np.add.reduceat((col == -np.inf).astype(np.int64), ev_lo).tolist()
    return [FSum(n, p, q) for n, p, q in zip(ns, pinf, ninf, strict=True)]
