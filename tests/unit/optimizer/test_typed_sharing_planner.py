"""The Hamlet planners on real statistics of type-grained workloads (`hamlet-typed`).

Statistics are computed from generated stocks events as `trendlake eval --planner` computes
them (`jobs.statistics.file_statistics`). Twelve queries share on the compiled pass's
constants, with one threshold on the Kleene type (one class: one coefficient update per
event of it serves all of them) or a threshold each (every row visited once for the twelve
instead of once per query); two queries with a threshold each, whose own types are 60% of
the stream, are planned alone: the pass's rows cost more than the two queries' alone
(docs/engine.md, "When sharing pays", where these shapes are measured). Either way the
plan's rows equal each query alone.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from trendlake.datagen.streams import generate
from trendlake.datagen.workloads import generate_workload
from trendlake.jobs.statistics import file_statistics
from trendlake.optimizer.cost import (
    CLASS_UPDATE_COST,
    OWN_STEP_COST,
    PYTHON_SNAPSHOT_COST,
    SHARED_ROW_COST,
)
from trendlake.schemas import load_stream_schema

from trendlake import engine, optimizer


def _case(share: float, same_threshold: bool, queries: int) -> tuple[pa.Table, str]:
    schema = load_stream_schema("stocks")
    rest = (1.0 - share) / (len(schema["event_types"]) - 1)
    mix = {t: (share if t == "Trade" else rest) for t in schema["event_types"]}
    table = pa.concat_tables(list(generate("stocks", 20_000, seed=3, burst=4.5, mix=mix)))
    prices = np.asarray(table.column("price").to_numpy(zero_copy_only=False), dtype=float)
    ranges = {"price": (float(np.quantile(prices, 0.05)), float(np.quantile(prices, 0.95)))}
    text = generate_workload("hamlet-typed", queries, 3, schema, ranges=ranges, kleene_type="Trade", attribute="price",
                             same_threshold=same_threshold)
    return table, text


@pytest.mark.parametrize("planner", ["hamlet", "hamlet-static"])
@pytest.mark.parametrize(("share", "same_threshold", "queries", "shared"),
                         [(0.7, True, 12, 12), (0.4, False, 12, 12), (0.4, False, 2, 0)])
def test_planner_shares_type_grained_queries_where_it_pays(
    planner: str, share: float, same_threshold: bool, queries: int, shared: int
) -> None:
    table, text = _case(share, same_threshold, queries)
    workload = optimizer.compile_workload(text)
    plan = optimizer.build_plan(workload, planner=planner, statistics=file_statistics(table, workload, None))
    assert sum(len(g["queries"]) for g in plan["sharing"]) == shared
    for g in plan["sharing"]:
        assert g["parameters"] == {"snapshot_cost": PYTHON_SNAPSHOT_COST, "shared_row_cost": SHARED_ROW_COST,
                                   "class_update_cost": CLASS_UPDATE_COST, "own_step_cost": OWN_STEP_COST}
        assert g["estimated_cost"]["shared"] < g["estimated_cost"]["non_shared"]
    alone = optimizer.build_plan(workload)
    assert engine.evaluate(plan, table) == engine.evaluate(alone, table)
