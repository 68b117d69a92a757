"""The ingest job: a landing folder's new files -> bronze, quarantine and the ingest log
(the rules it follows: the package docstring, ``trendlake.jobs.ingest``).

``ingest`` sorts the landing files out (new, already ingested, changed, refused), reads
the new ones with Spark (``read``), types and validates their rows (``schemas.typing.spark``),
checks that good + bad rows are the rows read and that the good rows pass the stream's
expectation suite, and commits: bronze, quarantine, then the ingest log.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trendlake.jobs.ingest.errors import FileRefused, IngestError, IngestInputError
from trendlake.jobs.ingest.landing import first_line, precheck, scan_file, scan_landing
from trendlake.jobs.ingest.read import ToRead, long_line_rows, prepare, read_raw
from trendlake.jobs.ingest.tables import check_stream_schema, ingest_log_schema
from trendlake.schemas.typing.rules import TypingError, raw_columns
from trendlake.schemas.typing.spark import validate
from trendlake.schemas.typing.sqlexpr import NotWritable

log = logging.getLogger("trendlake.ingest")

ALREADY_INGESTED = "already ingested (same name and SHA-256)"
Refusal = tuple[str, str | None, str]  # (file, checksum, reason)


@dataclass
@dataclass
class IngestReport:
    """What one ingest run did, file by file (returned to callers and the DAG's XCom)."""

    stream: str
    files_ingested: list[str] = field(default_factory=list)
    files_skipped: list[str] = field(default_factory=list)  # every file not read this run
    skip_reasons: dict[str, str] = field(default_factory=dict)  # skipped file -> why
    files_refused: dict[str, str] = field(default_factory=dict)  # refused file -> why (nothing of it written)
    files_replaced: list[str] = field(default_factory=list)  # changed files whose earlier rows were replaced
    files_recovered: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rows_read: int = 0
    rows_good: int = 0
    rows_bad: int = 0
    bronze_version: int | None = None
    quarantine_version: int | None = None
    log_version: int | None = None
    seconds: float = 0.0


@dataclass
@dataclass
class _History:
    """What the ingest log says about earlier runs."""

    current: dict[str, str] = field(default_factory=dict)  # file name -> checksum of its ingested content
    names: dict[str, str] = field(default_factory=dict)  # checksum -> a file name it was ingested under
    refused: set[tuple[str, str | None]] = field(default_factory=set)  # (file, checksum) refusals logged


def _history(lake: Any, log_t: str) -> _History:
    table = lake.read_arrow(log_t)
    history = _History()
    if table is None:
        return history
    for row in sorted(table.to_pylist(), key=lambda r: r["ingested_at"]):
        if (row.get("status") or "ingested") == "refused":
            history.refused.add((row["file"], row["checksum"]))
            continue
        history.current[row["file"]] = row["checksum"]
        history.names.setdefault(row["checksum"], row["file"])
    return history


def changed_file_reason(earlier: str, now: str) -> str:
    return (
        f"content changed since it was ingested (SHA-256 {earlier[:12]}... then, {now[:12]}... now); "
        "nothing of it was written and its earlier rows stay: rename it to ingest it as a new file, "
        "or ingest with --replace-changed to replace its earlier rows"
    )


def ingest(
    lake_root: str | Path,
    stream_schema: dict[str, Any],
    landing_dir: str | Path,
    spark: Any = None,
    *,
    replace_changed: bool = False,
) -> IngestReport:
    """Ingest the landing folder's new files into the stream's bronze/quarantine/log tables.

    ``replace_changed``: a file ingested before under the same name whose
    content changed replaces its earlier rows (else it is refused).
    """
    from trendlake.jobs.lake import Lake, record_stream

    started = time.perf_counter()
    check_stream_schema(stream_schema)
    stream = stream_schema["stream"]
    lake = Lake(lake_root)
    report = IngestReport(stream)
    log_t = lake.ingest_log(stream)

    files, skipped = scan_landing(landing_dir)
    history = _history(lake, log_t)
    todo, refusals = _sort_out(files, history, skipped, stream_schema, replace_changed)
    ingested_at = datetime.now(UTC)
    log_rows = _ingest_files(spark, lake, report, stream_schema, todo, refusals, ingested_at) if todo else []
    log_rows += _refused(report, refusals, history, ingested_at)
    report.files_skipped = sorted(skipped)
    report.skip_reasons = {name: skipped[name] for name in report.files_skipped}
    for name in report.files_skipped:
        if skipped[name] != ALREADY_INGESTED:
            log.info("ingest %s: skipped %s: %s", stream, name, skipped[name])
    if log_rows:
        import pyarrow as pa

        report.log_version = lake.write(
            log_t, pa.Table.from_pylist(log_rows, schema=ingest_log_schema()), add_columns=True
        )
    record_stream(lake.root, stream_schema)
    report.seconds = time.perf_counter() - started
    log.info(
        "ingest %s: %d files, %d rows read, %d good, %d quarantined "
        "(%d skipped, %d refused, %d replaced, %d recovered) in %.1fs",
        stream, len(report.files_ingested), report.rows_read, report.rows_good, report.rows_bad,
        len(report.files_skipped), len(report.files_refused), len(report.files_replaced),
        len(report.files_recovered), report.seconds,
    )
    return report


def _sort_out(
    files: list[Path], history: _History, skipped: dict[str, str], stream_schema: dict[str, Any],
    replace_changed: bool,
) -> tuple[list[ToRead], list[Refusal]]:
    """The landing files to read this run and the refused ones; the ones ingested before go
    to ``skipped`` with why."""
    seen = dict(history.names)
    todo: list[ToRead] = []
    refusals: list[Refusal] = []
    for path in files:
        try:
            scanned = scan_file(path)
        except FileRefused as err:
            refusals.append((path.name, None, str(err)))
            continue
        try:
            precheck(path, scanned, stream_schema)
        except FileRefused as err:
            refusals.append((path.name, scanned.checksum, str(err)))
            continue
        checksum, earlier = scanned.checksum, history.current.get(path.name)
        if earlier == checksum:
            skipped[path.name] = ALREADY_INGESTED
        elif earlier is not None and not replace_changed:
            refusals.append((path.name, checksum, changed_file_reason(earlier, checksum)))
        elif earlier is not None:
            todo.append(ToRead(path, scanned, earlier))
        elif checksum in seen:
            skipped[path.name] = f"same content (SHA-256) as {seen[checksum]}, already ingested"
        else:
            todo.append(ToRead(path, scanned, None))
        seen.setdefault(checksum, path.name)
    return todo, refusals


def _refused(
    report: IngestReport, refusals: list[Refusal], history: _History, ingested_at: datetime
) -> list[dict[str, Any]]:
    """The refusals into ``report``; the ingest log rows of those not logged before."""
    rows = []
    for name, checksum, reason in refusals:
        report.files_refused[name] = reason
        log.warning("ingest %s: refused %s: %s", report.stream, name, reason)
        if (name, checksum) not in history.refused:
            rows.append({
                "file": name, "checksum": checksum, "rows_read": 0, "rows_good": 0, "rows_bad": 0,
                "ingested_at": ingested_at, "bronze_version": None, "quarantine_version": None,
                "recovered": False, "status": "refused", "message": reason,
            })
    return rows


def _ingest_files(
    spark: Any, lake: Any, report: IngestReport, stream_schema: dict[str, Any],
    todo: list[ToRead], refusals: list[Refusal], ingested_at: datetime,
) -> list[dict[str, Any]]:
    """Read, validate and commit ``todo``; fills ``report``; the ingest log rows of the files read."""
    from trendlake.jobs.lake import STAGING
    from trendlake.jobs.spark import get_spark

    spark = spark or get_spark()
    # The validation projection has a few rules per attribute; with wide stream
    # schemas its generated Java exceeds the JVM's 64 KB method limit and Spark
    # logs a compile failure before falling back. Interpret it from the start.
    codegen = spark.conf.get("spark.sql.codegen.wholeStage", "true")
    spark.conf.set("spark.sql.codegen.wholeStage", "false")
    work = lake.root / STAGING / f"{int(time.time())}-ingest-{uuid.uuid4().hex}"
    try:
        return _ingest_prepared(spark, lake, report, stream_schema, todo, refusals, ingested_at, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.conf.set("spark.sql.codegen.wholeStage", codegen)


@dataclass
class _Batch:
    """The files of a run Spark read, and what the lake already holds of them."""

    ready: list[ToRead]
    rows_read: dict[str, int]  # checksum -> rows read
    in_bronze: set[str] = field(default_factory=set)  # checksums committed by an earlier run, not logged
    in_quarantine: set[str] = field(default_factory=set)
    per_file: dict[str, tuple[int, int]] = field(default_factory=dict)  # checksum -> (good, bad) rows

    @property
    def replaced(self) -> list[str]:
        return [item.name for item in self.ready if item.replaces is not None]


def _ingest_prepared(
    spark: Any, lake: Any, report: IngestReport, stream_schema: dict[str, Any],
    todo: list[ToRead], refusals: list[Refusal], ingested_at: datetime, work: Path,
) -> list[dict[str, Any]]:
    stream = stream_schema["stream"]
    bronze_t, quarantine_t = lake.bronze(stream), lake.quarantine(stream)
    lake.cleanup_staging()
    rows, batch = _read_all(spark, report, stream_schema, todo, refusals, work, _next_seq(lake, spark, bronze_t))
    if not batch.ready:
        return []
    # Files an earlier run committed to bronze / quarantine but not to the log
    # (a replaced file is always written again in full: replacing is idempotent).
    fresh = [item.checksum for item in batch.ready if item.replaces is None]
    batch.in_bronze = _checksums_in(lake, spark, bronze_t, fresh)
    batch.in_quarantine = _checksums_in(lake, spark, quarantine_t, fresh)
    checked = _validated(rows, stream_schema).persist()
    try:
        batch.per_file = _counted(checked, batch)
        _commit(lake, stream_schema, checked, batch, ingested_at)
    finally:
        checked.unpersist()
    report.bronze_version = lake.version(bronze_t)
    report.quarantine_version = lake.version(quarantine_t)
    return _ingested(report, batch, ingested_at)


def _read_all(
    spark: Any, report: IngestReport, stream_schema: dict[str, Any], todo: list[ToRead],
    refusals: list[Refusal], work: Path, base: int,
) -> tuple[Any, _Batch]:
    """The raw rows of every file Spark can read, numbered ``_seq`` from ``base`` in file and
    line order (a file Spark cannot read goes to ``refusals``)."""
    from pyspark.sql import functions as F

    spark_errors = _spark_errors()
    parts, rows_read, line_offset, ready = [], {}, 0, []
    for item in todo:
        try:
            item.read_path, note = prepare(item, work)
            raw, n = read_raw(spark, item.read_path, stream_schema, item.scanned)
        except FileRefused as err:
            refusals.append((item.name, item.checksum, str(err)))
            continue
        except IngestError as err:
            refusals.append((item.name, item.checksum, str(err).replace(f"{item.read_path}: ", "")))
            continue
        except spark_errors as err:
            refusals.append((item.name, item.checksum, f"Spark cannot read it: {first_line(err)}"))
            continue
        if note:
            report.warnings.append(note)
        if item.scanned.long_lines and item.format != "parquet":
            raw = raw.unionByName(long_line_rows(spark, item, raw, stream_schema))
            n += len(item.scanned.long_lines)
        rows_read[item.checksum] = n
        parts.append(raw.select(
            "*",
            F.lit(item.name).alias("source_file"),
            F.lit(item.checksum).alias("source_checksum"),
            (F.lit(base + line_offset) + F.col("_line") - 1).alias("_seq"),
            F.lit(len(ready)).alias("_file_index"),
        ))
        ready.append(item)
        line_offset += item.scanned.newlines + 1 if item.format != "parquet" else n
    rows = parts[0] if parts else None
    for p in parts[1:]:
        rows = rows.unionByName(p)
    return rows, _Batch(ready, rows_read)


def _validated(rows: Any, stream_schema: dict[str, Any]) -> Any:
    """``schemas.typing.spark.validate``, a schema it cannot build rules for a bad stream schema."""
    try:
        return validate(rows, stream_schema)
    except (TypingError, NotWritable) as err:  # an unknown time unit; a name Spark SQL text cannot hold
        raise IngestInputError(f"stream schema: {err}") from None


def _counted(checked: Any, batch: _Batch) -> dict[str, tuple[int, int]]:
    """(good, bad) rows per file; refuses to commit where they are not the rows read."""
    from pyspark.sql import functions as F

    counts = {(r["source_checksum"], r["bad"]): r["count"]
              for r in checked.groupBy("source_checksum", (F.col("_reason").isNotNull()).alias("bad")).count().collect()}
    per_file = {}
    for item in batch.ready:
        good, bad = counts.get((item.checksum, False), 0), counts.get((item.checksum, True), 0)
        if good + bad != batch.rows_read[item.checksum]:
            raise IngestError(
                f"{item.name}: {batch.rows_read[item.checksum]} rows read but {good} good + {bad} quarantined; "
                "nothing committed"
            )
        per_file[item.checksum] = (good, bad)
    return per_file


def _commit(lake: Any, stream_schema: dict[str, Any], checked: Any, batch: _Batch, ingested_at: datetime) -> None:
    """The good rows to bronze once they pass the stream's suite, the bad ones to quarantine
    (the rows of changed files replacing their earlier rows, one transaction per table)."""
    from pyspark.sql import functions as F
    from trendlake.jobs.lake import ReplaceWhere
    from trendlake.jobs.quality import suite_for_stream, validate_bronze

    stream = stream_schema["stream"]
    good_rows = checked.where(F.col("_reason").isNull() & ~F.col("source_checksum").isin(list(batch.in_bronze)))
    bronze = good_rows.select(
        F.col(f"`{stream_schema['type_column']}`").alias("type"),
        F.col("_ts").alias("ts"),
        F.col("_seq").alias("seq"),
        F.to_date(F.col("_ts")).alias("event_date"),
        *[F.col(f"_v_{a}").alias(a) for a in stream_schema["attributes"]],
        "source_file",
        "source_checksum",
    )
    bronze_rows = sum(batch.per_file[item.checksum][0] for item in batch.ready if item.checksum not in batch.in_bronze)
    validate_bronze(bronze, suite_for_stream(stream_schema), rows=bronze_rows)
    bad_rows = checked.where(F.col("_reason").isNotNull() & ~F.col("source_checksum").isin(list(batch.in_quarantine)))
    quarantine = bad_rows.select(
        F.col("_reason").alias("reason"), "source_file", F.col("_line").alias("source_line"),
        "source_checksum", F.lit(ingested_at).alias("ingested_at"),
        F.col("_raw").alias("raw"),
        F.to_json(F.struct(*[F.col(f"`{c}`") for c in raw_columns(stream_schema)])).alias("fields"),
    )
    replaced = batch.replaced
    for table, frame, partition_by in ((lake.bronze(stream), bronze, ["event_date"]),
                                       (lake.quarantine(stream), quarantine, None)):
        if not replaced:
            lake.write(table, frame, partition_by=partition_by)
            continue
        is_replaced = F.col("source_file").isin(replaced)
        lake.write(table, frame.where(~is_replaced), partition_by=partition_by)
        # the changed files' earlier rows out, their new rows in: one transaction
        lake.write(table, frame.where(is_replaced).toArrow(), ReplaceWhere(_sql_in("source_file", replaced)),
                   partition_by=partition_by)


def _ingested(report: IngestReport, batch: _Batch, ingested_at: datetime) -> list[dict[str, Any]]:
    """The committed files into ``report``; their ingest log rows."""
    log_rows = []
    for item in batch.ready:
        good, bad = batch.per_file[item.checksum]
        rows_read = batch.rows_read[item.checksum]
        recovered = item.checksum in batch.in_bronze or item.checksum in batch.in_quarantine
        log_rows.append({
            "file": item.name, "checksum": item.checksum, "rows_read": rows_read,
            "rows_good": good, "rows_bad": bad, "ingested_at": ingested_at,
            "bronze_version": report.bronze_version, "quarantine_version": report.quarantine_version,
            "recovered": recovered,
            "status": "replaced" if item.replaces else "ingested",
            "message": (f"replaced the rows of its earlier content (SHA-256 {item.replaces[:12]}...)"
                        if item.replaces else None),
        })
        report.files_ingested.append(item.name)
        if item.replaces:
            report.files_replaced.append(item.name)
        if recovered:
            report.files_recovered.append(item.name)
        report.rows_read += rows_read
        report.rows_good += good
        report.rows_bad += bad
    return log_rows


def _spark_errors() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JJavaError)


def _sql_in(column: str, values: list[str]) -> str:
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"{column} IN ({quoted})"


def _checksums_in(lake: Any, spark: Any, table: str, checksums: list[str]) -> set[str]:
    from pyspark.sql import functions as F

    df = lake.read_spark(spark, table)
    if df is None:
        return set()
    found = df.where(F.col("source_checksum").isin(checksums)).select("source_checksum").distinct().collect()
    return {r[0] for r in found}


def _next_seq(lake: Any, spark: Any, table: str) -> int:
    """One past the largest ``seq`` in bronze: from the log's file statistics (no data read),
    or, for files written without them (by an older trendlake), a scan of the column."""
    from pyspark.sql import functions as F

    known, top = lake.max_from_log(table, "seq")
    if known:
        return 0 if top is None else int(top) + 1
    df = lake.read_spark(spark, table)
    if df is None:
        return 0
    top = df.agg(F.max("seq")).collect()[0][0]
    return 0 if top is None else int(top) + 1


def summary(report: IngestReport) -> str:
    """The lines ``trendlake ingest`` prints: skipped (other than already ingested), refused, warnings, totals."""
    lines = [f"skipped {name}: {why}" for name, why in report.skip_reasons.items() if why != ALREADY_INGESTED]
    lines += [f"refused {name}: {why}" for name, why in report.files_refused.items()]
    lines += [f"warning: {w}" for w in report.warnings]
    replaced = f", {len(report.files_replaced)} replaced" if report.files_replaced else ""
    refused = f", {len(report.files_refused)} refused" if report.files_refused else ""
    lines.append(
        f"{report.stream}: {len(report.files_ingested)} files ingested{replaced}, {len(report.files_skipped)} skipped"
        f"{refused}; {report.rows_read} rows read = {report.rows_good} to bronze + {report.rows_bad} quarantined "
        f"({report.seconds:.1f}s)"
    )
    return "\n".join(lines)
