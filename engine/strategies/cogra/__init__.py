"""COGRA: coarse-grained trend aggregation (dissertation ch. 14-19, Table 14.1).

Computes exactly what the two-step reference computes, keeping intermediate
aggregates at the coarsest granularity the query allows
(``trendlake.schemas.granularity``, the rule the optimizer writes into the plan):
type-grained without negation on the kernel (one aggregate per variable and
window, ``kernel.py``; compiled for states of counts only, ``_steps.c``);
mixed-grained, and type-grained with negation, on the per-time-stamp interpreter
with "since" aggregates (``mixed.py``); pattern-grained for next-match and
contiguous queries without adjacent predicates or negation (``pattern.py``).
Event-grained queries are not supported (``supports`` says why). The closed
forms, the "since" aggregates of negation and the pane handling are described
in docs/engine.md, "COGRA".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from trendlake.engine import timeline
from trendlake.engine.columns import Event
from trendlake.engine.layout import Layout
from trendlake.engine.query import ANY, CompiledQuery, Unsupported
from trendlake.engine.results import WindowResult
from trendlake.engine.strategies.cogra.kernel import Kernel, compiled_for, run_compiled
from trendlake.engine.strategies.cogra.mixed import run_mixed
from trendlake.engine.strategies.cogra.pattern import run_pattern
from trendlake.engine.strategies.cogra.prepare import prepare_events, prepared_from_masks
from trendlake.engine.timeline import partition_chunks, partition_of
from trendlake.schemas.granularity import Granularity, granularity

__all__ = ["columnar", "granularity_of", "run", "run_partitions", "supports"]

# below this many events, the kernel's fixed numpy cost (~0.1 ms) exceeds the per-group
# interpreter's whole run; such partitions use the interpreter (same type-grained state)
SMALL_PARTITION = 16


# ---------------------------------------------------------------------------
# entry points


def granularity_of(query: CompiledQuery) -> Granularity:
    """The granularity of ``query`` (``trendlake.schemas.granularity``)."""
    return granularity(
        any_match=query.semantics == ANY, adjacent=query.has_adjacent, negation=bool(query.negations)
    )


def supports(query: CompiledQuery) -> str | None:
    """None when COGRA evaluates ``query``, else why not: next-match and contiguous queries
    with adjacent predicates or negation are event-grained, not pattern-grained."""
    if granularity_of(query) is not Granularity.EVENT:
        return None
    return (
        f"query {query.name}: {query.semantics} with "
        + ("adjacent predicates" if query.has_adjacent else "negation")
        + " is event-grained (the last event's attributes or the negation matches after it"
        " decide which event may follow), not pattern-grained; use greta"
    )


def columnar(query: CompiledQuery) -> bool:
    """Whether ``query`` runs on the kernel over many partitions at once: type-grained
    without negation, its template one the kernel's layout takes (``run_partitions``)."""
    return (
        granularity_of(query) is Granularity.TYPE and not query.negations and Layout.of(query).ok
    )


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
        out.update(Kernel(query, layout, prep, partition_of(starts, idx[lo:hi])).run())
    return out


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    reason = supports(query)
    if reason is not None:
        raise Unsupported(reason)
    if not events:
        return {}
    if granularity_of(query) is Granularity.PATTERN:
        return run_pattern(query, events)
    if columnar(query) and len(events) >= SMALL_PARTITION:
        layout = Layout.of(query)
        return Kernel(query, layout, prepare_events(query, layout, events)).run()
    return run_mixed(query, events)
