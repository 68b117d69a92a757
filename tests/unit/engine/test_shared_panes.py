"""Shared panes (Weave Share) against each query alone and the two-step reference.

A ``panes`` group holds one query under several windows; the compiled panes pass
(``engine/shared/panes/_panes.c``) computes each pane's map once and carries every
window through its panes. Its rows must be exactly each query's alone: random bodies
(Kleene, sequences, COUNT(E) keys, local predicates, partitioned or not, partitions finer
than groups), random windows (``within`` not a multiple of ``slide`` included), streams with
simultaneous events, and counts past the 128-bit range and around CAP.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from trendlake.engine.plan import PlanError, content_hash, load_plan
from trendlake.engine.shared import kind_of
from trendlake.engine.shared.panes import available, rules
from trendlake.optimizer import parse_workload, workload_hash
from trendlake.optimizer.candidates import panes
from trendlake.optimizer.plan import build_plan

from tests.randomized import once
from tests.unit.engine.engine_adapter import assert_planners_agree, run_engine, same_rows
from tests.unit.engine.test_shared_sequence import streams
from trendlake import engine

pytestmark = pytest.mark.skipif(not available(), reason="the compiled panes pass is not built")

BODIES = ("SEQ(A, B+)", "SEQ(A+, B)", "SEQ(A, B+, C)", "SEQ(A, B)", "A+", "SEQ(C, A+, B+)")
COUNTS = ("COUNT(*)", "COUNT(A)", "COUNT(B)")
PREDICATES = ("A.x > 1", "B.x < 5", "B.x != 2")


def _plan(text: str) -> dict[str, Any]:
    return build_plan(parse_workload(text), planner="none")


def _shared(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan with each ``panes`` candidate as one group (Weave Share's "Shared")."""
    entries = {q["name"]: q for q in plan["queries"]}
    groups = [c.forced_group(entries, c.queries) for c in panes.candidates(plan["queries"])]
    for i, g in enumerate(groups):
        g["id"] = f"g{i}"
    shared = dict(copy.deepcopy(plan), sharing=groups)
    shared["content_hash"] = content_hash(shared)
    return shared


@st.composite
def workloads(draw: Any) -> str:
    """2-5 queries of one body under their own windows (seconds; some ``within`` not a multiple
    of ``slide``), grouped by g or not (partitioned by g, or by g and x), plus sometimes a query
    of another body."""
    body = draw(once.sampled_from(BODIES))
    types = set(re.findall(r"[A-C]", body))
    aggs = draw(once.lists(once.sampled_from(COUNTS), min_size=1, max_size=3, unique=True))
    aggs = [a for a in aggs if a == "COUNT(*)" or a[6] in types] or ["COUNT(*)"]
    preds = draw(once.lists(once.sampled_from(PREDICATES), max_size=2, unique=True))
    preds = [p for p in preds if p[0] in types]
    by = draw(once.sampled_from(("", " GROUP-BY g")))
    if by and draw(once.booleans()):
        preds = ["[x]", *preds]  # partitions finer than the groups: windows of several partitions merge
    where = f" WHERE {' AND '.join(preds)}" if preds else ""
    ret = ", ".join((["g"] if by else []) + aggs)
    queries = []
    for i in range(draw(once.integers(2, 5))):
        slide = draw(once.integers(1, 6))
        within = slide * draw(once.integers(1, 4)) + draw(once.sampled_from((0, 0, draw(once.integers(1, slide)))))
        queries.append(f"QUERY q{i} RETURN {ret} PATTERN {body}{where}{by} WITHIN {within} seconds SLIDE {slide} seconds;")
    if draw(once.booleans()):
        queries.append(f"QUERY other RETURN COUNT(*) PATTERN SEQ(B, C+) WITHIN 5 seconds SLIDE {draw(once.integers(1, 5))} seconds;")
    return "\n".join(queries)


@settings(max_examples=80, deadline=None)
@given(workloads(), streams((15, 80)))
def test_a_panes_group_equals_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    plan = _plan(text)
    shared = _shared(plan)
    groups = [g for g in shared["sharing"] if g["kind"] == "panes"]
    windows = {(q["window"]["within_us"], q["window"]["slide_us"]) for q in plan["queries"] if q["name"] != "other"}
    assert groups or len(windows) < 2, text  # one body under several windows is a candidate
    table = engine.table_from_rows(rows)
    report = {g["id"]: kind_of(g["kind"]).new_stats() for g in shared["sharing"]}
    got = engine.evaluate(shared, table, shared_stats=report)
    want = engine.evaluate(plan, table)
    assert same_rows(got, want), (text, rows)
    for g in groups:
        event(f"panes with events: {min(report[g['id']].panes, 5)}{'+' if report[g['id']].panes >= 5 else ''}")
    event(f"result rows: {'0' if not want else '1-9' if len(want) < 10 else '10+'}")


# statistics under which sharing panes pays: Travel-like bursts of B, windows overlapping
DENSE = {"pane_us": 1_000_000, "types": {"A": {"rate_mean": 2.0}, "B": {"rate_mean": 40.0},
                                           "C": {"rate_mean": 2.0}, "D": {"rate_mean": 1.0}}}


@settings(max_examples=40, deadline=None)
@given(workloads(), streams((15, 60)))
def test_the_planners_plans_equal_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    """One drawn case, every planner of the kind's plan against each query alone."""
    assert_planners_agree(text, rows, ("shared-panes", "weaveshare", "auto"), DENSE,
                          lambda planner, plan: f"{planner} panes groups: "
                                                f"{sum(g['kind'] == 'panes' for g in plan['sharing'])}")


@pytest.mark.parametrize("planner", ["shared-panes", "weaveshare", "auto"])
def test_the_planners_share_one_query_under_overlapping_windows(planner: str) -> None:
    text = "\n".join(f"QUERY q{i} RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN {w} seconds SLIDE {s} seconds;"
                     for i, (w, s) in enumerate(((30, 5), (60, 10), (30, 10), (120, 30), (60, 15))))
    planned = build_plan(parse_workload(text), planner=planner, statistics=DENSE)
    grouped = sorted(q for g in planned["sharing"] if g["kind"] == "panes" for q in g["queries"])
    assert len(grouped) >= 2, planned["sharing"]
    for g in planned["sharing"]:
        assert g["estimated_cost"]["shared"] < g["estimated_cost"]["non_shared"]


@settings(max_examples=40, deadline=None)
@given(workloads(), streams((5, 12)))
def test_a_panes_group_equals_the_two_step_reference(text: str, rows: list[dict[str, Any]]) -> None:
    plan = _plan(text)
    got = run_engine(_shared(plan), rows, "auto")
    want = run_engine(plan, rows, "twostep")
    assert same_rows(got, want), (text, rows)


def test_counts_past_cap_saturate_as_alone() -> None:
    """Bursts long enough that SEQ(A, B+) passes 2**128 in the larger windows (OVERFLOW) and
    stays exact in the smaller ones; every window as alone."""
    text = "\n".join(f"QUERY q{i} RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B+) WITHIN {w} seconds SLIDE {s} seconds;"
                     for i, (w, s) in enumerate(((300, 100), (250, 50), (40, 40))))
    rows = [{"type": "A" if i % 150 == 0 else "B", "ts": i - i % 7 // 5, "seq": i, "x": 0} for i in range(400)]
    plan = _plan(text)
    got = run_engine(_shared(plan), rows, "auto")
    want = run_engine(plan, rows, "auto")
    assert got == want
    assert any(r["COUNT(*)"] == "OVERFLOW" for r in want) and any(r["COUNT(*)"] != "OVERFLOW" for r in want)


def test_two_windows_by_hand() -> None:
    """SEQ(A, B+) over a1 b2 b3 a4 b5 (seconds) under WITHIN 4 SLIDE 2 and WITHIN 3 SLIDE 3."""
    text = ("QUERY w4 RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 4 seconds SLIDE 2 seconds;\n"
            "QUERY w3 RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 3 seconds SLIDE 3 seconds;")
    rows = [{"type": t, "ts": ts, "seq": i, "x": 0} for i, (t, ts) in enumerate(zip("ABBAB", (1, 2, 3, 4, 5), strict=True))]
    plan = _plan(text)
    shared = _shared(plan)
    assert [g["kind"] for g in shared["sharing"]] == ["panes"]
    assert shared["sharing"][0]["body"] == {"composite_slide_us": 6_000_000,
                                            "edges_us": [2_000_000, 3_000_000, 4_000_000, 6_000_000]}
    got = {(r["query"], r["window_start"] // 1_000_000): r["COUNT(*)"] for r in run_engine(shared, rows, "auto")}
    # w4: [0,4) a1 b2 b3: a1b2 a1b3 a1b2b3 = 3; [2,6) b2 b3 a4 b5: a4b5 = 1; [4,8) a4 b5: 1
    # w3: [0,3) a1 b2: 1; [3,6) b3 a4 b5: a4b5 = 1
    assert got == {("w4", 0): 3, ("w4", 2): 1, ("w4", 4): 1, ("w3", 0): 1, ("w3", 3): 1}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(1, 6)), min_size=1, max_size=4))
def test_edges_are_every_window_start_and_end_within_a_composite_slide(pairs: list[tuple[int, int]]) -> None:
    windows = [(max(w, s), s) for w, s in pairs]
    cs = math.lcm(*(s for _, s in windows))
    assert rules.composite_slide(windows) == cs
    brute = set()
    for t in range(1, 3 * cs + 1):  # a position is an edge where some window starts or ends
        if any(t % s == 0 or (t - w) % s == 0 for w, s in windows):
            brute.add((t - 1) % cs + 1)
    assert rules.edges(windows) == sorted(brute)


def test_queries_of_one_window_add_no_edges_to_the_limit() -> None:
    """Three queries of each of two windows with 2,049 window starts in their composite slide
    (2,048): the edges and the limit count distinct windows; a third distinct window is past
    the limit."""
    windows = [(4, 1), (4096, 2048)]
    assert sum(rules.composite_slide(windows) // s for _, s in windows) * 3 > rules.EDGE_LIMIT
    assert rules.edges(windows * 3) == rules.edges(windows)
    with pytest.raises(ValueError, match=f"more than {rules.EDGE_LIMIT} edges"):
        rules.edges([*windows, (3, 3)])


def _group(text: str) -> dict[str, Any]:
    plan = _shared(_plan(text))
    return plan


@pytest.mark.parametrize(("case", "edit", "message"), [
    ("other body", lambda p: p["queries"][1]["local_predicates"].update({"B": [{"op": "<", "args": [
        {"attr": "x", "var": "B"}, {"lit": 3}]}]}), "differ in more than their windows"),
    ("envelope window", lambda p: p["sharing"][0]["window"].update({"slide_us": 1_000_000}),
     "not the largest range and the composite slide"),
    ("edges", lambda p: p["sharing"][0]["body"].update({"edges_us": [6_000_000]}), "edges_us are not those"),
    ("sums", lambda p: p["queries"][0]["aggregates"].append({"name": "SUM(B.x)", "fn": "sum", "var": "B", "attr": "x"}),
     "aggregates other than counts"),
])
def test_check_refuses_a_group_that_is_not_one_query_under_its_windows(case: str, edit: Any, message: str) -> None:
    text = ("QUERY a RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 4 seconds SLIDE 2 seconds;\n"
            "QUERY b RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 3 seconds SLIDE 3 seconds;")
    plan = _group(text)
    edit(plan)
    plan["content_hash"] = content_hash(plan)
    with pytest.raises(PlanError, match=re.escape(message)):
        load_plan(plan, workload_hash(text))
