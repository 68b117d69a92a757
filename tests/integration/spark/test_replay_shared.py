"""Replay of a shared plan (every sharing kind: Hamlet's shared Kleene, GLORIA's shared
sequences, Sharon's shared sub-sequences, shared panes) on real Spark and Delta.

The plan travels with the job: each executor runs the sharing group of the
plan on its partitions. The result tables must equal `trendlake eval` of the
same events under the plan that shares nothing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from trendlake.engine.timeline import parse_ts
from trendlake.jobs.optimize import current_plan, optimize, workload_name
from trendlake.jobs.replay import column_name, replay

from tests.integration.spark.test_replay import FROM, FROM_US, TO, TO_US, comparable, result_rows
from trendlake import engine, optimizer

pytestmark = pytest.mark.spark

WORKLOAD = """
QUERY req_travel
RETURN district, COUNT(*), SUM(Travel.duration) AS total, MAX(Travel.speed) AS fastest
PATTERN SEQ(Request, Travel+)
WHERE [driver, rider]
GROUP-BY district
WITHIN 30 minutes SLIDE 10 minutes;

QUERY travel_pickup
RETURN district, COUNT(*), AVG(Travel.duration) AS avg_duration, MIN(Travel.speed) AS slowest
PATTERN SEQ(Travel+, Pickup)
WHERE [driver, rider]
GROUP-BY district
WITHIN 30 minutes SLIDE 10 minutes;

QUERY req_travel_dropoff
RETURN district, COUNT(*), COUNT(Travel) AS travels, SUM(Travel.speed) AS speeds, MAX(Travel.duration) AS longest
PATTERN SEQ(Request, Travel+, Dropoff)
WHERE [driver, rider]
GROUP-BY district
WITHIN 30 minutes SLIDE 10 minutes;
"""

# statistics under which sharing Travel+ pays (as a bursty Travel stream would give)
DENSE_TRAVEL = {
    "pane_us": 600_000_000,
    "types": {"Travel": {"rate_mean": 500.0}, "Request": {"rate_mean": 2.0},
              "Pickup": {"rate_mean": 2.0}, "Dropoff": {"rate_mean": 2.0}},
    "bursts": {"*": {"types": {"Travel": {"mean": 1.0}}}},
}


# the same queries event-grained: rising travel durations, one shared graph of Travel
RISING = WORKLOAD.replace("WHERE [driver, rider]", "WHERE [driver, rider] AND Travel.duration < NEXT(Travel).duration")


# one query under three windows: one panes group (Weave Share's "Shared")
WINDOWS = "".join(
    f"QUERY demand_{w}_{s}\nRETURN district, COUNT(*), COUNT(Travel) AS travels\nPATTERN SEQ(Request, Travel+)\n"
    f"WHERE [driver, rider]\nGROUP-BY district\nWITHIN {w} minutes SLIDE {s} minutes;\n\n"
    for w, s in ((30, 10), (20, 5), (45, 15))
)


# fixed-length funnels with a common prefix: one subsequence group (Sharon)
FUNNELS = "".join(
    f"QUERY funnel_{t.lower()}\nRETURN district, COUNT(*)\nPATTERN SEQ(Request, Travel, {t})\n"
    f"WHERE [driver, rider]\nGROUP-BY district\nWITHIN 30 minutes SLIDE 10 minutes;\n\n"
    for t in ("Pickup", "Dropoff", "Cancel")
)

# a shared nested Kleene sub-pattern: one sequence group (GLORIA)
NESTED = "".join(
    f"QUERY nested_{t.lower()}\nRETURN district, COUNT(*), COUNT(Travel) AS travels\n"
    f"PATTERN SEQ(SEQ(Request, Travel+)+, {t})\nWHERE [driver, rider]\nGROUP-BY district\n"
    f"WITHIN 30 minutes SLIDE 10 minutes;\n\n"
    for t in ("Pickup", "Dropoff")
)


@pytest.mark.parametrize(("text", "planner", "kind"), [
    (WORKLOAD, "hamlet-static", "kleene"), (RISING, "hamlet-static", "kleene"), (WINDOWS, "shared-panes", "panes"),
    (FUNNELS, "sharon", "subsequence"), (NESTED, "gloria", "sequence"),
], ids=["type-grained", "event-grained", "panes", "subsequence", "sequence"])
def test_replay_of_a_shared_plan_equals_eval_of_each_query_alone(
    sample_lake, lake_copy: Path, tmp_path: Path, spark, text: str, planner: str, kind: str
) -> None:
    wl = tmp_path / "shared_rides.etq"
    wl.write_text(text)
    optimize(lake_copy, wl, stream="rides", statistics=DENSE_TRAVEL, planner=planner)
    plan = current_plan(lake_copy, workload_name(wl))
    names = sorted(q["name"] for q in plan["queries"])
    assert [(g["kind"], sorted(g["queries"])) for g in plan["sharing"]] == [(kind, names)]
    report = replay(lake_copy, wl, FROM, TO, spark=spark)
    # the engine seconds measured on the executors: the group's, no query alone
    assert set(report.engine_seconds["groups"]) == {"g0"} and report.engine_seconds["groups"]["g0"] > 0
    assert report.engine_seconds["queries"] == {}
    stored = json.loads((lake_copy / "reports" / workload_name(wl) / f"{report.run_id}.json").read_text())
    assert stored == report.to_dict() and stored["engine_seconds"]["groups"]["g0"] > 0

    alone = optimizer.build_plan(optimizer.compile_workload(text), stream="rides")
    table = engine.table_from_events(engine.read_events(sample_lake.events))
    want: dict[str, list[dict]] = {q["name"]: [] for q in plan["queries"]}
    for row in engine.evaluate(alone, table):
        if FROM_US < row["window_end"] <= TO_US:
            want[row["query"]].append(row)
    assert sum(len(v) for v in want.values()) > 10, "the sample must produce trends for the shared workload"
    for q in plan["queries"]:
        name = q["name"]
        got = [r for r in result_rows(lake_copy, name) if FROM_US < parse_ts(r["window_end"]) <= TO_US]
        assert len(got) == len(want[name]) == report.rows_written[name], name
        index = {(r["district"], parse_ts(r["window_start"])): r for r in got}
        for w in want[name]:
            r = index[(w["district"], w["window_start"])]
            assert r["plan_id"] == plan["plan_id"]
            for agg in q["aggregates"]:
                a, b = comparable(r[column_name(agg)]), w[agg["name"]]
                if isinstance(a, float) or isinstance(b, float):
                    assert math.isclose(a, b, rel_tol=1e-9), (name, agg["name"], a, b)
                else:
                    assert a == b, (name, agg["name"], a, b)
