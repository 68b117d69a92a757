"""Adapters for real public data files (``trendlake adapt``): source rows -> an event file ``ingest`` accepts.

``adapt(kind, src_path, out_path, **options)`` reads the source in chunks
(never the whole file in memory), converts every row to events of a bundled
stream, checks the events against the stream schema (so the file it writes
passes ``ingest`` with no quarantined row) and writes them with
``datagen.streams.write_tables`` (Parquet, CSV or JSON lines from the suffix of
``out_path``; the file appears atomically). A source row that cannot be
converted is skipped, counted and its reason reported with the first few line
(or Parquet row) numbers: ``rows_read == rows_converted + rows_skipped``.

Kinds (docs/generators.md has the formats and download pages):

* ``tlc``: NYC TLC trip records (yellow / green / high-volume FHV Parquet).
  ``mode="rides"`` (default) -> ``rides``: Request, Pickup and Dropoff per trip;
  ``mode="zones"`` -> ``taxi_zones``: one event per trip at pickup, typed ``Z<PULocationID>``.
* ``debs2014``: DEBS 2014 grand challenge smart-plug CSV (no header:
  id,timestamp,value,property,plug_id,household_id,house_id) -> ``smart_home``.
* ``ohlcv``: daily or minute bars (Date[,Time],Open,High,Low,Close,Volume[,Ticker])
  -> ``stocks``: one Trade per bar.
* ``dublin_bus``: Dublin bus GPS CSV (Dublinked 2012/2013, no header, 15 columns) -> ``bus``.

Events are sorted by time within each chunk (stable); a source sorted by
time gives a sorted file. Replay orders by time anyway.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ADAPTERS", "AdaptError", "AdaptReport", "adapt", "add_parser"]

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


# ---------------------------------------------------------------------------- value parsing


def _strings(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.cast(pa.string())
    return pc.utf8_trim(pc.utf8_trim_whitespace(arr), '"')


def _np_bool(arr: pa.Array, fill: bool = False) -> np.ndarray:
    return np.asarray(arr.fill_null(fill).to_numpy(zero_copy_only=False), dtype=bool)


def _missing(s: pa.Array) -> np.ndarray:
    return _np_bool(pc.is_in(pc.utf8_lower(s), pa.array(MISSING_TOKENS)), True) | np.asarray(
        s.is_null().to_numpy(zero_copy_only=False), dtype=bool)


@dataclass
class _Num:
    """A parsed column: values, ``present`` (the source has a value) and ``bad`` (present but not a number)."""

    values: np.ndarray
    present: np.ndarray
    bad: np.ndarray

    @property
    def ok(self) -> np.ndarray:
        return self.present & ~self.bad


def _float(col: pa.Array | pa.ChunkedArray) -> _Num:
    """Numbers from a text or numeric column; NaN / infinite values count as bad."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        s = _strings(col)
        present = ~_missing(s)
        ok = _np_bool(pc.match_substring_regex(s, FLOAT_RE))
        values = np.asarray(pc.cast(pc.if_else(pa.array(ok), s, "0"), pa.float64()).to_numpy(zero_copy_only=False))
        values = np.where(ok, values, np.nan)
        bad = present & (~ok | ~np.isfinite(values))
        return _Num(values, present, bad)
    present = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    values = np.asarray(pc.cast(col, pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)
    return _Num(values, present, present & ~np.isfinite(values))


def _int(col: pa.Array | pa.ChunkedArray) -> _Num:
    """Integers (exact for up to 18 digits in text; integral floats below 2^53 are accepted too)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_integer(col.type):
        present = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        values = np.asarray(pc.cast(col, pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        return _Num(values, present, np.zeros(len(col), bool))
    f = _float(col)
    integral = f.ok & (np.floor(np.nan_to_num(f.values)) == np.nan_to_num(f.values)) & (np.abs(np.nan_to_num(f.values)) < 2**53)
    values = np.where(integral, np.nan_to_num(f.values), 0).astype(np.int64)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        s = _strings(col)
        exact = _np_bool(pc.match_substring_regex(s, INT_RE))
        if exact.any():
            values = values.copy()
            values[exact] = np.asarray(pc.cast(pc.filter(s, pa.array(exact)), pa.int64()).to_numpy(zero_copy_only=False))
        integral |= exact
    return _Num(values, f.present, f.present & ~integral)


def _rename(text: pa.Array, names: dict[str, str]) -> pa.Array:
    """``text`` with the values that are keys of ``names`` replaced by their names."""
    for key, name in names.items():
        text = pc.if_else(_np_bool(pc.equal(text, key)), name, text)
    return text


def _text(col: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """Trimmed text and ``present`` (missing tokens like ``null`` become null)."""
    s = _strings(col)
    present = ~_missing(s)
    return pc.if_else(pa.array(present), s, pa.scalar(None, pa.string())), present


def _timestamps(col: pa.Array | pa.ChunkedArray, timezone: str) -> _Num:
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
    return _Num(values, present, np.zeros(len(col), bool))


def _local_to_utc(us: np.ndarray, timezone: str) -> np.ndarray:
    if timezone.upper() in ("UTC", "Z", "GMT"):
        return us
    naive = pa.array(us, pa.timestamp("us"))
    return np.asarray(pc.assume_timezone(naive, timezone, ambiguous="earliest", nonexistent="earliest")
                      .cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


# ---------------------------------------------------------------------------- reading sources


@dataclass
class _Chunk:
    """A chunk of source rows: columns by name, and each row's line (CSV) or 1-based row (Parquet) number."""

    columns: dict[str, pa.Array]
    lines: np.ndarray

    @property
    def size(self) -> int:
        return int(self.lines.size)


def _csv_chunks(path: Path, report: AdaptReport, *, names: list[str] | None,
                header: Callable[[list[str]], tuple[list[str], bool]] | None = None,
                block_bytes: int = 8 << 20) -> Iterator[_Chunk]:
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
        yield _Chunk({c: table.column(c).combine_chunks() for c in cols}, line_no[good])


def _parquet_chunks(path: Path, report: AdaptReport, wanted: list[str], batch_rows: int) -> Iterator[_Chunk]:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(str(path))
    row = 0
    for batch in pf.iter_batches(batch_size=batch_rows, columns=wanted):
        n = batch.num_rows
        report.rows_read += n
        yield _Chunk({c: batch.column(c) for c in batch.schema.names}, np.arange(row + 1, row + n + 1))
        row += n


# ---------------------------------------------------------------------------- events


class _Reasons:
    """The first reason each source row of a chunk fails, if any."""

    def __init__(self, n: int):
        self.bad = np.zeros(n, bool)
        self.reason = np.full(n, None, dtype=object)

    def add(self, cond: np.ndarray, reason: str) -> None:
        new = np.asarray(cond, dtype=bool) & ~self.bad
        if new.any():
            self.reason[new] = reason
            self.bad |= new

    def parsed(self, num: _Num, name: str, kind: str = "number", required: bool = False) -> None:
        if required:
            self.add(~num.present, f"missing {name}")
        self.add(num.bad, f"{name} is not a{'n' if kind[0] in 'aeiou' else ''} {kind}")


@dataclass
class _Events:
    """Events made from a chunk: ``src`` is the source row (index in the chunk) of each event."""

    src: np.ndarray
    types: pa.Array
    ts: np.ndarray
    attrs: dict[str, pa.Array]


def _col(values: np.ndarray, arrow_type: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    mask = None if valid is None else ~np.asarray(valid, dtype=bool)
    return pa.array(values, type=arrow_type, mask=mask)


def _check_events(ev: _Events, schema: dict[str, Any]) -> np.ndarray:
    """Per event: the first stream-schema rule it breaks (like ingest's validation), else None."""
    n = len(ev.src)
    r = _Reasons(n)
    types = ev.types
    r.add(~_np_bool(pc.is_in(types, pa.array(schema["event_types"]))), "unknown event type")
    for name, spec in schema["attributes"].items():
        carried = (np.ones(n, bool) if spec.get("types", "*") == "*"
                   else _np_bool(pc.is_in(types, pa.array(spec["types"]))))
        col = ev.attrs.get(name)
        present = np.zeros(n, bool) if col is None else ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if spec.get("required"):
            r.add(carried & ~present, f"missing required attribute '{name}'")
        if col is None:
            continue
        live = carried & present
        if "min" in spec:
            r.add(live & _np_bool(pc.less(col, spec["min"])), f"attribute '{name}' below min {spec['min']}")
        if "max" in spec:
            r.add(live & _np_bool(pc.greater(col, spec["max"])), f"attribute '{name}' above max {spec['max']}")
        if "values" in spec:
            r.add(live & ~_np_bool(pc.is_in(col, pa.array(spec["values"]))),
                  f"attribute '{name}' not in {list(spec['values'])}")
    return r.reason


def _table(ev: _Events, keep: np.ndarray, schema: dict[str, Any], arrow: pa.Schema) -> pa.Table:
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


# ---------------------------------------------------------------------------- NYC TLC

TLC_COLUMNS = {  # role -> accepted column names (case-insensitive), first found wins
    "pickup": ("tpep_pickup_datetime", "lpep_pickup_datetime", "pickup_datetime"),
    "dropoff": ("tpep_dropoff_datetime", "lpep_dropoff_datetime", "dropoff_datetime"),
    "request": ("request_datetime",),
    "pu": ("pulocationid",),
    "do": ("dolocationid",),
    "passengers": ("passenger_count",),
    "distance": ("trip_distance", "trip_miles"),
    "fare": ("fare_amount", "base_passenger_fare"),
    "vendor": ("vendorid", "hvfhs_license_num"),
}
TLC_REQUIRED = ("pickup", "dropoff", "pu")
TLC_VENDORS = {1: "CMT", 2: "Curb", 6: "Myle", 7: "Helix"}
HVFHS = {"HV0002": "Juno", "HV0003": "Uber", "HV0004": "Via", "HV0005": "Lyft"}


def _load_zone_lookup(path: str | Path | None) -> dict[int, str] | None:
    """LocationID -> Borough from TLC's ``taxi_zone_lookup.csv`` (LocationID,Borough,Zone,service_zone)."""
    if path is None:
        return None
    out = {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        for row in csv.DictReader(fh):
            keys = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
            try:
                out[int(keys["locationid"])] = keys.get("borough") or "Unknown"
            except (KeyError, ValueError):
                continue
    if not out:
        raise AdaptError(f"{path}: no LocationID,Borough rows (want TLC's taxi_zone_lookup.csv)")
    return out


def _tlc_events(chunk: _Chunk, cols: dict[str, str], opts: dict[str, Any], reasons: _Reasons) -> _Events:
    n = chunk.size
    c = chunk.columns
    tz = opts["timezone"]
    pick = _timestamps(c[cols["pickup"]], tz)
    drop = _timestamps(c[cols["dropoff"]], tz)
    reasons.parsed(pick, "pickup time", required=True)
    reasons.parsed(drop, "dropoff time", required=True)
    reasons.add(pick.present & drop.present & (drop.values < pick.values), "dropoff before pickup")
    if "request" in cols:
        req = _timestamps(c[cols["request"]], tz)
        req_ts = np.where(req.present, req.values, pick.values)
        reasons.add(req.present & pick.present & (req.values > pick.values), "request after pickup")
    else:
        req_ts = pick.values
    pu = _int(c[cols["pu"]])
    reasons.parsed(pu, "PULocationID", "integer", required=True)
    reasons.add(pu.ok & ((pu.values < 1) | (pu.values > 265)), "PULocationID outside 1..265")
    do = _int(c[cols["do"]]) if "do" in cols else _Num(np.zeros(n, np.int64), np.zeros(n, bool), np.zeros(n, bool))
    reasons.parsed(do, "DOLocationID", "integer")
    reasons.add(do.ok & ((do.values < 1) | (do.values > 265)), "DOLocationID outside 1..265")
    missing = _Num(np.full(n, np.nan), np.zeros(n, bool), np.zeros(n, bool))
    pax = _int(c[cols["passengers"]]) if "passengers" in cols else missing
    reasons.parsed(pax, "passenger_count", "integer")
    reasons.add(pax.ok & ((pax.values < 0) | (pax.values > 9)), "passenger_count outside 0..9")
    dist = _float(c[cols["distance"]]) if "distance" in cols else missing
    reasons.parsed(dist, "trip distance")
    reasons.add(dist.ok & (dist.values < 0), "negative trip distance")
    fare = _float(c[cols["fare"]]) if "fare" in cols else missing
    reasons.parsed(fare, "fare")
    reasons.add(fare.ok & (fare.values < 0), "negative fare (a TLC correction record)")

    vendor_text: pa.Array = pa.nulls(n, pa.string())
    vendor_num = np.zeros(n, np.int64)
    vendor_ok = np.zeros(n, bool)
    if "vendor" in cols:
        raw = c[cols["vendor"]]
        raw = raw.combine_chunks() if isinstance(raw, pa.ChunkedArray) else raw
        if pa.types.is_string(raw.type) or pa.types.is_large_string(raw.type):  # HVFHV licence HV0003
            text, present = _text(raw)
            v = _int(pc.replace_substring_regex(text, r"^[A-Za-z]+", ""))
            vendor_num, vendor_ok = v.values, v.ok
            vendor_text = _rename(text, HVFHS)
            reasons.add(present & ~v.ok, "licence number without digits")
        else:
            v = _int(raw)
            reasons.parsed(v, "VendorID", "integer")
            vendor_num, vendor_ok = v.values, v.ok
            vendor_text = _rename(_col(vendor_num, pa.int64(), vendor_ok).cast(pa.string()),
                                  {str(k): name for k, name in TLC_VENDORS.items()})

    km = np.round(dist.values * MILE_KM, 3)
    duration = np.round((drop.values - pick.values) / US, 1)
    trip = chunk.lines.astype(np.int64)  # the source row number: a trip's key
    if opts["mode"] == "zones":
        reasons.add(~vendor_ok, "missing VendorID")
        types = pc.binary_join_element_wise("Z", pa.array(pu.values).cast(pa.string()), "")
        return _Events(np.arange(n), types, pick.values, {
                           "vendor": _col(vendor_num, pa.int64(), vendor_ok),
                           "trip": _col(trip, pa.int64()),
                           "dropoff_zone": _col(do.values, pa.int64(), do.ok),
                           "passengers": _col(np.nan_to_num(pax.values).astype(np.int64), pa.int64(), pax.ok),
                           "distance": _col(km, pa.float64(), dist.ok),
                           "duration": _col(duration, pa.float64(), pick.ok & drop.ok),
                           "price": _col(np.round(fare.values, 2), pa.float64(), fare.ok),
                       })
    # rides: Request, Pickup, Dropoff per trip (in this order for equal times)
    lookup = opts.get("zones")
    zone = np.where(pu.ok, pu.values, 0).clip(0, 265)
    if lookup is not None:
        names = pa.array([lookup.get(z, "Unknown") for z in range(266)], pa.string())
    else:
        names = pa.array([f"Z{z}" for z in range(266)], pa.string())
    district = pc.if_else(pa.array(pu.ok), names.take(pa.array(zone)), pa.scalar(None, pa.string()))
    pax_ok = pax.ok & (np.nan_to_num(pax.values) >= 1)  # 0 passengers = unknown in TLC data
    src = np.concatenate([np.arange(n)] * 3)
    types = pa.array(["Request"] * n + ["Pickup"] * n + ["Dropoff"] * n, pa.string())
    three = lambda a: np.concatenate([a] * 3)  # noqa: E731
    attrs = {
        "driver": _col(three(trip), pa.int64()),
        "rider": _col(three(trip), pa.int64()),
        "district": pa.concat_arrays([district] * 3),
        "duration": _col(three(duration), pa.float64(), three(pick.ok & drop.ok)),
        "price": _col(np.r_[np.full(n, np.nan), np.full(n, np.nan), np.round(fare.values, 2)], pa.float64(),
                      np.r_[np.zeros(2 * n, bool), fare.ok]),
        "distance": _col(three(km), pa.float64(), three(dist.ok)),
        "passengers": _col(three(np.nan_to_num(pax.values).astype(np.int64)), pa.int64(), three(pax_ok)),
        "pickup_zone": _col(three(pu.values), pa.int64(), three(pu.ok)),
        "dropoff_zone": _col(three(do.values), pa.int64(), three(do.ok)),
        "vendor": pa.concat_arrays([vendor_text] * 3),
    }
    return _Events(src, types, np.concatenate([req_ts, pick.values, drop.values]), attrs)


# ---------------------------------------------------------------------------- DEBS 2014 smart plugs

DEBS_COLUMNS = ["id", "timestamp", "value", "property", "plug_id", "household_id", "house_id"]


def _debs_events(chunk: _Chunk, opts: dict[str, Any], reasons: _Reasons) -> _Events:
    c = chunk.columns
    n = chunk.size
    rid = _int(c["id"])
    ts = _float(c["timestamp"])
    value = _float(c["value"])
    prop = _int(c["property"])
    plug, household, house = _int(c["plug_id"]), _int(c["household_id"]), _int(c["house_id"])
    reasons.parsed(ts, "timestamp", required=True)
    reasons.parsed(value, "value", required=True)
    reasons.parsed(prop, "property", "integer", required=True)
    reasons.add(prop.ok & (prop.values != 0) & (prop.values != 1), "property not 0 (work) or 1 (load)")
    for num, name in ((rid, "id"), (plug, "plug_id"), (household, "household_id"), (house, "house_id")):
        reasons.parsed(num, name, "integer", required=name != "id")
    is_load = prop.values == 1
    types = pa.array(np.where(is_load, "Load", "Work").astype(object), pa.string())
    ts_us = np.round(np.nan_to_num(ts.values) * US).astype(np.int64)
    return _Events(np.arange(n), types, ts_us, {
        "house": _col(house.values, pa.int64(), house.ok),
        "household": _col(household.values, pa.int64(), household.ok),
        "plug": _col(plug.values, pa.int64(), plug.ok),
        "load": _col(value.values, pa.float64(), value.ok),
        "work": _col(value.values, pa.float64(), value.ok),
        "reading": _col(rid.values, pa.int64(), rid.ok),
    })


# ---------------------------------------------------------------------------- OHLCV bars

OHLCV_NAMES = {  # canonical -> accepted header names (lower case, <> and spaces removed)
    "date": ("date", "day", "datetime", "timestamp"),
    "time": ("time",),
    "open": ("open",),
    "high": ("high",),
    "low": ("low",),
    "close": ("close", "last", "price"),
    "volume": ("volume", "vol"),
    "ticker": ("ticker", "symbol", "name"),
}
DATE_FORMATS = ("%Y-%m-%d", "%Y%m%d", "%m/%d/%Y", "%d.%m.%Y")
TIME_FORMATS = ("%H:%M:%S", "%H:%M", "%H%M%S", "%H%M")


def _ohlcv_header(fields: list[str]) -> list[str] | None:
    """Canonical column names of a header line, or None when the line is data (its first field is a date)."""
    first = fields[0].strip().strip('"') if fields else ""
    if first[:1].isdigit():
        return None
    names = []
    for f in fields:
        key = f.strip().strip('"').strip("<>").lower().replace(" ", "").replace("_", "")
        canon = next((c for c, alts in OHLCV_NAMES.items() if key in alts), None)
        names.append(canon if canon and canon not in names else f"_{key or len(names)}")
    return names


def _parse_times(text: pa.Array, formats: list[str]) -> tuple[np.ndarray, np.ndarray]:
    out = pa.nulls(len(text), pa.timestamp("us"))
    for fmt in formats:
        parsed = pc.strptime(text, format=fmt, unit="us", error_is_null=True)
        out = pc.coalesce(out, parsed)
    ok = ~np.asarray(out.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return np.asarray(out.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64), ok


def _ohlcv_events(chunk: _Chunk, opts: dict[str, Any], reasons: _Reasons) -> _Events:
    c = chunk.columns
    n = chunk.size
    for need in ("date", "open", "high", "low", "close"):
        if need not in c:
            raise AdaptError(f"OHLCV file without a {need!r} column (columns: {', '.join(c)})")
    date, date_present = _text(c["date"])
    reasons.add(~date_present, "missing date")
    if "time" in c:
        tm, tm_present = _text(c["time"])
        reasons.add(date_present & ~tm_present, "missing time")
        joined = pc.binary_join_element_wise(date, tm, " ")
        formats = [f"{d} {t}" for d in DATE_FORMATS for t in TIME_FORMATS]
    else:
        joined = date
        formats = [f"{d} {t}" for d in DATE_FORMATS for t in ("%H:%M:%S", "%H:%M")] + list(DATE_FORMATS)
        formats += ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ"]
    local, ok = _parse_times(pc.fill_null(joined, ""), formats)
    reasons.add(date_present & ~ok, "unparseable date/time")
    ts = _local_to_utc(local, opts["timezone"])
    prices = {k: _float(c[k]) for k in ("open", "high", "low", "close")}
    for k, num in prices.items():
        reasons.parsed(num, k.capitalize(), required=k == "close")
        reasons.add(num.ok & (num.values < 0), f"negative {k.capitalize()}")
    if "volume" in c:
        vol = _int(c["volume"])
        reasons.parsed(vol, "Volume", "integer", required=True)
        reasons.add(vol.ok & (vol.values < 0), "negative Volume")
        volume = _col(vol.values, pa.int64(), vol.ok)
    else:
        volume = _col(np.zeros(n, np.int64), pa.int64())
    if opts.get("ticker"):
        company = pa.array([opts["ticker"]] * n, pa.string())
    elif "ticker" in c:
        company, present = _text(c["ticker"])
        reasons.add(~present, "missing ticker")
    else:
        company = pa.array([opts["file_ticker"]] * n, pa.string())
    return _Events(np.arange(n), pa.array(["Trade"] * n, pa.string()), ts, {
        "company": company,
        "sector": pa.array([opts["sector"]] * n, pa.string()),
        "price": _col(prices["close"].values, pa.float64(), prices["close"].ok),
        "volume": volume,
        "open": _col(prices["open"].values, pa.float64(), prices["open"].ok),
        "high": _col(prices["high"].values, pa.float64(), prices["high"].ok),
        "low": _col(prices["low"].values, pa.float64(), prices["low"].ok),
    })


def _ticker_from_name(path: Path) -> str:
    """``aapl.us.txt`` -> ``AAPL``, ``MSFT_1min.csv`` -> ``MSFT``, ``BRK-B.csv`` -> ``BRK-B``."""
    name = path.name
    for suffix in (".gz", ".bz2", ".zst"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    stem = name.split(".")[0].split("_")[0]
    return stem.upper() or "UNKNOWN"


# ---------------------------------------------------------------------------- Dublin bus

DUBLIN_COLUMNS = ["timestamp", "line", "direction", "journey_pattern", "time_frame", "journey", "operator",
                  "congestion", "lon", "lat", "delay", "block", "vehicle", "stop", "at_stop"]


def _dublin_events(chunk: _Chunk, opts: dict[str, Any], reasons: _Reasons) -> _Events:
    c = chunk.columns
    n = chunk.size
    ts = _int(c["timestamp"])
    reasons.parsed(ts, "timestamp", "integer", required=True)
    nums = {}
    for name in ("direction", "journey", "congestion", "delay", "block", "vehicle", "stop", "at_stop"):
        nums[name] = _int(c[name])
        reasons.parsed(nums[name], name, "integer", required=name not in ("block", "stop"))
    for name in ("congestion", "at_stop"):
        v = nums[name]
        reasons.add(v.ok & (v.values != 0) & (v.values != 1), f"{name} not 0 or 1")
    lon, lat = _float(c["lon"]), _float(c["lat"])
    reasons.parsed(lon, "lon", required=True)
    reasons.parsed(lat, "lat", required=True)
    at_stop = nums["at_stop"].values == 1
    congested = nums["congestion"].values == 1
    types = np.where(at_stop, "AtStop", np.where(congested, "Congested", "Moving")).astype(object)
    line, _ = _text(c["line"])
    pattern, _ = _text(c["journey_pattern"])
    operator, _ = _text(c["operator"])
    attrs = {name: _col(nums[name].values, pa.int64(), nums[name].ok)
             for name in ("vehicle", "direction", "journey", "block", "stop", "delay")}
    attrs.update({
        "line": line, "journey_pattern": pattern, "operator": operator,
        "congestion": _col(congested, pa.bool_(), nums["congestion"].ok),
        "at_stop": _col(at_stop, pa.bool_(), nums["at_stop"].ok),
        "lon": _col(lon.values, pa.float64(), lon.ok),
        "lat": _col(lat.values, pa.float64(), lat.ok),
    })
    return _Events(np.arange(n), pa.array(types, pa.string()), ts.values, attrs)


# ---------------------------------------------------------------------------- the driver


@dataclass(frozen=True)
class Adapter:
    kind: str
    stream: str
    description: str
    source: str  # where users download the files
    options: tuple[str, ...]


ADAPTERS: dict[str, Adapter] = {
    "tlc": Adapter("tlc", "rides", "NYC TLC trip records (yellow / green / HVFHV Parquet) -> rides (or taxi_zones)",
                   "https://www.nyc.gov/site/tlc/about/tlc-trip-record-data.page", ("mode", "timezone", "zone_lookup")),
    "debs2014": Adapter("debs2014", "smart_home", "DEBS 2014 grand challenge smart-plug CSV -> smart_home",
                        "https://debs.org/grand-challenges/2014/", ()),
    "ohlcv": Adapter("ohlcv", "stocks", "daily or minute OHLCV bars CSV -> stocks (one Trade per bar)",
                     "Yahoo Finance / Stooq / Kaggle price histories", ("ticker", "sector", "timezone")),
    "dublin_bus": Adapter("dublin_bus", "bus", "Dublin bus GPS CSV (Dublinked 2012/2013) -> bus",
                          "https://data.gov.ie/dataset/dublin-bus-gps-sample-data-from-dublin-city-council-insight-project",
                          ()),
}
ALIASES = {"nyc_tlc": "tlc", "taxi": "tlc", "debs": "debs2014", "smart_plugs": "debs2014", "stocks": "ohlcv",
           "bus": "dublin_bus", "dublin": "dublin_bus"}


def _chunks_and_events(kind: str, src: Path, opts: dict[str, Any], report: AdaptReport,
                       chunk_rows: int) -> Iterator[tuple[_Chunk, Callable[[_Chunk, _Reasons], _Events]]]:
    if kind == "tlc":
        import pyarrow.parquet as pq

        if src.suffix.lower() not in (".parquet", ".parq", ".pq"):
            raise AdaptError(f"{src}: TLC trip records are read from Parquet files (as TLC publishes them)")
        names = pq.ParquetFile(str(src)).schema_arrow.names
        lower = {n.lower(): n for n in names}
        cols = {}
        for role, alts in TLC_COLUMNS.items():
            hit = next((lower[a] for a in alts if a in lower), None)
            if hit is not None:
                cols[role] = hit
        missing = [r for r in TLC_REQUIRED if r not in cols]
        if missing:
            want = "; ".join(" or ".join(TLC_COLUMNS[r]) for r in missing)
            raise AdaptError(f"{src}: not a TLC trip file, missing column(s): {want}")
        for chunk in _parquet_chunks(src, report, sorted(set(cols.values())), chunk_rows):
            yield chunk, lambda ch, r, cols=cols: _tlc_events(ch, cols, opts, r)
        return
    block = max(1 << 16, chunk_rows * 64)
    if kind == "debs2014":
        for chunk in _csv_chunks(src, report, names=DEBS_COLUMNS, block_bytes=block):
            yield chunk, lambda ch, r: _debs_events(ch, opts, r)
    elif kind == "dublin_bus":
        for chunk in _csv_chunks(src, report, names=DUBLIN_COLUMNS, block_bytes=block):
            yield chunk, lambda ch, r: _dublin_events(ch, opts, r)
    elif kind == "ohlcv":
        opts["file_ticker"] = _ticker_from_name(src)
        default = ["date", "time", "open", "high", "low", "close", "volume"]
        state: dict[str, Any] = {}

        def header(fields: list[str]) -> tuple[list[str], bool]:
            got = _ohlcv_header(fields)
            if got is not None:
                return got, True
            # no header: Date[,Time],Open,High,Low,Close,Volume[,more]
            timed = len(fields) > 1 and ":" in fields[1]
            names = [c for c in default if timed or c != "time"]
            state["headless"] = True
            return (names + [f"_extra{i}" for i in range(len(fields))])[: len(fields)], False

        for chunk in _csv_chunks(src, report, names=None, header=header, block_bytes=block):
            yield chunk, lambda ch, r: _ohlcv_events(ch, opts, r)
        if state.get("headless"):
            report.notes.append("no header line: columns taken as Date[,Time],Open,High,Low,Close,Volume")
    else:  # pragma: no cover
        raise AdaptError(kind)


def adapt(kind: str, src_path: str | Path, out_path: str | Path, *, format: str | None = None,
          chunk_rows: int = 200_000, **options: Any) -> AdaptReport:
    """Convert one source file of ``kind`` into an event file of its stream; returns the report.

    Options: ``tlc``: ``mode`` ("rides" or "zones"), ``timezone`` of the naive
    TLC times (default America/New_York; the output is UTC), ``zone_lookup``
    (TLC's taxi_zone_lookup.csv: rides' ``district`` becomes the pickup
    borough, else ``Z<PULocationID>``). ``ohlcv``: ``ticker`` (default: a
    Ticker/Symbol/Name column, else the file name), ``sector`` (default
    "unknown"), ``timezone`` of the bar times (default UTC).
    """
    from trendlake.datagen.streams import arrow_schema, write_tables
    from trendlake.schemas import load_stream_schema

    started = time.perf_counter()
    key = ALIASES.get(kind.lower().replace("-", "_"), kind.lower().replace("-", "_"))
    if key not in ADAPTERS:
        raise AdaptError(f"unknown adapter {kind!r} (known: {', '.join(ADAPTERS)})")
    spec = ADAPTERS[key]
    unknown = sorted(k for k, v in options.items() if k not in spec.options and v is not None)
    if unknown:
        raise AdaptError(f"adapter {key} has no option(s) {', '.join(unknown)} (options: {', '.join(spec.options) or 'none'})")
    src = Path(src_path)
    if not src.is_file():
        raise FileNotFoundError(f"no source file {src}")
    opts = {k: v for k, v in options.items() if v is not None}
    stream = spec.stream
    if key == "tlc":
        opts.setdefault("mode", "rides")
        opts.setdefault("timezone", "America/New_York")
        if opts["mode"] not in ("rides", "zones"):
            raise AdaptError(f"tlc mode must be 'rides' or 'zones', got {opts['mode']!r}")
        stream = "taxi_zones" if opts["mode"] == "zones" else "rides"
        opts["zones"] = _load_zone_lookup(opts.get("zone_lookup"))
    if key == "ohlcv":
        opts.setdefault("sector", "unknown")
        opts.setdefault("timezone", "UTC")
    if int(chunk_rows) < 1:
        raise AdaptError("chunk_rows must be >= 1")
    schema = load_stream_schema(stream)
    arrow = arrow_schema(schema)
    report = AdaptReport(key, stream, str(src), str(out_path))

    def tables() -> Iterator[pa.Table]:
        for chunk, make in _chunks_and_events(key, src, opts, report, int(chunk_rows)):
            reasons = _Reasons(chunk.size)
            ev = make(chunk, reasons)
            # events of rows already failing are not checked; then the schema rules, per source row
            live = ~reasons.bad[ev.src]
            checked = _check_events(ev, schema)
            failed = np.flatnonzero(live & (checked != None))  # noqa: E711
            rows, first = np.unique(ev.src[failed], return_index=True)  # a row's first failing event
            reasons.reason[rows] = checked[failed[first]]
            reasons.bad[rows] = True
            for reason in dict.fromkeys(reasons.reason[reasons.bad]):
                report.skip(reason, chunk.lines[reasons.reason == reason])
            report.rows_converted += int((~reasons.bad).sum())
            keep = ~reasons.bad[ev.src]
            table = _table(ev, keep, schema, arrow)
            report.rows_written += table.num_rows
            yield table

    path = write_tables(tables(), out_path, arrow, format=format)
    report.output = str(path)
    report.seconds = time.perf_counter() - started
    if report.rows_read != report.rows_converted + report.rows_skipped:  # pragma: no cover - an adapter bug
        raise AdaptError(f"{report.rows_read} rows read but {report.rows_converted} converted + "
                         f"{report.rows_skipped} skipped")
    return report


# ---------------------------------------------------------------------------- CLI


def add_parser(sub: argparse._SubParsersAction) -> None:
    kinds = "; ".join(f"{a.kind}: {a.description}" for a in ADAPTERS.values())
    p = sub.add_parser(
        "adapt",
        help="convert a downloaded public data file (NYC TLC, DEBS 2014, OHLCV, Dublin bus) to an event file",
        description=(
            "Convert one real data file into an event file of a bundled stream that `trendlake ingest` "
            f"accepts, in chunks. Kinds: {kinds}. Rows that cannot be converted are skipped and "
            "reported with their reasons and line numbers (docs/generators.md)."
        ),
    )
    p.add_argument("kind", choices=sorted(ADAPTERS), metavar="KIND", help=f"one of {', '.join(ADAPTERS)}")
    p.add_argument("src", type=Path, metavar="SRC", help="the downloaded source file")
    p.add_argument("--out", "-o", type=Path, required=True, help="output event file (.parquet, .csv, .jsonl)")
    p.add_argument("--format", choices=("parquet", "csv", "jsonl"), help="output format (default: from the suffix)")
    p.add_argument("--mode", choices=("rides", "zones"), help="tlc: rides (Request/Pickup/Dropoff) or zones (taxi_zones)")
    p.add_argument("--timezone", help="time zone of naive source times (tlc default America/New_York, ohlcv UTC)")
    p.add_argument("--zone-lookup", type=Path, help="tlc: TLC's taxi_zone_lookup.csv (rides district = pickup borough)")
    p.add_argument("--ticker", help="ohlcv: the ticker (default: a Ticker/Symbol/Name column, else the file name)")
    p.add_argument("--sector", help="ohlcv: the sector of the company (default unknown)")
    p.add_argument("--chunk-rows", type=int, default=200_000, help="source rows per chunk (about)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    options = {"mode": args.mode, "timezone": args.timezone, "zone_lookup": args.zone_lookup,
               "ticker": args.ticker, "sector": args.sector}
    allowed = ADAPTERS[args.kind].options
    given = {k: v for k, v in options.items() if v is not None}
    bad = [k for k in given if k not in allowed]
    if bad:
        print(f"trendlake adapt: error: {args.kind} takes no --{bad[0].replace('_', '-')}", file=sys.stderr)
        return 2
    try:
        report = adapt(args.kind, args.src, args.out, format=args.format, chunk_rows=args.chunk_rows, **given)
    except (AdaptError, FileNotFoundError, OSError, pa.ArrowInvalid) as err:
        print(f"trendlake adapt: error: {err}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0
