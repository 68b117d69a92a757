"""What the demo prints about sharing: the nightly plan's decision and, from the newest replay
report in the lake, the measured engine seconds against the plan's estimates."""

from __future__ import annotations

import json
from pathlib import Path

from trendlake.jobs.demo import sharing_summary
from trendlake.jobs.optimize import optimize

from tests.unit.jobs.test_measured import STATS
from tests.unit.jobs.test_measured import TEXT as WORKLOAD


def test_the_summary_names_the_groups_and_compares_with_the_newest_report(tmp_path: Path) -> None:
    wl = tmp_path / "team.etq"
    wl.write_text(WORKLOAD)
    ref = optimize(tmp_path, wl, statistics=STATS)  # planner auto
    text = sharing_summary(tmp_path, wl)
    assert text.startswith(f"nightly plan {ref.plan_id}: planner auto kept ")
    assert "group g0 (kleene): q1, q2; estimated " in text and "rejected none" in text
    assert "estimate against measured" not in text  # no replay yet
    reports = tmp_path / "reports" / "team"
    reports.mkdir(parents=True)
    for run, seconds in (("r1", 9.0), ("r2", 0.3)):  # the newest (by run id) is the one compared
        (reports / f"{run}.json").write_text(json.dumps(
            {"plan_id": ref.plan_id, "run_id": run, "engine_seconds": {"groups": {"g0": seconds}, "queries": {"q3": 0.1}}}))
    text = sharing_summary(tmp_path, wl)
    assert "estimate against measured (replay run r2" in text and "measured 0.300s (75.0%)" in text


def test_the_nightly_default_workload_shares_on_a_generated_day(tmp_path: Path) -> None:
    """The pipeline's default workload (rides_team.etq), planned by ``auto`` from the statistics
    of a generated rides day as the nightly DAG plans it: the district flow queries share the
    event-grained graph of Travel, the demand queries (one query under five windows) share
    panes, every other plan is recorded with why it lost, and the plan passes the engine's
    check."""
    import pyarrow.parquet as pq
    from trendlake.datagen.streams import write_events
    from trendlake.jobs.pipeline import Settings
    from trendlake.jobs.statistics import file_statistics
    from trendlake.schemas import load_stream_schema

    from trendlake import engine, optimizer

    day = tmp_path / "day.parquet"
    write_events("rides", day, 30_000, 7, format="parquet", start="2026-01-05T00:00:00+00:00",
                 rate_per_second=30_000 / 86_400)
    path = Settings.from_env().workload
    assert path.name == "rides_team.etq"
    workload = optimizer.compile_workload(path.read_text(), load_stream_schema("rides"), path=str(path))
    assert 30 <= len(workload.queries) <= 60
    stats = file_statistics(pq.read_table(day), workload, "rides")
    plan = optimizer.build_plan(workload, planner="auto", statistics=stats, stream="rides")
    engine.load_plan(plan)
    flow = {q.name for q in workload.queries if q.name.startswith("flow_")}
    assert len(flow) == 8
    assert any(g["kind"] == "kleene" and set(g["queries"]) == flow for g in plan["sharing"]), plan["sharing"]
    demand = {q.name for q in workload.queries if q.name.startswith("demand_")}
    assert len(demand) == 5
    assert any(g["kind"] == "panes" and set(g["queries"]) == demand for g in plan["sharing"]), plan["sharing"]
    assert plan["estimated_cost"] < next(a["estimated_cost"] for a in plan["alternatives"] if a["planner"] == "none")
