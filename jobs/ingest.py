"""The ingest job: raw event files in a landing folder -> bronze, quarantine and the ingest log.

Each new file (CSV with a header, JSON lines, Parquet; sorted by name) is
read by Spark (CSV as RFC 4180: a quoted field may span lines), every row
numbered by its 1-based line in the file (the line a CSV record starts on, row
index for Parquet), typed and validated against the stream schema in Spark by the typing
rules of ``trendlake.schemas.typing`` (the first failing rule is the row's
``reason``), and split: good rows -> ``bronze/<stream>``,
bad rows -> ``quarantine/<stream>``. Good + bad must equal the rows read, and
the good rows must pass the stream's Great Expectations suite, before anything
is committed. A file is identified by the SHA-256 of its bytes: a checksum in
``ingest_log/<stream>`` is never ingested again (a renamed copy neither).

A file whose *name* was ingested before with other content (appended to,
rewritten) is refused by default: nothing of it is written, it is listed in
the run's report (``files_refused``, with the reason) and once in the ingest
log (``status = 'refused'``). With ``replace_changed=True``
(``trendlake ingest --replace-changed``, ``TRENDLAKE_REPLACE_CHANGED=1`` or
the DAG run conf ``{"replace_changed": true}``) its earlier rows in bronze and
in quarantine are replaced by the new content, one transaction per table.

Only regular files are read: symbolic links (never followed), FIFOs,
directories, hidden / marker files and unknown suffixes are skipped and listed
with the reason (``skip_reasons``). A file Spark cannot read (not Parquet, an
empty or non-UTF-8 CSV header) is refused on its own; the run's other files go
through; so is a CSV file that does not tokenize cleanly (a stray quote) and a
Parquet file with a column of an Arrow type the typing rules do not read
(``precheck``), and a record holding bytes that are not UTF-8 is quarantined
with the line's column. Parquet nanosecond timestamps are converted to microseconds (the
report's ``warnings`` say when that truncated values); a line longer than
``LINE_LIMIT`` bytes is quarantined with a reason instead of parsed.

Commit order per run: bronze (one transaction; plus one replacing the rows of
changed files), quarantine (likewise), then the ingest log (one). Bronze and quarantine rows carry ``source_checksum``; a run
that finds a file's checksum missing from the log but present in bronze (or
quarantine) knows an earlier run died between its commits and does not append
those rows again, it only writes what is missing (``docs/lake.md``).
"""

from __future__ import annotations

import csv
import hashlib
import logging
import os
import shutil
import stat
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import BadInputError, JobError
from trendlake.schemas.typing import arrow, rawfiles
from trendlake.schemas.typing.rules import TypingError, check_kind, raw_columns
from trendlake.schemas.typing.sqlexpr import NotWritable

log = logging.getLogger("trendlake.ingest")

FORMATS = {".csv": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".parquet": "parquet"}
LINE_LIMIT = 1 << 20  # bytes; a longer line is quarantined unparsed
RAW_KEPT = 1024  # bytes of an over-long line kept in quarantine.raw
ALREADY_INGESTED = "already ingested (same name and SHA-256)"


class IngestError(JobError):
    """Ingest refused to commit (rows unaccounted for)."""


class IngestInputError(IngestError, BadInputError):
    """Ingest cannot run on this input (a bad stream schema, no landing folder, an unreadable
    CSV header)."""


class FileRefused(Exception):
    """One landing file cannot be ingested (the run's other files go through)."""


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


# ---------------------------------------------------------------------- files


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def scan_landing(landing_dir: str | Path) -> tuple[list[Path], dict[str, str]]:
    """The landing folder's event files in name order, and every other entry with why it is skipped.

    Entries are judged by ``lstat`` (links are never followed): only regular
    files with an event file suffix whose name does not start with ``.`` or
    ``_`` are read.
    """
    folder = Path(landing_dir)
    if not folder.is_dir():
        raise IngestInputError(f"landing folder {folder} does not exist")
    files, skipped = [], {}
    known = ", ".join(sorted(FORMATS))
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        mode = os.lstat(entry.path).st_mode
        name = entry.name
        if stat.S_ISLNK(mode):
            skipped[name] = "symbolic link (links are never followed)"
        elif stat.S_ISDIR(mode):
            skipped[name] = "directory (sub-folders are not read)"
        elif stat.S_ISFIFO(mode):
            skipped[name] = "FIFO (named pipe)"
        elif not stat.S_ISREG(mode):
            skipped[name] = "not a regular file (socket or device)"
        elif name.startswith((".", "_")):
            skipped[name] = "hidden or marker file (name starts with '.' or '_')"
        elif Path(name).suffix.lower() not in FORMATS:
            skipped[name] = f"not an event file (suffixes read: {known})"
        else:
            files.append(Path(entry.path))
    return files, skipped


def landing_files(landing_dir: str | Path) -> list[Path]:
    """Event files of the landing folder in name order (``scan_landing`` without the skipped entries)."""
    return scan_landing(landing_dir)[0]


@dataclass
class Scanned:
    """One landing file read once: its checksum, line terminators and over-long lines.

    Lines end like Spark's text reader ends them (Hadoop's line reader): at
    ``\\n``, ``\\r\\n`` or a lone ``\\r``.
    """

    checksum: str
    newlines: int  # line terminators; the file has at most newlines + 1 lines
    long_lines: list[tuple[int, int, int]]  # (1-based line, byte offset, length without the terminator)
    lines: int = 0  # lines: the terminated ones and a last one without a terminator
    blank_lines: list[int] = field(default_factory=list)  # 1-based lines with no byte above a space
    odd_quotes: bool = False  # a line holds an odd number of '"': a quoted field may span lines
    terminators: frozenset[str] = frozenset()  # the kinds of line terminator seen: "\n", "\r\n", "\r"
    control_blank: bool = False  # a blank line holds a byte below a space (a tab, NUL, ...), not only spaces
    utf8: bool = True  # every byte sequence is UTF-8 (else the records holding others are quarantined)

    @property
    def splittable(self) -> bool:
        """Whether a CSV file so scanned reads the same line by line as whole (``read_raw``)."""
        return not (self.odd_quotes or self.control_blank or len(self.terminators) > 1 or "\r" in self.terminators)


def scan_file(path: Path, line_limit: int = LINE_LIMIT) -> Scanned:
    """SHA-256, line terminators and lines longer than ``line_limit`` bytes of a regular file (never through a link)."""
    import numpy as np

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise FileRefused(f"cannot open: {err.strerror}") from None
    import codecs

    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    utf8 = True
    newlines, run, offset, long_lines = 0, 0, 0, []
    blank_lines: list[int] = []
    terminators: set[str] = set()
    odd_quotes = control_blank = False
    # per line, counted from cumulative sums: its '"' bytes, its bytes above a space, its control
    # bytes (below a space, not a line ending); ``pending`` holds the unterminated line's
    pending = np.zeros(3, np.int64)

    def lines_of(buf: bytes) -> None:
        nonlocal newlines, run, offset, pending, odd_quotes, control_blank
        data = np.frombuffer(buf, np.uint8)
        lf = data == 10
        if b"\r" in buf:
            cr = data == 13
            lf_next = np.zeros_like(lf)
            lf_next[:-1] = lf[1:]
            ends = np.flatnonzero(lf | (cr & ~lf_next))  # the terminator's last byte
            at_lf = lf[ends]
            crlf = at_lf & (ends > 0) & cr[np.maximum(ends - 1, 0)]
        else:
            cr = np.zeros_like(lf)
            ends = np.flatnonzero(lf)
            at_lf, crlf = np.ones(len(ends), bool), np.zeros(len(ends), bool)
        counts = np.cumsum(np.stack([data == 34, data > 32, (data < 32) & ~lf & ~cr]), axis=1, dtype=np.int32)
        if not len(ends):
            run += len(buf)
            offset += len(buf)
            pending += counts[:, -1]
            return
        for kind, seen in (("\r\n", crlf), ("\n", at_lf & ~crlf), ("\r", ~at_lf)):
            if seen.any():
                terminators.add(kind)
        lengths = np.diff(ends, prepend=-1) - 1
        lengths[0] += run
        widths = lengths - crlf  # without the \r of \r\n
        for i in np.flatnonzero(widths > line_limit):
            start = offset + int(ends[i]) - int(lengths[i])
            long_lines.append((newlines + int(i) + 1, start, int(widths[i])))
        per_line = np.diff(counts[:, ends], axis=1, prepend=0).astype(np.int64)
        per_line[:, 0] += pending
        quotes, shown, controls = per_line
        odd_quotes = odd_quotes or bool((quotes & 1).any())
        blank_lines.extend((newlines + np.flatnonzero(shown == 0) + 1).tolist())
        control_blank = control_blank or bool(((shown == 0) & (controls > 0)).any())
        pending = (counts[:, -1] - counts[:, ends[-1]]).astype(np.int64)
        newlines += len(ends)
        run = len(buf) - int(ends[-1]) - 1
        offset += len(buf)

    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileRefused("not a regular file")
        carry = b""
        while True:
            chunk = fh.read(1 << 22)
            digest.update(chunk)
            if utf8:
                try:
                    decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError:
                    utf8 = False
            buf, carry = carry + chunk, b""
            if chunk and buf.endswith(b"\r"):  # a \r\n may straddle two chunks
                buf, carry = buf[:-1], b"\r"
            if buf:
                lines_of(buf)
            if not chunk:
                break
    if run > line_limit:
        long_lines.append((newlines + 1, offset - run, run))
    quotes, shown, controls = (int(n) for n in pending)
    if run and shown == 0:
        blank_lines.append(newlines + 1)
        control_blank = control_blank or controls > 0
    return Scanned(digest.hexdigest(), newlines, long_lines, lines=newlines + (1 if run else 0),
                   blank_lines=blank_lines, odd_quotes=odd_quotes or bool(quotes & 1),
                   terminators=frozenset(terminators), control_blank=control_blank, utf8=utf8)


def _copy_without(src: Path, dest: Path, spans: list[tuple[int, int]]) -> None:
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


def csv_header_ok(path: Path) -> None:
    """Refuse a CSV file whose header line is missing, empty or not UTF-8 (before Spark reads it)."""
    try:
        _csv_header(path)
    except (IngestError, csv.Error) as err:
        raise FileRefused(str(err).replace(f"{path}: ", "")) from None


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
    """One raw file as text columns (``rules.raw_columns``) + ``_line`` + ``_raw``; rows read.

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
    from pyspark.sql import functions as F
    columns = raw_columns(stream_schema)
    fmt = FORMATS[path.suffix.lower()]
    if fmt == "parquet":
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
            *[text(c).alias(c) for c in columns],
            F.col("_line"),
            F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns if c != "_line"])).alias("_raw"),
            F.lit(None).cast("string").alias("_malformed"),
        )
        return out, rows
    if fmt == "csv":
        # RFC 4180: doubled quotes escape a quote, and a quoted field may hold line breaks
        # (``multiLine``), so one record can span lines. ``_line`` is the line the record
        # starts on (``_record_lines``), the numbering the landing scan's over-long lines use.
        header = _csv_header(path)
        ddl = ", ".join(f"c{i} string" for i in range(len(header)))
        # a blank line (or the single space an over-long line is replaced by, ``_copy_without``)
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
        cols = [(F.col(f"c{index[c]}") if c in index else F.lit(None).cast("string")).alias(c) for c in columns]
        raw_text = F.to_csv(F.struct(*[F.col(f"c{i}") for i in range(len(header))]), {"escape": '"', "quote": '"'})
        out = data.select(*cols, F.col("_line"), raw_text.alias("_raw"), F.lit(None).cast("string").alias("_malformed"))
        return _not_utf8_marked(spark, out, path, scanned, rawfiles.utf8_problems), rows
    blank = F.trim(F.col("value")) == ""
    text, _, rows = _numbered(spark.read.text(str(path)), blank)
    data = text.where(~blank)
    parsed = F.from_json(F.col("value"), "map<string,string>")
    cols = [parsed[c].alias(c) for c in columns]
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


def _csv_header(path: Path) -> list[str]:
    """The header's names, trimmed (bytes that are not UTF-8 in a later record quarantine
    that record: ``read_raw``)."""
    from trendlake.engine.files import csv_header_line

    return [h.strip() for h in csv_header_line(Path(path), IngestInputError)]


# ---------------------------------------------------------------------- validation


def validate(raw: Any, stream_schema: dict[str, Any]) -> Any:
    """Raw text rows -> typed columns ``_v_<attr>``, ``_ts`` and ``_reason`` by the Spark half of the
    typing rules (``schemas.typing.spark.validate``); a schema it cannot build rules for (an unknown
    time unit, a name Spark SQL text cannot hold) is a bad stream schema."""
    from trendlake.schemas.typing import spark

    try:
        return spark.validate(raw, stream_schema)
    except (TypingError, NotWritable) as err:
        raise IngestInputError(f"stream schema: {err}") from None


# ---------------------------------------------------------------------- the job


@dataclass
class _Todo:
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
    from trendlake.jobs.spark import get_spark

    started = time.perf_counter()
    check_stream_schema(stream_schema)
    stream = stream_schema["stream"]
    lake = Lake(lake_root)
    report = IngestReport(stream)
    log_t = lake.ingest_log(stream)

    files, skipped = scan_landing(landing_dir)
    history = _history(lake, log_t)
    seen = dict(history.names)
    todo: list[_Todo] = []
    refusals: list[tuple[str, str | None, str]] = []  # (file, checksum, reason)
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
            todo.append(_Todo(path, scanned, earlier))
        elif checksum in seen:
            skipped[path.name] = f"same content (SHA-256) as {seen[checksum]}, already ingested"
        else:
            todo.append(_Todo(path, scanned, None))
        seen.setdefault(checksum, path.name)

    log_rows: list[dict[str, Any]] = []
    ingested_at = datetime.now(UTC)
    if todo:
        spark = spark or get_spark()
        # The validation projection has a few rules per attribute; with wide stream
        # schemas its generated Java exceeds the JVM's 64 KB method limit and Spark
        # logs a compile failure before falling back. Interpret it from the start.
        codegen = spark.conf.get("spark.sql.codegen.wholeStage", "true")
        spark.conf.set("spark.sql.codegen.wholeStage", "false")
        try:
            log_rows = _ingest_files(spark, lake, report, stream_schema, todo, refusals, ingested_at)
        finally:
            spark.conf.set("spark.sql.codegen.wholeStage", codegen)

    for name, checksum, reason in refusals:
        report.files_refused[name] = reason
        log.warning("ingest %s: refused %s: %s", stream, name, reason)
        if (name, checksum) not in history.refused:
            log_rows.append({
                "file": name, "checksum": checksum, "rows_read": 0, "rows_good": 0, "rows_bad": 0,
                "ingested_at": ingested_at, "bronze_version": None, "quarantine_version": None,
                "recovered": False, "status": "refused", "message": reason,
            })
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


def precheck(path: Path, scanned: Scanned, stream_schema: dict[str, Any] | None = None) -> None:
    """Refuse a file that cannot be read before it counts as seen (an empty or non-UTF-8 CSV header,
    a CSV header over the line limit, a CSV file that does not tokenize cleanly, a file that is
    not Parquet, a Parquet column of a type the typing rules do not read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fmt = FORMATS[path.suffix.lower()]
    if fmt == "parquet":
        try:
            schema = pq.read_schema(path)
        except (pa.ArrowException, OSError) as err:
            raise FileRefused(f"not a readable Parquet file ({_first_line(err)})") from None
        if stream_schema is not None:
            parquet_types_ok(path, schema, stream_schema)
    elif fmt == "csv":
        long_lines = scanned.long_lines
        if long_lines and long_lines[0][0] == 1:
            raise FileRefused(f"CSV header line is {long_lines[0][2]} bytes, over the {LINE_LIMIT}-byte line limit")
        csv_header_ok(path)
        problem = rawfiles.csv_token_problem(path)
        if problem is not None:
            # the rows after a stray quote cannot be told apart: nothing of the file is read
            raise FileRefused(problem)


def parquet_types_ok(path: Path, schema: Any, stream_schema: dict[str, Any]) -> None:
    """Refuse a Parquet file whose type, time or attribute column is of an Arrow type the typing
    rules do not read (``arrow.arrow_type_problem``; ``eval`` refuses it alike), naming the
    first row holding a value."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    roles = {stream_schema["type_column"]: "attribute", stream_schema["time_column"]: "time",
             **{name: "attribute" for name in stream_schema["attributes"]}}
    for field_ in schema:
        role = roles.get(field_.name)
        problem = None if role is None else arrow.arrow_type_problem(field_.type, role)
        if problem is not None:
            column = pq.read_table(path, columns=[field_.name]).column(0)
            hits = np.flatnonzero(arrow.np_bool(column.is_valid()))
            row = f"row {int(hits[0]) + 1}: " if len(hits) else ""
            raise FileRefused(f"{row}column '{field_.name}': {problem}")
    # Parquet text is not checked on reading (Spark would store the bytes as they are)
    texts = [f.name for f in schema if f.name in roles and (
        pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or pa.types.is_dictionary(f.type))]
    table = pq.read_table(path, columns=texts) if texts else None
    for name in texts:
        bad = arrow.invalid_utf8(table.column(name))
        if bad is not None:
            raise FileRefused(f"row {bad[0] + 1}: column '{name}': not UTF-8 text (byte 0x{bad[1]:02x})")


def _prepare(item: _Todo, work: Path) -> tuple[Path, str | None]:
    """The path Spark reads for ``item`` and a note for the report (FileRefused when unreadable)."""
    if item.format == "parquet":
        return parquet_for_spark(item.path, work)
    long_lines = item.scanned.long_lines
    if not long_lines:
        return item.path, None
    work.mkdir(parents=True, exist_ok=True)
    out = work / item.name
    _copy_without(item.path, out, [(offset, length) for _, offset, length in long_lines])
    many = len(long_lines)
    return out, f"{item.name}: {many} line{'s' if many > 1 else ''} over {LINE_LIMIT} bytes quarantined unparsed"


def _long_line_rows(spark: Any, item: _Todo, raw: Any, stream_schema: dict[str, Any]) -> Any:
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


def _spark_errors() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JJavaError)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _sql_in(column: str, values: list[str]) -> str:
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"{column} IN ({quoted})"


def _ingest_files(
    spark: Any, lake: Any, report: IngestReport, stream_schema: dict[str, Any],
    todo: list[_Todo], refusals: list[tuple[str, str | None, str]], ingested_at: datetime,
) -> list[dict[str, Any]]:
    """Read, validate and commit ``todo``; fills ``report``; the ingest log rows of the files read."""
    from trendlake.jobs.lake import STAGING

    work = lake.root / STAGING / f"{int(time.time())}-ingest-{uuid.uuid4().hex}"
    try:
        return _ingest_prepared(spark, lake, report, stream_schema, todo, refusals, ingested_at, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _ingest_prepared(
    spark: Any, lake: Any, report: IngestReport, stream_schema: dict[str, Any],
    todo: list[_Todo], refusals: list[tuple[str, str | None, str]], ingested_at: datetime,
    work: Path,
) -> list[dict[str, Any]]:
    from pyspark.sql import functions as F
    from trendlake.jobs.lake import ReplaceWhere
    from trendlake.jobs.quality import suite_for_stream, validate_bronze

    stream = stream_schema["stream"]
    bronze_t, quarantine_t = lake.bronze(stream), lake.quarantine(stream)
    lake.cleanup_staging()
    spark_errors = _spark_errors()

    base = _next_seq(lake, spark, bronze_t)
    parts, rows_read, line_offset, ready = [], {}, 0, []
    for item in todo:
        try:
            item.read_path, note = _prepare(item, work)
            raw, n = read_raw(spark, item.read_path, stream_schema, item.scanned)
        except FileRefused as err:
            refusals.append((item.name, item.checksum, str(err)))
            continue
        except IngestError as err:
            refusals.append((item.name, item.checksum, str(err).replace(f"{item.read_path}: ", "")))
            continue
        except spark_errors as err:
            refusals.append((item.name, item.checksum, f"Spark cannot read it: {_first_line(err)}"))
            continue
        if note:
            report.warnings.append(note)
        if item.scanned.long_lines and item.format != "parquet":
            raw = raw.unionByName(_long_line_rows(spark, item, raw, stream_schema))
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
    if not ready:
        return []

    # Files an earlier run committed to bronze / quarantine but not to the log
    # (a replaced file is always written again in full: replacing is idempotent).
    fresh = [item.checksum for item in ready if item.replaces is None]
    in_bronze = _checksums_in(lake, spark, bronze_t, fresh)
    in_quarantine = _checksums_in(lake, spark, quarantine_t, fresh)
    replaced = [item.name for item in ready if item.replaces is not None]

    rows = parts[0]
    for p in parts[1:]:
        rows = rows.unionByName(p)
    checked = validate(rows, stream_schema).persist()
    try:
        counts = {(r["source_checksum"], r["bad"]): r["count"]
                  for r in checked.groupBy("source_checksum", (F.col("_reason").isNotNull()).alias("bad")).count().collect()}
        per_file = {}
        for item in ready:
            good, bad = counts.get((item.checksum, False), 0), counts.get((item.checksum, True), 0)
            if good + bad != rows_read[item.checksum]:
                raise IngestError(
                    f"{item.name}: {rows_read[item.checksum]} rows read but {good} good + {bad} quarantined; "
                    "nothing committed"
                )
            per_file[item.checksum] = (good, bad)

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
        bronze_rows = sum(per_file[item.checksum][0] for item in ready if item.checksum not in in_bronze)
        validate_bronze(bronze, suite_for_stream(stream_schema), rows=bronze_rows)
        bad_rows = checked.where(F.col("_reason").isNotNull() & ~F.col("source_checksum").isin(list(in_quarantine)))
        quarantine = bad_rows.select(
            F.col("_reason").alias("reason"), "source_file", F.col("_line").alias("source_line"),
            "source_checksum", F.lit(ingested_at).alias("ingested_at"),
            F.col("_raw").alias("raw"),
            F.to_json(F.struct(*[F.col(f"`{c}`") for c in raw_columns(stream_schema)])).alias("fields"),
        )
        for table, frame, partition_by in ((bronze_t, bronze, ["event_date"]), (quarantine_t, quarantine, None)):
            if not replaced:
                lake.write(table, frame, partition_by=partition_by)
                continue
            is_replaced = F.col("source_file").isin(replaced)
            lake.write(table, frame.where(~is_replaced), partition_by=partition_by)
            # the changed files' earlier rows out, their new rows in: one transaction
            lake.write(table, frame.where(is_replaced).toArrow(), ReplaceWhere(_sql_in("source_file", replaced)),
                       partition_by=partition_by)
    finally:
        checked.unpersist()
    report.bronze_version = lake.version(bronze_t)
    report.quarantine_version = lake.version(quarantine_t)

    log_rows = []
    for item in ready:
        good, bad = per_file[item.checksum]
        recovered = item.checksum in in_bronze or item.checksum in in_quarantine
        log_rows.append({
            "file": item.name, "checksum": item.checksum, "rows_read": rows_read[item.checksum],
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
        report.rows_read += rows_read[item.checksum]
        report.rows_good += good
        report.rows_bad += bad
    return log_rows


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
