"""The landing folder as ingest sees it before Spark reads anything: which entries are event
files (``scan_landing``), one pass over each file's bytes (``scan_file``: checksum, line
ends, over-long and blank lines, quotes, UTF-8) and the checks that refuse a file whole
(``precheck``: a CSV header or file that cannot be read, a Parquet file or column the
typing rules do not read). No Spark here.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from trendlake.jobs.ingest.errors import FileRefused, IngestError, IngestInputError
from trendlake.schemas.typing import arrow, rawfiles

FORMATS = {".csv": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".parquet": "parquet"}
LINE_LIMIT = 1 << 20  # bytes; a longer line is quarantined unparsed


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


@dataclass
class _LineCounts:
    """What ``scan_file`` counts as the bytes go by, chunk after chunk (``feed``)."""

    line_limit: int
    newlines: int = 0
    run: int = 0  # bytes of the line not yet terminated
    offset: int = 0  # bytes fed
    long_lines: list[tuple[int, int, int]] = field(default_factory=list)
    blank_lines: list[int] = field(default_factory=list)
    terminators: set[str] = field(default_factory=set)
    odd_quotes: bool = False
    control_blank: bool = False
    # per line, counted from cumulative sums: its '"' bytes, its bytes above a space, its control
    # bytes (below a space, not a line ending); ``pending`` holds the unterminated line's
    pending: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int64))

    def feed(self, buf: bytes) -> None:
        """Count the lines of ``buf`` (which never ends between the ``\r`` and ``\n`` of a CR LF)."""
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
            self.run += len(buf)
            self.offset += len(buf)
            self.pending += counts[:, -1]
            return
        for kind, seen in (("\r\n", crlf), ("\n", at_lf & ~crlf), ("\r", ~at_lf)):
            if seen.any():
                self.terminators.add(kind)
        self._lines(ends, crlf, counts)
        self.pending = (counts[:, -1] - counts[:, ends[-1]]).astype(np.int64)
        self.newlines += len(ends)
        self.run = len(buf) - int(ends[-1]) - 1
        self.offset += len(buf)

    def _lines(self, ends: np.ndarray, crlf: np.ndarray, counts: np.ndarray) -> None:
        """The over-long, blank and odd-quoted lines among those ending at ``ends``."""
        lengths = np.diff(ends, prepend=-1) - 1
        lengths[0] += self.run
        widths = lengths - crlf  # without the \r of \r\n
        for i in np.flatnonzero(widths > self.line_limit):
            start = self.offset + int(ends[i]) - int(lengths[i])
            self.long_lines.append((self.newlines + int(i) + 1, start, int(widths[i])))
        per_line = np.diff(counts[:, ends], axis=1, prepend=0).astype(np.int64)
        per_line[:, 0] += self.pending
        quotes, shown, controls = per_line
        self.odd_quotes = self.odd_quotes or bool((quotes & 1).any())
        self.blank_lines.extend((self.newlines + np.flatnonzero(shown == 0) + 1).tolist())
        self.control_blank = self.control_blank or bool(((shown == 0) & (controls > 0)).any())

    def scanned(self, checksum: str, utf8: bool) -> Scanned:
        """The scan, once every byte was fed (the last line may have no terminator)."""
        if self.run > self.line_limit:
            self.long_lines.append((self.newlines + 1, self.offset - self.run, self.run))
        quotes, shown, controls = (int(n) for n in self.pending)
        if self.run and shown == 0:
            self.blank_lines.append(self.newlines + 1)
            self.control_blank = self.control_blank or controls > 0
        return Scanned(checksum, self.newlines, self.long_lines, lines=self.newlines + (1 if self.run else 0),
                       blank_lines=self.blank_lines, odd_quotes=self.odd_quotes or bool(quotes & 1),
                       terminators=frozenset(self.terminators), control_blank=self.control_blank, utf8=utf8)


def scan_file(path: Path, line_limit: int = LINE_LIMIT) -> Scanned:
    """SHA-256, line terminators and lines longer than ``line_limit`` bytes of a regular file (never through a link)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise FileRefused(f"cannot open: {err.strerror}") from None
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    utf8 = True
    counts = _LineCounts(line_limit)
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
                counts.feed(buf)
            if not chunk:
                break
    return counts.scanned(digest.hexdigest(), utf8)


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
            raise FileRefused(f"not a readable Parquet file ({first_line(err)})") from None
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


def csv_header_ok(path: Path) -> None:
    """Refuse a CSV file whose header line is missing, empty or not UTF-8 (before Spark reads it)."""
    try:
        csv_header(path)
    except (IngestError, csv.Error) as err:
        raise FileRefused(str(err).replace(f"{path}: ", "")) from None


def csv_header(path: Path) -> list[str]:
    """The header's names, trimmed (bytes that are not UTF-8 in a later record quarantine
    that record: ``read_raw``)."""
    from trendlake.engine.files import csv_header_line

    return [h.strip() for h in csv_header_line(Path(path), IngestInputError)]


def first_line(err: BaseException) -> str:
    """An error's first line (its type's name when it says nothing), for a one-line reason."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
