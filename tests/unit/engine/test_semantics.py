"""The semantics classes (engine/semantics.py) and the time-stamp driver (engine/timestamps.py)
piece by piece, on values derived by hand from DESIGN §5.

Each semantics object is driven directly: vertices handed over (``end_group``), a new
time-stamp group begun (``begin_group``), then a transition read (``reader``). The driver
as a whole is GRETA, compared with the two-step reference on random queries in
``test_greta.py``; here its pieces: one semantics class chosen per query, the windows a
START vertex may start after a leading ``NOT``, one group's vertices and results.
"""

from __future__ import annotations

from typing import Any

import pytest
from trendlake.engine.aggregates import Algebra
from trendlake.engine.negation import Negations
from trendlake.engine.query import CompiledQuery
from trendlake.engine.semantics import SEMANTICS, AnyMatch, Contiguous, NextMatch, Semantics
from trendlake.engine.timestamps import TimeStampDriver
from trendlake.engine.vertices import Vertex

from tests.unit.engine.handplans import SECOND, fig_2_3_query
from tests.unit.engine.test_greta import FIG_2_3, compiled, stream
from trendlake import engine, optimizer

ANY, NEXT, CONT = "skip-till-any-match", "skip-till-next-match", "contiguous"


def query(text: str) -> CompiledQuery:
    (q,) = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text))).queries.values()
    return q


def started(cls: type[Semantics], q: CompiledQuery) -> Semantics:
    """A semantics object of ``q`` with fresh per-run state (no negation match yet)."""
    return cls(q, Algebra(q)).start(Negations(q, []))


def vertex(ts_s: int, var: str, prop: dict[int, Any], x: Any = None, last_window: int = 0) -> Vertex:
    return Vertex(ts_s * SECOND, {"x": x}, var, prop, last_window)


def read(sem: Semantics, q: CompiledQuery, src: str, dst: str, attrs: dict[str, Any], kmin: int = 0) -> dict:
    (t,) = [t for t in q.transitions if (t.src, t.dst) == (src, dst)]
    acc: dict = {}
    sem.reader(t)(acc, t, attrs, kmin)
    return acc


# ---------------------------------------------------------------------------
# one class per semantics, chosen once


def test_each_plan_semantics_has_its_class() -> None:
    assert SEMANTICS == {ANY: AnyMatch, NEXT: NextMatch, CONT: Contiguous}
    for semantics, cls in SEMANTICS.items():
        assert type(TimeStampDriver(compiled(fig_2_3_query(semantics))).semantics) is cls


def test_a_driver_refuses_a_class_of_other_semantics() -> None:
    with pytest.raises(ValueError, match="skip-till-next-match"):
        TimeStampDriver(compiled(fig_2_3_query(NEXT)), AnyMatch)


@pytest.mark.parametrize(("semantics", "trends"), [(ANY, 43), (NEXT, 8), (CONT, 2)])
def test_figure_2_3_through_the_driver(semantics: str, trends: int) -> None:
    """DESIGN §5: Fig. 2.3 has 43 any-match, 8 next-match and 2 contiguous trends."""
    q = compiled(fig_2_3_query(semantics))
    (result,) = TimeStampDriver.of(q).run(stream(FIG_2_3)).values()
    assert result.trends == trends


# ---------------------------------------------------------------------------
# skip-till-any-match

ADJ = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE A.x < NEXT(B).x WITHIN 10 seconds;")


def test_any_match_reads_totals_without_predicates_and_kept_vertices_with_them() -> None:
    sem = started(AnyMatch, ADJ)
    assert isinstance(sem, AnyMatch)
    (ab,) = [t for t in ADJ.transitions if t.src == "A"]
    (bc,) = [t for t in ADJ.transitions if t.src == "B"]
    assert sem.reader(ab) == sem.read_list and sem.reader(bc) == sem.read_total
    assert sem.total(ab) is None and sem.total(bc) is sem.totals["B"]
    sem.begin_group(0, {})
    sem.end_group([vertex(1, "A", {0: 1}, x=1), vertex(2, "A", {0: 1}, x=5),
                   vertex(3, "B", {0: 2}), vertex(4, "B", {0: 3})], 0)
    sem.begin_group(0, {})
    # A.x < NEXT(B).x: a b with x = 3 follows a1 only, one with x = 9 both
    assert read(sem, ADJ, "A", "B", {"x": 3}) == {0: 1}
    assert read(sem, ADJ, "A", "B", {"x": 9}) == {0: 2}
    # no predicate on B -> C: every earlier b counts, their aggregates summed
    assert read(sem, ADJ, "B", "C", {}) == {0: 5}
    # window 0 expired: nothing is read any more
    sem.begin_group(1, {})
    assert read(sem, ADJ, "A", "B", {"x": 9}) == {} and read(sem, ADJ, "B", "C", {}) == {}


def test_any_match_reads_only_vertices_after_the_latest_negation_match() -> None:
    """SEQ(A, NOT N, B): a match of N starting at 2 s lies between a1 (1 s) and a later b,
    not between a2 (2 s, the match does not start after it) or a3 (3 s) and it."""
    q = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A, NOT N, B) WITHIN 10 seconds;")
    sem = started(AnyMatch, q)
    sem.begin_group(0, {0: None})
    sem.end_group([vertex(1, "A", {0: 1}), vertex(2, "A", {0: 100}), vertex(3, "A", {0: 10})], 0)
    sem.begin_group(0, {0: None})
    assert read(sem, q, "A", "B", {}) == {0: 111}
    sem.begin_group(0, {0: 2 * SECOND})
    assert read(sem, q, "A", "B", {}) == {0: 110}


# ---------------------------------------------------------------------------
# skip-till-next-match

NEXT_AB = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B+) SEMANTICS skip-till-next-match WITHIN 10 seconds;")


def test_next_match_closes_what_a_group_extended() -> None:
    sem = started(NextMatch, NEXT_AB)
    sem.begin_group(0, {})
    a1, a2 = vertex(1, "A", {0: 1}), vertex(2, "A", {0: 1})
    sem.end_group([a1, a2], 0)
    sem.begin_group(0, {})
    # two b's at one time stamp both extend a1 and a2 (events of one time stamp are
    # never adjacent, so the second still sees them open)
    assert read(sem, NEXT_AB, "A", "B", {}) == {0: 2}
    assert read(sem, NEXT_AB, "A", "B", {}) == {0: 2}
    assert a1.closed and a2.closed
    sem.end_group([], 0)
    sem.begin_group(0, {})
    assert read(sem, NEXT_AB, "A", "B", {}) == {}


def test_next_match_skips_vertices_whose_windows_ended() -> None:
    sem = started(NextMatch, NEXT_AB)
    sem.begin_group(0, {})
    sem.end_group([vertex(1, "A", {0: 1}, last_window=0), vertex(12, "A", {1: 1}, last_window=1)], 0)
    sem.begin_group(1, {})
    assert read(sem, NEXT_AB, "A", "B", {}, kmin=1) == {1: 1}


# ---------------------------------------------------------------------------
# contiguous

CONT_ABC = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B, C) SEMANTICS contiguous WITHIN 10 seconds;")


def test_contiguous_reads_the_previous_time_stamp_only() -> None:
    sem = started(Contiguous, CONT_ABC)
    sem.begin_group(0, {})
    sem.end_group([vertex(1, "A", {0: 1})], 0)
    sem.begin_group(0, {})
    assert read(sem, CONT_ABC, "A", "B", {}) == {0: 1}
    sem.end_group([], 0)  # a time stamp with no vertex of A in between
    sem.begin_group(0, {})
    assert read(sem, CONT_ABC, "A", "B", {}) == {}


def test_contiguous_middle_event_must_be_alone_at_its_time_stamp() -> None:
    sem = started(Contiguous, CONT_ABC)
    assert sem.middle_alone and not started(AnyMatch, ADJ).middle_alone
    windows = range(0, 1)

    def starts(k: int) -> bool:
        return True

    # b shares its time stamp: no trend passes through it
    assert sem.passed_on("B", {0: 7}, windows, starts, {}) is None
    # an a sharing its time stamp still starts its own trend (1 per window), nothing more
    assert sem.passed_on("A", {0: 7}, windows, starts, {}) == {0: 1}


# ---------------------------------------------------------------------------
# the driver's pieces


def test_a_leading_negation_lets_a_trend_start_only_in_later_windows() -> None:
    """SEQ(NOT N, A, ...) sliding by 1 s: after a match of N at 5 s, window k (starting at
    k s) may hold a trend's first event only if it starts after 5 s."""
    q = compiled(fig_2_3_query(within=4 * SECOND, slide=SECOND))
    driver = TimeStampDriver(q)
    starts = driver.starts_after(5 * SECOND)
    assert [starts(k) for k in (4, 5, 6)] == [False, False, True]
    assert all(driver.starts_after(None)(k) for k in (-3, 0, 5))


def test_a_trailing_negation_ends_the_windows_a_trend_counts_in() -> None:
    """SEQ(A, B, NOT N) within 10 s sliding by 5 s: (a1, b2) lies in windows 0 ([0, 10 s))
    and -1 ([-5 s, 5 s)); n7 lies after b2 in window 0 only, so the trend counts in -1."""
    q = query("QUERY q RETURN COUNT(*) PATTERN SEQ(A, B, NOT N) WITHIN 10 seconds SLIDE 5 seconds;")
    driver = TimeStampDriver(q)
    results: dict = {}
    driver.add_results(results, {-1: 1, 0: 1}, 7 * SECOND)
    assert results == {-1: 1}
    driver.add_results(results, {-1: 2, 0: 2}, None)
    assert results == {-1: 3, 0: 2}
    assert {k: r.trends for k, r in driver.run(stream("a1 b2 n7")).items()} == {-1: 1}
    assert {k: r.trends for k, r in driver.run(stream("a1 b2 n12")).items()} == {-1: 1, 0: 1}
    # n10 lies at window 0's end, outside it
    assert {k: r.trends for k, r in driver.run(stream("a1 b2 n10")).items()} == {-1: 1, 0: 1}
