"""COGRA's interpreter (engine/strategies/cogra/mixed.py): "since" aggregates of negation.

``SinceAnyMatch`` piece by piece on values derived by hand (DESIGN §5: no match of the
negation may start after the predecessor and end before the event), then ``run_mixed``
against the two-step reference on random any-match queries with negation and adjacent
predicates (``test_cogra.cases``), and on the dissertation's Example 11.1.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from trendlake.engine.aggregates import Algebra
from trendlake.engine.columns import Event
from trendlake.engine.negation import Negations
from trendlake.engine.results import finalize, is_equal
from trendlake.engine.strategies import reference
from trendlake.engine.strategies.cogra.mixed import SinceAnyMatch, run_mixed

from tests.unit.engine.test_cogra import cases
from tests.unit.engine.test_greta import FIG_11_1, compiled, stream
from tests.unit.engine.test_semantics import query, read, vertex
from tests.unit.engine.test_worked_examples import fig_11_1_negation

# SEQ(A+, NOT SEQ(C, D), B): A -> A reads a running total, A -> B the since aggregates
NEG = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A+, NOT SEQ(C, D), B) WITHIN 100 seconds;")


def test_negated_transitions_without_adjacent_predicate_read_since_aggregates() -> None:
    sem = SinceAnyMatch(NEG, Algebra(NEG)).start(Negations(NEG, []))
    readers = {(t.src, t.dst): sem.reader(t) for t in NEG.transitions}
    assert readers == {("A", "A"): sem.read_total, ("A", "B"): sem.read_since}
    assert [sem.total(t) is None for t in NEG.transitions] == [t.dst == "B" for t in NEG.transitions]
    assert sem.since_keys == [("A", 0)]


def test_since_aggregates_follow_the_negation_prefixes() -> None:
    """a1 (1 trend), c2 and a2 (8 trends) at 2 s, a3 (2), d at 4 s, a5 (4): a b after them
    reads the A vertices at or after the start (2 s) of the latest match of SEQ(C, D):
    a2, a3 and a5 (a match starting at an A's own time stamp does not lie after it)."""
    sem = SinceAnyMatch(NEG, Algebra(NEG)).start(Negations(NEG, []))
    s = 1_000_000

    def group(latest: int | None, new: list, advanced: dict[int, list[int]]) -> None:
        sem.begin_group(0, {0: latest})
        sem.end_group(new, 0)
        sem.negations_advanced(advanced, new, 0)

    group(None, [vertex(1, "A", {0: 1})], {})
    assert sem.since[("A", 0)] == [{0: 1}, {0: 1}]
    group(None, [vertex(2, "A", {0: 8})], {0: [0]})  # prefix (C) starts at 2 s: since a2
    assert sem.since[("A", 0)] == [{0: 8}, {0: 9}]
    group(None, [vertex(3, "A", {0: 2})], {})
    assert sem.since[("A", 0)] == [{0: 10}, {0: 11}]
    group(None, [], {0: [1]})  # d at 4 s: the complete match takes prefix (C)'s start
    assert sem.since[("A", 0)] == [{0: 10}, {0: 10}]
    # the two prefixes are separate aggregates: a5 adds 4 to each once
    group(2 * s, [vertex(5, "A", {0: 4})], {})
    assert sem.since[("A", 0)] == [{0: 14}, {0: 14}]
    sem.begin_group(0, {0: 2 * s})
    assert read(sem, NEG, "A", "B", {}) == {0: 14}
    # before any complete match every A counts (the running total)
    sem.begin_group(0, {0: None})
    assert read(sem, NEG, "A", "B", {}) == {0: 15}


def test_of_two_negations_the_one_matched_last_decides() -> None:
    """SEQ(A+, NOT N, NOT M, B): a1 (1 trend), n at 2 s, a3 (2), m at 5 s, a6 (4). A b after
    them may follow only the A vertices after both matches: a6, the since aggregate of M,
    whose match started last."""
    q = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A+, NOT N, NOT M, B) WITHIN 100 seconds;")
    sem = SinceAnyMatch(q, Algebra(q)).start(Negations(q, []))
    s = 1_000_000
    latest: dict[int, int | None] = {0: None, 1: None}
    for new, advanced, at in (([vertex(1, "A", {0: 1})], {}, None), ([], {0: [0]}, (0, 2 * s)),
                              ([vertex(3, "A", {0: 2})], {}, None), ([], {1: [0]}, (1, 5 * s)),
                              ([vertex(6, "A", {0: 4})], {}, None)):
        sem.begin_group(0, dict(latest))
        sem.end_group(new, 0)
        sem.negations_advanced(advanced, new, 0)
        if at is not None:
            latest[at[0]] = at[1]
    assert (sem.since[("A", 0)], sem.since[("A", 1)]) == ([{0: 6}], [{0: 4}])
    sem.begin_group(0, latest)
    assert read(sem, q, "A", "B", {}) == {0: 4}


def test_example_11_1() -> None:
    """13 trends (test_worked_examples.py derives them by hand)."""
    (result,) = run_mixed(compiled(fig_11_1_negation()), stream(FIG_11_1)).values()
    assert result.trends == 13


def assert_reference(spec: dict[str, Any], events: list[Event]) -> None:
    q = compiled(spec)
    got = {k: finalize(q, r) for k, r in run_mixed(q, events).items()}
    want = {k: finalize(q, r) for k, r in reference.run(q, events).items()}
    assert sorted(got) == sorted(want), (spec, events)
    for k, row in want.items():
        assert all(is_equal(got[k][a], row[a]) for a in row), (k, got[k], row)


@given(case=cases("negation"))
def test_type_grained_with_negation_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    assert_reference(*case)


@given(case=cases("mixed"))
def test_mixed_grained_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    assert_reference(*case)
