"""Drill-down: the trends behind one result row (dissertation part I, CET).

``drill(query, events, group, k)`` builds the CET graph of one (group, window)
of a compiled query (``graph``), and constructs its complete trends (Def. 3.1)
or all of them with M-CET, T-CET or H-CET (``m_cet``, ``t_cet``, ``h_cet``)
under a memory budget: the costs are counted before anything is constructed
(``cost``), H-CET's partitioning is chosen by an optimizer (``partition``), and
a window whose trends do not fit is refused with ``TrendsRefused`` naming its
``COUNT(*)``. ``SharedWindows`` / ``drill_windows`` construct several windows of one
group, overlapping ones sharing their graph and graphlets (``sharing``, §7.3), each
window's trends exactly its own. docs/engine.md, "Trends (drill-down)".
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any

from trendlake.engine.columns import Event
from trendlake.engine.events import partition
from trendlake.engine.query import CompiledQuery, Unsupported
from trendlake.engine.timeline import format_ts
from trendlake.engine.timestamps import TimeStampDriver
from trendlake.engine.trends.cost import Cost, cost, output_bytes
from trendlake.engine.trends.graph import CETGraph, Paths, TrendsRefused, build_graph
from trendlake.engine.trends.h_cet import h_cet
from trendlake.engine.trends.m_cet import m_cet
from trendlake.engine.trends.partitioning import OPTIMIZERS, valid_cuts
from trendlake.engine.trends.sharing import Cluster, SharingStats, clusters, window_on_panes
from trendlake.engine.trends.t_cet import t_cet

__all__ = [
    "ALGORITHMS",
    "CETGraph",
    "Cost",
    "Drill",
    "Paths",
    "Planning",
    "SharedWindows",
    "TrendsRefused",
    "Unsupported",
    "build_graph",
    "drill",
    "drill_windows",
    "group_partitions",
    "h_cet",
    "m_cet",
    "plan",
    "run",
    "t_cet",
    "valid_cuts",
    "window_counts",
]

ALGORITHMS = ("auto", "m-cet", "t-cet", "h-cet")
Trend = tuple[tuple[Event, str], ...]


def group_partitions(query: CompiledQuery, events: Sequence[Event], group: Sequence[Any]) -> list[list[Event]]:
    """The time-ordered partitions of ``events`` whose GROUP-BY values are ``group``."""
    group = tuple(group)
    if len(group) != len(query.group_by):
        raise Unsupported(
            f"query {query.name}: {len(query.group_by)} group-by value(s) expected "
            f"({', '.join(query.group_by) or 'none'}), got {len(group)}"
        )
    positions = [query.partition_by.index(a) for a in query.group_by]
    parts = partition(events, query.partition_by)
    return [evs for key, evs in sorted(parts.items(), key=lambda kv: repr(kv[0]))
            if tuple(key[i] for i in positions) == group]


def window_counts(query: CompiledQuery, events: Sequence[Event]) -> dict[tuple[tuple[Any, ...], int], int]:
    """``COUNT(*)`` per (group, window index), by the engine's aggregation (GRETA's driver)."""
    positions = [query.partition_by.index(a) for a in query.group_by]
    out: dict[tuple[tuple[Any, ...], int], int] = {}
    driver = TimeStampDriver.of(query)
    for key, evs in partition(events, query.partition_by).items():
        group = tuple(key[i] for i in positions)
        for k, result in driver.run(evs).items():
            if result.trends:
                out[(group, k)] = out.get((group, k), 0) + result.trends
    return out


def run(paths: Paths, plan: Cost, stats: dict[str, int] | None = None) -> Iterator[tuple[int, ...]]:
    """The trends of ``paths`` by the algorithm (and partitioning) of ``plan``."""
    if plan.algorithm == "m-cet":
        return m_cet(paths, stats)
    if plan.algorithm == "t-cet":
        return t_cet(paths, stats)
    return h_cet(paths, plan.cuts, stats)


@dataclass
class _Window:
    """One (group, window) of a query: its graph and the counts of its trends."""

    query: CompiledQuery
    group: tuple[Any, ...]
    k: int
    graph: CETGraph
    paths: Paths
    complete: bool
    count_all: int  # every trend: the aggregation's COUNT(*)
    count: int  # the trends listed (complete ones unless ``complete`` is False)

    @property
    def window(self) -> tuple[int, int]:
        return self.graph.window


@dataclass
class Drill(_Window):
    """The trends of one (group, window): its graph, their counts and the chosen plan."""

    plan: Cost
    limit: int | None
    runner: Callable[[], Iterator[tuple[int, ...]]] | None = None  # H-CET on shared graphlets (``sharing``)
    sharing: dict[str, Any] | None = None

    def trends(self) -> Iterator[Trend]:
        """The trends as (event, variable) steps, at most ``limit`` of them."""
        out = self.runner() if self.runner is not None else run(self.paths, self.plan)
        if self.limit is not None:
            out = itertools.islice(out, self.limit)
        vertices = self.graph.vertices
        for path in out:
            yield tuple(vertices[v] for v in path)


@dataclass
class Planning(_Window):
    """One (group, window) planned: its graph, counts, the bytes of the trends the caller keeps
    (``held``), the chosen plan (None: nothing fits) and, when the optimizer ran, every plan
    it costed (``evaluated``). ``refusal`` is the ``TrendsRefused`` message when the plan does
    not fit ``memory``; :meth:`drill` raises it, :func:`~trendlake.engine.trends.explain.explain`
    says why."""

    held: int
    memory: int | None
    algorithm: str
    optimizer: str
    plan: Cost | None
    evaluated: list[Cost] | None
    limit: int | None
    refusal: str | None
    runner: Callable[[], Iterator[tuple[int, ...]]] | None = None  # set by ``sharing.SharedWindows``
    sharing: dict[str, Any] | None = None  # what the window shares: its span graph and panes

    @property
    def room(self) -> int | None:
        """The bytes left to the algorithm after the kept trends (None: no budget)."""
        return None if self.memory is None else self.memory - self.held

    @property
    def size(self) -> tuple[int, int]:
        return len(self.graph.vertices), self.graph.edges

    def drill(self) -> Drill:
        """The drill of this plan; ``TrendsRefused`` when it does not fit the budget."""
        if self.refusal is not None or self.plan is None:
            raise TrendsRefused(self.refusal)
        return Drill(**{f.name: getattr(self, f.name) for f in fields(Drill)})  # a Drill's fields are a plan's


def plan(
    query: CompiledQuery,
    events: Sequence[Event],
    group: Sequence[Any],
    k: int,
    *,
    complete: bool = True,
    algorithm: str = "auto",
    memory: int | None = None,
    limit: int | None = None,
    optimizer: str = "branch-and-bound",
    cuts: Sequence[int] | None = None,
) -> Planning:
    """Build the graph of window ``k`` of ``group`` and choose how to construct its trends
    (``drill``'s arguments); a window whose graph alone exceeds ``memory`` raises
    ``TrendsRefused``, a plan that does not fit is returned with its ``refusal``."""
    if algorithm not in ALGORITHMS:
        raise Unsupported(f"unknown trend algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
    if optimizer not in OPTIMIZERS:
        raise Unsupported(f"unknown partitioning optimizer {optimizer!r} (one of {', '.join(OPTIMIZERS)})")
    group = tuple(group)
    parts = group_partitions(query, events, group)
    window = query.window_bounds(k)
    try:
        graph = build_graph(query, parts, window, memory)
    except TrendsRefused as err:
        raise TrendsRefused(_refusal(query, group, window, _aggregated(query, parts, k), None, str(err))) from None
    every = graph.paths()
    paths = graph.complete(every) if complete else every
    count_all = every.count()
    count = paths.count() if complete else count_all
    held = output_bytes(paths, limit)
    evaluated: list[Cost] = []
    chosen = _choose(graph, paths, algorithm, optimizer, cuts, None if memory is None else memory - held, evaluated)
    refusal = None
    if chosen is None or (memory is not None and chosen.memory + held > memory):
        need = None if chosen is None else chosen.memory + held
        refusal = _refusal(query, group, window, count_all, count if complete else None,
                           f"{need or 'more than ' + str(memory)} bytes needed, budget {memory} bytes")
    ran = algorithm in ("auto", "h-cet") and cuts is None
    return Planning(query, group, k, graph, paths, complete, count_all, count, held, memory, algorithm, optimizer,
                    chosen, evaluated if ran else None, limit, refusal)


def drill(query: CompiledQuery, events: Sequence[Event], group: Sequence[Any], k: int, **options: Any) -> Drill:
    """Plan the construction of the trends of window ``k`` of ``group`` (``plan``'s keyword
    options) and return the drill: refuses (``TrendsRefused``) when the graph, the chosen
    algorithm's state and the trends the caller keeps (all, or ``limit``) need more than
    ``memory`` bytes."""
    return plan(query, events, group, k, **options).drill()


class SharedWindows:
    """Plans of the windows ``ks`` of ``group`` (``plan``'s keyword options; ``cuts``: extra
    cuts of each cluster, as time stamp positions of its span graph), sharing graphlets
    between overlapping windows (``sharing``; docs/engine.md, "Graphlet sharing across
    windows"). :meth:`plans` yields each window's ``(k, Planning)`` by start, or ``(k,
    TrendsRefused)`` when its graph alone exceeds the budget; ``stats`` says what was shared."""

    def __init__(
        self, query: CompiledQuery, events: Sequence[Event], group: Sequence[Any], ks: Sequence[int], *,
        complete: bool = True, algorithm: str = "auto", memory: int | None = None, limit: int | None = None,
        optimizer: str = "branch-and-bound", cuts: Sequence[int] = (),
    ) -> None:
        if algorithm not in ALGORITHMS:
            raise Unsupported(f"unknown trend algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
        self.query, self.events, self.group = query, events, tuple(group)
        self.ks = sorted(set(ks))
        self.options: dict[str, Any] = dict(complete=complete, algorithm=algorithm, memory=memory, limit=limit,
                                            optimizer=optimizer)
        self.extra = tuple(cuts)
        self.stats = SharingStats()
        self.parts = group_partitions(query, events, self.group)

    def plans(self) -> Iterator[tuple[int, Planning | TrendsRefused]]:
        bounds = [self.query.window_bounds(k) for k in self.ks]
        for members in clusters(bounds):
            cluster = self._cluster([bounds[i] for i in members]) if len(members) > 1 else None
            for k in [self.ks[i] for i in members]:
                self.stats.windows += 1
                shared = self._shared(cluster, k) if cluster is not None else None
                if shared is not None:
                    self.stats.shared_windows += 1
                    yield k, shared
                    continue
                if cluster is not None:  # did not fit: drop the cache and the span graph
                    self.stats.evictions += 1
                    cluster = None
                self.stats.alone += 1
                try:
                    yield k, plan(self.query, self.events, self.group, k, **self.options)
                except TrendsRefused as err:
                    yield k, err

    def _cluster(self, bounds: list[tuple[int, int]]) -> Cluster | None:
        """The span graph and panes of overlapping windows; None when not shared."""
        if self.options["algorithm"] not in ("auto", "h-cet"):
            return None
        span = (min(lo for lo, _ in bounds), max(hi for _, hi in bounds))
        try:
            graph = build_graph(self.query, self.parts, span, self.options["memory"])
        except TrendsRefused as err:
            self.stats.notes.append(f"span {span} planned alone: {err}")
            return None
        self.stats.span_graphs += 1
        return Cluster(graph, self.options["complete"], self.extra, bounds)

    def _shared(self, cluster: Cluster, k: int) -> Planning | None:
        """The window's planning on the cluster's span graph and panes; None when it does not fit."""
        o = self.options
        w = window_on_panes(cluster, self.query.window_bounds(k), o["complete"], o["limit"])
        if o["memory"] is not None and w.need > o["memory"]:
            return None
        return Planning(self.query, self.group, k, w.graph, w.paths, o["complete"], w.count_all, w.count, w.held,
                        o["memory"], o["algorithm"], o["optimizer"], w.plan, None, o["limit"], None,
                        runner=w.runner(cluster, self.stats), sharing=w.info(cluster))


def drill_windows(
    query: CompiledQuery, events: Sequence[Event], group: Sequence[Any], ks: Sequence[int], **options: Any
) -> Iterator[tuple[int, Drill | TrendsRefused]]:
    """The drills of windows ``ks`` of ``group`` (``plan``'s keyword options, and ``cuts``: extra
    cuts per cluster), by window start, each ``(k, Drill)`` or ``(k, TrendsRefused)``: overlapping
    windows share their graph and graphlets (``sharing.SharedWindows``), each window's trends
    exactly those of ``drill`` on it alone. Iterate a window's trends before asking for the
    next one to reuse its graphlets."""
    for k, p in SharedWindows(query, events, group, ks, **options).plans():
        if isinstance(p, TrendsRefused):
            yield k, p
            continue
        try:
            yield k, p.drill()
        except TrendsRefused as err:
            yield k, err


def _choose(
    graph: CETGraph, paths: Paths, algorithm: str, optimizer: str, cuts: Sequence[int] | None, room: int | None,
    evaluated: list[Cost] | None = None,
) -> Cost | None:
    """The plan: a named algorithm as asked, else H-CET under the optimizer's partitioning
    within ``room`` bytes, else (``auto``) M-CET; None when nothing fits. The plans the
    optimizer costs go to ``evaluated``."""
    size = (len(graph.vertices), graph.edges)
    if algorithm in ("m-cet", "t-cet"):
        return cost(paths, algorithm, (), size)
    if cuts is not None:
        return cost(paths, "h-cet", cuts, size)
    budget = room if room is not None else float("inf")
    found = OPTIMIZERS[optimizer](paths, budget, size, evaluated=evaluated) if budget >= 0 else None
    if found is None and algorithm == "auto":
        m = cost(paths, "m-cet", (), size)
        return m if m.memory <= budget else None
    if found is None and algorithm == "h-cet":
        return OPTIMIZERS[optimizer](paths, float("inf"), size, evaluated=evaluated)  # refused by the caller's check
    return found


def _aggregated(query: CompiledQuery, parts: list[list[Event]], k: int) -> int:
    """The window's ``COUNT(*)`` by the engine's aggregation."""
    driver = TimeStampDriver.of(query)
    total = 0
    for evs in parts:
        result = driver.run(evs).get(k)
        total += result.trends if result is not None else 0
    return total


def _refusal(
    query: CompiledQuery, group: tuple[Any, ...], window: tuple[int, int], count_all: int, count: int | None, why: str
) -> str:
    where = f"query {query.name}, group {group!r}, window [{format_ts(window[0])}, {format_ts(window[1])})"
    complete = f" ({count} complete)" if count is not None else ""
    return (
        f"{where}: {count_all} trends, the aggregation's COUNT(*){complete}, do not fit the memory budget "
        f"({why}); construct fewer of them with a limit, or choose a narrower window"
    )
