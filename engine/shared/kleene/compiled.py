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
from trendlake.engine.layout import Layout
from trendlake.engine.numbers import decode_counts
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult

try:  # optional: built where a C compiler is at hand (setup.py)
    from trendlake.engine.shared.kleene import _typed
except ImportError:  # pragma: no cover - an install without the extension
    _typed = None

__all__ = ["COMPILED", "MaskClasses", "available", "chains", "run"]

COMPILED = True  # False: every type-grained group runs on the Python executor
MAX_CHAIN_TRIES = 16  # chains a class is tried against before it starts a chain of its own


def available() -> bool:
    """Whether the compiled pass is built and switched on."""
    return _typed is not None and COMPILED


def chains(masks: Sequence[np.ndarray], packed: Sequence[np.ndarray] | None = None) -> list[list[int]]:
    """The classes (distinct masks over the same rows) in chains of nested sets, each chain
    from its smallest class to its largest: a class joins the first chain (of the last
    ``MAX_CHAIN_TRIES``) whose largest class it contains, else starts a chain. With
    thresholds (``K.x < c``) every class is in one chain. ``packed``: the masks as
    ``np.packbits`` gives them (the tests for nesting then read an eighth of the bytes)."""
    order = sorted(range(len(masks)), key=lambda c: int(np.count_nonzero(masks[c])))
    bits = list(masks) if packed is None else list(packed)
    out: list[list[int]] = []
    for c in order:
        for chain in out[-MAX_CHAIN_TRIES:]:
            if not np.any(bits[chain[-1]] & ~bits[c]):
                chain.append(c)
                break
        else:
            out.append([c])
    return out


class MaskClasses:
    """Distinct masks, numbered in the order first seen: the same mask object, or an equal
    mask, gets the number it got first. The masks seen are kept, so that no other array
    takes the identity of one of them."""

    def __init__(self) -> None:
        self.masks: list[np.ndarray] = []
        self.packed: list[np.ndarray] = []  # each mask as np.packbits gives it
        self._found: dict[Any, int] = {}
        self._seen: list[np.ndarray] = []

    def index(self, mask: np.ndarray) -> int:
        d = self._found.get(id(mask))
        if d is None:
            packed = np.packbits(mask)
            key = packed.tobytes()
            d = self._found.get(key)
            if d is None:
                d = self._found[key] = len(self.masks)
                self.masks.append(np.ascontiguousarray(mask, dtype=bool))
                self.packed.append(packed)
            self._found[id(mask)] = d
            self._seen.append(mask)
        return d


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
    if not all(lay.ok and lay.counts_only and lay.rank is not None for lay in layouts):
        return None
    n = len(idx)
    out: dict[str, dict[tuple[int, int], WindowResult]] = {q.name: {} for q in queries}
    if n == 0:
        return out
    kid = np.asarray(kid)
    newp = np.ones(n, dtype=bool)
    newp[1:] = kid[1:] != kid[:-1]
    pstarts = np.flatnonzero(newp).astype(np.int64)
    ts = np.ascontiguousarray(ts, dtype=np.int64)
    # every row visited (the usual case: the group's queries cover the stream): no index
    visit = None if n == len(ts) else np.ascontiguousarray(idx, dtype=np.int64)
    # classes: the members matching the same events of K; then chains of nested classes
    # (nested over every row of the key set, then also over the visited ones)
    kclasses = MaskClasses()
    member_class = [kclasses.index(np.asarray(masks[q.name][shared[q.name]])) for q in queries]
    chain_list = chains(kclasses.masks, kclasses.packed)
    own = _own_events(queries, layouts, shared, masks, member_class)
    if own is None:
        return None  # a row matching two variables of one query: the Python executor
    omasks, subs, members = own
    per_window = stats is not None and stats.per_window is not None
    first = queries[0]
    got = _typed.run(
        ts, visit, pstarts, tuple(kclasses.masks), tuple(tuple(c) for c in chain_list), tuple(omasks),
        tuple(tuple(x) for x in subs), tuple(members), int(first.within), int(first.slide), per_window,
    )
    if got is None:
        return None
    mem_b, part_b, k_b, val_b, counters, pw_b = got
    part_ids = kid[pstarts].tolist()
    if stats is not None:
        _add_counters(stats, counters, pw_b, part_ids)
    if mem_b:  # else no window with a trend (an empty buffer comes back as None)
        mem = np.frombuffer(mem_b, dtype=np.int64)
        values = decode_counts(val_b, len(mem), 1 + max(len(lay.cvars) for lay in layouts))
        parts = np.asarray(part_ids, dtype=object)[np.frombuffer(part_b, dtype=np.int64)]
        _results_by_member(out, queries, layouts, mem, parts, np.frombuffer(k_b, dtype=np.int64), values)
    return out


def _own_events(
    queries: Sequence[CompiledQuery], layouts: list[Layout], shared: Mapping[str, str],
    masks: Mapping[str, Mapping[str, np.ndarray]], member_class: list[int],
) -> tuple[list[np.ndarray], list[list[int]], list[tuple]] | None:
    """The members' own events: the distinct masks of their other variables, each with the
    (member, variable) pairs it feeds, and per member the tuple the pass reads its template
    from; None when a row matches two variables of one query."""
    oclasses = MaskClasses()
    subs: list[list[int]] = []
    members = []
    for j, (q, lay) in enumerate(zip(queries, layouts, strict=True)):
        kv = lay.index[shared[q.name]]
        types = [q.variables[v].type for v in lay.vars]
        if len(set(types)) < len(types) and _overlap(q, lay, masks[q.name]):
            return None
        for v, name in enumerate(lay.vars):
            if v == kv:
                continue
            d = oclasses.index(np.asarray(masks[q.name][name]))
            if d == len(subs):
                subs.append([])
            subs[d] += [j, v]
        assert lay.rank is not None
        rank = lay.rank
        members.append((
            len(lay.vars), kv, member_class[j], tuple(sorted(range(len(lay.vars)), key=lambda v: rank[v])),
            tuple(int(x) for x in lay.selfloop), tuple(int(x) for x in lay.start),
            tuple(int(rank[v] < rank[kv]) for v in range(len(lay.vars))),
            tuple(tuple(p) for p in lay.preds), tuple(lay.index.get(e, -1) for e in lay.cvars), tuple(lay.end),
        ))
    return oclasses.masks, subs, members


def _add_counters(stats: Any, counters: tuple, pw_b: Any, part_ids: list[Any]) -> None:
    """The pass's counters into ``stats`` (a ``SharedStats``), per window where it asks."""
    windows, graphlets, bursts, events, snapshots, rebases, _updates, _steps = counters
    stats.windows += windows
    stats.graphlets += graphlets
    stats.bursts += bursts
    stats.shared_bursts += bursts
    stats.shared_events += events
    stats.snapshots += snapshots
    stats.rebases += rebases
    if stats.per_window is not None and pw_b:
        for p, k, b, s in np.frombuffer(pw_b, dtype=np.int64).reshape(-1, 4).tolist():
            counts = stats.per_window.setdefault((part_ids[p], k), [0, 0, 0, 0, 0])
            counts[0] += b
            counts[1] += b
            counts[4] += s


def _results_by_member(
    out: dict[str, dict[tuple[int, int], WindowResult]], queries: Sequence[CompiledQuery], layouts: list[Layout],
    mem: np.ndarray, parts: np.ndarray, ks: np.ndarray, values: np.ndarray,
) -> None:
    """The results, which come per window with every member's in turn, by member."""
    order = np.argsort(mem, kind="stable")
    mem, parts, ks, values = mem[order], parts[order], ks[order], values[order]
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


def _overlap(query: CompiledQuery, layout: Layout, masks: Mapping[str, np.ndarray]) -> bool:
    """Whether a row matches two variables of one type of ``query``."""
    by_type: dict[str, list[np.ndarray]] = {}
    for v in layout.vars:
        by_type.setdefault(query.variables[v].type, []).append(np.asarray(masks[v]))
    for ms in by_type.values():
        if len(ms) > 1 and np.any(np.sum(ms, axis=0) > 1):
            return True
    return False
