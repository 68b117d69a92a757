"""The subsequence kind's prefix pass: a group's fixed-length sequence queries as one trie.

Queries that begin alike share the counts of their common prefix: a variable of the trie
stands for the same event type under the same local predicates (the same mask over the
rows) after the same prefix, so ``SEQ(Request, Accept, Pickup)`` and
``SEQ(Request, Accept, Cancel)`` count ``Request`` and ``Request, Accept`` once and branch
at their last variable. The trie is one template of COGRA's type-grained count pass
(engine/count_pass.h, in ``_prefix``): per window, the count of each variable is the number
of partial trends ending there, each step applied once for every query it serves; a
query's COUNT(*) is its last variable's count (``per_end``). A row of a type that several
branches take matches a variable of each (``multi``); no two of them lie on one query's
path, because a query here repeats no type, so each reads the state before the row.

This is Sharon's shared method (§III-C) for shared prefixes, on the engine's columnar
path: the prefix's counts once per window, each query's own suffix after it. Groups this
pass does not take (a query with a Kleene variable, negation, a predicate between events,
a repeated type, an aggregate other than COUNT(*), a window over too many slides) run on
the sequence kind's executor (snapshots of the pattern's first type), which shares the
chosen sub-sequences wherever they start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from trendlake.engine.layout import Layout
from trendlake.engine.numbers import decode_counts
from trendlake.engine.query import CompiledQuery, canonical_predicates
from trendlake.engine.results import WindowResult
from trendlake.engine.shared.base import GroupInput, GroupResults

try:  # optional: built where a C compiler is at hand (setup.py)
    from trendlake.engine.shared.subsequence import _prefix
except ImportError:  # pragma: no cover - an install without the extension
    _prefix = None

__all__ = ["COMPILED", "MAX_VARIABLES", "Trie", "chain", "run", "trie_share", "tries"]

COMPILED = True  # False: every subsequence group runs on the sequence executor
MAX_VARIABLES = 64  # variables of one template the count pass takes


def chain(query: CompiledQuery) -> list[str] | None:
    """The variables of ``query`` in pattern order when the pass takes it: a type-grained
    fixed-length sequence of distinct types, without negation, counting its trends only."""
    lay = Layout.of(query)
    n = len(lay.vars)
    if not (lay.ok and lay.counts_only) or query.granularity != "type" or lay.cvars:
        return None
    if query.negations or query.start_negations or query.end_negations:
        return None
    if any(a.fn != "count_star" for a in query.aggregates):
        return None
    if lay.start != [i == 0 for i in range(n)] or lay.end != [n - 1]:
        return None
    if any(lay.preds[i] != ([i - 1] if i else []) for i in range(n)):
        return None
    if len({query.variables[v].type for v in lay.vars}) != n:
        return None
    return list(lay.vars)


def trie_share(members: Sequence[Mapping[str, Any]]) -> float | None:
    """From the plan's query entries (the planner's side of ``chain``): the variables of the
    pass's trie over the queries' variables (a common prefix, the same types under the same
    local predicates, counted once), or None where the pass does not take the queries: each a
    type-grained fixed-length sequence of distinct types, without negation, counting its trends
    only. The pass shares by the rows matched, so it may build fewer variables."""
    nodes: set[tuple[Any, ...]] = set()
    total = 0
    for e in members:
        variables = [v for v in e["variables"] if not v["negated"]]
        template = e["template"]
        chain = [(t["from"], t["to"]) for t in template["transitions"]]
        names = [v["name"] for v in variables]
        if (e["granularity"] != "type" or len(variables) != len(e["variables"])
                or any(a["fn"] != "count_star" for a in e["aggregates"])
                or template.get("start_negations") or template.get("end_negations")
                or any(t["negations"] for t in template["transitions"])
                or list(template["start"]) != names[:1] or list(template["end"]) != names[-1:]
                or chain != list(zip(names, names[1:], strict=False))
                or len({v["type"] for v in variables}) != len(variables)):
            return None
        path: tuple[Any, ...] = ()
        for v in variables:
            preds = canonical_predicates(e["local_predicates"].get(v["name"], []), {v["name"]: "_"})
            path += ((v["type"], preds),)
            nodes.add(path)
        total += len(variables)
    return len(nodes) / total if total else None


@dataclass
class Trie:
    """A template of trie variables: each one's parent (-1: a start), type and mask; the
    variables where queries end, and each query's index into them."""

    parent: list[int] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    end_of: dict[str, int] = field(default_factory=dict)
    query_variables: int = 0

    def add(self, query: CompiledQuery, variables: Sequence[str], masks: dict[str, np.ndarray]) -> None:
        """``query``'s variables as a path from a start, on the variables of its prefix that
        are already in the trie."""
        node, at = self._known(query, variables, masks)
        for v in variables[at:]:
            node = self._new(node, query.variables[v].type, masks[v])
        if node not in self.ends:
            self.ends.append(node)
        self.end_of[query.name] = self.ends.index(node)
        self.query_variables += len(variables)

    def grown(self, query: CompiledQuery, variables: Sequence[str], masks: dict[str, np.ndarray]) -> int:
        """The variables ``add`` would create."""
        return len(variables) - self._known(query, variables, masks)[1]

    def _known(self, query: CompiledQuery, variables: Sequence[str],
               masks: dict[str, np.ndarray]) -> tuple[int, int]:
        """The deepest trie variable on ``query``'s path (-1: none) and how many of its
        variables the path already holds."""
        node = -1
        for at, v in enumerate(variables):
            found = self._child(node, query.variables[v].type, masks[v])
            if found is None:
                return node, at
            node = found
        return node, len(variables)

    def _child(self, parent: int, t: str, m: np.ndarray) -> int | None:
        for i, (p, ti) in enumerate(zip(self.parent, self.types, strict=True)):
            if p == parent and ti == t and (self.masks[i] is m or np.array_equal(self.masks[i], m)):
                return i
        return None

    def _new(self, parent: int, t: str, m: np.ndarray) -> int:
        self.parent.append(parent)
        self.types.append(t)
        self.masks.append(m)
        return len(self.parent) - 1

    def rank(self) -> list[int]:
        """Per variable its place in the order a time stamp's events apply: deeper first,
        so each reads its parent's count from before the time stamp."""
        depth = []
        for p in self.parent:
            depth.append(0 if p < 0 else depth[p] + 1)
        order = sorted(range(len(depth)), key=lambda i: (-depth[i], i))
        rank = [0] * len(order)
        for r, i in enumerate(order):
            rank[i] = r
        return rank


def tries(queries: Sequence[CompiledQuery], data: GroupInput) -> list[Trie] | None:
    """The queries as tries of at most ``MAX_VARIABLES`` variables each (queries in the order
    of their types, so that those beginning alike meet; a query joins the last trie while it
    fits), or None where the pass does not take one of them."""
    chains = []
    for q in queries:
        variables = chain(q)
        if variables is None:
            return None
        chains.append((tuple(q.variables[v].type for v in variables), q, variables))
    chains.sort(key=lambda c: c[0])
    out = [Trie()]
    for _, q, variables in chains:
        masks = data.masks[q.name]
        if len(out[-1].parent) + out[-1].grown(q, variables, masks) > MAX_VARIABLES:
            out.append(Trie())
        out[-1].add(q, variables, masks)
    return out


@dataclass
class PrefixStats:
    """What the prefix pass did: groups run, trie variables stepped, and the variables its
    queries would have stepped alone."""

    runs: int = 0
    variables: int = 0
    query_variables: int = 0


def run(data: GroupInput, stats: PrefixStats | None) -> GroupResults | None:
    """Results of ``data.queries`` per (partition id, window index), or None where the pass
    does not take the group (the sequence executor runs it then)."""
    if _prefix is None or not COMPILED:
        return None
    queries = list(data.queries)
    out: GroupResults = {q.name: {} for q in queries}
    if not queries or len(data.idx) == 0:
        return out
    made = tries(queries, data)
    if made is None:
        return None
    within, slide = int(queries[0].within), int(queries[0].slide)
    ts = np.ascontiguousarray(data.ts, dtype=np.int64)
    idx = np.ascontiguousarray(data.idx, dtype=np.int64)
    starts = np.ascontiguousarray(data.starts, dtype=np.int64)
    results = []
    for trie in made:
        got = _prefix.run(
            ts,
            idx,
            tuple(np.ascontiguousarray(m, dtype=bool) for m in trie.masks),
            starts,
            len(trie.parent),
            tuple(trie.rank()),
            (0,) * len(trie.parent),
            tuple(int(p < 0) for p in trie.parent),
            tuple(() if p < 0 else (p,) for p in trie.parent),
            (),
            tuple(trie.ends),
            within,
            slide,
            True,
            True,
        )
        if got is None:  # a window over too many slides: the sequence executor keeps them in a dict
            return None
        results.append((trie, got))
    for trie, (kids_b, ks_b, vals_b) in results:
        ks = np.frombuffer(ks_b, dtype=np.int64).tolist()
        if ks:
            keys = list(zip(np.frombuffer(kids_b, dtype=np.int64).tolist(), ks, strict=True))
            counts = decode_counts(vals_b, len(ks), len(trie.ends)).tolist()
            for name, e in trie.end_of.items():
                out[name] = {key: WindowResult(row[e]) for key, row in zip(keys, counts, strict=True)
                                           if row[e] != 0}
        if stats is not None:
            stats.runs += 1
            stats.variables += len(trie.parent)
            stats.query_variables += trie.query_variables
    return out
