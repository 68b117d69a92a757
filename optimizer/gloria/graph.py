"""The GLORIA graph (§4-6): pools of candidate transition sharing plans, weighted edges
between consecutive pools, progressive pruning and the path search of Algorithm 1.

The graph knows weights, not workloads: ``optimizer.gloria.search`` builds it from a
workload and the cost model, and the paper's worked examples build fragments of it with
the figures' weights directly.

* A *pool* is declared with the pools before it (``in_pools``); its nodes are added in
  pool order. A node has its own weight (the cost of its unit: the paper folds it into
  every incoming edge, which counts it twice where a pool has several successors), a
  start weight (the edge from the start nodes of the queries that start there) and an end
  weight (the edge to the end nodes of the queries that end there).
* ``d_s`` (Eq. 5): a node's own weights plus, for each pool before it, the least
  ``d_s + edge weight`` over that pool's nodes.
* **Edge pruning** keeps, of a node's incoming edges from one pool, only the one that
  gives Eq. 5's minimum. **Node pruning** drops a node when a *comparable* node of the
  same pool (Def. 5.9: the same Q-sets, ``key``) has no larger ``d_s`` and no longer
  snapshot expressions in any Q-set (``lengths``, compared one by one: the cost of
  everything after the pool only grows with them). A node none of whose incoming edges
  from one of its pools survives is not added.
* Both prunings compare distances to the start nodes, so both hold only where those
  distances are the whole cost of everything before the pool: where no pool before it has
  a second successor (``closed``). Elsewhere the graph keeps every node and edge. The
  paper's examples are all closed.
* The path search takes one node per pool (a GLORIA path; a Kleene pool's node is a whole
  cycle path). Case 1, one end pool and everything closed: follow the kept edges back
  from the best end node. Case 2, one node left in every pool: that is the path. Case 3:
  the distances to the end nodes over the reversed edges (with the side branches of the
  pools after a node), then the node with the least ``d_s + d_e`` and its path. This is
  exact where the pools form a forest (no two pools joined by two routes); the builder
  keeps them so.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Graph", "Node", "SearchResult"]

INF = float("inf")


@dataclass(eq=False)
class Node:
    """A candidate transition sharing plan in a pool."""

    id: int
    pool: str
    label: Any
    weight: float
    start_w: float
    end_w: float
    key: Hashable
    lengths: tuple[float, ...]
    d_s: float = INF
    edges: dict[str, dict[int, float]] = field(default_factory=dict)  # in-pool -> {node id: weight}
    best: dict[str, int] = field(default_factory=dict)  # in-pool -> node id of Eq. 5's minimum
    pruned: bool = False

    @property
    def own(self) -> float:
        return self.weight + self.start_w + self.end_w

    def __repr__(self) -> str:
        return f"Node({self.id}, {self.pool}, {self.label!r}, d_s={self.d_s})"


@dataclass(frozen=True)
class SearchResult:
    """The chosen node of every pool, the path weight and which case of Algorithm 1 ran."""

    nodes: dict[str, Node]
    weight: float
    case: int


class Graph:
    """A GLORIA graph under construction (module docstring)."""

    def __init__(self, pools: Sequence[tuple[str, Sequence[str]]], prune: bool = True) -> None:
        self.prune = prune
        self.order = [p for p, _ in pools]
        self.in_pools: dict[str, list[str]] = {p: list(ins) for p, ins in pools}
        self.out_pools: dict[str, list[str]] = {p: [] for p in self.order}
        for p, ins in pools:
            for u in ins:
                if u not in self.out_pools:
                    raise ValueError(f"pool {p}: unknown pool {u} before it")
                self.out_pools[u].append(p)
        self.closed: dict[str, bool] = {}
        for p in self.order:  # pools are declared after the pools before them
            self.closed[p] = all(self.closed[u] and len(self.out_pools[u]) == 1 for u in self.in_pools[p])
        self.pools: dict[str, list[Node]] = {p: [] for p in self.order}
        self.by_id: dict[int, Node] = {}
        self.generated = self.pruned_nodes = self.edges = self.pruned_edges = 0

    # construction -----------------------------------------------------------------
    def edge_prunes(self, pool: str) -> bool:
        """Whether edge pruning applies to the edges out of ``pool`` (closed, one successor)."""
        return self.prune and self.closed[pool] and len(self.out_pools[pool]) == 1

    def add_node(self, pool: str, label: Any = None, weight: float = 0.0,
                 in_edges: dict[str, Iterable[tuple[Node, float]]] | None = None,
                 start_w: float = 0.0, end_w: float = 0.0, key: Hashable = None,
                 lengths: Sequence[float] = ()) -> Node | None:
        """Add a node with its incoming edges (per pool before it); None when some pool
        before it has no surviving node to come from."""
        in_edges = in_edges or {}
        node = Node(len(self.by_id), pool, label, weight, start_w, end_w,
                    key if key is not None else ("node", len(self.by_id)), tuple(lengths))
        total = node.own
        for u in self.in_pools[pool]:
            live = [(n, w) for n, w in in_edges.get(u, ()) if not n.pruned]
            self.edges += len(live)
            if not live:
                return None
            best_n, best_w = min(live, key=lambda nw: (nw[0].d_s + nw[1], nw[0].id))
            total += best_n.d_s + best_w
            node.best[u] = best_n.id
            if self.edge_prunes(u):
                node.edges[u] = {best_n.id: best_w}
                self.pruned_edges += len(live) - 1
            else:
                node.edges[u] = {n.id: w for n, w in live}
        node.d_s = total
        self.by_id[node.id] = node
        self.pools[pool].append(node)
        self.generated += 1
        return node

    def dominated(self, pool: str, key: Hashable, lengths: Sequence[float], lower_bound: float) -> bool:
        """Node pruning before a node's edges are weighed: whether a node of ``pool`` with
        ``key`` and ``lengths`` whose ``d_s`` is at least ``lower_bound`` would be pruned
        against a node already there. Counts it as generated and pruned when so."""
        if not self.prune or not self.closed[pool]:
            return False
        lengths = tuple(lengths)
        for k in self.pools[pool]:
            if (k.key == key and not k.pruned and k.d_s <= lower_bound and len(k.lengths) == len(lengths)
                    and all(a <= b for a, b in zip(k.lengths, lengths, strict=True))):
                self.generated += 1
                self.pruned_nodes += 1
                return True
        return False

    def prune_pool(self, pool: str) -> list[Node]:
        """Node pruning (comparable nodes) in a finished pool; returns the pruned nodes."""
        if not self.prune or not self.closed[pool]:
            return []
        nodes = self.pools[pool]
        by_key: dict[Hashable, list[Node]] = {}
        for n in nodes:
            by_key.setdefault(n.key, []).append(n)
        gone: list[Node] = []
        for group in by_key.values():
            if len(group) < 2:
                continue
            group.sort(key=lambda n: (n.d_s, n.lengths, n.id))
            kept: list[Node] = []
            for n in group:
                if any(k.d_s <= n.d_s and len(k.lengths) == len(n.lengths)
                       and all(a <= b for a, b in zip(k.lengths, n.lengths, strict=True)) for k in kept):
                    n.pruned = True
                    gone.append(n)
                else:
                    kept.append(n)
        if gone:
            self.pools[pool] = [n for n in nodes if not n.pruned]
            self.pruned_nodes += len(gone)
        return gone

    def nodes(self, pool: str) -> list[Node]:
        return self.pools[pool]

    # path search (Algorithm 1) ---------------------------------------------------------
    def search(self) -> SearchResult:
        pools = [p for p in self.order if self.pools[p]]
        if len(pools) != len(self.order):
            empty = [p for p in self.order if not self.pools[p]]
            raise ValueError(f"GLORIA graph: no node left in pool {empty[0]}")
        ends = [p for p in self.order if not self.out_pools[p]]
        if len(ends) == 1 and all(self.closed[p] for p in self.order):  # case 1
            end = min(self.pools[ends[0]], key=lambda n: (n.d_s, n.id))
            chosen: dict[str, Node] = {}
            stack = [end]
            while stack:
                n = stack.pop()
                chosen[n.pool] = n
                stack.extend(self.by_id[i] for i in n.best.values())
            return SearchResult(chosen, end.d_s, 1)
        if all(len(self.pools[p]) == 1 for p in self.order):  # case 2
            chosen = {p: self.pools[p][0] for p in self.order}
            return SearchResult(chosen, self._weight(chosen), 2)
        return self._case3()

    def _weight(self, chosen: dict[str, Node]) -> float:
        total = 0.0
        for p, n in chosen.items():
            total += n.own
            for u in self.in_pools[p]:
                w = n.edges[u].get(chosen[u].id)
                if w is None:
                    return INF
                total += w
        return total

    def _case3(self) -> SearchResult:
        """Distances over the reversed edges: min-sum over the forest of pools, each tree
        rooted at one of its end pools; then the best root node and its path."""
        adj: dict[str, list[str]] = {p: [*self.in_pools[p], *self.out_pools[p]] for p in self.order}
        seen: set[str] = set()
        chosen: dict[str, Node] = {}
        total = 0.0
        for root in reversed(self.order):
            if root in seen:
                continue
            parent: dict[str, str | None] = {root: None}
            order = [root]
            seen.add(root)
            i = 0
            while i < len(order):
                p = order[i]
                i += 1
                for q in adj[p]:
                    if q not in seen:
                        seen.add(q)
                        parent[q] = p
                        order.append(q)
            # sub[p][node id] = cost of p's subtree with that node chosen
            sub: dict[str, dict[int, float]] = {}
            arg: dict[tuple[str, int], int] = {}  # (child pool, parent node id) -> child node id
            for p in reversed(order):
                sub[p] = {n.id: n.own for n in self.pools[p]}
                for c in adj[p]:
                    if parent.get(c) != p:
                        continue
                    for n in self.pools[p]:
                        best, best_id = INF, -1
                        for cid, w in self._pairs(c, p, n):
                            v = sub[c][cid] + w
                            if v < best or (v == best and cid < best_id):
                                best, best_id = v, cid
                        sub[p][n.id] += best
                        arg[(c, n.id)] = best_id
            rid = min(sub[root], key=lambda i: (sub[root][i], i))
            total += sub[root][rid]
            chosen[root] = self.by_id[rid]
            for p in order:
                for c in adj[p]:
                    if parent.get(c) == p:
                        chosen[c] = self.by_id[arg[(c, chosen[p].id)]]
        return SearchResult(chosen, total, 3)

    def _pairs(self, c: str, p: str, n: Node) -> list[tuple[int, float]]:
        """Nodes of pool ``c`` joined to node ``n`` of pool ``p`` by an edge, with its weight."""
        if c in self.in_pools[p]:
            return list(n.edges[c].items())
        return [(m.id, m.edges[p][n.id]) for m in self.pools[c] if n.id in m.edges[p]]
