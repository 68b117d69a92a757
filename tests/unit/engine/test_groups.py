"""One result row per (group, window) when equivalence attributes are not grouped by.

DESIGN §5: a query's partitions are the sub-streams with equal equivalence and
group-by values, but its result has one row per group-by value and window. The
rows of ``engine.evaluate`` are checked against the trends of each equivalence
value counted separately by the two-step reference and combined by hand.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.events import Event

from trendlake import engine, optimizer

WORKLOAD = """
QUERY q
RETURN g, COUNT(*), COUNT(B) AS nb, SUM(B.v) AS sb, AVG(B.v) AS ab, MIN(B.v) AS lo, MAX(B.v) AS hi
PATTERN SEQ(A, B+)
WHERE [k]
GROUP-BY g
WITHIN 10 seconds SLIDE 5 seconds;
"""

PLAN = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(WORKLOAD)))

events_strategy = st.lists(
    st.tuples(st.sampled_from("AB"), st.integers(0, 19), st.integers(0, 1), st.integers(0, 2), st.integers(-5, 9)),
    min_size=1,
    max_size=14,
)


def to_events(rows: list[tuple[str, int, int, int, int]]) -> list[Event]:
    rows = sorted(rows, key=lambda r: r[1])
    return [
        Event(type=t, ts=ts * 1_000_000, seq=i, attrs={"g": g, "k": k, "v": v})
        for i, (t, ts, g, k, v) in enumerate(rows)
    ]


def combined_by_hand(events: list[Event]) -> dict[tuple, dict]:
    """Evaluate each equivalence value alone (one partition per group) and combine."""
    acc: dict[tuple, dict] = defaultdict(lambda: {"COUNT(*)": 0, "nb": 0, "sb": 0, "lo": None, "hi": None})
    for k in sorted({e.attrs["k"] for e in events}):
        alone = [e for e in events if e.attrs["k"] == k]
        for row in engine.evaluate(PLAN, engine.table_from_events(alone), strategy="twostep"):
            a = acc[(row["g"], row["window_start"])]
            a["COUNT(*)"] += row["COUNT(*)"]
            a["nb"] += row["nb"]
            a["sb"] += row["sb"]
            a["lo"] = row["lo"] if a["lo"] is None else min(a["lo"], row["lo"])
            a["hi"] = row["hi"] if a["hi"] is None else max(a["hi"], row["hi"])
    for a in acc.values():
        a["ab"] = a["sb"] / a["nb"]
    return dict(acc)


@settings(max_examples=150, deadline=None)
@given(events_strategy, st.sampled_from(sorted(engine.STRATEGIES)))
def test_partitions_of_one_group_are_merged(rows, strategy) -> None:
    events = to_events(rows)
    got = engine.evaluate(PLAN, engine.table_from_events(events), strategy=strategy)
    keys = [(r["g"], r["window_start"]) for r in got]
    assert len(keys) == len(set(keys)), "one row per (group, window)"
    want = combined_by_hand(events)
    assert set(keys) == set(want)
    for r in got:
        w = want[(r["g"], r["window_start"])]
        assert r["COUNT(*)"] == w["COUNT(*)"] and r["nb"] == w["nb"] and r["sb"] == w["sb"]
        assert (r["lo"], r["hi"]) == (w["lo"], w["hi"])
        assert abs(r["ab"] - w["ab"]) < 1e-9


def test_worked_example_two_riders_one_district() -> None:
    # rider 0: a1 b2 -> 1 trend; rider 1: a3 b4 b5 -> 3 trends; both in district 0, window [0, 10 s)
    rows = [("A", 1, 0, 0, 0), ("B", 2, 0, 0, 4), ("A", 3, 0, 1, 0), ("B", 4, 0, 1, 6), ("B", 5, 0, 1, 8)]
    got = [r for r in engine.evaluate(PLAN, engine.table_from_events(to_events(rows))) if r["window_start"] == 0]
    assert len(got) == 1
    # trends: (a1,b2) (a3,b4) (a3,b5) (a3,b4,b5): B events 1+1+1+2 = 5, sum 4+6+8+14 = 32
    assert (got[0]["COUNT(*)"], got[0]["nb"], got[0]["sb"], got[0]["lo"], got[0]["hi"]) == (4, 5, 32, 4, 8)
