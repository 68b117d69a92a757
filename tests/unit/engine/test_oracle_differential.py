"""Every engine strategy equals the independent oracle (tests/oracle) on streams with trends.

Cases come from ``tests.oracle.generate.cases``: one query as text through the
real parser and plan writer, a stream built from walks through its pattern
plus noise (see that module for what is covered). Each query is compared
separately with every strategy (auto, greta, cogra, twostep); a strategy that
declines a query with ``Unsupported`` is counted and reported, and may only be
COGRA on an event-grained query. The distribution of the cases is recorded
with ``hypothesis.event`` (shown by ``pytest --hypothesis-show-statistics``)
and printed after the run (``-s``). Its floors are asserted on the cases of
one fixed seed (``tests.randomized.drawn_on_a_fixed_seed``), so that they fail
when the generator changes, not on an unlucky draw: at least 55% of the cases
have a trend and at least 40% a window with more than one trend, so the
comparison is not empty against empty, and every feature (aliases, each NOT
position, each predicate class, each semantics, both window kinds, groups) is
in at least 2% of the cases. ``hypothesis.target`` is not used: its hill
climbing on trend counts narrowed the cases to a few shapes (2 of 150 with a
trailing NOT).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
from hypothesis import event, given, reject, settings

from tests.oracle import TooManyTrends, evaluate
from tests.oracle.generate import Case, cases
from tests.randomized import drawn_on_a_fixed_seed
from tests.unit.engine.engine_adapter import run_engine
from trendlake import engine, optimizer

STRATEGIES = ("auto", *sorted(engine.STRATEGIES))
STATS: Counter[str] = Counter()


def same_value(got: Any, want: Any) -> bool:
    if isinstance(got, float) or isinstance(want, float):
        if not isinstance(got, (int, float)) or not isinstance(want, (int, float)):
            return False
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
    return type(got) is type(want) and got == want


def same_rows(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> bool:
    key = lambda r: (repr(sorted((k, r[k]) for k in r if k.startswith(("h",)))), r["window_start"])  # noqa: E731
    got, want = sorted(got, key=key), sorted(want, key=key)
    return len(got) == len(want) and all(
        g.keys() == w.keys() and all(same_value(g[k], w[k]) for k in w) for g, w in zip(got, want, strict=True)
    )


def oracle_labels(case: Case) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """The oracle's rows of a case (None past its budget) and the labels its distribution
    counts: ``cases``, whether it has a trend and a window of more than one, its features."""
    try:
        want = evaluate(case.text, case.rows, budget=50_000)
    except TooManyTrends:
        return None, ["oracle budget exceeded"]
    most = max((r["COUNT(*)"] for r in want if isinstance(r["COUNT(*)"], int)), default=0)
    labels = ["cases", *sorted(case.features)]
    labels += ["with a trend"] * bool(want) + ["with a window of >1 trend"] * (most > 1)
    labels += [f"no trend with {feature}" for feature in sorted(case.features) if not want]
    return want, labels


def check_case(case: Case) -> None:
    plan = optimizer.build_plan(optimizer.compile_workload(case.text))
    spec = plan["queries"][0]
    want, labels = oracle_labels(case)
    STATS.update(labels)
    if want is None:
        # counted and bounded on the fixed seed's cases (at most 5%), never silently dropped
        reject()
    most = max((r["COUNT(*)"] for r in want if isinstance(r["COUNT(*)"], int)), default=0)
    event("trends: " + ("none" if not want else "one per window" if most == 1 else "a window with more"))
    for feature in case.features:
        event(feature)
    event("largest COUNT(*) of a window: " + next(b for n, b in ((1, "<=1"), (10, "2-10"), (100, "11-100"), (math.inf, ">100")) if most <= n))
    for strategy in STRATEGIES:
        try:
            got = run_engine(plan, case.rows, strategy)
        except engine.Unsupported as err:
            STATS[f"Unsupported by {strategy}"] += 1
            event(f"Unsupported by {strategy}")
            event_grained = spec["semantics"] != "skip-till-any-match" and (
                spec["adjacent_predicates"] or spec["negations"]
            )
            assert strategy == "cogra" and event_grained, f"{strategy} declined {case!r}: {err}"
            continue
        STATS[f"compared with {strategy}"] += 1
        assert same_rows(got, want), f"{strategy} differs from the oracle\n{case!r}\ngot  {got}\nwant {want}"


@settings(max_examples=max(150, settings().max_examples))
@given(case=cases())
def check_all(case: Case) -> None:
    check_case(case)


def test_every_strategy_equals_the_oracle() -> None:
    STATS.clear()
    check_all()
    report = ", ".join(f"{k}: {v}" for k, v in sorted(STATS.items()))
    print(f"\noracle differential: {report}")


def test_the_generator_covers_every_feature() -> None:
    """The floors of the cases' distribution, on the 150 cases of the fixed seed."""
    stats = drawn_on_a_fixed_seed(cases(), lambda case: oracle_labels(case)[1], 150)
    n = stats["cases"]
    report = ", ".join(f"{k}: {v}" for k, v in sorted(stats.items()))
    print(f"\noracle differential, fixed seed: {report}")
    assert n >= 100, report
    assert stats["oracle budget exceeded"] <= 0.05 * n, report
    # 73-87% over seeds 0-4, one random seed of about 20 gave 63%: the floor guards against a
    # generator drifting to trivial cases
    assert stats["with a trend"] >= 0.55 * n, report
    assert stats["with a window of >1 trend"] >= 0.4 * n, report
    for feature in (
        "aliases", "not_leading", "not_trailing", "not_between", "not_nested", "not_in_kleene",
        "equivalence", "local", "adjacent", "group", "sliding", "tumbling",
        "skip-till-any-match", "skip-till-next-match", "contiguous",
    ):
        assert stats[feature] >= 0.02 * n, f"too few cases with {feature}: {report}"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_fig_2_3_through_the_adapter(strategy: str) -> None:
    """The adapter and the oracle agree on the dissertation's Figure 2.3 (43 trends)."""
    text = "QUERY q RETURN COUNT(*) PATTERN SEQ(A+, B)+ WITHIN 1000 seconds;"
    rows = [{"type": n[0].upper(), "ts": int(n[1:]), "seq": i} for i, n in enumerate("a1 b2 a3 a4 c5 b6 a7 b8".split())]
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    want = [{"query": "q", "window_start": 0, "window_end": 1000 * 10**6, "COUNT(*)": 43}]
    assert evaluate(text, rows) == want
    assert run_engine(plan, rows, strategy) == want
