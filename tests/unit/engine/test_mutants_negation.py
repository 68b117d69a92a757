"""The negation state (engine/negation.py) on hand-made streams, against its definitions.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"). For a negative sequence ``NOT SEQ(C, D)``
(docs/engine.md, "Negation"): ``L(t)``, the latest start of a complete match
lying entirely before t, and ``C(t)``, the earliest end of a match lying
entirely after t; events of one time stamp are never consecutive in a match.
Every expected value is read off the stream by hand.
"""

from __future__ import annotations

from trendlake.engine.columns import Event
from trendlake.engine.negation import Negation, Negations, earliest_ends, max_bound
from trendlake.engine.timeline import time_groups

from trendlake import engine, optimizer


def compiled(pattern: str):
    text = f"QUERY q RETURN COUNT(*) PATTERN {pattern} WITHIN 100 seconds;"
    return engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text))).queries["q"]


def groups(spec: str) -> list[tuple[int, list[Event]]]:
    """'C1 D2 CD3' -> time-stamp groups: types C and D at 1, 2 and both at 3."""
    events = []
    for word in spec.split():
        types, t = word.rstrip("0123456789"), int(word.lstrip("ABCD"))
        events += [Event(t, len(events), ty, {}) for ty in types]
    return time_groups(events)


def latest_after_each(spec: str) -> list[tuple[int, int | None, list[int]]]:
    q = compiled("SEQ(A, NOT SEQ(C, D), B)")
    neg = Negation(q, ("C", "D"))
    out = []
    for t, group in groups(spec):
        changed = neg.advance(t, group)
        out.append((t, neg.latest, changed))
    return out


def test_latest_start_of_a_complete_match() -> None:
    assert latest_after_each("C1 D2 C3 C4 D5") == [
        (1, None, [0]),  # C1 starts a match of the prefix (C)
        (2, 1, [1]),  # D2 completes C1 D2: latest start 1
        (3, 1, [0]),
        (4, 1, [0]),  # C4: the prefix's latest start moves to 4
        (5, 4, [1]),  # D5 completes C4 D5: latest start 4
    ]


def test_a_match_needs_its_events_at_different_time_stamps() -> None:
    # C and D together at 2: D2 follows C1 (start 1), not C2
    assert latest_after_each("C1 CD2 D3") == [(1, None, [0]), (2, 1, [1, 0]), (3, 2, [1])]
    assert latest_after_each("CD1") == [(1, None, [0])]


def test_only_prefixes_whose_latest_start_moved_are_reported() -> None:
    # D3 completes C1 D3 too, but the latest start stays 1: nothing moved
    assert latest_after_each("C1 D2 D3") == [(1, None, [0]), (2, 1, [1]), (3, 1, [])]
    assert latest_after_each("C1 C1 A2") == [(1, None, [0]), (2, None, [])]


def test_earliest_end_of_a_match_after_each_group() -> None:
    q = compiled("SEQ(A, B, NOT SEQ(C, D))")
    gs = groups("A0 C1 D2 C3 C4 D5")
    assert earliest_ends(q, ("C", "D"), gs) == [2, 5, 5, 5, None, None]
    # the same time stamp never follows: after 0, C1 D1 is no match, C1 D2 ends at 2
    assert earliest_ends(q, ("C", "D"), groups("A0 CD1 D2")) == [2, None, None]
    assert earliest_ends(q, ("C", "D"), groups("A0 D1 C2")) == [None, None, None]


def test_bounds_of_a_query() -> None:
    q = compiled("SEQ(A, B, NOT SEQ(C, D))")
    gs = groups("A0 C1 D2 C3 C4 D5")
    negs = Negations(q, gs)
    assert [negs.end_bound(gi) for gi in range(len(gs))] == [2, 5, 5, 5, None, None]
    assert max_bound([None, 3, 1]) == 3
    assert max_bound([None, None]) is None
