"""What ingest does with a landing folder's entries before Spark reads anything (no Spark here)."""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from trendlake.jobs.ingest.errors import FileRefused
from trendlake.jobs.ingest.landing import csv_header_ok, scan_file, scan_landing
from trendlake.jobs.ingest.read import copy_without, parquet_for_spark


def test_links_fifos_and_folders_are_skipped_with_their_reason(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    (landing / "a.csv").write_text("type,ts\n")
    (landing / "passwd.csv").symlink_to(secret)
    (landing / "dangling.jsonl").symlink_to(tmp_path / "nowhere")
    (landing / "folder.csv").mkdir()
    os.mkfifo(landing / "pipe.jsonl")
    (landing / "notes.txt").write_text("hello")
    (landing / ".hidden.csv").write_text("x")
    files, skipped = scan_landing(landing)
    assert [p.name for p in files] == ["a.csv"]
    assert skipped == {
        "passwd.csv": "symbolic link (links are never followed)",
        "dangling.jsonl": "symbolic link (links are never followed)",
        "folder.csv": "directory (sub-folders are not read)",
        "pipe.jsonl": "FIFO (named pipe)",
        "notes.txt": "not an event file (suffixes read: .csv, .json, .jsonl, .ndjson, .parquet)",
        ".hidden.csv": "hidden or marker file (name starts with '.' or '_')",
    }


def test_scan_file_never_opens_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "t.csv"
    target.write_text("a\n")
    link = tmp_path / "l.csv"
    link.symlink_to(target)
    with pytest.raises(FileRefused, match="cannot open"):
        scan_file(link)


TERMINATOR = re.compile(rb"\r\n|\r|\n")  # how Spark's text reader (Hadoop's LineReader) ends lines


@given(
    data=st.lists(st.sampled_from([b"a", b"bb", b"{}", b" ", b"\t", b"\x00", b'"', b"\r", b"\n", b"\r\n", b"\xff"]),
                  max_size=60).map(b"".join)
    | st.binary(max_size=200),
    limit=st.integers(min_value=0, max_value=6),
)
def test_scan_file_finds_exactly_the_lines_over_the_limit(tmp_path_factory, data, limit) -> None:
    """... and the lines Spark's line-by-line CSV reader drops (no byte above a space, Java's
    ``trim``), and whether any line holds an odd number of quotes (a record may span lines)."""
    path = tmp_path_factory.mktemp("scan") / "f.jsonl"
    path.write_bytes(data)
    scanned = scan_file(path, line_limit=limit)
    assert scanned.checksum == hashlib.sha256(data).hexdigest()
    ends = list(TERMINATOR.finditer(data))
    assert scanned.newlines == len(ends)
    lines, pos = [], 0
    for m in ends:
        lines.append((pos, data[pos:m.start()]))
        pos = m.end()
    if pos < len(data):
        lines.append((pos, data[pos:]))
    want = [(n, offset, len(line)) for n, (offset, line) in enumerate(lines, start=1) if len(line) > limit]
    assert scanned.long_lines == want
    assert scanned.lines == len(lines)
    assert scanned.blank_lines == [n for n, (_, line) in enumerate(lines, start=1) if not any(b > 32 for b in line)]
    assert scanned.odd_quotes == any(line.count(b'"') % 2 for _, line in lines)
    assert scanned.terminators == {m.group().decode() for m in ends}
    assert scanned.control_blank == any(not any(b > 32 for b in line) and line.strip(b" ") for _, line in lines)
    # the copy Spark reads keeps every other line, at the same line number; long ones are blank
    copy = path.with_name("copy.jsonl")
    copy_without(path, copy, [(o, n) for _, o, n in scanned.long_lines])
    kept = TERMINATOR.split(copy.read_bytes())
    for n, (_, line) in enumerate(lines, start=1):
        assert kept[n - 1] == (b" " if len(line) > limit else line)


def test_a_crlf_split_across_read_chunks_is_one_terminator(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"x" * ((1 << 22) - 1) + b"\r\nyy\r")
    scanned = scan_file(path, line_limit=10)
    assert scanned.newlines == 2
    assert scanned.long_lines == [(1, 0, (1 << 22) - 1)]


@pytest.mark.parametrize(("head", "tail", "blank", "odd"), [
    (b'"' + b" " * ((1 << 22) - 2), b'"\n', [], False),  # a line's two quotes in two read chunks
    (b'"' + b" " * ((1 << 22) - 2), b"\n", [], True),
    (b" " * ((1 << 22) + 5), b"\n", [1], False),  # a blank line longer than a chunk
    (b" " * ((1 << 22) - 1), b"x\n", [], False),  # its one visible byte in the next chunk
])
def test_quotes_and_blank_lines_are_counted_across_read_chunks(tmp_path: Path, head, tail, blank, odd) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(head + tail + b"a\n")
    scanned = scan_file(path, line_limit=1 << 23)
    assert (scanned.lines, scanned.blank_lines, scanned.odd_quotes) == (2, blank, odd)


def test_nanosecond_parquet_is_converted_and_lost_precision_is_said(tmp_path: Path) -> None:
    ns = pa.array([1_767_254_400_000_000_001, 1_767_254_460_000_000_000, None], pa.timestamp("ns", tz="UTC"))
    path = tmp_path / "pandas.parquet"
    pq.write_table(pa.table({"type": ["A", "B", "C"], "ts": ns, "x": [1, 2, 3]}), path)
    out, note = parquet_for_spark(path, tmp_path / "work")
    assert out != path and out.name == path.name
    table = pq.read_table(out)
    assert table.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert table.column("ts").to_pylist() == [
        datetime(2026, 1, 1, 8, tzinfo=UTC), datetime(2026, 1, 1, 8, 1, tzinfo=UTC), None]
    assert table.column("x").to_pylist() == [1, 2, 3]
    assert note == ("pandas.parquet: nanosecond timestamps of ts converted to microseconds; "
                    "1 value had sub-microsecond digits, truncated (precision lost)")
    exact = tmp_path / "exact.parquet"
    pq.write_table(pa.table({"ts": ns.slice(1)}), exact)
    assert parquet_for_spark(exact, tmp_path / "work2")[1] == (
        "exact.parquet: nanosecond timestamps of ts converted to microseconds")
    micro = tmp_path / "micro.parquet"
    pq.write_table(pa.table({"ts": pa.array([0], pa.timestamp("us"))}), micro)
    assert parquet_for_spark(micro, tmp_path / "work3") == (micro, None)


def test_files_spark_cannot_read_are_refused_with_the_reason(tmp_path: Path) -> None:
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"\x00\x01 not parquet")
    with pytest.raises(FileRefused, match="not a readable Parquet file"):
        parquet_for_spark(junk, tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(FileRefused, match="empty CSV file"):
        csv_header_ok(empty)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"typ\xe9,ts\nA,1\n")
    with pytest.raises(FileRefused, match="line 1: not UTF-8 text"):
        csv_header_ok(latin)


def test_lets_put_each_value_in_the_first_layer_after_the_values_it_reads() -> None:
    from trendlake.schemas.typing.spark import Lets
    from trendlake.schemas.typing.sqlexpr import call, col, lit

    lets = Lets(["ts", "_let0", "_line"])  # an input column already starts with _let
    assert lets.prefix == "__let"
    text = lets.let(call("trim", col("ts")))
    number = lets.let(text.try_cast("double"))
    also = lets.let(call("upper", col("ts")))  # reads no let: first layer
    both = lets.let(number + call("length", text) + call("length", also))
    quoted = lets.let(call("concat", lit("`__let9`"), col("ts")))  # a literal that looks like a let
    assert [[name for name, _ in layer] for layer in lets.layers] == [
        ["__let0", "__let2", "__let4"], ["__let1"], ["__let3"]]
    assert str(both) == "`__let3`" and str(quoted) == "`__let4`"
    assert "`__let0`" in str(lets.layers[1][0][1])  # the number reads the trimmed text by name
