"""Fixture-driven planner tests: workload + statistics -> the groups a planner forms.

Each folder ``tests/fixtures/planners/CASE/`` holds ``workload.etq``,
``statistics.json`` (the document ``trendlake stats`` and ``trendlake plan
--stats-out`` write) and ``expected.json``: the planners to run, ``why`` (the
derivation of the expected groups from the planner's rule and cost model,
worked by hand) and ``groups``, each with its kind, its queries and the body
fields that matter (for ``kleene``: the shared type, each query's shared
variable, the grain — ``type`` or ``event``: whether the group shares the
event-grained graph — and the snapshot levels). Costs are not compared
to the last digit; which queries are grouped, and how, is. A new case is a
new folder; expected files are derived by hand, never copied from output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trendlake import engine, optimizer

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "planners"
CASES = sorted(p.name for p in FOLDER.iterdir() if p.is_dir())


def summary(group: dict[str, Any], stated: set[str]) -> dict[str, Any]:
    """What a fixture states about a group: its kind, its queries and the body fields the
    fixture names (the kind's own: for kleene the shared type, each query's variable, the
    grain and the snapshot levels)."""
    return {"kind": group["kind"], "queries": sorted(group["queries"]),
            "body": {k: group["body"].get(k) for k in sorted(stated)}}


def test_the_cases_cover_the_planners_rules() -> None:
    assert len(CASES) >= 6
    for name in CASES:
        expected = json.loads((FOLDER / name / "expected.json").read_text())
        assert set(expected) == {"planners", "why", "groups"} and len(expected["why"]) > 40, name
    grains = {g["body"]["grain"] for name in CASES
              for g in json.loads((FOLDER / name / "expected.json").read_text())["groups"]}
    assert grains == {"type", "event"}
    assert any(not json.loads((FOLDER / name / "expected.json").read_text())["groups"] for name in CASES)


@pytest.mark.parametrize("name", CASES)
def test_fixture(name: str) -> None:
    folder = FOLDER / name
    text = (folder / "workload.etq").read_text()
    statistics = json.loads((folder / "statistics.json").read_text())
    expected = json.loads((folder / "expected.json").read_text())
    workload = optimizer.compile_workload(text, path=str(folder / "workload.etq"))
    for planner in expected["planners"]:
        plan = optimizer.build_plan(workload, planner=planner, statistics=statistics)
        engine.load_plan(plan, workload_hash=optimizer.workload_hash(text))  # and it passes the plan check
        want = sorted(expected["groups"], key=lambda g: g["queries"])
        stated = {k for g in want for k in g["body"]}
        got = sorted((summary(g, stated) for g in plan["sharing"]), key=lambda g: g["queries"])
        assert got == want, f"{name}, planner {planner}: {expected['why']}"
        decision = "dynamic" if planner == "hamlet" else "static"
        assert all(g["body"]["decision"] == decision for g in plan["sharing"])
        assert all(g["estimated_cost"]["shared"] < g["estimated_cost"]["non_shared"] for g in plan["sharing"])
