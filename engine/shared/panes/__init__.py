"""The ``panes`` sharing kind (Weave Share): queries that differ only in their windows.

A group's queries are one query under several windows (``rules.body_key``). Their
windows cut the time line at every window start and end of any of them; between
two cuts (a pane) the events change every open window's state by one affine map,
which the compiled panes pass (``_panes.c``) computes once per pane and partition
and carries each query's windows through. The results are exactly those of each
query alone on COGRA's compiled kernel (the same steps, ``engine/steps.h``).
docs/plan-format.md, "Sharing", states the rules; docs/engine.md, "Shared panes",
why the results are exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from trendlake.engine.layout import Layout
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult, count_results
from trendlake.engine.shared.base import GroupInput, GroupResults, KindBase
from trendlake.engine.shared.panes import rules

try:  # optional: built where a C compiler is at hand (setup.py)
    from trendlake.engine.shared.panes import _panes
except ImportError:  # pragma: no cover - an install without the extension
    _panes = None

__all__ = ["PANES", "PanesKind", "PanesStats", "available"]


def available() -> bool:
    """Whether the compiled panes pass is built (without it no ``panes`` group runs)."""
    return _panes is not None


@dataclass
class PanesStats:
    """What a run did: panes with events (per partition), steps applied to them, and pane maps
    carried into windows."""

    panes: int = 0
    steps: int = 0
    products: int = 0


class PanesKind(KindBase):
    """Checks, runs, reports and explains ``panes`` groups (the ``Kind`` contract)."""

    name = "panes"
    same_window = False  # the queries' windows differ; the envelope's is the group's span

    def check(self, group: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
        members = [entries[q] for q in group["queries"]]
        problems = [p for e in members if (p := rules.eligible(e)) is not None]
        if len({rules.body_key(e) for e in members}) > 1:
            problems.append("its queries differ in more than their windows")
        windows = [(e["window"]["within_us"], e["window"]["slide_us"]) for e in members]
        if group["window"] != rules.envelope_window(windows):
            problems.append("the window is not the largest range and the composite slide of its queries")
        body = group["body"]
        try:
            expected = rules.edges(windows)
        except ValueError as err:
            return problems + [str(err)]
        if body["composite_slide_us"] != rules.composite_slide(windows) or body["edges_us"] != expected:
            problems.append("composite_slide_us and edges_us are not those of its queries' windows")
        return problems

    def supports(self, group: Mapping[str, Any], queries: Sequence[CompiledQuery]) -> str | None:
        if not available():
            return "the compiled panes pass is not built in this installation"
        layouts = [Layout.of(q) for q in queries]
        if not all(lay.ok and lay.counts_only and lay.rank is not None for lay in layouts):
            return "the panes pass runs type-grained queries over counts whose events each match one variable"
        return None

    def new_stats(self, per_window: bool = False) -> PanesStats:
        return PanesStats()

    def run(self, group: Mapping[str, Any], data: GroupInput, stats: Any) -> GroupResults:
        queries = list(data.queries)
        out: GroupResults = {q.name: {} for q in queries}
        if not queries or len(data.idx) == 0:
            return out
        first = queries[0]
        layout = Layout.of(first)
        masks = data.pruned(first.name)
        index = layout.index
        owners = tuple(index[e] if e in index else -1 for e in layout.cvars)
        got = _panes.run(
            np.ascontiguousarray(data.ts, dtype=np.int64),
            np.ascontiguousarray(data.idx, dtype=np.int64),
            tuple(np.ascontiguousarray(masks[v], dtype=bool) for v in layout.vars),
            np.ascontiguousarray(data.starts, dtype=np.int64),
            len(layout.vars),
            tuple(layout.rank),
            tuple(int(x) for x in layout.selfloop),
            tuple(int(x) for x in layout.start),
            tuple(tuple(p) for p in layout.preds),
            owners,
            tuple(layout.end),
            tuple((int(q.within), int(q.slide)) for q in queries),
        )
        if got is None:
            raise RuntimeError(f"sharing group {group.get('id')}: the panes pass declined rows its check admits")
        per_query, (panes, steps, products) = got
        if stats is not None:
            stats.panes += panes
            stats.steps += steps
            stats.products += products
        for q, (kids_b, ks_b, vals_b) in zip(queries, per_query, strict=True):
            out[q.name] = _results(layout, kids_b, ks_b, vals_b)
        return out

    def summary(self, stats: PanesStats) -> str:
        return f"{stats.panes} panes, {stats.steps} steps on them, {stats.products} pane maps carried into windows"

    def report(self, group: Mapping[str, Any], stats: PanesStats) -> dict[str, Any]:
        return {"panes": stats.panes, "steps": stats.steps, "products": stats.products}

    def describe(self, group: Mapping[str, Any]) -> list[str]:
        body = group["body"]
        edges = body["edges_us"]
        shown = ", ".join(_span(e) for e in edges[:12]) + (", ..." if len(edges) > 12 else "")
        per_hour = len(edges) * 3_600_000_000 / body["composite_slide_us"]
        return [
            f"{len(group['queries'])} queries share the panes of their windows: composite slide "
            f"{_span(body['composite_slide_us'])}, {len(edges)} edges ({shown}), edge rate {per_hour:g} per hour",
            "queries: " + ", ".join(group["queries"]),
        ]

    def template(self, group: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return None


def _span(us: int) -> str:
    seconds = us / 1e6
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}min"
    return f"{seconds:g}s"


def _results(layout: Layout, kids_b: bytes, ks_b: bytes, vals_b: bytes) -> dict[tuple[int, int], WindowResult]:
    """The pass's windows of one query as (partition id, window index) -> result."""
    ks = np.frombuffer(ks_b, dtype=np.int64).tolist()
    if not ks:
        return {}
    kids = np.frombuffer(kids_b, dtype=np.int64).tolist()
    results = count_results(vals_b, len(ks), list(layout.cvars))
    return dict(zip(zip(kids, ks, strict=True), results, strict=True))


PANES = PanesKind()
