"""The ``sequence`` group executor on count states, compiled (``_counts.c``).

The same pass as ``run._Run`` (the same spaces, expressions, snapshots,
rebases and counters), in C over 128-bit counts, for groups whose queries'
states hold counts only (COUNT(*), COUNT(E)). docs/engine.md, "Shared
sequence execution", "The compiled pass".

``run`` returns None where the group is not for it (a state with sums,
minima, maxima or exact mode; more than 63 queries or 64 event types; more
than 64 COUNT(E) types; the extension not built; ``COMPILED`` off): the
Python executor runs it then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from trendlake.engine.aggregates import NAN
from trendlake.engine.layout import Layout
from trendlake.engine.results import WindowResult
from trendlake.engine.shared.base import GroupInput
from trendlake.engine.shared.sequence import run as run_module
from trendlake.engine.shared.sequence.body import Space

try:  # optional: built where a C compiler is at hand (setup.py)
    from trendlake.engine.shared.sequence import _counts
except ImportError:  # pragma: no cover - an install without the extension
    _counts = None

__all__ = ["COMPILED", "available", "run"]

COMPILED = True  # False: every sequence group runs on the Python executor
_ALL_ONES = (1 << 64) - 1


def available() -> bool:
    """Whether the compiled pass is built and switched on."""
    return _counts is not None and COMPILED


def run(spaces: Sequence[Space], data: GroupInput, stats: Any) -> dict[str, dict[tuple[int, int], WindowResult]] | None:
    """Results per query and (partition id, window index) of a ``sequence`` group whose
    queries' states hold counts only, or None where the Python executor must run it (see
    the module docstring); ``stats`` a ``run.SequenceStats``, added to."""
    if not available():
        return None
    queries = list(data.queries)
    layouts = [Layout.of(q) for q in queries]
    if len(queries) > 63 or not all(lay.ok and lay.counts_only for lay in layouts):
        return None
    names = [q.name for q in queries]
    member = {name: j for j, name in enumerate(names)}
    type_of = [{v: q.variables[v].type for v in q.positive} for q in queries]
    types = sorted({t for tt in type_of for t in tt.values()})
    counted = sorted({type_of[j][v] for j, lay in enumerate(layouts) for v in lay.cvars})
    if len(types) > 64 or len(counted) > 64:
        return None
    tix = {t: i for i, t in enumerate(types)}
    cix = {t: i for i, t in enumerate(counted)}
    idx = data.idx
    n = len(idx)
    out: dict[str, dict[tuple[int, int], WindowResult]] = {name: {} for name in names}
    # the distinct masks (by identity: queries without predicates on a type share one), each
    # with the (member, type) pairs it is the mask of
    masks: list[np.ndarray] = []
    pairs: list[list[int]] = []
    found: dict[int, int] = {}
    for j, q in enumerate(queries):
        for v, t in type_of[j].items():
            mask = data.masks[q.name][v]
            d = found.get(id(mask))
            if d is None:
                d = found[id(mask)] = len(masks)
                masks.append(np.ascontiguousarray(mask, dtype=bool))
                pairs.append([])
            pairs[d] += [j, tix[t]]

    def qmask(qset: frozenset[str]) -> int:
        return sum(1 << member[q] for q in qset if q in member)

    prog: list[int] = [len(queries), len(types), len(counted), len(spaces)]
    xid: dict[tuple[int, tuple[str, frozenset[str]]], int] = {}
    for i, sp in enumerate(spaces):
        for key in sp.sources:
            xid[(i, key)] = len(xid)
    prog += [len(xid), run_module.REBASE_LENGTH]
    prog += [cix.get(t, -1) for t in types]
    for j, lay in enumerate(layouts):
        tt = type_of[j]
        start = [tix[tt[v]] for v in queries[j].start]
        ends = [tix[tt[lay.vars[i]]] for i in lay.end]
        cvs = [cix[tt[v]] for v in lay.cvars]
        prog += [len(start), *start, len(ends), *ends, len(cvs), *cvs]
    for sp in spaces:
        prog += [tix[sp.snapshot], qmask(sp.queries)]
    holders: dict[tuple[int, int], list[int]] = {}
    for (i, key), x in xid.items():
        v, qset = key
        srcs = [-1 if src is None else xid[(i, (p, src))] for p, src in spaces[i].sources[key]]
        prog += [i, tix[v], qmask(qset), len(srcs), *srcs]
        for q in qset:
            if q in member:
                holders.setdefault((member[q], tix[v]), []).append(x)
    for j in range(len(queries)):
        for t in range(len(types)):
            held = holders.get((j, t), [])
            prog += [len(held), *held]
    for pair in pairs:
        prog += [len(pair) // 2, *pair]
    kid = np.asarray(data.kid)
    if n:
        newp = np.ones(n, dtype=bool)
        newp[1:] = kid[1:] != kid[:-1]
        pstarts = np.flatnonzero(newp).astype(np.int64)
    else:
        pstarts = np.zeros(0, dtype=np.int64)
    first = queries[0]
    per_window = stats.per_window is not None
    ts = np.ascontiguousarray(data.ts, dtype=np.int64)
    # every row visited (the group's queries cover the key set): no index
    visit = None if n == len(ts) else np.ascontiguousarray(idx, dtype=np.int64)
    got = _counts.run(
        ts, visit, tuple(masks), pstarts, np.asarray(prog, dtype=np.int64), int(first.within), int(first.slide),
        per_window,
    )
    if got is None:
        return None
    mem_b, part_b, k_b, val_b, counters, by_type_b, pw_b = got
    part_ids = kid[pstarts].tolist()
    windows, shared, alone, own, split, snapshots, evaluations, rebases = counters
    stats.windows += windows
    stats.shared += shared
    stats.alone += alone
    stats.own += own
    stats.split += split
    stats.snapshots += snapshots
    stats.evaluations += evaluations
    stats.rebases += rebases
    for t, row in zip(types, np.frombuffer(by_type_b, dtype=np.int64).reshape(-1, 3).tolist(), strict=True):
        if any(row):
            counts = stats.by_type.setdefault(t, [0, 0, 0])
            for a in range(3):
                counts[a] += row[a]
    if per_window and pw_b:
        for p, k, s, a, o in np.frombuffer(pw_b, dtype=np.int64).reshape(-1, 5).tolist():
            counts = stats.per_window.setdefault((part_ids[p], k), [0, 0, 0])
            counts[0] += s
            counts[1] += a
            counts[2] += o
    if not mem_b:
        return out
    mem = np.frombuffer(mem_b, dtype=np.int64)
    width = len(val_b) // (16 * len(mem))
    pairs = np.frombuffer(val_b, dtype=np.uint64).reshape(len(mem) * width, 2)
    low, high = pairs[:, 0], pairs[:, 1]
    if high.any():
        saturated = (low == _ALL_ONES) & (high == _ALL_ONES)
        big = low.astype(object) + (high.astype(object) << 64)
        big[saturated] = NAN
        values = big.reshape(len(mem), width).tolist()
    else:
        values = low.reshape(len(mem), width).tolist()
    parts = [part_ids[p] for p in np.frombuffer(part_b, dtype=np.int64).tolist()]
    for j, p, k, row in zip(mem.tolist(), parts, np.frombuffer(k_b, dtype=np.int64).tolist(), values, strict=True):
        cvars = layouts[j].cvars
        if cvars:
            out[names[j]][(p, k)] = WindowResult(row[0], dict(zip(cvars, row[1 : 1 + len(cvars)], strict=True)))
        else:
            out[names[j]][(p, k)] = WindowResult(row[0])
    return out
