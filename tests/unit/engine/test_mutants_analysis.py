"""The optimizer's analysis (optimizer/analysis.py) as the engine reads it: panes, names, templates.

Written for mutants of scripts/mutation.py that the engine tests and
tests/unit/optimizer/test_analysis.py let live (docs/testing.md, "Mutation
testing"). Expected values follow the module's rules: panes are the gcd of
every window length and slide (0 when no query has a window); a type name
names its occurrence only if the type occurs once; a NOT before the first or
after the last item of the outermost SEQ is a start or end negation, one
inside a nested SEQ is a transition's.
"""

from __future__ import annotations

from trendlake.optimizer import analysis

from trendlake import optimizer


def test_panes_of_a_workload_without_windows_is_0() -> None:
    workload = optimizer.parse_workload("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B);")
    assert analysis.panes_us(workload) == 0
    workload = optimizer.parse_workload(
        "QUERY q RETURN COUNT(*) PATTERN SEQ(A, B);\n"
        "QUERY r RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 6 seconds SLIDE 4 seconds;")
    assert analysis.panes_us(workload) == 2_000_000


def test_a_type_name_resolves_only_when_it_occurs_once() -> None:
    query = optimizer.parse_workload("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B b1, B b2, C c) "
                                     "WITHIN 5 seconds;").queries[0]
    scope = analysis.Scope(query.pattern)
    assert scope.resolve("A").name == "A"
    assert scope.resolve("C").name == "c"  # aliased, but the only C
    assert scope.resolve("b2").name == "b2"
    assert "occurs more than once" in scope.resolve("B")
    assert "b1 or b2" in scope.resolve("B")
    assert "unknown variable Z" in scope.resolve("Z")


def test_nots_of_the_outermost_and_of_nested_seqs() -> None:
    def tpl(pattern: str) -> dict:
        query = optimizer.parse_workload(f"QUERY q RETURN COUNT(*) PATTERN {pattern} WITHIN 5 seconds;").queries[0]
        return analysis.template(query.pattern).to_dict()

    t = tpl("SEQ(NOT C, A, B, NOT D)")
    assert (t["start_negations"], t["end_negations"]) == ([0], [1])
    t = tpl("SEQ(A, SEQ(B, NOT C, D)+)")
    assert (t["start_negations"], t["end_negations"]) == ([], [])
    assert {(x["from"], x["to"]): x["negations"] for x in t["transitions"]} == {
        ("A", "B"): [], ("B", "D"): [0], ("D", "B"): []}
