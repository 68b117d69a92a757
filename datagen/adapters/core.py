"""``adapt``: one source file -> an event file of its stream, in chunks, every row converted or reported."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from trendlake.datagen.adapters.base import (
    AdaptError,
    AdaptReport,
    Reasons,
    check_events,
    events_table,
)
from trendlake.datagen.adapters.registry import ADAPTERS, ALIASES


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
    stream = spec.output_stream(opts)
    if int(chunk_rows) < 1:
        raise AdaptError("chunk_rows must be >= 1")
    schema = load_stream_schema(stream)
    arrow = arrow_schema(schema)
    report = AdaptReport(key, stream, str(src), str(out_path))

    def tables() -> Iterator[pa.Table]:
        for chunk, make in spec.read(src, opts, report, int(chunk_rows)):
            reasons = Reasons(chunk.size)
            ev = make(chunk, reasons)
            # events of rows already failing are not checked; then the schema rules, per source row
            live = ~reasons.bad[ev.src]
            checked = check_events(ev, schema)
            failed = np.flatnonzero(live & (checked != None))  # noqa: E711
            rows, first = np.unique(ev.src[failed], return_index=True)  # a row's first failing event
            reasons.reason[rows] = checked[failed[first]]
            reasons.bad[rows] = True
            for reason in dict.fromkeys(reasons.reason[reasons.bad]):
                report.skip(reason, chunk.lines[reasons.reason == reason])
            report.rows_converted += int((~reasons.bad).sum())
            keep = ~reasons.bad[ev.src]
            table = events_table(ev, keep, schema, arrow)
            report.rows_written += table.num_rows
            yield table

    path = write_tables(tables(), out_path, arrow, format=format)
    report.output = str(path)
    report.seconds = time.perf_counter() - started
    if report.rows_read != report.rows_converted + report.rows_skipped:  # pragma: no cover - an adapter bug
        raise AdaptError(f"{report.rows_read} rows read but {report.rows_converted} converted + "
                         f"{report.rows_skipped} skipped")
    return report
