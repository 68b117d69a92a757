"""The contract between the engine and a sharing kind (docs/plan-format.md, "Sharing").

A plan's ``sharing`` list holds groups. Every group has the same envelope
(``id``, ``kind``, ``queries``, ``partition_by``, ``window``, ``parameters``,
``estimated_cost``) and a ``body`` whose form belongs to its ``kind``. The
plan reader, the executor, ``eval``, ``explain`` and the benchmarks know only
the envelope; everything inside the body is the kind's, reached through the
methods of ``Kind``:

- ``body_schema``: the JSON Schema of the body (the plan schema's ``oneOf``
  is made of these);
- ``check(group, entries)``: the rules a schema-valid group breaks, on the
  plan's query entries, before anything is compiled;
- ``supports(group, queries)``: why this engine cannot run the group with
  these compiled queries, or None;
- ``new_stats(per_window)`` and ``run(group, data, stats)``: execution, over
  the rows of one key set (``GroupInput``), filling the kind's own record of
  what it did;
- ``summary(stats)``, ``report(group, stats)``: that record as one line and
  as JSON;
- ``describe(group)``, ``template(group)``: what ``explain`` prints and
  draws;
- ``upgrade(group, entries, version)``: a group of an older plan format in
  the current form.

A kind is registered in ``engine.shared.KINDS`` (one line). A kind's
executor imports building blocks (``engine.layout``, ``engine.aggregates``,
``engine.timeline``, ...), never a strategy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult

__all__ = ["GroupInput", "GroupResults", "Kind", "KindBase", "windows_detail"]

# per query: (partition id, window index) -> its result in that window
GroupResults = dict[str, dict[tuple[int, int], WindowResult]]


@dataclass(frozen=True)
class GroupInput:
    """The rows a group's executor visits, from one key set (the group's partitioning).

    ``queries``: the group's queries that match any row; ``masks[q][v]``: which rows (of the
    key set, in its order) match variable ``v`` of query ``q``; ``keep[q]``: the rows of the
    partitions where ``q`` can have a trend (every mandatory variable matched there), so
    ``masks[q][v] & keep[q]`` is what ``q`` alone would visit; ``idx``: the rows to visit,
    in (partition, time stamp) order; ``ts``: the time stamps of all the key set's rows;
    ``attrs``: attribute columns by name, over all rows (loaded on first use); ``kid``: the
    partition id of each visited row; ``starts``: partition ``p`` starts at row
    ``starts[p]`` of the key set; ``whole``: the queries kept in every partition (their masks
    need no pruning, and their ``keep`` is None)."""

    queries: Sequence[CompiledQuery]
    masks: Mapping[str, Mapping[str, np.ndarray]]
    keep: Mapping[str, np.ndarray | None]
    idx: np.ndarray
    ts: np.ndarray
    attrs: Mapping[str, Any]
    kid: np.ndarray
    starts: np.ndarray
    whole: frozenset[str] = frozenset()

    def pruned(self, query: str, keep_unpruned: frozenset[str] = frozenset()) -> dict[str, np.ndarray]:
        """``masks[query]`` restricted to the query's partitions, but for the variables named in
        ``keep_unpruned``."""
        if query in self.whole:
            return dict(self.masks[query])
        keep = self.keep[query]
        return {v: (m if v in keep_unpruned else m & keep) for v, m in self.masks[query].items()}


class Kind(Protocol):
    """A sharing kind: how groups of it are checked, run, reported and explained."""

    name: str
    body_schema: Mapping[str, Any]
    # whether every query of a group has the group's window (else the kind checks the windows)
    same_window: bool

    def check(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """Problems of a schema-valid group against the plan's query entries (by name), each a
        short phrase without the group id; the envelope's rules are checked before."""
        ...

    def supports(self, group: Mapping[str, Any], queries: Sequence[CompiledQuery]) -> str | None:
        """None when this engine runs the group over ``queries`` (its queries, compiled, or the
        subset of them a caller wants), else why not."""
        ...

    def new_stats(self, per_window: bool = False) -> Any:
        """An empty record of what a run does (``per_window``: also per partition and window)."""
        ...

    def run(self, group: Mapping[str, Any], data: GroupInput, stats: Any) -> GroupResults:
        """Results of ``data.queries`` per (partition id, window index), exactly those each
        query gives alone; ``stats`` receives what was done."""
        ...

    def summary(self, stats: Any) -> str:
        """What a run did, on one line."""
        ...

    def report(self, group: Mapping[str, Any], stats: Any) -> dict[str, Any]:
        """What a run did, as JSON (totals and, when recorded, per partition and window)."""
        ...

    def describe(self, group: Mapping[str, Any]) -> list[str]:
        """Lines for ``explain``: what is shared, and how."""
        ...

    def upgrade(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], version: int) -> Mapping[str, Any]:
        """A group as written by format version ``version`` in the current form (the plan's
        query entries by name at hand); the group itself when it has nothing to change."""
        ...

    def template(self, group: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The group's merged template (start and end types, transitions, each with the queries
        it serves, and ``shared``: the types whose work is shared), for pictures; or None."""
        ...

    def graph(self, group: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The graph of candidates the group's planner chose from, for pictures, or None:
        ``vertices`` (each ``candidate``, ``pattern``, ``queries``, ``benefit``, ``chosen``),
        ``edges`` (conflicts, as pairs of vertex indexes), ``vertices_total``, ``edges_total``."""
        ...


class KindBase:
    """What every built-in kind shares: its body schema read from ``schemas/kinds/<name>.json``
    and no upgrade of groups of older plan formats (a kind that had none overrides nothing)."""

    name: str
    same_window = True

    def __init__(self) -> None:
        from trendlake.schemas import load_kind_schema

        self.body_schema = load_kind_schema(self.name)

    def upgrade(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], version: int) -> Mapping[str, Any]:
        return group

    def graph(self, group: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return None


def windows_detail(group: Mapping[str, Any], per_window: Mapping[tuple[Any, int], Sequence[int]] | None,
                   fields: Sequence[str]) -> list[dict[str, Any]]:
    """A kind's per-window counts as report rows: the partition by its key values, the window's
    bounds, and the counts under ``fields`` (in order), sorted by partition and window."""
    from trendlake.engine.timeline import format_ts

    within = int(group["window"]["within_us"])
    slide = int(group["window"]["slide_us"])
    rows = []
    for (part, k), counts in sorted((per_window or {}).items(), key=lambda kv: (repr(kv[0][0]), kv[0][1])):
        values = part if isinstance(part, tuple) else ()
        rows.append({
            "partition": dict(zip(group["partition_by"], values, strict=False)),
            "window_start": format_ts(k * slide), "window_end": format_ts(k * slide + within),
            **dict(zip(fields, counts, strict=False)),
        })
    return rows
