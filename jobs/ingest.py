"""The ingest job: raw event files in a landing folder -> bronze, quarantine and the ingest log.

Each new file (CSV with a header, JSON lines, Parquet; sorted by name) is
read by Spark (CSV as RFC 4180: a quoted field may span lines), every row
numbered by its 1-based line in the file (record number for CSV, row index for
Parquet), typed and validated against the stream schema in Spark by the typing
rules of ``trendlake.schemas.types`` (the first failing rule is the row's
``reason``), and split: good rows -> ``bronze/<stream>``,
bad rows -> ``quarantine/<stream>``. Good + bad must equal the rows read, and
the good rows must pass the stream's Great Expectations suite, before anything
is committed. A file is identified by the SHA-256 of its bytes: a checksum in
``ingest_log/<stream>`` is never ingested again (a renamed copy neither).

Commit order per run: bronze (one transaction), quarantine (one), then the
ingest log (one). Bronze and quarantine rows carry ``source_checksum``; a run
that finds a file's checksum missing from the log but present in bronze (or
quarantine) knows an earlier run died between its commits and does not append
those rows again, it only writes what is missing (``docs/lake.md``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import logging
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import JobError

log = logging.getLogger("trendlake.ingest")

FORMATS = {".csv": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".parquet": "parquet"}
SPARK_TYPES = {"long": "bigint", "double": "double", "string": "string", "boolean": "boolean"}


class IngestError(JobError):
    """Ingest refused to commit (rows unaccounted for, unreadable file, bad schema)."""


@dataclass
class IngestReport:
    stream: str
    files_ingested: list[str] = field(default_factory=list)
    files_skipped: list[str] = field(default_factory=list)
    files_recovered: list[str] = field(default_factory=list)
    rows_read: int = 0
    rows_good: int = 0
    rows_bad: int = 0
    bronze_version: int | None = None
    quarantine_version: int | None = None
    log_version: int | None = None
    seconds: float = 0.0


# ---------------------------------------------------------------------- table schemas


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
    """Refuse a stream schema whose attribute names collide with bronze's own columns."""
    problems = []
    columns = [stream_schema["type_column"], stream_schema["time_column"]]
    for name, spec in stream_schema.get("attributes", {}).items():
        if name in BRONZE_RESERVED or name.startswith("_"):
            problems.append(f"attribute {name!r} collides with bronze's columns {BRONZE_RESERVED} (or starts with '_')")
        if name in columns:
            problems.append(f"attribute {name!r} is also the type or time column")
        if spec.get("type") not in SPARK_TYPES:
            problems.append(f"attribute {name!r}: unknown type {spec.get('type')!r} (long, double, string, boolean)")
    if problems:
        raise IngestError(f"stream schema {stream_schema.get('stream')!r}: " + "; ".join(problems))


def quarantine_columns(stream_schema: dict[str, Any]) -> list[str]:
    """Raw fields kept (as text, in the JSON column ``fields``) in ``quarantine/<stream>``: type, time, attributes."""
    return [stream_schema["type_column"], stream_schema["time_column"], *stream_schema["attributes"]]


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
    ])


# ---------------------------------------------------------------------- files


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def landing_files(landing_dir: str | Path) -> list[Path]:
    """Event files of the landing folder in name order (hidden and ``_`` files are skipped)."""
    folder = Path(landing_dir)
    if not folder.is_dir():
        raise IngestError(f"landing folder {folder} does not exist")
    return sorted(
        (p for p in folder.iterdir()
         if p.is_file() and p.suffix.lower() in FORMATS and not p.name.startswith((".", "_"))),
        key=lambda p: p.name,
    )


def _numbered(df: Any) -> tuple[Any, dict[int, int]]:
    """``df`` with ``_line`` (1-based position in the file), and the row count of each partition.

    One file read alone is scanned in file order, one split per partition;
    ``monotonically_increasing_id`` is ``partition << 33 | index`` so the
    position is the rows of earlier partitions plus the index.
    """
    from pyspark.sql import functions as F

    df = df.withColumn("_pid", F.spark_partition_id()).withColumn("_mid", F.monotonically_increasing_id())
    counts = {r["_pid"]: r["count"] for r in df.groupBy("_pid").count().collect()}
    offsets, total = {}, 0
    for pid in sorted(counts):
        offsets[pid] = total
        total += counts[pid]
    offset = F.lit(0).cast("long")
    for pid, off in offsets.items():
        offset = F.when(F.col("_pid") == pid, F.lit(off)).otherwise(offset)
    local = F.col("_mid") - F.shiftleft(F.col("_pid").cast("long"), 33)
    return df.withColumn("_line", offset + local + 1).drop("_pid", "_mid"), counts


def read_raw(spark: Any, path: Path, stream_schema: dict[str, Any]) -> tuple[Any, int]:
    """One raw file as text columns (``quarantine_columns``) + ``_line`` + ``_raw``; rows read."""
    from pyspark.sql import functions as F

    columns = quarantine_columns(stream_schema)
    fmt = FORMATS[path.suffix.lower()]
    if fmt == "parquet":
        nanos = _nanosecond_columns(path)
        if nanos:
            # Spark refuses TIMESTAMP(NANOS) (pandas' default) unless read as epoch nanoseconds
            spark.conf.set("spark.sql.legacy.parquet.nanosAsLong", "true")
        df, counts = _numbered(spark.read.parquet(str(path)))
        rows = sum(counts.values())
        present = set(df.columns)

        def text(c: str) -> Any:
            if c not in present:
                return F.lit(None).cast("string")
            if c in nanos:  # nanoseconds -> the instant, cut to microseconds (as eval does)
                floor_us = F.expr(f"(`{c}` - pmod(`{c}`, 1000)) div 1000")  # exact, in integers
                return F.timestamp_micros(floor_us).cast("string")
            return F.col(f"`{c}`").cast("string")

        out = df.select(
            *[text(c).alias(c) for c in columns],
            F.col("_line"),
            F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns if c != "_line"])).alias("_raw"),
            F.lit(None).cast("string").alias("_malformed"),
        )
        return out, rows
    if fmt == "csv":
        # RFC 4180: doubled quotes escape a quote, and a quoted field may hold line breaks
        # (``multiLine``), so one record can span lines. ``_line`` is the record's number
        # (the header is record 1): the physical line unless an earlier field held a line break.
        header = _csv_header(path)
        ddl = ", ".join(f"c{i} string" for i in range(len(header)))
        records, _ = _numbered(
            spark.read.options(multiLine=True, header=False, escape='"', quote='"', mode="PERMISSIVE")
            .schema(ddl).csv(str(path))
        )
        data = records.where(F.col("_line") > 1)
        index = {name: i for i, name in reversed(list(enumerate(header)))}
        cols = [(F.col(f"c{index[c]}") if c in index else F.lit(None).cast("string")).alias(c) for c in columns]
        raw_text = F.to_csv(F.struct(*[F.col(f"c{i}") for i in range(len(header))]), {"escape": '"', "quote": '"'})
        out = data.select(*cols, F.col("_line"), raw_text.alias("_raw"), F.lit(None).cast("string").alias("_malformed"))
        return out, data.count()
    text, _ = _numbered(spark.read.text(str(path)))
    blank = F.trim(F.col("value")) == ""
    data = text.where(~blank)
    parsed = F.from_json(F.col("value"), "map<string,string>")
    cols = [parsed[c].alias(c) for c in columns]
    malformed = F.when(parsed.isNull(), F.lit("malformed JSON line (not a JSON object)"))
    out = data.select(*cols, F.col("_line"), F.col("value").alias("_raw"), malformed.alias("_malformed"))
    rows = data.count()
    return out, rows


def _nanosecond_columns(path: Path) -> set[str]:
    """Names of the Parquet file's timestamp columns in nanoseconds (read from its footer)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError):
        return set()  # Spark's read reports the unreadable file
    return {f.name for f in schema if pa.types.is_timestamp(f.type) and f.type.unit == "ns"}


def _csv_header(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), [])
    except (UnicodeDecodeError, csv.Error) as err:
        raise IngestError(f"{path}: unreadable CSV header ({err})") from None
    if not header:
        raise IngestError(f"{path}: empty CSV file (a header line is required)")
    return [h.strip() for h in header]


# ---------------------------------------------------------------------- validation


def _fmt(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def validate(raw: Any, stream_schema: dict[str, Any]) -> Any:
    """Raw text rows -> typed columns ``_v_<attr>``, ``_ts`` and ``_reason`` (None for a good row, else the first failing rule)."""
    from pyspark.sql import functions as F

    type_col, time_col = stream_schema["type_column"], stream_schema["time_column"]
    # empty text is a missing value for every type (trendlake.schemas.types)
    raw = raw.select(*[
        F.when(F.col(f"`{c}`") != F.lit(""), F.col(f"`{c}`")).alias(c) if c in quarantine_columns(stream_schema)
        else F.col(f"`{c}`")
        for c in raw.columns
    ])
    etype = F.col(f"`{type_col}`")
    raw_ts = F.col(f"`{time_col}`")

    def quoted(col: Any) -> Any:
        return F.concat(F.lit("'"), col, F.lit("'"))

    ts, ts_problem = spark_time(raw_ts, time_col, stream_schema.get("time_unit"))
    rules: list[Any] = [
        F.col("_malformed"),
        F.when(etype.isNull() | (F.trim(etype) == ""), F.lit("missing event type")),
        F.when(~etype.isin(list(stream_schema["event_types"])), F.concat(F.lit("unknown event type "), quoted(etype))),
        F.when(raw_ts.isNull() | (F.trim(raw_ts) == ""), F.lit("missing timestamp")),
        F.when(ts.isNull(), F.coalesce(ts_problem, F.concat(F.lit("unparseable timestamp "), quoted(raw_ts)))),
    ]
    typed: dict[str, Any] = {}
    for name, spec in stream_schema["attributes"].items():
        kind = spec["type"]
        given = F.col(f"`{name}`")
        carries = F.lit(True) if spec.get("types", "*") == "*" else etype.isin(list(spec["types"]))
        value = _cast(name, kind)
        typed[name] = F.when(carries, value)
        if spec.get("required"):
            rules.append(F.when(carries & given.isNull(), F.lit(f"missing required attribute '{name}'")))
        rules.append(
            F.when(carries & given.isNotNull() & value.isNull(),
                   F.concat(F.lit(f"attribute '{name}' is not a {kind}: "), quoted(given)))
        )
        shown = value.cast("string") if kind != "string" else quoted(value)
        if "min" in spec:
            rules.append(F.when(carries & (value < F.lit(spec["min"])),
                                F.concat(F.lit(f"attribute '{name}' = "), shown, F.lit(f" below min {_fmt(spec['min'])}"))))
        if "max" in spec:
            rules.append(F.when(carries & (value > F.lit(spec["max"])),
                                F.concat(F.lit(f"attribute '{name}' = "), shown, F.lit(f" above max {_fmt(spec['max'])}"))))
        if "values" in spec:
            allowed = list(spec["values"])
            rules.append(F.when(carries & value.isNotNull() & ~value.isin(allowed),
                                F.concat(F.lit(f"attribute '{name}' = "), shown, F.lit(f" not in allowed values {allowed}"))))
    return raw.select(
        "*",
        F.coalesce(*rules).alias("_reason"),
        ts.alias("_ts"),
        *[v.alias(f"_v_{n}") for n, v in typed.items()],
    )


def _trimmed(col: Any) -> Any:
    """Text without ASCII blanks at either end (``\\s`` in Java is the same set as Arrow's)."""
    from pyspark.sql import functions as F

    return F.regexp_replace(col, r"^\s+|\s+$", "")


def _cast(name: str, kind: str) -> Any:
    """A raw text attribute as ``kind`` by ``trendlake.schemas.types``' rules; NULL where it does not fit."""
    from pyspark.sql import functions as F
    from trendlake.schemas import types

    given = F.col(f"`{name}`")
    text = _trimmed(given)
    if kind == "string":
        return given
    if kind == "long":
        integer = text.rlike(types.INTEGER)
        as_double = F.when(text.rlike(types.DECIMAL), text.try_cast("double"))
        integral = (as_double == F.floor(as_double)) & (F.abs(as_double) < F.lit(types.LONG_LIMIT))
        return F.when(integer, text.try_cast("bigint")).otherwise(
            F.when(integral, as_double.cast("bigint"))
        )
    if kind == "double":
        as_double = F.when(text.rlike(types.DECIMAL), text.try_cast("double"))
        return F.when(~F.isnan(as_double) & (F.abs(as_double) != F.lit(float("inf"))), as_double)
    if kind == "boolean":
        lower = F.lower(text)
        return F.when(lower.isin(list(types.TRUE_WORDS)), F.lit(True)).when(
            lower.isin(list(types.FALSE_WORDS)), F.lit(False)
        )
    raise IngestError(f"attribute {name!r}: unknown type {kind!r} (long, double, string, boolean)")


def spark_time(raw: Any, name: str, unit: str | None) -> tuple[Any, Any]:
    """(timestamp, reason) of a raw text time column by ``trendlake.schemas.types``' rules:
    the timestamp is NULL where the value is missing or does not fit, and the reason says
    why a present value is out of range (NULL for unparseable text and good values)."""
    from pyspark.sql import functions as F
    from trendlake.schemas import types

    try:
        unit = types.check_time_unit(unit)
    except types.TypingError as err:
        raise IngestError(f"stream schema: {err}") from None
    factor = types.TIME_UNITS[unit]
    t = _trimmed(raw)
    # epoch numbers in the declared unit
    number = F.when(t.rlike(types.DECIMAL), t.try_cast("double"))
    finite = number.isNotNull() & ~F.isnan(number) & (F.abs(number) != F.lit(float("inf")))
    scaled = number * F.lit(float(factor))
    inside = finite & (scaled >= F.lit(float(types.MIN_US))) & (scaled < F.lit(float(types.MAX_US)))
    exact = t.rlike(types.INTEGER) & (F.abs(number) < F.lit(float(2**62)))
    from_number = F.when(inside, F.when(exact, t.try_cast("bigint") * F.lit(factor)).otherwise(
        F.round(scaled).cast("bigint")))
    year = F.floor(scaled / F.lit(1_000_000.0) / F.lit(types.SECONDS_PER_YEAR) + F.lit(1970.0)).cast("string")
    hint = F.lit(f", outside {types.MIN_YEAR}..{types.MAX_YEAR}")
    for other, f in reversed([*types.TIME_UNITS.items(), ("nanoseconds", 0.001)]):
        if other == unit:
            continue
        text = ("looks like epoch nanoseconds; convert to microseconds" if other == "nanoseconds"
                else f'looks like epoch {other}; declare "time_unit": "{other}"')
        plausible = (number * F.lit(float(f)) >= F.lit(float(types.MIN_US))) & (
            number * F.lit(float(f)) < F.lit(float(types.MAX_US)))
        hint = F.when(plausible, F.lit(f": {text}")).otherwise(hint)
    number_problem = F.when(finite & ~inside, F.concat(
        F.lit(f"{name} "), t, F.lit(" is year "), year, F.lit(f" as {unit}"), hint))
    # ISO-8601, rebuilt in one canonical form Spark's cast reads
    iso = ~t.rlike(types.DECIMAL) & t.rlike(types.ISO_TIME)

    def group(i: int) -> Any:
        return F.regexp_extract(t, types.ISO_TIME, i)

    seconds = F.when(group(6) == "", F.lit("00")).otherwise(group(6))
    fraction = F.substring(F.concat(group(7), F.lit("000000")), 1, 6)
    zone = F.when((group(8) == "") | (F.upper(group(8)) == "Z"), F.lit("+00:00")).otherwise(group(8))
    hour = F.when(group(4) == "", F.lit("00")).otherwise(group(4))
    minute = F.when(group(5) == "", F.lit("00")).otherwise(group(5))
    canonical = F.concat(group(1), F.lit("-"), group(2), F.lit("-"), group(3), F.lit("T"), hour, F.lit(":"),
                         minute, F.lit(":"), seconds, F.lit("."), fraction, zone)
    parsed = F.when(iso, canonical.try_cast("timestamp"))
    micros = F.unix_micros(parsed)
    iso_inside = (micros >= F.lit(types.MIN_US)) & (micros < F.lit(types.MAX_US))
    iso_problem = F.when(parsed.isNotNull() & ~iso_inside, F.concat(
        F.lit(f"{name} '"), t, F.lit("' is year "), F.year(parsed).cast("string"),
        F.lit(f", outside {types.MIN_YEAR}..{types.MAX_YEAR}")))
    us = F.coalesce(from_number, F.when(iso_inside, micros))
    return F.timestamp_micros(us), F.coalesce(number_problem, iso_problem)


# ---------------------------------------------------------------------- the job


def ingest(
    lake_root: str | Path,
    stream_schema: dict[str, Any],
    landing_dir: str | Path,
    spark: Any = None,
) -> IngestReport:
    """Ingest the landing folder's new files into the stream's bronze/quarantine/log tables."""
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.spark import get_spark

    started = time.perf_counter()
    check_stream_schema(stream_schema)
    stream = stream_schema["stream"]
    lake = Lake(lake_root)
    report = IngestReport(stream)
    log_t = lake.ingest_log(stream)

    logged = lake.read_arrow(log_t, columns=["checksum"])
    seen = set(logged.column("checksum").to_pylist()) if logged is not None else set()
    todo: list[tuple[Path, str]] = []
    for path in landing_files(landing_dir):
        checksum = sha256_of(path)
        if checksum in seen:
            report.files_skipped.append(path.name)
            continue
        seen.add(checksum)
        todo.append((path, checksum))
    if not todo:
        log.info("ingest %s: no new files (%d skipped)", stream, len(report.files_skipped))
        report.seconds = time.perf_counter() - started
        return report

    spark = spark or get_spark()
    # The validation projection has a few rules per attribute; with wide stream
    # schemas its generated Java exceeds the JVM's 64 KB method limit and Spark
    # logs a compile failure before falling back. Interpret it from the start.
    codegen = spark.conf.get("spark.sql.codegen.wholeStage", "true")
    spark.conf.set("spark.sql.codegen.wholeStage", "false")
    try:
        return _ingest_files(spark, lake, report, stream_schema, todo, started)
    finally:
        spark.conf.set("spark.sql.codegen.wholeStage", codegen)


def _ingest_files(
    spark: Any, lake: Any, report: IngestReport, stream_schema: dict[str, Any],
    todo: list[tuple[Path, str]], started: float,
) -> IngestReport:
    import pyarrow as pa
    from pyspark.sql import functions as F
    from trendlake.jobs.quality import suite_for_stream, validate_bronze

    stream = stream_schema["stream"]
    bronze_t, quarantine_t, log_t = lake.bronze(stream), lake.quarantine(stream), lake.ingest_log(stream)
    lake.cleanup_staging()
    # Files an earlier run committed to bronze / quarantine but not to the log.
    checksums = [c for _, c in todo]
    in_bronze = _checksums_in(lake, spark, bronze_t, checksums)
    in_quarantine = _checksums_in(lake, spark, quarantine_t, checksums)

    base = _next_seq(lake, spark, bronze_t)
    parts, rows_read, line_offset = [], {}, 0
    for index, (path, checksum) in enumerate(todo):
        raw, n = read_raw(spark, path, stream_schema)
        rows_read[checksum] = n
        parts.append(raw.select(
            "*",
            F.lit(path.name).alias("source_file"),
            F.lit(checksum).alias("source_checksum"),
            (F.lit(base + line_offset) + F.col("_line") - 1).alias("_seq"),
            F.lit(index).alias("_file_index"),
        ))
        line_offset += _line_count(path) if FORMATS[path.suffix.lower()] != "parquet" else n
    rows = parts[0]
    for p in parts[1:]:
        rows = rows.unionByName(p)
    checked = validate(rows, stream_schema).persist()
    try:
        counts = {(r["source_checksum"], r["bad"]): r["count"]
                  for r in checked.groupBy("source_checksum", (F.col("_reason").isNotNull()).alias("bad")).count().collect()}
        per_file = {}
        for path, checksum in todo:
            good, bad = counts.get((checksum, False), 0), counts.get((checksum, True), 0)
            if good + bad != rows_read[checksum]:
                raise IngestError(
                    f"{path.name}: {rows_read[checksum]} rows read but {good} good + {bad} quarantined; nothing committed"
                )
            per_file[checksum] = (good, bad)

        attrs = list(stream_schema["attributes"])
        good_rows = checked.where(F.col("_reason").isNull() & ~F.col("source_checksum").isin(list(in_bronze)))
        bronze = good_rows.select(
            F.col(f"`{stream_schema['type_column']}`").alias("type"),
            F.col("_ts").alias("ts"),
            F.col("_seq").alias("seq"),
            F.to_date(F.col("_ts")).alias("event_date"),
            *[F.col(f"_v_{a}").alias(a) for a in attrs],
            "source_file",
            "source_checksum",
        )
        validate_bronze(bronze, suite_for_stream(stream_schema))
        ingested_at = datetime.now(UTC)
        bad_rows = checked.where(F.col("_reason").isNotNull() & ~F.col("source_checksum").isin(list(in_quarantine)))
        quarantine = bad_rows.select(
            F.col("_reason").alias("reason"), "source_file", F.col("_line").alias("source_line"),
            "source_checksum", F.lit(ingested_at).alias("ingested_at"),
            F.col("_raw").alias("raw"),
            F.to_json(F.struct(*[F.col(f"`{c}`") for c in quarantine_columns(stream_schema)])).alias("fields"),
        )
        lake.write(bronze_t, bronze, partition_by=["event_date"])
        lake.write(quarantine_t, quarantine)
    finally:
        checked.unpersist()
    report.bronze_version = lake.version(bronze_t)
    report.quarantine_version = lake.version(quarantine_t)

    log_rows = []
    for path, checksum in todo:
        good, bad = per_file[checksum]
        recovered = checksum in in_bronze or checksum in in_quarantine
        log_rows.append({
            "file": path.name, "checksum": checksum, "rows_read": rows_read[checksum],
            "rows_good": good, "rows_bad": bad, "ingested_at": ingested_at,
            "bronze_version": report.bronze_version, "quarantine_version": report.quarantine_version,
            "recovered": recovered,
        })
        report.files_ingested.append(path.name)
        if recovered:
            report.files_recovered.append(path.name)
        report.rows_read += rows_read[checksum]
        report.rows_good += good
        report.rows_bad += bad
    report.log_version = lake.write_arrow(log_t, pa.Table.from_pylist(log_rows, schema=ingest_log_schema()))
    report.seconds = time.perf_counter() - started
    log.info(
        "ingest %s: %d files, %d rows read, %d good, %d quarantined (%d skipped, %d recovered) in %.1fs",
        stream, len(todo), report.rows_read, report.rows_good, report.rows_bad,
        len(report.files_skipped), len(report.files_recovered), report.seconds,
    )
    return report


def _checksums_in(lake: Any, spark: Any, table: str, checksums: list[str]) -> set[str]:
    from pyspark.sql import functions as F

    df = lake.read_spark(spark, table)
    if df is None:
        return set()
    found = df.where(F.col("source_checksum").isin(checksums)).select("source_checksum").distinct().collect()
    return {r[0] for r in found}


def _next_seq(lake: Any, spark: Any, table: str) -> int:
    from pyspark.sql import functions as F

    df = lake.read_spark(spark, table)
    if df is None:
        return 0
    top = df.agg(F.max("seq")).collect()[0][0]
    return 0 if top is None else int(top) + 1


def _line_count(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) + 1


# ---------------------------------------------------------------------- CLI


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "ingest",
        help="ingest new raw event files from a landing folder into bronze (Delta)",
        description=(
            "Validate every row of the landing folder's new CSV / JSON-lines / Parquet files "
            "against the stream schema and its expectation suite; good rows go to "
            "bronze/<stream>, bad ones to quarantine/<stream> with a reason. Files already "
            "ingested (same SHA-256) are skipped."
        ),
    )
    p.add_argument("--lake", required=True, type=Path, help="lake root folder")
    p.add_argument("--stream", required=True, help="stream schema: bundled name or JSON path")
    p.add_argument("--landing", required=True, type=Path, help="folder of raw event files")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from trendlake.jobs.quality import SuiteFailed
    from trendlake.schemas import load_stream_schema

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        report = ingest(args.lake, load_stream_schema(args.stream), args.landing)
    except (IngestError, SuiteFailed, FileNotFoundError) as err:
        print(f"trendlake: error: {err}", file=sys.stderr)
        return 2
    print(
        f"{report.stream}: {len(report.files_ingested)} files ingested, {len(report.files_skipped)} skipped; "
        f"{report.rows_read} rows read = {report.rows_good} to bronze + {report.rows_bad} quarantined "
        f"({report.seconds:.1f}s)"
    )
    return 0
