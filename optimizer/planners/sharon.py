"""Sharon's planners: fixed-length sequence queries share the counts of common sub-sequences
(``subsequence`` groups).

For every ``subsequence`` candidate (eligible queries of one partitioning and windows,
``optimizer.candidates.subsequence``) Sharon's optimizer (``optimizer.sharon``) chooses the
shared sub-sequences from the statistics: the events per window of each type for the
candidate's window and each query's selectivity of each variable. ``sharon`` is its
optimizer (graph reduction and plan finder, optimal), ``sharon-greedy`` its GWMIN baseline,
``sharon-exhaustive`` every subset of the Sharon graph (an OptimizerError past
``optimizer.sharon.EXHAUSTIVE_LIMIT`` candidates, which ``auto`` records).

Estimates: a group's ``estimated_cost`` is its queries' cost alone in steps
(``optimizer.cost.alone_costs``) times what the engine's executor of the group saves. A group
the prefix pass runs (``engine.shared.subsequence.prefix.trie_share``: count queries of distinct types as one trie, every
common prefix counted once) is estimated at the trie's variables over its queries' variables
times ``PREFIX_STEP_COST``; any other at Sharon's shared / non-shared ratio (its benefit
model counts A-Seq's quadratic prefix counters) times ``SUBSEQUENCE_STEP_COST``, measured on
the sequence kind's snapshot executor. Both constants come from benchmarks
(optimizer/cost.py). The groups are Sharon's choice (the paper's optimizer), kept whatever
the estimate says; ``auto`` keeps a sharon plan only where it is the cheapest.

Only count-only queries (COUNT(*), COUNT(E)) take part: their groups run on the compiled
pass. A group of queries with SUM, MIN, MAX or AVG runs on the Python sequence executor,
which `python -m benchmarks calibrate_sequence --size full` measured at 5.6x, 13x and up to
~1000x the time of its queries alone on COGRA's kernel (a ratio that grows with the events
of the group's types, so no one step cost prices it): such a group never paid.

A candidate of more queries than the sequence kind's compiled pass takes in one group
(``engine.shared.sequence.compiled.MAX_QUERIES``, 63) is cut, in workload order, into the
fewest runs of about equal size that it takes, each searched on its own: a larger group
would run on the Python executor, hundreds of times slower than the estimate's step cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trendlake.engine.shared.sequence.compiled import MAX_QUERIES
from trendlake.engine.shared.subsequence.prefix import trie_share
from trendlake.optimizer import sharon
from trendlake.optimizer.candidates import Candidates, subsequence
from trendlake.optimizer.candidates.kleene import counts_only
from trendlake.optimizer.cost import (
    PREFIX_STEP_COST,
    SUBSEQUENCE_STEP_COST,
    alone_costs,
    rates_for,
    selectivity,
)

__all__ = ["plan_exhaustive", "plan_greedy", "plan_sharon"]


def plan_sharon(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Sharon's optimizer: the optimal sharing plan of each candidate."""
    return _plan(entries, candidates, statistics, "sharon")


def plan_greedy(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Sharon's greedy baseline (GWMIN on the Sharon graph)."""
    return _plan(entries, candidates, statistics, "greedy")


def plan_exhaustive(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any) -> list[dict[str, Any]]:
    """Every subset of the Sharon graph (small workloads only)."""
    return _plan(entries, candidates, statistics, "exhaustive")


def _chunks(queries: list[str]) -> list[list[str]]:
    """``queries`` in workload order cut into the fewest runs of about equal size that the
    compiled pass takes (``MAX_QUERIES`` each)."""
    if not queries:
        return []
    n = -(-len(queries) // MAX_QUERIES)
    size = -(-len(queries) // n)
    return [queries[i:i + size] for i in range(0, len(queries), size)]


def _plan(entries: Mapping[str, dict[str, Any]], candidates: Candidates, statistics: Any, search: str) -> list[dict[str, Any]]:
    groups = []
    counting = ([q for q in cand.queries if counts_only(entries[q])] for cand in candidates.get(subsequence.KIND, []))
    for chunk in (c for queries in counting for c in _chunks(queries)):
        if len(chunk) < 2:
            continue
        members = [entries[q] for q in chunk]
        within = members[0]["window"]["within_us"]
        types = {t for e in members for t in subsequence.types_of(e)}
        rates = rates_for(statistics, within, types).events
        sel = {(e["name"], var): selectivity(statistics, e["name"], var, True)
               for e in members for var, preds in e["local_predicates"].items() if preds}
        plan = sharon.choose(members, rates, sel, search=search)
        parts = [(s.pattern, s.queries, s.positions, s.benefit) for s in plan.shared if len(s.queries) >= 2]
        if not parts or plan.non_shared_cost <= 0:
            continue
        queries = [q for q in chunk if any(q in p[1] for p in parts)]
        alone = sum(alone_costs({q: entries[q] for q in queries}, statistics).values())
        shares = trie_share([entries[q] for q in queries])
        if shares is not None:  # the prefix pass runs the group
            step, ratio = PREFIX_STEP_COST, PREFIX_STEP_COST * shares
        else:
            step, ratio = SUBSEQUENCE_STEP_COST, SUBSEQUENCE_STEP_COST * max(0.0, 1.0 - plan.score / plan.non_shared_cost)
        groups.append(subsequence.group(entries, queries, parts, search,
                                        parameters={"step_cost": step},
                                        estimated_cost=(alone * ratio, alone), graph=plan.graph_dict()))
    return groups
