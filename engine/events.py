"""Reading event files into ``Event`` lists, and partitioning them.

An ``Event`` (``engine.columns``) has a type, a UTC timestamp in microseconds,
an ingestion sequence number and an attribute dict. Files are read by
``engine.files`` (typed by ``trendlake.schemas.typing``, the rules ingest
follows) and turned into events here for the row-based strategies and tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trendlake.engine.columns import (
    RESERVED,
    Event,
    events_from_arrow,
    events_from_rows,
)
from trendlake.engine.errors import EventFileError

__all__ = [
    "RESERVED",
    "Event",
    "EventFileError",
    "events_from_arrow",
    "make_events",
    "partition",
    "read_events",
]

def make_events(rows: Iterable[dict[str, Any]], where: str = "<rows>") -> list[Event]:
    """Events from row dicts with ``type``, ``ts`` and optional ``seq``, sorted by (ts, seq)."""
    return events_from_rows(rows, where)


def read_events(path: str | Path) -> list[Event]:
    """Read a CSV, JSON-lines or Parquet event file (``engine.files``' reader and typing rules)."""
    import pyarrow as pa
    from trendlake.engine.files import read_event_table

    table = read_event_table(path)
    ts = table.column("ts").cast(pa.timestamp("us", tz="UTC"))
    return events_from_arrow(table.set_column(table.column_names.index("ts"), "ts", ts), where=str(path))


def partition(events: Iterable[Event], keys: tuple[str, ...]) -> dict[tuple[Any, ...], list[Event]]:
    """Split a time-ordered stream by the values of ``keys``; events lacking one are dropped."""
    parts: dict[tuple[Any, ...], list[Event]] = {}
    for e in events:
        key = tuple(e.attrs.get(k) for k in keys)
        if None in key:
            continue
        parts.setdefault(key, []).append(e)
    return parts
