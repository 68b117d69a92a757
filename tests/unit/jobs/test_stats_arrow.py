"""``jobs.statistics.compute_stats`` (the vectorized Arrow path) against the statistics' definition
computed plainly, row by row, on random event tables and workloads.

The reference counts rates and groups per pane with dictionaries, the partitions of each
partitioning of the workload as sets of key values, cuts each burst spec's
partitions into runs after sorting the rows by ``(ts, seq)``, and counts predicates with
``PredicateCounter`` (the row-by-row evaluator the Spark path runs in ``mapInArrow``): the two
paths agreeing with it is what keeps ``compute_stats`` and ``spark_aggregates`` equal."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.jobs.statistics import (
    Aggregates,
    PredicateCounter,
    build_rows,
    compute_stats,
    make_spec,
    pane_count,
)

from trendlake import optimizer

SCHEMA = {"stream": "s", "event_types": ["A", "B", "C", "K"],
          "attributes": {"x": {"type": "long", "types": "*"}, "y": {"type": "double", "types": "*"},
                         "g": {"type": "string", "types": "*"}, "h": {"type": "long", "types": "*"}}}
PATTERNS = ["SEQ(A, K+)", "SEQ(A, K+, B)", "SEQ(K+, B)", "SEQ(A, B)", "SEQ(C, K+, A)", "K+"]
PREDICATES = ["K.x < 3", "K.y >= 2.5", "K.g = 'n'", "A.x IN (1, 2)", "K.x + K.y > 4", "B.h != 2", "K.x * 2 = K.h",
              "A.g != 's'", "K.y < K.x"]
AGGREGATES = ["COUNT(*)", "SUM(K.y)", "MAX(A.x)", "COUNT(K)"]


@st.composite
def workloads(draw: st.DrawFn) -> str:
    lines = []
    for i in range(draw(st.integers(1, 5))):
        pattern = draw(st.sampled_from(PATTERNS))
        types = {t for t in "ABCK" if t in pattern}
        preds = [p for p in draw(st.lists(st.sampled_from(PREDICATES), max_size=3, unique=True))
                 if {c for c in p if c in "ABCK" and c + "." in p} <= types]
        aggs = [a for a in draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=2, unique=True))
                if a == "COUNT(*)" or a[a.index("(") + 1] in types] or ["COUNT(*)"]
        by = draw(st.sampled_from([[], ["g"], ["h"], ["g", "h"]]))
        where = f" WHERE {' AND '.join(preds)}" if preds else ""
        group = f" GROUP-BY {', '.join(by)}" if by else ""
        ret = ", ".join([*by, *aggs])
        lines.append(f"QUERY q{i} RETURN {ret} PATTERN {pattern}{where}{group} WITHIN 10 minutes;")
    return "\n".join(lines) + "\n"


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    """Events with time stamp ties, rows not always in time order, an explicit ``seq`` or
    none, and missing values of every kind (NULL, NaN, empty text)."""
    n = draw(st.integers(0, 60))
    ints = st.one_of(st.none(), st.integers(0, 4))

    def col(s: st.SearchStrategy[Any]) -> list[Any]:
        return draw(st.lists(s, min_size=n, max_size=n))

    step = draw(st.sampled_from([1_000_000, 7_000_000]))
    data: dict[str, list[Any]] = {
        "type": col(st.sampled_from("AABKKKC")),
        "ts": [t * step for t in col(st.integers(0, 40))],
        "x": col(ints),
        "y": col(st.one_of(st.none(), st.just(math.nan), st.floats(0, 5, allow_nan=False))),
        "g": col(st.one_of(st.none(), st.sampled_from(["n", "s", ""]))),
        "h": col(ints),
    }
    if draw(st.booleans()):
        data["seq"] = draw(st.permutations(range(n)))
    elif draw(st.booleans()):  # in (ts, row) order, the usual file
        order = sorted(range(n), key=lambda i: data["ts"][i])
        data = {k: [v[i] for i in order] for k, v in data.items()}
    types = {"type": pa.string(), "ts": pa.int64(), "x": pa.int64(), "y": pa.float64(), "g": pa.string(),
             "h": pa.int64(), "seq": pa.int64()}
    return pa.table({k: pa.array(v, types[k]) for k, v in data.items()})


def reference(table: pa.Table, workload: Any, group_by: list[str], pane_seconds: float,
              schema: dict[str, Any] = SCHEMA) -> list[dict[str, Any]]:
    spec = make_spec(schema, workload, pane_seconds, group_by)
    rows = table.to_pylist()
    for i, r in enumerate(rows):
        r.setdefault("seq", i)
    start = min((r["ts"] for r in rows), default=0)
    end = max((r["ts"] for r in rows), default=-1) + 1
    agg = Aggregates(panes=pane_count(start, end, spec.pane_us))

    def rates(keyed: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], tuple[int, int]]:
        per_pane: dict[tuple[Any, ...], int] = {}
        for k, r in keyed:
            per_pane[(*k, r["ts"] // spec.pane_us)] = per_pane.get((*k, r["ts"] // spec.pane_us), 0) + 1
        out: dict[tuple[Any, ...], tuple[int, int]] = {}
        for k, c in per_pane.items():
            e, m = out.get(k[:-1], (0, 0))
            out[k[:-1]] = (e + c, max(m, c))
        return out

    agg.rate = {k[0]: v for k, v in rates([((r["type"],), r) for r in rows]).items()}
    if group_by:
        import json

        keyed = [((r["type"], *[r[k] for k in group_by]), r) for r in rows
                 if all(r[k] is not None for k in group_by)]
        for k, v in rates(keyed).items():
            agg.group_rate[(k[0], json.dumps(list(k[1:])))] = v
        agg.grouped_events = len(keyed)
        for t, _ in agg.group_rate:
            agg.groups_by_type[t] = agg.groups_by_type.get(t, 0) + 1
        agg.groups_total = len({key for _, key in agg.group_rate})
    for keys in spec.partitionings:  # distinct key combinations of rows that have every key
        keyed = [(r["type"], tuple(r[k] for k in keys)) for r in rows if all(r[k] is not None for k in keys)]
        per_type = {t: (len({key for tt, key in keyed if tt == t}), sum(tt == t for tt, _ in keyed))
                    for t in {t for t, _ in keyed}}
        agg.partitions.append((len({key for _, key in keyed}), len(keyed), per_type))
    for b in spec.bursts:
        parts: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for r in rows:
            if r["type"] in b.types and all(r[k] is not None for k in b.partition_by):
                parts.setdefault(tuple(r[k] for k in b.partition_by), []).append(r)
        runs: dict[str, list[int]] = {}
        for part in parts.values():
            part.sort(key=lambda r: (r["ts"], r["seq"]))
            length = 0
            for i, r in enumerate(part):
                length += 1
                if i + 1 == len(part) or part[i + 1]["type"] != r["type"]:
                    runs.setdefault(r["type"], []).append(length)
                    length = 0
        agg.bursts.append({t: (len(ls), sum(ls), max(ls)) for t, ls in runs.items()})
    counter = PredicateCounter(spec.predicates)
    counter.add([{k: v for k, v in r.items() if k not in ("ts", "seq")} for r in rows])
    agg.predicates = counter.counts()
    return build_rows(spec, agg)


@settings(max_examples=75, deadline=None)
@given(table=tables(), text=workloads(), group_by=st.sampled_from([[], ["g"], ["h", "g"]]),
       pane=st.sampled_from([1.0, 5.0, 60.0]))
def test_compute_stats_equals_the_definition_counted_row_by_row(
    table: pa.Table, text: str, group_by: list[str], pane: float
) -> None:
    workload = optimizer.compile_workload(text, stream_schema=SCHEMA)
    assert compute_stats(table, SCHEMA, workload, pane, group_by) == reference(table, workload, group_by, pane)
    # without a workload: runs over every type of the stream
    assert compute_stats(table, SCHEMA, None, pane, group_by) == reference(table, None, group_by, pane)


@settings(max_examples=40, deadline=None)
@given(table=tables(), group_by=st.sampled_from([["g"], ["h", "g"]]), pane=st.sampled_from([1.0, 60.0]))
def test_rates_counted_sparsely_equal_the_definition(table: pa.Table, group_by: list[str], pane: float) -> None:
    """The rates' other branch (many groups or panes: combinations renumbered, only the cells
    that occur counted), forced on small tables."""
    from trendlake.jobs import statistics as stats

    dense = (stats.DENSE_GROUPS, stats.DENSE_CELLS)
    stats.DENSE_GROUPS, stats.DENSE_CELLS = 0, -(10**9)
    try:
        got = compute_stats(table, SCHEMA, None, pane, group_by)
    finally:
        stats.DENSE_GROUPS, stats.DENSE_CELLS = dense
    assert got == reference(table, None, group_by, pane)


def test_more_event_types_than_one_bit_word_holds() -> None:
    """70 event types: the types between two rows of a type span two 64-bit words."""
    import random

    rng = random.Random(5)
    names = [f"T{i}" for i in range(70)]
    schema = {**SCHEMA, "event_types": names}
    n = 3000
    types = [rng.choice(names[:3] + names[60:]) if rng.random() < 0.7 else rng.choice(names) for _ in range(n)]
    table = pa.table({"type": types, "ts": pa.array(sorted(rng.randrange(600) * 1_000_000 for _ in range(n))),
                      "x": pa.array([1] * n, pa.int64()), "y": pa.array([1.0] * n),
                      "g": [rng.choice(["n", "s", None]) for _ in range(n)], "h": pa.array([0] * n, pa.int64())})
    for group_by in ([], ["g"]):
        assert compute_stats(table, schema, None, 60.0, group_by) == reference(table, None, group_by, 60.0, schema)


def test_runs_are_cut_by_the_specs_own_types_and_partitions_only() -> None:
    """A hand-counted case: SEQ(A, K+) ignores B between K events; partition g splits runs."""
    events = [("K", "n"), ("B", "n"), ("K", "n"), ("K", "s"), ("A", "n"), ("K", "n"), ("K", "s"), ("C", "s"),
              ("K", "s")]
    table = pa.table({"type": [e[0] for e in events], "ts": pa.array(range(len(events)), pa.int64()),
                      "x": pa.array([1] * len(events), pa.int64()), "y": pa.array([1.0] * len(events)),
                      "g": [e[1] for e in events], "h": pa.array([0] * len(events), pa.int64())})
    text = "QUERY q RETURN g, COUNT(*) PATTERN SEQ(A, K+) GROUP-BY g WITHIN 1 minute;\n"
    rows = compute_stats(table, SCHEMA, optimizer.compile_workload(text, stream_schema=SCHEMA))
    bursts = {r["event_type"]: (r["runs"], r["events"], r["max"]) for r in rows if r["kind"] == "burst"}
    # g=n: K K (B is not the query's) | A | K -> K runs 2 and 1, A 1; g=s: K K K (C ignored) -> 3
    assert bursts == {"A": (1, 1, 1), "K": (3, 6, 3)}
