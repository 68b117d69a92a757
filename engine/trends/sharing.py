"""Graphlet sharing across overlapping windows (dissertation §7.3), exact per window.

``trends.SharedWindows`` plans the trends of several windows of one group of one
query with these pieces (``Cluster``, ``window_on_panes``). Windows that overlap
(a chain of them: a *cluster*) share:

* **construction**: one CET graph is built over the cluster's span, and each
  window's graph is its restriction (``graph.restrict``: an edge and its
  detours lie between two events of the window, only START/END depend on the
  window, through the negation bounds kept per vertex). Vertices keep the
  span's numbers, so cached partial trends need no renumbering;
* **partitioning**: the cluster's *panes* -- the intervals between consecutive
  window starts and ends (plus any ``cuts`` given) -- are the graphlets of every
  window: a window is a union of whole panes, each pane is planned once and
  shared by every window holding it (Figure 7.2's expired, shared and new
  graphlets; a window boundary is always a cut, so a graphlet is never split);
* **partial CETs**: the segments H-CET caches per graphlet. A segment from an
  entry (vertex, FIRST | ENTERED) is a function of that entry's flags and of
  the *records* (middle, END, leaves by a cut edge, edges inside the graphlet)
  of the vertices its T-CET pass can reach. When a window reaches a pane
  already cached, an entry whose flags are unchanged and that reaches no
  vertex with a changed record reuses its segments; a new entry (a vertex that
  became a first one because its predecessors expired -- completeness is
  relative to the window, Def. 3.1) is built; an entry that no longer exists
  (entered from an expired pane) is dropped: "ignoring expired events". So
  each window's trends are exactly those of the window alone, in M-CET's
  order (``h_cet`` stitches them), and ``limit`` still streams them.

Memory: while a window runs, the span graph, the window's graph and H-CET state
(``cost``, its cached segments counted in full), the cache's records and the
trends the caller keeps must fit ``memory``; panes before the window are
evicted. When they do not fit, the cache and the span graph are dropped and
this and the cluster's remaining windows are planned alone (``plan``), as is a
window overlapping no other, a cluster whose span graph alone exceeds the
budget, and ``--algorithm m-cet|t-cet``. docs/engine.md, "Graphlet sharing across
windows".
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from trendlake.engine.trends.cost import Cost, cost, output_bytes
from trendlake.engine.trends.graph import BYTES_PER_EDGE, CETGraph, Paths, restrict
from trendlake.engine.trends.h_cet import ENTERED, FIRST, Segments, h_cet, segments
from trendlake.engine.trends.h_cet import entries as roles_at

__all__ = ["Cluster", "SharingStats", "WindowOnPanes", "clusters", "window_on_panes"]

# the cache's record of a vertex (flags and its edges inside the graphlet), per vertex and per edge
BYTES_PER_RECORD = 2 * BYTES_PER_EDGE


def clusters(bounds: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Indices of ``bounds`` (window intervals) grouped into chains of overlapping windows,
    each by start."""
    order = sorted(range(len(bounds)), key=lambda i: bounds[i])
    out: list[list[int]] = []
    end = None
    for i in order:
        lo, hi = bounds[i]
        if out and end is not None and lo < end:
            out[-1].append(i)
            end = max(end, hi)
        else:
            out.append([i])
            end = hi
    return out


@dataclass
class SharingStats:
    """What the windows shared: graphs built, graphlets (panes) and entries reused or built."""

    windows: int = 0
    shared_windows: int = 0  # planned on a cluster's span graph
    alone: int = 0  # planned alone (no overlap, over the budget, or M-CET/T-CET asked)
    span_graphs: int = 0
    graphlets_built: int = 0  # no entry reused (a new pane, or every entry changed)
    graphlets_reused: int = 0  # every entry reused
    graphlets_partly: int = 0  # some entries reused, some built or dropped
    entries_built: int = 0
    entries_reused: int = 0
    entries_dropped: int = 0
    segments_reused: int = 0
    evictions: int = 0  # sharing stopped: a window did not fit with the cache
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def graphlet_counts(self) -> dict[str, int]:
        """Graphlets reused whole, partly reused and built so far (a window's own: the change
        over the construction of its trends)."""
        return {"reused": self.graphlets_reused, "partly": self.graphlets_partly, "built": self.graphlets_built}


@dataclass
class _Pane:
    records: dict[int, tuple[Any, ...]]
    flags: dict[int, tuple[bool, bool, bool]]
    segs: Segments


class Cluster:
    """The span graph of a cluster (``graph.build_graph`` over its windows' span), its panes
    (cut at each window start and end in ``bounds``, and at the ``extra`` time stamp
    positions) and the pane cache."""

    def __init__(self, graph: CETGraph, complete: bool, extra: Sequence[int], bounds: Sequence[tuple[int, int]]):
        self.graph = graph
        self.detour_free = graph._without_detours() if complete else None
        self.groups = graph.groups()
        self.times = [e.ts for e, _ in graph.vertices]
        stamps: list[int] = []
        for (e, _), g in zip(graph.vertices, self.groups, strict=True):
            if g == len(stamps):
                stamps.append(e.ts)
        self.stamps = stamps
        cuts = set(c for c in extra if 0 <= c < len(stamps) - 1)
        for lo, hi in bounds:
            for t in (lo, hi):
                c = bisect.bisect_left(stamps, t) - 1  # the last time stamp before t
                if 0 <= c < len(stamps) - 1:
                    cuts.add(c)
        self.cuts = sorted(cuts)
        self.pane = [bisect.bisect_left(self.cuts, g) for g in self.groups]
        self.cache: dict[int, _Pane] = {}
        free = sum(len(ws) for ws in self.detour_free) if self.detour_free is not None else 0
        self.bytes = graph.bytes() + BYTES_PER_EDGE * free

    def vertex_range(self, window: tuple[int, int]) -> tuple[int, int]:
        """The span vertices ``a .. b-1`` of the window (vertices are in time order)."""
        return bisect.bisect_left(self.times, window[0]), bisect.bisect_left(self.times, window[1])

    def window_cuts(self, a: int, b: int) -> tuple[int, ...]:
        """The cluster's cuts strictly inside the window of vertices ``a .. b-1``."""
        if b <= a:
            return ()
        lo, hi = self.groups[a], self.groups[b - 1]
        return tuple(c for c in self.cuts if lo <= c < hi)

    def record_bytes(self) -> int:
        return sum(BYTES_PER_RECORD * (len(p.records) + sum(len(r[3]) for r in p.records.values()))
                   for p in self.cache.values())

    def evict_before(self, a: int) -> None:
        if a < len(self.pane):
            for key in [k for k in self.cache if k < self.pane[a]]:
                del self.cache[key]


@dataclass
class WindowOnPanes:
    """One window planned on its cluster's span graph and panes (``window_on_panes``)."""

    graph: CETGraph
    paths: Paths
    count_all: int
    count: int
    held: int
    cuts: tuple[int, ...]
    plan: Cost
    need: int  # bytes: span graph, the window's graph and H-CET state, the cache's records, kept trends
    first_vertex: int
    vertices: int

    def runner(self, cluster: Cluster, stats: SharingStats) -> Callable[[], Iterator[tuple[int, ...]]]:
        """The window's trends: H-CET over its panes, segments from the cluster's cache."""
        source = _Source(cluster, self.first_vertex, self.first_vertex + self.vertices, stats)
        return lambda: h_cet(self.paths, self.cuts, None, source)

    def info(self, cluster: Cluster) -> dict[str, Any]:
        return {"span_vertices": len(cluster.graph.vertices), "span_edges": cluster.graph.edges,
                "span_bytes": cluster.bytes, "panes": len(cluster.cuts) + 1, "vertices": self.vertices,
                "first_vertex": self.first_vertex, "estimated_memory": self.need}


def window_on_panes(cluster: Cluster, window: tuple[int, int], complete: bool, limit: int | None) -> WindowOnPanes:
    """The window's graph (restricted from the span's), its trends' description and counts, and
    the cost of H-CET on its panes with what sharing holds beside it; panes before the window
    are evicted from the cache."""
    a, b = cluster.vertex_range(window)
    cluster.evict_before(a)
    graph = restrict(cluster.graph, window, cluster.detour_free)
    every = graph.paths()
    paths = graph.complete(every) if complete else every
    count_all = every.count()
    count = paths.count() if complete else count_all
    held = output_bytes(paths, limit)
    cuts = cluster.window_cuts(a, b)
    size = (b - a, graph.edges)
    chosen = cost(paths, "h-cet", cuts, size)
    need = cluster.bytes + chosen.memory + cluster.record_bytes() + BYTES_PER_RECORD * (size[0] + size[1]) + held
    return WindowOnPanes(graph, paths, count_all, count, held, cuts, chosen, need, a, b - a)


class _Source:
    """``h_cet``'s graphlet source for one window: each graphlet is a pane, its segments taken
    from the cache where the entry's inputs are unchanged, built otherwise."""

    def __init__(self, cluster: Cluster, a: int, b: int, stats: SharingStats):
        self.cluster, self.a, self.b, self.stats = cluster, a, b, stats

    def __call__(self, paths: Paths, gl: list[int], members: list[int], local: dict[str, int]) -> Segments:
        inside = [v for v in members if self.a <= v < self.b]
        if not inside:
            return {}
        pane = self.cluster.pane[inside[0]]
        records: dict[int, tuple[Any, ...]] = {}
        flags: dict[int, tuple[bool, bool, bool]] = {}
        for v in inside:
            inner = tuple(w for w in paths.succ[v] if gl[w] == gl[v])
            leaves = any(gl[w] > gl[v] for w in paths.succ[v])
            records[v] = (paths.mid[v], paths.last[v], leaves, inner)
            flags[v] = (paths.first1[v], paths.first[v], ENTERED in roles_at(paths, gl, v))
        old = self.cluster.cache.get(pane)
        out: Segments = {}
        build: set[tuple[int, int]] = set()
        reused = dropped = 0
        dirty: dict[int, bool] = {}
        for v in reversed(inside):
            dirty[v] = (old is None or old.records.get(v) != records[v]) or any(dirty[w] for w in records[v][3])
        for v in inside:
            before = old.flags.get(v) if old is not None else None
            for role in roles_at(paths, gl, v):
                same = before is not None and not dirty[v] and (
                    before[:2] == flags[v][:2] if role == FIRST else before[2])
                if same:
                    reused += 1
                    if (v, role) in old.segs:
                        out[(v, role)] = old.segs[(v, role)]
                        self.stats.segments_reused += len(out[(v, role)])
                else:
                    build.add((v, role))
            if before is not None:
                dropped += int(before[0] or before[1]) * int(not (flags[v][0] or flags[v][1]))
                dropped += int(before[2] and not flags[v][2])
        if build:
            out.update(segments(paths, gl, inside, local, only=build))
        self.cluster.cache[pane] = _Pane(records, flags, out)
        s = self.stats
        s.entries_built += len(build)
        s.entries_reused += reused
        s.entries_dropped += dropped
        if old is not None and not build:
            s.graphlets_reused += 1
        elif old is not None and reused:
            s.graphlets_partly += 1
        else:
            s.graphlets_built += 1
        return out
