"""Writing event tables to Parquet, CSV (ISO-8601 ``ts``) or JSON lines, atomically (``write_events``, ``write_tables``)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from trendlake.datagen.streams.core import arrow_schema, generate
from trendlake.datagen.streams.measure import Measure

FORMATS = ("parquet", "csv", "jsonl")
SUFFIX_FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}


def _format_of(path: Path, format: str | None) -> str:
    if format is None:
        return SUFFIX_FORMATS.get(path.suffix.lower(), "parquet")
    fmt = format.lower()
    if fmt == "json":
        fmt = "jsonl"
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    return fmt


def _text_columns(table: pa.Table) -> list[tuple[str, pa.Array, bool]]:
    """(name, text values with nulls, quoted-in-JSON) per column; ts as ISO-8601 UTC."""
    out = []
    for name in table.column_names:
        col = table.column(name).combine_chunks() if isinstance(table.column(name), pa.ChunkedArray) else table.column(name)
        if pa.types.is_timestamp(col.type):
            col = pc.cast(col, pa.timestamp("us", tz="UTC"))
            out.append((name, pc.strftime(col, format="%Y-%m-%dT%H:%M:%SZ"), True))
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            out.append((name, col, True))
        else:
            out.append((name, col.cast(pa.string()), False))
    return out


def _json_escape(arr: pa.Array) -> pa.Array:
    arr = pc.replace_substring(arr, "\\", "\\\\")
    arr = pc.replace_substring(arr, '"', '\\"')
    for raw, esc in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"), ("\f", "\\f")):
        arr = pc.replace_substring(arr, raw, esc)
    return arr


def _jsonl_bytes(table: pa.Table) -> bytes:
    if table.num_rows == 0:
        return b""
    parts = []
    for name, values, quoted in _text_columns(table):
        key = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '":'
        if quoted:
            values = pc.binary_join_element_wise(key + '"', _json_escape(values), '"', "")
        else:
            values = pc.binary_join_element_wise(key, values, "")
        parts.append(values)
    lines = pc.binary_join_element_wise(*parts, ",", null_handling="skip")
    lines = pc.binary_join_element_wise("{", lines, "}", "")
    return ("\n".join(lines.to_pylist()) + "\n").encode()


class _Writer:
    """One output file in one format; tables are appended in order."""

    def __init__(self, path: Path, fmt: str, schema: pa.Schema) -> None:
        self.path, self.fmt, self.schema = path, fmt, schema
        self.tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        self.rows = 0
        if fmt == "parquet":
            import pyarrow.parquet as pq

            self.pq = pq.ParquetWriter(str(self.tmp), schema, compression="snappy")
        else:
            self.fh = open(self.tmp, "wb")  # noqa: SIM115
            if fmt == "csv":
                self.fh.write((",".join(schema.names) + "\n").encode())

    def write(self, table: pa.Table) -> None:
        table = table.cast(self.schema) if table.schema != self.schema else table
        self.rows += table.num_rows
        if self.fmt == "parquet":
            self.pq.write_table(table)
        elif self.fmt == "csv":
            import pyarrow.csv as pcsv

            cols = _text_columns(table)
            text = pa.table({name: values for name, values, _ in cols})
            options = pcsv.WriteOptions(include_header=False, quoting_style="needed")
            pcsv.write_csv(text, self.fh, write_options=options)
        else:
            self.fh.write(_jsonl_bytes(table))

    def close(self) -> None:
        if self.fmt == "parquet":
            self.pq.close()
        else:
            self.fh.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        try:
            if self.fmt == "parquet":
                self.pq.close()
            else:
                self.fh.close()
        finally:
            self.tmp.unlink(missing_ok=True)


def write_tables(tables: Iterable[pa.Table], path: str | Path, schema: pa.Schema, *, format: str | None = None,
                 on_table: Callable[[pa.Table], None] | None = None) -> Path:
    """Write event tables to ``path`` (Parquet, CSV with an ISO-8601 ``ts``, or JSON lines).

    The file appears atomically (written under a hidden temporary name, then
    renamed), so a landing folder never shows a half-written file.
    """
    path = Path(path)
    fmt = _format_of(path, format)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = _Writer(path, fmt, schema)
    try:
        for table in tables:
            writer.write(table)
            if on_table is not None:
                on_table(table)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    return path


def write_events(
    stream: str,
    path: str | Path,
    events: int,
    seed: int = 0,
    *,
    format: str | None = None,
    progress: bool = False,
    stats: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Path:
    """Generate ``events`` events of ``stream`` into ``path``; returns the path.

    ``format`` is ``parquet``, ``csv`` or ``jsonl`` (default: from the suffix,
    else Parquet). Other keyword arguments go to ``generate``. With
    ``progress`` a tqdm bar counts events; a ``stats`` dict receives
    ``measure``'s figures plus ``seconds`` and ``events_per_second``.
    """
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=int(events), unit="ev", unit_scale=True, desc=f"{stream} -> {Path(path).name}",
                   file=sys.stderr, dynamic_ncols=True)
    meter = Measure() if stats is not None else None

    def seen(table: pa.Table) -> None:
        if bar is not None:
            bar.update(table.num_rows)
        if meter is not None:
            meter.update(table)

    started = time.perf_counter()
    try:
        out = write_tables(generate(stream, events, seed, **kwargs), path, arrow_schema(stream),
                           format=format, on_table=seen)
    finally:
        if bar is not None:
            bar.close()
    if stats is not None and meter is not None:
        elapsed = time.perf_counter() - started
        stats.update(meter.result())
        stats["seconds"] = elapsed
        stats["events_per_second"] = events / elapsed if elapsed > 0 else None
    return out
