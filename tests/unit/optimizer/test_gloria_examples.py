"""The GLORIA paper's worked examples (Ma et al., SIGMOD 2022), and the decisions of
``optimizer.gloria`` on small workloads whose best plan is known by hand."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from trendlake.optimizer import compile_workload
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.gloria import (
    Constants,
    Graph,
    from_entries,
    greedy,
    non_shared,
    optimize,
    plan_cost,
    validate,
)
from trendlake.optimizer.gloria.search import _build
from trendlake.optimizer.plan import query_entry


def entries_of(text: str) -> list[dict[str, Any]]:
    return [query_entry(q) for q in compile_workload(text).queries]


# Figure 3 ------------------------------------------------------------------------------

FIG3 = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B)+, D) WITHIN 10 seconds;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B)+) WITHIN 10 seconds;"""
STREAM = ["C", "A", "B", "A", "B", "D"]  # c0, a1, b2, a3, b4, d5


def templates() -> dict[str, tuple[set[str], set[str], set[tuple[str, str]]]]:
    """Each query's (start types, end types, transitions) from the real plan entries."""
    out = {}
    for e in entries_of(FIG3):
        t = {v["name"]: v["type"] for v in e["variables"]}
        tpl = e["template"]
        out[e["name"]] = ({t[v] for v in tpl["start"]}, {t[v] for v in tpl["end"]},
                          {(t[x["from"]], t[x["to"]]) for x in tpl["transitions"]})
    return out


def trends(start: set[str], end: set[str], trans: set[tuple[str, str]]) -> int:
    """Event trends by enumeration: increasing index sequences following the template."""
    count = 0
    for n in range(1, len(STREAM) + 1):
        for idx in itertools.combinations(range(len(STREAM)), n):
            types = [STREAM[i] for i in idx]
            if types[0] in start and types[-1] in end and all(
                    (a, b) in trans for a, b in zip(types, types[1:], strict=False)):
                count += 1
    return count


def test_figure_3_counts_and_propagations() -> None:
    """Non-shared online aggregation (every event sums its predecessors per query) and
    shared execution with snapshots of C for {q1, q2} (every event sums its predecessors'
    snapshot expressions once): q1 counts 4 trends; the A events take 6 propagations
    non-shared and 3 shared; both executions give the counts the enumeration gives."""
    tpl = templates()
    # non-shared
    value: dict[str, list[int]] = {q: [0] * len(STREAM) for q in tpl}
    into_a_alone = 0
    for i, ty in enumerate(STREAM):
        for q, (start, _, trans) in tpl.items():
            v = 1 if ty in start else 0
            for j in range(i):
                if (STREAM[j], ty) in trans:
                    v += value[q][j]
                    into_a_alone += ty == "A"
            value[q][i] = v
    result = {q: sum(value[q][i] for i, ty in enumerate(STREAM) if ty in tpl[q][1]) for q in tpl}
    # shared: one expression per event (snapshot -> coefficient) for the Q-set {q1, q2}
    shared_trans = tpl["q1"][2] & tpl["q2"][2]
    assert shared_trans == {("C", "A"), ("A", "B"), ("B", "A")}
    snapshots: dict[int, dict[str, int]] = {}
    expr: list[dict[int, int]] = []
    into_a_shared = 0
    for i, ty in enumerate(STREAM):
        e: dict[int, int] = {}
        if ty == "C":  # start of both queries: a new snapshot of C
            snapshots[i] = {"q1": 1, "q2": 1}
            e = {i: 1}
        for j in range(i):
            if (STREAM[j], ty) in shared_trans:
                for s, k in expr[j].items():
                    e[s] = e.get(s, 0) + k
                into_a_shared += ty == "A"
        expr.append(e)
    shared = {"q1": 0, "q2": 0}
    for i, ty in enumerate(STREAM):
        if ty == "B":  # q2 ends at B: evaluate the expression
            shared["q2"] += sum(k * snapshots[s]["q2"] for s, k in expr[i].items())
        if ty == "D":  # q1's own transition B -> D, then its evaluation
            e = {}
            for j in range(i):
                if (STREAM[j], "D") in tpl["q1"][2]:
                    for s, k in expr[j].items():
                        e[s] = e.get(s, 0) + k
            shared["q1"] += sum(k * snapshots[s]["q1"] for s, k in e.items())
    assert result["q1"] == 4
    assert result == shared == {q: trends(*tpl[q]) for q in tpl}
    assert (into_a_alone, into_a_shared) == (6, 3)


# Examples 5.6-5.10: edge and node pruning ---------------------------------------------


def figure_7_graph() -> tuple[Graph, dict[str, Any]]:
    """Figure 7(a) built through the graph API with edge weights chosen so that the
    distances are those of Table 3 (the paper gives the distances, not the weights or
    rates). Comparable nodes carry the count of their snapshot type, |A| = 5 < |B| = 10."""
    g = Graph([("F>A", []), ("A>B", ["F>A"]), ("B>C", ["A>B"]), ("E>C", []), ("C>D", ["B>C", "E>C"])])
    n: dict[str, Any] = {}
    n["n1"] = g.add_node("F>A", "(1)", start_w=10, key="(1)")
    n["n2"] = g.add_node("A>B", "(1,2)^A", in_edges={"F>A": [(n["n1"], 55)]}, key="(1,2)", lengths=[5])
    n["n3"] = g.add_node("A>B", "(1)(2)", in_edges={"F>A": [(n["n1"], 55)]}, key="(1)(2)")
    g.prune_pool("A>B")
    n["n4"] = g.add_node("B>C", "(1,2)^A", in_edges={"A>B": [(n["n2"], 5)]}, key="(1,2)", lengths=[5])
    n["n5"] = g.add_node("B>C", "(1,2)^B", in_edges={"A>B": [(n["n2"], 105), (n["n3"], 100)]},
                         key="(1,2)", lengths=[10])
    n["n6"] = g.add_node("B>C", "(1)(2)", in_edges={"A>B": [(n["n3"], 100)]}, key="(1)(2)")
    n["pruned_B>C"] = g.prune_pool("B>C")
    n["n7"] = g.add_node("E>C", "(3)", start_w=3, key="(3)")
    g.prune_pool("E>C")
    n["n8"] = g.add_node("C>D", "(1,2)^A(3)", in_edges={"B>C": [(n["n4"], 80)], "E>C": [(n["n7"], 6)]},
                         key="(1,2)(3)", lengths=[5])
    n["n9"] = g.add_node("C>D", "(1,2)^B(3)", in_edges={"B>C": [(n["n5"], 10)], "E>C": [(n["n7"], 6)]},
                         key="(1,2)(3)", lengths=[10])
    n["n10"] = g.add_node("C>D", "(1,2)^C(3)", in_edges={"B>C": [(n["n4"], 200)], "E>C": [(n["n7"], 6)]},
                          key="(1,2)(3)", lengths=[12])
    n["n11"] = g.add_node("C>D", "(1)(2)(3)", in_edges={"B>C": [(n["n6"], 270)], "E>C": [(n["n7"], 6)]},
                          key="(1)(2)(3)")
    n["n12"] = g.add_node("C>D", "(1,2,3)^C", in_edges={"B>C": [(n["n4"], 200)], "E>C": [(n["n7"], 6)]},
                          key="(1,2,3)", lengths=[12])
    n["pruned_C>D"] = g.prune_pool("C>D")
    return g, n


def test_examples_5_6_to_5_10_edge_and_node_pruning() -> None:
    g, n = figure_7_graph()
    # Example 5.7: 170 through n2, 165 through n3: edge(n2, n5) is pruned, n5.d_s = 165
    assert n["n5"].d_s == 165
    assert list(n["n5"].edges["A>B"]) == [n["n3"].id]
    # Table 3
    table = {"n1": 10, "n2": 65, "n3": 65, "n4": 70, "n5": 165, "n6": 165, "n7": 3,
             "n8": 159, "n10": 279, "n11": 444, "n12": 279}
    assert {k: n[k].d_s for k in table} == table
    # Example 5.10: n5 pruned against n4 (same Q-set, snapshots of a rarer type, nearer the start)
    assert n["pruned_B>C"] == [n["n5"]]
    assert n["n9"] is None  # its only source in Pool(B, C) was pruned: never constructed
    assert n["pruned_C>D"] == [n["n10"]]  # against n8
    assert [x.label for x in g.nodes("C>D")] == ["(1,2)^A(3)", "(1)(2)(3)", "(1,2,3)^C"]
    # Algorithm 1, case 1 (one end node): the path n1, n2, n4, n7, n8
    res = g.search()
    assert res.case == 1 and res.weight == 159
    assert {p: x.label for p, x in res.nodes.items()} == {
        "F>A": "(1)", "A>B": "(1,2)^A", "B>C": "(1,2)^A", "E>C": "(3)", "C>D": "(1,2)^A(3)"}


def test_without_pruning_the_graph_keeps_every_node_and_edge() -> None:
    g = Graph([("X", []), ("Y", ["X"])], prune=False)
    a = g.add_node("X", "a", start_w=1, key="k", lengths=[1])
    b = g.add_node("X", "b", start_w=2, key="k", lengths=[2])
    assert g.prune_pool("X") == []
    y = g.add_node("Y", "y", in_edges={"X": [(a, 5), (b, 1)]})
    assert y is not None and y.edges["X"] == {a.id: 5, b.id: 1} and y.d_s == 3


# Examples 6.2-6.5: Kleene sub-graphs ---------------------------------------------------


def test_examples_6_2_and_6_3_flat_kleene_paths() -> None:
    """Figure 8 through the graph API with the paper's path weights (105, 110, 200) and
    P'_1-P'_3 of weight 10: d_s 115, 120, 210 (Eq. 6), and P_2 (snapshots of B) pruned
    against P_1 (snapshots of A, |A| = 5 < |B| = 10)."""
    g = Graph([("P'", []), ("K", ["P'"])])
    pre = g.add_node("P'", "start", start_w=10)
    p1 = g.add_node("K", "(1,2)^A", in_edges={"P'": [(pre, 105)]}, key="(1,2)", lengths=[5])
    p2 = g.add_node("K", "(1,2)^B", in_edges={"P'": [(pre, 110)]}, key="(1,2)", lengths=[10])
    p3 = g.add_node("K", "(1)(2)", in_edges={"P'": [(pre, 200)]}, key="(1)(2)")
    assert (p1.d_s, p2.d_s, p3.d_s) == (115, 120, 210)
    assert g.prune_pool("K") == [p2]
    assert g.search().nodes["K"] is p1


def test_figure_8_cycle_costs_from_the_rates() -> None:
    """The same cycle from the rates |A| = 5, |B| = 10 through the cost model: the start
    edge weighs 10 (2 x |A|), the cycle 105 shared with snapshots of A and 200 not shared.
    (Snapshots of B cost 260 by Eq. 3-4; the paper prints 110.)"""
    text = "\n".join(f"QUERY q{i} RETURN COUNT(*) PATTERN SEQ(A, B)+ WITHIN 10 seconds;" for i in (1, 2))
    wl = from_entries(entries_of(text), {"A": 5, "B": 10})
    _, g = _build(wl, Constants(), prune=False)
    (pool,) = g.order
    weights = {(x.label[0][1] if x.label else None): (x.weight, x.start_w) for x in g.nodes(pool)}
    assert weights == {"A": (105, 10), "B": (260, 10), None: (200, 10)}


def test_examples_6_4_and_6_5_nested_kleene_paths() -> None:
    """Figure 9 through the graph API with the paper's path weights (480, 240, 280, 128 for
    snapshots of C, A, B, D; 1192 not shared) and P' of weight 12: Table 4's distances, and
    n16-n18 pruned against n19 (|D| = 4 is the rarest type)."""
    g = Graph([("P'", []), ("B>D", ["P'"])])
    pre = g.add_node("P'", "start", start_w=12)
    count = {"C": 12, "A": 5, "B": 10, "D": 4}
    nodes = [g.add_node("B>D", f"Q^{t}", in_edges={"P'": [(pre, w)]}, key="Q", lengths=[count[t]])
             for t, w in zip("CABD", (480, 240, 280, 128), strict=True)]
    nodes.append(g.add_node("B>D", "none", in_edges={"P'": [(pre, 1192)]}, key="none"))
    assert [x.d_s for x in nodes] == [492, 252, 292, 140, 1204]
    assert sorted(g.prune_pool("B>D"), key=lambda x: x.id) == nodes[:3]
    assert g.search().nodes["B>D"] is nodes[3]


# Algorithm 1, cases 2 and 3 --------------------------------------------------------------


def test_case_2_one_path() -> None:
    g = Graph([("X", []), ("Y", ["X"]), ("Z", ["X"])])
    x = g.add_node("X", "x", start_w=1)
    g.add_node("Y", "y", in_edges={"X": [(x, 2)]}, end_w=3)
    g.add_node("Z", "z", in_edges={"X": [(x, 4)]}, end_w=5)
    res = g.search()
    assert res.case == 2 and res.weight == 15


def test_case_3_branching_keeps_the_edges_that_edge_pruning_would_lose() -> None:
    """Pool R has two successors: X prefers r2, Y prefers r1; together r1 is best
    (0 + 10 + 0 = 10 against 1 + 0 + 10 = 11). Edges out of R are not pruned (its
    distances to the start do not cover its other branch) and case 3 finds r1."""
    g = Graph([("R", []), ("X", ["R"]), ("Y", ["R"])])
    r1 = g.add_node("R", "r1", start_w=0)
    r2 = g.add_node("R", "r2", start_w=1)
    x = g.add_node("X", "x", in_edges={"R": [(r1, 10), (r2, 0)]})
    y = g.add_node("Y", "y", in_edges={"R": [(r1, 0), (r2, 10)]})
    g.add_node("X", "x2", in_edges={"R": [(r1, 11), (r2, 11)]})
    assert x.edges["R"] == {r1.id: 10, r2.id: 0} and y.edges["R"] == {r1.id: 0, r2.id: 10}
    assert g.pruned_edges == 0
    res = g.search()
    assert res.case == 3 and res.weight == 10
    assert res.nodes["R"] is r1 and res.nodes["X"] is x


# Planner decisions ---------------------------------------------------------------------


def test_local_snapshots_of_a_rare_type_pay_and_greedy_misses_them() -> None:
    """Three queries SEQ(A, B, C, D, E) with |A| = 50, |B| = 1: GLORIA shares from B on with
    snapshots of B; Greedy starts sharing at A with snapshots of A and keeps reusing them,
    worse than not sharing at all (the paper's §8.3 observation)."""
    text = "\n".join(f"QUERY q{i} RETURN COUNT(*) PATTERN SEQ(A, B, C, D, E) WITHIN 10 seconds;" for i in range(3))
    wl = from_entries(entries_of(text), {"A": 50, "B": 1, "C": 10, "D": 10, "E": 10})
    best, full, greed, none = optimize(wl), optimize(wl, prune=False), greedy(wl), non_shared(wl)
    assert {(t.unit, q.snapshot) for t in best.shared() for q in t.qsets} == {
        ("B>C", "B"), ("C>D", "B"), ("D>E", "B")}
    assert best.cost == full.cost < none.cost < greed.cost
    assert best.stats.nodes_generated < full.stats.nodes_generated
    assert best.stats.nodes_pruned > 0 and best.stats.edges_pruned > 0


def test_only_queries_that_agree_share() -> None:
    """q1 and q2 share; q3 (GROUP-BY), q4 (another window) and q5 (another semantics)
    share with nobody, q6 (a predicate on B) not on the transitions with B."""
    base = "PATTERN SEQ(A, B, C, D)"
    text = "\n".join([
        f"QUERY q1 RETURN COUNT(*) {base} WITHIN 10 seconds;",
        f"QUERY q2 RETURN COUNT(*) {base} WITHIN 10 seconds;",
        f"QUERY q3 RETURN g, COUNT(*) {base} GROUP-BY g WITHIN 10 seconds;",
        f"QUERY q4 RETURN COUNT(*) {base} WITHIN 20 seconds;",
        f"QUERY q5 RETURN COUNT(*) {base} SEMANTICS contiguous WITHIN 10 seconds;",
        f"QUERY q6 RETURN COUNT(*) {base} WHERE B.x > 3 WITHIN 10 seconds;",
    ])
    wl = from_entries(entries_of(text), {"A": 1, "B": 10, "C": 10, "D": 10})
    plan = optimize(wl)
    shared = {(t.unit, q.queries) for t in plan.shared() for q in t.qsets if q.snapshot}
    assert {g for u, g in shared if u in ("A>B", "B>C")} == {("q1", "q2")}
    assert not {"q3", "q4", "q5"} & {q for _, g in shared for q in g}
    assert wl.by_name["q5"].alone is not None
    json.dumps(plan.to_dict())  # JSON-able


def test_transitions_are_covered_once_including_alone_queries() -> None:
    text = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(A A1, B, A A2) WITHIN 10 seconds;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B+)+, D) WITHIN 10 seconds;
QUERY q3 RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B+)+, D) WITHIN 10 seconds;"""
    wl = from_entries(entries_of(text), {"A": 2, "B": 3, "C": 1, "D": 2})
    assert wl.by_name["q1"].alone == "an event type occurs twice"
    assert wl.by_name["q2"].units == ("C>A", "K[A>B,B>A,B>B]", "B>D")
    plan = optimize(wl)
    got: dict[str, list[tuple[str, str]]] = {}
    for t in plan.transitions:
        for qs in t.qsets:
            for q in qs.queries:
                got.setdefault(q, []).append((t.source, t.target))
    assert sorted(got["q1"]) == [("A", "B"), ("B", "A")]
    assert sorted(got["q2"]) == sorted(got["q3"]) == [("A", "B"), ("B", "A"), ("B", "B"), ("B", "D"), ("C", "A")]


def test_bad_rates_are_refused() -> None:
    entries = entries_of("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 seconds;")
    with pytest.raises(OptimizerError, match="a rate for every event type: none for B"):
        from_entries(entries, {"A": 1.0})
    with pytest.raises(OptimizerError, match="finite numbers >= 0: B"):
        from_entries(entries, {"A": 1.0, "B": float("nan")})


def test_two_routes_between_pools_are_cut_and_the_plan_stays_valid() -> None:
    """q2 leaves A>B for E and comes back to C>D: the pools A>B ... C>D are joined twice,
    so one link is cut (``exact`` is False); the plan still covers every transition once,
    and its cost is the cost model's, not the search's."""
    text = """QUERY q1 RETURN COUNT(*) PATTERN SEQ(A, B, C, D) WITHIN 10 seconds;
QUERY q2 RETURN COUNT(*) PATTERN SEQ(A, B, E, C, D) WITHIN 10 seconds;
QUERY q3 RETURN COUNT(*) PATTERN SEQ(A, B, C, D) WITHIN 10 seconds;"""
    wl = from_entries(entries_of(text), {"A": 2, "B": 5, "C": 5, "D": 5, "E": 1})
    plan = optimize(wl)
    assert not plan.stats.exact
    assert plan.cost == plan_cost(wl, plan.by_unit(), Constants())
    assert validate(wl, plan.by_unit()) == []
    assert plan.cost <= plan.non_shared_cost
    got: dict[str, list[tuple[str, str]]] = {}
    for t in plan.transitions:
        for qs in t.qsets:
            for q in qs.queries:
                got.setdefault(q, []).append((t.source, t.target))
    assert sorted(got["q2"]) == [("A", "B"), ("B", "E"), ("C", "D"), ("E", "C")]
    assert plan.shared()  # q1 and q3 still share
