"""GLORIA, the graph-based sharing optimizer (Ma et al., SIGMOD 2022), as a library.

::

    from trendlake.optimizer.gloria import Constants, from_entries, optimize, greedy

    wl = from_entries(entries, rates)            # plan query entries, type -> events/window
    plan = optimize(wl, Constants())             # planner "gloria"
    plan = optimize(wl, Constants(), prune=False)  # "gloria-noprune"
    plan = greedy(wl, Constants())               # "gloria-greedy"
    plan.to_dict()

``model`` (workload, units, sharing keys), ``cost`` (Eq. 2-4), ``graph`` (pools, pruning,
Algorithm 1), ``search`` (node generation, the planners), ``plan`` (the result).
See docs/gloria.md.
"""

from trendlake.optimizer.gloria.cost import Constants, plan_cost, validate
from trendlake.optimizer.gloria.graph import Graph, Node, SearchResult
from trendlake.optimizer.gloria.model import Query, Unit, Workload, from_entries
from trendlake.optimizer.gloria.plan import QSet, SearchStats, TransitionPlan, WorkloadPlan
from trendlake.optimizer.gloria.search import components, greedy, non_shared, optimize

__all__ = [
    "Constants",
    "Graph",
    "Node",
    "QSet",
    "Query",
    "SearchResult",
    "SearchStats",
    "TransitionPlan",
    "Unit",
    "Workload",
    "WorkloadPlan",
    "components",
    "from_entries",
    "greedy",
    "non_shared",
    "optimize",
    "plan_cost",
    "validate",
]
