"""Shared sub-sequences (Sharon) against each query alone and the two-step reference.

A ``subsequence`` group states Sharon's chosen candidates (pattern, queries, positions) and
runs them as Q-sets of the sequence executor. Random workloads of fixed-length sequences cut
from one stream of types (so that they overlap), each search's chosen candidates made into a
group whatever they are estimated to cost, and the planners' own plans: every one gives the
rows of each query alone.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from trendlake.engine.plan import PlanError, content_hash, load_plan
from trendlake.optimizer import parse_workload, sharon, workload_hash
from trendlake.optimizer.candidates import subsequence
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.plan import build_plan

from tests.randomized import once
from tests.unit.engine.engine_adapter import run_engine, same_rows
from tests.unit.engine.test_shared_sequence import streams
from trendlake import engine

BASE = "ABCDEF"
RATES = {"A": 2.0, "B": 20.0, "C": 20.0, "D": 10.0, "E": 5.0, "F": 2.0}
STATS = {"pane_us": 1_000_000, "types": {t: {"rate_mean": r} for t, r in RATES.items()}}


def _plan(text: str) -> dict[str, Any]:
    return build_plan(parse_workload(text), planner="none")


@st.composite
def workloads(draw: Any) -> str:
    """2-8 fixed-length sequences (2-5 types) cut from A..F, sometimes with a type of their own
    in front, COUNT(*) or COUNT(*) and COUNT of one of their types, one window."""
    queries = []
    for i in range(draw(once.integers(2, 8))):
        start = draw(once.integers(0, 3))
        length = draw(once.integers(2, min(5, len(BASE) - start)))
        types = list(BASE[start:start + length])
        ret = "COUNT(*)" + (f", COUNT({types[-1]})" if draw(once.booleans()) else "")
        queries.append(f"QUERY q{i} RETURN {ret} PATTERN SEQ({', '.join(types)}) WITHIN 6 seconds SLIDE 3 seconds;")
    return "\n".join(queries)


def _forced(plan: dict[str, Any], search: str) -> dict[str, Any] | None:
    """The plan with each candidate's chosen sub-sequences as one group, cost aside."""
    entries = {q["name"]: q for q in plan["queries"]}
    groups = []
    for cand in subsequence.candidates(plan["queries"]):
        try:
            chosen = sharon.choose([entries[q] for q in cand.queries], RATES, search=search)
        except OptimizerError:
            return None  # exhaustive past its limit
        parts = [(s.pattern, s.queries, s.positions, s.benefit) for s in chosen.shared if len(s.queries) >= 2]
        if parts:
            queries = [q for q in cand.queries if any(q in p[1] for p in parts)]
            groups.append(subsequence.group(entries, queries, parts, search, parameters={}, estimated_cost=(0.0, 0.0)))
    for i, g in enumerate(groups):
        g["id"] = f"g{i}"
    shared = dict(copy.deepcopy(plan), sharing=groups)
    shared["content_hash"] = content_hash(shared)
    return shared


@settings(max_examples=40, deadline=None)
@given(workloads(), streams((15, 60)))
def test_each_search_s_sub_sequences_shared_equal_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    plan = _plan(text)
    table = engine.table_from_rows(rows)
    want = engine.evaluate(plan, table)
    for search in ("sharon", "greedy", "exhaustive"):
        shared = _forced(plan, search)
        if shared is None:
            continue
        load_plan(shared, workload_hash(text))
        event(f"{search} groups: {len(shared['sharing'])}")
        assert same_rows(engine.evaluate(shared, table), want), (search, text, rows, shared["sharing"])


@settings(max_examples=25, deadline=None)
@given(workloads(), streams((5, 12)))
def test_shared_sub_sequences_equal_the_two_step_reference(text: str, rows: list[dict[str, Any]]) -> None:
    shared = _forced(_plan(text), "sharon")
    assert shared is not None
    assert same_rows(run_engine(shared, rows, "auto"), run_engine(_plan(text), rows, "twostep")), (text, rows)


@settings(max_examples=25, deadline=None)
@given(workloads(), streams((15, 40)))
def test_the_planners_plans_equal_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    table = engine.table_from_rows(rows)
    want = engine.evaluate(_plan(text), table)
    for planner in ("sharon", "sharon-greedy", "auto"):
        planned = build_plan(parse_workload(text), planner=planner, statistics=STATS)
        load_plan(planned, workload_hash(text))
        event(f"{planner}: {sorted(g['kind'] for g in planned['sharing'])}")
        assert same_rows(engine.evaluate(planned, table), want), (planner, text, rows)


def test_the_sharon_planner_shares_a_common_prefix() -> None:
    """Six queries SEQ(B, C, D, E, X): Sharon shares B, C, D, E by all six; the group runs as
    Q-sets of the six queries on B -> C, C -> D, D -> E, and gives each query's rows."""
    text = "\n".join(f"QUERY q{i} RETURN COUNT(*) PATTERN SEQ(B, C, D, E, {x}) WITHIN 6 seconds SLIDE 3 seconds;"
                     for i, x in enumerate("AF"))
    stats = {"pane_us": 1_000_000, "types": {"A": {"rate_mean": 1.0}, "F": {"rate_mean": 1.0},
                                            **{t: {"rate_mean": 30.0} for t in "BCDE"}}}
    plan = build_plan(parse_workload(text), planner="sharon", statistics=stats)
    [g] = plan["sharing"]
    assert g["kind"] == "subsequence" and [s["pattern"] for s in g["body"]["shared"]] == [["B", "C", "D", "E"]]
    shared = {(t["from"], t["to"]): [sorted(qs["queries"]) for qs in t["qsets"]] for t in g["body"]["transitions"]}
    assert shared[("B", "C")] == shared[("C", "D")] == shared[("D", "E")] == [["q0", "q1"]]
    assert shared[("E", "A")] == [["q0"]] and shared[("E", "F")] == [["q1"]]
    rows = [{"type": t, "ts": i, "seq": i, "x": 0} for i, t in enumerate("BCBDCEDEAF")]
    assert same_rows(run_engine(plan, rows, "auto"), run_engine(_plan(text), rows, "twostep"))


def test_a_candidate_past_the_compiled_pass_is_planned_in_runs_it_takes() -> None:
    """130 queries SEQ(B, C, D, E, X_i) of one candidate: groups of at most MAX_QUERIES (63),
    three of 44, 44 and 42 in workload order, each sharing the prefix; every query in one."""
    from trendlake.engine.shared.sequence.compiled import MAX_QUERIES

    text = "\n".join(f"QUERY q{i:03d} RETURN COUNT(*) PATTERN SEQ(B, C, D, E, X{i}) WITHIN 6 seconds SLIDE 3 seconds;"
                     for i in range(130))
    stats = {"pane_us": 1_000_000, "types": {**{f"X{i}": {"rate_mean": 1.0} for i in range(130)},
                                            **{t: {"rate_mean": 30.0} for t in "BCDE"}}}
    plan = build_plan(parse_workload(text), planner="sharon", statistics=stats)
    sizes = [len(g["queries"]) for g in plan["sharing"]]
    assert sizes == [44, 44, 42] and max(sizes) <= MAX_QUERIES
    assert [q for g in plan["sharing"] for q in g["queries"]] == [f"q{i:03d}" for i in range(130)]
    assert all([s["pattern"] for s in g["body"]["shared"]] == [["B", "C", "D", "E"]] for g in plan["sharing"])
    load_plan(plan, workload_hash(text))


def test_exhaustive_refuses_a_large_graph_politely() -> None:
    text = "\n".join(f"QUERY q{i} RETURN COUNT(*) PATTERN SEQ(A, B, C, D, E, F) WITHIN 6 seconds;" for i in range(12))
    with pytest.raises(OptimizerError, match=r"exhaustive search: the Sharon graph has \d+ vertices"):
        build_plan(parse_workload(text), planner="sharon-exhaustive", statistics=STATS)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda b: b["shared"][0].update(positions=[1, 1]), "is not the types of"),
    (lambda b: b["shared"].append(dict(b["shared"][0])), "overlapping sub-sequences"),
    (lambda b: b["transitions"][0]["qsets"].__setitem__(0, {"queries": ["q0"], "snapshots": "B"}), "Q-set"),
])
def test_check_refuses_a_body_that_is_not_sharon_s_decisions(edit: Any, message: str) -> None:
    text = ("QUERY q0 RETURN COUNT(*) PATTERN SEQ(B, C, D) WITHIN 6 seconds;\n"
            "QUERY q1 RETURN COUNT(*) PATTERN SEQ(B, C, E) WITHIN 6 seconds;")
    plan = _plan(text)
    entries = {q["name"]: q for q in plan["queries"]}
    g = subsequence.group(entries, ["q0", "q1"], [(("B", "C"), ("q0", "q1"), (0, 0), 1.0)], "sharon",
                          parameters={}, estimated_cost=(0.0, 0.0))
    g["id"] = "g0"
    edit(g["body"])
    plan["sharing"] = [g]
    plan["content_hash"] = content_hash(plan)
    with pytest.raises(PlanError, match=re.escape(message)):
        load_plan(plan, workload_hash(text))
