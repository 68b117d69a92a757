"""Ingest at the edges of input typing, as ``eval`` reads the same files (one set of rules):
a CSV that does not tokenize cleanly is refused with the line, records holding bytes that
are not UTF-8 are quarantined with line and column, Parquet columns of types the rules do
not read are refused naming row and column, integers beyond 64 bits are quarantined (never
stored as doubles), absurd time stamps are quarantined with a one-line reason, and a column
the stream schema declares ``string`` keeps its text. Every row read is stored or
quarantined, and a rerun changes nothing."""

from __future__ import annotations

import decimal
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from trendlake.engine.errors import EventFileError
from trendlake.engine.files import read_event_table
from trendlake.jobs import lake as lakelib
from trendlake.jobs.ingest import ingest

pytestmark = pytest.mark.spark

SCHEMA = {
    "stream": "edges", "time_column": "ts", "type_column": "type", "event_types": ["A", "B"],
    "attributes": {
        "x": {"type": "long", "types": "*", "required": False},
        "y": {"type": "double", "types": "*", "required": False},
        "note": {"type": "string", "types": "*", "required": False},
    },
}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def versions(lake: lakelib.Lake) -> tuple:
    return tuple(lake.version(t) for t in ("bronze/edges", "quarantine/edges", "ingest_log/edges"))


def run_twice(tmp_path: Path, spark, landing: Path):
    """Ingest the landing folder, then again: the second run must change no table."""
    report = ingest(tmp_path / "lake", SCHEMA, landing, spark=spark)
    lake = lakelib.Lake(tmp_path / "lake")
    before = versions(lake)
    again = ingest(tmp_path / "lake", SCHEMA, landing, spark=spark)
    assert versions(lake) == before
    assert again.rows_read == 0 and again.files_refused == report.files_refused
    return report, lake


def eval_error(path: Path) -> str:
    with pytest.raises(EventFileError) as err:
        read_event_table(path, SCHEMA)
    return str(err.value)


def test_files_and_rows_at_the_typing_edges(tmp_path: Path, spark) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    # a stray quote: the rest of the file would be one field
    (landing / "a_stray.csv").write_text(
        "type,ts,x,y,note\nA,1767607380,1,,a\nA,1767607381,2,,\"b\nA,1767607382,3,,c\nB,1767607383,,0.5,d\n")
    (landing / "b_after_quote.csv").write_text('type,ts,x,y,note\nA,1767607380,1,,"a"x\n')
    # bytes that are not UTF-8 past the first block the header is decoded with
    filler = "".join(f"A,{1767607380 + i},{i},,fill\n" for i in range(600))
    (landing / "c_latin.csv").write_bytes(
        ("type,ts,x,y,note\n" + filler).encode() + b"B,1767608000,7,,caf\xe9\nB,1767608001,8,,ok\n")
    (landing / "d_latin.jsonl").write_bytes(
        b'{"type": "A", "ts": 1767607380, "note": "caf\xe9"}\n{"type": "B", "ts": 1767607381, "note": "007"}\n')
    (landing / "e_edges.csv").write_text(
        "type,ts,x,y,note\n"
        "A,1767607380,99999999999999999999,,wide\n"      # beyond 64 bits: no long, never a double
        "A,1.7e308,1,,absurd\n"                           # no time at all
        "A,-1e300,1,,absurd\n"
        "A,1767607381,9223372036854775807,,007\n"         # the int64 maximum, a string of digits
        "B,1767607382,-9223372036854775808,1e400, 7 \n"   # the int64 minimum; 1e400 is no double
        'B,1767607383,,0.1,"5"" screen"\n'
    )
    report, lake = run_twice(tmp_path, spark, landing)

    assert set(report.files_refused) == {"a_stray.csv", "b_after_quote.csv"}
    assert report.files_refused["a_stray.csv"].startswith("line 3: a quoted field is not closed")
    assert report.files_refused["b_after_quote.csv"].startswith("line 2: text after the closing quote")
    # eval stops on the same files with the same line
    for name in ("a_stray.csv", "b_after_quote.csv"):
        assert eval_error(landing / name) == f"{landing / name}: {report.files_refused[name]}"

    quarantine = {(r["source_file"], r["source_line"]): r["reason"] for r in lake.read_arrow("quarantine/edges").to_pylist()}
    assert quarantine == {
        ("c_latin.csv", 602): "column 'note': not UTF-8 text (byte 0xe9)",
        ("d_latin.jsonl", 1): "column 'note': not UTF-8 text (byte 0xe9)",
        ("e_edges.csv", 2): "attribute 'x' is not a long: '99999999999999999999'",
        ("e_edges.csv", 3): "ts 1.7e308 is no time: far outside the years 1900..2299 in every time unit",
        ("e_edges.csv", 4): "ts -1e300 is no time: far outside the years 1900..2299 in every time unit",
        ("e_edges.csv", 6): "attribute 'y' is not a double: '1e400'",
    }
    # eval names the first of each file's bad rows alike
    assert eval_error(landing / "c_latin.csv") == f"{landing / 'c_latin.csv'}: line 602: column 'note': not UTF-8 text (byte 0xe9)"
    assert eval_error(landing / "e_edges.csv") == (
        f"{landing / 'e_edges.csv'}: line 3: column 'ts': "
        "ts 1.7e308 is no time: far outside the years 1900..2299 in every time unit")

    bronze = lake.read_arrow("bronze/edges").to_pylist()
    edges = sorted(((r["x"], r["y"], r["note"]) for r in bronze if r["source_file"] != "c_latin.csv"),
                   key=repr)
    assert edges == sorted([(None, None, "007"), (9223372036854775807, None, "007"), (None, 0.1, '5" screen')],
                           key=repr)
    assert all(type(r["x"]) is int for r in bronze if r["x"] is not None)
    assert sum(1 for r in bronze if r["source_file"] == "c_latin.csv") == 601
    assert report.rows_read == report.rows_good + report.rows_bad == len(bronze) + len(quarantine)


def test_parquet_types_the_rules_do_not_read_are_refused(tmp_path: Path, spark) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    ts = pa.array([1767607380, 1767607381], pa.int64())
    refused = {
        "a_timestamp.parquet": ("x", pa.array([None, datetime(2026, 1, 1)], pa.timestamp("us")), "timestamp[us] column"),
        "b_date.parquet": ("note", pa.array([None, datetime(2026, 1, 1).date()], pa.date32()), "date32[day] column"),
        "c_binary.parquet": ("note", pa.array([None, b"7"], pa.binary()), "binary data"),
        "d_struct.parquet": ("x", pa.array([None, {"v": 1}], pa.struct([("v", pa.int64())])), "a JSON object"),
        "e_list.parquet": ("y", pa.array([None, [1.0]], pa.list_(pa.float64())), "a list"),
        "f_duration.parquet": ("x", pa.array([None, 5], pa.duration("s")), "duration[s] column"),
    }
    for name, (column, values, _) in refused.items():
        pq.write_table(pa.table({"type": ["A", "B"], "ts": ts, column: values}), landing / name)
    pq.write_table(pa.table({
        "type": ["A", "A", "B", "B", "B"],
        "ts": pa.array([1767607380, 1767607381, 1767607382, 1767607383, 1767607384], pa.int64()),
        "x": pa.array([decimal.Decimal(2**63 - 1), decimal.Decimal(10**20), None, decimal.Decimal(-(2**63)), None],
                      pa.decimal128(38, 0)),
        "y": pa.array([None, None, 0.1, None, 2.5], pa.float32()),
        "note": pa.array(["007", None, "1e3", None, None]).dictionary_encode(),
    }), landing / "g_mapped.parquet")
    pq.write_table(pa.table({
        "type": ["A", "B"], "ts": pa.array([1767607380, 1767607381], pa.int64()),
        "x": pa.array([2**64 - 1, 5], pa.uint64()),
    }), landing / "h_unsigned.parquet")
    latin = pa.array([b"ok", b"caf\xe9"], pa.binary())  # Parquet text Arrow does not check on writing
    latin = pa.Array.from_buffers(pa.string(), len(latin), latin.buffers(), null_count=0)
    pq.write_table(pa.table({"type": ["A", "B"], "ts": ts, "note": latin}), landing / "i_latin.parquet")
    refused["i_latin.parquet"] = ("note", None, "not UTF-8 text (byte 0xe9)")
    report, lake = run_twice(tmp_path, spark, landing)

    assert sorted(report.files_refused) == sorted(refused)
    for name, (column, _, what) in refused.items():
        reason = report.files_refused[name]
        assert reason.startswith(f"row 2: column '{column}': ") and what in reason, reason
        assert eval_error(landing / name) == f"{landing / name}: {reason}"

    quarantine = {(r["source_file"], r["source_line"]): r["reason"] for r in lake.read_arrow("quarantine/edges").to_pylist()}
    assert quarantine == {
        ("g_mapped.parquet", 2): "attribute 'x' is not a long: '100000000000000000000'",
        ("h_unsigned.parquet", 1): "attribute 'x' is not a long: '18446744073709551615'",
    }
    assert eval_error(landing / "g_mapped.parquet").endswith(
        "g_mapped.parquet: row 2: column 'x': attribute 'x' is not a long: '100000000000000000000'")
    assert eval_error(landing / "h_unsigned.parquet").endswith(
        "h_unsigned.parquet: row 1: column 'x': attribute 'x' is not a long: '18446744073709551615'")

    # the rows stored are what eval reads from the same file, value for value and type for type
    bronze = sorted(lake.read_arrow("bronze/edges").to_pylist(), key=lambda r: r["ts"])
    good = pa.table({k: v for k, v in pq.read_table(landing / "g_mapped.parquet").to_pydict().items()})
    good = good.filter(pa.array([True, False, True, True, True]))
    pq.write_table(good, tmp_path / "good.parquet")
    evaluated = read_event_table(tmp_path / "good.parquet", SCHEMA).to_pylist()
    stored = [r for r in bronze if r["source_file"] == "g_mapped.parquet"]
    assert len(stored) == len(evaluated) == 4
    for s, e in zip(stored, evaluated, strict=True):
        assert (s["ts"] - EPOCH) // timedelta(microseconds=1) == e["ts"]
        for a in ("x", "y", "note"):
            assert (type(s[a]), repr(s[a])) == (type(e[a]), repr(e[a])), (a, s[a], e[a])
    assert [r["x"] for r in stored] == [2**63 - 1, None, -(2**63), None]
    assert [r["note"] for r in stored] == ["007", "1e3", None, None]
    assert [r["y"] for r in stored] == [None, float(pa.scalar(0.1, pa.float32()).as_py()), None, 2.5]
    assert report.rows_read == report.rows_good + report.rows_bad == len(bronze) + len(quarantine)


def test_declared_strings_keep_their_text_in_bronze_as_in_eval(tmp_path: Path, spark) -> None:
    texts = ["007", " 7 ", "1e3", "+7", "-0", "3.0", "true", "0x10", "9223372036854775808", "nan", "7"]
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "notes.csv").write_text(
        "type,ts,note\n" + "".join(f'A,{1767607380 + i},"{t}"\n' for i, t in enumerate(texts)))
    (landing / "notes.jsonl").write_text(
        "".join(json.dumps({"type": "B", "ts": 1767607400 + i, "note": t}) + "\n" for i, t in enumerate(texts)))
    # JSON numbers in the string column: stored as Spark's text of them, which eval gives too
    numbers = [1.0, 1e3, 7, 0.1, 1.5, -0.0, 1e20, 2.5e-5, 12345678.5, True, 99999999999999999999]
    (landing / "numbers.jsonl").write_text(
        "".join(json.dumps({"type": "A", "ts": 1767607500 + i, "note": v}) + "\n" for i, v in enumerate(numbers)))
    report, lake = run_twice(tmp_path, spark, landing)
    assert (report.rows_good, report.rows_bad) == (2 * len(texts) + len(numbers), 0)
    bronze = sorted(lake.read_arrow("bronze/edges").to_pylist(), key=lambda r: r["ts"])
    for name, etype in (("notes.csv", "A"), ("notes.jsonl", "B")):
        stored = [r["note"] for r in bronze if r["type"] == etype and r["source_file"] == name]
        assert stored == texts
        assert read_event_table(landing / name, SCHEMA).column("note").to_pylist() == texts
    stored = [r["note"] for r in bronze if r["source_file"] == "numbers.jsonl"]
    assert stored == read_event_table(landing / "numbers.jsonl", SCHEMA).column("note").to_pylist()
    assert stored[:3] == ["1.0", "1000.0", "7"]
