"""The CET graph of one (group, window) of a compiled query (dissertation ch. 5.1).

Vertices are the (event, variable) pairs of the window, an event matching a
positive variable, in time order: with a type under several aliases an event
is a vertex per alias it matches, as chapter 12 lifts §2.6's Assumption 3 (a
type at most once in a pattern) by naming each occurrence; a trend is then a
path of such steps, and containment (Def. 3.1) compares steps. An edge ``u -> v`` says that ``v`` may
follow ``u`` in a trend under the query's semantics (Def. 2.7: template
transition, adjacent predicates, no match of a negation in between; next-match
keeps the earliest followers, contiguous the next time stamp), built from the
engine's building blocks (``CompiledQuery``, ``negation.Negations``,
``timeline.time_groups``) over the events of each partition of the group.

A trend is a path from a START vertex (a start variable, no leading ``NOT``
matched in the window before it) to an END vertex (an end variable, no trailing
``NOT`` matched after it in the window); under contiguous a vertex sharing its
time stamp with another event of its partition may be no middle vertex
(``mid_ok``). :meth:`CETGraph.paths` describes these trends as a
:class:`Paths` (every trend: ``COUNT(*)``), :meth:`CETGraph.complete` the
complete ones (Def. 3.1), whose edges are the CET graph's of Def. 5.1: an edge
with a detour (another path between its ends) is in no complete trend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from trendlake.engine.columns import Event
from trendlake.engine.errors import EngineError
from trendlake.engine.negation import Negations, max_bound
from trendlake.engine.query import ANY, CONTIGUOUS, NEXT, CompiledQuery
from trendlake.engine.timeline import time_groups

__all__ = ["BYTES_PER_EDGE", "BYTES_PER_VERTEX", "CETGraph", "Paths", "TrendsRefused", "build_graph", "restrict"]

# the graph's memory with its two path descriptions (every trend, complete trends) at their
# peak while they are made, per vertex (event reference, flags, successor and predecessor
# lists in each) and per edge (an entry in each of those lists): fitted with tracemalloc on
# random graphs of 300 and 1,000 vertices (66.8 bytes per edge, 1,001 per vertex), rounded up
BYTES_PER_VERTEX = 1024
BYTES_PER_EDGE = 72


class TrendsRefused(EngineError):
    """Constructing the trends of a window would exceed the memory budget; the message names
    the window's trend count (the aggregation's ``COUNT(*)``) and what to do instead."""


@dataclass
class Paths:
    """Which vertex sequences are trends: a path ``v0 .. vk`` along ``succ`` with
    ``first1[v0]`` when k = 0, else ``first[v0]``, ``last[vk]`` and ``mid`` for every vertex
    strictly inside. Vertices are indexed in time order; ``group[v]`` is the index of
    ``v``'s time stamp among the vertices' distinct time stamps."""

    succ: list[list[int]]
    pred: list[list[int]]
    first1: list[bool]
    first: list[bool]
    last: list[bool]
    mid: list[bool]
    group: list[int]
    head: list[bool] = field(init=False)  # some trend prefix ending here may be extended
    tail: list[bool] = field(init=False)  # some trend suffix continues from a predecessor here

    def __post_init__(self) -> None:
        n = len(self.succ)
        self.head = [False] * n
        for v in range(n):
            self.head[v] = self.first[v] or (self.mid[v] and any(self.head[u] for u in self.pred[v]))
        self.tail = [False] * n
        for v in range(n - 1, -1, -1):
            self.tail[v] = self.last[v] or (self.mid[v] and any(self.tail[w] for w in self.succ[v]))
        # keep the edges some trend uses: a prefix can stop before it, a suffix go on after it
        self.succ = [[w for w in ws if self.head[v] and self.tail[w]] for v, ws in enumerate(self.succ)]
        self.pred = [[] for _ in range(n)]
        for v, ws in enumerate(self.succ):
            for w in ws:
                self.pred[w].append(v)

    def __len__(self) -> int:
        return len(self.succ)

    @property
    def edges(self) -> int:
        return sum(len(ws) for ws in self.succ)

    @property
    def groups(self) -> int:
        """Number of distinct time stamps among the vertices."""
        return self.group[-1] + 1 if self.group else 0

    def follows(self, v: int, single: bool) -> bool:
        """A prefix ending at ``v`` may be extended: ``v`` is its first vertex (``single``) and
        may start a longer trend, or a middle vertex."""
        return self.first[v] if single else self.mid[v]

    def count(self) -> int:
        """The number of trends (paths), by dynamic programming over the vertices."""
        ext = [0] * len(self)  # prefixes ending at v that may be extended
        total = 0
        for v in range(len(self)):
            longer = sum(ext[u] for u in self.pred[v])
            total += int(self.first1[v]) + (longer if self.last[v] else 0)
            ext[v] = int(self.first[v]) + (longer if self.mid[v] else 0)
        return total

    def longest(self) -> int:
        """The number of vertices of the longest trend (0 without trends)."""
        ext = [0] * len(self)
        best = 0
        for v in range(len(self)):
            longer = max((ext[u] for u in self.pred[v]), default=0)
            if self.first1[v]:
                best = max(best, 1)
            if longer and self.last[v]:
                best = max(best, longer + 1)
            ext[v] = max(1 if self.first[v] else 0, longer + 1 if longer and self.mid[v] else 0)
        return best


@dataclass
class CETGraph:
    """The graph of one (group, window): ``vertices[v]`` = (event, variable) in time order,
    ``succ``/``pred`` every edge (any trend), and the START/END/middle flags."""

    query: CompiledQuery
    window: tuple[int, int]
    vertices: list[tuple[Event, str]]
    succ: list[list[int]]
    pred: list[list[int]]
    start: list[bool]
    end: list[bool]
    mid_ok: list[bool]
    # per vertex, the negation bounds behind ``start``/``end``: START in a window starting after
    # ``start_bound`` (+inf: no start variable), END in one ending at or before ``end_bound``
    start_bound: list[float] | None = None
    end_bound: list[float] | None = None
    detour_free: list[list[int]] | None = None  # ``_without_detours()`` when known (``restrict``)

    @property
    def edges(self) -> int:
        return sum(len(ws) for ws in self.succ)

    def bytes(self) -> int:
        """The graph's estimated memory."""
        return BYTES_PER_VERTEX * len(self.vertices) + BYTES_PER_EDGE * self.edges

    def groups(self) -> list[int]:
        """Per vertex, the index of its time stamp among the vertices' distinct ones."""
        out, last, g = [], None, -1
        for e, _ in self.vertices:
            if e.ts != last:
                g, last = g + 1, e.ts
            out.append(g)
        return out

    def paths(self) -> Paths:
        """Every trend of the window (``COUNT(*)``)."""
        both = [s and e for s, e in zip(self.start, self.end, strict=True)]
        return Paths([list(ws) for ws in self.succ], [list(us) for us in self.pred], both,
                      list(self.start), list(self.end), list(self.mid_ok), self.groups())

    def complete(self, every: Paths | None = None) -> Paths:
        """The complete trends (Def. 3.1): no other trend holds all their steps.

        A trend ``e1 .. ek`` lies in a longer one iff (a) a prefix may end just before
        ``e1`` (a predecessor that can be extended) and ``e1`` may then be a middle vertex
        (or k = 1), (b) symmetrically after ``ek``, or (c) some edge ``ei -> ei+1`` has a
        detour through middle vertices; extending one of these at a time keeps a trend, so
        the three are also necessary."""
        every = every if every is not None else self.paths()  # ``every``: this graph's paths()
        n = len(self.vertices)
        before = [any(every.head[u] for u in self.pred[v]) for v in range(n)]
        after = [any(every.tail[w] for w in self.succ[v]) for v in range(n)]
        mid = self.mid_ok
        first1 = [self.start[v] and self.end[v] and not before[v] and not after[v] for v in range(n)]
        first = [self.start[v] and not (before[v] and mid[v]) for v in range(n)]
        last = [self.end[v] and not (after[v] and mid[v]) for v in range(n)]
        succ = [list(ws) for ws in self.detour_free] if self.detour_free is not None else self._without_detours()
        pred: list[list[int]] = [[] for _ in range(n)]
        for v, ws in enumerate(succ):
            for w in ws:
                pred[w].append(v)
        return Paths(succ, pred, first1, first, last, list(mid), self.groups())

    def _without_detours(self) -> list[list[int]]:
        """The edges ``u -> w`` with no path ``u -> x .. -> w`` through middle vertices."""
        n = len(self.vertices)
        reach = [0] * n  # bit y: a path v -> .. -> y whose inner vertices may be middle ones
        for v in range(n - 1, -1, -1):
            r = 0
            for w in self.succ[v]:
                r |= 1 << w
                if self.mid_ok[w]:
                    r |= reach[w]
            reach[v] = r
        out = []
        for ws in self.succ:
            around = 0
            for x in ws:
                if self.mid_ok[x]:
                    around |= reach[x]
            out.append([w for w in ws if not (around >> w) & 1])
        return out


def build_graph(
    query: CompiledQuery,
    partitions: Sequence[Sequence[Event]],
    window: tuple[int, int],
    max_bytes: int | None = None,
) -> CETGraph:
    """The CET graph of ``window`` over ``partitions`` (each a time-ordered event list of one
    partition of the group; events outside the window are ignored). Raises
    ``TrendsRefused`` when the graph alone would take more than ``max_bytes``."""
    lo, hi = window
    parts = []
    for events in partitions:
        inside = [e for e in events if lo <= e.ts < hi]
        if inside:
            parts.append(_partition_graph(query, inside, window, max_bytes))
    return _merge(query, window, parts)


def restrict(graph: CETGraph, window: tuple[int, int], detour_free: list[list[int]] | None = None) -> CETGraph:
    """The graph of a window inside ``graph``'s (built by ``build_graph`` over a span holding
    it), on the same vertex numbers: a vertex outside the window keeps no edge and no flag.

    Exact: an edge joins two events of the window and every event between them lies in the
    window too, so the template, the adjacent predicates, a negation match in between,
    contiguity and the earliest followers (next-match) decide it as in the window alone;
    only START and END depend on the window, through the negation bounds the span graph
    kept per vertex. ``detour_free``: the span graph's ``_without_detours()`` (a detour
    lies between its ends, so it is restricted the same way)."""
    lo, hi = window
    assert graph.start_bound is not None and graph.end_bound is not None, "a graph of build_graph"
    inside = [lo <= e.ts < hi for e, _ in graph.vertices]
    succ = [[w for w in ws if inside[w]] if inside[v] else [] for v, ws in enumerate(graph.succ)]
    pred: list[list[int]] = [[] for _ in graph.vertices]
    for v, ws in enumerate(succ):
        for w in ws:
            pred[w].append(v)
    start = [ok and b < lo for ok, b in zip(inside, graph.start_bound, strict=True)]
    end = [ok and b >= hi for ok, b in zip(inside, graph.end_bound, strict=True)]
    free = None
    if detour_free is not None:
        free = [[w for w in ws if inside[w]] if inside[v] else [] for v, ws in enumerate(detour_free)]
    return CETGraph(graph.query, window, graph.vertices, succ, pred, start, end, graph.mid_ok,
                    graph.start_bound, graph.end_bound, free)


@dataclass
class _Part:
    vertices: list[tuple[Event, str]]
    succ: list[list[int]]
    start: list[bool]
    end: list[bool]
    mid_ok: list[bool]
    start_bound: list[float]
    end_bound: list[float]


def _partition_graph(
    query: CompiledQuery, events: list[Event], window: tuple[int, int], max_bytes: int | None
) -> _Part:
    """One partition's vertices and edges inside the window."""
    q = query
    groups = time_groups(events)
    negs = Negations(q, groups)
    vertices: list[tuple[Event, str]] = []
    vgroup: list[int] = []
    start: list[bool] = []
    end: list[bool] = []
    start_at: list[float] = []
    end_at: list[float] = []
    mid_ok: list[bool] = []
    succ: list[list[int]] = []
    by_var: dict[str, list[int]] = {v: [] for v in q.positive}
    edges = 0
    for gi, (t, group) in enumerate(groups):
        latest = negs.latest()
        bounds = {(tr.src, tr.dst): max_bound([latest[n] for n in tr.negations]) for tr in q.transitions if tr.negations}
        start_bound = negs.start_bound(latest)
        end_bound = negs.end_bound(gi)
        new = []
        for e in group:
            for var in q.vars_by_type.get(e.type, ()):
                if not q.variables[var].matches(e.type, e.attrs):
                    continue
                v = len(vertices)
                vertices.append((e, var))
                vgroup.append(gi)
                succ.append([])
                start_at.append(math.inf if var not in q.start else -math.inf if start_bound is None else start_bound)
                end_at.append(-math.inf if var not in q.end else math.inf if end_bound is None else end_bound)
                start.append(start_at[-1] < window[0])
                end.append(end_at[-1] >= window[1])
                mid_ok.append(q.semantics != CONTIGUOUS or len(group) == 1)
                for tr in q.predecessors[var]:
                    bound = bounds.get((tr.src, tr.dst))
                    for u in by_var[tr.src]:
                        pe = vertices[u][0]
                        if bound is not None and bound > pe.ts:
                            continue
                        if q.semantics == CONTIGUOUS and vgroup[u] != gi - 1:
                            continue
                        if tr.adjacent is None or tr.adjacent(pe.attrs, e.attrs):
                            succ[u].append(v)
                            edges += 1
                new.append((v, var))
        if max_bytes is not None and BYTES_PER_VERTEX * len(vertices) + BYTES_PER_EDGE * edges > max_bytes:
            raise TrendsRefused(
                f"the CET graph needs more than {max_bytes} bytes "
                f"({len(vertices)} vertices and {edges} edges so far)"
            )
        for v, var in new:
            by_var[var].append(v)
        negs.advance(t, group)
    if q.semantics == NEXT:
        _earliest_only(succ, vertices)
    else:
        assert q.semantics in (ANY, CONTIGUOUS)
    for ws in succ:
        ws.sort()
    return _Part(vertices, succ, start, end, mid_ok, start_at, end_at)


def _earliest_only(succ: list[list[int]], vertices: list[tuple[Event, str]]) -> None:
    """Skip-till-next-match (Def. 2.7): a vertex keeps only its followers at the earliest
    time stamp at which any event may follow it under skip-till-any-match."""
    for v, ws in enumerate(succ):
        if ws:
            first = min(vertices[w][0].ts for w in ws)
            succ[v] = [w for w in ws if vertices[w][0].ts == first]


def _merge(query: CompiledQuery, window: tuple[int, int], parts: list[_Part]) -> CETGraph:
    """One graph of the partitions' graphs, vertices in (time stamp, sequence) order."""
    keyed = []
    for pi, p in enumerate(parts):
        for v, (e, _) in enumerate(p.vertices):
            keyed.append(((e.ts, e.seq, pi, v), pi, v))
    keyed.sort()
    index = {(pi, v): i for i, (_, pi, v) in enumerate(keyed)}
    vertices, succ, start, end, mid_ok, start_at, end_at = [], [], [], [], [], [], []
    for _, pi, v in keyed:
        p = parts[pi]
        vertices.append(p.vertices[v])
        succ.append(sorted(index[(pi, w)] for w in p.succ[v]))
        start.append(p.start[v])
        end.append(p.end[v])
        mid_ok.append(p.mid_ok[v])
        start_at.append(p.start_bound[v])
        end_at.append(p.end_bound[v])
    pred: list[list[int]] = [[] for _ in vertices]
    for v, ws in enumerate(succ):
        for w in ws:
            pred[w].append(v)
    return CETGraph(query, window, vertices, succ, pred, start, end, mid_ok, start_at, end_at)
