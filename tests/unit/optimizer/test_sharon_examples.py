"""The Sharon paper's worked examples (Poppe et al., ICDE 2018; dissertation part III), and
the decisions of ``optimizer.sharon`` on small workloads whose answer is known by hand.

The traffic workload of Figure 1 goes through the real parser and plan writer; its
candidates and conflicts are the library's, its benefit values the paper's (Figure 4:
the paper gives them, not the rates they come from)."""

from __future__ import annotations

from typing import Any

import pytest
from trendlake.optimizer import compile_workload
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.plan import query_entry
from trendlake.optimizer.sharon import (
    EXHAUSTIVE_LIMIT,
    Graph,
    benefit,
    choose,
    conflict,
    exhaustive,
    from_entries,
    graph_of,
    greedy,
    gwmin_bound,
    optimize,
    plan_finder,
    reduce,
    sharon,
)
from trendlake.optimizer.sharon.cost import non_shared

TRAFFIC = {
    "q1": ("OakSt", "MainSt", "StateSt"),
    "q2": ("OakSt", "MainSt", "WestSt"),
    "q3": ("LindenSt", "ParkAve", "OakSt", "MainSt"),
    "q4": ("ParkAve", "OakSt", "MainSt", "WestSt"),
    "q5": ("MainSt", "StateSt"),
    "q6": ("EastPark", "ElmSt", "ParkAve"),
    "q7": ("ElmSt", "ParkAve", "GreenHill"),
}
# Table I: pattern -> queries; Figure 4: the benefit values
TABLE_I = {
    "p1": (("OakSt", "MainSt"), {"q1", "q2", "q3", "q4"}, 25),
    "p2": (("ParkAve", "OakSt"), {"q3", "q4"}, 9),
    "p3": (("ParkAve", "OakSt", "MainSt"), {"q3", "q4"}, 12),
    "p4": (("MainSt", "WestSt"), {"q2", "q4"}, 15),
    "p5": (("OakSt", "MainSt", "WestSt"), {"q2", "q4"}, 20),
    "p6": (("MainSt", "StateSt"), {"q1", "q5"}, 8),
    "p7": (("ElmSt", "ParkAve"), {"q6", "q7"}, 18),
}


def entries_of(text: str) -> list[dict[str, Any]]:
    return [query_entry(q) for q in compile_workload(text).queries]


def workload_text(queries: dict[str, tuple[str, ...]], where: str = "WHERE [vehicle] ",
                  window: str = "WITHIN 10 minutes SLIDE 1 minutes") -> str:
    return "\n".join(f"QUERY {q} RETURN COUNT(*) PATTERN {', '.join(p)} {where}{window};"
                     for q, p in queries.items())


def traffic() -> tuple[Any, Graph, dict[str, int]]:
    """The traffic workload, its Sharon graph with Figure 4's weights, and p_i -> vertex."""
    types = {t for p in TRAFFIC.values() for t in p}
    wl = from_entries(entries_of(workload_text(TRAFFIC)), dict.fromkeys(types, 10.0))
    name = {pattern: p for p, (pattern, _, _) in TABLE_I.items()}
    g = graph_of(wl.candidates, [TABLE_I[name[c.pattern]][2] for c in wl.candidates])
    return wl, g, {name[c.pattern]: v for v, c in enumerate(wl.candidates)}


def test_table_i_candidates_come_from_the_queries() -> None:
    wl, _, _ = traffic()
    got = {c.pattern: set(c.queries) for c in wl.candidates}
    assert got == {pattern: qs for pattern, qs, _ in TABLE_I.values()}
    p1 = next(c for c in wl.candidates if c.pattern == ("OakSt", "MainSt"))
    assert dict(p1.positions) == {"q1": 0, "q2": 0, "q3": 2, "q4": 1}


def test_figure_4_conflicts() -> None:
    """Example 4 (p1 and p2 conflict in q3 and q4), Example 5 (p2 and p4 do not), and the
    degrees Example 7's bound divides by: 5, 3, 4, 3, 4, 1, 0."""
    _, g, v = traffic()
    assert g.adj[v["p1"]] >> v["p2"] & 1
    assert not g.adj[v["p2"]] >> v["p4"] & 1
    assert [g.degree(v[f"p{i}"]) for i in range(1, 8)] == [5, 3, 4, 3, 4, 1, 0]
    assert g.edge_count == 10
    assert g.independent([v["p2"], v["p4"]]) and g.weight([v["p2"], v["p4"]]) == 24  # Example 5
    assert g.weight([v["p1"]]) == 25
    dot = g.to_dot().splitlines()  # the picture: a vertex per candidate, an edge per conflict
    assert sum(" -- " in line for line in dot) == 10
    assert f'  v{v["p7"]} [label="(ElmSt, ParkAve): 18"];' in dot


def test_example_7_bound_prunes_p3_and_p7_is_conflict_free() -> None:
    _, g, v = traffic()
    bound = gwmin_bound(g)
    assert bound == pytest.approx(25 / 6 + 9 / 4 + 12 / 5 + 15 / 4 + 20 / 5 + 8 / 2 + 18 / 1)
    assert round(bound, 2) == 38.57
    score_max_p3 = g.weight(u for u in range(g.n) if not g.adj[v["p3"]] >> u & 1)
    assert score_max_p3 == 38  # p3 + p6 + p7
    red = reduce(g)
    assert red.conflict_ridden == (v["p3"],)
    assert red.conflict_free == (v["p7"],)
    assert sorted(red.remaining) == sorted(v[p] for p in ("p1", "p2", "p4", "p5", "p6"))
    # Example 9: the search space shrinks from 2^7 to 2^5 plans
    assert 2 ** g.n - 2 ** len(red.remaining) == 96


def test_example_10_optimal_plan_and_the_valid_space() -> None:
    """The finder generates exactly the 10 valid plans of the reduced graph (Example 10)
    and returns {p2, p4, p6, p7}, score 50; exhaustive search agrees; GWMIN takes
    {p1, p7}, score 43 (dissertation Example 23.9)."""
    _, g, v = traffic()
    red = reduce(g)
    within = sum(1 << u for u in red.remaining)
    found = plan_finder(g, within)
    assert found is not None and found[2] == 10
    optimal = sorted(v[p] for p in ("p2", "p4", "p6", "p7"))
    for sel in (sharon(g), exhaustive(g)):
        assert sorted(sel.vertices) == optimal and sel.weight == 50
    assert sharon(g).conflict_ridden == 1 and sharon(g).conflict_free == 1
    gre = greedy(g)
    assert sorted(gre.vertices) == sorted([v["p1"], v["p7"]]) and gre.weight == 43


def test_example_12_an_option_resolves_conflicts() -> None:
    """(p1, {q1, q3}) conflicts neither with (p4, {q2, q4}) nor with (p5, {q2, q4})."""
    wl, _, _ = traffic()
    by = {c.pattern: c for c in wl.candidates}
    p1 = by[("OakSt", "MainSt")]
    option = p1.restricted(["q1", "q3"], "p1{q1,q3}")
    p4, p5 = by[("MainSt", "WestSt")], by[("OakSt", "MainSt", "WestSt")]
    assert conflict(p1, p4) and conflict(p1, p5)
    assert not conflict(option, p4) and not conflict(option, p5)
    assert option.positions == {"q1": 0, "q3": 2} and option.origin == p1.id


def test_e_commerce_candidates() -> None:
    """Figure 2: (Laptop, Case) in all four queries."""
    text = workload_text({
        "q8": ("Laptop", "Case", "Adapter", "Mouse"),
        "q9": ("Laptop", "Case", "KeyBoardProtector"),
        "q10": ("Monitor", "Laptop", "Case", "Adapter"),
        "q11": ("Laptop", "Case", "Phone", "ScreenProtector"),
    }, where="WHERE [customer] ", window="WITHIN 20 minutes SLIDE 1 minutes")
    rates = dict.fromkeys(("Laptop", "Case", "Adapter", "Mouse", "KeyBoardProtector", "Monitor", "Phone",
                           "ScreenProtector"), 5.0)
    wl = from_entries(entries_of(text), rates)
    assert {c.pattern: set(c.queries) for c in wl.candidates} == {
        ("Laptop", "Case"): {"q8", "q9", "q10", "q11"},
        ("Laptop", "Case", "Adapter"): {"q8", "q10"},
        ("Case", "Adapter"): {"q8", "q10"},
    }


# the benefit model ------------------------------------------------------------------

def test_benefit_by_the_equations() -> None:
    """(B, C) in q1 = (A, B, C, D) and q2 = (B, C, E), rates A=2, B=3, C=5, D=7, E=11.
    q1: NonShared = 2 * 17 = 34; Comp = 2 * 2 + 7 * 7 = 53; Comb = 2 * 3 * 7 = 42.
    q2: NonShared = 3 * 19 = 57; Comp = 11 * 11 = 121; Comb = 3 * 11 = 33.
    Once: 3 * (3 + 5) = 24. BValue = 91 - (24 + 95 + 154) = -182."""
    text = workload_text({"q1": ("A", "B", "C", "D"), "q2": ("B", "C", "E")}, where="")
    wl = from_entries(entries_of(text), {"A": 2, "B": 3, "C": 5, "D": 7, "E": 11})
    (c,) = wl.candidates
    assert non_shared(wl.by_name["q1"]) == 34 and non_shared(wl.by_name["q2"]) == 57
    assert benefit(wl, c) == 91 - (24 + 53 + 42 + 121 + 33)


def test_a_whole_query_shared_combines_nothing() -> None:
    """Three copies of (A, B), rates 4 and 6: each alone 4 * 10 = 40; shared once 40,
    no prefix, suffix or combination: BValue = 120 - 40 = 80. Selectivity scales a
    query's rate: (A, B) at 50% of B gives 4 * 7 = 28 alone."""
    text = workload_text({"a": ("A", "B"), "b": ("A", "B"), "c": ("A", "B")}, where="")
    entries = entries_of(text)
    wl = from_entries(entries, {"A": 4, "B": 6})
    assert benefit(wl, wl.candidates[0]) == 80
    plan = choose(entries, {"A": 4, "B": 6})
    assert [(s.pattern, s.queries, s.benefit) for s in plan.shared] == [(("A", "B"), ("a", "b", "c"), 80.0)]
    assert plan.score == 80 and plan.non_shared_cost == 120
    half = from_entries(entries, {"A": 4, "B": 6}, {("a", "B"): 0.5})
    assert non_shared(half.by_name["a"]) == 28


# ch. 24 and the model's decisions ---------------------------------------------------

def test_only_the_same_window_and_partitioning_share() -> None:
    text = "\n".join([
        "QUERY a RETURN COUNT(*) PATTERN A, B WITHIN 10 seconds;",
        "QUERY b RETURN COUNT(*) PATTERN A, B WITHIN 20 seconds;",
        "QUERY c RETURN COUNT(*) PATTERN A, B WITHIN 10 seconds SLIDE 5 seconds;",
        "QUERY d RETURN COUNT(*) PATTERN A, B WHERE [g] WITHIN 10 seconds;",
        "QUERY e RETURN COUNT(*) PATTERN A, B, C WITHIN 20 seconds;",
    ])
    wl = from_entries(entries_of(text), {"A": 1, "B": 1, "C": 1})
    assert [set(c.queries) for c in wl.candidates] == [{"b", "e"}]


def test_different_local_predicates_share_only_where_equal() -> None:
    """a, b: the same predicate on B share (A, B) and (B, C); c's B differs, so c shares
    only (C, D) -- with a, b: the predicate is not on C or D."""
    text = "\n".join([
        "QUERY a RETURN COUNT(*) PATTERN A, B, C, D WHERE B.x > 1 WITHIN 10 seconds;",
        "QUERY b RETURN COUNT(*) PATTERN A, B, C WHERE B.x > 1 WITHIN 10 seconds;",
        "QUERY c RETURN COUNT(*) PATTERN A, B, C, D WHERE B.x > 2 WITHIN 10 seconds;",
    ])
    wl = from_entries(entries_of(text), dict.fromkeys("ABCD", 1.0))
    got = {(c.pattern, frozenset(c.queries)) for c in wl.candidates}
    assert got == {
        (("A", "B"), frozenset({"a", "b"})), (("B", "C"), frozenset({"a", "b"})),
        (("A", "B", "C"), frozenset({"a", "b"})), (("C", "D"), frozenset({"a", "c"})),
    }


def test_adjacent_predicates_inside_share_across_the_border_do_not() -> None:
    """a and b have B.x < NEXT(C).x: (B, C) shares with its predicate; an occurrence
    whose border the predicate crosses ((A, B), (C, D)) does not."""
    text = "\n".join([
        "QUERY a RETURN COUNT(*) PATTERN A, B, C, D WHERE B.x < NEXT(C).x WITHIN 10 seconds;",
        "QUERY b RETURN COUNT(*) PATTERN A, B, C, D WHERE B.x < NEXT(C).x WITHIN 10 seconds;",
        "QUERY c RETURN COUNT(*) PATTERN A, B, C, D WITHIN 10 seconds;",
    ])
    wl = from_entries(entries_of(text), dict.fromkeys("ABCD", 1.0))
    got = {(c.pattern, frozenset(c.queries)) for c in wl.candidates}
    ab = frozenset({"a", "b"})
    assert got == {(("B", "C"), ab), (("A", "B", "C"), ab), (("B", "C", "D"), ab), (("A", "B", "C", "D"), ab)}


def test_repeated_types_take_the_leftmost_occurrence() -> None:
    """(A, B) occurs twice in x = (A, B, A, B): x shares it at position 0; the rate of a
    type that occurs twice counts twice (NonShared(x) = 2 * (2 + 3 + 2 + 3))."""
    text = "\n".join([
        "QUERY x RETURN COUNT(*) PATTERN A a1, B b1, A a2, B b2 WITHIN 10 seconds;",
        "QUERY y RETURN COUNT(*) PATTERN C, A, B WITHIN 10 seconds;",
    ])
    wl = from_entries(entries_of(text), {"A": 2, "B": 3, "C": 1})
    (c,) = wl.candidates
    assert c.pattern == ("A", "B") and dict(c.positions) == {"x": 0, "y": 1}
    assert non_shared(wl.by_name["x"]) == 20


def test_queries_outside_the_model_have_no_candidates() -> None:
    text = "\n".join([
        "QUERY k RETURN COUNT(*) PATTERN A, B+, C WITHIN 10 seconds;",
        "QUERY n RETURN COUNT(*) PATTERN A, NOT D, B, C WITHIN 10 seconds;",
        "QUERY s RETURN COUNT(*) PATTERN A, B, C SEMANTICS contiguous WITHIN 10 seconds;",
        "QUERY ok RETURN COUNT(*) PATTERN A, B, C WITHIN 10 seconds;",
    ])
    wl = from_entries(entries_of(text), dict.fromkeys("ABCD", 1.0))
    assert wl.candidates == ()
    assert {q.name: q.alone is None for q in wl.queries} == {"k": False, "n": False, "s": False, "ok": True}
    assert "Kleene" in (wl.by_name["k"].alone or "")


def test_bad_input_is_refused_with_a_clear_error() -> None:
    entries = entries_of(workload_text({"a": ("A", "B"), "b": ("A", "B")}, where=""))
    with pytest.raises(OptimizerError, match="none for B"):
        from_entries(entries, {"A": 1})
    with pytest.raises(OptimizerError, match="finite numbers >= 0: B"):
        from_entries(entries, {"A": 1, "B": float("nan")})
    with pytest.raises(OptimizerError, match="unique: a"):
        from_entries([entries[0], entries[0]], {"A": 1, "B": 1})
    with pytest.raises(OptimizerError, match="unknown Sharon search 'best'"):
        optimize(from_entries(entries, {"A": 1, "B": 1}), "best")
    with pytest.raises(ValueError, match="weight 0.0"):
        Graph([1.0, 0.0], [])


def test_exhaustive_refuses_a_large_graph_politely() -> None:
    n = EXHAUSTIVE_LIMIT + 1
    g = Graph([1.0] * n, [(i, i + 1) for i in range(n - 1)])
    with pytest.raises(OptimizerError, match=f"{n} vertices, more than {EXHAUSTIVE_LIMIT}"):
        exhaustive(g)
    assert sharon(g).weight == (n + 1) // 2  # a path: every other vertex


def test_past_the_plan_finders_limit_branch_and_bound_then_gwmin() -> None:
    """A path of 12 vertices of weight 1 has 376 valid plans, the best of weight 6."""
    g = Graph([1.0] * 12, [(i, i + 1) for i in range(11)])
    assert sharon(g).exact and sharon(g).plans == 376 and sharon(g).nodes == 0
    sel = sharon(g, max_plans=20)
    assert sel.exact and sel.weight == 6 and sel.nodes > 0
    assert sharon(g, max_plans=20, max_nodes=1).nodes == 1  # GWMIN's plan meets the clique cover bound
    sel = sharon(g, max_plans=20, max_nodes=0)
    assert not sel.exact and g.independent(sel.vertices) and sel.weight == 6  # GWMIN on a path
