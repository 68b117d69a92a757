"""Reading event files into ``Event`` lists, and partitioning them.

An ``Event`` (``engine.columns``) has a type, a UTC timestamp in microseconds,
an ingestion sequence number and an attribute dict. Files are CSV (header with ``type``,
``ts`` and attribute columns), JSON lines, or Parquet. ``ts`` is ISO-8601
(UTC unless an offset is given), numeric epoch seconds, or an Arrow
timestamp. Numeric-looking CSV values become numbers.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trendlake.engine.columns import (
    RESERVED,
    Event,
    clean,
    events_from_arrow,
    events_from_rows,
)
from trendlake.engine.errors import EventFileError
from trendlake.engine.timeline import format_ts, number_or_text, parse_ts

__all__ = [
    "RESERVED",
    "Event",
    "EventFileError",
    "events_from_arrow",
    "format_ts",
    "make_events",
    "parse_ts",
    "partition",
    "read_events",
]

# names other packages import from here
_clean = clean
_number = number_or_text


def make_events(rows: Iterable[dict[str, Any]], where: str = "<rows>") -> list[Event]:
    """Events from row dicts with ``type``, ``ts`` and optional ``seq``, sorted by (ts, seq)."""
    return events_from_rows(rows, where)


def read_events(path: str | Path) -> list[Event]:
    """Read a CSV, JSON-lines or Parquet event file."""
    path = Path(path)
    if not path.exists():
        raise EventFileError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        return events_from_arrow(table, where=str(path))
    if suffix in (".jsonl", ".json", ".ndjson"):
        return make_events(_json_rows(path), where=str(path))
    if suffix in (".csv", ".txt"):
        return make_events(_csv_rows(path), where=str(path))
    raise EventFileError(f"{path}: unknown event file format {suffix!r} (use .csv, .jsonl or .parquet)")


def _csv_rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or not {"type", "ts"} <= set(reader.fieldnames):
            raise EventFileError(f"{path}: the CSV header must name 'type' and 'ts' columns")
        for row in reader:
            yield {k: (number_or_text(v) if k not in ("type",) else v) for k, v in row.items()}


def _json_rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open() as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise EventFileError(f"{path}:{line_no}: not JSON: {err.msg}") from None
            if not isinstance(row, dict):
                raise EventFileError(f"{path}:{line_no}: expected a JSON object per line")
            yield row


def partition(events: Iterable[Event], keys: tuple[str, ...]) -> dict[tuple[Any, ...], list[Event]]:
    """Split a time-ordered stream by the values of ``keys``; events lacking one are dropped."""
    parts: dict[tuple[Any, ...], list[Event]] = {}
    for e in events:
        key = tuple(e.attrs.get(k) for k in keys)
        if None in key:
            continue
        parts.setdefault(key, []).append(e)
    return parts
