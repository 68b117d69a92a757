"""Cost models over stream statistics (what the planners compare).

Costs are in *steps* per window and partition: the engine's type-grained
executor does one step per burst of a type (a maximal run of events of one
type with no other event of the query in between), so a type ``t`` costs
``events_t / mean burst_t`` steps per window, where ``events_t`` is its rate
per pane times the panes per window (``Statistics.events_per_window``,
``Statistics.mean_burst``; the document in docs/lake.md, "The statistics
document").

``assume-uniform`` statistics (``Statistics.uniform()``, recorded in the
plan as ``{"assumption": "uniform"}``) give every type one event per window
in bursts of one: the planner then decides from the workload's shape alone,
and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendlake.engine.query import ANY
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.statistics import DEFAULT_SELECTIVITY, Statistics

__all__ = [
    "CLASS_UPDATE_COST",
    "GRAPH_ENTRY_COST",
    "GRAPH_UNIT_COST",
    "PANE_PRODUCT_COST",
    "PANE_STEP_COST",
    "PYTHON_SNAPSHOT_COST",
    "SEQUENCE_COMPILED_STEP_COST",
    "SEQUENCE_STEP_COST",
    "PREFIX_STEP_COST",
    "OWN_STEP_COST",
    "SHARED_ROW_COST",
    "SUBSEQUENCE_STEP_COST",
    "UNIFORM",
    "Rates",
    "alone_costs",
    "graph_cost",
    "hamlet_cost",
    "typed_pass_cost",
    "typed_pass_parameters",
    "plan_cost",
    "rates_for",
    "selectivity",
]

UNIFORM = Statistics.uniform().to_dict()  # the document of the uniform assumption

# Measured constants of the compiled type-grained shared pass (engine/shared/kleene/_typed.c),
# relative to what COGRA's compiled kernel spends on one row a query visits alone (its time
# follows the rows it visits, about 26 ns each on the development machine, far more closely
# than its steps: 34-245 ns per step across shapes): `python -m benchmarks typed_sharing`,
# "calibration" in benchmarks/results/full/typed_sharing.json, a least-squares fit over
# eight shapes of 2-50 queries (SHARED_ROW_COST above its median: the group's preparation
# outside the pass is paid too); docs/engine.md, "When sharing pays". The pass spends
# SHARED_ROW_COST per row it visits (once for the whole group), CLASS_UPDATE_COST per update
# of one class's coefficients at a time stamp of the shared type (once per partition), and
# OWN_STEP_COST per own step of a query (one variable's waiting events applied to one
# window, bringing it up to date first included). A group records them in ``parameters``.
SHARED_ROW_COST = 1.7
CLASS_UPDATE_COST = 0.17
OWN_STEP_COST = 0.76
# The Python shared executor's ``c`` (groups the compiled pass does not run: sums, minima,
# maxima, AVG, or any group with the pass switched off), as before the compiled pass; its
# per-burst decision reads it from the group.
PYTHON_SNAPSHOT_COST = 4.0
# Carrying one snapshot's coefficients along one edge of the shared event-grained graph,
# relative to an edge of a single query's GRETA graph (``graph_cost``). Not calibrated: the
# same run shows the shared graph of the 8 flow queries at 1.05x, 1.42x and 1.92x their time
# alone where ``graph_cost`` estimates 4.8x, 4.6x and 4.3x; the entry cost that would match
# falls from 7.0 to 0.75 as the events per partition grow, so no one constant fits the model.
GRAPH_ENTRY_COST = 0.1
# A ``sequence`` group's engine time against its queries' alone, per unit of GLORIA's estimated
# shared / non-shared ratio: the planner estimates a group at ``alone x ratio x`` this. For
# groups the Python executor runs (a query with SUM, MIN, MAX or AVG): the median factor
# measured by ``python -m benchmarks calibrate_sequence`` over the groups ``gloria`` forms on
# the GLORIA experiment's mixed workloads (the queries alone run on COGRA's kernels). Two
# runs gave medians of 1.8 and 1.9 (quartiles 1.3 and 8.2); the recorded one,
# benchmarks/results/full/calibrate_sequence.json, 2.26 over 9 groups (quartiles 1.46 and 6.2),
# with a Sharon group at ~1000x: groups of several queries sharing a nested cycle, or whose
# types are frequent, cost far more, so their estimate is low (``sharon`` forms count-only
# groups only).
SEQUENCE_STEP_COST = 1.8
# The same factor for groups of count-only queries, which the compiled pass runs
# (engine/shared/sequence/_counts.c), measured likewise (engine seconds of each group against
# its queries alone, least of 3, one process) over the count-only groups ``gloria`` forms on the
# mixed workloads of 28 and 84 queries and on 4- and 6-query funnels SEQ(Request, Accept, ...)
# over a rides day (30/10 and 5/5-minute windows): factors 1.50-2.16, median 1.58 (the group
# at 1.07-1.48x its queries alone), rounded up. docs/engine.md, "The compiled pass".
SEQUENCE_COMPILED_STEP_COST = 1.6
# The same factor for Sharon's ``subsequence`` groups that the sequence kind's snapshot executor
# runs (count queries the prefix pass does not take), per unit of Sharon's shared / non-shared
# ratio, which counts A-Seq's prefix-counter updates (quadratic in the events; COGRA's kernel
# alone is linear). `python -m benchmarks sharon --size full` at 6947071, before the prefix
# pass, when every group ran there (18 points: 20-180 queries, lengths 4-12, 500-8000 events
# per window) measured the sharon plan at 1.6-6.1x the none plan where the planner, with 1.6,
# estimated 0.62-0.99x: factors 2.6-15, quartiles 4.5 and 8.0, median 6.1.
SUBSEQUENCE_STEP_COST = 6.1
# A group the prefix pass runs (engine/shared/subsequence/prefix.py: count queries of distinct
# types as one trie on COGRA's count pass) against its queries alone on COGRA's kernel, per unit
# of the trie's variables over the queries' variables (``optimizer.planners.sharon``).
# `python -m benchmarks calibrate_sequence --size full` (benchmarks/results/full/
# calibrate_sequence.json: 16 sharon groups of the mixed, SEQ, e-commerce and traffic workloads
# on 12,000 rides events) measured factors 0.86-7.4 and two of 55 and 75, median 3.4. Those
# groups take milliseconds, where the per-window results in Python weigh more than the pass;
# on 100,000 events, 8-32 funnels SEQ(B, C, D, E, X_i) measured 0.95-1.19 (`python -m benchmarks
# calibrate_prefix --size full`, benchmarks/results/full/calibrate_prefix.json).
PREFIX_STEP_COST = 3.4
# One unit of an event-grained graph run alone (an edge tried, or a vertex: GRETA, and COGRA's
# event-grained variables), in steps of COGRA's compiled kernel: twin queries, each with and
# without its adjacent predicate, in one process (`python -m benchmarks calibrate_graph --size
# full`: the 8 flow queries of rides_team.etq on generated rides days of 30,000, 60,000 and
# 100,000 events gave 0.720, 0.659 and 0.755; benchmarks/results/full/calibrate_graph.json).
GRAPH_UNIT_COST = 0.72
# The panes pass (engine/shared/panes/_panes.c, ``optimizer.planners.panes``): a step applied
# to one state of a pane's map, and one entry of a pane map carried into a window's state
# (a multiply-add), each in steps of COGRA's compiled kernel applied to one window.
# `python -m benchmarks calibrate_panes` (--size small and full: 30,000 and 100,000 rides
# events, states of 2 and 6 counts, three window sets; the compiled calls timed on their own)
# measured the pass at 0.52-4.3x the speed of the kernel per query; the least-squares fits
# per size (0.92, 0.021 and 0.52, 0.033) disagree. These values fit all twelve points within
# 2.6x and never estimate a group cheaper than alone where it measured dearer.
PANE_STEP_COST = 0.35
PANE_PRODUCT_COST = 0.055


@dataclass(frozen=True)
class Rates:
    """Events and steps per window of each event type, for one window length."""

    events: dict[str, float]
    steps: dict[str, float]

    def of(self, t: str) -> float:
        return self.steps.get(t, 0.0)


def rates_for(statistics: Statistics | None, within_us: int, types: set[str], query: str | None = None) -> Rates:
    """Events and steps per window of ``types`` from ``statistics``; an OptimizerError without any."""
    if statistics is None:
        raise OptimizerError(
            "this planner needs stream statistics: pass --stats STATS.json (or, to plan and eval, "
            "--events FILE; to optimize, run `trendlake stats` first), or plan on stated assumptions "
            "with --assume-uniform"
        )
    events = {t: statistics.events_per_window(t, within_us) for t in types}
    steps = {t: events[t] / statistics.mean_burst(t, query) for t in types}
    return Rates(events, steps)


def selectivity(statistics: Statistics | None, query: str, variable: str, has_predicates: bool) -> float:
    """The fraction of a variable's type that matches it (``Statistics.selectivity_of``):
    1 without predicates, 0.5 when the statistics do not say (stated in docs/lake.md)."""
    if not has_predicates:
        return 1.0
    return DEFAULT_SELECTIVITY if statistics is None else statistics.selectivity_of(query, variable)


def hamlet_cost(
    k_events: float,
    k_steps: dict[str, float],
    other_steps: dict[str, float],
    classes: list[tuple[int, float]],
    snapshot_cost: float,
    dynamic: bool,
) -> tuple[float, float]:
    """(shared, non-shared) cost per window of a group sharing a Kleene type on the Python
    shared executor (a group the compiled pass runs: ``typed_pass_cost``).

    ``classes``: the group's queries by their local predicates on the shared type, as
    (number of queries, fraction of the type's events they match); queries of one class
    match the same events.

    Non-shared, each query runs its own type-grained kernel: one step per burst of the
    shared type between its own events (``k_steps[q]``, times the fraction it matches) plus
    one per burst of its own types (``other_steps[q]``).

    Shared, the executor brings a query up to date before each of its own steps, which costs
    ``snapshot_cost`` (``c``) steps more than the step. A time stamp of the shared type that
    some query matches (probability ``p = 1 - Π(1 - s)`` over the classes, which match
    independently; ``m = Σ n·s / p`` queries match it on average) costs, shared, one update
    plus ``c`` per query kept out of it (``Q - m``: event-level snapshots), and split,
    ``(1 + c)·m``. Static sharing always updates; dynamic sharing
    (Hamlet's per-burst decision) takes the cheaper one.
    """
    non_shared = sum(k_steps[x] + other_steps[x] for x in other_steps)
    q = sum(n for n, _ in classes)
    miss = 1.0
    for _, sel in classes:
        miss *= 1.0 - sel
    p = 1.0 - miss
    if p <= 0:
        per_event = 0.0
    else:
        # queries of one class match together; classes independently
        matching = sum(n * sel for n, sel in classes) / p
        per_event = 1.0 + snapshot_cost * (q - matching)
        if dynamic:
            per_event = min(per_event, (1.0 + snapshot_cost) * matching)
    shared = k_events * p * per_event + sum(o * (1.0 + snapshot_cost) for o in other_steps.values())
    return shared, non_shared


def typed_pass_cost(
    alone_steps: float, alone_rows: float, group_rows: float, updates: float, own_steps: float
) -> tuple[float, float]:
    """(shared, non-shared) cost per window of a type-grained group on the compiled shared
    pass (states of counts only), in steps of COGRA's compiled kernel like every plan cost.

    Both sides are measured in rows of COGRA alone: the queries alone visit ``alone_rows``
    rows (each the rows its variables match, per window over the windows open at a time);
    the pass visits ``group_rows`` once for the group (at ``SHARED_ROW_COST`` each), makes
    ``updates`` class updates (``k_events·Σ sel`` over the classes, per window over the
    windows open) and ``own_steps`` own steps (the queries' bursts of their own types).
    The shared cost in steps is the queries' cost alone (``alone_steps``) times the ratio."""
    shared_rows = SHARED_ROW_COST * group_rows + CLASS_UPDATE_COST * updates + OWN_STEP_COST * own_steps
    return alone_steps * shared_rows / max(alone_rows, 1e-9), alone_steps


def typed_pass_parameters() -> dict[str, float]:
    """What a type-grained group on the compiled pass records in ``parameters``: the pass's
    constants and, as ``snapshot_cost``, the Python executor's ``c`` (its per-burst
    decision, should the Python executor run the group: the pass switched off or not built)."""
    return {"snapshot_cost": PYTHON_SNAPSHOT_COST, "shared_row_cost": SHARED_ROW_COST,
            "class_update_cost": CLASS_UPDATE_COST, "own_step_cost": OWN_STEP_COST}


def graph_cost(
    k_events: float, snapshots: float, other_events: dict[str, float], entry_cost: float, partitions: float = 1.0
) -> tuple[float, float]:
    """(shared, non-shared) cost per window of a group sharing the event-grained graph of a
    Kleene type (``engine.shared.graph``), in edges of a single query's GRETA graph.

    The stream splits into ``partitions`` (the queries' partitioning; 1 when the statistics
    do not say), each with ``k_events / partitions`` events of the shared type per window.
    Alone, each query builds its own graph per partition: about ``E²/2`` edges for ``E``
    events (every pair is tried against the adjacent predicate), plus a vertex per event of
    its own types (``other_events[q]``, over all partitions). Shared, the graph is built once
    but every edge carries the coefficients of the snapshots live in the window
    (``snapshots`` over all partitions: about the events of the types leading into the shared
    one, at most one per burst), at ``entry_cost`` edges per snapshot; each query takes a
    snapshot per graphlet and reads the coefficients at each of its own events.
    """
    p = max(partitions, 1.0)
    e = k_events / p
    s = max(1.0, snapshots / p)
    pairs = e * max(e - 1.0, 0.0) / 2.0
    non_shared = sum(p * (pairs + e) + o for o in other_events.values())
    shared = p * (pairs * (1.0 + entry_cost * s) + e * s)
    shared += sum(p * s + o * (1.0 + s) for o in other_events.values())
    return shared, non_shared


def alone_costs(entries: Mapping[str, Mapping[str, Any]], statistics: Any) -> dict[str, float]:
    """Each query's cost per window run alone, in steps of COGRA's compiled kernel.

    A type-grained variable costs one step per burst of its type. An event-grained one (every
    variable of an event-grained query; in a mixed-grained query the variables of its adjacent
    predicates) is a graph: per partition of the query's partitioning, ``e`` vertices (its
    matching events there in a window) and, under skip-till-any-match, ``e(e-1)/2`` edges
    tried against the adjacent predicate, at ``GRAPH_UNIT_COST`` steps each."""
    out = {}
    for name, e in entries.items():
        positive = [v for v in e["variables"] if not v["negated"]]
        types = {v["type"] for v in positive}
        rates = rates_for(statistics, e["window"]["within_us"], types, name)
        graph = _graph_variables(e)
        cost = 0.0
        for t in types:
            in_graph = [v for v in positive if v["type"] == t and v["name"] in graph]
            if not in_graph:
                cost += rates.of(t)
                continue
            sel = max(selectivity(statistics, name, v["name"], bool(e["local_predicates"].get(v["name"])))
                      for v in in_graph)
            p = max(statistics.partitions(e["partition_by"], t) if statistics is not None else 1.0, 1.0)
            per = rates.events.get(t, 0.0) * sel / p
            edges = per * max(per - 1.0, 0.0) / 2.0 if e["semantics"] == ANY else 0.0
            cost += GRAPH_UNIT_COST * p * (edges + per)
        out[name] = cost
    return out


def _graph_variables(entry: Mapping[str, Any]) -> set[str]:
    """The variables a query runs event-grained (``analysis.granularity``'s rule)."""
    if entry["granularity"] == "event":
        return {v["name"] for v in entry["variables"]}
    if entry["granularity"] == "mixed":
        return {x for p in entry["adjacent_predicates"] for x in (p["from"], p["to"])}
    return set()


def plan_cost(
    entries: Mapping[str, Mapping[str, Any]], groups: Sequence[Mapping[str, Any]], statistics: Any
) -> tuple[float, float]:
    """(estimated, non-shared) cost per window of a plan: every query alone, less what each
    group saves (its non-shared estimate less its shared one)."""
    alone = sum(alone_costs(entries, statistics).values())
    saved = sum(g["estimated_cost"]["non_shared"] - g["estimated_cost"]["shared"] for g in groups)
    return alone - saved, alone
