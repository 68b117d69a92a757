"""COGRA (engine.strategies.cogra) on the dissertation's worked examples and against the reference.

Every evaluation goes through the engine's one entry (``run_engine`` of
``tests/unit/engine/engine_adapter.py``: ``engine.evaluate`` with a named
strategy, so partitioning, pruning and COGRA's kernel over all partitions are
what is tested; ``engine_adapter.window_results`` gives one partition's
per-window states through the same entry) except for the per-partition ``run``
of the registry and its small-partition interpreter, which the entry never takes
for type-grained queries.

Differential tests compare COGRA with the two-step reference on random queries
of every granularity: the engine-level random queries of ``test_greta.py``
(nested Kleene, aliases, negation, adjacent predicates, windows, aggregates),
the same forced into each COGRA granularity (type-grained kernel, type-grained
with negation, mixed, pattern), bursty streams, and random query *text*
through the real parser (``tests/randomized.py``). COGRA refuses exactly the
event-grained queries (next-match or contiguous with adjacent predicates or
negation): each refusal is checked against that rule, each event-grained query
must be refused, and refusals are counted (``--hypothesis-show-statistics``).
Counts too large for the reference are compared with GRETA and with closed forms.
Long run: ``HYPOTHESIS_PROFILE=thorough pytest tests/unit/engine/test_cogra.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from trendlake.engine.events import Event, make_events, partition
from trendlake.engine.plan import load_plan
from trendlake.engine.query import CompiledQuery, Unsupported
from trendlake.engine.results import finalize, is_equal
from trendlake.engine.strategies import cogra, greta, reference

from tests.randomized import event_rows, once, queries
from tests.unit.engine.engine_adapter import run_engine, window_results
from tests.unit.engine.handplans import SECOND, fig_2_3_query, plan_of, query_spec
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
OVERFLOW = "OVERFLOW"  # as run_engine reports engine.OVERFLOW


@contextmanager
def patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    """``owner.name = value`` for the block, restored whatever happens in it."""
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def rows_of(events: list[Event]) -> list[dict[str, Any]]:
    """The entry's input rows (ts in whole seconds) of ``Event`` objects."""
    assert all(e.ts % SECOND == 0 for e in events)
    return [{"type": e.type, "ts": e.ts // SECOND, "seq": e.seq, **e.attrs} for e in events]


def event_grained(query: CompiledQuery) -> bool:
    """The queries COGRA refuses (docs/engine.md): next-match or contiguous with adjacent
    predicates or negation."""
    return query.semantics != ANY and bool(query.has_adjacent or query.negations)


def cogra_rows(plan: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The entry's rows with strategy ``cogra``; None when COGRA refuses the plan's query,
    which must then be event-grained -- and an event-grained query must be refused."""
    (spec,) = plan["queries"]
    query = load_plan(plan).queries[spec["name"]]
    try:
        got = run_engine(plan, rows, "cogra")
    except Unsupported as refused:
        assert event_grained(query), refused
        assert str(refused) == cogra.supports(query)
        event("cogra: refused an event-grained query")
        return None
    assert not event_grained(query), "COGRA evaluated an event-grained query"
    event(f"cogra: {cogra.granularity_of(query)}" + ("" if cogra.columnar(query) else ", interpreter"))
    return got


def rows_equal(got: list[dict], want: list[dict]) -> bool:
    return len(got) == len(want) and all(
        g.keys() == w.keys() and all(is_equal(g[k], w[k]) for k in g)
        for g, w in zip(got, want, strict=True)
    )


def assert_same(spec: dict[str, Any], events: list[Event]) -> None:
    """COGRA through the entry gives the two-step reference's rows (or refuses, see
    ``cogra_rows``)."""
    plan, rows = plan_of(spec), rows_of(events)
    got = cogra_rows(plan, rows)
    if got is not None:
        want = run_engine(plan, rows, "twostep")
        assert rows_equal(got, want), f"\n{spec}\n{rows}\ngot  {got}\nwant {want}"


def final(spec: dict[str, Any], events: list[Event], strategy: str = "cogra") -> dict[int, dict[str, Any]]:
    """Aggregates per window index of an ungrouped query through the entry."""
    slide = spec["window"]["slide_us"]
    out = {}
    for row in run_engine(plan_of(spec), rows_of(events), strategy):
        k = row.pop("window_start") // slide
        del row["query"], row["window_end"]
        out[k] = row
    return out


def finalized(query: CompiledQuery, results: dict) -> dict[int, dict[str, Any]]:
    return {k: finalize(query, r) for k, r in results.items()}


def assert_results_equal(query: CompiledQuery, got: dict, want: dict, context: Any = None) -> None:
    """Per-window results (``window_results``, the registry's ``run``)."""
    g, w = finalized(query, got), finalized(query, want)
    assert sorted(g) == sorted(w), (g, w, context)
    for k in w:
        assert g[k].keys() == w[k].keys()
        assert all(is_equal(g[k][name], w[k][name]) for name in w[k]), (k, g[k], w[k], context)


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
    got = window_results(spec, types, ts, {"attr": attr})
    assert only(finalized(query, got)) == FIG_2_4_WANT
    # an int column with None
    got = window_results(spec, types, ts, {"attr": [5, None, 6, 4, None]})
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
    got = engine.evaluate(plan_of(spec), table, strategy="cogra")
    assert [{k: v for k, v in row.items() if k in FIG_2_4_WANT} for row in got] == [FIG_2_4_WANT]


def test_fig_11_1_negation_is_type_grained_on_the_interpreter() -> None:
    query = compiled(fig_11_1_negation())
    assert cogra.granularity_of(query) == "type" and not cogra.columnar(query)


def test_event_grained_next_match_is_left_to_greta() -> None:
    spec = query_spec(
        variables=[("A", "A"), ("B", "B"), ("N", "N", True)],
        start=["A"],
        end=["B"],
        transitions=[("A", "B", [0])],
        negations=[["N"]],
        semantics=NEXT,
    )
    rows = rows_of(stream("a1 b2 a3 n4 b5"))
    with pytest.raises(Unsupported, match="skip-till-next-match with negation is event-grained"):
        run_engine(plan_of(spec), rows, "cogra")
    # auto takes GRETA: a1 b2; a3's earliest follower b5 comes after n4
    assert [r["COUNT(*)"] for r in run_engine(plan_of(spec), rows, "auto")] == [1]


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
    assert got["COUNT(*)"] == OVERFLOW
    assert got["COUNT(A)"] == OVERFLOW
    assert got["SUM(A.x)"] == OVERFLOW
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
    assert only(final(spec, events)) == {"COUNT(*)": OVERFLOW, "SUM(A.x)": 0}


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
    assert final(spec, make_events(rows)) == {0: {"COUNT(*)": OVERFLOW}, 1: {"COUNT(*)": 3}}


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
    ts = draw(once.integers(0, 3))
    while len(rows) < max_events and draw(once.integers(0, 5)):
        etype = draw(st.sampled_from(pool + ["Z", "N"]))
        for _ in range(draw(once.integers(1, 6))):
            if len(rows) >= max_events:
                break
            ts += draw(once.sampled_from((1, 1, 1, 2, 0)))
            row: dict[str, Any] = {"type": etype, "ts": ts, "seq": len(rows)}
            for attr in ("x", "y"):
                if draw(once.integers(0, 7)):
                    row[attr] = draw(once.integers(0, 3))
            rows.append(row)
        ts += draw(once.sampled_from((0, 1, 1, 3)))
    return make_events(rows)


@st.composite
def cases(draw: st.DrawFn, shape: str = "any") -> tuple[dict[str, Any], list[Event]]:
    spec = draw(random_queries())
    if shape == "type":
        spec = restrict(spec, ANY, negation=False, adjacent=False)
    elif shape == "negation":
        spec = restrict(spec, ANY, negation=True, adjacent=False)
    elif shape == "mixed":
        spec = restrict(spec, ANY, negation=draw(once.booleans()), adjacent=True)
    elif shape == "pattern":
        spec = restrict(spec, draw(once.sampled_from((NEXT, CONT))), negation=False, adjacent=False)
    positive = sorted({v["type"] for v in spec["variables"] if not v["negated"]})
    negative = sorted({v["type"] for v in spec["variables"] if v["negated"]} - set(positive))
    if draw(once.booleans()):
        events = draw(bursty_streams(positive * 2 + negative))
    else:
        events = draw(random_streams(positive * 3 + negative, draw(template_walks(spec))))
    return spec, events


@given(case=cases())
def test_cogra_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert_same(spec, events)


@given(case=cases("type"))
def test_type_grained_kernel_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    """Through the entry, and the registry's per-partition run on both of its paths: the
    kernel (``SMALL_PARTITION`` 0) and the interpreter (a threshold no partition reaches)."""
    spec, events = case
    query = compiled(spec)
    assert cogra.granularity_of(query) == "type"
    assert_same(spec, events)
    want = final(spec, events, "twostep")
    for small_partition in (0, 10**9):
        with patched(cogra, "SMALL_PARTITION", small_partition):
            got = finalized(query, engine.STRATEGIES["cogra"].run(query, events))
        got = {k: {a: OVERFLOW if v is engine.OVERFLOW else v for a, v in r.items()} for k, r in got.items()}
        assert sorted(got) == sorted(want), (small_partition, got, want, events)
        for k in want:
            assert got[k].keys() == want[k].keys()
            assert all(is_equal(got[k][a], want[k][a]) for a in want[k]), (small_partition, k, got[k], want[k], events)


@given(case=cases("negation"))
def test_type_grained_negation_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert cogra.granularity_of(compiled(spec)) == "type"
    assert_same(spec, events)


@given(case=cases("mixed"))
def test_mixed_grained_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert cogra.granularity_of(compiled(spec)) in ("type", "mixed")
    assert_same(spec, events)


@given(case=cases("pattern"))
def test_pattern_grained_equals_reference(case: tuple[dict[str, Any], list[Event]]) -> None:
    spec, events = case
    assert cogra.granularity_of(compiled(spec)) == "pattern"
    assert_same(spec, events)


@st.composite
def long_cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[Event]]:
    """Type-grained queries over a few hundred bursty events: counts far beyond the
    reference's reach, many saturating."""
    spec = restrict(draw(random_queries()), ANY, negation=draw(once.booleans()), adjacent=False)
    positive = sorted({v["type"] for v in spec["variables"] if not v["negated"]})
    within = draw(once.sampled_from((20, 60, 400)))
    spec["window"] = {
        "within_us": within * SECOND,
        "slide_us": draw(once.sampled_from((within, within // 2, within // 4))) * SECOND,
    }
    rows: list[dict[str, Any]] = []
    ts = 0
    rng_seed = draw(once.integers(0, 2**32 - 1))
    rng = np.random.default_rng(rng_seed)
    n = draw(once.integers(50, 400))
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
    plan, rows = plan_of(spec), rows_of(events)
    want = run_engine(plan, rows, "greta")
    got = cogra_rows(plan, rows)
    assert got is not None and rows_equal(got, want), (got, want)
    with patched(cogra.kernel, "CHUNK", 3):
        assert rows_equal(run_engine(plan, rows, "cogra"), want)


# ---------------------------------------------------------------------------
# random query text through the parser, rows and columns


@given(text=queries(), rows=event_rows(max_events=11))
def test_parsed_queries_equal_reference(text: str, rows: list[dict]) -> None:
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    want = run_engine(plan, rows, "twostep")
    got = {"auto": run_engine(plan, rows, "auto"), "cogra": cogra_rows(plan, rows)}
    for strategy, result in got.items():
        if result is not None:
            assert rows_equal(result, want), f"{strategy}\n{text}\n{rows}\ngot  {result}\nwant {want}"


@given(text=queries(), rows=event_rows(max_events=11))
def test_each_partition_alone_equals_reference(text: str, rows: list[dict]) -> None:
    """Each partition of random query text evaluated alone (its states per window)."""
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    spec = plan["queries"][0]
    query = load_plan(plan).queries[spec["name"]]
    if event_grained(query):
        with pytest.raises(Unsupported):
            engine.evaluate_partials(plan, engine.table_from_rows(rows), strategy="cogra")
        event("cogra: refused an event-grained query")
        return
    for part in partition(make_events(rows), query.partition_by).values():
        table = engine.table_from_events(part)
        want = reference.run(query, part)
        got = {k: r for (_, k), r in engine.evaluate_partials(plan, table, strategy="cogra")[spec["name"]].items()}
        assert_results_equal(query, got, want, (text, rows))


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
    got = finalized(query, window_results(spec, types, ts, {"x": x, "y": y}))
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
    got = window_results(spec, types, ts, {"name": np.array(["x", "y", "x", None], dtype=object)})
    assert only(finalized(query, got)) == {"COUNT(*)": 3}


def test_unsorted_columns_are_sorted_stably() -> None:
    spec = fig_2_3_query()
    query = compiled(spec)
    order = np.array([4, 0, 7, 2, 1, 6, 3, 5])
    events = stream(FIG_2_3)
    types = np.array([e.type for e in events])[order]
    ts = np.array([e.ts for e in events])[order]
    assert only(finalized(query, window_results(spec, types, ts)))["COUNT(*)"] == 43


# ---------------------------------------------------------------------------
# the registry's per-partition run: type-grained partitions below SMALL_PARTITION
# events take the interpreter, larger ones the kernel (the entry always takes the
# kernel over all partitions for these queries); both paths are compared with the
# reference in test_type_grained_kernel_equals_reference


@pytest.fixture(params=[0, 10**9], ids=["kernel", "interpreter"])
def small_partition(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """``cogra.SMALL_PARTITION`` for the whole test, restored after it."""
    monkeypatch.setattr(cogra, "SMALL_PARTITION", request.param)
    return request.param


def test_small_partition_chooses_the_path(small_partition: int) -> None:
    """The two thresholds the property compares are not vacuous: below the threshold the
    kernel is never run, at 0 it is."""
    spec, events = kleene(5)

    def no_kernel(*args: Any) -> None:
        raise AssertionError("kernel")

    with patched(cogra, "Kernel", no_kernel):
        if small_partition:
            assert only(finalized(compiled(spec), cogra.run(compiled(spec), events)))["COUNT(*)"] == 31
        else:
            with pytest.raises(AssertionError, match="kernel"):
                cogra.run(compiled(spec), events)
