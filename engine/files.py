"""Event files (CSV, JSON lines, Parquet) read into one typed Arrow table.

``read_event_table(path, stream_schema)`` is ``trendlake eval``'s front door:
pyarrow reads the file (CSV as RFC 4180 — quoted fields may hold the
delimiter, doubled quotes and line breaks; a UTF-8 byte order mark is
skipped), and every column is typed by the typing rules ingest uses
(``trendlake.schemas.typing``):

- with a stream schema, its ``type_column``/``time_column`` are read as the
  event type and time (in the schema's ``time_unit``), each declared attribute
  is cast to its declared type (an attribute a type does not carry is NULL for
  that type, as in bronze) and undeclared columns are dropped;
- without one, ``type``/``ts`` are the type and time (epoch seconds or
  ISO-8601), and a text column whose present values all are written as
  integers becomes ``int64`` (a decimal column: whose values all are integral),
  one whose values all are decimal numbers ``float64`` (``3.0`` and ``1e3``
  included), any other stays text.

Without a stream schema, a CSV column pyarrow itself reads as ``int64`` is
kept (the rules read the same text as the same integers; a file holding
``0x`` is read as text throughout, since pyarrow takes ``0x10`` for 16); the
event type is read as dictionary-encoded text, and every other column as text
typed by the rules. A
CSV file over ``STREAM_BYTES`` is read block by block, so that its text is
never in memory whole next to the table.

Without a stream schema, ``columns`` (what a plan refers to) limits the attribute
columns read; with one, every declared attribute is read and checked.

The result has ``type`` (string; dictionary-encoded from a CSV file read without a
stream schema), ``ts`` (int64 µs UTC), optionally ``seq``,
and the attribute columns, in file order: what
``engine.evaluate`` takes. A value that does not fit is
an ``EventFileError`` naming the file, the line (row for Parquet) and the
column; no row becomes a Python object on the way. So are a CSV file that
does not tokenize cleanly (``rawfiles.csv_token_problem``: a stray quote), bytes
that are not UTF-8, an integer beyond 64 bits (never read as a double without
a stream schema saying ``double``) and a column of an Arrow type the rules do
not read (``arrow.arrow_type_problem``: binary, nested, times as attributes).
"""

from __future__ import annotations

import csv
import json
import mmap
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from trendlake.engine.columns import RESERVED
from trendlake.engine.errors import EventFileError
from trendlake.schemas.typing import arrow, rawfiles, rules

FORMATS = {".csv": "csv", ".txt": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".parquet": "parquet"}
CSV_BLOCK_SIZE = 16 << 20  # a CSV record (one event) may be up to this long
# a file is first read in blocks of this size, parsed on every core; a record longer than a
# block fails that read, and the file is read again in blocks of CSV_BLOCK_SIZE
CSV_PARALLEL_BLOCK = 1 << 20
STREAM_BYTES = 64 << 20  # larger CSV files without a stream schema are read block by block

__all__ = ["FORMATS", "read_event_table"]


def read_event_table(
    path: str | Path, stream_schema: dict[str, Any] | None = None, columns: set[str] | None = None
) -> Any:
    """The events of a CSV, JSON-lines or Parquet file as a typed pyarrow Table (see module doc).

    ``columns``: without a stream schema, only these attribute columns are read (besides
    ``type``, ``ts`` and ``seq``): what a plan refers to (``engine.columns_needed``). With a
    stream schema every declared attribute is read and checked against its type."""
    path = Path(path)
    if not path.exists():
        raise EventFileError(f"{path}: no such file")
    if path.is_dir():
        raise EventFileError(f"{path}: is a directory, not an event file")
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise EventFileError(f"{path}: unknown event file format {path.suffix!r} (use .csv, .jsonl or .parquet)")
    # the raw table is referenced by ``_typed`` alone, which drops each column once typed
    keep = None if stream_schema is not None or columns is None else {*columns, *RESERVED}
    if fmt == "csv":
        return _typed(_read_csv(path, infer=stream_schema is None, keep=keep), stream_schema, _CsvLines(path))
    if fmt == "json":
        raw = _json_numbers_as_text(path, _only(_read_json(path), keep), stream_schema)
        return _typed(raw, stream_schema, _JsonLines(path))
    return _typed(_only(_read_parquet(path), keep), stream_schema, _ParquetRows(path))


def _only(table: Any, keep: set[str] | None) -> Any:
    """The table's columns named in ``keep`` (all of them for None)."""
    if keep is None:
        return table
    return table.select([name for name in table.column_names if name in keep])


# ---------------------------------------------------------------------- reading


def _read_csv(path: Path, infer: bool = False, keep: set[str] | None = None) -> Any:
    """The file's columns (those in ``keep``, or all) as text; with ``infer`` (no stream
    schema), columns pyarrow reads as ``int64`` are kept as such (see
    ``_read_csv_inferred``). Every field of every record is still parsed: a record with
    another number of fields is an error whatever columns are kept."""
    header = _csv_header(path)
    problem = rawfiles.csv_token_problem(path)
    if problem is not None:
        raise EventFileError(f"{path}: {problem}")
    names = [name for name in header if keep is None or name in keep]
    quoted = _has_quoted_records(path)
    if infer and not _has_hex_prefix(path):
        return _read_csv_inferred(path, header, quoted, names)
    # without a stream schema the event type is read dictionary-encoded either way
    want = {name: "types" if infer and name == "type" else "text" for name in names}
    return _read_csv_columns(path, header, want, quoted)


def _read_csv_inferred(path: Path, header: list[str], quoted: bool, names: list[str]) -> Any:
    """Without a stream schema: pyarrow's own inference, kept where it equals the typing
    rules. A column pyarrow reads as ``int64`` holds ``[ \t]*-?digits[ \t]*`` (or hex,
    refused before: ``_has_hex_prefix``), which the rules read as the same integer; the
    event type and every column of another inferred type (booleans, floats, times, all
    empty) are read again as text and typed by the rules. Integers then never exist as text
    (benchmarks/README.md, "eval")."""
    import pyarrow as pa

    want = {name: "types" if name == "type" else "infer" for name in names}
    table = _read_csv_stream(path, header, want, quoted) if path.stat().st_size > STREAM_BYTES else None
    if table is None:
        table = _read_csv_columns(path, header, want, quoted)
    redo = [
        name for name, kind in zip(table.column_names, table.schema.types, strict=True)
        if not (pa.types.is_string(kind) or pa.types.is_int64(kind) or pa.types.is_dictionary(kind))
    ]
    if redo:
        text = _read_csv_columns(path, header, {name: "text" for name in redo}, quoted)
        for name in redo:
            table = table.set_column(table.schema.get_field_index(name), name, text.column(name))
    return table


@contextmanager
def _mapped(path: Path) -> Iterator[mmap.mmap | None]:
    """The file's bytes, mapped (None for an empty file): scanned without reading it."""
    with path.open("rb") as fh:
        if fh.seek(0, 2) == 0:
            yield None
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            yield data


def _has_quoted_records(path: Path) -> bool:
    """Does a record after the header hold a quote character (one memchr over the mapped
    file)? Only a quoted field can hold a line break. A header line with balanced quotes
    (writers often quote every header name) is a record of its own and is skipped."""
    with _mapped(path) as data:
        if data is None:
            return False
        end = data.find(b"\n")
        if end < 0:
            return data.find(b'"') >= 0
        start = end + 1 if data[:end].count(b'"') % 2 == 0 else 0
        return data.find(b'"', start) >= 0


def _has_hex_prefix(path: Path) -> bool:
    """Does ``0x`` / ``0X`` occur in the file? pyarrow reads ``0x10`` as an integer, the
    typing rules as text: such files are read as text throughout."""
    with _mapped(path) as data:
        if data is None:
            return False
        for x in (b"x", b"X"):  # a one-byte search is memchr: look at the few x's
            pos, seen = data.find(x, 1), 0
            while pos >= 0:
                if data[pos - 1] == 0x30:  # "0"
                    return True
                seen += 1
                if seen > 64:  # text full of x's: one search for the pair
                    if data.find(b"0" + x) >= 0:
                        return True
                    break
                pos = data.find(x, pos + 1)
    return False


def _read_csv_stream(path: Path, header: list[str], want: dict[str, str], quoted: bool) -> Any | None:
    """``_read_csv_columns`` block by block (a large file: the memory is the table and one
    block, not the whole text besides); None when a later block does not fit the types
    inferred from the first, or when the file cannot be read (the caller reads the whole
    file instead, and says what is wrong with it)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    invalid: list[Any] = []
    try:
        table = pcsv.open_csv(path, **_csv_options(header, want, invalid, quoted=quoted)).read_all()
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    _raise_invalid(path, header, invalid)
    return table


def _csv_options(
    header: list[str], want: dict[str, str], invalid: list[Any], block_size: int | None = None,
    quoted: bool = True,
) -> dict[str, Any]:
    """pyarrow's options for reading ``want``'s columns in blocks of ``block_size`` (else
    ``CSV_BLOCK_SIZE``); records without a quote character (``quoted`` False) have no field
    holding a line break, and are parsed without looking for one (faster)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    def on_invalid(row: Any) -> str:
        invalid.append(row)
        return "skip"

    return {
        "read_options": pcsv.ReadOptions(block_size=block_size or CSV_BLOCK_SIZE, use_threads=True),
        "parse_options": pcsv.ParseOptions(newlines_in_values=quoted, invalid_row_handler=on_invalid),
        "convert_options": pcsv.ConvertOptions(
            column_types={
                **{name: pa.string() for name, how in want.items() if how == "text"},
                # the event type dictionary-encoded as it is parsed: its codes are what the
                # engine matches on, and its few distinct values are all the text kept
                **{name: pa.dictionary(pa.int32(), pa.string()) for name, how in want.items() if how == "types"},
            },
            include_columns=[name for name in header if name in want],
            null_values=[""],
            true_values=[],  # no booleans inferred: the rules read them as text
            false_values=[],
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
        ),
    }


def _read_csv_columns(path: Path, header: list[str], want: dict[str, str], quoted: bool) -> Any:
    """The columns of ``want`` ("text": as strings, "types": as dictionary-encoded strings,
    "infer": as pyarrow infers them); empty fields are missing values."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if CSV_PARALLEL_BLOCK < CSV_BLOCK_SIZE:
        invalid: list[Any] = []
        try:
            table = pcsv.read_csv(path, **_csv_options(header, want, invalid, CSV_PARALLEL_BLOCK, quoted))
        except (pa.ArrowInvalid, UnicodeDecodeError):
            pass  # read again in large blocks, which says what is wrong if anything is
        else:
            _raise_invalid(path, header, invalid)
            return table
    invalid = []
    try:
        table = pcsv.read_csv(path, **_csv_options(header, want, invalid, quoted=quoted))
    except pa.ArrowInvalid as err:
        if "UTF8" in str(err) or "UTF-8" in str(err):
            _not_utf8(path)
        raise EventFileError(f"{path}: not a readable CSV file: {_first_line(err)}") from None
    except UnicodeDecodeError:
        _not_utf8(path)
        raise EventFileError(f"{path}: not UTF-8 text") from None
    _raise_invalid(path, header, invalid)
    return table


def _not_utf8(path: Path) -> None:
    """Raise the error naming the line and column of the file's first bytes that are not UTF-8."""
    found = rawfiles.utf8_problems(path)
    if found:
        line, reason = next(iter(found.items()))
        raise EventFileError(f"{path}: line {line}: {reason}")


def _raise_invalid(path: Path, header: list[str], invalid: list[Any]) -> None:
    if invalid:
        row = min(invalid, key=lambda r: r.number if r.number is not None else sys.maxsize)
        line = f"line {row.number}" if row.number is not None else _line_with_fields_other_than(path, len(header))
        raise EventFileError(
            f"{path}: {line}: {row.actual_columns} fields where the header has {row.expected_columns}"
        )


def _line_with_fields_other_than(path: Path, count: int) -> str:
    """'line N' of the first record without ``count`` fields (parallel reads do not number rows)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            last = 0
            for record in reader:
                if record and len(record) != count:
                    return f"line {last + 1}"
                last = reader.line_num
    except (csv.Error, UnicodeDecodeError):
        pass
    finally:
        csv.field_size_limit(limit)
    return "a row"


def csv_header_line(path: Path, error: type[Exception] = EventFileError) -> list[str]:
    """The names of a CSV file's header line as written; ``error`` (naming the file and line
    1) when it cannot be read, is empty, or is not UTF-8 text. The ingest job reads headers
    with this too, raising its own error class."""
    try:
        # undecodable bytes kept as surrogates: the text decoder reads ahead of the header
        # line, and bytes of later lines are the data reader's to report
        with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
            header = next(csv.reader(fh), [])
    except csv.Error as err:
        raise error(f"{path}: line 1: unreadable CSV header ({err})") from None
    if not header:
        raise error(f"{path}: empty CSV file (a header line is required)")
    for name in header:
        byte = rawfiles.first_undecodable_byte(name)
        if byte is not None:
            raise error(f"{path}: line 1: not UTF-8 text (byte 0x{byte:02x})")
    return header


def _csv_header(path: Path) -> list[str]:
    header = csv_header_line(path)
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise EventFileError(f"{path}: line 1: column {name!r} appears twice in the header")
        if name == "":
            raise EventFileError(f"{path}: line 1: a column of the header has no name")
        seen.add(name)
    return header


def _read_json(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.json as pj

    _json_utf8(path)  # pyarrow's JSON reader does not check it
    if _has_huge_integer(path):
        return _read_json_as_text(path)  # pyarrow reads an integer beyond 64 bits as a double
    try:
        return pj.read_json(path, read_options=pj.ReadOptions(block_size=CSV_BLOCK_SIZE))
    except pa.ArrowInvalid:
        # mixed kinds in one column (a number here, text there) or a bad line: read the
        # values as text line by line, which also finds the line a JSON error is on
        return _read_json_as_text(path)


def _json_utf8(path: Path) -> None:
    """Raise the error naming the line (and key) of the first bytes that are not UTF-8."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 24), b""):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        bad = rawfiles.json_utf8_problems(path)
        line, reason = next(iter(bad.items())) if bad else (0, "not UTF-8 text")
        raise EventFileError(f"{path}: line {line}: {reason}") from None


def _json_numbers_as_text(path: Path, table: Any, schema: dict[str, Any] | None) -> Any:
    """JSON numbers in a column the stream schema declares ``string`` as the text ingest gets
    from Spark for them: an integer as its digits, a decimal number as Java's text of its
    double (``1.0`` stays ``1.0``, ``1e3`` is ``1000.0``). pyarrow reads a column of both as
    doubles (``7`` would be ``7.0``): such a file is read value by value."""
    import pyarrow as pa

    if schema is None:
        return table
    for name, spec in schema.get("attributes", {}).items():
        if spec.get("type") == "string" and name in table.column_names and pa.types.is_floating(
                table.column(name).type):
            return _read_json_as_text(path)
    return table


def _has_huge_integer(path: Path) -> bool:
    """Does the file hold a run of digits beyond 64 bits (an integer pyarrow's JSON reader
    would read as a double)?"""
    import re

    with _mapped(path) as data:
        if data is None:
            return False
        for match in re.finditer(rb"-?[0-9]{19,}", data):
            if not -(2**63) <= int(match.group()) < 2**63:
                return True
    return False


def _read_json_as_text(path: Path) -> Any:
    import pyarrow as pa

    columns: dict[str, list[str | None]] = {}
    count = 0
    with path.open(encoding="utf-8", errors="strict") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise EventFileError(f"{path}: line {line_no}: not JSON: {err.msg}") from None
            if not isinstance(row, dict):
                raise EventFileError(f"{path}: line {line_no}: expected a JSON object per line")
            for key, value in row.items():
                col = columns.setdefault(key, [None] * count)
                if isinstance(value, (dict, list)):
                    what = "a JSON object" if isinstance(value, dict) else "a JSON list"
                    raise EventFileError(f"{path}: line {line_no}: column '{key}': {what} where a single value belongs")
                if value is None:
                    col.append(None)
                elif isinstance(value, str):
                    col.append(value)
                elif isinstance(value, float):
                    col.append(arrow.java_double_text(value))  # as Spark shows a JSON number
                else:
                    col.append(json.dumps(value, separators=(",", ":")))
            count += 1
            for col in columns.values():
                if len(col) < count:
                    col.append(None)
    return pa.table({k: pa.array(v, pa.string()) for k, v in columns.items()}) if columns else pa.table({})


def _read_parquet(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise EventFileError(f"{path}: not a readable Parquet file: {_first_line(err)}") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


# ---------------------------------------------------------------------- where a row came from


class _CsvLines:
    """Row index -> 'line N' of a CSV file (blank lines skipped, quoted line breaks counted)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, row: int) -> str:
        limit = csv.field_size_limit()
        csv.field_size_limit(sys.maxsize)
        try:
            with self.path.open(encoding="utf-8-sig", newline="") as fh:
                reader = csv.reader(fh)
                next(reader, None)
                index, last = -1, reader.line_num
                for record in reader:
                    if record:
                        index += 1
                        if index == row:
                            return f"{self.path}: line {last + 1}"
                    last = reader.line_num
        except (csv.Error, UnicodeDecodeError):
            pass
        finally:
            csv.field_size_limit(limit)
        return f"{self.path}: record {row + 1}"


class _JsonLines:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, row: int) -> str:
        with self.path.open(encoding="utf-8", errors="replace") as fh:
            index = -1
            for line_no, line in enumerate(fh, start=1):
                if line.strip():
                    index += 1
                    if index == row:
                        return f"{self.path}: line {line_no}"
        return f"{self.path}: record {row + 1}"


class _ParquetRows:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, row: int) -> str:
        return f"{self.path}: row {row + 1}"


# ---------------------------------------------------------------------- typing


def _typed(raw: Any, schema: dict[str, Any] | None, where: Callable[[int], str]) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    type_col = schema.get("type_column", "type") if schema else "type"
    time_col = schema.get("time_column", "ts") if schema else "ts"
    unit = rules.check_time_unit(schema.get("time_unit") if schema else None)
    path = getattr(where, "path", "<events>")
    missing = [c for c in (type_col, time_col) if c not in raw.column_names]
    if missing:
        raise EventFileError(f"{path}: no column {' or '.join(repr(c) for c in missing)} "
                             f"(the event type and time columns)")
    n = raw.num_rows

    _refuse_unsupported(raw, type_col, where)
    etype = _dictionary_types(raw.column(type_col)) if schema is None else None
    if etype is None:
        etype = arrow.as_text(raw.column(type_col))
        if not pa.types.is_string(etype.type):
            etype = etype.cast(pa.string())
    empty = ~arrow.np_bool(etype.is_valid())
    if empty.any():
        raise EventFileError(f"{where(int(np.flatnonzero(empty)[0]))}: column '{type_col}': empty event type")

    _refuse_unsupported(raw, time_col, where, role="time")
    ts = arrow.parse_time(raw.column(time_col), unit, time_col)
    _raise_bad(ts, where, time_col)
    if ts.values.null_count:
        first = int(np.flatnonzero(~arrow.np_bool(ts.values.is_valid()))[0])
        raise EventFileError(f"{where(first)}: column '{time_col}': missing timestamp")

    columns: dict[str, Any] = {"type": etype, "ts": ts.values}
    del ts  # its reasons hold the raw text
    raw = raw.drop_columns([time_col])
    if "seq" in raw.column_names and schema is None:
        seq = arrow.cast_column(raw.column("seq"), "long", "seq")
        _raise_bad(seq, where, "seq")
        if seq.values.null_count == 0:
            columns["seq"] = seq.values
    if schema is not None:
        for name, spec in schema.get("attributes", {}).items():
            if name not in raw.column_names:
                continue
            _refuse_unsupported(raw, name, where)
            col = arrow.cast_column(raw.column(name), spec["type"], name)
            carried = spec.get("types", "*")
            if carried != "*":
                carries = arrow.np_bool(pc.is_in(etype, pa.array(list(carried), pa.string())))
                col.bad &= carries
                values = pc.if_else(pa.array(carries), col.values, pa.scalar(None, col.values.type))
            else:
                values = col.values
            _raise_bad(col, where, name)
            columns[name] = values
            raw = raw.drop_columns([name])
    else:
        for name in raw.column_names:
            if name in RESERVED or name in (type_col, time_col):
                continue
            _refuse_unsupported(raw, name, where)
            columns[name] = _inferred(raw.column(name), name, where)
            raw = raw.drop_columns([name])
    del raw
    for name, col in columns.items():  # one column at a time: contiguous, as the engine reads it
        if isinstance(col, pa.ChunkedArray) and col.num_chunks > 1:
            columns[name] = col.combine_chunks()
            del col
    table = pa.table(columns) if n else pa.table({k: v.slice(0, 0) for k, v in columns.items()})
    pa.default_memory_pool().release_unused()  # the raw text's memory back to the system
    return table


def _dictionary_types(col: Any) -> Any | None:
    """A dictionary-encoded type column (CSV without a stream schema) kept encoded, with one
    dictionary for all its chunks; None for any other column, or where a dictionary holds
    empty text (as_text then makes it null)."""
    import pyarrow as pa

    if not pa.types.is_dictionary(col.type) or not pa.types.is_string(col.type.value_type):
        return None
    if isinstance(col, pa.ChunkedArray):
        col = col.unify_dictionaries()
        values = col.chunk(0).dictionary if col.num_chunks else pa.array([], pa.string())
    else:
        values = col.dictionary
    if "" in values.to_pylist():
        return None
    return col


def _raise_bad(typed: arrow.Typed, where: Callable[[int], str], column: str) -> None:
    first = typed.first_bad()
    if first is not None:
        raise EventFileError(f"{where(first)}: column '{column}': {typed.reason_of(first)}")


def _refuse_unsupported(raw: Any, name: str, where: Callable[[int], str], role: str = "attribute") -> None:
    """Refuse a column of an Arrow type the typing rules do not read (``arrow.arrow_type_problem``),
    naming the first row that holds a value (the file alone when none does)."""
    col = raw.column(name)
    problem = arrow.arrow_type_problem(col.type, role)
    if problem is not None:
        hits = np.flatnonzero(arrow.np_bool(col.is_valid()))
        at = where(int(hits[0])) if len(hits) else str(getattr(where, "path", "<events>"))
        raise EventFileError(f"{at}: column '{name}': {problem}")
    if isinstance(where, _ParquetRows):  # CSV and JSON text is checked as it is read
        bad = arrow.invalid_utf8(col)
        if bad is not None:
            raise EventFileError(f"{where(bad[0])}: column '{name}': not UTF-8 text (byte 0x{bad[1]:02x})")


def _inferred(col: Any, name: str, where: Callable[[int], str]) -> Any:
    """Without a schema: all-integer columns become int64, all-number columns float64."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_int64(col.type):
        return col  # as it is, chunks and all: an int64 column already is what the rules give
    col = arrow.combined(col)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    kind = col.type
    if pa.types.is_integer(kind):
        typed = arrow.cast_column(col, "long", name)
        _raise_bad(typed, where, name)  # uint64 beyond 2**63 - 1
        return typed.values
    if pa.types.is_floating(kind):
        return col.cast(pa.float64())  # NaN reads as missing, as in every other column
    if pa.types.is_boolean(kind) or pa.types.is_null(kind):
        return col
    # text, and decimals as their exact decimal text: the rules read both alike
    decimals = pa.types.is_decimal(kind)
    text = arrow.as_text(col)
    typed = arrow.cast_column(text, "long", name)
    integer = arrow.np_bool(pc.match_substring_regex(pc.ascii_trim_whitespace(text), rules.INTEGER))
    # an all-integer column is a long: in text, every value present written as an integer (an
    # integral decimal, 3.0 or 1e3, makes the column a double, as it reads); a decimal column
    # whose values all are integral is a long
    written = decimals or not (arrow.np_bool(typed.values.is_valid()) & ~integer).any()
    if not typed.bad.any() and written:
        return typed.values
    # an integer beyond 64 bits is no long, and as a double it would lose digits unseen
    beyond = typed.bad & integer
    if beyond.any():
        first = int(np.flatnonzero(beyond)[0])
        raise EventFileError(
            f"{where(first)}: column '{name}': integer {text[first].as_py().strip()} is beyond 64 bits "
            f"(-2**63..2**63-1): declare the column in a stream schema (--stream; as a double it is read rounded)"
        )
    typed = arrow.cast_column(text, "double", name)
    if not typed.bad.any():
        return typed.values
    # numbers and text in one column: a comparison with a number would silently be false
    # for every value, so say so instead of guessing
    present = arrow.np_bool(text.is_valid())
    numbers = present & ~typed.bad
    if numbers.any():
        first_text = int(np.flatnonzero(typed.bad)[0])
        first_number = int(np.flatnonzero(numbers)[0])
        raise EventFileError(
            f"{where(first_text)}: column '{name}': {text[first_text].as_py()!r} is not a number, but "
            f"{where(first_number).rsplit(': ', 1)[-1]} holds {text[first_number].as_py()!r}: "
            f"declare the column's type in a stream schema (--stream)"
        )
    return text
