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
from dataclasses import dataclass
from typing import Any

import numpy as np
from trendlake.engine.layout import Layout
from trendlake.engine.numbers import decode_counts
from trendlake.engine.results import WindowResult
from trendlake.engine.shared.base import GroupInput
from trendlake.engine.shared.sequence import run as run_module
from trendlake.engine.shared.sequence.body import Space

try:  # optional: built where a C compiler is at hand (setup.py)
    from trendlake.engine.shared.sequence import _counts
except ImportError:  # pragma: no cover - an install without the extension
    _counts = None

__all__ = ["COMPILED", "MAX_QUERIES", "available", "run"]

COMPILED = True  # False: every sequence group runs on the Python executor
MAX_QUERIES = 63  # queries of one group the C pass takes (a 64-bit query mask)


def available() -> bool:
    """Whether the compiled pass is built and switched on."""
    return _counts is not None and COMPILED


@dataclass
class _Group:
    """What the C pass is told about a group: its members, their types, and the counted types."""

    queries: list[Any]
    layouts: list[Layout]
    names: list[str]
    member: dict[str, int]
    type_of: list[dict[str, str]]
    types: list[str]
    counted: list[str]

    @property
    def tix(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.types)}

    def qmask(self, qset: frozenset[str]) -> int:
        return sum(1 << self.member[q] for q in qset if q in self.member)


def _group(data: GroupInput) -> _Group | None:
    """The group as the C pass takes it, or None where it cannot (see the module docstring)."""
    queries = list(data.queries)
    layouts = [Layout.of(q) for q in queries]
    if len(queries) > MAX_QUERIES or not all(lay.ok and lay.counts_only for lay in layouts):
        return None
    type_of = [{v: q.variables[v].type for v in q.positive} for q in queries]
    types = sorted({t for tt in type_of for t in tt.values()})
    counted = sorted({type_of[j][v] for j, lay in enumerate(layouts) for v in lay.cvars})
    if len(types) > 64 or len(counted) > 64:
        return None
    names = [q.name for q in queries]
    return _Group(queries, layouts, names, {name: j for j, name in enumerate(names)}, type_of, types, counted)


def _masks(g: _Group, data: GroupInput) -> tuple[list[np.ndarray], list[list[int]]]:
    """The distinct masks (by identity: queries without predicates on a type share one; the
    caller's ``data.masks`` keeps them alive), each with the (member, type) pairs it is the
    mask of, flattened."""
    tix = g.tix
    masks: list[np.ndarray] = []
    pairs: list[list[int]] = []
    found: dict[int, int] = {}
    for j, q in enumerate(g.queries):
        for v, t in g.type_of[j].items():
            mask = data.masks[q.name][v]
            d = found.get(id(mask))
            if d is None:
                d = found[id(mask)] = len(masks)
                masks.append(np.ascontiguousarray(mask, dtype=bool))
                pairs.append([])
            pairs[d] += [j, tix[t]]
    return masks, pairs


def _program(g: _Group, spaces: Sequence[Space], pairs: list[list[int]]) -> np.ndarray:
    """The group as the flat integer program ``_counts.run`` reads (its layout in _counts.c):
    sizes; each type's counted index; per member its start, end and counted types; per space
    its snapshot type and Q-set; per expression its space, type, Q-set and sources; the
    expressions holding each (member, type); the masks' (member, type) pairs."""
    tix = g.tix
    cix = {t: i for i, t in enumerate(g.counted)}
    prog: list[int] = [len(g.queries), len(g.types), len(g.counted), len(spaces)]
    xid: dict[tuple[int, tuple[str, frozenset[str]]], int] = {}
    for i, sp in enumerate(spaces):
        for key in sp.sources:
            xid[(i, key)] = len(xid)
    prog += [len(xid), run_module.REBASE_LENGTH]
    prog += [cix.get(t, -1) for t in g.types]
    for j, lay in enumerate(g.layouts):
        tt = g.type_of[j]
        start = [tix[tt[v]] for v in g.queries[j].start]
        ends = [tix[tt[lay.vars[i]]] for i in lay.end]
        cvs = [cix[tt[v]] for v in lay.cvars]
        prog += [len(start), *start, len(ends), *ends, len(cvs), *cvs]
    for sp in spaces:
        prog += [tix[sp.snapshot], g.qmask(sp.queries)]
    holders: dict[tuple[int, int], list[int]] = {}
    for (i, key), x in xid.items():
        v, qset = key
        srcs = [-1 if src is None else xid[(i, (p, src))] for p, src in spaces[i].sources[key]]
        prog += [i, tix[v], g.qmask(qset), len(srcs), *srcs]
        for q in qset:
            if q in g.member:
                holders.setdefault((g.member[q], tix[v]), []).append(x)
    for j in range(len(g.queries)):
        for t in range(len(g.types)):
            held = holders.get((j, t), [])
            prog += [len(held), *held]
    for pair in pairs:
        prog += [len(pair) // 2, *pair]
    return np.asarray(prog, dtype=np.int64)


def _partition_starts(kid: np.ndarray) -> np.ndarray:
    """The first row of each partition (rows are grouped by partition id ``kid``)."""
    if not len(kid):
        return np.zeros(0, dtype=np.int64)
    newp = np.ones(len(kid), dtype=bool)
    newp[1:] = kid[1:] != kid[:-1]
    return np.flatnonzero(newp).astype(np.int64)


def run(spaces: Sequence[Space], data: GroupInput, stats: Any) -> dict[str, dict[tuple[int, int], WindowResult]] | None:
    """Results per query and (partition id, window index) of a ``sequence`` group whose
    queries' states hold counts only, or None where the Python executor must run it (see
    the module docstring); ``stats`` a ``run.SequenceStats``, added to."""
    if not available():
        return None
    g = _group(data)
    if g is None:
        return None
    masks, pairs = _masks(g, data)
    prog = _program(g, spaces, pairs)
    kid = np.asarray(data.kid)
    pstarts = _partition_starts(kid)
    per_window = stats.per_window is not None
    ts = np.ascontiguousarray(data.ts, dtype=np.int64)
    # every row visited (the group's queries cover the key set): no index
    visit = None if len(data.idx) == len(ts) else np.ascontiguousarray(data.idx, dtype=np.int64)
    first = g.queries[0]
    got = _counts.run(ts, visit, tuple(masks), pstarts, prog, int(first.within), int(first.slide), per_window)
    if got is None:
        return None
    mem_b, part_b, k_b, val_b, counters, by_type_b, pw_b = got
    part_ids = kid[pstarts].tolist()
    _add_counters(stats, g.types, part_ids, counters, by_type_b, pw_b if per_window else None)
    return _results(g, part_ids, mem_b, part_b, k_b, val_b)


def _add_counters(stats: Any, types: list[str], part_ids: list[Any], counters: Sequence[int], by_type_b: bytes,
                  pw_b: bytes | None) -> None:
    """The pass's counters added to ``stats`` (totals, per target type, per window)."""
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
    if pw_b:
        for p, k, s, a, o in np.frombuffer(pw_b, dtype=np.int64).reshape(-1, 5).tolist():
            counts = stats.per_window.setdefault((part_ids[p], k), [0, 0, 0])
            counts[0] += s
            counts[1] += a
            counts[2] += o


def _results(g: _Group, part_ids: list[Any], mem_b: bytes, part_b: bytes, k_b: bytes,
             val_b: bytes) -> dict[str, dict[tuple[int, int], WindowResult]]:
    """Each member's window results from the pass's 128-bit counts (all ones: saturated)."""
    out: dict[str, dict[tuple[int, int], WindowResult]] = {name: {} for name in g.names}
    if not mem_b:
        return out
    mem = np.frombuffer(mem_b, dtype=np.int64)
    width = len(val_b) // (16 * len(mem))
    values = decode_counts(val_b, len(mem), width).tolist()
    parts = [part_ids[p] for p in np.frombuffer(part_b, dtype=np.int64).tolist()]
    for j, p, k, row in zip(mem.tolist(), parts, np.frombuffer(k_b, dtype=np.int64).tolist(), values, strict=True):
        cvars = g.layouts[j].cvars
        if cvars:
            out[g.names[j]][(p, k)] = WindowResult(row[0], dict(zip(cvars, row[1 : 1 + len(cvars)], strict=True)))
        else:
            out[g.names[j]][(p, k)] = WindowResult(row[0])
    return out
