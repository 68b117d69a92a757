"""The compiled ``sequence`` pass over count states (``engine/shared/sequence/_counts.c``)
against the Python executor (``run._Run``), each query alone and the two-step reference.

Groups whose queries aggregate counts only (COUNT(*), COUNT(E)) run in C: the same spaces,
expressions, snapshots and rebases as the Python pass, so not only every row but every
counter (propagations shared / alone / own, splits, snapshots, evaluations, rebases, per
type and per window) must be the Python pass's. Random valid groups over SEQ and
nested-Kleene workloads (``test_shared_sequence``'s), counts past the 128-bit range and
around CAP.
"""

from __future__ import annotations

import copy
import random
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from trendlake.engine.numbers import CAP
from trendlake.engine.shared import sequence as sequence_kind
from trendlake.engine.shared.sequence import SequenceStats, compiled, run

from tests.unit.engine.engine_adapter import run_engine, same_rows
from tests.unit.engine.handplans import sequence_group
from tests.unit.engine.test_shared_sequence import random_groups, streams, workloads
from trendlake import engine

pytestmark = pytest.mark.skipif(not compiled.available(), reason="the compiled sequence pass is not built")

COUNTS = ("COUNT(*)", "COUNT(A)", "COUNT(B)", "COUNT({o})")
def _plans(text: str, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    from trendlake.optimizer import parse_workload
    from trendlake.optimizer.plan import build_plan

    alone = build_plan(parse_workload(text), planner="none")
    shared = copy.deepcopy(alone)
    shared["sharing"] = random_groups(shared, random.Random(seed))
    return shared, alone


def _counters(report: dict[str, SequenceStats]) -> dict[str, Any]:
    return {g: (s.windows, s.shared, s.alone, s.own, s.split, s.snapshots, s.evaluations, s.rebases,
                s.recomputed, s.by_type, s.per_window) for g, s in report.items()}


def _both(plan: dict[str, Any], table: Any) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]],
                                                     dict[str, Any]]:
    """Rows and counters of the compiled pass (which must run every group) and of the Python pass."""
    python_pass = run.run_group

    def refused(*args: Any) -> Any:
        raise AssertionError("a count group left the compiled pass")

    report_c = {g["id"]: SequenceStats(per_window={}) for g in plan["sharing"]}
    with patch.object(sequence_kind, "run_group", refused):
        got_c = engine.evaluate(plan, table, shared_stats=report_c)
    report_p = {g["id"]: SequenceStats(per_window={}) for g in plan["sharing"]}
    with patch.object(compiled, "COMPILED", False), patch.object(sequence_kind, "run_group", python_pass):
        got_p = engine.evaluate(plan, table, shared_stats=report_p)
    # the record names the pass that ran the group ("" where no partition reached it)
    assert {s.executor for s in report_c.values()} <= {"", "compiled"}
    assert {s.executor for s in report_p.values()} <= {"", "python"}
    return got_c, _counters(report_c), got_p, _counters(report_p)


@settings(max_examples=60, deadline=None)
@given(workloads(COUNTS), streams((20, 50)), st.integers(0, 2**32), st.sampled_from((1, 2, run.REBASE_LENGTH)))
def test_the_compiled_pass_is_the_python_pass(text: str, rows: list[dict[str, Any]], seed: int, rebase: int) -> None:
    shared, alone = _plans(text, seed)
    table = engine.table_from_rows(rows)
    with patch.object(run, "REBASE_LENGTH", rebase):
        got_c, counters_c, got_p, counters_p = _both(shared, table)
    assert got_c == got_p, (text, rows, shared["sharing"])
    assert counters_c == counters_p
    assert same_rows(got_c, engine.evaluate(alone, table)), (text, rows, shared["sharing"])
    event(f"groups: {len(shared['sharing'])}")
    event(f"shared propagations: {any(c[1] for c in counters_c.values())}")
    event(f"split time stamps: {any(c[4] for c in counters_c.values())}")
    event(f"rebases: {any(c[7] for c in counters_c.values())}")


@settings(max_examples=20, deadline=None)
@given(workloads(COUNTS), streams((6, 12)), st.integers(0, 2**32))
def test_the_compiled_pass_equals_the_two_step_reference(text: str, rows: list[dict[str, Any]], seed: int) -> None:
    shared, alone = _plans(text, seed)
    assert same_rows(run_engine(shared, rows, "auto"), run_engine(alone, rows, "twostep"))


def test_figure_3_on_the_compiled_pass() -> None:
    from tests.unit.engine.test_shared_sequence import FIGURE_3, FIGURE_3_PLAN, _plan, _rows

    plan = _plan(FIGURE_3)
    plan["sharing"] = [sequence_group(plan, FIGURE_3_PLAN)]
    got_c, counters_c, got_p, counters_p = _both(plan, engine.table_from_rows(_rows("CABABD")))
    assert got_c == got_p and counters_c == counters_p
    assert counters_c["g0"][9]["A"] == [3, 6, 0]  # 3 propagations shared instead of 6


@pytest.mark.parametrize("window", ["WITHIN 130 seconds SLIDE 1 second", "WITHIN 1 hour"])
def test_counts_around_cap_and_past_128_bits(window: str) -> None:
    # SEQ(A, B+) over n events of B has 2**n - 1 trends: the sliding windows hold n from 0
    # to 139, so counts below CAP (10**38 - 1, n <= 126), past it but within 128 bits
    # (n = 127, and COUNT(B)), and past 2**128; a query of a prefix C multiplies them, one
    # with a predicate on B splits its Q-set at the events it leaves out
    text = f"""QUERY q1 RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B+) {window};
               QUERY q2 RETURN COUNT(*) PATTERN SEQ(A, B+, D) {window};
               QUERY q3 RETURN COUNT(*), COUNT(A) PATTERN SEQ(C, A, B+) {window};
               QUERY q4 RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B+) WHERE B.x != 7 {window};"""
    rows = [{"type": "C", "ts": 0, "seq": 0, "x": 0}, {"type": "C", "ts": 0, "seq": 1, "x": 0},
            {"type": "A", "ts": 1, "seq": 2, "x": 0}, {"type": "A", "ts": 2, "seq": 3, "x": 0}]
    rows += [{"type": "B", "ts": 2 + i, "seq": 4 + i, "x": 7 if i == 100 else 1} for i in range(1, 138)]
    rows += [{"type": "D", "ts": 140, "seq": 200, "x": 0}]
    from tests.unit.engine.test_shared_sequence import _plan

    plan = _plan(text)
    alone = copy.deepcopy(plan)
    four = ["q1", "q2", "q3", "q4"]
    plan["sharing"] = [sequence_group(plan, {("A", "B"): [(four, "A")], ("B", "B"): [(four, "A")],
                                             ("C", "A"): [(["q3"], "C")], ("B", "D"): [(["q2"], "A")]})]
    table = engine.table_from_rows(rows)
    got_c, counters_c, got_p, counters_p = _both(plan, table)
    assert got_c == got_p and counters_c == counters_p
    assert same_rows(got_c, engine.evaluate(alone, table))
    values = [v for r in got_c for k, v in r.items() if k.startswith("COUNT")]
    assert any(v is engine.OVERFLOW for v in values)
    if "SLIDE" in window:
        assert any(isinstance(v, int) and 2**64 <= v <= CAP for v in values)  # both words of a count
    assert counters_c["g0"][4] > 0  # q4 left events out: split time stamps
