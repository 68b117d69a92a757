"""COGRA: coarse-grained trend aggregation (dissertation ch. 14-19, Table 14.1).

Computes exactly what the two-step reference computes, keeping intermediate
aggregates at the coarsest granularity the query allows: type-grained
(one aggregate per variable and window; without negation on the compiled
kernel, ``kernel.py``), mixed-grained and type-grained with negation (the
per-time-stamp driver GRETA runs, with "since" aggregates: ``greta.TimeStampDriver``), pattern-grained for next-match and
contiguous queries without adjacent predicates or negation (``pattern.py``).
Event-grained queries are not supported (``supports`` says why). The closed
forms, the "since" aggregates of negation and the pane handling are described
in docs/engine.md, "COGRA".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from trendlake.engine import timeline
from trendlake.engine.columns import Columns, Event, Types, as_column, events_from_columns
from trendlake.engine.layout import Layout
from trendlake.engine.query import ANY, CompiledQuery, Unsupported
from trendlake.engine.results import WindowResult
from trendlake.engine.strategies.cogra.kernel import compiled_for, run_compiled, run_kernel
from trendlake.engine.strategies.cogra.pattern import run_pattern
from trendlake.engine.strategies.cogra.prepare import (
    prepare_columns,
    prepare_events,
    prepared_from_masks,
)
from trendlake.engine.strategies.greta import TimeStampDriver
from trendlake.engine.timeline import partition_chunks, partition_of

__all__ = [
    "columnar",
    "granularity_of",
    "run",
    "run_columns",
    "run_partitions",
    "run_table",
    "supports",
]

# below this many events, the kernel's fixed numpy cost (~0.1 ms) exceeds the per-group
# interpreter's whole run; such partitions use the interpreter (same type-grained state)
SMALL_PARTITION = 16


# ---------------------------------------------------------------------------
# entry points


def supports(query: CompiledQuery) -> str | None:
    """None when COGRA evaluates ``query``, else why not: next-match and contiguous queries
    with adjacent predicates or negation are event-grained, not pattern-grained."""
    if query.semantics == ANY or not (query.has_adjacent or query.negations):
        return None
    return (
        f"query {query.name}: {query.semantics} with "
        + ("adjacent predicates" if query.has_adjacent else "negation")
        + " is event-grained (the last event's attributes or the negation matches after it"
        " decide which event may follow), not pattern-grained; use greta"
    )


def granularity_of(query: CompiledQuery) -> str:
    """How COGRA evaluates ``query``: ``type`` (kernel), ``type+negation``, ``mixed`` or
    ``pattern``; raises Unsupported for event-grained next-match / contiguous queries."""
    reason = supports(query)
    if reason is not None:
        raise Unsupported(reason)
    if query.semantics == ANY:
        if query.has_adjacent:
            return "mixed"
        if query.negations or not Layout.of(query).ok:
            return "type+negation" if query.negations else "mixed"
        return "type"
    return "pattern"


def columnar(query: CompiledQuery) -> bool:
    """Whether ``query`` runs on the kernel over many partitions at once (type-grained,
    no negation): ``run_partitions``."""
    return supports(query) is None and granularity_of(query) == "type"


def run_partitions(
    query: CompiledQuery,
    masks: dict[str, np.ndarray],
    idx: np.ndarray,
    ts: np.ndarray,
    attrs: Mapping[str, Any],
    starts: np.ndarray,
) -> dict[tuple[int, int], WindowResult]:
    """Results per (partition id, window index) of a ``columnar`` query over the rows
    ``idx`` (increasing) of many partitions, partition p starting at row ``starts[p]``:
    ``masks`` per variable and ``ts`` over all rows. On the compiled kernel in one pass
    where it takes the query; else whole partitions at a time, about ``KERNEL_CHUNK``
    events each, so that the Python kernel's per-event arrays stay small."""
    layout = Layout.of(query)
    var_masks = [masks[v] for v in layout.vars]
    if compiled_for(layout):
        got = run_compiled(query, layout, ts, var_masks, idx, starts)
        if got is not None:
            return got
    out: dict[tuple[int, int], WindowResult] = {}
    for lo, hi in partition_chunks(idx, starts, timeline.KERNEL_CHUNK):
        prep = prepared_from_masks(query, layout, var_masks, idx[lo:hi], ts, attrs)
        out.update(run_kernel(query, layout, prep, partition_of(starts, idx[lo:hi])))
    return out


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    mode = granularity_of(query)
    if not events:
        return {}
    if mode == "type" and len(events) >= SMALL_PARTITION:
        layout = Layout.of(query)
        return run_kernel(query, layout, prepare_events(query, layout, events))
    if mode == "pattern":
        return run_pattern(query, events)
    return TimeStampDriver.of(query, since=True).run(events)


def run_columns(
    query: CompiledQuery,
    types: Any,
    ts: Any,
    attrs: dict[str, Any] | None = None,
    *,
    type_names: Sequence[str] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[int, WindowResult]:
    """Results per window index for one partition given as columns.

    ``types``: event type names (array-like of str), or integer codes into
    ``type_names``; ``ts``: µs timestamps (int64), in time order (sorted
    stably otherwise); ``attrs``: attribute name -> array-like (missing values
    None or NaN). ``spec`` is the plan's entry for this query
    (``plan["queries"][i]``): with it, local predicates are evaluated
    vectorized with numpy; without it (or for expressions numpy cannot
    evaluate with the engine's exact semantics) they are evaluated row by
    row. Queries that are not type-grained without negation are evaluated
    on the equivalent ``Event`` list.
    """
    mode = granularity_of(query)
    attrs = dict(attrs or {})
    ts_arr = np.asarray(ts, dtype=np.int64)
    n = len(ts_arr)
    type_col = Types(types, type_names, n)
    if n and np.any(ts_arr[1:] < ts_arr[:-1]):
        order = np.argsort(ts_arr, kind="stable")
        ts_arr = ts_arr[order]
        type_col = type_col.take(order)
        attrs = {a: as_column(v)[order] for a, v in attrs.items()}
    if n == 0:
        return {}
    if mode != "type":
        return run(query, events_from_columns(type_col, ts_arr, attrs))
    layout = Layout.of(query)
    return run_kernel(
        query, layout, prepare_columns(query, layout, type_col, ts_arr, attrs, spec)
    )


def run_table(
    query: CompiledQuery, table: Any, spec: dict[str, Any] | None = None
) -> dict[int, WindowResult]:
    """:func:`run_columns` over a pyarrow Table with ``type``, ``ts`` (µs integers or an
    Arrow timestamp) and attribute columns (one partition)."""
    cols = Columns(table)
    attrs = {name: cols.array(name) for name in cols.attr_names}
    return run_columns(
        query, cols.type_codes, cols.ts, attrs, type_names=cols.type_names, spec=spec
    )


