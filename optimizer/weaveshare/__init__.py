"""Weave Share, the window-sharing optimizer (Guirguis et al., SIGMOD 2011), as a library.

::

    from trendlake.optimizer.weaveshare import Query, group_entries, from_entries, plan_trees

    for entries in group_entries(plan["queries"]):       # one pattern and partitioning each
        trees = plan_trees(from_entries(entries), rate)  # rate: events per µs
        # each tree: queries, composite_slide, edges, edge_rate, overlap, cost

    optimize(queries, rate, "weaveshare" | "shared-panes" | "none")   # a WeavePlan
    incremental(stored_trees, queries, rate, tolerance=0.2)           # an Incremental

``model`` (queries, fragments, grouping), ``edges`` (composite slide, edge bitmap,
weaveability), ``cost`` (Eq. 1-5, the cost look-up table), ``search`` (the greedy merge,
the baselines, the incremental version), ``plan`` (the results). See docs/weaveshare.md.
The planners ``weaveshare`` and ``shared-panes`` (``optimizer.planners.panes``) turn its
trees into ``panes`` groups.
"""

from trendlake.optimizer.weaveshare.cost import (
    CostTable,
    Model,
    TreeState,
    merge_benefit,
    overlap_factor,
)
from trendlake.optimizer.weaveshare.edges import (
    DEFAULT_MAX_COMPOSITE,
    EdgeBitmap,
    common_edges,
    composite_slide,
    edges_of,
    weaveability,
)
from trendlake.optimizer.weaveshare.model import (
    Query,
    from_entries,
    grain,
    group_entries,
    sharing_key,
)
from trendlake.optimizer.weaveshare.plan import Incremental, Merge, Tree, WeavePlan
from trendlake.optimizer.weaveshare.search import (
    PLANNERS,
    evaluate,
    greedy_merge,
    incremental,
    optimize,
    plan_trees,
)

__all__ = [
    "DEFAULT_MAX_COMPOSITE",
    "PLANNERS",
    "CostTable",
    "EdgeBitmap",
    "Incremental",
    "Merge",
    "Model",
    "Query",
    "Tree",
    "TreeState",
    "WeavePlan",
    "common_edges",
    "composite_slide",
    "edges_of",
    "evaluate",
    "from_entries",
    "grain",
    "greedy_merge",
    "group_entries",
    "incremental",
    "merge_benefit",
    "optimize",
    "overlap_factor",
    "plan_trees",
    "sharing_key",
    "weaveability",
]
