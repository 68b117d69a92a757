"""GRETA: event-grained trend aggregation over the GRETA graph, for every query.

The engine's general strategy (dissertation ch. 10-13, and the event-grained
baseline of ch. 16 for skip-till-next-match and contiguous): a vertex per
(event, matched variable), per-window intermediate aggregates summed from
predecessor vertices, negation by invalidation (``engine.negation``), running
totals per variable where a transition has no adjacent predicate or negation.
It is the engine's time-stamp driver (``engine.timestamps``) under the query's
own semantics (``engine.semantics``). Design notes: docs/engine.md, "GRETA".
"""

from __future__ import annotations

from trendlake.engine.columns import Event
from trendlake.engine.query import CompiledQuery
from trendlake.engine.results import WindowResult
from trendlake.engine.timestamps import TimeStampDriver

__all__ = ["run", "supports"]


def supports(query: CompiledQuery) -> str | None:
    """GRETA evaluates every query the plan format can express."""
    return None


def run(query: CompiledQuery, events: list[Event]) -> dict[int, WindowResult]:
    """Results per window index for one time-ordered partition."""
    if not events:
        return {}
    return TimeStampDriver.of(query).run(events)
