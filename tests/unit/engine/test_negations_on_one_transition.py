"""Several NOTs on one transition, every strategy against the oracle.

A transition ``A -> B`` with ``NOT N`` and ``NOT M`` between them is blocked by
whichever negation matched after the ``A``: COGRA's interpreter keeps one
"since" aggregate per negation and must read the one whose match started
last. Streams here interleave both negated types with the positive ones, so
that the two negations' latest matches differ in order from case to case. The
distribution is asserted on the cases of one fixed seed
(``tests.randomized.drawn_on_a_fixed_seed``): some have a trend, and in some the
second NOT changes the answer.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle import TooManyTrends, evaluate
from tests.randomized import drawn_on_a_fixed_seed, once
from tests.unit.engine.oracle_checks import assert_distribution, assert_every_strategy_equals
from trendlake import optimizer

# (pattern, the same with its second NOT on the transition left out, the stream's types)
PATTERNS = (
    ("SEQ(A+, NOT N, NOT M, B)", "SEQ(A+, NOT N, B)", "AAABBNM"),
    ("SEQ(A, NOT N, NOT M, B+)", "SEQ(A, NOT N, B+)", "AABBBNM"),
    ("SEQ(A+, NOT SEQ(N, M), NOT P, B)", "SEQ(A+, NOT SEQ(N, M), B)", "AAABBNMP"),
    ("SEQ(A, NOT N, NOT M, B, NOT P, C)", "SEQ(A, NOT N, B, NOT P, C)", "AABBCNMP"),
)
STATS: Counter[str] = Counter()


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, list[dict[str, Any]]]:
    pattern, reduced, alphabet = draw(once.sampled_from(PATTERNS))
    within = draw(once.sampled_from(((8, 8), (8, 4), (12, 4))))

    def text(p: str) -> str:
        return (f"QUERY q RETURN COUNT(*) PATTERN {p} SEMANTICS skip-till-any-match "
                f"WITHIN {within[0]} seconds SLIDE {within[1]} seconds;")

    n = draw(once.integers(4, 14))
    types = draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n))
    for negated in "NM":  # a match of each negation somewhere in every stream
        types.insert(draw(once.integers(0, len(types))), negated)
    n = len(types)
    times = sorted(draw(once.lists(once.integers(0, 20), min_size=n, max_size=n)))
    rows = [{"type": ty, "ts": t, "seq": i} for i, (t, ty) in enumerate(zip(times, types, strict=True))]
    return text(pattern), text(reduced), rows


def oracle_labels(text: str, reduced: str, rows: list[dict[str, Any]]) -> tuple[Any, list[str]]:
    """The oracle's rows (None past its budget) and the labels the floors count."""
    try:
        want = evaluate(text, rows, budget=50_000)
        # the second NOT changes the answer (and the first had a match to compete with it)
        matter = want != evaluate(reduced, rows, budget=50_000) and any(r["type"] == "N" for r in rows)
    except TooManyTrends:
        return None, ["oracle budget exceeded"]
    return want, ["cases"] + ["with a trend"] * bool(want) + ["both negations matter"] * matter


@settings(max_examples=max(200, settings().max_examples))
@given(case=cases())
def check_all(case: tuple[str, str, list[dict[str, Any]]]) -> None:
    text, reduced, rows = case
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    want, labels = oracle_labels(text, reduced, rows)
    STATS.update(labels)
    if want is None:
        return
    assert_every_strategy_equals(plan, rows, want, text)


def test_several_nots_on_one_transition_equal_the_oracle() -> None:
    STATS.clear()
    check_all()
    print(f"\nseveral NOTs on one transition: {', '.join(f'{k}: {v}' for k, v in sorted(STATS.items()))}")


def test_the_second_not_matters_in_some_cases() -> None:
    """The floors, on the fixed seed's cases; those where the second NOT matters are compared
    with every strategy too (a random run drew none of them in 1 of 22 runs)."""

    def classify(case: tuple[str, str, list[dict[str, Any]]]) -> list[str]:
        text, reduced, rows = case
        want, labels = oracle_labels(text, reduced, rows)
        if "both negations matter" in labels:
            assert_every_strategy_equals(optimizer.build_plan(optimizer.compile_workload(text)), rows, want, text)
        return labels

    stats = drawn_on_a_fixed_seed(cases(), classify, 200)
    assert_distribution(stats, "several NOTs on one transition, fixed seed", cases=150,
                        shares={"with a trend": 0.15, "both negations matter": 0.02})
