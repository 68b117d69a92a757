"""Per-query evaluation strategies and the registry that chooses among them.

A strategy says whether it can evaluate a query (``supports(query)``: None, or
the reason it cannot) and evaluates one time-ordered partition of ``Event``
objects (``run``); a strategy with a columnar path (COGRA's kernel) also
evaluates many partitions at once (``columnar`` / ``run_partitions``).
Choosing is data, not exceptions: ``choose`` picks, for ``auto``, COGRA where
the plan's granularity is coarse and COGRA supports the query, else GRETA;
an explicitly named strategy that cannot run a query raises ``Unsupported``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from trendlake.engine.columns import Event
from trendlake.engine.errors import StrategyError
from trendlake.engine.query import CompiledQuery, Unsupported
from trendlake.engine.results import WindowResult
from trendlake.engine.strategies import cogra, greta, reference

__all__ = ["STRATEGIES", "Strategy", "choose", "strategy_for"]

# (query, masks per variable over the rows, kept rows, time stamps of the rows, attributes,
# the rows where the partitions start) -> results per (partition index, window index)
PartitionRunner = Callable[
    [CompiledQuery, dict[str, np.ndarray], np.ndarray, np.ndarray, Mapping[str, Any], np.ndarray],
    dict[tuple[int, int], WindowResult],
]


def _never(query: CompiledQuery) -> bool:
    return False


@dataclass(frozen=True)
class Strategy:
    """One evaluation strategy (see the module docstring)."""

    name: str
    description: str
    supports: Callable[[CompiledQuery], str | None]
    run: Callable[[CompiledQuery, list[Event]], dict[int, WindowResult]]
    columnar: Callable[[CompiledQuery], bool] = _never
    run_partitions: PartitionRunner | None = None


STRATEGIES: dict[str, Strategy] = {
    "twostep": Strategy(
        "twostep",
        "the two-step reference: constructs every trend, then aggregates (exponential)",
        reference.supports,
        reference.run,
    ),
    "greta": Strategy(
        "greta",
        "GRETA: event-grained aggregation over the GRETA graph, every query",
        greta.supports,
        greta.run,
    ),
    "cogra": Strategy(
        "cogra",
        "COGRA: type-, mixed- and pattern-grained aggregation; type-grained queries on a "
        "kernel over all partitions at once",
        cogra.supports,
        cogra.run,
        cogra.columnar,
        cogra.run_partitions,
    ),
}

COARSE = ("type", "mixed", "pattern")


def strategy_for(query: CompiledQuery, strategy: str) -> str:
    """The name of the strategy that evaluates ``query`` when ``strategy`` is asked for."""
    return choose(query, strategy).name


def choose(query: CompiledQuery, strategy: str = "auto") -> Strategy:
    """The strategy for ``query``: ``auto`` follows the plan's granularity (COGRA where it is
    coarse and COGRA supports the query, else GRETA); a named strategy must support it."""
    if strategy == "auto":
        cogra_ = STRATEGIES["cogra"]
        if query.granularity in COARSE and cogra_.supports(query) is None:
            return cogra_
        return STRATEGIES["greta"]
    if strategy not in STRATEGIES:
        raise StrategyError(
            f"unknown strategy {strategy!r} (use auto, {', '.join(sorted(STRATEGIES))})"
        )
    chosen = STRATEGIES[strategy]
    reason = chosen.supports(query)
    if reason is not None:
        raise Unsupported(reason)
    return chosen
