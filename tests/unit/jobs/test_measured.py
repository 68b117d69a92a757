"""Estimates against measurements: the engine's timings per sharing group and per query alone,
and ``explain --replay-report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trendlake.jobs.cli import main
from trendlake.jobs.explain import measured_text

from trendlake import engine, optimizer

TEXT = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, K+) WITHIN 1 minute;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(B, K+) WITHIN 1 minute;
QUERY q3 RETURN COUNT(*) PATTERN SEQ(C, D) WITHIN 1 minute;
"""
# K dense and in bursts of one: sharing K+ pays (as in the planner fixtures)
STATS = {"pane_us": 60_000_000, "types": {"K": {"rate_mean": 500.0}, "A": {"rate_mean": 1.0},
                                          "B": {"rate_mean": 1.0}, "C": {"rate_mean": 3.0}, "D": {"rate_mean": 2.0}},
         "bursts": {"*": {"types": {"K": {"mean": 1.0}}}}}


def plan() -> dict:
    return optimizer.build_plan(optimizer.compile_workload(TEXT), planner="auto", statistics=STATS)


def test_the_engine_times_each_group_and_each_query_alone() -> None:
    p = plan()
    assert p["chosen_planner"] in ("hamlet", "hamlet-static") and [g["queries"] for g in p["sharing"]] == [["q1", "q2"]]
    rows = [{"type": t, "ts": i, "x": i} for i, t in enumerate("ABKKCKDK" * 20)]
    timings: dict = {}
    got = engine.evaluate(p, engine.table_from_rows(rows), timings=timings)
    assert got == engine.evaluate(optimizer.build_plan(optimizer.compile_workload(TEXT)), engine.table_from_rows(rows))
    assert set(timings) == {"groups", "queries"}
    assert set(timings["groups"]) == {"g0"} and set(timings["queries"]) == {"q3"}
    assert all(v > 0 for part in timings.values() for v in part.values())


def test_explain_compares_estimates_with_a_replay_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = plan()
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(p))
    report = {"plan_id": p["plan_id"], "run_id": "r1", "engine_seconds": {"groups": {"g0": 0.3}, "queries": {"q3": 0.1}}}
    (tmp_path / "r.json").write_text(json.dumps(report))
    assert main(["explain", str(path), "--replay-report", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    g0 = p["sharing"][0]["estimated_cost"]
    alone_q3 = 5.0  # q3 alone: C (3 a window) and D (2), bursts of one: 5 steps per window
    total = g0["shared"] + alone_q3
    assert f"group g0 (2 queries): estimated {g0['shared']:.6g} steps/window ({g0['shared'] / total:.1%}), measured 0.300s (75.0%)" in out
    assert f"query q3 (alone): estimated 5 steps/window ({alone_q3 / total:.1%}), measured 0.100s (25.0%)" in out
    non_shared = g0["non_shared"] + alone_q3  # the group's non-shared estimate is q1's and q2's alone
    assert f"without sharing (estimated {non_shared:.6g} steps/window): about {0.4 / total * non_shared:.3f}s" in out
    # what is not a report is a one-line error
    (tmp_path / "bad.json").write_text("{}")
    assert main(["explain", str(path), "--replay-report", str(tmp_path / "bad.json")]) == 2
    assert "not a replay report" in capsys.readouterr().err


def test_measured_text_of_a_plan_without_statistics() -> None:
    p = optimizer.build_plan(optimizer.compile_workload(TEXT))
    text = measured_text(p, {"plan_id": p["plan_id"], "engine_seconds": {"queries": {"q1": 0.2}}})
    assert "no estimates" in text and "query q1 (alone): no estimate, measured 0.200s" in text
