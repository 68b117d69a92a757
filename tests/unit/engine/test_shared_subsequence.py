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
from tests.unit.engine.engine_adapter import assert_planners_agree, run_engine, same_rows
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
    assert_planners_agree(text, rows, ("sharon", "sharon-greedy", "auto"), STATS,
                          lambda planner, plan: f"{planner}: {sorted(g['kind'] for g in plan['sharing'])}")


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


@st.composite
def prefix_workloads(draw: Any) -> str:
    """2-10 count queries that begin alike: a prefix of one common sequence, then types of
    their own (no type twice), some with a predicate on a type (two thresholds, so that some
    agree), all partitioned by g or none."""
    common = list(BASE[: draw(once.integers(1, 3))])
    grouped = draw(once.booleans())
    queries = []
    for i in range(draw(once.integers(2, 10))):
        types = common[: draw(once.integers(1, len(common)))]
        rest = [t for t in BASE if t not in types]
        types += draw(st.lists(st.sampled_from(rest), min_size=0 if len(types) > 1 else 1, max_size=2, unique=True))
        where = ""
        if draw(once.integers(0, 2)) == 0:
            where = f"WHERE {draw(once.sampled_from(tuple(types)))}.x > {draw(once.sampled_from((2, 4)))} "
        ret, by = ("g, COUNT(*)", "GROUP-BY g ") if grouped else ("COUNT(*)", "")
        queries.append(f"QUERY q{i} RETURN {ret} PATTERN SEQ({', '.join(types)}) {where}{by}"
                       "WITHIN 6 seconds SLIDE 3 seconds;")
    return "\n".join(queries)


@settings(max_examples=40, deadline=None)
@given(prefix_workloads(), streams((15, 60)))
def test_the_prefix_pass_equals_each_query_alone(text: str, rows: list[dict[str, Any]]) -> None:
    """Each group runs on the prefix pass, never the sequence executor, gives each query's rows
    alone, and (where every query met its rows) steps no more trie variables than the
    planner's estimate counts (it shares by predicate text, the pass by the rows matched)."""
    from trendlake.engine.shared.subsequence.prefix import trie_share

    plan = _plan(text)
    shared = _forced(plan, "sharon")
    assert shared is not None
    table = engine.table_from_rows(rows)
    record: dict[str, Any] = {}
    got = engine.evaluate(shared, table, shared_stats=record)
    entries = {q["name"]: q for q in plan["queries"]}
    for g in shared["sharing"]:
        share = trie_share([entries[q] for q in g["queries"]])
        assert share is not None, "the planner prices the group as the prefix pass runs it"
        r = record.get(g["id"])
        if r is not None and r.prefix.runs:
            event("prefix pass ran")
            assert r.windows == 0, "count queries of distinct types never run on the sequence executor"
            if r.prefix.query_variables == sum(len(entries[q]["variables"]) for q in g["queries"]):  # all ran
                assert r.prefix.variables <= share * r.prefix.query_variables + 1e-9
    assert same_rows(got, engine.evaluate(plan, table)), (text, rows, shared["sharing"])


@settings(max_examples=20, deadline=None)
@given(prefix_workloads(), streams((5, 12)))
def test_the_prefix_pass_equals_the_two_step_reference(text: str, rows: list[dict[str, Any]]) -> None:
    shared = _forced(_plan(text), "sharon")
    assert shared is not None
    assert same_rows(run_engine(shared, rows, "auto"), run_engine(_plan(text), rows, "twostep")), (text, rows)


def test_a_group_past_one_template_runs_as_several_tries() -> None:
    """40 queries SEQ(B, C, X_i, Y_i): 2 + 2 x 40 variables, more than one template of the count
    pass holds; two tries split them (each with the prefix B, C once) and every query keeps
    its rows."""
    from trendlake.engine.shared.subsequence import prefix

    tails = [(f"X{i}", f"Y{i}") for i in range(40)]
    text = "\n".join(f"QUERY q{i:02d} RETURN COUNT(*) PATTERN SEQ(B, C, {x}, {y}) WITHIN 6 seconds SLIDE 3 seconds;"
                     for i, (x, y) in enumerate(tails))
    plan = _plan(text)
    entries = {q["name"]: q for q in plan["queries"]}
    names = sorted(entries)
    group = subsequence.group(entries, names, [(["B", "C"], names, [0] * len(names), 1.0)], "sharon",
                              parameters={}, estimated_cost=(0.0, 0.0))
    shared = dict(copy.deepcopy(plan), sharing=[{**group, "id": "g0"}])
    shared["content_hash"] = content_hash(shared)
    kinds = [t for x, y in tails for t in ("B", "C", x, y, "B", x, "C", y)]
    rows = [{"type": t, "ts": i, "seq": i} for i, t in enumerate(kinds)]
    table = engine.table_from_rows(rows)
    record: dict[str, Any] = {}
    got = engine.evaluate(shared, table, shared_stats=record)
    assert record["g0"].prefix.runs == 2 and record["g0"].prefix.variables == 2 * 2 + 80
    assert record["g0"].executor == "prefix"
    assert record["g0"].prefix.query_variables == 4 * 40
    want = engine.evaluate(plan, table)
    assert want and same_rows(got, want)
    assert prefix.MAX_VARIABLES < 82


def test_a_prefix_is_shared_only_under_the_same_predicates() -> None:
    """q0 and q1 share SEQ(A, B) in the group, but q1 takes A only where x > 2: the trie keeps
    two A variables (and q2's A, the same as q0's, is q0's), and each query keeps its rows."""
    text = "\n".join([
        "QUERY q0 RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 6 seconds SLIDE 3 seconds;",
        "QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, B) WHERE A.x > 2 WITHIN 6 seconds SLIDE 3 seconds;",
        "QUERY q2 RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 6 seconds SLIDE 3 seconds;",
    ])
    plan = _plan(text)
    entries = {q["name"]: q for q in plan["queries"]}
    group = subsequence.group(entries, ["q0", "q1", "q2"], [(["A", "B"], ["q0", "q1"], [0, 0], 1.0)], "sharon",
                              parameters={}, estimated_cost=(0.0, 0.0))
    shared = dict(copy.deepcopy(plan), sharing=[{**group, "id": "g0"}])
    shared["content_hash"] = content_hash(shared)
    load_plan(shared, workload_hash(text))
    rows = [{"type": t, "ts": i, "seq": i, "x": i % 5} for i, t in enumerate("AABACBAABCAB")]
    table = engine.table_from_rows(rows)
    record: dict[str, Any] = {}
    got = engine.evaluate(shared, table, shared_stats=record)
    assert record["g0"].prefix.variables == 5 and record["g0"].windows == 0  # A, A(x > 2), B, B, C
    want = engine.evaluate(plan, table)
    assert {r["query"] for r in want} == {"q0", "q1", "q2"} and same_rows(got, want)


def test_the_planner_s_trie_reads_predicates_whatever_the_variables_are_named() -> None:
    """``SEQ(A, B) WHERE A.x > 2`` and ``SEQ(A a1, C) WHERE a1.x > 2`` begin alike: 3 trie
    variables for 4; under another threshold they share nothing; a Kleene query is not the
    pass's."""
    from trendlake.engine.shared.subsequence.prefix import trie_share

    def share(*queries: str) -> float | None:
        text = "\n".join(f"QUERY q{i} RETURN COUNT(*) PATTERN {q} WITHIN 6 seconds;" for i, q in enumerate(queries))
        return trie_share(_plan(text)["queries"])

    assert share("SEQ(A, B) WHERE A.x > 2", "SEQ(A a1, C) WHERE a1.x > 2") == 3 / 4
    assert share("SEQ(A, B) WHERE A.x > 2", "SEQ(A a1, C) WHERE a1.x > 3") == 1
    assert share("SEQ(A, B)", "SEQ(A, B+)") is None
