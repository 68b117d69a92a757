"""The type-grained shared Kleene executor on count states, compiled (``_typed.c``).

One pass over a group's visited rows in C: the shared coefficients of the
Kleene type ``K`` once per time stamp and class of queries matching the same
events of ``K`` (classes nested by their predicates share a prefix structure),
each query brought up to date only at its own events and when its window
closes. docs/engine.md, "Shared Kleene execution", "The compiled shared pass".

``run`` returns None where the group is not for it (a state with sums,
minima, maxima or exact mode; a visited row matching two variables of one
query; the extension not built; ``COMPILED`` off; per-snapshot tracing asked
for): the Python executor (``typed.run_group``) runs it then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from trendlake.engine.aggregates import NAN
from trendlake.engine.layout import Layout
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult

try:  # optional: built where a C compiler is at hand (setup.py)
    from trendlake.engine.shared.kleene import _typed
except ImportError:  # pragma: no cover - an install without the extension
    _typed = None

__all__ = ["COMPILED", "available", "chains", "run"]

COMPILED = True  # False: every type-grained group runs on the Python executor
MAX_CHAIN_TRIES = 16  # chains a class is tried against before it starts a chain of its own
_ALL_ONES = (1 << 64) - 1


def available() -> bool:
    """Whether the compiled pass is built and switched on."""
    return _typed is not None and COMPILED


def chains(masks: Sequence[np.ndarray]) -> list[list[int]]:
    """The classes (distinct masks over the same rows) in chains of nested sets, each chain
    from its smallest class to its largest: a class joins the first chain (of the last
    ``MAX_CHAIN_TRIES``) whose largest class it contains, else starts a chain. With
    thresholds (``K.x < c``) every class is in one chain."""
    order = sorted(range(len(masks)), key=lambda c: int(np.count_nonzero(masks[c])))
    out: list[list[int]] = []
    for c in order:
        for chain in out[-MAX_CHAIN_TRIES:]:
            if not np.any(masks[chain[-1]] & ~masks[c]):
                chain.append(c)
                break
        else:
            out.append([c])
    return out


def run(
    queries: Sequence[CompiledQuery],
    shared: Mapping[str, str],
    masks: Mapping[str, Mapping[str, np.ndarray]],
    idx: np.ndarray,
    ts: np.ndarray,
    kid: np.ndarray,
    stats: Any,
) -> dict[str, dict[tuple[int, int], WindowResult]] | None:
    """Results per query and (partition id, window index) of a type-grained group whose
    states hold counts only, or None where the Python executor must run it (see the module
    docstring). Arguments as ``typed.run_group``'s; ``stats`` a ``SharedStats``."""
    if not available() or (stats is not None and stats.trace is not None):
        return None
    layouts = [Layout.of(q) for q in queries]
    if not all(lay.counts_only and lay.rank is not None for lay in layouts):
        return None
    n = len(idx)
    out: dict[str, dict[tuple[int, int], WindowResult]] = {q.name: {} for q in queries}
    if n == 0:
        return out
    t = np.ascontiguousarray(ts[idx], dtype=np.int64)
    kid = np.asarray(kid)
    newp = np.ones(n, dtype=bool)
    newp[1:] = kid[1:] != kid[:-1]
    pstarts = np.flatnonzero(newp).astype(np.int64)
    newg = newp.copy()
    newg[1:] |= t[1:] != t[:-1]
    gfirst = np.flatnonzero(newg)
    group_start = gfirst[np.cumsum(newg) - 1]  # per visited position: its time stamp's first

    # classes: the members matching the same events of K; then chains of nested classes
    class_of: dict[bytes, int] = {}
    cmasks: list[np.ndarray] = []
    member_class = []
    for q in queries:
        km = np.asarray(masks[q.name][shared[q.name]])[idx]
        key = np.packbits(km).tobytes()
        c = class_of.get(key)
        if c is None:
            c = class_of[key] = len(cmasks)
            cmasks.append(km)
        member_class.append(c)
    chain_list = chains(cmasks)
    klev = np.empty((n, len(chain_list)), dtype=np.int32)
    chain_of = [0] * len(cmasks)
    level_of = [0] * len(cmasks)
    for h, chain in enumerate(chain_list):
        col = np.full(n, len(chain), dtype=np.int32)
        for level in range(len(chain) - 1, -1, -1):
            c = chain[level]
            col[cmasks[c]] = level
            chain_of[c], level_of[c] = h, level
        klev[:, h] = col

    # the members' own events (their variables other than K), by time stamp, member, rank
    pos_parts, mem_parts, var_parts, rank_parts = [], [], [], []
    members = []
    for j, (q, lay) in enumerate(zip(queries, layouts, strict=True)):
        kv = lay.index[shared[q.name]]
        seen = np.asarray(masks[q.name][shared[q.name]])[idx].copy()
        assert lay.rank is not None
        for v, name in enumerate(lay.vars):
            if v == kv:
                continue
            m = np.asarray(masks[q.name][name])[idx]
            if np.any(m & seen):  # a row matching two variables of one query
                return None
            seen |= m
            rows = np.flatnonzero(m)
            pos_parts.append(group_start[rows])
            mem_parts.append(np.full(len(rows), j, dtype=np.int32))
            var_parts.append(np.full(len(rows), v, dtype=np.int32))
            rank_parts.append(np.full(len(rows), lay.rank[v], dtype=np.int32))
        owners = tuple(lay.index.get(e, -1) for e in lay.cvars)
        members.append((
            len(lay.vars), kv, member_class[j],
            tuple(int(x) for x in lay.selfloop), tuple(int(x) for x in lay.start),
            tuple(int(lay.rank[v] < lay.rank[kv]) for v in range(len(lay.vars))),
            tuple(tuple(p) for p in lay.preds), owners, tuple(lay.end),
        ))
    if pos_parts:
        opos = np.concatenate(pos_parts).astype(np.int64)
        omem = np.concatenate(mem_parts)
        ovar = np.concatenate(var_parts)
        order = np.lexsort((np.concatenate(rank_parts), omem, opos))
        opos, omem, ovar = opos[order], omem[order], ovar[order]
    else:
        opos = np.zeros(0, dtype=np.int64)
        omem = ovar = np.zeros(0, dtype=np.int32)
    per_window = stats is not None and stats.per_window is not None
    first = queries[0]
    got = _typed.run(
        t, pstarts, np.ascontiguousarray(klev), tuple(chain_of), tuple(level_of), len(chain_list),
        np.ascontiguousarray(opos), np.ascontiguousarray(omem, dtype=np.int32),
        np.ascontiguousarray(ovar, dtype=np.int32), tuple(members), len(cmasks),
        int(first.within), int(first.slide), per_window,
    )
    if got is None:
        return None
    mem_b, part_b, k_b, val_b, counters, pw_b = got
    part_ids = kid[pstarts].tolist()
    if stats is not None:
        windows, graphlets, bursts, events, snapshots, rebases, _updates = counters
        stats.windows += windows
        stats.graphlets += graphlets
        stats.bursts += bursts
        stats.shared_bursts += bursts
        stats.shared_events += events
        stats.snapshots += snapshots
        stats.rebases += rebases
        if per_window and pw_b:
            for p, k, b, s in np.frombuffer(pw_b, dtype=np.int64).reshape(-1, 4).tolist():
                counts = stats.per_window.setdefault((part_ids[p], k), [0, 0, 0, 0, 0])
                counts[0] += b
                counts[1] += b
                counts[4] += s
    if not mem_b:  # no window with a trend (an empty buffer comes back as None)
        return out
    mem = np.frombuffer(mem_b, dtype=np.int64)
    width = 1 + max(len(lay.cvars) for lay in layouts)
    pairs = np.frombuffer(val_b, dtype=np.uint64).reshape(len(mem) * width, 2)
    low, high = pairs[:, 0], pairs[:, 1]
    if high.any():
        saturated = (low == _ALL_ONES) & (high == _ALL_ONES)
        big = low.astype(object) + (high.astype(object) << 64)
        big[saturated] = NAN
        values = big.reshape(len(mem), width)
    else:
        values = low.reshape(len(mem), width)
    # the results come per window, every member's in turn: by member
    order = np.argsort(mem, kind="stable")
    mem = mem[order]
    values = values[order]
    parts = np.asarray(part_ids, dtype=object)[np.frombuffer(part_b, dtype=np.int64)[order]]
    ks = np.frombuffer(k_b, dtype=np.int64)[order]
    mem_l = mem.tolist()
    bounds = np.flatnonzero(np.diff(mem)) + 1
    for lo, hi in zip([0, *bounds.tolist()], [*bounds.tolist(), len(mem_l)], strict=True):
        j = mem_l[lo]
        lay = layouts[j]
        target = out[queries[j].name]
        keys = zip(parts[lo:hi].tolist(), ks[lo:hi].tolist(), strict=True)
        if lay.cvars:
            names = lay.cvars
            for key, row in zip(keys, values[lo:hi, : 1 + len(names)].tolist(), strict=True):
                target[key] = WindowResult(row[0], dict(zip(names, row[1:], strict=True)))
        else:
            for key, trends in zip(keys, values[lo:hi, 0].tolist(), strict=True):
                target[key] = WindowResult(trends)
    return out
