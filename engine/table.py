"""Evaluating a plan over a columnar table holding many partitions at once.

Replay's executors receive Arrow batches with the events of thousands of
partitions (one per group-by / equivalence key), sorted by key and time.
Evaluating them partition by partition through ``Event`` objects costs a
Python object per event and a strategy run per (partition, query), most of
which find nothing: in a day of rides, a query's pattern occurs in a few
percent of the (rider, driver) pairs. ``evaluate_table_partials`` works per
query on the whole table instead:

1. **Matching, vectorized.** Per variable of the query, the mask of events of
   its type passing its local predicates (numpy over the plan's expressions,
   ``engine.expr.vector.local_mask``; row by row where numpy cannot be exact).
2. **Pruning partitions that cannot hold a trend.** Every trend contains an
   event of a start variable, one of an end variable, and one of every
   *mandatory* variable (a positive variable on every template path from a
   start to an end variable). A partition lacking one of them has no trend in
   any window, so it produces no result row; it is skipped without being
   looked at again. This is exact, not a heuristic.
3. **Dropping irrelevant events.** Under skip-till-any-match and
   skip-till-next-match an event matching no variable (positive or negated)
   of the query cannot change its trends (DESIGN §5); under contiguous every
   event of the partition counts, so none is dropped.
4. **Evaluating.** Type-grained queries (COGRA's kernel) run once over all
   remaining partitions, the kernel closing its windows at every partition
   boundary (``engine.strategies.cogra.kernel.run_kernel`` with partition ids). Every other
   query runs its strategy per remaining partition on ``Event`` objects built
   for the remaining events only.

The result is exactly ``engine.evaluate_partials`` on the same events (tests
compare them on random workloads and streams): the same (group, window)
states, mergeable across tables holding disjoint partitions and finished with
``engine.finish_query``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from trendlake.engine.events import RESERVED, Event, _clean
from trendlake.engine.expr import attributes
from trendlake.engine.expr.vector import local_mask
from trendlake.engine.plan import Plan, PlanError
from trendlake.engine.query import CONTIGUOUS, CompiledQuery, Unsupported
from trendlake.engine.results import WindowResult, merge_into

Partials = dict[tuple[tuple[Any, ...], int], WindowResult]

__all__ = ["evaluate_table_partials", "key_runs", "mandatory_variables", "referenced_attributes"]


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


def key_runs(table: Any, keys: Sequence[str]) -> np.ndarray:
    """Boolean array: row i starts a new run of equal ``keys`` values (row 0 always does)."""
    import pyarrow.compute as pc

    n = table.num_rows
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    if n < 2:
        return change
    for k in keys:
        col = table.column(k)
        diff = pc.not_equal(col.slice(1), col.slice(0, n - 1))
        # a null next to a value (or two nulls) also separates runs
        diff = pc.fill_null(diff, True)
        change[1:] |= _bool_numpy(diff)
    return change


def _bool_numpy(arr: Any) -> np.ndarray:
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.to_numpy(zero_copy_only=False).astype(bool, copy=False)


class _Columns:
    """The table's columns as numpy arrays, converted once and only when needed."""

    def __init__(self, table: Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        self.table = table
        self.n = table.num_rows
        ts = table.column("ts")
        if pa.types.is_timestamp(ts.type):
            ts = pc.cast(ts, pa.timestamp("us", tz="UTC")).cast(pa.int64())
        elif not pa.types.is_integer(ts.type):
            raise ValueError(f"ts must be an Arrow timestamp or µs integers, not {ts.type}")
        if ts.null_count:
            raise ValueError("ts has missing values")
        self.ts = np.asarray(ts.to_numpy(), dtype=np.int64)
        if "seq" in table.column_names and table.column("seq").null_count == 0:
            self._seq: np.ndarray | None = np.asarray(table.column("seq").to_numpy(), dtype=np.int64)
        else:
            self._seq = None  # row order: made only when needed
        types = table.column("type")
        if isinstance(types, pa.ChunkedArray):
            types = types.combine_chunks()
        if not pa.types.is_dictionary(types.type):
            types = pc.dictionary_encode(types)
        self.type_codes = types.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        self.type_names = [str(t) for t in types.dictionary.to_pylist()]
        self.attr_names = [c for c in table.column_names if c not in RESERVED]
        self._arrays: dict[str, np.ndarray] = {}
        self._numeric: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
        self._ordered: bool | None = None

    @property
    def seq(self) -> np.ndarray:
        """The ``seq`` column, or the row number where the table has none."""
        if self._seq is None:
            self._seq = np.arange(self.n, dtype=np.int64)
        return self._seq

    def time_ordered(self) -> bool:
        """Rows already in (ts, seq) order."""
        if self._ordered is None:
            ts = self.ts
            if self.n < 2:
                self._ordered = True
            elif self._seq is None:
                self._ordered = bool(np.all(ts[1:] >= ts[:-1]))
            else:
                seq = self._seq
                self._ordered = bool(
                    np.all((ts[1:] > ts[:-1]) | ((ts[1:] == ts[:-1]) & (seq[1:] > seq[:-1])))
                )
        return self._ordered

    def array(self, name: str) -> np.ndarray:
        """Numeric columns without nulls (and floats, nulls as NaN) as numbers, others as objects."""
        import pyarrow as pa

        if name not in self._arrays:
            col = self.table.column(name)
            if (pa.types.is_integer(col.type) and col.null_count == 0) or pa.types.is_floating(
                col.type
            ):
                self._arrays[name] = np.asarray(col.to_numpy())
            else:
                self._arrays[name] = np.asarray(col.to_pylist(), dtype=object)
        return self._arrays[name]


    def numeric(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``(values, present)`` of an integer column with missing values (missing as 0), the
        form the vectorized predicates use; None for other columns or values beyond 2**53."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if name not in self._numeric:
            col = self.table.column(name)
            out = None
            if pa.types.is_integer(col.type) and col.null_count:
                values = np.asarray(pc.fill_null(col, 0).to_numpy(), dtype=np.int64)
                if not len(values) or max(int(values.max()), -int(values.min())) < 2**53:
                    out = (values, _bool_numpy(col.is_valid()))
            self._numeric[name] = out
        return self._numeric[name]


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


KERNEL_CHUNK = 1 << 18  # events per kernel call (whole partitions, so a chunk may be larger)


def partition_chunks(part_of: np.ndarray, size: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` ranges of a non-decreasing partition id array, about ``size`` long,
    never splitting a partition."""
    n = len(part_of)
    out = []
    lo = 0
    while lo < n:
        hi = min(n, lo + size)
        if hi < n:
            hi = int(np.searchsorted(part_of, part_of[hi - 1], side="right"))
        out.append((lo, hi))
        lo = hi
    return out


def _stable_key_order(table: Any, keys: Sequence[str]) -> np.ndarray:
    """Row order by ``keys`` (nulls last), equal keys in table order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(keys) == 1:
        col = table.column(keys[0])
        if pa.types.is_integer(col.type) and col.null_count == 0:
            return np.argsort(np.asarray(col.to_numpy()), kind="stable").astype(np.int64, copy=False)
    if not keys:
        return np.arange(table.num_rows, dtype=np.int64)
    # Arrow's sort is stable
    return np.asarray(
        pc.sort_indices(table.select(list(keys)), sort_keys=[(k, "ascending") for k in keys]).to_numpy(),
        dtype=np.int64,
    )


class _KeySet:
    """The rows of a table that belong to a partition of ``keys``, in (key, ts, seq) order."""

    def __init__(self, cols: _Columns, keys: tuple[str, ...], presorted: bool) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = cols.table
        n = cols.n
        present = np.ones(n, dtype=bool)
        for k in keys:
            if k not in table.column_names:
                present[:] = False  # no event has the attribute: no partition
                break
            col = table.column(k)
            ok = _bool_numpy(col.is_valid())
            if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                ok &= _bool_numpy(pc.fill_null(pc.not_equal(col, ""), False))
            elif pa.types.is_floating(col.type):
                ok &= ~_bool_numpy(pc.fill_null(pc.is_nan(col), True))
            present &= ok
        self.cols = cols
        self.identity = presorted and bool(present.all())
        if presorted:
            rows = np.arange(n, dtype=np.int64) if self.identity else np.flatnonzero(present)
        else:
            order_keys = [(k, "ascending") for k in keys]
            if cols.time_ordered():
                # rows already in (ts, seq) order (an event file): a stable sort by the keys
                # alone keeps that order within each partition
                order = _stable_key_order(table, keys)
            else:
                sort_table = pa.table(
                    {**{k: table.column(k) for k in keys}, "__ts": cols.ts, "__seq": cols.seq}
                )
                order = np.asarray(
                    pc.sort_indices(
                        sort_table, sort_keys=[*order_keys, ("__ts", "ascending"), ("__seq", "ascending")]
                    ).to_numpy(),
                    dtype=np.int64,
                )
            rows = order if present.all() else order[present[order]]
            del order
        self.rows = rows
        self.ts = cols.ts if self.identity else cols.ts[rows]
        self.type_codes = cols.type_codes if self.identity else cols.type_codes[rows]
        if keys and len(rows):
            sub = table.select(list(keys))
            if not self.identity:
                sub = sub.take(pa.array(rows))
            change = key_runs(sub, keys)
        else:
            sub = None
            change = np.zeros(len(rows), dtype=bool)
            if len(rows):
                change[0] = True
        self.kid = (np.cumsum(change, dtype=np.int64) - 1).astype(np.int32 if len(rows) < 2**31 else np.int64)
        self.starts = np.flatnonzero(change)
        self.nkeys = len(self.starts)
        self._keys = tuple(keys) if sub is not None else None  # key values read on demand
        self._values: dict[int, tuple[Any, ...]] = {}
        self._attrs: dict[str, np.ndarray] = {}
        self._nums: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
        if presorted and len(rows) > 1:
            ts = self.ts
            back = (ts[1:] < ts[:-1]) & ~change[1:]
            if back.any():
                raise ValueError(
                    f"table is not sorted by ({', '.join(keys)}, ts) as promised: "
                    f"row {int(rows[1 + int(np.flatnonzero(back)[0])])} goes back in time"
                )

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


def evaluate_table_partials(
    plan: Plan,
    table: Any,
    *,
    queries: Iterable[str] | None = None,
    strategy: str = "auto",
    sorted_by: Sequence[str] | None = None,
) -> dict[str, Partials]:
    """Unfinalized results per query over a pyarrow Table of events of many partitions.

    ``table`` has ``type``, ``ts`` (Arrow timestamp or µs integers), optionally
    ``seq``, and attribute columns. ``sorted_by``: the table is already ordered
    by these columns, then ``ts``, ``seq``, with equal key values contiguous
    (replay's sorted Spark partitions); queries partitioned by exactly these
    columns then skip the sort. Same result as ``engine.evaluate_partials`` on
    the table's events.
    """
    wanted = list(plan.queries) if queries is None else list(queries)
    for name in wanted:
        if name not in plan.queries:
            raise PlanError(f"plan has no query {name!r}")
    specs = {q["name"]: q for q in plan.raw.get("queries", [])}
    cols = _Columns(table)
    keysets: dict[tuple[str, ...], _KeySet] = {}
    out: dict[str, Partials] = {}
    for name in wanted:
        query = plan.queries[name]
        keys = query.partition_by
        if keys not in keysets:
            presorted = sorted_by is not None and tuple(sorted_by) == keys
            keysets[keys] = _KeySet(cols, keys, presorted)
        ks = keysets[keys]
        out[name] = _query_partials(query, specs.get(name), cols, ks, strategy)
    return out


def _query_partials(
    query: CompiledQuery, spec: dict[str, Any] | None, cols: _Columns, ks: _KeySet, strategy: str
) -> Partials:
    import pyarrow as pa
    from trendlake.engine import query_partials, strategy_for
    from trendlake.engine.strategies import cogra
    from trendlake.engine.strategies.cogra.kernel import run_kernel
    from trendlake.engine.strategies.cogra.layout import Layout
    from trendlake.engine.strategies.cogra.prepare import Types, prepared_from_masks

    try:  # "type": COGRA's kernel over all partitions at once
        mode = cogra.granularity_of(query) if strategy_for(query, strategy) == "cogra" else None
    except Unsupported:
        if strategy == "cogra":
            raise  # an event-grained query, with the reason
        mode = None
    rows = ks.rows
    n = len(rows)
    if n == 0:
        return {}
    types = Types(ks.type_codes, cols.type_names, n)
    if spec is None:
        names = list(cols.attr_names)
    else:
        names = sorted(referenced_attributes(spec) & set(cols.attr_names))
    attrs = _LazyAttrs(ks, names)
    cache = {a: num for a in names if (num := ks.numeric(a)) is not None}  # predicates' columns
    type_masks: dict[str, np.ndarray] = {}
    masks: dict[str, np.ndarray] = {}
    for v, var in query.variables.items():
        if var.type not in type_masks:
            type_masks[var.type] = types.mask(var.type)
        masks[v] = local_mask(query, v, type_masks[var.type], attrs, spec, cache)

    def present_in(mask: np.ndarray) -> np.ndarray:
        """Per partition: does ``mask`` hold for one of its rows?"""
        return np.logical_or.reduceat(mask, ks.starts)

    ok = present_in(np.logical_or.reduce([masks[v] for v in query.start]))
    ok &= present_in(np.logical_or.reduce([masks[v] for v in query.end]))
    for v in mandatory_variables(query):
        ok &= present_in(masks[v])
    keep = ok[ks.kid]
    if query.semantics != CONTIGUOUS:
        keep &= np.logical_or.reduce(list(masks.values()))
    idx = np.flatnonzero(keep)
    if not len(idx):
        return {}
    part_of = ks.kid[idx]
    positions = [query.partition_by.index(g) for g in query.group_by]

    if mode == "type":
        layout = Layout.of(query)
        var_masks = [masks[v] for v in layout.vars]
        partials: Partials = {}
        # whole partitions at a time, about KERNEL_CHUNK events each: the kernel's
        # per-event arrays then stay small next to the table
        for lo, hi in partition_chunks(part_of, KERNEL_CHUNK):
            prep = prepared_from_masks(query, layout, var_masks, idx[lo:hi], ks.ts, attrs)
            results = run_kernel(query, layout, prep, part_of[lo:hi])
            del prep
            values = ks.values(part for part, _ in results)
            for (part, k), result in results.items():
                if result.trends:
                    group = tuple(values[part][i] for i in positions)
                    merge_into(partials, (group, k), result)
        return partials

    # every other query: its strategy per remaining partition, on Event objects
    picked = rows[idx]
    sub = cols.table.select(cols.attr_names).take(pa.array(picked))
    columns = [sub.column(i).to_pylist() for i in range(sub.num_columns)]
    ts_l = cols.ts[picked].tolist()
    seq_l = cols.seq[picked].tolist()
    type_l = [cols.type_names[c] for c in cols.type_codes[picked].tolist()]
    part_l = part_of.tolist()
    values = ks.values(set(part_l))
    parts: dict[tuple[Any, ...], list[Event]] = {}
    for j, part in enumerate(part_l):
        attrs_j = {a: _clean(col[j]) for a, col in zip(cols.attr_names, columns, strict=True)}
        parts.setdefault(values[part], []).append(Event(ts_l[j], seq_l[j], type_l[j], attrs_j))
    return query_partials(query, (), strategy, parts)
