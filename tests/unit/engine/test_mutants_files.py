"""The engine's event-file reader (engine/files.py), checked from the engine tier.

Written for mutants of scripts/mutation.py that the engine tests let live
(docs/testing.md, "Mutation testing"): where a reader error points (lines and
rows counted from 1, blank lines and quoted line breaks included), the header
rules, records longer than a small read block. Expected values come from the
file contents written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trendlake.engine import files
from trendlake.engine.errors import EventFileError
from trendlake.engine.files import read_event_table


def test_a_header_column_without_a_name_is_refused_on_line_1(tmp_path: Path) -> None:
    events = tmp_path / "noname.csv"
    events.write_text("type,ts,,x\nA,1,2,3\n")
    with pytest.raises(EventFileError, match=r"noname\.csv: line 1: a column of the header has no name"):
        read_event_table(events)


def test_a_record_longer_than_a_small_block_is_read_whole(tmp_path: Path) -> None:
    # CSV_BLOCK_SIZE is the longest record the reader takes: one event with a 4 KiB text value
    note = "n" * 4096
    events = tmp_path / "long.csv"
    events.write_text(f"type,ts,note\nA,1,{note}\nB,2,short\n")
    table = read_event_table(events)
    assert table.column("note").to_pylist() == [note, "short"]
    assert table.column("ts").to_pylist() == [1_000_000, 2_000_000]
    assert files.CSV_BLOCK_SIZE >= 1 << 20  # documented: a record may be up to this long


def test_a_record_longer_than_a_parallel_block_is_read_again_in_large_blocks(tmp_path: Path, monkeypatch) -> None:
    # the first read's small blocks (parsed in parallel) cannot hold the 4 KiB record: the
    # file is read again in CSV_BLOCK_SIZE blocks, with the same table as a result
    monkeypatch.setattr(files, "CSV_PARALLEL_BLOCK", 1024)
    note = "n" * 4096
    events = tmp_path / "long.csv"
    rows = [f"A,{i},x{i}" for i in range(300)]  # several small blocks before the long record
    events.write_text("type,ts,note\n" + "\n".join(rows) + f"\nB,400,{note}\n")
    table = read_event_table(events)
    assert table.column("note").to_pylist() == [f"x{i}" for i in range(300)] + [note]
    assert table.column("type").to_pylist() == ["A"] * 300 + ["B"]


def test_wrong_field_count_names_the_physical_line(tmp_path: Path) -> None:
    # the record on physical line 4 (line 3 holds a quoted line break) has 2 fields, not 3
    events = tmp_path / "fields.csv"
    events.write_text('type,ts,note\nA,1,"one\ntwo"\nB,2\nC,3,x\n')
    assert files._line_with_fields_other_than(events, 3) == "line 4"
    events.write_text("type,ts,note\nA,1,x\nB,2,y\n")
    assert files._line_with_fields_other_than(events, 3) == "a row"


def test_json_lines_blank_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    # mixed kinds in column x send the file through the line-by-line reader
    events = tmp_path / "mixed.jsonl"
    events.write_text('{"type": "A", "ts": 1, "x": 1}\n\n{"type": "B", "ts": 2, "x": "a"}\n   \n'
                      '{"type": "C", "ts": 3}\n')
    raw = files._read_json(events)
    assert raw.column("type").to_pylist() == ["A", "B", "C"]
    assert raw.column("x").to_pylist() == ["1", "a", None]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "A", "ts": 1, "x": 1}\n\n{"type": "B", "ts": 2, "x": "a"}\n{"type": \n')
    with pytest.raises(EventFileError, match=r"bad\.jsonl: line 4: not JSON"):
        files._read_json(bad)


def test_a_bad_parquet_value_names_its_row_from_1(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = {"type_column": "type", "time_column": "ts", "time_unit": "seconds",
              "attributes": {"x": {"type": "long"}}}
    events = tmp_path / "rows.parquet"
    # the second row (index 1) holds the fraction: "row 2"
    pq.write_table(pa.table({"type": ["A", "A", "A", "A"], "ts": pa.array([1, 2, 3, 4], pa.int64()),
                             "x": ["1", "2.5", "3", "4"]}), events)
    with pytest.raises(EventFileError, match=r"rows\.parquet: row 2: column 'x'"):
        read_event_table(events, schema)
    assert files._ParquetRows(events)(1) == f"{events}: row 2"
    assert files._ParquetRows(events)(4) == f"{events}: row 5"
    lines = tmp_path / "two.jsonl"
    lines.write_text('{"type": "A", "ts": 1}\n\n{"type": "B", "ts": 2}\n')
    assert files._JsonLines(lines)(1) == f"{lines}: line 3"
    assert files._JsonLines(lines)(7) == f"{lines}: record 8"  # past the end: counted from 1


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_only_the_columns_a_plan_needs_are_read(tmp_path: Path, suffix: str) -> None:
    """Without a stream schema ``columns`` prunes the attributes (type, ts and seq stay), and
    a plan gives the same rows over the pruned table as over the whole one."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from trendlake import engine, optimizer

    rows = [{"type": "ABC"[i % 3], "ts": i // 2, "seq": i, "g": i % 4, "x": i % 5, "note": f"n{i}"}
            for i in range(60)]
    events = tmp_path / f"events{suffix}"
    if suffix == ".csv":
        events.write_text("type,ts,seq,g,x,note\n" + "".join(
            f"{r['type']},{r['ts']},{r['seq']},{r['g']},{r['x']},{r['note']}\n" for r in rows))
    elif suffix == ".jsonl":
        events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), events)
    text = ("QUERY q RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, B+, C) GROUP-BY g "
            "WITHIN 10 seconds SLIDE 5 seconds;")
    plan = engine.load_plan(optimizer.build_plan(optimizer.compile_workload(text)))
    assert engine.columns_needed(plan) == {"g", "x"}
    pruned = read_event_table(events, columns=engine.columns_needed(plan))
    whole = read_event_table(events)
    assert pruned.column_names == ["type", "ts", "seq", "g", "x"]
    assert whole.column_names == ["type", "ts", "seq", "g", "x", "note"]
    got = engine.evaluate(plan, pruned)
    assert got and got == engine.evaluate(plan, whole)


def test_a_record_with_another_number_of_fields_is_refused_in_an_unread_column(tmp_path: Path) -> None:
    events = tmp_path / "fields.csv"
    events.write_text("type,ts,note\nA,1,x\nB,2,y,z\n")
    with pytest.raises(EventFileError, match=r"fields\.csv: line 3: 4 fields where the header has 3"):
        read_event_table(events, columns=set())


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ('"type","ts"\nA,1\nB,2\n', False),  # a quoted header alone
        ("type,ts\nA,1\n", False),
        ('type,ts\n"A",1\n', True),
        ('"ty\npe",ts\nA,1\n', True),  # a header field holding a line break: looked at whole
        ('type,"ts"', True),  # one line without its line break
        ("", False),
    ],
)
def test_quoted_records_are_found_after_the_header(tmp_path: Path, text: str, quoted: bool) -> None:
    path = tmp_path / "q.csv"
    path.write_text(text)
    assert files._has_quoted_records(path) is quoted


def test_a_quoted_line_break_is_read_after_a_quoted_header(tmp_path: Path) -> None:
    events = tmp_path / "nl.csv"
    events.write_text('"type","ts","note"\nA,1,"two\nlines"\nB,2,x\n')
    assert read_event_table(events).column("note").to_pylist() == ["two\nlines", "x"]
