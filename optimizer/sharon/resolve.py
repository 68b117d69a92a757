"""Sharing conflict resolution (§VII, dissertation ch. 24.1): each candidate expanded into
options, the same pattern shared by a subset of its queries.

Algorithm 14 drops, from a candidate ``(p, Q_p)``, combinations of the queries that cause
its conflicts, breadth first, keeping every new query set of two or more queries: its
options are ``(p, Q_p \\ C)`` for the subsets ``C`` of the queries causing a conflict of
``(p, Q_p)`` with another candidate. Here:

* Queries that gain nothing from the pattern (``cost.gain <= 0``: computing it for them
  costs them more than it saves) are dropped from every option when two or more queries
  are left without them: an option with such a query weighs no more, and conflicts with
  no fewer candidates, than the same option without it.
* The options are generated breadth first (fewest queries dropped first, then in
  workload order), at most ``MAX_OPTIONS`` per candidate (the candidate itself
  included); past it the options that drop more are not generated.
* Every candidate is expanded, beneficial or not (a non-beneficial candidate can have
  beneficial options). Only beneficial options are kept, and an option is dropped when
  another option of the same candidate with a subset of its queries weighs as much or
  more (it conflicts with no more candidates: the optimum does not change).

The conflicts of the options among themselves and with the other candidates' options are
Def. 6's, as for candidates: two options of one pattern conflict where they have a query
in common.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from trendlake.optimizer.sharon.cost import benefit, gain
from trendlake.optimizer.sharon.model import Candidate, Workload, conflicts, overlap_queries

__all__ = ["MAX_OPTIONS", "expand", "options"]

MAX_OPTIONS = 64


def expand(wl: Workload, cands: Sequence[Candidate], max_options: int = MAX_OPTIONS) -> list[tuple[Candidate, float]]:
    """Every candidate's beneficial options with their benefits, candidate by candidate."""
    causing: list[set[str]] = [set() for _ in cands]
    for i, j in conflicts(cands):
        qs = overlap_queries(cands[i], cands[j])
        causing[i].update(qs)
        causing[j].update(qs)
    out: list[tuple[Candidate, float]] = []
    for c, cause in zip(cands, causing, strict=True):
        out.extend(options(wl, c, cause, max_options))
    return out


def _query_sets(c: Candidate, base: list[str], drop: list[str], max_options: int) -> list[tuple[str, ...]]:
    """The candidate's own queries, then ``base`` less combinations of ``drop``, breadth first."""
    sets = [c.queries]
    seen = {frozenset(c.queries)}
    for k in range(0, max(0, len(base) - 1)):
        for gone in itertools.combinations(drop, k):
            if len(sets) >= max_options:
                return sets
            rest = tuple(q for q in base if q not in gone)
            if len(rest) >= 2 and frozenset(rest) not in seen:
                seen.add(frozenset(rest))
                sets.append(rest)
    return sets


def options(wl: Workload, c: Candidate, causing: set[str], max_options: int = MAX_OPTIONS) -> list[tuple[Candidate, float]]:
    """The beneficial, undominated options of ``c`` (``causing``: its queries that cause a
    conflict), with their benefits."""
    gains = {q: gain(wl.by_name[q], c.positions[q], c.length) for q in c.queries}
    base = [q for q in c.queries if gains[q] > 0]
    if len(base) < 2:
        base = list(c.queries)
    drop = [q for q in base if q in causing]
    found = []
    for qs in _query_sets(c, base, drop, max(1, max_options)):
        o = c if qs == c.queries else c.restricted(qs, f"{c.id}{{{', '.join(qs)}}}")
        value = benefit(wl, o)
        if value > 0:
            found.append((o, value, frozenset(qs)))
    return [(o, v) for o, v, qs in found
            if not any(other < qs and w >= v for _, w, other in found)]
