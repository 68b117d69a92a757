"""The GLORIA cost model (the paper's Eq. 2-4) over a workload's counts.

Costs are per window. ``|E|`` below is a count of events of type ``E`` per window: a
query's own count, or a Q-set's (the largest of its members').

* **Non-shared propagation** (Eq. 2): a query not shared on a transition ``(E_i, E_j)``
  costs ``propagate * |E_j| * |E_i|`` (every ``E_j`` event sums its ``E_i`` predecessors).
* **Shared propagation** (Eq. 3): a Q-set with snapshots of type ``E_s`` costs
  ``propagate * |E_i| * len`` on ``(E_i, E_j)``, ``len = 1`` if ``E_i = E_s`` (each ``E_i``
  event holds one snapshot) else ``|E_s|`` (a snapshot expression over the ``E_s``
  snapshots), once for all its queries. Eq. 3 as printed has no ``|E_j|`` factor, unlike
  Eq. 2 (the predecessors' expressions are summed into one running expression per
  predecessor type); ``Constants.per_target`` multiplies it by ``|E_j|`` for the model in
  which every event sums its predecessors itself.
* **Evaluation** (Eq. 4): where a query leaves a Q-set's expression -- it ends there, its
  next unit does not reuse the Q-set and its snapshots, or it enters a Kleene cycle --
  each of its events of that type evaluates the expression: ``evaluate * |E| * len`` per
  query (``len`` as above, at ``E``). Creating local snapshots of ``E`` also stores each
  query's value: ``insert * |E|`` per query (the paper: "relatively minimal"; 0 by
  default).
* **Kleene cycle** (§6, path generation principle): a Q-set shares every transition of
  the cycle with snapshots of one type ``E_s`` of the cycle; on top of the propagation of
  each transition (Eq. 3), every ``E_s`` event evaluates its expression over the previous
  ``E_s`` snapshots into a new snapshot: ``evaluate * |E_s| * |E_s|`` per query.
* **Start**: ``start * |E|`` per query and start type (equal in every plan; it makes the
  weight of the start edges, e.g. 10 for two queries starting with ``|A| = 5``).

With these, Figure 8's cycle ``SEQ(A, B)+`` of two queries (``|A| = 5``, ``|B| = 10``)
costs 105 shared with snapshots of A (5 + 50 + 50) and 200 not shared, as printed. The
paper prints 110 for snapshots of B, which Eq. 3-4 do not give (10 + 50 + 200 = 260); the
decision (keep A) is the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from trendlake.optimizer.gloria.model import Workload

__all__ = ["Constants", "Rep", "boundary_cost", "end_cost", "node_weight", "plan_cost", "start_cost",
           "validate"]

# A query's representation on a unit: None (not shared) or (its Q-set, snapshot type).
Rep = tuple[frozenset[str], str] | None
# A unit's transition sharing plan: its Q-sets of two or more queries with their snapshot
# types; the unit's other queries are not shared.
QSets = tuple[tuple[frozenset[str], str], ...]


@dataclass(frozen=True)
class Constants:
    """The cost model's constants (module docstring)."""

    propagate: float = 1.0
    evaluate: float = 1.0
    insert: float = 0.0
    start: float = 1.0
    per_target: bool = False


def _qcount(wl: Workload, members: frozenset[str], label: str) -> float:
    key = (members, label)
    n = wl.cache.get(key)
    if n is None:
        n = wl.cache[key] = max(wl.by_name[q].count(label) for q in members)
    return n


def length(wl: Workload, members: frozenset[str], at: str, snap: str) -> float:
    """Length of a Q-set's snapshot expression at events of ``at``."""
    return 1.0 if at == snap else _qcount(wl, members, snap)


def reps(wl: Workload, unit: str, qsets: QSets) -> dict[str, Rep]:
    out: dict[str, Rep] = {q: None for q in wl.members[unit]}
    for members, snap in qsets:
        for q in members:
            out[q] = (members, snap)
    return out


def node_weight(wl: Workload, unit: str, qsets: QSets, c: Constants) -> float:
    """The unit's own cost under a transition sharing plan: propagation along its
    transitions (Eq. 2, 3) and, for a Kleene cycle, the evaluations into its snapshots."""
    u = wl.units[unit]
    shared = set().union(*(m for m, _ in qsets)) if qsets else set()
    total = 0.0
    for q in wl.members[unit]:
        if q not in shared:
            qq = wl.by_name[q]
            total += c.propagate * sum(qq.count(a) * qq.count(b) for a, b in u.transitions)
    for members, snap in qsets:
        for a, b in u.transitions:
            w = _qcount(wl, members, a) * length(wl, members, a, snap)
            if c.per_target:
                w *= _qcount(wl, members, b)
            total += c.propagate * w
        if u.kind == "kleene":
            n = _qcount(wl, members, snap)
            total += sum(c.evaluate * n * n + c.insert * n for _ in members)
    return total


def _piece(wl: Workload, unit: str, prev: str, members: frozenset[str], query: str) -> frozenset[str]:
    """The part of ``members`` (a Q-set of ``prev``) that goes on to ``unit`` with the same
    key there as ``query``: what ``unit`` may reuse without evaluating."""
    key = wl.by_name[query].keys[unit]
    return frozenset(q for q in members
                     if wl.by_name[q].keys.get(unit) == key and wl.prev(q, unit) == prev)


def boundary_cost(wl: Workload, c: Constants, query: str, prev: str, unit: str, rep_in: Rep,
                  rep_out: Rep) -> float:
    """Cost at the event type where ``query`` goes from ``prev`` to ``unit``."""
    at = wl.boundary(unit, prev)
    n = wl.by_name[query].count(at)
    if rep_in is None:
        return c.insert * n if rep_out is not None else 0.0
    members, snap = rep_in
    if (rep_out is not None and wl.units[unit].kind == "seq" and rep_out[1] == snap
            and rep_out[0] == _piece(wl, unit, prev, members, query)):
        return 0.0  # reuse: the Q-set goes on with its snapshots
    cost = c.evaluate * n * length(wl, members, at, snap)
    if rep_out is not None:
        cost += c.insert * n
    return cost


def start_cost(wl: Workload, c: Constants, query: str, rep: Rep) -> float:
    q = wl.by_name[query]
    return sum(c.start * q.count(t) + (c.insert * q.count(t) if rep is not None else 0.0) for t in q.start)


def end_cost(wl: Workload, c: Constants, query: str, rep: Rep) -> float:
    if rep is None:
        return 0.0
    q = wl.by_name[query]
    members, snap = rep
    return sum(c.evaluate * q.count(t) * length(wl, members, t, snap) for t in q.end)


def plan_cost(wl: Workload, plan: Mapping[str, QSets], c: Constants) -> float:
    """The cost of a workload sharing plan (unit -> its Q-sets), from the plan alone."""
    total = 0.0
    rep = {u: reps(wl, u, plan.get(u, ())) for u in wl.units}
    for u in wl.units:
        total += node_weight(wl, u, tuple(plan.get(u, ())), c)
    for q in wl.queries:
        if not q.units:
            total += c.start * sum(q.count(t) for t in q.start)
            continue
        total += start_cost(wl, c, q.name, rep[q.units[0]][q.name])
        for a, b in zip(q.units, q.units[1:], strict=False):
            total += boundary_cost(wl, c, q.name, a, b, rep[a][q.name], rep[b][q.name])
        total += end_cost(wl, c, q.name, rep[q.units[-1]][q.name])
    return total


def validate(wl: Workload, plan: Mapping[str, QSets]) -> list[str]:
    """What is wrong with a plan: every query of a unit in at most one Q-set, Q-sets of two
    or more queries of the unit with one key, snapshot types the model allows (an earlier
    type of the Q-set's own chain, or a type of the Kleene cycle)."""
    problems = []
    for u, qsets in plan.items():
        seen: set[str] = set()
        unit = wl.units[u]
        for members, snap in qsets:
            if len(members) < 2:
                problems.append(f"{u}: a Q-set of one query {sorted(members)}")
            if not members <= set(wl.members[u]):
                problems.append(f"{u}: {sorted(members - set(wl.members[u]))} not on the unit")
            if seen & members:
                problems.append(f"{u}: {sorted(seen & members)} in two Q-sets")
            seen |= members
            if unit.kind == "alone":
                problems.append(f"{u}: an alone query shared")
            keys = {wl.by_name[q].keys.get(u) for q in members if q in wl.members[u]}
            if len(keys) > 1:
                problems.append(f"{u}: Q-set {sorted(members)} mixes sharing keys")
            if unit.kind == "kleene" and snap not in unit.types:
                problems.append(f"{u}: snapshots of {snap} outside the cycle")
    return problems
