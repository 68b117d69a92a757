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
non-shared ratio times ``optimizer.cost.SEQUENCE_STEP_COST`` (the executor's
measured cost against its queries alone per unit of that ratio,
``python -m benchmarks calibrate_sequence``). A group can therefore be estimated
dearer than its queries alone: ``gloria`` still writes the plan GLORIA
chose (as the paper's planner), and ``auto`` rejects it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trendlake.optimizer.candidates import Candidates, sequence
from trendlake.optimizer.cost import SEQUENCE_STEP_COST, alone_costs, rates_for, selectivity
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
        within = members[0]["window"]["within_us"]
        types = {v["type"] for e in members for v in e["variables"] if not v["negated"]}
        rates = rates_for(statistics, within, types)
        sel = {(e["name"], var): selectivity(statistics, e["name"], var, True)
               for e in members for var, preds in e["local_predicates"].items() if preds}
        found = search(from_entries(members, rates.events, sel))
        group = _group(entries, found, statistics)
        if group is not None:
            groups.append(group)
    return groups


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
    ratio = SEQUENCE_STEP_COST * (found.cost / found.non_shared_cost if found.non_shared_cost > 0 else 1.0)
    group = sequence.group(entries, queries, qsets, parameters={}, estimated_cost=(alone * ratio, alone))
    if _problems(group, entries):
        # a Q-set whose snapshots are of another type than its source type continues the
        # expression of that source type, which the executor takes only where every query
        # reaches it through one such expression (docs/plan-format.md, kind sequence); GLORIA's
        # shared cycles need not: then each shared Q-set snapshots its own source type
        roots = {t: [(qs, t[0]) for qs, _ in sets] for t, sets in qsets.items()}
        group = sequence.group(entries, queries, roots, parameters={}, estimated_cost=(alone * ratio, alone))
    return group


def _problems(group: dict[str, Any], entries: Mapping[str, dict[str, Any]]) -> list[str]:
    """What the engine's ``sequence`` kind finds wrong with ``group`` (its own rules)."""
    from trendlake.engine.shared import kind_of

    kind = kind_of(sequence.KIND)
    return [] if kind is None else kind.check(group, entries)
