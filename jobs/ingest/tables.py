"""The tables ingest writes, as Arrow schemas: ``bronze/<stream>`` (typed events,
partitioned by ``event_date``), ``quarantine/<stream>`` (refused rows with their reason and
raw text) and ``ingest_log/<stream>`` (one row per file and run); and the check that a
stream schema can name them (docs/lake.md, "Tables")."""

from __future__ import annotations

from typing import Any

from trendlake.jobs.ingest.errors import IngestInputError
from trendlake.schemas.typing.rules import TypingError, check_kind


def bronze_schema(stream_schema: dict[str, Any]) -> Any:
    """Arrow schema of ``bronze/<stream>`` (partitioned by ``event_date``)."""
    import pyarrow as pa

    arrow = {"long": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_()}
    fields = [
        pa.field("type", pa.string()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("seq", pa.int64()),
        pa.field("event_date", pa.date32()),
    ]
    fields += [pa.field(n, arrow[s["type"]]) for n, s in stream_schema["attributes"].items()]
    fields += [pa.field("source_file", pa.string()), pa.field("source_checksum", pa.string())]
    return pa.schema(fields)


BRONZE_RESERVED = ("type", "ts", "seq", "event_date", "source_file", "source_checksum")


def as_bronze(
    events: Any, stream_schema: dict[str, Any], *, first_seq: int, source_file: str, source_checksum: str
) -> Any:
    """An Arrow table of already valid, time-ordered events shaped as bronze rows.

    For callers that build bronze without the ingest job (benchmarks, tests):
    ``seq`` counts from ``first_seq``, ``event_date`` is the UTC date of ``ts``,
    attributes the table lacks are NULL. No validation happens here.
    """
    import pyarrow as pa

    schema = bronze_schema(stream_schema)
    n = events.num_rows
    ts = events.column("ts").cast(pa.timestamp("us", tz="UTC"))
    given = {
        "ts": ts,
        "seq": pa.array(range(first_seq, first_seq + n), pa.int64()),
        "event_date": ts.cast(pa.timestamp("us")).cast(pa.date32()),
        "source_file": pa.array([source_file] * n, pa.string()),
        "source_checksum": pa.array([source_checksum] * n, pa.string()),
    }
    arrays = []
    for f in schema:
        if f.name in given:
            arrays.append(given[f.name])
        elif f.name in events.column_names:
            arrays.append(events.column(f.name).cast(f.type))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def check_stream_schema(stream_schema: dict[str, Any]) -> None:
    """Refuse a stream schema whose name cannot name a table or whose attribute names collide with bronze's columns."""
    from trendlake.jobs.lake import LakeNameError, check_name

    try:
        check_name(stream_schema.get("stream"), "stream name")
    except LakeNameError as err:
        raise IngestInputError(f"stream schema: {err}") from None
    missing = [k for k in ("type_column", "time_column", "event_types", "attributes") if k not in stream_schema]
    if missing:
        raise IngestInputError(f"stream schema {stream_schema['stream']!r} lacks {', '.join(missing)}")
    problems = []
    columns = [stream_schema["type_column"], stream_schema["time_column"]]
    for name, spec in stream_schema.get("attributes", {}).items():
        if name in BRONZE_RESERVED or name.startswith("_"):
            problems.append(f"attribute {name!r} collides with bronze's columns {BRONZE_RESERVED} (or starts with '_')")
        if name in columns:
            problems.append(f"attribute {name!r} is also the type or time column")
        try:
            check_kind(name, spec.get("type"))
        except TypingError as err:
            problems.append(str(err))
    if problems:
        raise IngestInputError(f"stream schema {stream_schema.get('stream')!r}: " + "; ".join(problems))


def ingest_log_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        pa.field("file", pa.string()),
        pa.field("checksum", pa.string()),
        pa.field("rows_read", pa.int64()),
        pa.field("rows_good", pa.int64()),
        pa.field("rows_bad", pa.int64()),
        pa.field("ingested_at", pa.timestamp("us", tz="UTC")),
        pa.field("bronze_version", pa.int64()),
        pa.field("quarantine_version", pa.int64()),
        pa.field("recovered", pa.bool_()),
        pa.field("status", pa.string()),  # ingested | replaced | refused (NULL in logs before it existed: ingested)
        pa.field("message", pa.string()),  # why a file was refused, what a replacement replaced
    ])

