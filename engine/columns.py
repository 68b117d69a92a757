"""Events as columns: Arrow tables to numpy columns, type codes, the NULL rule, rows.

The engine's input is an Arrow table (or record batches) with ``type``,
``ts`` (an Arrow timestamp or µs integers), optionally ``seq``, and attribute
columns. This module owns:

* the one NULL rule (:func:`clean`): None, NaN and empty text are missing;
* numpy views of the columns (:class:`Columns`) and of the type column as
  integer codes (:class:`Types`);
* the ``Event`` row objects of the row-based strategies (GRETA, the two-step
  reference): they are built here and nowhere else;
* row dicts to a table (:func:`table_from_rows`) and back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from trendlake.engine.errors import EventFileError
from trendlake.engine.timeline import bool_mask, parse_ts

__all__ = [
    "RESERVED",
    "Columns",
    "Event",
    "Types",
    "as_column",
    "as_table",
    "clean",
    "events_from_arrow",
    "events_from_columns",
    "events_from_rows",
    "events_of_rows",
    "table_from_events",
    "table_from_rows",
]

RESERVED = ("type", "ts", "seq")


@dataclass(slots=True)
class Event:
    """One event of a row-based strategy: µs UTC time stamp, sequence number, type, attributes."""

    ts: int  # µs since the Unix epoch, UTC
    seq: int
    type: str
    attrs: dict[str, Any]


def clean(value: Any) -> Any:
    """The NULL rule: None, NaN and empty text are missing (None); numpy scalars become
    Python values."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    if isinstance(value, np.generic):
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return None
    return value


def as_column(values: Any) -> np.ndarray:
    """A numpy column: numbers as a numeric array, anything else as objects."""
    if isinstance(values, np.ndarray):
        return values
    arr = np.asarray(values)
    return arr if arr.dtype.kind in "iuf" else np.asarray(values, dtype=object)


class Types:
    """The type column: names, or integer codes into a list of names."""

    def __init__(self, types: Any, names: Sequence[str] | None, n: int) -> None:
        arr = np.asarray(types)
        if len(arr) != n:
            raise ValueError(f"types has {len(arr)} entries, ts has {n}")
        self.names = None if names is None else list(names)
        # codes keep their integer width (int8 for a handful of types: 1 byte per event)
        self.arr = arr.astype(np.int64) if names is not None and arr.dtype.kind not in "iu" else arr

    def take(self, order: np.ndarray) -> Types:
        out = Types.__new__(Types)
        out.names, out.arr = self.names, self.arr[order]
        return out

    def mask(self, name: str) -> np.ndarray:
        """Which events have type ``name``."""
        if self.names is None:
            return np.asarray(self.arr == name, dtype=bool)
        codes = [i for i, t in enumerate(self.names) if t == name]
        if len(codes) == 1:
            return self.arr == codes[0]
        return np.isin(self.arr, codes)

    def strings(self) -> list[str]:
        if self.names is None:
            return [str(t) for t in self.arr.tolist()]
        return [str(self.names[c]) for c in self.arr.tolist()]


def code_dtype(count: int) -> Any:
    """The narrowest signed integer type holding codes 0..count-1 and -1."""
    return np.int8 if count < 2**7 else np.int16 if count < 2**15 else np.int32


def take(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values[rows]`` for a numeric column and a permutation-like index: Arrow's take of a
    large fixed-width column by 4-byte indexes, several times faster than numpy's fancy
    indexing there (which first widens the indexes and gathers item by item)."""
    if len(rows) < 1 << 16 or values.dtype.kind not in "iuf" or values.ndim != 1:
        return values[rows]
    import pyarrow as pa
    import pyarrow.compute as pc

    return np.asarray(pc.take(pa.array(values), pa.array(rows)).to_numpy())


def index_dtype(n: int) -> Any:
    """Row indexes of a table of ``n`` rows: 4 bytes each below 2**31 rows."""
    return np.int32 if n < 2**31 else np.int64


class Columns:
    """A table's columns as numpy arrays, converted once and only when needed."""

    def __init__(self, table: Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        for name in ("type", "ts"):
            if name not in table.column_names:
                raise EventFileError(f"the events have no {name!r} column")
        self.table = table
        self.n = table.num_rows
        ts = table.column("ts")
        if pa.types.is_timestamp(ts.type):
            ts = pc.cast(ts, pa.timestamp("us", tz="UTC")).cast(pa.int64())
        elif not pa.types.is_integer(ts.type):
            raise EventFileError(f"ts must be an Arrow timestamp or µs integers, not {ts.type}")
        if ts.null_count:
            raise EventFileError("ts has missing values")
        self.ts = np.asarray(ts.to_numpy(), dtype=np.int64)
        self._ordered: bool | None = None
        if "seq" in table.column_names and table.column("seq").null_count == 0:
            self._seq: np.ndarray | None = np.asarray(table.column("seq").to_numpy(), dtype=np.int64)
        else:
            self._seq = None  # row order: made only when needed
        types = table.column("type")
        if isinstance(types, pa.ChunkedArray) and pa.types.is_dictionary(types.type):
            types = types.combine_chunks()
        if isinstance(types, pa.Array) and pa.types.is_dictionary(types.type):
            self.type_names = [str(t) for t in types.dictionary.to_pylist()]
            codes = types.indices.to_numpy(zero_copy_only=False)
            self.type_codes = codes.astype(code_dtype(len(self.type_names)), copy=False)
        else:
            # chunk by chunk: never a second copy of the type strings
            if types.null_count:
                raise EventFileError("the events have a missing value in the 'type' column")
            chunks = types.chunks if isinstance(types, pa.ChunkedArray) else [types]
            names = pc.unique(types)
            self.type_names = [str(t) for t in names.to_pylist()]
            dtype = code_dtype(len(self.type_names))
            self.type_codes = np.empty(self.n, dtype=dtype)
            at = 0
            for chunk in chunks:
                codes = pc.index_in(chunk, value_set=names).to_numpy(zero_copy_only=False)
                self.type_codes[at : at + len(chunk)] = codes
                at += len(chunk)
        self.attr_names = [c for c in table.column_names if c not in RESERVED]
        self._arrays: dict[str, np.ndarray] = {}
        self._numeric: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}


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

    def types(self) -> Types:
        return Types(self.type_codes, self.type_names, self.n)

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
                    out = (values, bool_mask(col.is_valid()))
            self._numeric[name] = out
        return self._numeric[name]

    def present(self, name: str) -> np.ndarray:
        """Rows where attribute ``name`` holds a value (the NULL rule, vectorized)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if name not in self.table.column_names:
            return np.zeros(self.n, dtype=bool)
        col = self.table.column(name)
        ok = bool_mask(col.is_valid())
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            ok &= bool_mask(pc.fill_null(pc.not_equal(col, ""), False))
        elif pa.types.is_floating(col.type):
            ok &= ~bool_mask(pc.fill_null(pc.is_nan(col), True))
        return ok

    def events(self, rows: np.ndarray) -> list[Event]:
        """``Event`` objects of the given rows, in the given order."""
        import pyarrow as pa

        picked = rows
        sub = self.table.select(self.attr_names).take(pa.array(picked))
        columns = [sub.column(i).to_pylist() for i in range(sub.num_columns)]
        ts_l = self.ts[picked].tolist()
        seq_l = self.seq[picked].tolist()
        type_l = [self.type_names[c] for c in self.type_codes[picked].tolist()]
        names = self.attr_names
        return [
            Event(
                ts_l[j],
                seq_l[j],
                type_l[j],
                {a: clean(col[j]) for a, col in zip(names, columns, strict=True)},
            )
            for j in range(len(ts_l))
        ]


def events_from_columns(types: Types, ts: np.ndarray, attrs: dict[str, Any]) -> list[Event]:
    """``Event`` objects of one partition given as numpy columns (sequence = position)."""
    names = list(attrs)
    columns = [
        attrs[a].tolist() if isinstance(attrs[a], np.ndarray) else list(attrs[a]) for a in names
    ]
    events = []
    for i, (t, et) in enumerate(zip(ts.tolist(), types.strings(), strict=True)):
        row = {a: clean(col[i]) for a, col in zip(names, columns, strict=True)}
        events.append(Event(t, i, et, row))
    return events


def events_from_rows(rows: Iterable[dict[str, Any]], where: str = "<rows>") -> list[Event]:
    """Events from row dicts with ``type``, ``ts`` (``parse_ts``) and optional ``seq``,
    sorted by (ts, seq)."""
    events = []
    for position, row in enumerate(rows):
        try:
            etype = row["type"]
            ts = parse_ts(row["ts"])
        except KeyError as missing:
            raise EventFileError(f"{where}: row {position + 1}: missing column {missing}") from None
        except ValueError as bad:
            raise EventFileError(f"{where}: row {position + 1}: {bad}") from None
        if etype is None or etype == "":
            raise EventFileError(f"{where}: row {position + 1}: empty event type")
        seq = row.get("seq")
        attrs = {k: clean(v) for k, v in row.items() if k not in RESERVED}
        events.append(Event(ts, position if seq is None else int(seq), str(etype), attrs))
    events.sort(key=lambda e: (e.ts, e.seq))
    return events


def events_of_rows(rows: list[dict[str, Any]], where: str) -> list[Event]:
    """Events from row dicts whose ``ts`` already is µs (an Arrow table's rows)."""
    events = []
    for position, row in enumerate(rows):
        ts = row.get("ts")
        if not isinstance(ts, int):
            raise EventFileError(f"{where}: row {position + 1}: missing timestamp")
        etype = row.get("type")
        if etype is None or etype == "":
            raise EventFileError(f"{where}: row {position + 1}: empty event type")
        seq = row.get("seq")
        attrs = {k: clean(v) for k, v in row.items() if k not in RESERVED}
        events.append(Event(ts, position if seq is None else int(seq), str(etype), attrs))
    events.sort(key=lambda e: (e.ts, e.seq))
    return events


def events_from_arrow(table: Any, where: str = "<arrow>") -> list[Event]:
    """Events from a pyarrow Table (timestamps as Arrow timestamps, numbers or text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "ts" in table.column_names and pa.types.is_timestamp(table.schema.field("ts").type):
        ts_col = pc.cast(table.column("ts"), pa.timestamp("us", tz="UTC")).cast(pa.int64())
        table = table.set_column(table.column_names.index("ts"), "ts", ts_col)
        return events_of_rows(table.to_pylist(), where)
    return events_from_rows(table.to_pylist(), where=where)


def table_from_events(events: Iterable[Event], where: str = "<events>") -> Any:
    """An Arrow table (``type``, ``ts`` in µs, ``seq``, attributes) of ``Event`` objects."""
    import pyarrow as pa

    events = list(events)
    names: dict[str, None] = {}
    for e in events:
        for a in e.attrs:
            names.setdefault(a, None)
    columns: dict[str, Any] = {
        "type": pa.array([e.type for e in events], pa.string()),
        "ts": pa.array([e.ts for e in events], pa.int64()),
        "seq": pa.array([e.seq for e in events], pa.int64()),
    }
    for a in names:
        columns[a] = _attribute_array(a, [clean(e.attrs.get(a)) for e in events], where)
    return pa.table(columns)


def table_from_rows(
    rows: Iterable[dict[str, Any]], where: str = "<rows>", *, attributes: Sequence[str] = ()
) -> Any:
    """An Arrow table of row dicts with ``type``, ``ts`` (ISO text, epoch seconds or a
    datetime, as ``parse_ts``), optional ``seq`` (default: the row's position) and
    attributes; the engine's input for rows written by hand (tests, examples).
    ``attributes`` are columns to include even when no row has them."""
    import pyarrow as pa

    rows = list(rows)
    types, stamps, seqs = [], [], []
    names: dict[str, None] = dict.fromkeys(attributes)
    for position, row in enumerate(rows):
        try:
            etype = row["type"]
            stamps.append(parse_ts(row["ts"]))
        except KeyError as missing:
            raise EventFileError(f"{where}: row {position + 1}: missing column {missing}") from None
        except ValueError as bad:
            raise EventFileError(f"{where}: row {position + 1}: {bad}") from None
        if etype is None or etype == "":
            raise EventFileError(f"{where}: row {position + 1}: empty event type")
        types.append(str(etype))
        seq = row.get("seq")
        seqs.append(position if seq is None else int(seq))
        for k in row:
            if k not in RESERVED:
                names.setdefault(k, None)
    columns: dict[str, Any] = {
        "type": pa.array(types, pa.string()),
        "ts": pa.array(stamps, pa.int64()),
        "seq": pa.array(seqs, pa.int64()),
    }
    for a in names:
        columns[a] = _attribute_array(a, [clean(row.get(a)) for row in rows], where)
    return pa.table(columns)


def _attribute_array(name: str, values: list[Any], where: str) -> Any:
    import pyarrow as pa

    if all(v is None for v in values):
        return pa.array(values, pa.null())
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        kinds = sorted({type(v).__name__ for v in values if v is not None})
        raise EventFileError(
            f"{where}: attribute {name!r} holds values of several kinds ({', '.join(kinds)}) "
            "or integers beyond 64 bits; an attribute column needs one type"
        ) from None


def as_table(data: Any) -> Any:
    """A pyarrow Table of a Table, a RecordBatch or an iterable of RecordBatches."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, (str, bytes, dict)) or not isinstance(data, Iterable):
        raise TypeError(
            f"evaluate needs a pyarrow Table or record batches, not {type(data).__name__}"
        )
    batches = list(data)
    if not batches:
        return pa.table({"type": pa.array([], pa.string()), "ts": pa.array([], pa.int64())})
    for b in batches:
        if not isinstance(b, pa.RecordBatch):
            raise TypeError(
                "evaluate needs a pyarrow Table or record batches, "
                f"not an iterable of {type(b).__name__}"
                + (" (build a table with engine.table_from_events)" if isinstance(b, Event) else "")
            )
    return pa.Table.from_batches(batches)
