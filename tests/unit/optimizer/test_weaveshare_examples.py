"""Weave Share's worked examples (Guirguis et al., Examples 2-4, Figures 3, 12, 13), the
grouping of plan entries, and the library's errors."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from trendlake.optimizer import compile_workload
from trendlake.optimizer.errors import OptimizerError
from trendlake.optimizer.plan import query_entry
from trendlake.optimizer.weaveshare import (
    EdgeBitmap,
    Model,
    Query,
    TreeState,
    common_edges,
    edges_of,
    evaluate,
    from_entries,
    group_entries,
    incremental,
    optimize,
    plan_trees,
    weaveability,
)

# Example 2 -------------------------------------------------------------------------------

QA, QB = Query("a", 12, 9), Query("b", 10, 6)


def test_example2_fragments_and_edge_rates() -> None:
    assert QA.fragments == (3, 6) and QB.fragments == (4, 2)
    a, b = plan_trees([QA, QB], 0.0, "none")
    # The paper prints two decimals, truncated: 0.22, 0.33, total 0.55.
    assert (a.edge_rate, b.edge_rate) == (pytest.approx(2 / 9), pytest.approx(2 / 6))
    assert int(a.edge_rate * 100) == 22 and int(b.edge_rate * 100) == 33
    assert int((a.edge_rate + b.edge_rate) * 100) == 55


def test_example2_composite_slide_and_edges() -> None:
    assert edges_of([QA, QB]) == (18, (3, 4, 6, 9, 10, 12, 16, 18))
    (shared,) = plan_trees([QA, QB], 0.0, "shared-panes")
    assert shared.composite_slide == 18
    assert shared.edges == (3, 4, 6, 9, 10, 12, 16, 18)
    # each query examines the combined edge rate 0.44: 0.88 final aggregations per second
    assert int(shared.edge_rate * 100) == 44 and int(2 * shared.edge_rate * 100) == 88


def test_example2_weaveability() -> None:
    assert common_edges([QA], [QB]) == (18, 2, 8)  # common: 12 and 18
    assert weaveability([QA], [QB]) == Fraction(1, 4)
    # perfectly weaveable: the same edges
    assert weaveability([Query("x", 8, 4)], [Query("y", 16, 4)]) == 1


# Example 3 -------------------------------------------------------------------------------

EX3 = [Query("a", 16, 4), Query("b", 10, 5), Query("c", 8, 4)]


def test_example3_trees() -> None:
    # The paper's rate was lost in extraction; its 4.3 and 4.4 both come out at 1.2.
    plan = optimize(EX3, 1.2)
    assert plan.groups() == [["a", "c"], ["b"]]
    assert plan.cost == pytest.approx(4.3)
    assert [(m.left, m.right) for m in plan.merges] == [(("a",), ("c",))]
    assert plan.merges[0].benefit == pytest.approx(1.2)  # Eq. 5: equal slides, lambda saved
    assert optimize(EX3, 1.2, "shared-panes").cost == pytest.approx(4.4)
    assert optimize(EX3, 1.2, "none").cost == pytest.approx(5.5)


def test_example3_trees_follow_the_rate() -> None:
    # merging {a, c} with {b} saves lambda - 1.3: above that rate, one tree
    assert optimize(EX3, 1.25).groups() == [["a", "c"], ["b"]]
    assert optimize(EX3, 1.35).groups() == [["a", "b", "c"]]
    assert optimize(EX3, 0.0).groups() == [["a"], ["b"], ["c"]]


# Example 4 and Figure 13 -----------------------------------------------------------------

QX, QY = Query("x", 7, 5), Query("y", 6, 3)


def test_example4_common_edges() -> None:
    assert QX.fragments == (2, 3) and QY.fragments == (0, 3)
    bx, by = EdgeBitmap.of_query(QX), EdgeBitmap.of_query(QY)
    assert list(bx.positions()) == [2, 5] and list(by.positions()) == [3]
    assert (bx.stretch(15) .bit_count(), by.stretch(15).bit_count()) == (6, 5)
    assert bx.common(by) == (15, 2)  # 12 and 15
    assert common_edges([QX], [QY]) == (15, 2, 9)


def test_edges_counted_in_grains() -> None:
    minute = 60_000_000  # µs
    qa = Query("a", 12 * minute, 9 * minute)
    qb = Query("b", 10 * minute, 6 * minute)
    cs, edges = edges_of([qa, qb])
    assert cs == 18 * minute
    assert edges == tuple(p * minute for p in (3, 4, 6, 9, 10, 12, 16, 18))
    (tree,) = plan_trees([qa, qb], 0.0, "shared-panes")
    assert tree.edge_rate == pytest.approx(8 / (18 * minute))


# Figure 12: the cost look-up table -------------------------------------------------------

def test_cost_table_computes_only_the_merged_trees_row() -> None:
    qs = [Query(f"q{i}", 3 * s, s) for i, s in enumerate([1, 2, 3, 4, 5, 7])]  # all differ
    plan = optimize(qs, 100.0)  # a high rate: all merge
    assert len(plan.trees) == 1 and len(plan.merges) == 5
    n = len(qs)
    # first iteration: every pair; after merge i only the new tree against the others
    assert plan.evaluated == n * (n - 1) // 2 + sum(n - i - 1 for i in range(1, n))


def test_trees_with_the_same_edges_merge_first() -> None:
    # {0, 1} mod 2 is {0} mod 1: the same edges, so merging saves lambda, the most possible
    qs = [Query("a", 3, 2), Query("b", 5, 3), Query("c", 1, 1)]
    plan = optimize(qs, 0.5)
    assert (plan.merges[0].left, plan.merges[0].right) == (("a",), ("c",))
    assert plan.merges[0].benefit == pytest.approx(0.5)
    assert optimize(qs, 0.0).merges == ()  # no merge saves anything without input


def test_merge_benefit_is_eq5() -> None:
    model = Model.of(EX3, 2.0)
    a, b = TreeState.of(model, [EX3[0]]), TreeState.of(model, [EX3[1]])
    ab = a.merge(model, b)
    # lambda + E_a * Omega_a + E_b * Omega_b - E_ab * (Omega_a + Omega_b)
    assert a.cost + b.cost - ab.cost == pytest.approx(2.0 + 0.25 * 4 + 0.2 * 2 - 0.4 * 6)


# plan entries ------------------------------------------------------------------------------

WORKLOAD = """
QUERY w1 RETURN COUNT(*) AS n PATTERN SEQ(A, B+) WHERE [id] WITHIN 30 minutes SLIDE 5 minutes;
QUERY w2 RETURN COUNT(*) AS m PATTERN SEQ(A, B+) WHERE [id] WITHIN 1 hours SLIDE 10 minutes;
QUERY w3 RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 hours SLIDE 10 minutes;
QUERY w4 RETURN COUNT(*) AS n PATTERN SEQ(A, C+) WHERE [id] WITHIN 2 hours SLIDE 30 minutes;
QUERY w5 RETURN COUNT(*) AS k PATTERN SEQ(A, B+) WHERE [id] WITHIN 1 hours SLIDE 15 minutes;
"""


def test_group_entries_by_everything_but_the_window() -> None:
    entries = [query_entry(q) for q in compile_workload(WORKLOAD).queries]
    groups = [[e["name"] for e in g] for g in group_entries(entries)]
    assert groups == [["w1", "w2", "w5"], ["w3"], ["w4"]]
    minute = 60_000_000
    assert from_entries(group_entries(entries)[0]) == (
        Query("w1", 30 * minute, 5 * minute), Query("w2", 60 * minute, 10 * minute),
        Query("w5", 60 * minute, 15 * minute))


# errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "message"), [
    (lambda: Query("q", 0, 5), "query q: within must be a positive integer, not 0"),
    (lambda: Query("q", 10, 2.5), "query q: slide must be a positive integer, not 2.5"),
    (lambda: optimize([QA, Query("a", 4, 2)], 1.0), "query a: name given twice"),
    (lambda: optimize([QA], -1.0), "input rate must be finite and >= 0, not -1.0"),
    (lambda: optimize([QA], float("nan")), "input rate must be finite and >= 0, not nan"),
    (lambda: optimize([QA], 1.0, "panes"), "unknown weaveshare planner 'panes'; expected one "
                                           "of weaveshare, shared-panes, none"),
    (lambda: optimize([Query("a", 7, 7), Query("b", 11, 11)], 1.0, "shared-panes", limit=50),
     "composite slide lcm(7, 11) grains exceeds the limit of 50 grains"),
    (lambda: incremental([], [QA], 1.0, tolerance=-0.1), "tolerance must be >= 0, not -0.1"),
])
def test_errors(call, message: str) -> None:
    with pytest.raises(OptimizerError) as err:
        call()
    assert str(err.value) == message


def test_pairs_above_the_limit_never_merge() -> None:
    qs = [Query("a", 7, 7), Query("b", 11, 11)]
    assert optimize(qs, 100.0).groups() == [["a", "b"]]
    assert optimize(qs, 100.0, limit=50).groups() == [["a"], ["b"]]


def test_evaluate_a_given_grouping() -> None:
    plan = evaluate([[EX3[0], EX3[2]], [EX3[1]]], 1.2)
    assert plan.cost == pytest.approx(4.3) and plan.groups() == [["a", "c"], ["b"]]


# incremental ---------------------------------------------------------------------------------

def test_incremental_weaves_a_new_query_into_the_stored_trees() -> None:
    stored = optimize(EX3, 1.2).trees  # {a, c}, {b}
    d = Query("d", 12, 4)  # the edges of a and c
    inc = incremental(stored, [*EX3, d], 1.2)
    assert not inc.replanned and inc.added == ("d",) and inc.removed == ()
    assert inc.plan.groups() == [["a", "c", "d"], ["b"]]
    assert inc.deviation == pytest.approx(0.0)
    # b's window changes: removed and added again; a and c stay together
    b2 = Query("b", 12, 5)
    inc = incremental(stored, [EX3[0], b2, EX3[2]], 1.2)
    assert (inc.added, inc.removed) == (("b",), ("b",))
    assert inc.plan.groups() == [["a", "c"], ["b"]]


def test_incremental_replans_beyond_the_tolerance() -> None:
    # stored at a low rate: no sharing; at a high rate weaving merges them anyway, but a
    # stored tree that no longer pays is never split: only re-planning does that
    qs = [Query("a", 16, 4), Query("b", 10, 5), Query("c", 8, 4)]
    stored = optimize(qs, 5.0).trees  # one tree
    inc = incremental(stored, qs, 0.1, tolerance=0.0)
    scratch = optimize(qs, 0.1)
    assert scratch.groups() == [["a", "c"], ["b"]]
    assert inc.replanned and inc.plan.groups() == scratch.groups()
    assert inc.woven_cost > inc.reference_cost
    kept = incremental(stored, qs, 0.1, tolerance=math.inf)
    assert not kept.replanned and kept.plan.groups() == [["a", "b", "c"]]


def test_incremental_replans_when_a_stored_tree_outgrows_the_limit() -> None:
    old = [Query("a", 70, 70), Query("b", 110, 110)]  # grain 10: composite slide 77 grains
    stored = optimize(old, 100.0, limit=100).trees
    assert [t.names for t in stored] == [("a", "b")]
    inc = incremental(stored, [*old, Query("c", 3, 3)], 100.0, limit=100)  # grain 1: 770
    assert inc.replanned and sorted(n for t in inc.trees for n in t.names) == ["a", "b", "c"]
