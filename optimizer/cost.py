"""Cost models over stream statistics (what the planners compare).

Costs are in *steps* per window and partition: the engine's type-grained
executor does one step per burst of a type (a maximal run of events of one
type with no other event of the query in between), so a type ``t`` costs
``events_t / mean burst_t`` steps per window, where ``events_t`` is its rate
per pane times the panes per window (``statistics["types"]``,
``statistics["bursts"]``, docs/lake.md §stats).

``assume-uniform`` statistics (``{"assumption": "uniform"}``, recorded in the
plan) give every type one event per window in bursts of one: the planner
then decides from the workload's shape alone, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trendlake.optimizer.errors import OptimizerError

__all__ = ["UNIFORM", "Rates", "hamlet_static_cost", "rates_for"]

UNIFORM = {"assumption": "uniform"}


@dataclass(frozen=True)
class Rates:
    """Events and steps per window of each event type, for one window length."""

    events: dict[str, float]
    steps: dict[str, float]

    def of(self, t: str) -> float:
        return self.steps.get(t, 0.0)


def rates_for(statistics: dict[str, Any] | None, within_us: int, types: set[str], query: str | None = None) -> Rates:
    """Events and steps per window of ``types`` from ``statistics``; an OptimizerError without any."""
    if statistics is None:
        raise OptimizerError(
            "this planner needs stream statistics: pass --stats STATS.json or --events FILE, "
            "or plan on stated assumptions with --assume-uniform"
        )
    if statistics.get("assumption") == "uniform":
        return Rates({t: 1.0 for t in types}, {t: 1.0 for t in types})
    pane = statistics.get("pane_us") or within_us
    per_window = within_us / pane
    known = statistics.get("types") or {}
    bursts_all = statistics.get("bursts") or {}
    bursts = (bursts_all.get(query) or bursts_all.get("*") or {}).get("types", {}) if query else (
        bursts_all.get("*") or {}).get("types", {})
    events, steps = {}, {}
    for t in types:
        mean = (known.get(t) or {}).get("rate_mean") or 0.0
        events[t] = float(mean) * per_window
        burst = (bursts.get(t) or {}).get("mean") or 1.0
        steps[t] = events[t] / max(float(burst), 1.0)
    return Rates(events, steps)


def hamlet_static_cost(
    k_events: float, k_steps: dict[str, float], other_steps: dict[str, float], snapshot_cost: float
) -> tuple[float, float]:
    """(shared, non-shared) cost per window of a group sharing a Kleene type.

    Non-shared, each query ``q`` runs its own type-grained kernel: one step per burst of the
    shared type between its own events (``k_steps[q]``) plus one per burst of its own types
    (``other_steps[q]``): ``Σ_q (k_q + other_q)``. Shared, the executor updates the shared
    coefficients once per time stamp of the shared type (``k_events``) and brings a query up to
    date before each of its own steps, which costs ``snapshot_cost`` steps more than the step:
    ``k_events + Σ_q other_q (1 + snapshot_cost)``.
    """
    non_shared = sum(k_steps[q] + other_steps[q] for q in other_steps)
    shared = k_events + sum(o * (1.0 + snapshot_cost) for o in other_steps.values())
    return shared, non_shared
