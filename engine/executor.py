"""The engine's one entry: evaluate a plan over an Arrow table holding many partitions.

``evaluate(plan, data)`` takes a pyarrow Table (or record batches) of events
of any number of partitions and returns the result rows; ``evaluate_partials``
returns the mergeable per-(group, window) states replay ships between
executors, finished by ``finish``. Per query: vectorized matching, exact
pruning of partitions that cannot hold a trend, dropping of irrelevant events,
then COGRA's kernel over all remaining partitions at once or a row-based
strategy per partition (docs/engine.md, "Executor").
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from trendlake.engine.columns import Columns, Types, as_table, index_dtype, take
from trendlake.engine.errors import EventFileError
from trendlake.engine.expr import attributes
from trendlake.engine.expr.vector import local_mask
from trendlake.engine.plan import Plan, PlanError, load_plan
from trendlake.engine.query import CONTIGUOUS, CompiledQuery
from trendlake.engine.results import WindowResult, finalizer, merge_into
from trendlake.engine.shared import GroupInput, kind_of
from trendlake.engine.strategies import Strategy, choose
from trendlake.engine.timeline import key_runs, partition_of

__all__ = [
    "Partials",
    "columns_needed",
    "evaluate",
    "evaluate_partials",
    "finish",
    "finish_query",
    "mandatory_variables",
    "referenced_attributes",
]

Partials = dict[tuple[tuple[Any, ...], int], WindowResult]


def evaluate(
    plan: Plan | dict[str, Any] | str | Path,
    data: Any,
    *,
    strategy: str = "auto",
    queries: Iterable[str] | None = None,
    workload_hash: str | None = None,
    sorted_by: Sequence[str] | None = None,
    shared_stats: dict[str, Any] | None = None,
    timings: dict[str, dict[str, float]] | None = None,
) -> list[dict[str, Any]]:
    """Result rows of every query of ``plan`` (or the named ones) over ``data``.

    ``data``: a pyarrow Table or an iterable of RecordBatches with ``type``,
    ``ts`` (Arrow timestamp or µs integers), optionally ``seq``, and attribute
    columns, events of any number of partitions in any order. Rows come out
    per query in plan order, then by group and window start. ``strategy``:
    ``auto`` (per query from the plan), or a name of ``STRATEGIES``.
    """
    plan = _plan(plan, workload_hash)
    return finish(
        plan,
        evaluate_partials(
            plan, data, strategy=strategy, queries=queries, sorted_by=sorted_by, shared_stats=shared_stats,
            timings=timings,
        ),
    )


def evaluate_partials(
    plan: Plan | dict[str, Any] | str | Path,
    data: Any,
    *,
    strategy: str = "auto",
    queries: Iterable[str] | None = None,
    sorted_by: Sequence[str] | None = None,
    shared_stats: dict[str, Any] | None = None,
    timings: dict[str, dict[str, float]] | None = None,
) -> dict[str, Partials]:
    """Unfinalized results per query: (group values, window index) -> state, mergeable
    (``merge``) across tables holding disjoint partitions and finished with ``finish``.

    ``sorted_by``: the table is already ordered by these columns, then ``ts``,
    ``seq``, with equal key values contiguous (replay's sorted Spark
    partitions); queries partitioned by exactly these columns skip the sort.
    Under ``strategy="auto"`` the plan's sharing groups run on the shared executor
    of their kind (``engine.shared``); ``shared_stats`` (a dict) then receives what
    each group did, by group id, in its kind's record (``Kind.new_stats``; one is made
    for a group without). ``timings`` (a dict) receives the engine seconds spent per sharing
    group (``timings["groups"][id]``) and per query run alone (``timings["queries"][name]``),
    added to what it holds: the measured side of the planner's estimates.
    """
    plan = _plan(plan, None)
    wanted = list(plan.queries) if queries is None else list(queries)
    for name in wanted:
        if name not in plan.queries:
            raise PlanError(f"plan has no query {name!r}")
    chosen = {name: choose(plan.queries[name], strategy) for name in wanted}
    specs = {q["name"]: q for q in plan.raw.get("queries", [])}
    groups = shared_groups(plan, wanted) if strategy == "auto" else []
    cols = Columns(as_table(data))
    check_additive_columns([plan.queries[name] for name in wanted], cols.table.schema)
    keysets: dict[tuple[str, ...], _KeySet] = {}

    def keyset(keys: tuple[str, ...]) -> _KeySet:
        if keys not in keysets:
            presorted = sorted_by is not None and tuple(sorted_by) == keys
            keysets[keys] = _KeySet(cols, keys, presorted)
        return keysets[keys]

    out: dict[str, Partials] = {}
    for group in groups:
        queries = [plan.queries[name] for name in group["queries"]]
        ks = keyset(queries[0].partition_by)
        kind = kind_of(group["kind"])
        assert kind is not None  # shared_groups checked it
        stats = None
        if shared_stats is not None:  # what the group's executor did, in its kind's own record
            stats = shared_stats.get(group["id"])
            if stats is None:
                stats = shared_stats[group["id"]] = kind.new_stats()
        began = time.perf_counter()
        out.update(_group_partials(group, queries, specs, cols, ks, stats))
        if timings is not None:
            spent = timings.setdefault("groups", {})
            spent[group["id"]] = spent.get(group["id"], 0.0) + time.perf_counter() - began
    for name in wanted:
        if name in out:
            continue
        query = plan.queries[name]
        ks = keyset(query.partition_by)  # the partitions' order: shared by the queries of a key
        began = time.perf_counter()
        out[name] = _query_partials(query, specs.get(name), cols, ks, chosen[name])
        if timings is not None:
            spent = timings.setdefault("queries", {})
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - began
    return {name: out[name] for name in wanted}


def shared_groups(plan: Plan, wanted: Sequence[str]) -> list[dict[str, Any]]:
    """The plan's sharing groups whose queries are all wanted (with at least two of them),
    checked against what the engine's executor of their kind supports."""
    chosen = set(wanted)
    groups = []
    for group in plan.raw.get("sharing") or []:
        names = [q for q in group.get("queries", []) if q in chosen]
        if len(names) < 2:
            continue
        kind = kind_of(group.get("kind", ""))
        if kind is None:
            raise PlanError(f"sharing group {group.get('id')}: unknown kind {group.get('kind')!r}")
        queries = [plan.queries[q] for q in names]
        reason = kind.supports(group, queries)
        if reason is not None:
            raise PlanError(f"sharing group {group.get('id')}: {reason}")
        groups.append({**group, "queries": names})
    return groups


def _group_partials(
    group: dict[str, Any],
    queries: list[CompiledQuery],
    specs: dict[str, dict[str, Any]],
    cols: Columns,
    ks: _KeySet,
    stats: Any,
) -> dict[str, Partials]:
    """Partial results of the queries of one sharing group, evaluated together."""
    out: dict[str, Partials] = {q.name: {} for q in queries}
    members, masks, keeps, whole = [], {}, {}, set()
    visited = np.zeros(len(ks.rows), dtype=bool)
    matching: dict[int, np.ndarray] = {}  # the masks of the queries kept everywhere, each once
    names: set[str] = set()
    memo: dict[Any, Any] = {}
    for q in queries:
        matched = _matches(q, specs.get(q.name), cols, ks, memo)
        if matched is None:
            continue
        q_masks, _, attrs, keep, every = matched
        masks[q.name] = q_masks  # may be shared between queries: no in-place changes
        keeps[q.name] = keep
        if every and q.semantics != CONTIGUOUS:  # its rows: those its variables match
            whole.add(q.name)
            matching.update((id(m), m) for m in q_masks.values())
        else:
            visited |= keep
        members.append(q)
        names.update(attrs.names)
    if not members:
        return out
    if matching:
        visited |= np.logical_or.reduce(list(matching.values()))
    idx = _positions(visited)
    kind = kind_of(group["kind"])
    assert kind is not None
    data = GroupInput(members, masks, keeps, idx, ks.ts, _LazyAttrs(ks, sorted(names)), ks.part_of(idx), ks.starts,
                      frozenset(whole))
    results = kind.run(group, data, stats)
    if stats is not None and getattr(stats, "per_window", None):
        # per-window records name the partition by its key values, not the executor's id
        ids = {key[0] for key in stats.per_window if isinstance(key[0], int)}
        by_id = ks.values(ids)
        renamed = {
            ((by_id[part], k) if isinstance(part, int) else (part, k)): v for (part, k), v in stats.per_window.items()
        }
        stats.per_window.clear()  # in place: the caller holds this dict
        stats.per_window.update(renamed)
    values = ks.values({part for r in results.values() for part, _ in r})
    for q in members:
        positions = [q.partition_by.index(g) for g in q.group_by]
        groups = {part: tuple(key[i] for i in positions) for part, key in values.items()}
        got = results[q.name]
        if positions == list(range(len(q.partition_by))):  # a partition is a group: nothing to merge
            out[q.name] = {(groups[part], k): result for (part, k), result in got.items() if result.trends}
            continue
        partials = out[q.name]
        for (part, k), result in got.items():
            if result.trends:
                merge_into(partials, (groups[part], k), result)
    return out


def finish(plan: Plan, partials: Mapping[str, Partials]) -> list[dict[str, Any]]:
    """Result rows of merged partial results, per query in the given order."""
    rows: list[dict[str, Any]] = []
    for name, p in partials.items():
        rows.extend(finish_query(plan.queries[name], p))
    return rows


def finish_query(query: CompiledQuery, partials: Partials) -> list[dict[str, Any]]:
    """Result rows (DESIGN §5) of merged partial results, sorted by group and window."""
    rows = []
    keys = list(partials)
    name, group_by, within, slide = query.name, query.group_by, query.within, query.slide
    # per group (far fewer than rows): its order and its row's first columns
    heads = {group: {"query": name, **dict(zip(group_by, group, strict=True))} for group in {g for g, _ in keys}}
    if all(isinstance(v, (int, float)) for group in heads for v in group):
        keys.sort()  # numbers only: the same order as _sortable's, without a key per row
    else:
        order = {group: tuple(_sortable(v) for v in group) for group in heads}
        keys.sort(key=lambda gk: (order[gk[0]], gk[1]))
    aggregates = finalizer(query)
    for key in keys:
        result = partials[key]
        if not result.trends:
            continue
        group, k = key
        row: dict[str, Any] = heads[group].copy()
        row["window_start"] = start = k * slide  # timeline.window_bounds
        row["window_end"] = start + within
        for agg, read in aggregates:
            row[agg] = read(result)
        rows.append(row)
    return rows


def _sortable(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def _plan(plan: Plan | dict[str, Any] | str | Path, workload_hash: str | None) -> Plan:
    if not isinstance(plan, Plan):
        return load_plan(plan, workload_hash)
    if workload_hash is not None and plan.workload_hash != workload_hash:
        return load_plan(plan.raw, workload_hash)
    return plan


def check_additive_columns(queries: Iterable[CompiledQuery], schema: pa.Schema) -> None:
    """Refuse a SUM or AVG over a column that does not hold numbers (text, booleans, ...),
    naming the query and the aggregate: adding such values has no meaning (MIN and MAX of
    text are defined: they compare as text)."""
    for query in queries:
        for agg in query.aggregates:
            if agg.fn not in ("sum", "avg") or agg.attr not in schema.names:
                continue
            kind = schema.field(agg.attr).type
            if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)):
                raise EventFileError(
                    f"query {query.name}: {agg.fn.upper()}({agg.var}.{agg.attr}): attribute "
                    f"{agg.attr!r} holds {kind} values, not numbers"
                )


def mandatory_variables(query: CompiledQuery) -> frozenset[str]:
    """Positive variables every trend contains: no template path from a start to an
    end variable avoids them."""
    out = set()
    for v in query.positive:
        frontier = [s for s in query.start if s != v]
        seen = set(frontier)
        while frontier:
            x = frontier.pop()
            for t in query.successors[x]:
                if t.dst != v and t.dst not in seen:
                    seen.add(t.dst)
                    frontier.append(t.dst)
        if not (seen & (query.end - {v})):
            out.add(v)
    return frozenset(out)


def columns_needed(plan: Plan | dict[str, Any], queries: Iterable[str] | None = None) -> set[str]:
    """The attribute columns evaluating ``plan`` (or its named queries) reads: what their
    predicates and aggregates mention, and the attributes that partition them."""
    raw = plan.raw if isinstance(plan, Plan) else plan
    wanted = None if queries is None else set(queries)
    found: set[str] = set()
    for spec in raw.get("queries", []):
        if wanted is None or spec.get("name") in wanted:
            found |= referenced_attributes(spec)
            found.update(spec.get("partition_by") or [])  # group_by, then equivalence
    return found


def referenced_attributes(spec: dict[str, Any]) -> set[str]:
    """Attribute names a plan query entry mentions (predicates, required attributes, aggregates)."""
    found = {a["attr"] for a in spec.get("aggregates", []) if a.get("attr")}
    for exprs in spec.get("local_predicates", {}).values():
        found |= attributes(exprs)
    for adjacent in spec.get("adjacent_predicates", []):
        found |= attributes(adjacent["expr"])
    for names in spec.get("required_attributes", {}).values():
        found.update(names)
    return found


def _stable_key_order(table: Any, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """Row order by ``keys`` (nulls last), equal keys in table order; for one integer key
    without nulls also its values in that order (the partition runs, without a gather of
    the column by Arrow)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(keys) == 1:
        col = table.column(keys[0])
        if pa.types.is_integer(col.type) and col.null_count == 0:
            values = np.asarray(col.to_numpy())
            lo, hi = (int(values.min()), int(values.max())) if len(values) else (0, 0)
            if 0 <= lo and hi < 2**16:  # numpy's stable sort of 16-bit keys is a radix sort
                values = values.astype(np.uint16)
            order = np.argsort(values, kind="stable").astype(index_dtype(len(values)))
            return order, values[order]
    if not keys:
        return np.arange(table.num_rows, dtype=index_dtype(table.num_rows)), None
    # Arrow's sort is stable
    order = pc.sort_indices(table.select(list(keys)), sort_keys=[(k, "ascending") for k in keys])
    return np.asarray(order.to_numpy(), dtype=index_dtype(table.num_rows)), None


class _KeySet:
    """The rows of a table that belong to a partition of ``keys``, in (key, ts, seq) order."""

    def __init__(self, cols: Columns, keys: tuple[str, ...], presorted: bool) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = cols.table
        n = cols.n
        present = np.ones(n, dtype=bool)
        for k in keys:
            present &= cols.present(k)  # no value (NULL rule): in no partition
        self.cols = cols
        self.identity = presorted and bool(present.all())
        sorted_keys = None  # one integer key's values over ``rows``, when the sort made them
        if presorted:
            rows = np.arange(n, dtype=index_dtype(n)) if self.identity else np.flatnonzero(present).astype(index_dtype(n))
        elif cols.time_ordered() and all(k in table.column_names for k in keys):
            # rows already in (ts, seq) order (an event file): a stable sort by the keys
            # alone keeps that order within each partition
            order, sorted_keys = _stable_key_order(table, keys)
            if not present.all():
                rows, sorted_keys = order[present[order]], None
            else:
                rows = order
            del order
        else:
            order_keys = [(k, "ascending") for k in keys]
            sort_table = pa.table(
                {
                    **{k: table.column(k) for k in keys if k in table.column_names},
                    "__ts": cols.ts,
                    "__seq": cols.seq,
                }
            )
            sort_keys = [(k, o) for k, o in order_keys if k in sort_table.column_names]
            order = np.asarray(
                pc.sort_indices(
                    sort_table, sort_keys=[*sort_keys, ("__ts", "ascending"), ("__seq", "ascending")]
                ).to_numpy(),
                dtype=index_dtype(n),
            )
            rows = order[present[order]]
        self.rows = rows
        self.ts = cols.ts if self.identity else take(cols.ts, rows)
        self.type_codes = cols.type_codes if self.identity else take(cols.type_codes, rows)
        if keys and len(rows) and sorted_keys is not None:
            change = np.empty(len(rows), dtype=bool)
            change[0] = True
            np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=change[1:])
            del sorted_keys
        elif keys and len(rows):
            sub = table.select(list(keys))
            if not self.identity:
                sub = sub.take(pa.array(rows))
            change = key_runs(sub, keys)
            del sub
        else:
            change = np.zeros(len(rows), dtype=bool)
            if len(rows):
                change[0] = True
        self.starts = np.flatnonzero(change)
        self.nkeys = len(self.starts)
        self._keys = tuple(keys) if keys and len(rows) else None  # key values read on demand
        self._values: dict[int, tuple[Any, ...]] = {}
        self._attrs: dict[str, np.ndarray] = {}
        self._nums: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
        if presorted and len(rows) > 1:
            ts = self.ts
            back = (ts[1:] < ts[:-1]) & ~change[1:]
            if back.any():
                raise EventFileError(
                    f"table is not sorted by ({', '.join(keys)}, ts) as promised: "
                    f"row {int(rows[1 + int(np.flatnonzero(back)[0])])} goes back in time"
                )

    def part_of(self, positions: np.ndarray) -> np.ndarray:
        """The partition ids of the given positions into ``rows`` (increasing or not)."""
        return partition_of(self.starts, positions)

    def sizes(self) -> np.ndarray:
        """Rows per partition."""
        return np.diff(np.append(self.starts, len(self.rows)))

    def attr(self, name: str) -> np.ndarray:
        """An attribute column over ``rows``."""
        if name not in self._attrs:
            arr = self.cols.array(name)
            self._attrs[name] = arr if self.identity else arr[self.rows]
        return self._attrs[name]

    def numeric(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        if name not in self._nums:
            num = self.cols.numeric(name)
            if num is not None and not self.identity:
                num = (num[0][self.rows], num[1][self.rows])
            self._nums[name] = num
        return self._nums[name]

    def values(self, kids: Iterable[int]) -> dict[int, tuple[Any, ...]]:
        """Key values of the given partition ids."""
        import pyarrow as pa

        want = sorted(set(kids) - set(self._values))
        if want and self._keys is not None:
            picked = self.cols.table.select(list(self._keys)).take(pa.array(self.rows[self.starts[want]]))
            columns = [picked.column(i).to_pylist() for i in range(picked.num_columns)]
            for j, kid in enumerate(want):
                self._values[kid] = tuple(col[j] for col in columns)
        elif want:
            for kid in want:
                self._values[kid] = ()
        return self._values


class _LazyAttrs(Mapping):
    """Attribute columns over a key set's rows, converted on first use: with the numeric
    columns of the predicates cached, most queries never need the object arrays."""

    def __init__(self, ks: _KeySet, names: Sequence[str]) -> None:
        self.ks = ks
        self.names = list(names)
        self.known = set(names)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.known:
            raise KeyError(name)
        return self.ks.attr(name)

    def __contains__(self, name: object) -> bool:
        return name in self.known

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def _local_mask(
    query: CompiledQuery,
    spec: dict[str, Any] | None,
    var: str,
    type_mask: np.ndarray,
    attrs: Any,
    cache: dict[str, Any],
) -> np.ndarray:
    """``expr.vector.local_mask`` of one variable of ``query`` (its plan entry ``spec``:
    the predicates as expressions numpy may evaluate; None: row by row)."""
    exprs = None if spec is None else spec.get("local_predicates", {}).get(var, [])
    required = () if spec is None else spec.get("required_attributes", {}).get(var, [])
    return local_mask(query.variables[var].local, exprs, required, type_mask, attrs, cache)


def _matches(
    query: CompiledQuery, spec: dict[str, Any] | None, cols: Columns, ks: _KeySet, memo: dict | None = None
) -> tuple[dict[str, np.ndarray], np.ndarray | None, _LazyAttrs, np.ndarray | None, bool] | None:
    """Per variable, which of the key set's rows match it, the rows worth visiting
    (exact pruning), the attributes, those rows as a mask, and whether every partition is
    kept; None when no row is. ``memo``: masks shared with other queries over the same key
    set (a variable's mask depends only on its type, predicates and required attributes);
    given, the rows to visit are not listed (None: a sharing group lists its own), nor, for a
    query kept in every partition whose rows are those its variables match, that mask (None)."""
    n = len(ks.rows)
    if n == 0:
        return None
    types = Types(ks.type_codes, cols.type_names, n)
    if spec is None:
        names = list(cols.attr_names)
    else:
        names = sorted(referenced_attributes(spec) & set(cols.attr_names))
    attrs = _LazyAttrs(ks, names)
    # the predicates' numeric columns (values, presence: True where every row has one), shared
    # by a sharing group's queries
    cache = {} if memo is None else memo.setdefault(("numeric",), {})
    for a in names:
        if a not in cache and (num := ks.numeric(a)) is not None:
            cache[a] = (num[0], True if num[1].all() else num[1])
    type_masks: dict[str, np.ndarray] = {}
    masks: dict[str, np.ndarray] = {}
    for v, var in query.variables.items():
        if memo is not None and spec is not None:  # the queries of a sharing group share masks
            key = (var.type, json.dumps(spec.get("local_predicates", {}).get(v, []), sort_keys=True),
                   tuple(spec.get("required_attributes", {}).get(v, [])))
            if key not in memo:
                type_mask = memo.setdefault(("type", var.type), types.mask(var.type))
                memo[key] = _local_mask(query, spec, v, type_mask, attrs, cache)
            masks[v] = memo[key]
            continue
        if var.type not in type_masks:
            type_masks[var.type] = types.mask(var.type)
        masks[v] = _local_mask(query, spec, v, type_masks[var.type], attrs, cache)

    def present_in(vs: Iterable[str]) -> np.ndarray:
        """Per partition: does one of the variables ``vs`` match one of its rows? (Per mask
        once for a sharing group's queries, which share their masks.)"""
        ms = [masks[v] for v in vs]
        if memo is None or len(ms) != 1:
            return np.logical_or.reduceat(np.logical_or.reduce(ms), ks.starts)
        got = memo.get(("present", id(ms[0])))
        if got is None or got[0] is not ms[0]:
            got = memo[("present", id(ms[0]))] = (ms[0], np.logical_or.reduceat(ms[0], ks.starts))
        return got[1]

    # exact pruning: every trend holds a start, an end and every mandatory variable
    ok = present_in(query.start) & present_in(query.end)
    for v in mandatory_variables(query):
        ok &= present_in((v,))
    whole = bool(ok.all())
    if memo is not None and whole and query.semantics != CONTIGUOUS:
        # a sharing group's query kept everywhere: its rows are those its masks match, which
        # the group lists once for all its queries
        return masks, None, attrs, None, True
    keep = np.ones(n, dtype=bool) if whole else np.repeat(ok, ks.sizes())
    if query.semantics != CONTIGUOUS:  # an event no variable matches changes nothing
        keep &= np.logical_or.reduce(list(masks.values()))
    if memo is not None:
        return (masks, None, attrs, keep, whole) if keep.any() else None
    idx = _positions(keep)
    if not len(idx):
        return None
    return masks, idx, attrs, keep, whole


def _positions(mask: np.ndarray, block: int = 1 << 20) -> np.ndarray:
    """``np.flatnonzero(mask)`` in 4-byte indexes (below 2**31 rows), made block by block:
    never the 8-byte array of every position besides."""
    dtype = index_dtype(len(mask))
    out = np.empty(int(np.count_nonzero(mask)), dtype=dtype)
    at = 0
    for lo in range(0, len(mask), block):
        hits = np.flatnonzero(mask[lo : lo + block])
        hits += lo
        out[at : at + len(hits)] = hits
        at += len(hits)
    return out


def _query_partials(
    query: CompiledQuery, spec: dict[str, Any] | None, cols: Columns, ks: _KeySet, strategy: Strategy
) -> Partials:
    matched = _matches(query, spec, cols, ks)
    if matched is None:
        return {}
    masks, idx, attrs, _, _ = matched
    assert idx is not None
    rows = ks.rows
    positions = [query.partition_by.index(g) for g in query.group_by]
    partials: Partials = {}

    if strategy.columnar(query) and strategy.run_partitions is not None:
        # every partition in one call (the strategy cuts its own work into chunks)
        results = strategy.run_partitions(query, masks, idx, ks.ts, attrs, ks.starts)
        values = ks.values({part for part, _ in results})
        groups = {part: tuple(key[i] for i in positions) for part, key in values.items()}
        if positions == list(range(len(query.partition_by))):  # a partition is a group
            return {(groups[part], k): result for (part, k), result in results.items() if result.trends}
        for (part, k), result in results.items():
            if result.trends:
                merge_into(partials, (groups[part], k), result)
        return partials

    # a row-based strategy per remaining partition, on Event objects of the kept rows
    part_of = ks.part_of(idx)
    events = cols.events(rows[idx])
    cuts = np.flatnonzero(np.diff(part_of)) + 1
    bounds = zip(np.concatenate(([0], cuts)).tolist(), np.append(cuts, len(idx)).tolist(), strict=True)
    values = ks.values(part_of[np.concatenate(([0], cuts))].tolist())
    for lo, hi in bounds:
        key = values[int(part_of[lo])]
        group = tuple(key[i] for i in positions)
        for k, result in strategy.run(query, events[lo:hi]).items():
            if result.trends:
                merge_into(partials, (group, k), result)
    return partials
