"""GLORIA's planners: share transitions of SEQ and nested-Kleene sub-patterns (``sequence`` groups).

For every ``sequence`` candidate (eligible queries of one partitioning and
windows, ``optimizer.candidates.sequence``) the GLORIA optimizer
(``optimizer.gloria``) searches the workload sharing plan from the
statistics: the events per window of each type for the candidate's window
(``optimizer.cost.rates_for``) and each query's selectivity of each
variable. ``gloria`` prunes (§5), ``gloria-noprune`` explores every node,
``gloria-greedy`` is the paper's Greedy baseline (§8). A candidate whose plan
shares no transition gives no group; a query of it that shares nothing
leaves the group and runs alone.

Q-sets keep GLORIA's snapshot types where the executor takes them as they are
(a Q-set snapshotting another type than its source continues that type's
expression); where it does not (GLORIA shares a cycle with snapshots of one
of its types, which the executor runs only as a continuation when every
query enters the cycle through that expression), every shared Q-set of the
group snapshots its own source type instead: the same queries share the
same propagations, with more snapshots.

Estimates: GLORIA's cost model (Eq. 2-4) counts propagations, not the
engine's steps; a group's ``estimated_cost`` is its queries' cost alone in
steps (``optimizer.cost.alone_costs``) and that times GLORIA's shared /
non-shared ratio times the step cost of the executor that runs the group
(recorded as the group's ``parameters.step_cost``):
``optimizer.cost.SEQUENCE_COMPILED_STEP_COST`` for groups of count-only
queries (COUNT(*), COUNT(E): the compiled pass), else
``optimizer.cost.SEQUENCE_STEP_COST`` (the Python executor); each the
executor's measured cost against its queries alone per unit of that ratio.
A group can therefore be estimated dearer than its queries alone: ``gloria``
still writes the plan GLORIA chose (as the paper's planner), and ``auto``
rejects it.

A candidate mixing count-only queries with queries of other aggregates is
also planned as two candidates, its count-only queries and the others (a
group holding one query with a sum runs entirely on the Python executor):
the planner keeps the groups of these two that are estimated to save, where
they save more than the candidate's own group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trendlake.optimizer.candidates import Candidates, sequence
from trendlake.optimizer.candidates.kleene import counts_only
from trendlake.optimizer.cost import (
    SEQUENCE_COMPILED_STEP_COST,
    SEQUENCE_STEP_COST,
    alone_costs,
    rates_for,
    selectivity,
)
from trendlake.optimizer.gloria import Constants, from_entries, greedy, optimize

__all__ = ["plan_gloria", "plan_greedy", "plan_noprune"]

CONSTANTS = Constants()


def plan_gloria(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """GLORIA with progressive pruning."""
    return _plan(entries, candidates, statistics, lambda wl: optimize(wl, CONSTANTS, prune=True))


def plan_noprune(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """GLORIA without pruning (the paper's NoPrune): the same plans, more nodes explored."""
    return _plan(entries, candidates, statistics, lambda wl: optimize(wl, CONSTANTS, prune=False))


def plan_greedy(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """The paper's Greedy baseline."""
    return _plan(entries, candidates, statistics, lambda wl: greedy(wl, CONSTANTS))


def _plan(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any, search: Any) -> list[dict[str, Any]]:
    groups = []
    for cand in candidates.get(sequence.KIND, []):
        members = [entries[q] for q in cand.queries]
        found = _groups(entries, members, statistics, search)
        counting = [e for e in members if counts_only(e)]
        if 2 <= len(counting) < len(members):
            # the count-only queries on the compiled pass, the others apart
            rest = [e for e in members if not counts_only(e)]
            split = _groups(entries, counting, statistics, search)
            split += _groups(entries, rest, statistics, search) if len(rest) >= 2 else []
            split = [g for g in split if _saving([g]) > 0]
            if split and _saving(split) > _saving(found):
                found = split
        groups += found
    return groups


def _saving(groups: list[dict[str, Any]]) -> float:
    return sum(g["estimated_cost"]["non_shared"] - g["estimated_cost"]["shared"] for g in groups)


def _groups(entries: Mapping[str, dict[str, Any]], members: list[dict[str, Any]], statistics: Any,
            search: Any) -> list[dict[str, Any]]:
    """The group GLORIA plans for ``members`` (none or one)."""
    within = members[0]["window"]["within_us"]
    types = {v["type"] for e in members for v in e["variables"] if not v["negated"]}
    rates = rates_for(statistics, within, types)
    sel = {(e["name"], var): selectivity(statistics, e["name"], var, True)
           for e in members for var, preds in e["local_predicates"].items() if preds}
    group = _group(entries, search(from_entries(members, rates.events, sel)), statistics)
    return [] if group is None else [group]


def _group(entries: Mapping[str, dict[str, Any]], found: Any, statistics: Any) -> dict[str, Any] | None:
    """The ``sequence`` group of a GLORIA plan: its queries that share a transition, every
    transition of theirs in a Q-set (one of its own where it is not shared); None when nothing
    is shared or sharing is not estimated cheaper."""
    if not found.cost < found.non_shared_cost:
        return None
    sharing = {q for t in found.transitions for qs in t.qsets if len(qs.queries) >= 2 for q in qs.queries}
    if len(sharing) < 2:
        return None
    queries = [q for q in entries if q in sharing]  # workload order
    qsets: dict[tuple[str, str], list[tuple[list[str], str]]] = {}
    for t in found.transitions:
        for qs in t.qsets:
            kept = [q for q in qs.queries if q in sharing]
            if kept:
                qsets.setdefault((t.source, t.target), []).append((kept, qs.snapshot or t.source))
    alone = sum(alone_costs({q: entries[q] for q in queries}, statistics).values())
    # GLORIA's ratio in the engine's steps: its executor's measured cost per unit of the ratio
    step = SEQUENCE_COMPILED_STEP_COST if all(counts_only(entries[q]) for q in queries) else SEQUENCE_STEP_COST
    ratio = step * (found.cost / found.non_shared_cost if found.non_shared_cost > 0 else 1.0)
    parameters = {"step_cost": step}
    group = sequence.group(entries, queries, qsets, parameters=parameters, estimated_cost=(alone * ratio, alone))
    if _problems(group, entries):
        # a Q-set whose snapshots are of another type than its source type continues the
        # expression of that source type, which the executor takes only where every query
        # reaches it through one such expression (docs/plan-format.md, kind sequence); GLORIA's
        # shared cycles need not: then each shared Q-set snapshots its own source type
        roots = {t: [(qs, t[0]) for qs, _ in sets] for t, sets in qsets.items()}
        group = sequence.group(entries, queries, roots, parameters=parameters, estimated_cost=(alone * ratio, alone))
    return group


def _problems(group: dict[str, Any], entries: Mapping[str, dict[str, Any]]) -> list[str]:
    """What the engine's ``sequence`` kind finds wrong with ``group`` (its own rules)."""
    from trendlake.engine.shared import kind_of

    kind = kind_of(sequence.KIND)
    return [] if kind is None else kind.check(group, entries)
