"""GLORIA's planners over a workload: ``optimize`` (``gloria``, ``gloria-noprune``) and
``greedy`` (``gloria-greedy``).

**Node generation** (§5.1). A unit's queries come from the units before them (one *part*
per such unit), or start there. From a node of a part, each of its Q-sets, cut down to
the queries going on to this unit with one key here (a *piece*, two queries or more),

* **Reuse**: goes on as a Q-set with the same snapshots (nothing evaluated);
* **Local snapshots**: goes on as a Q-set with snapshots of the boundary type ``E_j``
  (each query evaluated once per ``E_j`` event), generated only where ``|E_j|`` is less
  than the old snapshot type's count (otherwise Reuse is never worse);
* or is dissolved.

The queries left (dissolved, not shared before, starting here, or coming over a cut edge)
are, per key, either **Merged** into one Q-set with local snapshots of ``E_j`` or **not
shared**. Every combination of the parts' choices is a node (the paper's "every
combination of these parts forms n_m"), joined to every node of each part it can come
from. Merging across parts and the non-shared choice from a shared node extend the
paper's principles (it merges the Q-sets of one node, and generates non-sharing only from
non-sharing); they let sharing start where queries meet and stop where it does not pay.

**Kleene units** (§6): by the path generation principle a cycle is shared as a whole,
by one Q-set per key with snapshots of one type of the cycle, or not at all; its nodes
are the cycle paths (per key: not shared, or shared with snapshots of each type), joined
to every node of the pools before it. Entering a cycle evaluates the incoming expression.

**The pool graph** is kept a forest: where a unit would join two pools that are already
connected (two routes through the workload, or a cycle among units), the later link is
*cut* -- the queries over it come to the unit as if not shared, and the search weighs
that boundary as not shared. The plan is still valid and its reported cost is computed
from the plan (``cost.plan_cost``); ``stats.exact`` says whether anything was cut, and
only without a cut is the plan the optimum of the space above. With a cut, a plan that
costs more than sharing nothing is replaced by the plan that shares nothing.

**Coarse generation**: past ``LIMIT`` candidates in a pool, the choices are made for all
pieces of a node, and all keys, at once (docs/gloria.md); the plan is then inexact.

**Greedy** (§8): pool by pool, the node with the least incoming weight among Reuse (the
pieces go on with their snapshots; the queries left, per key, merged with local
snapshots) and not sharing; a Kleene unit takes its cheapest cycle path. One node per
pool, no pruning, no search.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from trendlake.optimizer.gloria.cost import (
    Constants,
    QSets,
    Rep,
    _piece,
    boundary_cost,
    end_cost,
    length,
    node_weight,
    plan_cost,
    reps,
    start_cost,
)
from trendlake.optimizer.gloria.graph import Graph, Node
from trendlake.optimizer.gloria.model import Workload
from trendlake.optimizer.gloria.plan import QSet, SearchStats, TransitionPlan, WorkloadPlan

__all__ = ["LIMIT", "components", "greedy", "non_shared", "optimize"]

# The most candidate nodes a pool is given one piece or key at a time (``seq_choices``).
LIMIT = 2048


def _canon(qsets: list[tuple[frozenset[str], str]]) -> QSets:
    return tuple(sorted(qsets, key=lambda m: (sorted(m[0]), m[1])))


class _Builder:
    """The pool forest of a workload (kept and cut links) and what node generation and
    the edge weights need, memoised."""

    def __init__(self, wl: Workload, c: Constants) -> None:
        self.wl, self.c = wl, c
        self.kept: dict[str, list[str]] = {}
        self.cut = 0
        parent: dict[str, str] = {u: u for u in wl.order}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        pos = {u: i for i, u in enumerate(wl.order)}
        for v in wl.order:
            ins: list[str] = []
            for q in wl.members[v]:
                p = wl.prev(q, v)
                if p is not None and p not in ins:
                    ins.append(p)
            kept = []
            for u in ins:
                if pos[u] < pos[v] and find(u) != find(v):
                    parent[find(u)] = find(v)
                    kept.append(u)
                else:
                    self.cut += 1
            self.kept[v] = kept
        self.reps: dict[int, dict[str, Rep]] = {}
        self.coarse = 0  # pools whose candidates were generated coarsely (past LIMIT)
        self._pieces: dict[Any, frozenset[str]] = {}
        self._lengths: dict[Any, float] = {}
        self._out: dict[tuple[str, str], tuple[str, ...]] = {}
        self._unary: dict[tuple[str, QSets], tuple[float, float, float]] = {}
        self._qlen: dict[Any, tuple[float, float]] = {}

    def part_of(self, v: str) -> dict[str, str | None]:
        """Each query of ``v`` -> the kept unit it comes from (None: starts here or cut)."""
        out = {}
        for q in self.wl.members[v]:
            p = self.wl.prev(q, v)
            out[q] = p if p in self.kept[v] else None
        return out

    def out_types(self, v: str, q: str) -> tuple[str, ...]:
        """Where ``q``'s expression on ``v`` is read next: its next boundary, or its ends."""
        key = (v, q)
        out = self._out.get(key)
        if out is None:
            nxt = self.wl.next(q, v)
            out = self._out[key] = (self.wl.boundary(nxt, v),) if nxt is not None else self.wl.by_name[q].end
        return out

    def unary(self, v: str, qsets: QSets) -> tuple[float, float, float]:
        """(node weight, start weight, end weight) of a plan of ``v``."""
        got = self._unary.get((v, qsets))
        if got is None:
            got = self._unary[(v, qsets)] = self._unary_of(v, qsets)
        return got

    def _unary_of(self, v: str, qsets: QSets) -> tuple[float, float, float]:
        wl, c = self.wl, self.c
        rep = reps(wl, v, qsets)
        start = end = 0.0
        for q in wl.members[v]:
            units = wl.by_name[q].units
            if units[0] == v:
                start += start_cost(wl, c, q, rep[q])
            if units[-1] == v:
                end += end_cost(wl, c, q, rep[q])
        return node_weight(wl, v, qsets, c), start, end

    def edge(self, u: str, v: str, n_u: Node, rep_v: Mapping[str, Rep], common: list[str]) -> float:
        """``cost.boundary_cost`` summed over the queries from ``u`` to ``v``, with the
        lengths and pieces it needs memoised."""
        wl, c = self.wl, self.c
        rep_u = self.reps[n_u.id]
        at = wl.boundary(v, u)
        seq = wl.units[v].kind == "seq"
        total = 0.0
        for q in common:
            rin, rout = rep_u[q], rep_v[q]
            n = wl.by_name[q].counts[at]
            if rin is None:
                if rout is not None:
                    total += c.insert * n
                continue
            members, snap = rin
            if seq and rout is not None and rout[1] == snap:
                pk = (v, u, members, wl.by_name[q].keys[v])
                piece = self._pieces.get(pk)
                if piece is None:
                    piece = self._pieces[pk] = _piece(wl, v, u, members, q)
                if rout[0] == piece:
                    continue
            lk = (members, at, snap)
            ln = self._lengths.get(lk)
            if ln is None:
                ln = self._lengths[lk] = length(wl, members, at, snap)
            total += c.evaluate * n * ln
            if rout is not None:
                total += c.insert * n
        return total

    def lengths(self, v: str, qsets: QSets) -> tuple[float, ...]:
        """Per Q-set: its expression's length where its queries are read next, and its
        snapshot type's count (node pruning compares these)."""
        out: list[float] = []
        for members, snap in qsets:
            key = (v, members, snap)
            got = self._qlen.get(key)
            if got is None:
                reads = {t for q in members for t in self.out_types(v, q)}
                got = self._qlen[key] = (max((length(self.wl, members, t, snap) for t in reads), default=0.0),
                                         length(self.wl, members, "", snap))
            out.extend(got)
        return tuple(out)

    def keyclasses(self, v: str, queries: list[str]) -> list[list[str]]:
        classes: dict[Any, list[str]] = {}
        for q in queries:
            classes.setdefault(self.wl.by_name[q].keys[v], []).append(q)
        return list(classes.values())

    # candidate plans of a unit ---------------------------------------------------------
    def seq_choices(self, v: str, part: Mapping[str, str | None], in_nodes: Mapping[str, list[Node]],
                    reuse_only: bool = False) -> dict[tuple[Any, ...], dict[str, set[int]]]:
        """Every node of ``v`` the generation principles give from ``in_nodes``: its tagged
        Q-sets -> per part, the ids of the nodes it can come from. Past ``LIMIT``
        candidates, the choices are made for all pieces (and all keys) of a node at once
        (``coarse``, counted in ``self.coarse``)."""
        wl = self.wl
        unit = wl.units[v]
        if unit.kind == "alone":
            return {(): {u: {n.id for n in ns} for u, ns in in_nodes.items()}}
        at = unit.source
        grouped: list[tuple[str, dict[tuple[Any, ...], list[int]]]] = []
        for u, nodes in in_nodes.items():
            common = [q for q, p in part.items() if p == u]
            # nodes with the same pieces give the same configurations
            by_pieces: dict[tuple[Any, ...], list[int]] = {}
            for n_u in nodes:
                pieces = []
                for members, snap in n_u.label:
                    for piece in self.keyclasses(v, [q for q in common if q in members]):
                        if len(piece) >= 2:
                            pieces.append((frozenset(piece), snap))
                by_pieces.setdefault(tuple(pieces), []).append(n_u.id)
            grouped.append((u, by_pieces))

        def options(fp: frozenset[str], snap: str) -> list[Any]:
            opts: list[Any] = [(fp, snap, "reuse")]
            if not reuse_only:
                if snap != at and _count(wl, fp, at) < _count(wl, fp, snap):
                    opts.append((fp, at, "local"))
                opts.append(None)
            return opts

        size = 1
        for _, by_pieces in grouped:
            size *= sum(math.prod(len(options(fp, s)) for fp, s in pieces) for pieces in by_pieces)
        size <<= sum(1 for cl in self.keyclasses(v, list(wl.members[v])) if len(cl) >= 2)
        coarse = not reuse_only and size > LIMIT
        self.coarse += coarse
        per_part: list[tuple[str, dict[frozenset[Any], set[int]]]] = []
        for u, by_pieces in grouped:
            cfgs: dict[frozenset[Any], set[int]] = {}
            for pieces, ids in by_pieces.items():
                if coarse:  # Reuse, Local snapshots where they may pay, or dissolve: all at once
                    combos: Any = [[(fp, s, "reuse") for fp, s in pieces],
                                   [options(fp, s)[1] if len(options(fp, s)) == 3 else (fp, s, "reuse")
                                    for fp, s in pieces],
                                   []]
                else:
                    combos = itertools.product(*(options(fp, s) for fp, s in pieces))
                for combo in combos:
                    cfgs.setdefault(frozenset(x for x in combo if x is not None), set()).update(ids)
            per_part.append((u, cfgs))
        if coarse and math.prod(len(cfgs) for _, cfgs in per_part) * 2 > LIMIT:
            # many parts: each keeps its few locally best configurations
            k = max(1, int((LIMIT / 2) ** (1 / len(per_part))))
            by_id = {n.id: n for ns in in_nodes.values() for n in ns}
            for i, (u, cfgs) in enumerate(per_part):
                if len(cfgs) > k:
                    common = [q for q, p in part.items() if p == u]

                    def score(item: tuple[frozenset[Any], set[int]], u: str = u, common: list[str] = common) -> float:
                        qsets = _canon([(m, s) for m, s, _ in item[0]])
                        rep_v = reps(wl, v, qsets)
                        return node_weight(wl, v, qsets, self.c) + min(
                            by_id[j].d_s + self.edge(u, v, by_id[j], rep_v, common) for j in item[1])

                    per_part[i] = (u, dict(sorted(cfgs.items(), key=score)[:k]))
        out: dict[tuple[Any, ...], dict[str, set[int]]] = {}
        for combo in itertools.product(*(list(cfgs.items()) for _, cfgs in per_part)):
            kept = [x for cfg, _ in combo for x in cfg]
            taken = set().union(*(x[0] for x in kept)) if kept else set()
            free = [q for q in wl.members[v] if q not in taken]
            classes = [cl for cl in self.keyclasses(v, free) if len(cl) >= 2]
            if reuse_only:
                merge_opts: Any = [(True,) * len(classes)]
            elif coarse:
                merge_opts = [(False,) * len(classes), (True,) * len(classes)]
            else:
                merge_opts = itertools.product(*[(False, True)] * len(classes))
            for merges in merge_opts:
                tagged = list(kept) + [(frozenset(cl), at, "merged") for cl, m in zip(classes, merges, strict=True) if m]
                ident = tuple(sorted(tagged, key=lambda x: (sorted(x[0]), x[1], x[2])))
                edges = out.setdefault(ident, {})
                for (u, _), (_, ids) in zip(per_part, combo, strict=True):
                    edges.setdefault(u, set()).update(ids)
        return out

    def kleene_choices(self, v: str) -> list[QSets]:
        """The cycle paths of a Kleene unit: per key, not shared or shared with snapshots of
        each type of the cycle; past ``LIMIT``, the same choice for every key (``coarse``)."""
        unit = self.wl.units[v]
        classes = self.keyclasses(v, list(self.wl.members[v]))
        options = []
        for cl in classes:
            opts: list[Any] = [None]
            if len(cl) >= 2:
                opts += [(frozenset(cl), t) for t in unit.types]
            options.append(opts)
        if math.prod(len(o) for o in options) > LIMIT:
            self.coarse += 1
            shared = [frozenset(cl) for cl in classes if len(cl) >= 2]
            return [()] + [_canon([(m, t) for m in shared]) for t in unit.types]
        return [_canon([x for x in combo if x is not None]) for combo in itertools.product(*options)]


def _count(wl: Workload, members: frozenset[str], label: str) -> float:
    return max(wl.by_name[q].count(label) for q in members)


def _add(b: _Builder, g: Graph, v: str, qsets: QSets, sources: Mapping[str, set[int]],
         commons: Mapping[str, list[str]]) -> Node | None:
    weight, start, end = b.unary(v, qsets)
    key, lengths = frozenset(m for m, _ in qsets), b.lengths(v, qsets)
    # edge weights are >= 0: the best d_s of each part's sources bounds the node's d_s
    bound = weight + start + end + sum(min((g.by_id[i].d_s for i in ids), default=0.0)
                                       for ids in sources.values())
    if g.dominated(v, key, lengths, bound):
        return None
    rep_v = reps(b.wl, v, qsets)
    in_edges = {}
    for u, ids in sources.items():
        common = commons[u]
        if g.edge_prunes(u):
            # only the least d_s + weight survives and weights are >= 0: a source whose
            # d_s alone reaches the best so far is pruned unweighed
            edges: list[tuple[Node, float]] = []
            best = float("inf")
            order = sorted((g.by_id[i] for i in ids), key=lambda n: (n.d_s, n.id))
            for k, n_u in enumerate(order):
                if n_u.d_s >= best:
                    g.edges += len(order) - k
                    g.pruned_edges += len(order) - k
                    break
                w = b.edge(u, v, n_u, rep_v, common)
                edges.append((n_u, w))
                best = min(best, n_u.d_s + w)
            in_edges[u] = edges
        else:
            in_edges[u] = [(g.by_id[i], b.edge(u, v, g.by_id[i], rep_v, common)) for i in sorted(ids)]
    n = g.add_node(v, qsets, weight, in_edges, start, end, key=key, lengths=lengths)
    if n is not None:
        b.reps[n.id] = rep_v
    return n


def _build(wl: Workload, c: Constants, prune: bool) -> tuple[_Builder, Graph]:
    b = _Builder(wl, c)
    g = Graph([(v, b.kept[v]) for v in wl.order], prune=prune)
    for v in wl.order:
        part = b.part_of(v)
        in_nodes = {u: g.nodes(u) for u in b.kept[v]}
        if wl.units[v].kind == "kleene":
            every = {u: {n.id for n in ns} for u, ns in in_nodes.items()}
            cands = [(qsets, every) for qsets in b.kleene_choices(v)]
        else:
            cands = [(_canon([(m, s) for m, s, _ in ident]), sources)
                     for ident, sources in b.seq_choices(v, part, in_nodes).items()]
        if prune:  # the likely best first, so that node pruning drops the others unweighed
            cands.sort(key=lambda x: sum(b.unary(v, x[0])) + sum(
                min(g.by_id[i].d_s for i in ids) for ids in x[1].values() if ids))
        commons = {u: [q for q, p in part.items() if p == u] for u in b.kept[v]}
        for qsets, sources in cands:
            _add(b, g, v, qsets, sources, commons)
        g.prune_pool(v)
    return b, g


def components(wl: Workload) -> list[Workload]:
    """The workload cut into parts that cannot share with each other: queries are in one
    part when some unit has them with the same key (transitively). Every cost is a sum
    over Q-sets and non-shared queries, so the best plan of the workload is the union of
    the best plans of its parts."""
    parent = {q.name: q.name for q in wl.queries}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u, members in wl.members.items():
        first: dict[Any, str] = {}
        for q in members:
            k = wl.by_name[q].keys[u]
            if k in first:
                parent[find(q)] = find(first[k])
            else:
                first[k] = q
    groups: dict[str, list[str]] = {}
    for q in wl.queries:
        groups.setdefault(find(q.name), []).append(q.name)
    if len(groups) == 1:
        return [wl]
    out = []
    for names in groups.values():
        keep = set(names)
        members = {u: tuple(q for q in m if q in keep) for u, m in wl.members.items()}
        members = {u: m for u, m in members.items() if m}
        queries = tuple(q for q in wl.queries if q.name in keep)
        out.append(Workload(queries, {u: wl.units[u] for u in members},
                            tuple(u for u in wl.order if u in members), members,
                            {q.name: q for q in queries}))
    return out


def optimize(wl: Workload, constants: Constants | None = None, prune: bool = True) -> WorkloadPlan:
    """GLORIA (``prune=True``: planner ``gloria``) or GLORIA without pruning
    (``gloria-noprune``): the least-cost workload sharing plan found by the path search,
    part by part (``components``)."""
    c = constants or Constants()
    chosen: dict[str, list[tuple[frozenset[str], str]]] = {u: [] for u in wl.order}
    counts = [0, 0, 0, 0]
    case, exact = 0, True
    for part in components(wl):
        if not part.order:
            continue
        b, g = _build(part, c, prune)
        res = g.search()
        picked = {u: res.nodes[u].label for u in part.order}
        if (b.cut or b.coarse) and plan_cost(part, picked, c) > plan_cost(part, {}, c):
            picked = {}  # only where links were cut: never worse than not sharing
        for u, qsets in picked.items():
            chosen[u].extend(qsets)
        counts = [a + x for a, x in zip(counts, (g.generated, g.pruned_nodes, g.edges, g.pruned_edges), strict=True)]
        case = max(case, res.case)
        exact = exact and b.cut == 0 and b.coarse == 0
    stats = SearchStats(*counts, case, exact)
    return _result("gloria" if prune else "gloria-noprune", wl, {u: _canon(q) for u, q in chosen.items()}, c, stats)


def greedy(wl: Workload, constants: Constants | None = None) -> WorkloadPlan:
    """The Greedy baseline of §8 (``gloria-greedy``)."""
    c = constants or Constants()
    chosen: dict[str, list[tuple[frozenset[str], str]]] = {u: [] for u in wl.order}
    generated, exact = 0, True
    for part in components(wl):
        picked, n, cut = _greedy(part, c)
        for u, qsets in picked.items():
            chosen[u].extend(qsets)
        generated += n
        exact = exact and not cut
    stats = SearchStats(generated, 0, 0, 0, 0, exact)
    return _result("gloria-greedy", wl, {u: _canon(q) for u, q in chosen.items()}, c, stats)


def _greedy(wl: Workload, c: Constants) -> tuple[dict[str, QSets], int, int]:
    b = _Builder(wl, c)
    chosen: dict[str, QSets] = {}
    chosen_rep: dict[str, dict[str, Rep]] = {}
    generated = 0
    for v in wl.order:
        # every unit before v in a query's chain that is already chosen is a part here
        part = {q: (p if (p := wl.prev(q, v)) in chosen else None) for q in wl.members[v]}
        if wl.units[v].kind == "kleene":
            cands = b.kleene_choices(v)
        else:
            fake = {}
            for u in {p for p in part.values() if p is not None}:
                fake[u] = [Node(-1, u, chosen[u], 0.0, 0.0, 0.0, None, ())]
            cands = [_canon([(m, s) for m, s, _ in ident]) for ident in b.seq_choices(v, part, fake, reuse_only=True)]
            cands.append(())
        best, best_cost = None, float("inf")
        for qsets in cands:
            generated += 1
            rep_v = reps(wl, v, qsets)
            cost = sum(b.unary(v, qsets))
            for q, p in part.items():
                if p is not None:
                    cost += boundary_cost(wl, c, q, p, v, chosen_rep[p][q], rep_v[q])
            if cost < best_cost:
                best, best_cost = qsets, cost
        assert best is not None
        chosen[v] = best
        chosen_rep[v] = reps(wl, v, best)
    return chosen, generated, b.cut


def non_shared(wl: Workload, constants: Constants | None = None) -> WorkloadPlan:
    """The plan that shares nothing."""
    c = constants or Constants()
    return _result("none", wl, {u: () for u in wl.order}, c, SearchStats(0, 0, 0, 0, 0, True))


def _result(planner: str, wl: Workload, chosen: Mapping[str, QSets], c: Constants,
            stats: SearchStats) -> WorkloadPlan:
    transitions: list[TransitionPlan] = []
    for u in wl.order:
        unit = wl.units[u]
        qsets = chosen.get(u, ())
        shared = set().union(*(m for m, _ in qsets)) if qsets else set()
        for a, b in unit.transitions:
            out = [QSet(tuple(sorted(m)), s) for m, s in qsets]
            out += [QSet((q,), None) for q in wl.members[u] if q not in shared]
            out.sort(key=lambda x: x.queries)
            if unit.kind == "alone":
                q = wl.by_name[wl.members[u][0]]
                a, b = q.labels[a], q.labels[b]
            transitions.append(TransitionPlan(a, b, u, tuple(out)))
    cost = plan_cost(wl, chosen, c)
    base = plan_cost(wl, {}, c)
    return WorkloadPlan(planner, tuple(transitions), cost, base, stats)
