"""COGRA's compiled count kernel (``engine/strategies/cogra/_steps.c``) against its Python
kernel, and both against closed forms.

The compiled kernel runs the type-grained queries whose window state holds counts only
(COUNT(*), COUNT(E)); it must give exactly the Python kernel's results, saturation at the
result column's cap included: the property test runs both over long bursty streams of
several groups (many events per time stamp, windows not a multiple of their slide,
negative time stamps) and asserts that every case the compiled kernel should take took
it; on the cases of one fixed seed (``tests.randomized.drawn_on_a_fixed_seed``), that
many are such cases, had a result, and that some saturated.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.layout import Layout
from trendlake.engine.numbers import CAP
from trendlake.engine.strategies.cogra import kernel

from tests.randomized import drawn_on_a_fixed_seed, once
from tests.unit.engine.engine_adapter import run_engine
from tests.unit.engine.handplans import SECOND, plan_of, query_spec
from tests.unit.engine.oracle_checks import assert_distribution
from tests.unit.engine.test_cogra import ANY, patched, restrict
from tests.unit.engine.test_greta import random_queries
from trendlake import engine, optimizer

OVERFLOW = "OVERFLOW"


def test_the_compiled_kernel_is_built() -> None:
    """setup.py builds the extension where a C compiler is at hand, as on every machine the
    project installs on; a silently missing build would leave the Python kernel alone."""
    assert kernel._steps is not None, "reinstall: `make venv` builds engine/strategies/cogra/_steps.c"


class Calls:
    """``kernel._steps`` counting the runs the compiled kernel took and declined."""

    def __init__(self, steps: Any) -> None:
        self.steps = steps
        self.taken = 0
        self.declined = 0

    def run(self, *args: Any) -> Any:
        got = self.steps.run(*args)
        if got is None:
            self.declined += 1
        else:
            self.taken += 1
        return got


def both_kernels(plan: dict[str, Any], rows: list[dict[str, Any]]) -> tuple[list, list, Calls]:
    calls = Calls(kernel._steps)
    with patched(kernel, "_steps", calls):
        fast = run_engine(plan, rows, "cogra")
    with patched(kernel, "COMPILED", False):
        slow = run_engine(plan, rows, "cogra")
    return fast, slow, calls


def counts_only(draw: st.DrawFn) -> dict[str, Any]:
    """A random type-grained query without negation returning COUNT(*) and some COUNT(V)."""
    spec = restrict(draw(random_queries()), ANY, negation=False, adjacent=False)
    if draw(once.integers(0, 3)):  # mostly a type per variable: no event matches two of them
        for i, v in enumerate(spec["variables"]):
            v["type"] = "ABCDEFGH"[i]
    positive = [v["name"] for v in spec["variables"] if not v["negated"]]
    counted = draw(st.lists(st.sampled_from(positive), max_size=3, unique=True))
    spec["aggregates"] = [{"name": "COUNT(*)", "fn": "count_star"}] + [
        {"name": f"COUNT({v})", "fn": "count", "var": v} for v in counted
    ]
    within = draw(once.sampled_from((7, 20, 60, 400)))
    slide = draw(once.sampled_from((within, within // 2, within // 3, 3)))
    spec["window"] = {"within_us": within * SECOND, "slide_us": slide * SECOND}
    spec["group_by"] = spec["partition_by"] = ["g"]
    return spec


@st.composite
def long_grouped_cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A counts-only query over up to 600 events of up to 3 groups: bursts of one type,
    often several events of a time stamp (of one group or of several types); in one case
    of four a flood of one type at the end."""
    spec = counts_only(draw)
    positive = sorted({v["type"] for v in spec["variables"] if not v["negated"]})
    rng = np.random.default_rng(draw(once.integers(0, 2**32 - 1)))
    n = draw(once.integers(20, 600))
    groups = draw(once.integers(1, 3))
    same_ts = draw(once.sampled_from((0.1, 0.4, 0.7)))
    burst = draw(once.sampled_from((0.3, 0.1, 0.02, 0.005)))  # 1 / mean burst length
    rows: list[dict[str, Any]] = []
    ts = draw(once.integers(-30, 30))
    while len(rows) < n:
        etype = str(rng.choice(positive + ["Z"]))
        for _ in range(int(rng.geometric(burst))):
            if rng.random() >= same_ts:
                ts += int(rng.choice([1, 1, 2, 5]))
            rows.append(
                {
                    "type": etype if rng.random() < 0.85 else str(rng.choice(positive)),
                    "ts": ts,
                    "seq": len(rows),
                    "g": int(rng.integers(0, groups)),
                    "x": int(rng.integers(0, 4)),
                    "y": int(rng.integers(0, 4)),
                }
            )
    if draw(once.booleans()):
        # in half the cases, a flood: one group's long run of a Kleene variable's type (any type
        # where the query has none) inside a 400-second window, then one event of every type, so
        # that counts pass the cap (see the floors in test_most_cases_take_the_compiled_kernel_and_some_saturate)
        spec["window"] = {"within_us": 400 * SECOND, "slide_us": draw(once.sampled_from((400, 200, 150))) * SECOND}
        names = {v["name"]: v["type"] for v in spec["variables"] if not v["negated"]}
        looped = sorted({names[t["from"]] for t in spec["template"]["transitions"] if t["from"] == t["to"]})
        etype = draw(st.sampled_from(looped or positive))
        for _ in range(draw(once.integers(130, 260))):
            ts += int(rng.choice([0, 1, 1]))
            rows.append({"type": etype, "ts": ts, "seq": len(rows), "g": 0, "x": 1, "y": 1})
        for other in positive:
            ts += 1
            rows.append({"type": other, "ts": ts, "seq": len(rows), "g": 0, "x": 1, "y": 1})
    return spec, rows


STATS: Counter[str] = Counter()


def kernel_labels(spec: dict[str, Any], fast: list[dict[str, Any]], calls: Calls) -> list[str]:
    """The labels the floors count: ``cases``, ``eligible`` (the compiled kernel's query) and
    whether it took the compiled kernel, whether it had a result and an OVERFLOW."""
    query = engine.load_plan(plan_of(spec)).queries[spec["name"]]
    types = [v["type"] for v in spec["variables"] if not v["negated"]]
    layout = Layout.of(query)
    called = calls.taken + calls.declined > 0  # else pruning left no partition to run
    labels = ["cases"]
    if called and layout.ok and layout.rank is not None and len(set(types)) == len(types):
        # type-grained, each event matches one variable, and a time stamp's events have an
        # order to apply them in: the compiled kernel's queries
        labels += ["eligible"] + ["compiled"] * (calls.taken > 0 and not calls.declined)
    labels += ["with a result"] * bool(fast)
    labels += ["overflow"] * any(v == OVERFLOW for row in fast for v in row.values())
    return labels


@settings(max_examples=max(settings().max_examples, 150), deadline=None)
@given(case=long_grouped_cases())
def check_all(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    spec, rows = case
    fast, slow, calls = both_kernels(plan_of(spec), rows)
    assert fast == slow, f"\n{spec}\n{rows}\ncompiled {fast}\npython   {slow}"
    STATS.update(kernel_labels(spec, fast, calls))


def test_compiled_kernel_equals_python_kernel() -> None:
    STATS.clear()
    check_all()
    print(f"\ncompiled vs Python count kernel: {', '.join(f'{k}: {v}' for k, v in sorted(STATS.items()))}")
    assert STATS["compiled"] == STATS["eligible"], STATS


def compiled_only(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> list[str]:
    spec, rows = case
    calls = Calls(kernel._steps)
    with patched(kernel, "_steps", calls):
        fast = run_engine(plan_of(spec), rows, "cogra")
    return kernel_labels(spec, fast, calls)


def test_most_cases_take_the_compiled_kernel_and_some_saturate() -> None:
    # random runs with a flood in one case of four drew 3-29 overflowing cases of 150 and 50-85
    # eligible ones; with a flood in half the cases, 11-32 and 56-92
    stats = drawn_on_a_fixed_seed(long_grouped_cases(), compiled_only, 150)
    assert_distribution(stats, "compiled count kernel, fixed seed", cases=150,
                        shares={"eligible": 0.25, "with a result": 0.5, "overflow": 0.02})
    assert stats["compiled"] == stats["eligible"], stats


def kleene_counts(n: int, *, pairs: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    spec = query_spec(
        variables=[("A", "A")],
        start=["A"],
        end=["A"],
        transitions=[("A", "A")],
        aggregates=[{"name": "COUNT(*)", "fn": "count_star"}, {"name": "COUNT(A)", "fn": "count", "var": "A"}],
    )
    rows = [{"type": "A", "ts": (i // 2 if pairs else i) + 1, "seq": i} for i in range(n)]
    return spec, rows


@pytest.mark.parametrize(
    ("n", "trends", "a_count"),
    [
        (1, 1, 1),
        (120, 2**120 - 1, 120 * 2**119),
        (121, 2**121 - 1, OVERFLOW),  # 121 * 2**120 passes the cap
        (126, 2**126 - 1, OVERFLOW),
        (127, OVERFLOW, OVERFLOW),  # 2**127 - 1 passes 10**38 - 1
        (300, OVERFLOW, OVERFLOW),
    ],
)
def test_counts_are_exact_up_to_the_cap(n: int, trends: Any, a_count: Any) -> None:
    """A+ over n events: 2^n - 1 trends, each event in 2^(n-1) of them; past the cap of a
    decimal(38,0) column a count is OVERFLOW (bursts longer than one step of 120 events
    included)."""
    assert 2**126 - 1 <= CAP < 2**127 - 1 and 120 * 2**119 <= CAP < 121 * 2**120
    spec, rows = kleene_counts(n)
    fast, slow, calls = both_kernels(plan_of(spec), rows)
    assert calls.taken == 1
    assert fast == slow
    (row,) = fast
    assert {k: v for k, v in row.items() if k.startswith("COUNT")} == {"COUNT(*)": trends, "COUNT(A)": a_count}


def test_simultaneous_events_multiply() -> None:
    """A+ over pairs of simultaneous a's: each pair multiplies the trends by 3 (either, both
    or none of the two extend each trend), so 3^k - 1 trends."""
    spec, rows = kleene_counts(40, pairs=True)
    fast, slow, _ = both_kernels(plan_of(spec), rows)
    assert fast == slow
    assert fast[0]["COUNT(*)"] == 3**20 - 1


def test_template_without_simultaneous_order_is_left_to_python() -> None:
    """SEQ(A, B)+ has a cycle through two variables: simultaneous events have no order the
    kernel could apply them in, so the compiled kernel declines and the Python one runs."""
    text = "QUERY q RETURN COUNT(*) PATTERN SEQ(A, B)+ WITHIN 10 seconds;"
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    query = engine.load_plan(plan).queries["q"]
    assert Layout.of(query).rank is None
    rows = [{"type": t, "ts": ts, "seq": i} for i, (t, ts) in enumerate([("A", 1), ("B", 1), ("A", 2), ("B", 3)])]
    fast, slow, calls = both_kernels(plan, rows)
    assert calls.declined >= 1 and calls.taken == 0
    assert fast == slow == run_engine(plan, rows, "twostep")


def test_only_count_states_take_the_compiled_kernel() -> None:
    base = query_spec(
        variables=[("A", "A"), ("B", "B")],
        start=["A"],
        end=["B"],
        transitions=[("A", "A"), ("A", "B")],
        required={"A": ["x"]},
    )
    rows = [{"type": "A", "ts": i, "seq": i, "x": i} for i in range(30)] + [{"type": "B", "ts": 40, "seq": 30, "x": 0}]
    for aggregates, taken in [
        ([{"name": "COUNT(*)", "fn": "count_star"}], True),
        ([{"name": "COUNT(A)", "fn": "count", "var": "A"}], True),
        ([{"name": "SUM(A.x)", "fn": "sum", "var": "A", "attr": "x"}], False),
        ([{"name": "MAX(A.x)", "fn": "max", "var": "A", "attr": "x"}], False),
        ([{"name": "AVG(A.x)", "fn": "avg", "var": "A", "attr": "x"}], False),
    ]:
        spec = copy.deepcopy(base)
        spec["aggregates"] = aggregates
        fast, slow, calls = both_kernels(plan_of(spec), rows)
        assert fast == slow
        assert (calls.taken > 0) is taken, aggregates


def test_the_compiled_kernel_refuses_malformed_input() -> None:
    """The extension checks what it is given instead of reading out of bounds."""
    steps = kernel._steps
    ts = np.arange(6, dtype=np.int64)
    masks = (np.ones(6, dtype=bool),)
    template = (1, (0,), (1,), (1,), ((0,),), (), (0,), 10, 5)
    got = steps.run(ts, None, masks, None, *template)
    assert got is not None and len(got[1]) // 8 == 3  # windows -1, 0 and 1 hold trends
    with pytest.raises(ValueError, match="idx: increasing rows"):
        steps.run(ts, np.array([0, 2, 1], dtype=np.int32), masks, None, *template)
    with pytest.raises(ValueError, match="idx: increasing rows"):
        steps.run(ts, np.array([0, 6], dtype=np.int64), masks, None, *template)
    with pytest.raises(ValueError, match="masks: one item per row"):
        steps.run(ts, None, (np.ones(5, dtype=bool),), None, *template)
    with pytest.raises(TypeError, match="ts: a contiguous int64 buffer"):
        steps.run(ts.astype(np.float64), None, masks, None, *template)
    with pytest.raises(ValueError, match="starts: increasing rows from 0"):
        steps.run(ts, None, masks, np.array([1, 3], dtype=np.int64), *template)
    # an event matching two variables: left to the Python kernel
    two = (2, (0, 1), (0, 0), (1, 1), ((), ()), (), (0, 1), 10, 5)
    assert steps.run(ts, None, (np.ones(6, dtype=bool), np.ones(6, dtype=bool)), None, *two) is None
