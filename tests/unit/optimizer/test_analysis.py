"""Templates (Glushkov automata), negation links, predicate classes, granularity, panes."""

from __future__ import annotations

import pytest
from trendlake.optimizer import analysis

from trendlake import optimizer


def query(pattern: str, where: str = "", semantics: str = "skip-till-any-match", extra: str = ""):
    text = (
        f"QUERY q RETURN COUNT(*) PATTERN {pattern} SEMANTICS {semantics} "
        + (f"WHERE {where} " if where else "")
        + f"{extra} WITHIN 10 seconds;"
    )
    return optimizer.compile_workload(text).queries[0]


def tpl(pattern: str) -> dict:
    return analysis.template(query(pattern).pattern).to_dict()


def pairs(t: dict) -> set[tuple[str, str]]:
    return {(x["from"], x["to"]) for x in t["transitions"]}


def test_fig_2_3_kleene_of_seq() -> None:
    # (SEQ(A+, B))+ of the dissertation's Figures 2.3 / 2.4
    t = tpl("SEQ(A+, B)+")
    assert t["start"] == ["A"] and t["end"] == ["B"]
    assert pairs(t) == {("A", "A"), ("A", "B"), ("B", "A")}


def test_seq_of_kleene_without_outer_plus() -> None:
    t = tpl("SEQ(A+, B)")
    assert pairs(t) == {("A", "A"), ("A", "B")}
    assert t["start"] == ["A"] and t["end"] == ["B"]


def test_nested_kleene() -> None:
    t = tpl("SEQ(A, SEQ(B, C+)+, D)")
    assert t["start"] == ["A"] and t["end"] == ["D"]
    assert pairs(t) == {("A", "B"), ("B", "C"), ("C", "C"), ("C", "B"), ("C", "D")}


def test_plan_format_example_back_edge() -> None:
    assert pairs(tpl("SEQ(A, B+)+")) == {("A", "B"), ("B", "B"), ("B", "A")}


def test_transitions_are_sorted_by_position_and_unique() -> None:
    t = tpl("SEQ(SEQ(A, B)+)+")
    assert [(x["from"], x["to"]) for x in t["transitions"]] == [("A", "B"), ("B", "A")]


def test_single_type_and_kleene() -> None:
    assert tpl("A") == {
        "start": ["A"], "end": ["A"], "transitions": [], "start_negations": [], "end_negations": []
    }
    assert pairs(tpl("A+")) == {("A", "A")}


def test_kleene_of_a_group_starting_with_kleene() -> None:
    t = tpl("SEQ(A, SEQ(B+, C)+)")
    assert pairs(t) == {("A", "B"), ("B", "B"), ("B", "C"), ("C", "B")}
    assert t["end"] == ["C"]


def test_negation_between_attaches_to_every_crossing_transition() -> None:
    q = query("SEQ(SEQ(A, B+)+, NOT N, SEQ(C, D))")
    t = analysis.template(q.pattern)
    assert t.negations == [["N"]]
    negs = {(a, b): n for (a, b), n in t.transitions.items()}
    assert negs[("B", "C")] == [0]
    assert all(n == [] for pair, n in negs.items() if pair != ("B", "C"))


def test_negation_of_a_seq_is_flattened_and_plus_dropped() -> None:
    t = analysis.template(query("SEQ(A, NOT SEQ(N+, SEQ(M, K))+, B)").pattern)
    assert t.negations == [["N", "M", "K"]]
    assert t.transitions[("A", "B")] == [0]


def test_leading_and_trailing_negations() -> None:
    t = analysis.template(query("SEQ(NOT N, A+, NOT M)").pattern)
    assert t.start_negations == [0] and t.end_negations == [1]
    assert t.negations == [["N"], ["M"]]
    assert t.transitions == {("A", "A"): []}


def test_consecutive_nots_all_attach() -> None:
    t = analysis.template(query("A, NOT N, NOT M+, B").pattern)
    assert t.transitions[("A", "B")] == [0, 1]
    t = analysis.template(query("SEQ(NOT N, NOT M, A)").pattern)
    assert t.start_negations == [0, 1]


def test_negation_inside_a_kleene_group() -> None:
    t = analysis.template(query("SEQ(A, NOT N, B)+").pattern)
    assert t.transitions == {("A", "B"): [0], ("B", "A"): []}
    assert t.start_negations == [] and t.end_negations == []


def test_aliases_are_variables() -> None:
    q = query("SEQ(Check C1, Other, Check C2+)", where="C1.x > 0 AND Other.y = 2")
    t = analysis.template(q.pattern)
    assert pairs(t.to_dict()) == {("C1", "Other"), ("Other", "C2"), ("C2", "C2")}


def test_single_aliased_type_resolves_by_type_name() -> None:
    q = query("SEQ(Check C, B)", where="Check.x > 0")
    preds = analysis.predicates(q)
    assert list(preds.local) == ["C"]


def test_predicate_classes_and_required_attributes() -> None:
    text = """QUERY q RETURN COUNT(*), SUM(B.w) AS s, COUNT(A)
    PATTERN SEQ(A, NOT N, B+)
    WHERE [g, h] AND A.x > 1 AND A.y * 2 IN (4, 6) AND N.z = 'n' AND B.v < NEXT(B).v
      AND A.x + 1 <= NEXT(B).v
    WITHIN 10 seconds;"""
    q = optimizer.compile_workload(text).queries[0]
    p = analysis.predicates(q)
    assert p.equivalence == ["g", "h"]
    assert list(p.local) == ["A", "N"] and len(p.local["A"]) == 2
    assert [(a["from"], a["to"]) for a in p.adjacent] == [("B", "B"), ("A", "B")]
    assert p.required == {"A": ["x", "y"], "N": ["z"], "B": ["w"]}
    assert p.local["A"][1] == {
        "op": "in",
        "args": [{"op": "*", "args": [{"attr": "y", "var": "A"}, {"lit": 2}]}],
        "values": [4, 6],
    }
    assert p.adjacent[1]["expr"] == {
        "op": "<=",
        "args": [
            {"op": "+", "args": [{"attr": "x", "var": "A"}, {"lit": 1}]},
            {"attr": "v", "var": "B", "next": True},
        ],
    }


def test_next_on_the_left_keeps_orientation() -> None:
    q = query("S+", where="NEXT(S).price > S.price * 1.05")
    (adj,) = analysis.predicates(q).adjacent
    assert (adj["from"], adj["to"]) == ("S", "S")
    assert adj["expr"]["args"][0] == {"attr": "price", "var": "S", "next": True}


@pytest.mark.parametrize(
    ("semantics", "where", "pattern", "expected"),
    [
        ("skip-till-any-match", "", "SEQ(A+, B)", "type"),
        ("skip-till-any-match", "A.x > 1", "SEQ(A, NOT N, B)", "type"),
        ("skip-till-any-match", "A.x < NEXT(A).x", "SEQ(A+, B)", "mixed"),
        ("skip-till-next-match", "A.x > 1", "SEQ(A+, B)", "pattern"),
        ("contiguous", "", "SEQ(A+, B)", "pattern"),
        ("skip-till-next-match", "A.x < NEXT(A).x", "SEQ(A+, B)", "event"),
        ("contiguous", "A.x < NEXT(B).x", "SEQ(A+, B)", "event"),
        ("skip-till-next-match", "", "SEQ(A, NOT N, B)", "event"),
    ],
)
def test_granularity(semantics: str, where: str, pattern: str, expected: str) -> None:
    assert analysis.granularity(query(pattern, where=where, semantics=semantics)) == expected


def test_panes_are_gcd_of_windows_and_slides() -> None:
    text = """
    QUERY a RETURN COUNT(*) PATTERN A WITHIN 30 minutes SLIDE 5 minutes;
    QUERY b RETURN COUNT(*) PATTERN A WITHIN 1 hour SLIDE 10 minutes;
    QUERY c RETURN COUNT(*) PATTERN A WITHIN 45 seconds;"""
    assert analysis.panes_us(optimizer.compile_workload(text)) == 15_000_000


def test_windows_in_microseconds() -> None:
    text = "QUERY a RETURN COUNT(*) PATTERN A WITHIN 1.5 minutes SLIDE 2 sec;"
    window = optimizer.compile_workload(text).queries[0].window
    assert (window.within_us, window.slide_us) == (90_000_000, 2_000_000)
    text = "QUERY a RETURN COUNT(*) PATTERN A WITHIN 1 day;"
    window = optimizer.compile_workload(text).queries[0].window
    assert (window.within_us, window.slide_us) == (86_400_000_000, 86_400_000_000)
