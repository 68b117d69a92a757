"""A new sharing kind is its own files plus one registry line per side (issue: kinds as plug-ins).

The toy kind ``twins`` (``tests/toykind``: engine side, body schema,
candidates) is registered in ``engine.shared.KINDS`` and
``optimizer.candidates.KINDS`` and nowhere else; then a plan the
``share-all`` planner writes with it passes the plan reader (the composed
schema and the kind's own check), runs through ``engine.evaluate`` with the
rows of each query alone, is reported by ``eval --sharing-out``'s report and
described by ``explain``. Without the engine's line the same plan is refused.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trendlake.engine import shared
from trendlake.optimizer import candidates

from tests.toykind import candidates as toy_candidates
from tests.toykind.kind import TWINS
from trendlake import engine, optimizer

TEXT = """QUERY a1 RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B) WITHIN 10 seconds SLIDE 5 seconds;
QUERY a2 RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B) WITHIN 10 seconds SLIDE 5 seconds;
QUERY a3 RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B) WITHIN 10 seconds SLIDE 5 seconds;
QUERY other RETURN COUNT(*) PATTERN SEQ(A, B) WHERE B.x > 2 WITHIN 10 seconds SLIDE 5 seconds;
"""


def rows() -> list[dict[str, Any]]:
    out = []
    for i in range(40):
        out.append({"type": "AB"[i % 3 % 2], "ts": i * 0.7, "seq": i, "x": (i * 7) % 5})
    return out


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(shared.KINDS, TWINS.name, TWINS)  # the engine's registry line
    monkeypatch.setitem(candidates.KINDS, "twins", toy_candidates.candidates)  # the optimizer's
    # the built-in kinds' candidates aside, so that share-all forms twins groups (the sequence
    # kind would take these queries first)
    for kind in [k for k in candidates.KINDS if k != "twins"]:
        monkeypatch.delitem(candidates.KINDS, kind)


def shared_plan() -> dict[str, Any]:
    return optimizer.build_plan(optimizer.compile_workload(TEXT), planner="share-all")


def test_a_registered_kind_is_planned_checked_run_reported_and_explained(registered: None) -> None:
    from trendlake.jobs.evaluate import sharing_report
    from trendlake.jobs.explain import explain_text

    plan = shared_plan()
    (group,) = plan["sharing"]
    assert (group["kind"], group["queries"], group["body"]) == ("twins", ["a1", "a2", "a3"], {"runs": "a1"})
    loaded = engine.load_plan(plan, workload_hash=optimizer.workload_hash(TEXT))  # schema + check + supports
    table = engine.table_from_rows(rows())
    stats: dict[str, Any] = {"g0": TWINS.new_stats()}
    got = engine.evaluate(loaded, table, shared_stats=stats)
    alone = engine.evaluate(optimizer.build_plan(optimizer.compile_workload(TEXT)), table)
    assert got == alone and {r["query"] for r in got} == {"a1", "a2", "a3", "other"}
    assert (stats["g0"].computed, stats["g0"].copied) == (1, 2)
    assert sharing_report(plan, stats)["groups"] == [
        {"id": "g0", "kind": "twins", "queries": ["a1", "a2", "a3"], "computed": 1, "copied": 2}]
    assert "group g0: twins — 3 twins of a1, computed once" in explain_text(loaded)


def test_the_kinds_own_rules_and_schema_apply(registered: None) -> None:
    plan = shared_plan()
    bad = copy.deepcopy(plan)
    bad["sharing"][0]["queries"].append("other")
    with pytest.raises(engine.PlanError, match="sharing group g0: query other is not a twin of a1"):
        engine.check_plan(bad)
    bad = copy.deepcopy(plan)
    bad["sharing"][0]["body"]["copies"] = 2
    bad["content_hash"] = engine.plan.content_hash(bad)
    with pytest.raises(engine.PlanError, match="does not match the plan schema"):
        engine.load_plan(bad, workload_hash=optimizer.workload_hash(TEXT))


def test_without_the_engines_registry_line_the_kind_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(candidates, "KINDS", {"twins": toy_candidates.candidates})
    plan = shared_plan()
    assert plan["sharing"][0]["kind"] == "twins"
    with pytest.raises(engine.PlanError, match="does not match the plan schema|not known to this engine"):
        engine.load_plan(plan, workload_hash=optimizer.workload_hash(TEXT))
    with pytest.raises(engine.PlanError, match="kind twins is not known to this engine"):
        engine.check_plan(plan)
