"""Events as the engine sees them, reading event files, and partitioning.

An ``Event`` has a type, a UTC timestamp in microseconds, an ingestion
sequence number and an attribute dict. Files are read by ``engine.files``
(typed by ``trendlake.schemas.types``, the rules ingest follows) and turned
into events here for the row-based strategies and tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trendlake.engine.errors import EngineError

RESERVED = ("type", "ts", "seq")


class EventFileError(EngineError, ValueError):
    """A row of an event file cannot be read; the message names file and line."""


@dataclass(slots=True)
class Event:
    ts: int  # µs since the Unix epoch, UTC
    seq: int
    type: str
    attrs: dict[str, Any]


def parse_ts(value: Any) -> int:
    """A timestamp in µs UTC from ISO-8601 text, epoch seconds, or a datetime."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        delta = value - datetime(1970, 1, 1, tzinfo=UTC)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, bool):
        raise ValueError(f"not a timestamp: {value!r}")
    if isinstance(value, int):
        return value * 1_000_000
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a timestamp: {value!r}")
        return round(value * 1_000_000)
    if isinstance(value, str):
        text = value.strip()
        number = _number(text)
        if isinstance(number, (int, float)):
            return parse_ts(number)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            return parse_ts(datetime.fromisoformat(text))
        except ValueError:
            raise ValueError(f"not a timestamp: {value!r}") from None
    raise ValueError(f"not a timestamp: {value!r}")


def format_ts(us: int) -> str:
    """ISO-8601 UTC text of a µs timestamp (``2026-01-01T00:30:00Z``)."""
    seconds, micros = divmod(us, 1_000_000)
    dt = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=micros)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if micros:
        text += f".{micros:06d}"
    return text + "Z"


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def _clean(value: Any) -> Any:
    """Missing values (None, empty text, NaN) become None."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    return value


def make_events(rows: Iterable[dict[str, Any]], where: str = "<rows>") -> list[Event]:
    """Events from row dicts with ``type``, ``ts`` and optional ``seq``, sorted by (ts, seq)."""
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
        attrs = {k: _clean(v) for k, v in row.items() if k not in RESERVED}
        events.append(Event(ts, position if seq is None else int(seq), str(etype), attrs))
    events.sort(key=lambda e: (e.ts, e.seq))
    return events


def read_events(path: str | Path) -> list[Event]:
    """Read a CSV, JSON-lines or Parquet event file (``engine.files``' reader and typing rules)."""
    import pyarrow as pa
    from trendlake.engine.files import read_event_table

    table = read_event_table(path)
    ts = table.column("ts").cast(pa.timestamp("us", tz="UTC"))
    return events_from_arrow(table.set_column(table.column_names.index("ts"), "ts", ts), where=str(path))


def events_from_arrow(table: Any, where: str = "<arrow>") -> list[Event]:
    """Events from a pyarrow Table (timestamps as Arrow timestamps, numbers or text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if "ts" in table.column_names and pa.types.is_timestamp(table.schema.field("ts").type):
        ts_col = pc.cast(table.column("ts"), pa.timestamp("us", tz="UTC")).cast(pa.int64())
        table = table.set_column(table.column_names.index("ts"), "ts", ts_col)
        return _events_from_us_rows(table.to_pylist(), where)
    return make_events(table.to_pylist(), where=where)


def _events_from_us_rows(rows: list[dict[str, Any]], where: str) -> list[Event]:
    events = []
    for position, row in enumerate(rows):
        ts = row.get("ts")
        if not isinstance(ts, int):
            raise EventFileError(f"{where}: row {position + 1}: missing timestamp")
        etype = row.get("type")
        if etype is None or etype == "":
            raise EventFileError(f"{where}: row {position + 1}: empty event type")
        seq = row.get("seq")
        attrs = {k: _clean(v) for k, v in row.items() if k not in RESERVED}
        events.append(Event(ts, position if seq is None else int(seq), str(etype), attrs))
    events.sort(key=lambda e: (e.ts, e.seq))
    return events


def partition(events: Iterable[Event], keys: tuple[str, ...]) -> dict[tuple[Any, ...], list[Event]]:
    """Split a time-ordered stream by the values of ``keys``; events lacking one are dropped."""
    parts: dict[tuple[Any, ...], list[Event]] = {}
    for e in events:
        key = tuple(e.attrs.get(k) for k in keys)
        if None in key:
            continue
        parts.setdefault(key, []).append(e)
    return parts
