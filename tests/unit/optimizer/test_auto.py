"""The ``auto`` planner: the cheapest estimated plan of the planners it considers, and why
the others lost.

Each considered planner's plan is built on its own (``build_plan(planner=p)``) and its
estimate read from that plan; ``auto`` must keep one of least estimate, record every other
with its estimate and a reason, and its rows are those of the plan it kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.optimizer.planners.auto import CONSIDERED

from tests.unit.optimizer.test_planner_plans import AS_FOUND, sharing_workloads, statistics
from trendlake import engine, optimizer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "planners"


def each_planner(workload: optimizer.Workload, stats: dict) -> dict[str, dict]:
    return {p: optimizer.build_plan(workload, planner=p, statistics=stats) for p in CONSIDERED}


def check_auto(text: str, stats: dict) -> dict:
    workload = optimizer.compile_workload(text)
    auto = optimizer.build_plan(workload, planner="auto", statistics=stats)
    engine.load_plan(auto, workload_hash=optimizer.workload_hash(text))  # a valid plan
    alone = each_planner(workload, stats)
    best = min(p["estimated_cost"] for p in alone.values())
    chosen = auto["chosen_planner"]
    tol = 1e-9 * max(1.0, abs(best))
    assert auto["estimated_cost"] <= best + tol  # never worse than a planner alone
    rejected = {a["planner"]: a for a in auto["alternatives"]}
    for name in CONSIDERED:
        if name != chosen:
            alt = rejected[name]
            assert alt["estimated_cost"] == pytest.approx(alone[name]["estimated_cost"], rel=1e-9, abs=1e-9)
            assert alt["reason"] and chosen in alt["reason"]
    if chosen in CONSIDERED:
        # the first planner of least estimate: none when sharing saves nothing
        assert auto["estimated_cost"] == pytest.approx(best, rel=1e-9, abs=1e-9)
        assert chosen == next(p for p in CONSIDERED if alone[p]["estimated_cost"] <= best + tol)
        assert auto["sharing"] == [dict(g) for g in alone[chosen]["sharing"]]
    else:
        # a combination of planners' groups: strictly cheaper than each, every group one of theirs
        parts = chosen.split("+")
        assert len(parts) >= 2 and set(parts) <= set(CONSIDERED) and auto["estimated_cost"] < best - tol
        offered = [dict(g, id="") for p in parts for g in alone[p]["sharing"]]
        assert all(dict(g, id="") in offered for g in auto["sharing"])
        members = [q for g in auto["sharing"] for q in g["queries"]]
        assert len(members) == len(set(members))
    return auto


@pytest.mark.parametrize("case", ["type_grained_shared", "event_grained_shared", "declined_on_statistics"])
def test_auto_on_the_planner_fixtures(case: str) -> None:
    folder = FIXTURES / case
    auto = check_auto((folder / "workload.etq").read_text(), json.loads((folder / "statistics.json").read_text()))
    expected = json.loads((folder / "expected.json").read_text())
    assert bool(auto["sharing"]) == bool(expected["groups"])  # it shares where the fixture's planners do


@settings(max_examples=20, deadline=None, phases=AS_FOUND)
@given(sharing_workloads(), st.data())
def test_auto_keeps_the_cheapest_plan(text: str, data: st.DataObject) -> None:
    stats = data.draw(statistics(optimizer.compile_workload(text)), label="statistics")
    check_auto(text, stats)


def test_without_statistics_auto_is_none_and_says_why() -> None:
    text = "QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, K+) WITHIN 1 minute;"
    plan = optimizer.build_plan(optimizer.compile_workload(text), planner="auto")
    assert plan["chosen_planner"] == "none" and plan["sharing"] == [] and plan["estimated_cost"] is None
    assert {a["planner"] for a in plan["alternatives"]} == set(CONSIDERED) - {"none"}
    assert all(a["reason"] == "no statistics: plans cannot be estimated" for a in plan["alternatives"])


def test_plan_and_eval_default_to_auto_with_statistics_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trendlake.jobs.cli import main

    wl = tmp_path / "w.etq"
    wl.write_text("QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, K+) WITHIN 1 minute;\n"
                  "QUERY q2 RETURN COUNT(*) PATTERN SEQ(B, K+) WITHIN 1 minute;\n")
    assert main(["plan", str(wl)]) == 0
    assert json.loads(capsys.readouterr().out)["planner"] == "none"
    assert main(["plan", str(wl), "--assume-uniform"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["planner"] == "auto" and plan["chosen_planner"] in CONSIDERED
    assert main(["plan", str(wl), "--assume-uniform", "--planner", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["planner"] == "none"
