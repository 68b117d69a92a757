"""Plans of the GLORIA planners and ``auto`` give exactly the rows of the ``none`` plan.

Workloads of 2-8 queries sharing a SEQ or nested-Kleene core (the generator of
``test_shared_sequence``: their own prefixes, suffixes, local predicates,
aggregates and windows), planned by ``gloria``, ``gloria-noprune``,
``gloria-greedy``, ``hamlet`` and ``auto`` under the stated uniform
assumption or statistics that make A and B frequent, evaluated on random
streams: the rows equal the ``none`` plan's and, on small streams, the
two-step reference's. On a fixed seed, the GLORIA planners share in most
cases (a floor, ``tests.randomized.drawn_on_a_fixed_seed``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan

from tests.randomized import drawn_on_a_fixed_seed, once
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


@settings(max_examples=60, deadline=None)
@given(workloads(), statistics(), streams((20, 50)))
def test_gloria_and_auto_plans_equal_the_none_plan(text: str, stats: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    table = engine.table_from_rows(rows)
    want = engine.evaluate(build_plan(parse_workload(text), planner="none"), table)
    for planner, plan in plans(text, stats).items():
        engine.load_plan(plan, workload_hash=plan["workload_hash"])  # the plan check
        got = engine.evaluate(plan, table)
        assert same_rows(got, want), (planner, text, plan["sharing"])


@settings(max_examples=20, deadline=None)
@given(workloads(), statistics(), streams((6, 12)))
def test_gloria_plans_equal_the_two_step_reference(text: str, stats: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    want = run_engine(build_plan(parse_workload(text), planner="none"), rows, "twostep")
    for planner, plan in plans(text, stats).items():
        if planner.startswith("gloria"):
            assert same_rows(run_engine(plan, rows, "auto"), want), (planner, text)


def test_the_gloria_planners_share_on_such_workloads() -> None:
    def label(case: tuple[str, dict[str, Any]]) -> list[str]:
        text, stats = case
        out = []
        for planner, plan in plans(text, stats).items():
            kinds = {g["kind"] for g in plan["sharing"]}
            if "sequence" in kinds:
                out.append(f"{planner} shares")
            if planner == "auto" and plan.get("chosen_planner", "").startswith("gloria"):
                out.append("auto keeps gloria")
        return out

    seen = drawn_on_a_fixed_seed(st.tuples(workloads(), statistics()), label, 60)
    # on FLOOR_SEED: 19 to 27 of 60 cases each (the others' queries share no core under one
    # window, or the statistics make sharing cost more); auto keeps GLORIA's plan only where
    # its calibrated estimate beats every query alone (SEQUENCE_STEP_COST): 5 of them
    assert seen["gloria shares"] >= 10, seen
    assert seen["gloria-noprune shares"] >= 10 and seen["gloria-greedy shares"] >= 10, seen
    assert seen["auto keeps gloria"] >= 1, seen
