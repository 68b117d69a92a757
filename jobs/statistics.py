"""Stream statistics for cost-based sharing optimizers (Hamlet, Sharon, GLORIA): the
definition and its Arrow path (no Spark).

Two implementations of ONE definition:

* ``compute_stats(arrow_table, stream_schema, workload=None, ...)`` here — a plain
  function over an Arrow table of events (``trendlake eval`` and ``plan --events``,
  tests); ``file_statistics`` makes the document a plan records from it;
* ``jobs.stats.run_stats(lake_root, stream, workload_path, start, end, spark=...)`` — the
  Spark job: the same statistics over the bronze events of ``[start, end)``,
  appended to ``stats/<stream>`` as one *run* (``run_id``, ``computed_at``,
  ``range_start``, ``range_end``, ``pane_us``, ``workload_hash``).

Both reduce the events to the same integer aggregates (``Aggregates``: counts, maxima, run
lengths, predicate matches) and derive the rows from them with the same Python code
(``build_rows``), so they agree exactly. ``statistics_dict`` turns one run's rows into the
JSON-able dict the optimizer records in a plan.

Statistics (one row each, ``kind`` says which; docs/lake.md has the table):

``rate``
    per event type of the stream (and per group of ``group_by`` values when
    asked): ``events``, ``panes`` (panes of ``pane_us`` that ``[start, end)``
    touches, panes aligned to the Unix epoch), ``mean`` = events / panes and
    ``max`` = most events of the type (group) in one pane.
``groups``
    with ``group_by``: the number of distinct groups (``groups``) per event
    type and over all types (``event_type`` null); events lacking a group
    attribute belong to no group.
``partitions``
    per partitioning of the workload's queries (their ``partition_by``: group-by plus
    equivalence attributes, when not empty): the number of distinct partitions (``groups``)
    per event type and over all types (``event_type`` null), and the events that have every
    attribute of it (``events``); events lacking one belong to no partition, as in the engine.
``burst``
    per query of the workload and event type of its pattern (positive and
    negated variables): the runs of consecutive events of one type with no
    event of another type *of that pattern* in between, within a partition of
    the query's ``partition_by`` (group-by + equivalence attributes; events
    lacking one are dropped, like the engine does), ordered by ``(ts, seq)``:
    ``runs``, ``events`` (in runs), ``mean`` = events / runs, ``max`` = the
    longest run. Without a workload: one row per event type, runs over all
    types of the stream within ``group_by`` partitions (or the whole stream),
    ``query`` null.
``selectivity``
    per query, variable with local predicates or required attributes, and
    local predicate (``predicate`` = its text; ``ALL`` = every conjunct and
    every required attribute, exactly the engine's match test): the fraction
    ``value`` = ``matched`` / ``events`` of the variable's type that satisfy
    it (null without events). Evaluated with the engine's one expression semantics:
    ``engine.expr`` row by row in Spark, ``engine.expr.vector`` (exact, else row by row) in
    the Arrow path, each distinct conjunct of a type once for all queries.

The Arrow path is one columnar pass plus per-spec work over the sorted columns: rates by
Arrow group-bys, the runs of every burst spec from one sort per partitioning (see
``_bursts_arrow``), predicates per type and distinct conjunct.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trendlake.engine.expr import attributes
from trendlake.jobs.errors import BadInputError
from trendlake.jobs.times import micros
from trendlake.schemas import load_stream_schema

DEFAULT_PANE_SECONDS = 60
ALL = "ALL"
ROW_FIELDS = (
    "kind", "event_type", "group_key", "query", "variable", "predicate", "partition_by",
    "events", "panes", "runs", "matched", "groups", "mean", "max", "value",
)
RUN_FIELDS = ("run_id", "stream", "computed_at", "range_start", "range_end", "pane_us", "workload_hash", "group_by")


# ---------------------------------------------------------------------- schemas


def row_schema() -> Any:
    import pyarrow as pa

    strings = ("kind", "event_type", "group_key", "query", "variable", "predicate", "partition_by")
    longs = ("events", "panes", "runs", "matched", "groups", "max")
    return pa.schema(
        [pa.field(n, pa.string()) for n in strings]
        + [pa.field(n, pa.int64()) for n in longs]
        + [pa.field("mean", pa.float64()), pa.field("value", pa.float64())]
    )


def stats_table_schema() -> Any:
    """Arrow schema of ``stats/<stream>``: run columns, then the statistic row's columns."""
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    run = [
        pa.field("run_id", pa.string()), pa.field("stream", pa.string()), pa.field("computed_at", ts),
        pa.field("range_start", ts), pa.field("range_end", ts), pa.field("pane_us", pa.int64()),
        pa.field("workload_hash", pa.string()), pa.field("group_by", pa.string()),
    ]
    return pa.schema(run + list(row_schema()))


# ---------------------------------------------------------------------- what to compute


@dataclass
class BurstSpec:
    partition_by: tuple[str, ...]
    types: tuple[str, ...]
    queries: list[str | None] = field(default_factory=list)


@dataclass
class PredicateSpec:
    query: str
    variable: str
    event_type: str
    exprs: list[dict[str, Any]]
    required: list[str]


@dataclass
class Spec:
    """Everything both implementations compute, derived from the stream schema and workload."""

    event_types: list[str]
    pane_us: int
    group_by: list[str]
    bursts: list[BurstSpec]
    predicates: list[PredicateSpec]
    workload_hash: str | None
    partitionings: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def attributes(self) -> list[str]:
        """Attribute columns the predicates and groupings need."""
        names: list[str] = list(self.group_by)
        for keys in self.partitionings:
            names += keys
        for b in self.bursts:
            names += b.partition_by
        for p in self.predicates:
            names += p.required + sorted(attributes(p.exprs))
        return list(dict.fromkeys(names))


def workload_plan(workload: Any, stream_schema: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """What the statistics read of ``workload`` (``queries``, ``panes_us``, ``workload_hash``, as a
    plan holds them): None, a plan dict, an ``optimizer.ast.Workload``, a path or text."""
    if workload is None:
        return None
    if isinstance(workload, dict):
        return workload
    from trendlake.optimizer.ast import Workload

    from trendlake import optimizer

    if not isinstance(workload, Workload):
        text, path = str(workload), None
        if isinstance(workload, Path) or (len(text) < 4096 and "QUERY" not in text.upper()):
            path = Path(workload)
            text = path.read_text()
        workload = optimizer.compile_workload(text, stream_schema=stream_schema, path=str(path) if path else None)
    return query_entries(workload)


def query_entries(workload: Any) -> dict[str, Any]:
    """What the statistics read of a checked workload: its query entries as a plan holds them,
    its pane and its hash (``optimizer.plan``), without running a planner."""
    from trendlake.optimizer.analysis import panes_us
    from trendlake.optimizer.plan import query_entry

    from trendlake import optimizer

    return {"queries": [query_entry(q) for q in workload.queries], "panes_us": panes_us(workload),
            "workload_hash": optimizer.workload_hash(workload.text)}


def make_spec(
    stream_schema: dict[str, Any],
    workload: Any = None,
    pane_seconds: float | None = None,
    group_by: list[str] | None = None,
) -> Spec:
    plan = workload_plan(workload, stream_schema)
    if pane_seconds is not None:
        pane_us = int(round(pane_seconds * 1_000_000))
    elif plan is not None and plan.get("panes_us"):
        pane_us = int(plan["panes_us"])
    else:
        pane_us = DEFAULT_PANE_SECONDS * 1_000_000
    if pane_us <= 0:
        raise BadInputError(f"pane must be positive, not {pane_seconds!r} s")
    group_by = list(group_by or [])
    event_types = list(stream_schema["event_types"])
    bursts: dict[tuple[tuple[str, ...], tuple[str, ...]], BurstSpec] = {}
    predicates: list[PredicateSpec] = []
    if plan is None:
        key = (tuple(group_by), tuple(event_types))
        bursts[key] = BurstSpec(key[0], key[1], [None])
    else:
        for q in plan["queries"]:
            types = tuple(sorted({v["type"] for v in q["variables"]}))
            key = (tuple(q["partition_by"]), types)
            bursts.setdefault(key, BurstSpec(key[0], key[1])).queries.append(q["name"])
            local = q.get("local_predicates", {})
            required = q.get("required_attributes", {})
            for v in q["variables"]:
                exprs, req = list(local.get(v["name"], [])), list(required.get(v["name"], []))
                if exprs or req:
                    predicates.append(PredicateSpec(q["name"], v["name"], v["type"], exprs, req))
    return Spec(
        event_types=event_types,
        pane_us=pane_us,
        group_by=group_by,
        bursts=list(bursts.values()),
        predicates=predicates,
        workload_hash=plan.get("workload_hash") if plan else None,
        partitionings=list(dict.fromkeys(tuple(q["partition_by"]) for q in (plan or {}).get("queries", ())
                                         if q["partition_by"])),
    )


# ---------------------------------------------------------------------- shared pieces


def pane_count(start_us: int, end_us: int, pane_us: int) -> int:
    """Panes (aligned to the epoch) that ``[start_us, end_us)`` touches; 0 for an empty range."""
    if end_us <= start_us:
        return 0
    return (end_us - 1) // pane_us - start_us // pane_us + 1


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}


def expr_text(expr: dict[str, Any]) -> str:
    """Readable text of a plan expression (``speed < 10``, ``district IN ('north', 'south')``),
    parenthesized where the operators' precedence needs it (``(a + b) * 2``)."""

    def lit(v: Any) -> str:
        return "'" + v.replace("'", "''") + "'" if isinstance(v, str) else json.dumps(v)

    if "lit" in expr:
        return lit(expr["lit"])
    if "attr" in expr:
        return f"NEXT({expr.get('var')}).{expr['attr']}" if expr.get("next") else expr["attr"]
    op, raw = expr["op"], expr.get("args", [])
    args = [expr_text(a) for a in raw]
    if op == "neg":
        return f"-({args[0]})" if "op" in raw[0] else f"-{args[0]}"
    if op == "in":
        return f"{args[0]} IN ({', '.join(lit(v) for v in expr['values'])})"
    if op in _PRECEDENCE:
        for i, child in enumerate(raw):
            inner = _PRECEDENCE.get(child.get("op", ""))
            if inner is not None and (inner < _PRECEDENCE[op] or (inner == _PRECEDENCE[op] and i == 1)):
                args[i] = f"({args[i]})"
    return f"{args[0]} {op} {args[1]}"


class PredicateCounter:
    """Counts events of each spec's type and how many satisfy each conjunct / all of them.

    The row-by-row evaluation (``engine.expr``, missing values as None) the Spark path runs;
    the Arrow path counts the same with ``_predicates_arrow``.
    Keys: ``(spec index, conjunct index)``, conjunct -1 = ALL.
    """

    def __init__(self, specs: list[PredicateSpec]) -> None:
        from trendlake.engine.expr import compile_local, compile_value
        from trendlake.engine.query import canonical_predicates

        # specs with the same type and predicates (queries repeating a variable's predicates)
        # are evaluated once: ``same[i]`` is the first spec equal to spec i
        self.by_type: dict[str, list[tuple[int, list[Any], Any]]] = {}
        first: dict[tuple[str, str], int] = {}
        self.same: list[int] = []
        for i, s in enumerate(specs):
            key = (s.event_type, canonical_predicates([s.exprs, sorted(s.required)], {s.variable: "$"}))
            self.same.append(first.setdefault(key, i))
            if first[key] != i:
                continue
            parts = [compile_value(e) for e in s.exprs]
            both = compile_local(s.exprs, s.required)
            self.by_type.setdefault(s.event_type, []).append((i, parts, both))
        self.events: dict[tuple[int, int], int] = {}
        self.matched: dict[tuple[int, int], int] = {}
        for i, s in enumerate(specs):
            for c in [-1, *range(len(s.exprs))]:
                self.events[(i, c)] = 0
                self.matched[(i, c)] = 0

    @property
    def types(self) -> list[str]:
        return sorted(self.by_type)

    def add(self, rows: Iterable[dict[str, Any]]) -> None:
        from trendlake.engine.columns import clean

        for row in rows:
            checks = self.by_type.get(row.get("type"))
            if not checks:
                continue
            attrs = {k: clean(v) for k, v in row.items() if k != "type"}
            for i, parts, both in checks:
                self.events[(i, -1)] += 1
                if both is None or both(attrs):
                    self.matched[(i, -1)] += 1
                for c, part in enumerate(parts):
                    self.events[(i, c)] += 1
                    if part(attrs, None) is True:
                        self.matched[(i, c)] += 1

    def counts(self) -> list[tuple[int, int, int, int]]:
        return [(i, c, self.events[(self.same[i], c)], self.matched[(self.same[i], c)])
                for (i, c) in sorted(self.events)]


def predicate_batches(batches: Iterator[Any], specs: list[PredicateSpec]) -> Iterator[Any]:
    """``mapInArrow`` body: one batch of ``(spec, conjunct, events, matched)`` per partition."""
    import pyarrow as pa

    counter = PredicateCounter(specs)
    for batch in batches:
        counter.add(batch.to_pylist())
    rows = counter.counts()
    yield pa.RecordBatch.from_arrays(
        [pa.array([r[k] for r in rows], pa.int64()) for k in range(4)],
        names=["spec", "conjunct", "events", "matched"],
    )


@dataclass
class Aggregates:
    """The integer aggregates both paths produce; ``rows()`` derives the statistics from them."""

    panes: int
    rate: dict[str, tuple[int, int]] = field(default_factory=dict)            # type -> (events, max/pane)
    group_rate: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (type, key json)
    groups_by_type: dict[str, int] = field(default_factory=dict)
    groups_total: int | None = None
    grouped_events: int = 0
    bursts: list[dict[str, tuple[int, int, int]]] = field(default_factory=list)  # per spec: type -> (runs, events, max)
    # per partitioning of ``Spec.partitionings``: (partitions, events with every key, type -> (partitions, events))
    partitions: list[tuple[int, int, dict[str, tuple[int, int]]]] = field(default_factory=list)
    predicates: list[tuple[int, int, int, int]] = field(default_factory=list)


def build_rows(spec: Spec, agg: Aggregates) -> list[dict[str, Any]]:
    """The statistic rows (``ROW_FIELDS``) of integer aggregates, sorted."""

    def row(**kw: Any) -> dict[str, Any]:
        out = dict.fromkeys(ROW_FIELDS)
        out.update(kw)
        return out

    def ratio(a: int, b: int) -> float | None:
        return a / b if b else None

    rows = []
    types = list(dict.fromkeys(spec.event_types + sorted(agg.rate)))
    for t in types:
        events, most = agg.rate.get(t, (0, 0))
        rows.append(row(kind="rate", event_type=t, events=events, panes=agg.panes,
                        mean=ratio(events, agg.panes) if agg.panes else 0.0, max=most))
    for (t, key), (events, most) in sorted(agg.group_rate.items()):
        rows.append(row(kind="rate", event_type=t, group_key=key, events=events, panes=agg.panes,
                        mean=ratio(events, agg.panes) if agg.panes else 0.0, max=most))
    if spec.group_by:
        by = json.dumps(spec.group_by)
        rows.append(row(kind="groups", partition_by=by, groups=agg.groups_total or 0, events=agg.grouped_events))
        for t in types:
            rows.append(row(kind="groups", event_type=t, partition_by=by, groups=agg.groups_by_type.get(t, 0),
                            events=sum(e for (tt, _), (e, _) in agg.group_rate.items() if tt == t)))
    for keys, (count, events, per_type) in zip(spec.partitionings, agg.partitions, strict=True):
        by = json.dumps(list(keys))
        rows.append(row(kind="partitions", partition_by=by, groups=count, events=events))
        for t in types:
            n, e = per_type.get(t, (0, 0))
            rows.append(row(kind="partitions", event_type=t, partition_by=by, groups=n, events=e))
    for b, per_type in zip(spec.bursts, agg.bursts, strict=True):
        for query in b.queries:
            for t in b.types:
                runs, events, most = per_type.get(t, (0, 0, 0))
                rows.append(row(kind="burst", event_type=t, query=query, partition_by=json.dumps(list(b.partition_by)),
                                runs=runs, events=events, mean=ratio(events, runs), max=most))
    for i, c, events, matched in agg.predicates:
        p = spec.predicates[i]
        text = ALL if c == -1 else expr_text(p.exprs[c])
        rows.append(row(kind="selectivity", event_type=p.event_type, query=p.query, variable=p.variable,
                        predicate=text, events=events, matched=matched, value=ratio(matched, events)))
    return sorted(rows, key=sort_key)


def sort_key(r: dict[str, Any]) -> tuple[str, ...]:
    return tuple("" if r.get(k) is None else str(r[k]) for k in ("kind", "query", "variable", "predicate",
                                                                  "event_type", "group_key", "partition_by"))


def group_json(values: Iterable[Any]) -> str:
    return json.dumps(list(values), default=str)


# ---------------------------------------------------------------------- Arrow implementation


def _ts_micros(table: Any) -> Any:
    """``ts`` as an int64 µs numpy array (Arrow timestamps, integers µs, or ISO text / epoch seconds)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column("ts")
    if pa.types.is_timestamp(col.type):
        return pc.cast(col, pa.timestamp("us", tz="UTC")).cast(pa.int64()).to_numpy(zero_copy_only=False)
    if pa.types.is_integer(col.type):
        return col.cast(pa.int64()).to_numpy(zero_copy_only=False)
    from trendlake.engine.timeline import parse_ts

    return np.array([parse_ts(v) for v in col.to_pylist()], dtype=np.int64)


def compute_stats(
    arrow_table: Any,
    stream_schema: dict[str, Any],
    workload: Any = None,
    pane_seconds: float | None = None,
    group_by: list[str] | None = None,
    *,
    start: Any = None,
    end: Any = None,
) -> list[dict[str, Any]]:
    """The statistic rows of an Arrow table of events (``type``, ``ts``, optional ``seq``, attributes).

    ``workload`` (a plan dict, an ``.etq`` path or text, or a checked
    ``optimizer.ast.Workload``) adds burst rows per query and predicate
    selectivities; ``pane_seconds`` defaults to the workload's pane (gcd of
    its windows and slides), else 60 s. Only events in ``[start, end)``
    count (ISO text, datetime, or µs); the default range runs from the first
    event to just after the last. ``ts`` is an Arrow timestamp, µs integers,
    or ISO text / epoch seconds; ``seq`` (the tie-breaker for equal ``ts``)
    defaults to the row position.
    """
    import numpy as np
    import pyarrow as pa

    spec = make_spec(stream_schema, workload, pane_seconds, group_by)
    table = arrow_table
    ts = _ts_micros(table)
    seq = (table.column("seq").cast(pa.int64()).to_numpy(zero_copy_only=False)
           if "seq" in table.column_names else np.arange(table.num_rows, dtype=np.int64))
    start_us = micros(start) if start is not None else (int(ts.min()) if len(ts) else 0)
    end_us = micros(end) if end is not None else (int(ts.max()) + 1 if len(ts) else 0)
    keep = (ts >= start_us) & (ts < end_us)
    cols = ["type", *[c for c in spec.attributes if c in table.column_names]]
    base = table.select(cols)
    if not keep.all():
        base, ts, seq = base.filter(pa.array(keep)), ts[keep], seq[keep]
    base = base.append_column("_ts", pa.array(ts, pa.int64())).append_column("_seq", pa.array(seq, pa.int64()))
    pane = _floor_div(ts, spec.pane_us)
    missing = [c for c in spec.attributes if c not in table.column_names]
    for c in missing:
        base = base.append_column(c, pa.nulls(base.num_rows, pa.string()))
    agg = Aggregates(panes=pane_count(start_us, end_us, spec.pane_us))

    coded = _Coded(base)
    agg.rate = {k[0]: v for k, v in _rates_arrow(coded, pane, []).items()}
    if spec.group_by:
        # events lacking a group attribute belong to no group
        for k, v in _rates_arrow(coded, pane, spec.group_by).items():
            agg.group_rate[(k[0], group_json(k[1:]))] = v
        agg.grouped_events = sum(e for e, _ in agg.group_rate.values())
        for t, _key in agg.group_rate:
            agg.groups_by_type[t] = agg.groups_by_type.get(t, 0) + 1
        agg.groups_total = len({key for _t, key in agg.group_rate})
    agg.partitions = [_partitions_arrow(coded, list(keys)) for keys in spec.partitionings]
    agg.bursts = _bursts_arrow(base, spec.bursts, coded)
    agg.predicates = _predicates_arrow(base, spec)
    return build_rows(spec, agg)


def _floor_div(values: Any, by: int) -> Any:
    import numpy as np

    return np.floor_divide(values, np.int64(by))


def _codes(column: Any) -> tuple[Any, Any, list[Any]]:
    """``(codes, valid, values)`` of a column: equal values share a code (one dictionary over
    every chunk; ``values[code]`` is the value; the smallest unsigned type that holds the
    codes, so that a stable sort by them is a radix sort), ``valid`` is False where it is NULL."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray) and pa.types.is_dictionary(column.type):
        column = column.unify_dictionaries()
    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    encoded = col
    if pa.types.is_dictionary(col.type):
        values = col.dictionary.to_pylist()
        if len(set(values)) != len(values):  # a dictionary holding a value twice: encode anew
            encoded = pc.dictionary_encode(col.cast(col.type.value_type))
    else:
        encoded = pc.dictionary_encode(col)
    values = encoded.dictionary.to_pylist()
    valid = encoded.is_valid().to_numpy(zero_copy_only=False)
    dtype = np.uint8 if len(values) <= 1 << 8 else np.uint16 if len(values) <= 1 << 16 else np.int64
    codes = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False).astype(dtype)
    return codes, valid, values


class _Coded:
    """The columns of a table as codes (``_codes``), each made once and shared."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self._cache: dict[str, tuple[Any, Any, list[Any]]] = {}

    def __call__(self, name: str) -> tuple[Any, Any, list[Any]]:
        if name not in self._cache:
            self._cache[name] = _codes(self.table.column(name))
        return self._cache[name]


DENSE_GROUPS = 1 << 20  # type x key combinations counted densely; more are renumbered
DENSE_CELLS = 4096  # (group, pane) cells counted densely beyond 4 per row; more: only those that occur


def _rates_arrow(coded: _Coded, pane: Any, keys: list[str]) -> dict[tuple[Any, ...], tuple[int, int]]:
    """Events and most events in one pane per ``(type, *key values)`` (rows lacking a key are
    left out): every row's group (type and key codes combined into one number, renumbered
    densely when the combinations would be many) and pane counted with ``bincount``."""
    import numpy as np

    types, valid, type_names = coded("type")
    valid = valid.copy()
    columns = []
    for k in keys:
        codes, ok, values = coded(k)
        valid &= ok
        columns.append((codes, values))
    rows = None if valid.all() else np.flatnonzero(valid)

    def at(values: Any) -> Any:
        return values if rows is None else values[rows]

    group = at(types).astype(np.int64)
    labels: list[tuple[Any, ...]] = [(name,) for name in type_names]
    for codes, values in columns:
        card = max(len(values), 1)
        group = group * card + at(codes)
        if len(labels) * card <= DENSE_GROUPS:
            labels = [label + (v,) for label in labels for v in values]
        else:  # renumber the combinations that occur
            uniq, group = np.unique(group, return_inverse=True)
            labels = [labels[u // card] + (values[u % card],) for u in uniq.tolist()]
    out: dict[tuple[Any, ...], tuple[int, int]] = {}
    if len(group) == 0:
        return out
    panes_of = at(pane)
    first = int(panes_of.min())
    span = int(panes_of.max()) - first + 1
    if len(labels) * span <= 4 * len(group) + DENSE_CELLS:
        counts = np.bincount(group * span + (panes_of - first), minlength=len(labels) * span).reshape(-1, span)
        events, most = counts.sum(axis=1), counts.max(axis=1)
        present = np.flatnonzero(events)
    else:  # many groups x panes: only the cells that occur
        _, pane_ids = np.unique(panes_of, return_inverse=True)
        cells, counts = np.unique(group * (int(pane_ids.max()) + 1) + pane_ids, return_counts=True)
        groups = cells // (int(pane_ids.max()) + 1)
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        present = groups[starts]
        events = np.zeros(len(labels), dtype=np.int64)
        most = np.zeros(len(labels), dtype=np.int64)
        events[present] = np.add.reduceat(counts, starts)
        most[present] = np.maximum.reduceat(counts, starts)
    for g in present.tolist():
        out[labels[g]] = (int(events[g]), int(most[g]))
    return out


def _partitions_arrow(coded: _Coded, keys: list[str]) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """``(partitions, events, type -> (partitions, events))`` of the partitioning ``keys``: the
    distinct combinations of key values (rows lacking a key are left out), overall and per type."""
    import numpy as np

    types, valid, type_names = coded("type")
    valid = valid.copy()
    key, bound = np.zeros(len(types), dtype=np.int64), 1
    for k in keys:
        codes, ok, values = coded(k)
        valid &= ok
        if bound * max(len(values), 1) >= 1 << 62:  # the combined number would overflow: renumber
            key = np.unique(key, return_inverse=True)[1].astype(np.int64)
            bound = int(key.max()) + 1 if len(key) else 1
        key = key * max(len(values), 1) + codes
        bound *= max(len(values), 1)
    key, kinds = key[valid], types[valid].astype(np.int64)
    if len(key) == 0:
        return 0, 0, {}
    key = np.unique(key, return_inverse=True)[1].astype(np.int64)
    per_type_keys = np.unique(kinds * (int(key.max()) + 1) + key) // (int(key.max()) + 1)
    parts = np.bincount(per_type_keys, minlength=len(type_names))
    events = np.bincount(kinds, minlength=len(type_names))
    per_type = {type_names[i]: (int(parts[i]), int(events[i])) for i in np.flatnonzero(events).tolist()}
    return int(key.max()) + 1, int(len(key)), per_type


def _bursts_arrow(base: Any, bursts: list[BurstSpec], coded: _Coded) -> list[dict[str, tuple[int, int, int]]]:
    """Every burst spec's runs (``type -> (runs, events, most)``) over the columns of ``base``.

    One order per distinct ``partition_by``: the rows with every key, grouped by key (equal
    values share a code) and within a key in ``(_ts, _seq)`` order (a stable sort by the keys'
    codes when the rows already are in that order, the usual case). In that order, the rows
    of type ``x`` (positions ``r_0 < r_1 < ...``) form runs for a spec with types ``S``: ``r_j``
    continues the run of ``r_{j-1}`` when both are in one partition and no row of another type
    of ``S`` lies between them, i.e. when the last row of each such type before ``r_j`` is
    before ``r_{j-1}``. Those last positions are computed once per type and order, and shared
    by every spec: a spec costs a few vectorized passes over the rows of its own types."""
    import numpy as np

    if not bursts:
        return []
    type_codes, type_valid, type_names = coded("type")
    code_of = {name: code for code, name in enumerate(type_names)}
    ts = base.column("_ts").to_numpy()
    seq = base.column("_seq").to_numpy()
    n_all = len(ts)
    in_order = n_all < 2 or bool(np.all((ts[1:] > ts[:-1]) | ((ts[1:] == ts[:-1]) & (seq[1:] > seq[:-1]))))
    out: list[dict[str, tuple[int, int, int]]] = [{} for _ in bursts]
    by_partition: dict[tuple[str, ...], list[int]] = {}
    for i, b in enumerate(bursts):
        by_partition.setdefault(b.partition_by, []).append(i)
    for partition_by, specs in by_partition.items():
        valid = type_valid.copy()
        key_codes = []
        for k in partition_by:
            codes, ok, _ = coded(k)
            valid &= ok
            key_codes.append(codes)
        rows = np.flatnonzero(valid) if not valid.all() else np.arange(n_all)
        if len(rows) == 0:
            continue
        if not in_order:
            rows = rows[np.lexsort([seq[rows], ts[rows]])]
        for codes in reversed(key_codes):  # least significant key first: stable sorts keep the rest
            rows = rows[np.argsort(codes[rows], kind="stable")]
        runs = _SortedRuns(type_codes[rows], [codes[rows] for codes in key_codes], len(type_names))
        for i in specs:
            wanted = [code_of[t] for t in bursts[i].types if t in code_of]
            for x in wanted:
                lengths = runs.lengths(x, [y for y in wanted if y != x])
                if len(lengths):
                    out[i][type_names[x]] = (int(len(lengths)), int(lengths.sum()), int(lengths.max()))
    return out


class _SortedRuns:
    """Runs of one type among a set of types, over rows sorted by partition then time.

    Per type ``x`` (positions ``r_0 < r_1 < ...``), computed once and shared by every spec:
    whether ``r_j`` starts another partition than ``r_{j-1}``, and the set of types of the
    rows between them, as a bit set (``bitwise_or.reduceat`` of one bit per type, 64 types a
    word). ``r_j`` continues the run when neither the partition changes nor a type of the
    spec other than ``x`` is in the gap."""

    def __init__(self, types: Any, keys: list[Any], type_count: int) -> None:
        import numpy as np

        n = len(types)
        first = np.zeros(n, dtype=bool)
        first[0] = True
        for codes in keys:
            first[1:] |= codes[1:] != codes[:-1]
        self.partition = np.cumsum(first)
        self.types = types
        # one bit per type, in the narrowest unsigned words that hold them (64 types a word)
        width = next(b for b in (8, 16, 32, 64) if type_count <= b or b == 64)
        dtype = np.dtype(f"uint{width}")
        self.width = width
        if type_count <= width:
            self.words = [np.left_shift(np.ones(1, dtype), types.astype(dtype))]
        else:
            self.words = [np.left_shift(np.ones(1, dtype), (types - w).astype(dtype)) * ((types >= w) & (types < w + 64))
                          for w in range(0, type_count, 64)]
        self.rows: dict[int, Any] = {}
        self._gaps: dict[int, tuple[Any, list[Any]]] = {}

    def _gap(self, x: int) -> tuple[Any, Any, list[Any]]:
        """The rows of ``x``; per row after the first, whether it starts a partition, and the
        types between it and the row before, per word."""
        import numpy as np

        if x not in self._gaps:
            rx = np.flatnonzero(self.types == x)
            self.rows[x] = rx
            cross = self.partition[rx[1:]] != self.partition[rx[:-1]] if len(rx) else rx
            between = [np.bitwise_or.reduceat(w, rx)[:-1] if len(rx) else rx for w in self.words]
            self._gaps[x] = (cross, between)
        cross, between = self._gaps[x]
        return self.rows[x], cross, between

    def lengths(self, x: int, others: list[int]) -> Any:
        """The lengths of the runs of type ``x`` that no row of a type of ``others`` interrupts."""
        import numpy as np

        rx, cross, between = self._gap(x)
        m = len(rx)
        if m == 0:
            return rx
        new = np.ones(m, dtype=bool)
        new[1:] = cross
        for w, bits in enumerate(between):
            mask = 0
            for y in others:
                if w * 64 <= y < w * 64 + 64:
                    mask |= 1 << (y - w * 64)
            if mask:
                new[1:] |= (bits & bits.dtype.type(mask)) != 0
        starts = np.flatnonzero(new)
        return np.diff(np.append(starts, m))


class _LazyColumns(Mapping):
    """Attribute columns of a table as the vectorized evaluator reads them
    (``engine.columns.Columns.array``), converted on first use."""

    def __init__(self, cols: Any, names: list[str]) -> None:
        self.cols, self.names = cols, names

    def __getitem__(self, name: str) -> Any:
        if name not in self.names:
            raise KeyError(name)
        return self.cols.array(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def _predicates_arrow(base: Any, spec: Spec) -> list[tuple[int, int, int, int]]:
    """``PredicateCounter``'s counts over the columns of ``base``, vectorized: per event type,
    its rows are taken once and each distinct conjunct evaluated once for every query that has
    it (``engine.expr.vector``, the engine's own evaluator; a conjunct numpy cannot evaluate
    exactly falls back to ``engine.expr``'s, row by row, as the engine does)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    counter = PredicateCounter(spec.predicates)
    for t, checks in counter.by_type.items():
        sub = base.filter(pc.equal(base.column("type"), pa.scalar(t, pa.string())))
        masks = _ConjunctMasks(sub, [spec.predicates[i] for i, _, _ in checks])
        for i, _parts, _both in checks:
            p = spec.predicates[i]
            both = masks.present(p.required)
            for c, expr in enumerate(p.exprs):
                mask = masks.of(expr)
                both = both & mask
                counter.events[(i, c)] = masks.n
                counter.matched[(i, c)] = int(mask.sum())
            counter.events[(i, -1)] = masks.n
            counter.matched[(i, -1)] = int(both.sum())
    return counter.counts()


class _ConjunctMasks:
    """Which rows of a table of one event type satisfy a conjunct (``of``) or hold every
    required attribute (``present``), each distinct conjunct evaluated once."""

    def __init__(self, sub: Any, specs: list[PredicateSpec]) -> None:
        import pyarrow as pa
        from trendlake.engine.columns import Columns

        self.sub, self.n = sub, sub.num_rows
        self.names = list(dict.fromkeys(a for p in specs for a in [*p.required, *sorted(attributes(p.exprs))]))
        self.cols = Columns(pa.table({"type": sub.column("type"), "ts": sub.column("_ts"),
                                      **{a: sub.column(a) for a in self.names}}))
        self.attrs = _LazyColumns(self.cols, self.names)
        self.cache: dict[str, Any] = {a: num for a in self.names if (num := self.cols.numeric(a)) is not None}
        self.masks: dict[str, Any] = {}
        self.rows: list[dict[str, Any]] | None = None

    def present(self, names: list[str]) -> Any:
        import numpy as np

        mask = np.ones(self.n, dtype=bool)
        for name in names:
            mask &= self.cols.present(name)
        return mask

    def of(self, expr: dict[str, Any]) -> Any:
        import numpy as np
        from trendlake.engine.columns import clean
        from trendlake.engine.expr import compile_value
        from trendlake.engine.expr.vector import NoVector, vec_predicate

        key = json.dumps(expr, sort_keys=True)
        if key not in self.masks:
            try:
                self.masks[key] = vec_predicate(expr, self.attrs, self.cache, self.n)
            except NoVector:
                if self.rows is None:
                    self.rows = [{k: clean(v) for k, v in r.items()} for r in self.sub.select(self.names).to_pylist()]
                part = compile_value(expr)
                self.masks[key] = np.fromiter((part(r, None) is True for r in self.rows), dtype=bool, count=self.n)
        return self.masks[key]






def _iso(value: Any) -> str | None:
    if value is None:
        return None
    from trendlake.engine.timeline import format_ts, parse_ts

    return format_ts(parse_ts(value))


def statistics_dict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One run's rows -> the nested dict recorded in plans (docs/lake.md §stats)."""
    head = rows[0]
    out: dict[str, Any] = {
        "stream": head.get("stream"),
        "run_id": head.get("run_id"),
        "computed_at": _iso(head.get("computed_at")),
        "range_start": _iso(head.get("range_start")),
        "range_end": _iso(head.get("range_end")),
        "pane_us": head.get("pane_us"),
        "workload_hash": head.get("workload_hash"),
        "group_by": json.loads(head["group_by"]) if head.get("group_by") else None,
        "events": 0,
        "panes": 0,
        "types": {},
        "groups": None,
        "partitions": [],
        "bursts": {},
        "selectivity": {},
    }
    partitions: dict[str, dict[str, Any]] = {}
    per_group: dict[str, dict[str, Any]] = {}
    for r in sorted(rows, key=sort_key):
        kind, t = r["kind"], r["event_type"]
        if kind == "rate" and r["group_key"] is None:
            out["types"][t] = {"events": r["events"], "rate_mean": r["mean"], "rate_max": r["max"]}
            out["events"] += r["events"]
            out["panes"] = r["panes"]
        elif kind == "rate":
            per_group.setdefault(t, {})[r["group_key"]] = {
                "events": r["events"], "rate_mean": r["mean"], "rate_max": r["max"]}
        elif kind == "groups":
            if out["groups"] is None:
                out["groups"] = {"count": 0, "by_type": {}, "per_group": per_group}
            if t is None:
                out["groups"]["count"] = r["groups"]
            else:
                out["groups"]["by_type"][t] = r["groups"]
        elif kind == "partitions":
            entry = partitions.setdefault(r["partition_by"], {
                "partition_by": json.loads(r["partition_by"]), "count": 0, "by_type": {}})
            if t is None:
                entry["count"] = r["groups"]
            elif r["groups"]:
                entry["by_type"][t] = r["groups"]
        elif kind == "burst":
            q = r["query"] if r["query"] is not None else "*"
            entry = out["bursts"].setdefault(q, {"partition_by": json.loads(r["partition_by"]), "types": {}})
            entry["types"][t] = {"runs": r["runs"], "events": r["events"], "mean": r["mean"], "max": r["max"]}
        elif kind == "selectivity":
            var = out["selectivity"].setdefault(r["query"], {}).setdefault(
                r["variable"], {"type": t, "events": r["events"], "all": None, "predicates": []})
            if r["predicate"] == ALL:
                var["all"] = r["value"]
            else:
                var["predicates"].append({"predicate": r["predicate"], "selectivity": r["value"],
                                          "events": r["events"], "matched": r["matched"]})
    out["partitions"] = list(partitions.values())
    return out




def file_statistics(table: Any, workload: Any, stream: str | dict[str, Any] | None) -> dict[str, Any]:
    """The statistics document of an event table, as a plan records it (``compute_stats`` rows
    through ``statistics_dict``, without run fields: a file's statistics depend on its content
    only). ``workload``: a checked ``optimizer.ast.Workload`` or its plan; ``stream``: a stream
    schema, its name or path, or None (then the event types the file holds)."""
    from trendlake.optimizer.analysis import panes_us
    from trendlake.optimizer.ast import Workload

    schema = load_stream_schema(stream) if isinstance(stream, str) else stream
    if schema is None:
        types = sorted(set(table.column("type").unique().to_pylist()) - {None})
        schema = {"stream": None, "event_types": types, "attributes": {}}
    # partitions are counted per partitioning of the workload's queries ("partitions"); no
    # group_by: per-group rates are for the lake's statistics runs
    rows = compute_stats(table, schema, workload)
    if not rows:
        return {"types": {}, "bursts": {}, "events": 0}
    out = statistics_dict(rows)
    for key in ("run_id", "computed_at", "range_start", "range_end"):
        out.pop(key, None)
    out["pane_us"] = panes_us(workload) if isinstance(workload, Workload) else workload["panes_us"]
    return out
