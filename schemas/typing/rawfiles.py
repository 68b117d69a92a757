"""Checks of a raw event file both readers make before typing its values: whether a CSV
file tokenizes cleanly (RFC 4180) and which records hold bytes that are not UTF-8.

``trendlake eval`` (``engine.files``) stops at the first problem with its line and column;
ingest refuses the file (a CSV file that does not tokenize) or quarantines the record
(bytes that are not UTF-8) with the same reason. Plain Python and numpy over the file's
bytes: neither Arrow nor Spark.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CSV_SEPARATORS = (ord(","), ord("\n"), ord("\r"))
BOM = b"\xef\xbb\xbf"


def csv_token_problem(path: Any) -> str | None:
    """None when the CSV file tokenizes cleanly by RFC 4180, else ``"line N: <why>"``.

    Not clean: a quoted field not closed before the end of the file (a stray quote turns the
    rest of the file into one field), and text after a field's closing quote other than a
    separator or a line break (``"ab"c``). A quote inside a field that does not start with
    one is an ordinary character (``5"``), as in every CSV reader. A vectorized pass over the
    quote characters proves the common file clean; Python's strict ``csv`` reader finds the
    line of a problem (and clears a file whose quotes are only ordinary characters)."""
    import mmap

    with open(path, "rb") as fh:
        if fh.seek(0, 2) == 0:
            return None
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data.find(b'"') < 0:
                return None
            start = len(BOM) if data[: len(BOM)] == BOM else 0
            if _quotes_pair_cleanly(data, start):
                return None
    return _strict_csv_problem(path)


def _quotes_pair_cleanly(data: Any, start: int) -> bool:
    """Pairing the quote characters in order as (opening, closing), does every opening one
    start a field (or directly follow a closing one: a doubled quote) and every closing one
    end a field (or directly precede an opening one)? Then every quote is a field's quote or
    a doubled one, and the file tokenizes cleanly."""
    bytes_ = np.frombuffer(data, np.uint8)
    try:
        n = len(bytes_)
        block = 1 << 26
        quotes = np.concatenate([np.flatnonzero(bytes_[at : at + block] == 34) + at for at in range(0, n, block)])
        if len(quotes) % 2:
            return False
        opening, closing = quotes[0::2], quotes[1::2]
        before = bytes_[np.maximum(opening - 1, 0)]
        opens_field = _separator(before) | (opening == start)
        opens_field[1:] |= opening[1:] == closing[:-1] + 1
        after = bytes_[np.minimum(closing + 1, n - 1)]
        ends_field = _separator(after) | (closing == n - 1)
        ends_field[:-1] |= closing[:-1] + 1 == opening[1:]
        return bool(opens_field.all() and ends_field.all())
    finally:
        del bytes_


def _separator(b: np.ndarray) -> np.ndarray:
    comma, lf, cr = CSV_SEPARATORS
    return (b == comma) | (b == lf) | (b == cr)


def _strict_csv_problem(path: Any) -> str | None:
    import csv
    import sys

    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
            reader = csv.reader(fh, strict=True)
            record_start = 1
            try:
                for _ in reader:
                    record_start = reader.line_num + 1
            except csv.Error as err:
                if "end of data" in str(err) or "EOF" in str(err):
                    return (f"line {record_start}: a quoted field is not closed before the end of the file "
                            "(a stray '\"'?)")
                return (f"line {reader.line_num}: text after the closing quote of a field "
                        "(a quote inside a quoted field is written twice: \"\")")
    finally:
        csv.field_size_limit(limit)
    return None


def utf8_problems(path: Any, limit: int | None = 1) -> dict[int, str]:
    """Records of a CSV file holding bytes that are not UTF-8: ``{line the record starts on:
    "column 'c': not UTF-8 text (byte 0xNN)"}``, at most ``limit`` of them (None: all); the
    header line names no column."""
    import csv
    import sys

    found: dict[int, str] = {}
    old = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
            reader = csv.reader(fh)
            header: list[str] | None = None
            start = 1
            for record in reader:
                if header is None:
                    header = record
                for i, value in enumerate(record):
                    bad = first_undecodable_byte(value)
                    if bad is not None:
                        column = header[i] if record is not header and i < len(header) else None
                        where = f"column '{column}': " if column is not None else ""
                        found[start] = f"{where}not UTF-8 text (byte 0x{bad:02x})"
                        break
                if limit is not None and len(found) >= limit:
                    break
                start = reader.line_num + 1
    finally:
        csv.field_size_limit(old)
    return found


def json_utf8_problems(path: Any, limit: int | None = 1) -> dict[int, str]:
    """Lines of a JSON-lines file holding bytes that are not UTF-8, as ``utf8_problems``: the
    column is the key whose value holds them, where the line is a JSON object."""
    import json

    found: dict[int, str] = {}
    line_no = 0
    with open(path, "rb") as fh:
        for chunk in fh:
            for raw in chunk.splitlines() or [b""]:  # a lone CR ends a line too
                line_no += 1
                try:
                    raw.decode("utf-8")
                    continue
                except UnicodeDecodeError as err:
                    byte = raw[err.start]
                text = raw.decode("utf-8", "surrogateescape")
                where = ""
                try:
                    row = json.loads(text)
                except ValueError:
                    row = None
                if isinstance(row, dict):
                    for key, value in row.items():
                        if first_undecodable_byte(str(key)) is not None:
                            break  # in a key: no column to name
                        if first_undecodable_byte(json.dumps(value, ensure_ascii=False)) is not None:
                            where = f"column '{key}': "
                            break
                found[line_no] = f"{where}not UTF-8 text (byte 0x{byte:02x})"
                if limit is not None and len(found) >= limit:
                    return found
    return found



def first_undecodable_byte(text: str) -> int | None:
    """The first byte that was not UTF-8 in text decoded with ``surrogateescape`` (None: none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return ord(text[err.start]) - 0xDC00
    return None

