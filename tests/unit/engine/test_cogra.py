"""COGRA (engine.strategies.cogra) on the dissertation's worked examples and against the reference.

Differential tests compare COGRA with the two-step reference (``engine.strategies.reference``)
on random queries of every granularity: the engine-level random queries of
``tests/engine/test_greta.py`` (nested Kleene, aliases, negation, adjacent
predicates, windows, aggregates), the same forced into each COGRA granularity
(type-grained kernel, type-grained with negation, mixed, pattern), bursty
streams, and random query *text* through the real parser (``tests/randomized.py``),
including the columnar entry point with vectorized local predicates. Counts
too large for the reference are compared with GRETA and with closed forms.
Long run: ``HYPOTHESIS_PROFILE=thorough pytest tests/engine/test_cogra.py``.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.events import Event, make_events, partition
from trendlake.engine.plan import load_plan
from trendlake.engine.query import CompiledQuery, Unsupported
from trendlake.engine.results import finalize, is_equal
from trendlake.engine.strategies import cogra, greta, reference

from tests.randomized import event_rows, queries
from tests.unit.engine.handplans import SECOND, fig_2_3_query, query_spec
from tests.unit.engine.test_greta import (
    FIG_2_3,
    compiled,
    only,
    random_queries,
    random_streams,
    stream,
    template_walks,
)
from tests.unit.engine.test_worked_examples import (
    FIG_2_4_AGGS,
    FIG_2_4_WANT,
    fig_11_1_negation,
)
from trendlake import engine, optimizer

ANY = "skip-till-any-match"
NEXT = "skip-till-next-match"
CONT = "contiguous"


@pytest.fixture(autouse=True)
def kernel_for_every_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny partitions normally use the interpreter; here they go through the kernel."""
    monkeypatch.setattr(cogra, "SMALL_PARTITION", 0)


def final(
    spec: dict[str, Any], events: list[Event], run: Any = cogra.run
) -> dict[int, dict[str, Any]]:
    query = compiled(spec)
    return {k: finalize(query, r) for k, r in run(query, events).items()}


def finalized(query: CompiledQuery, results: dict) -> dict[int, dict[str, Any]]:
    return {k: finalize(query, r) for k, r in results.items()}


def assert_rows_equal(query: CompiledQuery, got: dict, want: dict, context: Any = None) -> None:
    g, w = finalized(query, got), finalized(query, want)
    assert sorted(g) == sorted(w), (g, w, context)
    for k in w:
        assert g[k].keys() == w[k].keys()
        assert all(is_equal(g[k][name], w[k][name]) for name in w[k]), (k, g[k], w[k], context)


def assert_same(query: CompiledQuery, events: list[Event]) -> None:
    want = reference.run(query, events)
    try:
        got = cogra.run(query, events)
    except Unsupported:
        # only event-grained next-match / contiguous queries are left to GRETA
        assert query.semantics != ANY and (query.has_adjacent or query.negations)
        return
    assert_rows_equal(query, got, want, events)


# ---------------------------------------------------------------------------
# worked examples


def test_fig_2_3_granularities() -> None:
    assert cogra.granularity_of(compiled(fig_2_3_query(ANY))) == "type"
    assert cogra.granularity_of(compiled(fig_2_3_query(NEXT))) == "pattern"
    assert cogra.granularity_of(compiled(fig_2_3_query(CONT))) == "pattern"


def test_fig_2_4_aggregates_columnar() -> None:
    spec = fig_2_3_query(aggregates=FIG_2_4_AGGS, required={"A": ["attr"]})
    query = compiled(spec)
    types = np.array(["A", "B", "A", "A", "B"])
    ts = np.array([1, 2, 3, 4, 7]) * SECOND
    attr = np.array([5, np.nan, 6, 4, np.nan])
    got = cogra.run_columns(query, types, ts, {"attr": attr}, spec=spec)
    assert only(finalized(query, got)) == FIG_2_4_WANT
    # integer codes, an int column with None, and no spec (row-wise local predicates)
    codes = np.array([0, 1, 0, 0, 1])
    got = cogra.run_columns(
        query, codes, ts, {"attr": [5, None, 6, 4, None]}, type_names=["A", "B"]
    )
    assert only(finalized(query, got)) == FIG_2_4_WANT


def test_fig_2_4_through_pyarrow_table() -> None:
    import pyarrow as pa

    spec = fig_2_3_query(aggregates=FIG_2_4_AGGS, required={"A": ["attr"]})
    table = pa.table(
        {
            "type": ["A", "B", "A", "A", "B"],
            "ts": pa.array([1, 2, 3, 4, 7], pa.timestamp("s")),
            "attr": pa.array([5, None, 6, 4, None], pa.int64()),
        }
    )
    got = cogra.run_table(compiled(spec), table, spec=spec)
    assert only(finalized(compiled(spec), got)) == FIG_2_4_WANT


def test_fig_11_1_negation_is_type_grained() -> None:
    assert cogra.granularity_of(compiled(fig_11_1_negation())) == "type+negation"


def test_event_grained_next_match_is_left_to_greta() -> None:
    spec = query_spec(
        variables=[("A", "A"), ("B", "B"), ("N", "N", True)],
        start=["A"],
        end=["B"],
        transitions=[("A", "B", [0])],
        negations=[["N"]],
        semantics=NEXT,
    )
    with pytest.raises(Unsupported):
        cogra.run(compiled(spec), stream("a1 b2"))


def kleene(
    n: int, aggregates: list[dict[str, Any]] | None = None
) -> tuple[dict[str, Any], list[Event]]:
    spec = query_spec(
        variables=[("A", "A")],
        start=["A"],
        end=["A"],
        transitions=[("A", "A")],
        aggregates=aggregates
        or [
            {"name": "COUNT(*)", "fn": "count_star"},
            {"name": "COUNT(A)", "fn": "count", "var": "A"},
            {"name": "SUM(A.x)", "fn": "sum", "var": "A", "attr": "x"},
            {"name": "MIN(A.x)", "fn": "min", "var": "A", "attr": "x"},
        ],
        required={"A": ["x"]},
    )
    rows = [{"type": "A", "ts": i + 1, "x": i % 3} for i in range(n)]
    return spec, make_events(rows)


def test_count_is_exact_up_to_the_cap_then_overflow() -> None:
    spec, events = kleene(100)
    got = only(final(spec, events))
    # A+ over n events: 2^n - 1 trends, each event in 2^(n-1) of them
    assert got["COUNT(*)"] == 2**100 - 1
    assert got["COUNT(A)"] == 100 * 2**99
    assert got["SUM(A.x)"] == sum(i % 3 for i in range(100)) * 2**99
    assert got["MIN(A.x)"] == 0
    spec, events = kleene(140)
    got = only(final(spec, events))
    assert got["COUNT(*)"] is engine.OVERFLOW
    assert got["COUNT(A)"] is engine.OVERFLOW
    assert got["SUM(A.x)"] is engine.OVERFLOW
    assert got["MIN(A.x)"] == 0


def test_sum_of_zeros_stays_zero_after_overflow() -> None:
    spec, _ = kleene(
        0,
        [
            {"name": "COUNT(*)", "fn": "count_star"},
            {"name": "SUM(A.x)", "fn": "sum", "var": "A", "attr": "x"},
        ],
    )
    events = make_events([{"type": "A", "ts": i + 1, "x": 0} for i in range(900)])
    assert only(final(spec, events)) == {"COUNT(*)": engine.OVERFLOW, "SUM(A.x)": 0}


def test_long_bursts_have_closed_forms() -> None:
    """SEQ(A+, B): k a's then m b's give (2^k - 1) * m trends; in bursts of more than
    the kernel's step limit, equal time stamps inside the burst, and split by windows."""
    spec = query_spec(
        variables=[("A", "A"), ("B", "B")],
        start=["A"],
        end=["B"],
        transitions=[("A", "A"), ("A", "B")],
    )
    for k, m in [(1, 1), (119, 2), (120, 1), (121, 3), (126, 1)]:
        rows = [{"type": "A", "ts": i + 1} for i in range(k)] + [
            {"type": "B", "ts": k + 1 + (i // 2)} for i in range(m)
        ]
        assert only(final(spec, make_events(rows)))["COUNT(*)"] == (2**k - 1) * m
    # a's sharing time stamps pairwise: each pair multiplies by 3
    rows = [{"type": "A", "ts": i // 2 + 1} for i in range(20)] + [{"type": "B", "ts": 100}]
    assert only(final(spec, make_events(rows)))["COUNT(*)"] == 3**10 - 1


def test_saturated_window_is_skipped_but_others_are_exact() -> None:
    spec = query_spec(
        variables=[("A", "A"), ("B", "B")],
        start=["A"],
        end=["B"],
        transitions=[("A", "A"), ("A", "B")],
        within=10_000 * SECOND,
    )
    rows = [{"type": "A", "ts": i + 1} for i in range(5000)] + [{"type": "B", "ts": 6000}]
    rows += [{"type": "A", "ts": 10_001}, {"type": "A", "ts": 10_002}, {"type": "B", "ts": 10_003}]
    assert final(spec, make_events(rows)) == {0: {"COUNT(*)": engine.OVERFLOW}, 1: {"COUNT(*)": 3}}


# ---------------------------------------------------------------------------
# random queries of each granularity against the reference


def restrict(
    spec: dict[str, Any], semantics: str, negation: bool, adjacent: bool
) -> dict[str, Any]:
    """``spec`` with the given semantics, without negation and/or adjacent predicates."""
    spec = copy.deepcopy(spec)
    spec["semantics"] = semantics
    if not adjacent:
        spec["adjacent_predicates"] = []
    if not negation:
        negated = {v["name"] for v in spec["variables"] if v["negated"]}
        spec["variables"] = [v for v in spec["variables"] if not v["negated"]]
        spec["negations"] = []
        for t in spec["template"]["transitions"]:
            t["negations"] = []
        spec["template"]["start_negations"] = []
        spec["template"]["end_negations"] = []
        spec["local_predicates"] = {
            v: e for v, e in spec["local_predicates"].items() if v not in negated
        }
        spec["required_attributes"] = {
            v: a for v, a in spec["required_attributes"].items() if v not in negated
        }
    return spec


@st.composite
def bursty_streams(draw: st.DrawFn, pool: list[str], max_events: int = 12) -> list[Event]:
    """Bursts of one type (mostly distinct, sometimes equal time stamps), irrelevant Z events,
    attributes x, y in 0..3 sometimes missing."""
    rows: list[dict[str, Any]] = []
    ts = draw(st.integers(0, 3))
    while len(rows) < max_events and draw(st.integers(0, 5)):
        etype = draw(st.sampled_from(pool + ["Z", "N"]))
        for _ in range(draw(st.integers(1, 6))):
            if len(rows) >= max_events:
                break
            ts += draw(st.sampled_from([1, 1, 1, 2, 0]))
            row: dict[str, Any] = {"type": etype, "ts": ts, "seq": len(rows)}
            for attr in ("x", "y"):
                if draw(st.integers(0, 7)):
                    row[attr] = draw(st.integers(0, 3))
            rows.append(row)
        ts += draw(st.sampled_from([0, 1, 1, 3]))
    return make_events(rows)


@st.composite
def cases(draw: st.DrawFn, shape: str = "any") -> tuple[dict[str, Any], list[Event]]:
    spec = draw(random_queries())
    if shape == "type":
        spec = restrict(spec, ANY, negation=False, adjacent=False)
    elif shape == "negation":
        spec = restrict(spec, ANY, negation=True, adjacent=False)
    elif shape == "mixed":
        spec = restrict(spec, ANY, negation=draw(st.booleans()), adjacent=True)
    elif shape == "pattern":
        spec = restrict(spec, draw(st.sampled_from([NEXT, CONT])), negation=False, adjacent=False)
    positive = sorted({v["type"] for v in spec["variables"] if not v["negated"]})
    negative = sorted({v["type"] for v in spec["variables"] if v["negated"]} - set(positive))
    if draw(st.booleans()):
        events = draw(bursty_streams(positive * 2 + negative))
    else:
        events = draw(random_streams(positive * 3 + negative, draw(template_walks(spec))))
    return spec, events


@given(case=cases())
def test_cogra_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert_same(compiled(spec), events)


@given(case=cases("type"))
def test_type_grained_kernel_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    query = compiled(spec)
    assert cogra.granularity_of(query) == "type"
    assert_same(query, events)


@given(case=cases("negation"))
def test_type_grained_negation_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert_same(compiled(spec), events)


@given(case=cases("mixed"))
def test_mixed_grained_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert_same(compiled(spec), events)


@given(case=cases("pattern"))
def test_pattern_grained_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    query = compiled(spec)
    assert cogra.granularity_of(query) == "pattern"
    assert_same(query, events)


@st.composite
def long_cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[Event]]:
    """Type-grained queries over a few hundred bursty events: counts far beyond the
    reference's reach, many saturating."""
    spec = restrict(draw(random_queries()), ANY, negation=draw(st.booleans()), adjacent=False)
    positive = sorted({v["type"] for v in spec["variables"] if not v["negated"]})
    within = draw(st.sampled_from([20, 60, 400]))
    spec["window"] = {
        "within_us": within * SECOND,
        "slide_us": draw(st.sampled_from([within, within // 2, within // 4])) * SECOND,
    }
    rows: list[dict[str, Any]] = []
    ts = 0
    rng_seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(rng_seed)
    n = draw(st.integers(50, 400))
    while len(rows) < n:
        etype = str(rng.choice(positive + ["Z", "N"]))
        for _ in range(int(rng.geometric(0.15))):
            ts += int(rng.choice([0, 1, 1, 1, 2]))
            rows.append(
                {
                    "type": etype,
                    "ts": ts,
                    "seq": len(rows),
                    "x": int(rng.integers(0, 4)),
                    "y": int(rng.integers(0, 4)),
                }
            )
    return spec, make_events(rows)


@settings(max_examples=min(settings().max_examples, 60))
@given(case=long_cases())
def test_large_counts_equal_greta(case: tuple[dict[str, Any], list[Event]]) -> None:
    """Beyond the reference's reach, COGRA equals GRETA, overflow markers included; also
    when windows whose state saturated completely are skipped after every few steps."""
    spec, events = case
    query = compiled(spec)
    want = greta.run(query, events)
    assert_rows_equal(query, cogra.run(query, events), want)
    chunk = cogra.kernel.CHUNK
    try:
        cogra.kernel.CHUNK = 3
        assert_rows_equal(query, cogra.run(query, events), want)
    finally:
        cogra.kernel.CHUNK = chunk


# ---------------------------------------------------------------------------
# random query text through the parser, rows and columns


def evaluate(text: str, rows: list[dict], strategy: str) -> list[dict]:
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    return engine.evaluate(
        plan, engine.table_from_rows(rows), workload_hash=optimizer.workload_hash(text), strategy=strategy
    )


def rows_equal(got: list[dict], want: list[dict]) -> bool:
    return len(got) == len(want) and all(
        g.keys() == w.keys() and all(is_equal(g[k], w[k]) for k in g)
        for g, w in zip(got, want, strict=True)
    )


@given(text=queries(), rows=event_rows(max_events=11))
def test_parsed_queries_equal_reference(text: str, rows: list[dict]) -> None:
    want = evaluate(text, rows, "twostep")
    for strategy in ("auto", "cogra"):
        try:
            got = evaluate(text, rows, strategy)
        except Unsupported:
            assert strategy == "cogra"
            continue
        assert rows_equal(got, want), f"{strategy}\n{text}\n{rows}\ngot  {got}\nwant {want}"


def columns_of(events: list[Event], names: tuple[str, ...], how: str) -> dict[str, Any]:
    cols: dict[str, Any] = {}
    for a in names:
        values = [e.attrs.get(a) for e in events]
        if how == "float" and all(v is None or isinstance(v, (int, float)) for v in values):
            cols[a] = np.array(
                [math.nan if v is None else float(v) for v in values], dtype=np.float64
            )
        elif how == "object":
            cols[a] = np.array(values, dtype=object)
        else:
            cols[a] = values
    return cols


@given(
    text=queries(),
    rows=event_rows(max_events=11),
    how=st.sampled_from(["float", "object", "list"]),
)
def test_columnar_entry_point_equals_reference(text: str, rows: list[dict], how: str) -> None:
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    spec = plan["queries"][0]
    query = load_plan(plan).queries[spec["name"]]
    events = make_events(rows)
    for part in partition(events, query.partition_by).values():
        want = reference.run(query, part)
        types = np.array([e.type for e in part])
        ts = np.array([e.ts for e in part], dtype=np.int64)
        cols = columns_of(part, ("x", "y", "g", "h"), how)
        try:
            got = cogra.run_columns(query, types, ts, cols, spec=spec)
        except Unsupported:
            return
        # (float columns turn integer sums and minima into equal floats)
        assert_rows_equal(query, got, want, (text, rows))


# ---------------------------------------------------------------------------
# vectorized local predicates follow the engine's expression semantics


@pytest.mark.parametrize(
    "condition",
    [
        "A.x != 1",
        "A.x / A.y > 0.5",
        "A.x % 2 = 1",
        "A.x - 3 % A.y <= -1",
        "A.x IN (0, 2)",
        "A.x * 2 - A.y >= 1",
        "-A.x < -1",
        "A.x = 1.5",
    ],
)
def test_vectorized_predicates_match_rowwise(condition: str) -> None:
    text = f"QUERY q RETURN COUNT(*), SUM(A.y) PATTERN SEQ(A+, B) WHERE {condition} WITHIN 100 seconds;"
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    spec = plan["queries"][0]
    query = load_plan(plan).queries["q"]
    rng = np.random.default_rng(7)
    n = 60
    types = rng.choice(["A", "B", "C"], size=n, p=[0.6, 0.2, 0.2])
    ts = np.sort(rng.integers(0, 90, size=n)) * SECOND
    x = rng.integers(-3, 4, size=n).astype(float)
    y = rng.integers(-2, 3, size=n).astype(float)
    x[rng.random(n) < 0.15] = np.nan
    y[rng.random(n) < 0.15] = np.nan
    events = make_events(
        {
            "type": t,
            "ts": int(s) // SECOND,
            "seq": i,
            "x": None if np.isnan(a) else int(a),
            "y": None if np.isnan(b) else int(b),
        }
        for i, (t, s, a, b) in enumerate(zip(types, ts, x, y, strict=True))
    )
    want = finalized(query, greta.run(query, events))  # too many trends for the reference
    got = finalized(query, cogra.run_columns(query, types, ts, {"x": x, "y": y}, spec=spec))
    assert sorted(got) == sorted(want)
    for k in want:
        assert all(is_equal(got[k][a], want[k][a]) for a in want[k]), (k, got[k], want[k])


def test_string_attributes_fall_back_to_rowwise_predicates() -> None:
    text = "QUERY q RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE A.name = 'x' WITHIN 100 seconds;"
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    spec = plan["queries"][0]
    query = load_plan(plan).queries["q"]
    types = np.array(["A", "A", "A", "B"])
    ts = np.array([1, 2, 3, 4]) * SECOND
    got = cogra.run_columns(
        query, types, ts, {"name": np.array(["x", "y", "x", None], dtype=object)}, spec=spec
    )
    assert only(finalized(query, got)) == {"COUNT(*)": 3}


def test_unsorted_columns_are_sorted_stably() -> None:
    spec = fig_2_3_query()
    query = compiled(spec)
    order = np.array([4, 0, 7, 2, 1, 6, 3, 5])
    events = stream(FIG_2_3)
    types = np.array([e.type for e in events])[order]
    ts = np.array([e.ts for e in events])[order]
    assert only(finalized(query, cogra.run_columns(query, types, ts)))["COUNT(*)"] == 43


@given(case=cases("type"))
def test_small_partitions_take_the_interpreter_with_the_same_results(
    case: tuple[dict[str, Any], list[Event]],
) -> None:
    spec, events = case
    query = compiled(spec)
    kernel = cogra.run(query, events)
    cogra.SMALL_PARTITION = 10**9  # restored by the autouse fixture
    assert_rows_equal(query, cogra.run(query, events), kernel, events)
    cogra.SMALL_PARTITION = 0
