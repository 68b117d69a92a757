"""The files Spark reads for ingest, read as raw text rows.

``prepare`` gives each landing file the path Spark reads: the file itself, a copy whose
over-long lines are blanked (``copy_without``; they are quarantined unparsed by
``long_line_rows``), or a Parquet copy with nanosecond timestamps made microseconds
(``parquet_for_spark``). ``read_raw`` reads it into the raw columns of the typing rules
(``rules.raw_columns``, as text) with ``_line`` (the 1-based line the record starts on,
the row for Parquet), ``_raw`` (the record's text) and ``_malformed`` (why a record could
not be read: not a JSON object, bytes that are not UTF-8).
"""

from __future__ import annotations

import csv
import logging
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendlake.jobs.ingest.errors import FileRefused
from trendlake.jobs.ingest.landing import FORMATS, LINE_LIMIT, Scanned, csv_header
from trendlake.schemas.typing import rawfiles
from trendlake.schemas.typing.rules import raw_columns

log = logging.getLogger("trendlake.ingest")

RAW_KEPT = 1024  # bytes of an over-long line kept in quarantine.raw


@dataclass
class ToRead:
    """A landing file to read this run."""

    path: Path  # the landing file; its name is its identity in the lake
    scanned: Scanned
    replaces: str | None  # checksum of the earlier content whose rows it replaces
    read_path: Path | None = None  # what Spark reads: the file, or a converted / trimmed copy

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def checksum(self) -> str:
        return self.scanned.checksum

    @property
    def format(self) -> str:
        return FORMATS[self.path.suffix.lower()]



def prepare(item: ToRead, work: Path) -> tuple[Path, str | None]:
    """The path Spark reads for ``item`` and a note for the report (FileRefused when unreadable)."""
    if item.format == "parquet":
        return parquet_for_spark(item.path, work)
    long_lines = item.scanned.long_lines
    if not long_lines:
        return item.path, None
    work.mkdir(parents=True, exist_ok=True)
    out = work / item.name
    copy_without(item.path, out, [(offset, length) for _, offset, length in long_lines])
    many = len(long_lines)
    return out, f"{item.name}: {many} line{'s' if many > 1 else ''} over {LINE_LIMIT} bytes quarantined unparsed"


def long_line_rows(spark: Any, item: ToRead, raw: Any, stream_schema: dict[str, Any]) -> Any:
    """Quarantine-bound raw rows (``_malformed`` set) for the over-long lines of a text file."""
    rows = []
    columns = raw_columns(stream_schema)
    with open(item.path, "rb") as fh:
        for line, offset, length in item.scanned.long_lines:
            fh.seek(offset)
            head = fh.read(RAW_KEPT).decode("utf-8", errors="replace")
            reason = (f"line of {length} bytes is over the {LINE_LIMIT}-byte line limit; "
                      f"not parsed (raw keeps its first {RAW_KEPT} bytes)")
            rows.append(tuple([None] * len(columns) + [line, head, reason]))
    return spark.createDataFrame(rows, raw.schema)


def copy_without(src: Path, dest: Path, spans: list[tuple[int, int]]) -> None:
    """Copy ``src`` to ``dest`` with each byte range ``(offset, length)`` (sorted, non-overlapping) replaced
    by one space: a blank line, which readers skip, and the line terminators around it stay as they were
    (a lone ``\\r`` before a ``\\n`` would otherwise merge two line ends into one)."""
    with open(src, "rb") as fin, open(dest, "wb") as fout:
        pos = 0
        for start, length in spans:
            left = start - pos
            while left > 0:
                block = fin.read(min(left, 1 << 22))
                if not block:
                    break
                fout.write(block)
                left -= len(block)
            fout.write(b" ")
            fin.seek(start + length)
            pos = start + length
        shutil.copyfileobj(fin, fout, 1 << 22)


def parquet_for_spark(path: Path, work: Path) -> tuple[Path, str | None]:
    """A Parquet file Spark can read: ``path`` itself, or a copy in ``work`` with nanosecond
    timestamps converted to microseconds; and a note saying so (and how many values lost precision).

    Spark refuses ``TIMESTAMP(NANOS)`` columns (pandas writes them by default).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        source = pq.ParquetFile(path)
        schema = source.schema_arrow
    except (pa.ArrowException, OSError) as err:
        raise FileRefused(f"not a readable Parquet file ({str(err).splitlines()[0] if str(err) else type(err).__name__})") from None
    nanos = [f.name for f in schema if pa.types.is_timestamp(f.type) and f.type.unit == "ns"]
    if not nanos:
        return path, None
    target = pa.schema(
        [f.with_type(pa.timestamp("us", f.type.tz)) if f.name in nanos else f for f in schema], metadata=schema.metadata
    )
    lost = 0
    work.mkdir(parents=True, exist_ok=True)
    out = work / path.name
    try:
        with pq.ParquetWriter(out, target) as writer:
            for batch in source.iter_batches():
                arrays = []
                for f, column in zip(schema, batch.columns, strict=True):
                    if f.name in nanos:
                        micros = column.cast(target.field(f.name).type, safe=False)
                        lost += pc.sum(pc.not_equal(micros.cast(f.type), column).cast(pa.int64())).as_py() or 0
                        column = micros
                    arrays.append(column)
                writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=target))
    except (pa.ArrowException, OSError) as err:
        raise FileRefused(f"not a readable Parquet file ({str(err).splitlines()[0]})") from None
    note = f"{path.name}: nanosecond timestamps of {', '.join(nanos)} converted to microseconds"
    if lost:
        note += f"; {lost} value{'s' if lost > 1 else ''} had sub-microsecond digits, truncated (precision lost)"
    return out, note


def _numbered(df: Any, blank: Any = None, header: bool = False) -> tuple[Any, int, int]:
    """``df`` with ``_line`` (1-based position in the file), its row count, and the
    rows read: those not ``blank`` (a Column) and, with ``header``, not the first.

    One file read alone is scanned in file order, one split per partition;
    ``monotonically_increasing_id`` is ``partition << 33 | index`` so the
    position is the rows of earlier partitions plus the index (the first row's
    is 0). Both counts come from the numbering's one grouped query.
    """
    from pyspark.sql import functions as F

    df = df.withColumn("_pid", F.spark_partition_id()).withColumn("_mid", F.monotonically_increasing_id())
    skip = F.lit(False) if blank is None else F.coalesce(blank, F.lit(False))
    if header:
        skip = skip | (F.col("_mid") == 0)
    counts: dict[int, int] = {}
    rows = 0
    for r in df.groupBy("_pid", skip.alias("_skip")).count().collect():
        counts[r["_pid"]] = counts.get(r["_pid"], 0) + r["count"]
        rows += 0 if r["_skip"] else r["count"]
    offsets, total = {}, 0
    for pid in sorted(counts):
        offsets[pid] = total
        total += counts[pid]
    offset = F.lit(0).cast("long")
    for pid, off in offsets.items():
        offset = F.when(F.col("_pid") == pid, F.lit(off)).otherwise(offset)
    local = F.col("_mid") - F.shiftleft(F.col("_pid").cast("long"), 33)
    return df.withColumn("_line", offset + local + 1).drop("_pid", "_mid"), total, rows


def read_raw(
    spark: Any, path: Path, stream_schema: dict[str, Any], scanned: Scanned | None = None, *, whole: bool = False,
) -> tuple[Any, int]:
    """One raw file as text columns (``rules.raw_columns``) + ``_line`` + ``_raw`` +
    ``_malformed``; rows read.

    ``scanned`` is the landing scan of the file (``path`` may be its copy without
    over-long lines): a CSV file none of whose lines holds an odd number of quotes has
    no record spanning lines, and when its lines all end alike (LF or CR LF) it is
    read line by line in splits (every core), not as one multi-line stream (one
    task). The multi-line reader takes the first line ending it meets for all (a lone
    CR after a CR LF is then no line break), so mixed endings are read whole; and
    the line reader drops every line with no byte above a space, where the
    multi-line reader reads a line of tabs or NULs as a record, so such a file is
    read whole too (``Scanned.splittable``).
    """
    fmt = FORMATS[path.suffix.lower()]
    if fmt == "parquet":
        return _read_parquet(spark, path, stream_schema)
    if fmt == "csv":
        return _read_csv(spark, path, stream_schema, scanned, whole)
    return _read_json(spark, path, stream_schema, scanned)


def _read_parquet(spark: Any, path: Path, stream_schema: dict[str, Any]) -> tuple[Any, int]:
    from pyspark.sql import functions as F

    df, _, rows = _numbered(spark.read.parquet(str(path)))
    present = set(df.columns)

    floats = {f.name for f in df.schema.fields if f.dataType.typeName() == "float"}
    doubles = {n for n, spec in stream_schema["attributes"].items() if spec["type"] == "double"}

    def text(c: str) -> Any:
        # nanosecond timestamps arrive as microseconds (``parquet_for_spark``); a float
        # read as a double is widened exactly, as eval does, not via its shortest text
        if c not in present:
            return F.lit(None).cast("string")
        value = F.col(f"`{c}`")
        return (value.cast("double") if c in floats and c in doubles else value).cast("string")

    out = df.select(
        *[text(c).alias(c) for c in raw_columns(stream_schema)],
        F.col("_line"),
        F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns if c != "_line"])).alias("_raw"),
        F.lit(None).cast("string").alias("_malformed"),
    )
    return out, rows


def _read_csv(
    spark: Any, path: Path, stream_schema: dict[str, Any], scanned: Scanned | None, whole: bool
) -> tuple[Any, int]:
    """RFC 4180: doubled quotes escape a quote, and a quoted field may hold line breaks
    (``multiLine``), so one record can span lines. ``_line`` is the line the record starts
    on (``_record_lines``), the numbering the landing scan's over-long lines use."""
    from pyspark.sql import functions as F

    header = csv_header(path)
    ddl = ", ".join(f"c{i} string" for i in range(len(header)))
    # a blank line (or the single space an over-long line is replaced by, ``copy_without``)
    # is no record: it is numbered like every line but not read as a row
    blank = F.coalesce(F.trim(F.col("c0")), F.lit("")) == ""
    for i in range(1, len(header)):
        blank &= F.col(f"c{i}").isNull()
    # rows read: every record but the header (the first) and the blank ones, as ``data`` below
    split = not whole and scanned is not None and scanned.splittable
    records, records_n, rows = _numbered(
        spark.read.options(multiLine=not split, header=False, escape='"', quote='"', mode="PERMISSIVE")
        .schema(ddl).csv(str(path)),
        blank, header=True,
    )
    if split:
        starts = _split_record_lines(scanned)
        expected = len(starts) if starts is not None else scanned.lines
        if records_n != expected:
            log.warning("%s: %d records read line by line where the scan expects %d; read again whole",
                        path.name, records_n, expected)
            return read_raw(spark, path, stream_schema, scanned, whole=True)
    else:
        starts = _record_lines(path, records_n)
    if starts is not None:
        # records and lines differ (quoted line breaks, blank lines): number each record
        # by the physical line it starts on, as the landing scan numbers lines
        mapping = spark.createDataFrame(list(enumerate(starts, start=1)), "_rec long, _phys long")
        records = (records.join(F.broadcast(mapping), records["_line"] == mapping["_rec"], "left")
                   .withColumn("_line", F.coalesce(F.col("_phys"), F.col("_line"))).drop("_rec", "_phys"))
    header_line = starts[0] if starts else 1
    data = records.where((F.col("_line") > header_line) & ~blank)
    index = {name: i for i, name in reversed(list(enumerate(header)))}
    cols = [(F.col(f"c{index[c]}") if c in index else F.lit(None).cast("string")).alias(c)
            for c in raw_columns(stream_schema)]
    raw_text = F.to_csv(F.struct(*[F.col(f"c{i}") for i in range(len(header))]), {"escape": '"', "quote": '"'})
    out = data.select(*cols, F.col("_line"), raw_text.alias("_raw"), F.lit(None).cast("string").alias("_malformed"))
    return _not_utf8_marked(spark, out, path, scanned, rawfiles.utf8_problems), rows


def _read_json(spark: Any, path: Path, stream_schema: dict[str, Any], scanned: Scanned | None) -> tuple[Any, int]:
    from pyspark.sql import functions as F

    blank = F.trim(F.col("value")) == ""
    text, _, rows = _numbered(spark.read.text(str(path)), blank)
    data = text.where(~blank)
    parsed = F.from_json(F.col("value"), "map<string,string>")
    cols = [parsed[c].alias(c) for c in raw_columns(stream_schema)]
    malformed = F.when(parsed.isNull(), F.lit("malformed JSON line (not a JSON object)"))
    out = data.select(*cols, F.col("_line"), F.col("value").alias("_raw"), malformed.alias("_malformed"))
    return _not_utf8_marked(spark, out, path, scanned, rawfiles.json_utf8_problems), rows


def _not_utf8_marked(spark: Any, out: Any, path: Path, scanned: Scanned | None, find: Any) -> Any:
    """``out`` with ``_malformed`` set on the records holding bytes that are not UTF-8 (Spark
    reads them as U+FFFD): quarantined with the line and column ``eval`` names in its error."""
    from pyspark.sql import functions as F

    if scanned is None or scanned.utf8:
        return out
    bad = find(path, None)
    if not bad:
        return out
    marks = spark.createDataFrame(sorted(bad.items()), "_bad_line long, _bad_reason string")
    marked = (out.join(F.broadcast(marks), out["_line"] == marks["_bad_line"], "left")
              .withColumn("_malformed", F.coalesce(F.col("_bad_reason"), F.col("_malformed")))
              .drop("_bad_line", "_bad_reason"))
    # Spark's text reader keeps the bytes as they are: quarantine stores them as U+FFFD (a
    # Delta string column holds UTF-8)
    texts = [f.name for f in marked.schema.fields if f.dataType.typeName() == "string" and f.name != "_malformed"]
    return marked.select(*[F.make_valid_utf8(F.col(f"`{c}`")).alias(c) if c in texts else F.col(f"`{c}`")
                           for c in marked.columns])


def _record_lines(path: Path, records: int) -> list[int] | None:
    """The physical line each CSV record starts on (RFC 4180, blank lines are no record),
    or None when every line is one record (the common case, found by counting lines)."""
    with open(path, "rb") as fh:
        newlines, last = 0, b""
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            newlines += chunk.count(b"\n")
            last = chunk[-1:]
    lines = newlines + (1 if last not in (b"", b"\n") else 0)
    if lines == records:
        return None
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    starts: list[int] = []
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
            reader = csv.reader(fh)
            previous = 0
            for row in reader:
                if row:
                    starts.append(previous + 1)
                previous = reader.line_num
    finally:
        csv.field_size_limit(limit)
    return starts


def _split_record_lines(scanned: Scanned) -> list[int] | None:
    """The physical line each record of a CSV file read line by line starts on, or None when
    that is every line. Spark's line-by-line CSV reader drops the lines that are blank (no
    byte above a space, as Java's ``trim``), and the copy read without over-long lines holds
    a single space in their place."""
    dropped = set(scanned.blank_lines).union(line for line, _, _ in scanned.long_lines)
    if not dropped:
        return None
    return [line for line in range(1, scanned.lines + 1) if line not in dropped]
