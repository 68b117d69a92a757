"""What every source adapter shares: the report, value parsing, chunked reading, event checks.

An adapter (one module per source in this package) turns a ``Chunk`` of
source rows into ``Events`` and records, per source row, the first ``Reasons``
it cannot be converted; ``check_events`` applies the stream schema's rules
(as ingest does) and ``events_table`` builds the stream's Arrow table.
``Adapter`` is a source's registry entry.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

US = 1_000_000
MILE_KM = 1.609344
EXAMPLES = 5  # line numbers kept per skip reason
MISSING_TOKENS = ("", "null", "none", "nan", "na", "n/a")
FLOAT_RE = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"
INT_RE = r"^[+-]?[0-9]{1,18}$"


class AdaptError(ValueError):
    """The source cannot be adapted at all (missing columns, unknown kind or option)."""


@dataclass
class AdaptReport:
    """What an adapter did: every source row is converted or skipped with a reason."""

    kind: str
    stream: str
    source: str
    output: str = ""
    rows_read: int = 0  # source rows (CSV data lines without blank lines and header; Parquet rows)
    rows_converted: int = 0
    rows_skipped: int = 0
    rows_written: int = 0  # events in the output (a TLC trip in rides mode makes three)
    skipped: Counter = field(default_factory=Counter)  # reason -> rows
    examples: dict[str, list[int]] = field(default_factory=dict)  # reason -> first line / row numbers
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def skip(self, reason: str, lines: np.ndarray) -> None:
        self.skipped[reason] += int(lines.size)
        self.rows_skipped += int(lines.size)
        have = self.examples.setdefault(reason, [])
        if len(have) < EXAMPLES:
            have.extend(int(x) for x in lines[: EXAMPLES - len(have)])

    def summary(self) -> str:
        where = "row" if self.kind == "tlc" else "line"
        out = [
            f"{self.kind} -> {self.stream}: {self.rows_read} source rows read, {self.rows_converted} converted, "
            f"{self.rows_skipped} skipped; {self.rows_written} events written to {self.output} ({self.seconds:.1f}s)"
        ]
        for reason, n in self.skipped.most_common():
            shown = ", ".join(str(x) for x in self.examples.get(reason, []))
            out.append(f"  skipped {n}: {reason} ({where} {shown}{', ...' if n > EXAMPLES else ''})")
        out += [f"  note: {n}" for n in self.notes]
        return "\n".join(out)



# ---- value parsing


def strings(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.cast(pa.string())
    return pc.utf8_trim(pc.utf8_trim_whitespace(arr), '"')


def np_bool(arr: pa.Array, fill: bool = False) -> np.ndarray:
    return np.asarray(arr.fill_null(fill).to_numpy(zero_copy_only=False), dtype=bool)


def missing_mask(s: pa.Array) -> np.ndarray:
    return np_bool(pc.is_in(pc.utf8_lower(s), pa.array(MISSING_TOKENS)), True) | np.asarray(
        s.is_null().to_numpy(zero_copy_only=False), dtype=bool)


@dataclass
class Num:
    """A parsed column: values, ``present`` (the source has a value) and ``bad`` (present but not a number)."""

    values: np.ndarray
    present: np.ndarray
    bad: np.ndarray

    @property
    def ok(self) -> np.ndarray:
        return self.present & ~self.bad


def parse_float(col: pa.Array | pa.ChunkedArray) -> Num:
    """Numbers from a text or numeric column; NaN / infinite values count as bad."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        s = strings(col)
        present = ~missing_mask(s)
        ok = np_bool(pc.match_substring_regex(s, FLOAT_RE))
        values = np.asarray(pc.cast(pc.if_else(pa.array(ok), s, "0"), pa.float64()).to_numpy(zero_copy_only=False))
        values = np.where(ok, values, np.nan)
        bad = present & (~ok | ~np.isfinite(values))
        return Num(values, present, bad)
    present = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    values = np.asarray(pc.cast(col, pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)
    return Num(values, present, present & ~np.isfinite(values))


def parse_int(col: pa.Array | pa.ChunkedArray) -> Num:
    """Integers (exact for up to 18 digits in text; integral floats below 2^53 are accepted too)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_integer(col.type):
        present = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        values = np.asarray(pc.cast(col, pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        return Num(values, present, np.zeros(len(col), bool))
    f = parse_float(col)
    integral = f.ok & (np.floor(np.nan_to_num(f.values)) == np.nan_to_num(f.values)) & (np.abs(np.nan_to_num(f.values)) < 2**53)
    values = np.where(integral, np.nan_to_num(f.values), 0).astype(np.int64)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        s = strings(col)
        exact = np_bool(pc.match_substring_regex(s, INT_RE))
        if exact.any():
            values = values.copy()
            values[exact] = np.asarray(pc.cast(pc.filter(s, pa.array(exact)), pa.int64()).to_numpy(zero_copy_only=False))
        integral |= exact
    return Num(values, f.present, f.present & ~integral)


def rename_values(text: pa.Array, names: dict[str, str]) -> pa.Array:
    """``text`` with the values that are keys of ``names`` replaced by their names."""
    for key, name in names.items():
        text = pc.if_else(np_bool(pc.equal(text, key)), name, text)
    return text


def text_values(col: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """Trimmed text and ``present`` (missing tokens like ``null`` become null)."""
    s = strings(col)
    present = ~missing_mask(s)
    return pc.if_else(pa.array(present), s, pa.scalar(None, pa.string())), present


def timestamps(col: pa.Array | pa.ChunkedArray, timezone: str) -> Num:
    """µs since the epoch (UTC) of a timestamp column; naive times are local times of ``timezone``."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if not pa.types.is_timestamp(col.type):
        raise AdaptError(f"expected a timestamp column, got {col.type}")
    present = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if col.type.tz is None:
        naive = pc.cast(col, pa.timestamp("us"), safe=False)
        if timezone.upper() in ("UTC", "Z", "GMT"):
            utc = naive.cast(pa.int64())
        else:
            utc = pc.assume_timezone(naive, timezone, ambiguous="earliest", nonexistent="earliest").cast(pa.int64())
    else:
        utc = pc.cast(col, pa.timestamp("us", tz="UTC"), safe=False).cast(pa.int64())
    values = np.asarray(utc.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    return Num(values, present, np.zeros(len(col), bool))


def local_to_utc(us: np.ndarray, timezone: str) -> np.ndarray:
    if timezone.upper() in ("UTC", "Z", "GMT"):
        return us
    naive = pa.array(us, pa.timestamp("us"))
    return np.asarray(pc.assume_timezone(naive, timezone, ambiguous="earliest", nonexistent="earliest")
                      .cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


# ---- reading sources


@dataclass
class Chunk:
    """A chunk of source rows: columns by name, and each row's line (CSV) or 1-based row (Parquet) number."""

    columns: dict[str, pa.Array]
    lines: np.ndarray

    @property
    def size(self) -> int:
        return int(self.lines.size)


def csv_chunks(path: Path, report: AdaptReport, *, names: list[str] | None,
                header: Callable[[list[str]], tuple[list[str], bool]] | None = None,
                block_bytes: int = 8 << 20) -> Iterator[Chunk]:
    """Rows of a comma-separated file (optionally .gz / .bz2 / .zst), as text columns.

    ``names`` are the columns of a header-less file; else ``header(first_fields)``
    returns the column names and whether the first non-blank line is a header
    (or already data). Blank lines are ignored;
    a line with the wrong number of fields is skipped with its line number.
    Quotes are not special (none of the formats quotes commas); surrounding
    quotes are stripped from values.
    """
    import pyarrow.csv as pcsv

    stream = pa.input_stream(str(path), compression="detect")
    line_base = 0  # lines before this block
    rest = b""
    pending_header = header is not None
    cols = names
    first = True
    while True:
        data = stream.read(block_bytes)
        if not data and not rest:
            break
        buf = rest + data
        if first and buf.startswith(b"\xef\xbb\xbf"):
            buf = buf[3:]
        first = False
        if data:
            cut = buf.rfind(b"\n")
            if cut < 0:
                rest = buf
                continue
            block, rest = buf[: cut + 1], buf[cut + 1:]
        else:
            block, rest = buf + b"\n", b""
        arr = np.frombuffer(block, np.uint8)
        ends = np.flatnonzero(arr == 10)
        starts = np.r_[0, ends[:-1] + 1]
        has_cr = (ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13)
        content_end = ends - has_cr
        blank = content_end == starts
        commas = np.r_[0, np.cumsum(arr == 44)]
        fields = commas[content_end] - commas[starts] + 1
        line_no = line_base + np.arange(1, ends.size + 1)
        line_base += int(ends.size)
        offset = 0
        if pending_header:
            nonblank = np.flatnonzero(~blank)
            if nonblank.size == 0:
                continue
            h = int(nonblank[0])
            text = block[starts[h]: content_end[h]].decode("utf-8", errors="replace")
            cols, is_header = header(next(csv.reader(io.StringIO(text)), [""]))
            pending_header = False
            if is_header:
                blank[: h + 1] = True  # the header and blank lines before it are not data
                offset = int(ends[h]) + 1
        if cols is None:
            raise AdaptError(f"{path}: no column names")
        data_rows = ~blank
        wrong = data_rows & (fields != len(cols))
        if wrong.any():
            report.rows_read += int(wrong.sum())
            report.skip(f"wrong number of fields (want {len(cols)})", line_no[wrong])
        good = data_rows & ~wrong
        if not good.any():
            continue
        invalid = []

        def on_invalid(row: Any, _invalid: list = invalid) -> str:
            _invalid.append(row)
            return "skip"

        table = pcsv.read_csv(
            io.BytesIO(block[offset:]),
            read_options=pcsv.ReadOptions(column_names=cols, use_threads=False),
            parse_options=pcsv.ParseOptions(quote_char=False, invalid_row_handler=on_invalid),
            convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in cols},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
        if table.num_rows != int(good.sum()) or len(invalid) != int(wrong.sum()):
            raise AdaptError(f"{path}: CSV block near line {int(line_no[0])} parsed into {table.num_rows} rows, "
                             f"expected {int(good.sum())}")
        report.rows_read += table.num_rows
        yield Chunk({c: table.column(c).combine_chunks() for c in cols}, line_no[good])


def parquet_chunks(path: Path, report: AdaptReport, wanted: list[str], batch_rows: int) -> Iterator[Chunk]:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(str(path))
    row = 0
    for batch in pf.iter_batches(batch_size=batch_rows, columns=wanted):
        n = batch.num_rows
        report.rows_read += n
        yield Chunk({c: batch.column(c) for c in batch.schema.names}, np.arange(row + 1, row + n + 1))
        row += n


# ---- events


class Reasons:
    """The first reason each source row of a chunk fails, if any."""

    def __init__(self, n: int) -> None:
        self.bad = np.zeros(n, bool)
        self.reason = np.full(n, None, dtype=object)

    def add(self, cond: np.ndarray, reason: str) -> None:
        new = np.asarray(cond, dtype=bool) & ~self.bad
        if new.any():
            self.reason[new] = reason
            self.bad |= new

    def parsed(self, num: Num, name: str, kind: str = "number", required: bool = False) -> None:
        if required:
            self.add(~num.present, f"missing {name}")
        self.add(num.bad, f"{name} is not a{'n' if kind[0] in 'aeiou' else ''} {kind}")


@dataclass
class Events:
    """Events made from a chunk: ``src`` is the source row (index in the chunk) of each event."""

    src: np.ndarray
    types: pa.Array
    ts: np.ndarray
    attrs: dict[str, pa.Array]


def arrow_col(values: np.ndarray, arrow_type: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    mask = None if valid is None else ~np.asarray(valid, dtype=bool)
    return pa.array(values, type=arrow_type, mask=mask)


def check_events(ev: Events, schema: dict[str, Any]) -> np.ndarray:
    """Per event: the first stream-schema rule it breaks (like ingest's validation), else None."""
    n = len(ev.src)
    r = Reasons(n)
    types = ev.types
    r.add(~np_bool(pc.is_in(types, pa.array(schema["event_types"]))), "unknown event type")
    for name, spec in schema["attributes"].items():
        carried = (np.ones(n, bool) if spec.get("types", "*") == "*"
                   else np_bool(pc.is_in(types, pa.array(spec["types"]))))
        col = ev.attrs.get(name)
        present = np.zeros(n, bool) if col is None else ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if spec.get("required"):
            r.add(carried & ~present, f"missing required attribute '{name}'")
        if col is None:
            continue
        live = carried & present
        if "min" in spec:
            r.add(live & np_bool(pc.less(col, spec["min"])), f"attribute '{name}' below min {spec['min']}")
        if "max" in spec:
            r.add(live & np_bool(pc.greater(col, spec["max"])), f"attribute '{name}' above max {spec['max']}")
        if "values" in spec:
            r.add(live & ~np_bool(pc.is_in(col, pa.array(spec["values"]))),
                  f"attribute '{name}' not in {list(spec['values'])}")
    return r.reason


def events_table(ev: Events, keep: np.ndarray, schema: dict[str, Any], arrow: pa.Schema) -> pa.Table:
    """The kept events as a table of the stream's columns, sorted by time (stable)."""
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(ev.ts[idx], kind="stable")]
    take = pa.array(idx, pa.int64())
    types = ev.types.take(take)
    arrays = [types, pa.array(ev.ts[idx], pa.timestamp("us", tz="UTC"))]
    n = idx.size
    for f in arrow:
        if f.name in ("type", "ts"):
            continue
        spec = schema["attributes"][f.name]
        col = ev.attrs.get(f.name)
        if col is None:
            arrays.append(pa.nulls(n, f.type))
            continue
        col = col.take(take).cast(f.type)
        if spec.get("types", "*") != "*":  # an attribute the type does not carry is null
            carried = pc.is_in(types, pa.array(spec["types"]))
            col = pc.if_else(carried, col, pa.scalar(None, f.type))
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=arrow)


# ---- the registry entry

MakeEvents = Callable[[Chunk, Reasons], Events]
ChunkReader = Callable[[Path, dict[str, Any], AdaptReport, int], Iterator[tuple[Chunk, MakeEvents]]]


def csv_block_bytes(chunk_rows: int) -> int:
    """Bytes read per CSV block for about ``chunk_rows`` rows."""
    return max(1 << 16, chunk_rows * 64)


def headerless_csv(names: list[str], events: Callable[[Chunk, dict[str, Any], Reasons], Events]) -> ChunkReader:
    """The ``Adapter.read`` of a header-less CSV source whose columns are ``names``: blocks of
    about ``chunk_rows`` rows, each made into events by ``events(chunk, opts, reasons)``."""

    def read(src: Path, opts: dict[str, Any], report: AdaptReport, chunk_rows: int) -> Iterator[tuple[Chunk, MakeEvents]]:
        for chunk in csv_chunks(src, report, names=names, block_bytes=csv_block_bytes(chunk_rows)):
            yield chunk, lambda ch, r: events(ch, opts, r)

    return read


@dataclass(frozen=True)
class Adapter:
    """One source format: the stream it feeds, where users get the files, its options.

    ``read(src, opts, report, chunk_rows)`` yields source chunks, each with the
    function making its events; ``prepare(opts)`` fills option defaults in
    place, checks them and returns the output stream.
    """

    kind: str
    stream: str
    description: str
    source: str  # where users download the files
    options: tuple[str, ...]
    read: ChunkReader = field(compare=False, repr=False)
    prepare: Callable[[dict[str, Any]], str] | None = field(compare=False, repr=False, default=None)

    def output_stream(self, opts: dict[str, Any]) -> str:
        """Fill ``opts``' defaults and return the stream the events belong to."""
        return self.prepare(opts) if self.prepare is not None else self.stream
