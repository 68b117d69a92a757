"""The cost model of event-grained graphs, shared (``optimizer.cost.graph_cost``) and alone
(``alone_costs``), and the planner's use of the statistics' partition count."""

from __future__ import annotations

import pytest
from trendlake.optimizer import parse_workload
from trendlake.optimizer.cost import GRAPH_UNIT_COST, alone_costs, graph_cost
from trendlake.optimizer.plan import build_plan
from trendlake.optimizer.statistics import Statistics


def test_costs_by_hand() -> None:
    # one partition, 10 events of K per window, 2 snapshots, two queries with 3 own events each:
    # alone 2 * (45 + 10) + 3 + 3 = 116 edges; shared 45 * (1 + 0.1 * 2) + 10 * 2 + 2 * (2 + 3 * 3) = 96
    shared, alone = graph_cost(10, 2, {"q1": 3, "q2": 3}, 0.1)
    assert alone == pytest.approx(116)
    assert shared == pytest.approx(96)


def test_partitions_split_the_graph() -> None:
    # the same stream in 5 partitions: each query builds 5 graphs of 2 events
    shared, alone = graph_cost(10, 10, {"q1": 3, "q2": 3}, 0.1, partitions=5)
    assert alone == pytest.approx(2 * 5 * (1 + 2) + 6)
    assert shared == pytest.approx(5 * (1 * 1.2 + 2 * 2) + 2 * (5 * 2 + 3 * 3))


def test_many_snapshots_per_edge_do_not_pay() -> None:
    shared, alone = graph_cost(100, 100, {"q1": 50, "q2": 50}, 0.1)
    assert shared > alone  # every edge carries 100 snapshots' coefficients
    shared, alone = graph_cost(100, 2, {f"q{i}": 2 for i in range(10)}, 0.1)
    assert shared < alone / 5  # ten queries, few snapshots: about one graph instead of ten


RISING = """QUERY r1 RETURN g, COUNT(*) PATTERN SEQ(A, K+) WHERE [p] AND K.x < NEXT(K).x GROUP-BY g WITHIN 1 minute;
QUERY r2 RETURN g, COUNT(*) PATTERN SEQ(B, K+) WHERE [p] AND K.x < NEXT(K).x GROUP-BY g WITHIN 1 minute;
QUERY r3 RETURN g, COUNT(*) PATTERN SEQ(K+, C) WHERE [p] AND K.x < NEXT(K).x GROUP-BY g WITHIN 1 minute;"""


@pytest.mark.parametrize(("group_by", "partitions", "shares"), [
    (None, None, False),            # 600 K events and 60 snapshots per window in one graph: not worth it
    (["g", "p"], 60, True),          # 60 partitions: 10 K events and one snapshot each
    (["g"], 60, False),              # counted for another partitioning: not used
])
def test_planner_reads_the_partition_count(group_by, partitions, shares) -> None:
    stats = {"pane_us": 60_000_000, "group_by": group_by,
             "types": {"K": {"rate_mean": 600.0}, "A": {"rate_mean": 20.0}, "B": {"rate_mean": 20.0},
                       "C": {"rate_mean": 20.0}},
             "groups": {"count": partitions, "by_type": {"K": partitions}} if partitions else None,
             "bursts": {"*": {"types": {"K": {"mean": 1.0}}}}}
    plan = build_plan(parse_workload(RISING), planner="hamlet", statistics=stats)
    assert bool(plan["sharing"]) == shares


def test_planner_reads_the_partitions_of_any_partitioning() -> None:
    # statistics grouped by nothing: the "partitions" entry of the queries' partitioning decides
    stats = {"pane_us": 60_000_000, "types": {"K": {"rate_mean": 600.0}, "A": {"rate_mean": 20.0},
                                                "B": {"rate_mean": 20.0}, "C": {"rate_mean": 20.0}},
             "partitions": [{"partition_by": ["g", "p"], "count": 60, "by_type": {"K": 60}}],
             "bursts": {"*": {"types": {"K": {"mean": 1.0}}}}}
    assert build_plan(parse_workload(RISING), planner="hamlet", statistics=stats)["sharing"]
    stats["partitions"][0]["partition_by"] = ["p", "g"]  # another partitioning: one partition assumed
    assert not build_plan(parse_workload(RISING), planner="hamlet", statistics=stats)["sharing"]


def test_queries_alone_cost_their_graph_or_their_steps() -> None:
    # 10 partitions, 30 K events per window (3 per partition), K in bursts of 3, 10 A events
    stats = Statistics.from_dict({
        "pane_us": 60_000_000, "types": {"K": {"rate_mean": 30.0}, "A": {"rate_mean": 10.0}},
        "partitions": [{"partition_by": ["g"], "count": 10}],
        "bursts": {"*": {"types": {"K": {"mean": 3.0}, "A": {"mean": 1.0}}}}})
    text = """QUERY typed RETURN g, COUNT(*) PATTERN SEQ(A, K+) GROUP-BY g WITHIN 1 minute;
QUERY mixed RETURN g, COUNT(*) PATTERN SEQ(A, K+) WHERE K.x < NEXT(K).x GROUP-BY g WITHIN 1 minute;
QUERY picky RETURN g, COUNT(*) PATTERN SEQ(A, K+) WHERE K.y = 1 AND K.x < NEXT(K).x GROUP-BY g WITHIN 1 minute;
QUERY next RETURN g, COUNT(*) PATTERN SEQ(A, K+) SEMANTICS skip-till-next-match WHERE K.x < NEXT(K).x GROUP-BY g WITHIN 1 minute;"""
    plan = build_plan(parse_workload(text))
    entries = {q["name"]: q for q in plan["queries"]}
    cost = alone_costs(entries, stats)
    # typed: 10 steps of K (30 events in bursts of 3) and 10 of A
    assert cost["typed"] == pytest.approx(20)
    # mixed: K is a graph in each of 10 partitions: 3 vertices and 3 edges tried; A 10 steps
    assert cost["mixed"] == pytest.approx(10 + GRAPH_UNIT_COST * 10 * (3 + 3))
    # a local predicate on K the statistics do not measure: half of K's events (1.5 per partition)
    assert cost["picky"] == pytest.approx(10 + GRAPH_UNIT_COST * 10 * (1.5 + 1.5 * 0.5 / 2))
    # skip-till-next-match (event-grained): every variable a vertex, no pairs tried
    assert cost["next"] == pytest.approx(GRAPH_UNIT_COST * (10 * 3 + 10 * 1))
