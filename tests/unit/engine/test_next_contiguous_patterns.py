"""Skip-till-next-match and contiguous queries without predicates or NOTs, every strategy against the oracle.

These are the queries COGRA evaluates pattern-grained (one open aggregate per
variable and window): a trend's last event must hand its open end to the
followers at the *earliest* later time stamp only (next-match), and a middle
event must be alone at its time stamp (contiguous). The general differential
generator (tests/oracle/generate.py) mixes them with NOTs and adjacent
predicates, which COGRA declines; here every case is pattern-grained, with
repeated followers (b2 b3 after a1) and ties, so an open end that is never
closed, or a middle event sharing its time stamp, changes the count. The
distribution is asserted on the cases of one fixed seed
(``tests.randomized.drawn_on_a_fixed_seed``): in at least a fifth of the cases
the next-match or contiguous result differs from the any-match result of the
same stream, so the "next" rule itself is under test.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.oracle import TooManyTrends, evaluate
from tests.randomized import drawn_on_a_fixed_seed, once
from tests.unit.engine.engine_adapter import run_engine
from tests.unit.engine.oracle_checks import (
    STRATEGIES,
    assert_distribution,
    assert_every_strategy_equals,
)
from trendlake import optimizer

PATTERNS = (
    "A+",
    "SEQ(A, B)",
    "SEQ(A+, B)",
    "SEQ(A, B+)",
    "SEQ(A, B, C)",
    "SEQ(A, B+, C)",
    "SEQ(A, B)+",
    "SEQ(A a1, A a2, B)",
)
STATS: Counter[str] = Counter()


def query(pattern: str, semantics: str, within: int, slide: int) -> str:
    window = "" if slide == within else f" SLIDE {slide} seconds"
    return (
        f"QUERY q RETURN COUNT(*) PATTERN {pattern} SEMANTICS {semantics} "
        f"WITHIN {within} seconds{window};"
    )


@st.composite
def pattern_cases(draw: st.DrawFn) -> tuple[str, str, list[dict[str, Any]]]:
    """(next-match or contiguous query, the same query under skip-till-any-match, rows)."""
    pattern = draw(once.sampled_from(PATTERNS))
    semantics = draw(once.sampled_from(("skip-till-next-match", "skip-till-next-match", "contiguous")))
    within = draw(once.integers(4, 10))
    slide = within if draw(once.booleans()) else draw(once.integers(1, within))
    # a word of the pattern, each type repeated 1-3 times (repeated followers), at
    # increasing time stamps with ties, plus a little noise anywhere
    word = [c for c in pattern if c in "ABC"]  # aliases are lower case
    if pattern.endswith(")+") and draw(once.booleans()):
        word = word * 2
    events: list[tuple[int, str]] = []
    t = 0
    for ty in word:
        for _ in range(draw(once.integers(1, 3))):
            t += draw(once.sampled_from((1, 1, 2, 0)))
            events.append((t, ty))
    pool = sorted(set(word)) + (["Z"] if semantics == "contiguous" else [])
    events += [(draw(once.integers(0, t + 1)), draw(st.sampled_from(pool))) for _ in range(draw(once.integers(0, 3)))]
    events.sort(key=lambda e: e[0])
    if len({t for t, _ in events}) < len(events):
        event("ties")
    rows = [{"type": ty, "ts": 100 * within + t, "seq": i} for i, (t, ty) in enumerate(events)]
    return query(pattern, semantics, within, slide), query(pattern, "skip-till-any-match", within, slide), rows


def oracle_labels(text: str, any_text: str, rows: list[dict[str, Any]]) -> tuple[Any, list[str]]:
    """The oracle's rows (None past its budget) and the labels the floors count."""
    try:
        want = evaluate(text, rows, budget=50_000)
        decides = want != evaluate(any_text, rows, budget=50_000)
    except TooManyTrends:
        return None, ["oracle budget exceeded"]
    return want, ["cases"] + ["with a trend"] * bool(want) + ["next rule decides"] * decides


@settings(max_examples=max(150, settings().max_examples))
@given(case=pattern_cases())
def check_all(case: tuple[str, str, list[dict[str, Any]]]) -> None:
    text, any_text, rows = case
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    want, labels = oracle_labels(text, any_text, rows)
    STATS.update(labels)
    if want is None:
        return
    assert_every_strategy_equals(plan, rows, want, text)  # pattern-grained: COGRA may not decline


def test_pattern_grained_queries_equal_the_oracle() -> None:
    STATS.clear()
    check_all()
    print(f"\nnext-match / contiguous without predicates: {', '.join(f'{k}: {v}' for k, v in sorted(STATS.items()))}")


def test_the_next_rule_decides_in_many_cases() -> None:
    # in 30 random runs of 150 cases: 85-130 with a trend, 42-96 decided by the next rule
    stats = drawn_on_a_fixed_seed(pattern_cases(), lambda case: oracle_labels(*case)[1], 150)
    assert_distribution(stats, "next-match / contiguous without predicates, fixed seed", cases=100,
                        shares={"with a trend": 0.45, "next rule decides": 0.2})


def test_next_match_closes_a_trend_end_at_its_first_follower() -> None:
    """SEQ(A, B) over a1 b2 b3 within 10 s: next-match pairs a1 with b2 only (1 trend);
    any-match also with b3 (2)."""
    rows = [{"type": ty, "ts": t, "seq": i} for i, (ty, t) in enumerate([("A", 1), ("B", 2), ("B", 3)])]
    for semantics, count in (("skip-till-next-match", 1), ("skip-till-any-match", 2)):
        text = query("SEQ(A, B)", semantics, 10, 10)
        plan = optimizer.build_plan(optimizer.compile_workload(text))
        want = [{"query": "q", "window_start": 0, "window_end": 10 * 10**6, "COUNT(*)": count}]
        assert evaluate(text, rows) == want
        for strategy in STRATEGIES:
            assert run_engine(plan, rows, strategy) == want, (semantics, strategy)
