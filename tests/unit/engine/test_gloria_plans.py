"""Plans of the GLORIA planners and ``auto`` give exactly the rows of the ``none`` plan.

Workloads of 2-8 queries sharing a SEQ or nested-Kleene core (the generator of
``test_shared_sequence``: their own prefixes, suffixes, local predicates,
aggregates and windows), planned by ``gloria``, ``gloria-noprune``,
``gloria-greedy``, ``hamlet`` and ``auto`` under the stated uniform
assumption or statistics that make A and B frequent, evaluated on random
streams: the rows equal the ``none`` plan's and, on small streams, the
two-step reference's. On the derandomized draw the GLORIA planners share in
a tenth of the cases or more, and ``auto`` keeps a GLORIA plan where it is
estimated cheapest.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan

from tests.randomized import once
from tests.unit.engine.engine_adapter import run_engine, same_rows
from tests.unit.engine.test_shared_sequence import streams, workloads
from trendlake import engine

PLANNERS = ("gloria", "gloria-noprune", "gloria-greedy", "hamlet", "auto")


@st.composite
def statistics(draw: Any) -> dict[str, Any]:
    """The uniform assumption, or A and B far more frequent than the other types (as GLORIA's
    shared core would be), in bursts of one."""
    if draw(once.integers(0, 3)) == 0:
        return {"assumption": "uniform"}
    core = draw(once.floats(20, 400))
    other = draw(once.floats(0.5, 10))
    types = {t: {"events": 0, "rate_mean": core if t in "AB" else other, "rate_max": 0} for t in "ABCDEFG"}
    return {"pane_us": 5_000_000, "types": types, "bursts": {"*": {"types": {}}}}


def plans(text: str, stats: dict[str, Any]) -> dict[str, dict[str, Any]]:
    workload = parse_workload(text)
    return {p: build_plan(workload, planner=p, statistics=stats) for p in PLANNERS}


@settings(max_examples=30, deadline=None)
@given(workloads(), statistics(), streams((20, 50)))
def test_gloria_and_auto_plans_equal_the_none_plan(text: str, stats: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    table = engine.table_from_rows(rows)
    want = engine.evaluate(build_plan(parse_workload(text), planner="none"), table)
    for planner, plan in plans(text, stats).items():
        engine.load_plan(plan, workload_hash=plan["workload_hash"])  # the plan check
        got = engine.evaluate(plan, table)
        assert same_rows(got, want), (planner, text, plan["sharing"])


@settings(max_examples=10, deadline=None)
@given(workloads(), statistics(), streams((6, 12)))
def test_gloria_plans_equal_the_two_step_reference(text: str, stats: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    want = run_engine(build_plan(parse_workload(text), planner="none"), rows, "twostep")
    for planner, plan in plans(text, stats).items():
        if planner.startswith("gloria"):
            assert same_rows(run_engine(plan, rows, "auto"), want), (planner, text)


def test_the_gloria_planners_share_on_such_workloads() -> None:
    """The differential workloads exercise the sequence executor, not only plans alone."""
    seen: Counter[str] = Counter()

    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(workloads(), statistics())
    def count(text: str, stats: dict[str, Any]) -> None:
        seen["total"] += 1
        for planner, plan in plans(text, stats).items():
            if "sequence" in {g["kind"] for g in plan["sharing"]}:
                seen[f"{planner} shares"] += 1

    count()
    print(f"\n{dict(seen)}")
    # 9 of 60 on the derandomized draw: the others' queries share no core under one window,
    # or the statistics make sharing cost more
    for planner in ("gloria", "gloria-noprune", "gloria-greedy"):
        assert seen[f"{planner} shares"] >= 0.1 * seen["total"], seen


# two queries sharing C -> A and the cycle SEQ(A, G, B)+, with A and B far more frequent
SHARED_CYCLE = """QUERY q0 RETURN g, COUNT(*), COUNT(A), COUNT(B) PATTERN SEQ(C, SEQ(A, G, B)+, F) WHERE B.x < 5 GROUP-BY g WITHIN 10 seconds;
QUERY q1 RETURN g, MAX(A.x), SUM(D.x), COUNT(*) PATTERN SEQ(C, SEQ(A, G, B)+, D) WHERE B.x < 5 GROUP-BY g WITHIN 10 seconds;"""
DENSE_AB = {"pane_us": 5_000_000, "types": {t: {"events": 0, "rate_mean": 240.0 if t in "AB" else 2.0, "rate_max": 0}
                                            for t in "ABCDFG"}}


def test_auto_keeps_the_gloria_plan_where_it_is_estimated_cheapest() -> None:
    plan = build_plan(parse_workload(SHARED_CYCLE), planner="auto", statistics=DENSE_AB)
    assert plan["chosen_planner"] == "gloria", plan["alternatives"]
    assert [(g["kind"], g["queries"]) for g in plan["sharing"]] == [("sequence", ["q0", "q1"])]
    rows = [{"type": t, "ts": i % 14, "seq": i, "x": i % 7, "g": i // 14} for i, t in enumerate("CAGBAGBDFCAGBF" * 3)]
    table = engine.table_from_rows(rows)
    got = engine.evaluate(plan, table)
    assert got and same_rows(got, engine.evaluate(build_plan(parse_workload(SHARED_CYCLE), planner="none"), table))


# count-only queries (q0, q1) and queries with sums (q2, q3) sharing C -> A -> B
MIXED = """QUERY q0 RETURN g, COUNT(*) PATTERN SEQ(C, A, B, F) GROUP-BY g WITHIN 10 seconds;
QUERY q1 RETURN g, COUNT(*), COUNT(B) PATTERN SEQ(C, A, B, D) GROUP-BY g WITHIN 10 seconds;
QUERY q2 RETURN g, SUM(B.x) PATTERN SEQ(C, A, B, F) GROUP-BY g WITHIN 10 seconds;
QUERY q3 RETURN g, COUNT(*), MAX(A.x) PATTERN SEQ(C, A, B, D) GROUP-BY g WITHIN 10 seconds;"""


def _gloria(compiled_cost: float, python_cost: float) -> dict[str, Any]:
    from unittest.mock import patch

    from trendlake.optimizer.planners import gloria

    with patch.object(gloria, "SEQUENCE_COMPILED_STEP_COST", compiled_cost), \
            patch.object(gloria, "SEQUENCE_STEP_COST", python_cost):
        return build_plan(parse_workload(MIXED), planner="gloria", statistics=DENSE_AB)


def test_a_group_is_estimated_with_the_step_cost_of_its_executor() -> None:
    from trendlake.optimizer.candidates.kleene import counts_only
    from trendlake.optimizer.cost import SEQUENCE_COMPILED_STEP_COST, SEQUENCE_STEP_COST

    plan = build_plan(parse_workload(MIXED), planner="gloria", statistics=DENSE_AB)
    entries = {q["name"]: q for q in plan["queries"]}
    assert plan["sharing"]
    for g in plan["sharing"]:
        counting = all(counts_only(entries[q]) for q in g["queries"])
        assert g["parameters"]["step_cost"] == (SEQUENCE_COMPILED_STEP_COST if counting else SEQUENCE_STEP_COST)


def test_count_only_queries_leave_a_mixed_group_where_that_saves_more() -> None:
    rows = [{"type": t, "ts": i % 12, "seq": i, "x": i % 7, "g": i // 24} for i, t in enumerate("CABABDFCAABF" * 4)]
    table = engine.table_from_rows(rows)
    want = engine.evaluate(build_plan(parse_workload(MIXED), planner="none"), table)
    # the compiled pass cheap, the Python executor dear: the count-only queries share alone
    # (GLORIA's ratio is about 1/160 here: a factor of 1000 makes the group dearer than alone)
    plan = _gloria(0.2, 1000.0)
    assert [(g["queries"], g["parameters"]) for g in plan["sharing"]] == [(["q0", "q1"], {"step_cost": 0.2})]
    assert same_rows(engine.evaluate(plan, table), want)
    # the other way round: the candidate's own group of all four saves more
    plan = _gloria(1000.0, 0.2)
    assert [(sorted(g["queries"]), g["parameters"]) for g in plan["sharing"]] == [
        (["q0", "q1", "q2", "q3"], {"step_cost": 0.2})]
    assert same_rows(engine.evaluate(plan, table), want)
