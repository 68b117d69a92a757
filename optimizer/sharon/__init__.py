"""Sharon, the shared online event sequence aggregation optimizer (Poppe et al., ICDE
2018), as a library: fixed-length sequence queries share the counts of common
sub-patterns.

::

    from trendlake.optimizer.sharon import choose, from_entries, optimize

    plan = choose(entries, rates)                # plan query entries, type -> events/window
    wl = from_entries(entries, rates)
    plan = optimize(wl, "sharon")                # reduction + plan finder (optimal)
    plan = optimize(wl, "greedy")                # GWMIN
    plan = optimize(wl, "exhaustive")            # every subset (small graphs only)
    plan.shared                                  # chosen candidates with their benefits

``model`` (queries, candidates, conflicts), ``cost`` (the benefit model, Eq. 1-8),
``resolve`` (options, §VII), ``graph`` (the Sharon graph, GWMIN, the reduction),
``search`` (the searches), ``plan`` (the result). See docs/sharon.md.
"""

from trendlake.optimizer.sharon.cost import benefit, non_shared, non_shared_cost
from trendlake.optimizer.sharon.graph import Graph, Reduction, gwmin, gwmin_bound, reduce
from trendlake.optimizer.sharon.model import (
    Candidate,
    Query,
    Workload,
    conflict,
    conflict_masks,
    conflicts,
    from_entries,
)
from trendlake.optimizer.sharon.plan import SearchStats, Shared, SharingPlan
from trendlake.optimizer.sharon.resolve import expand
from trendlake.optimizer.sharon.search import (
    EXHAUSTIVE_LIMIT,
    SEARCHES,
    Selection,
    branch_and_bound,
    choose,
    exhaustive,
    graph_of,
    greedy,
    optimize,
    plan_finder,
    sharon,
    vertices_of,
)

__all__ = [
    "EXHAUSTIVE_LIMIT",
    "SEARCHES",
    "Candidate",
    "Graph",
    "Query",
    "Reduction",
    "SearchStats",
    "Selection",
    "Shared",
    "SharingPlan",
    "Workload",
    "benefit",
    "branch_and_bound",
    "choose",
    "conflict",
    "conflict_masks",
    "conflicts",
    "exhaustive",
    "expand",
    "from_entries",
    "graph_of",
    "greedy",
    "gwmin",
    "gwmin_bound",
    "non_shared",
    "non_shared_cost",
    "optimize",
    "plan_finder",
    "reduce",
    "sharon",
    "vertices_of",
]
