"""`trendlake eval` on awkward input files: one-line errors naming file, line and column,
or the right answer where the input is legal (RFC 4180 CSV, BOM, long fields, time units)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.jobs.cli import main

WORKLOAD = """QUERY runs
RETURN COUNT(*), SUM(A.x), SUM(B.y)
PATTERN SEQ(A+, B)
WITHIN 1 hour;
"""

SCHEMA = {
    "stream": "inputs",
    "time_column": "ts",
    "type_column": "type",
    "event_types": ["A", "B"],
    "attributes": {
        "x": {"type": "long", "types": ["A"], "required": False},
        "y": {"type": "double", "types": ["B"], "required": False},
        "note": {"type": "string", "types": "*", "required": False},
    },
}
GOOD = "type,ts,x,y,note\nA,1767607380,1,,a\nA,1767607381,2,,b\nB,1767607382,,0.5,c\n"
# SEQ(A+, B) over A(x=1), A(x=2), B(y=0.5): trends {A1 B}, {A2 B}, {A1 A2 B}
EXPECTED = {"COUNT(*)": 3, "SUM(A.x)": 1 + 2 + 3, "SUM(B.y)": 1.5}


def run(capsys, workload: Path, events: Path, schema: Path | None) -> tuple[int, str, str]:
    argv = ["eval", str(workload), "--events", str(events)]
    if schema is not None:
        argv += ["--stream", str(schema)]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def exact(row: dict) -> dict:
    """Each value as (type, repr): 3 is not 3.0, -0.0 is not 0.0, and NaN equals NaN."""
    return {k: (type(v).__name__, repr(v)) for k, v in row.items()}


def result(out: str) -> dict:
    """The one result row's aggregates, compared exactly (``exact``)."""
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 1, rows
    return exact({k: rows[0][k] for k in EXPECTED})


def one_line_error(code: int, out: str, err: str, *parts: str) -> None:
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trendlake: error: "), err
    assert "Traceback" not in err
    for part in parts:
        assert part in lines[0], (part, lines[0])


@pytest.mark.parametrize("with_schema", [True, False])
def test_good_file_gives_the_worked_answer(setup, tmp_path: Path, capsys, with_schema: bool) -> None:
    workload, schema = setup
    events = tmp_path / "good.csv"
    events.write_text(GOOD)
    code, out, err = run(capsys, workload, events, schema if with_schema else None)
    assert code == 0, err
    assert result(out) == exact(EXPECTED)


@pytest.mark.parametrize(
    ("row", "count"),
    [("A,1767607381,2,", 4), ("A,1767607381,2,,b,extra", 6)],
    ids=["too-few-fields", "too-many-fields"],
)
def test_wrong_field_count_names_the_line(setup, tmp_path: Path, capsys, row: str, count: int) -> None:
    workload, schema = setup
    events = tmp_path / "fields.csv"
    lines = GOOD.splitlines()
    lines[2] = row
    events.write_text("\n".join(lines) + "\n")
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), "fields.csv: line 3", f"{count} fields", "header has 5")


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-Infinity", "1_000", "0x10"])
def test_a_non_number_in_a_numeric_attribute(setup, tmp_path: Path, capsys, value: str) -> None:
    workload, schema = setup
    events = tmp_path / "numbers.csv"
    events.write_text(GOOD.replace("B,1767607382,,0.5,c", f"B,1767607382,,{value},c"))
    one_line_error(*run(capsys, workload, events, schema),
                   "numbers.csv: line 4: column 'y'", f"not a double: '{value}'")


def test_a_fraction_in_a_long_attribute(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "numbers.csv"
    events.write_text(GOOD.replace("A,1767607381,2,", "A,1767607381,2.5,"))
    one_line_error(*run(capsys, workload, events, schema), "numbers.csv: line 3: column 'x'", "not a long: '2.5'")


def test_a_json_object_in_a_numeric_attribute(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "objects.jsonl"
    rows = [{"type": "A", "ts": 1767607380, "x": 1}, {"type": "A", "ts": 1767607381, "x": {"v": 2}},
            {"type": "B", "ts": 1767607382, "y": 0.5}]
    events.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), "objects.jsonl: line 2: column 'x'", "JSON object")


def test_json_lines_with_mixed_kinds_follow_the_rules(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "mixed.jsonl"
    rows = [{"type": "A", "ts": "1767607380", "x": "1"}, {"type": "A", "ts": 1767607381, "x": 2},
            {"type": "B", "ts": "2026-01-05T10:03:02Z", "y": 0.5}]
    events.write_text("\n\n".join(json.dumps(r) for r in rows) + "\n")
    code, out, err = run(capsys, workload, events, schema)
    assert code == 0, err
    assert result(out) == exact(EXPECTED)


def test_parquet_decimal_columns_are_numbers(setup, tmp_path: Path, capsys) -> None:
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    workload, schema = setup
    events = tmp_path / "decimal.parquet"
    pq.write_table(pa.table({
        "type": ["A", "A", "B"],
        "ts": pa.array([1767607380, 1767607381, 1767607382], pa.int64()),
        "x": pa.array([decimal.Decimal(1), decimal.Decimal(2), None], pa.decimal128(10, 0)),
        "y": pa.array([None, None, decimal.Decimal("0.50")], pa.decimal128(10, 2)),
    }), events)
    for s in (schema, None):
        code, out, err = run(capsys, workload, events, s)
        assert code == 0, err
        assert result(out) == exact(EXPECTED)


def test_parquet_fraction_in_a_long_column_names_the_row(setup, tmp_path: Path, capsys) -> None:
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    workload, schema = setup
    events = tmp_path / "decimal.parquet"
    pq.write_table(pa.table({
        "type": ["A", "A", "B"],
        "ts": pa.array([1767607380, 1767607381, 1767607382], pa.int64()),
        "x": pa.array([decimal.Decimal("1.00"), decimal.Decimal("2.50"), None], pa.decimal128(10, 2)),
    }), events)
    one_line_error(*run(capsys, workload, events, schema), "decimal.parquet: row 2: column 'x'", "not a long: '2.50'")


def test_epoch_milliseconds_read_as_seconds_is_an_error_saying_so(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "ms.csv"
    events.write_text(GOOD.replace("1767607380,", "1767607380000,"))
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), "ms.csv: line 2: column 'ts'",
                       "ts 1767607380000 is year 57983 as seconds: looks like epoch milliseconds",
                       '"time_unit": "milliseconds"')


def test_declared_time_unit_reads_milliseconds(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    ms = dict(SCHEMA, time_unit="milliseconds")
    schema.write_text(json.dumps(ms))
    events = tmp_path / "ms.csv"
    events.write_text(GOOD.replace("1767607380,", "1767607380000,").replace("1767607381,", "1767607381000,")
                      .replace("1767607382,", "1767607382000,"))
    code, out, err = run(capsys, workload, events, schema)
    assert code == 0, err
    assert result(out) == exact(EXPECTED)
    assert json.loads(out.splitlines()[0])["window_start"] == "2026-01-05T10:00:00Z"


@pytest.mark.parametrize("unit", ["ms", "us", "ns", "s"])
def test_parquet_timestamps_of_any_unit(setup, tmp_path: Path, capsys, unit: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    workload, schema = setup
    per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    events = tmp_path / f"ts_{unit}.parquet"
    pq.write_table(pa.table({
        "type": ["A", "A", "B"],
        "ts": pa.array([t * per_second for t in (1767607380, 1767607381, 1767607382)], pa.timestamp(unit, tz="UTC")),
        "x": pa.array([1, 2, None], pa.int64()),
        "y": pa.array([None, None, 0.5]),
    }), events)
    code, out, err = run(capsys, workload, events, schema)
    assert code == 0, err
    assert result(out) == exact(EXPECTED)


def test_int64_milliseconds_in_parquet(setup, tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    workload, schema = setup
    events = tmp_path / "ms.parquet"
    pq.write_table(pa.table({
        "type": ["A", "A", "B"],
        "ts": pa.array([1767607380000, 1767607381000, 1767607382000], pa.int64()),
        "x": pa.array([1, 2, None], pa.int64()),
        "y": pa.array([None, None, 0.5]),
    }), events)
    one_line_error(*run(capsys, workload, events, schema), "ms.parquet: row 1: column 'ts'", "looks like epoch milliseconds")
    schema.write_text(json.dumps(dict(SCHEMA, time_unit="milliseconds")))
    code, out, err = run(capsys, workload, events, schema)
    assert code == 0, err
    assert result(out) == exact(EXPECTED)


@pytest.mark.parametrize("ts", ["1850-01-01T00:00:00Z", "2400-01-01", "-999999999999999999999"])
def test_times_out_of_range(setup, tmp_path: Path, capsys, ts: str) -> None:
    workload, schema = setup
    events = tmp_path / "range.csv"
    events.write_text(GOOD.replace("1767607381,", f"{ts},"))
    one_line_error(*run(capsys, workload, events, schema), "range.csv: line 3: column 'ts'", "outside 1900..2299")


def test_a_field_over_128_kib_is_read_whole(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "long.csv"
    long = "z" * (200 * 1024)
    events.write_text(GOOD.replace(",,0.5,c", f',,0.5,"{long}"'))
    for s in (schema, None):
        code, out, err = run(capsys, workload, events, s)
        assert code == 0, err
        assert result(out) == exact(EXPECTED)


def test_a_field_beyond_the_block_size_is_an_error(setup, tmp_path: Path, capsys, monkeypatch) -> None:
    from trendlake.engine import files

    workload, schema = setup
    monkeypatch.setattr(files, "CSV_BLOCK_SIZE", 64 * 1024)
    events = tmp_path / "huge.csv"
    events.write_text(GOOD.replace(",,0.5,c", f',,0.5,"{"z" * (200 * 1024)}"'))
    one_line_error(*run(capsys, workload, events, schema), "huge.csv")


def test_a_utf8_bom_is_skipped(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "bom.csv"
    events.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    for s in (schema, None):
        code, out, err = run(capsys, workload, events, s)
        assert code == 0, err
        assert result(out) == exact(EXPECTED)


def test_quoted_line_breaks_stay_in_one_field(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "quoted.csv"
    events.write_text(GOOD.replace(",,a\n", ',,"first line\nsecond, ""quoted"" line"\n')
                      .replace("B,1767607382,,0.5,c", "B,1767607382,,abc,c"))
    # the bad value is on physical line 5: the quoted line break is counted
    one_line_error(*run(capsys, workload, events, schema), "quoted.csv: line 5: column 'y'")
    events.write_text(GOOD.replace(",,a\n", ',,"first line\nsecond, ""quoted"" line"\n'))
    code, out, err = run(capsys, workload, events, schema)
    assert code == 0, err
    assert result(out) == exact(EXPECTED)


def test_read_table_keeps_the_multi_line_value(tmp_path: Path) -> None:
    from trendlake.engine.files import read_event_table

    events = tmp_path / "quoted.csv"
    events.write_text('type,ts,note\r\nA,1,"one\r\ntwo"\r\nB,2,\r\n')
    table = read_event_table(events, None)
    assert table.column("note").to_pylist() == ["one\r\ntwo", None]
    assert table.column("ts").to_pylist() == [1_000_000, 2_000_000]


@pytest.mark.parametrize("text", ["", "type,ts\n", "type,x\nA,1\n", "\xff\xfe", "type,ts\nA,\n", "type,ts\n,5\n"])
def test_degenerate_files_are_one_line_errors_or_empty(setup, tmp_path: Path, capsys, text: str) -> None:
    workload, _ = setup
    events = tmp_path / "odd.csv"
    events.write_bytes(text.encode("latin-1"))
    code, out, err = run(capsys, workload, events, None)
    assert "Traceback" not in err
    if code == 0:
        assert out == ""
    else:
        one_line_error(code, out, err, "odd.csv")


def test_numbers_and_text_in_one_column_without_a_schema(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "mixed.csv"
    events.write_text(GOOD.replace("A,1767607381,2,", "A,1767607381,two,"))
    one_line_error(*run(capsys, workload, events, None), "mixed.csv: line 3: column 'x'", "'two' is not a number",
                   "line 2 holds '1'", "--stream")
    one_line_error(*run(capsys, workload, events, schema), "mixed.csv: line 3: column 'x'", "not a long: 'two'")


def test_eval_imports_no_pipeline_library(tmp_path: Path) -> None:
    """`trendlake eval` runs with Spark, Delta, GE, Airflow, pandas and matplotlib unimportable."""
    import subprocess
    import sys

    workload = tmp_path / "runs.etq"
    workload.write_text(WORKLOAD)
    events = tmp_path / "good.csv"
    events.write_text(GOOD)
    code = (
        "import sys\n"
        "BLOCKED = ('pyspark', 'deltalake', 'great_expectations', 'airflow', 'pandas', 'matplotlib')\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ModuleNotFoundError(f'blocked: {name}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from trendlake.jobs.cli import main\n"
        "rc = main(['eval', sys.argv[1], '--events', sys.argv[2]])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED)\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(workload), str(events)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "LOADED []" in proc.stderr
    assert result(proc.stdout) == exact(EXPECTED)


# cells the typing rules and pyarrow's own inference may read differently
TRICKY = ["5", " 5", "5 ", "\t7", "+5", "-5", "-0", "007", "1e3", "3.0", "3.5", ".5", "5.", "nan", "inf", "-inf",
          "true", "False", "0x10", "0X1f", "1_000", "abc", "", "9223372036854775807", "9223372036854775808",
          "-9223372036854775809", "12345678901234567890123", "2026-01-05", "2026-01-05 10:00:00", "\r5", " "]


@settings(deadline=None)
@given(data=st.data(), n=st.integers(1, 12), stream=st.booleans(), quote_all=st.booleans())
def test_inferred_csv_read_equals_typing_every_column_as_text(
    tmp_path_factory, data, n: int, stream: bool, quote_all: bool
) -> None:
    """Without a stream schema the CSV reader keeps pyarrow's int64 columns: the table (or the
    error) must be what reading every column as text and typing it by the rules gives. A
    file without a quote character is parsed without looking for line breaks in fields:
    the text read always looks for them."""
    from trendlake.engine import files
    from trendlake.engine.errors import EventFileError

    cell = st.one_of(st.sampled_from(TRICKY), st.integers(-(2**70), 2**70).map(str),
                     st.floats(allow_nan=False, allow_infinity=False).map(repr))
    columns = {name: data.draw(st.lists(cell, min_size=n, max_size=n)) for name in ("a", "b")}
    ts = data.draw(st.lists(st.sampled_from(["1767607380", "1767607381", "17676073.5", "2026-01-05T10:00:00Z", "x"]),
                            min_size=n, max_size=n))
    types = data.draw(st.lists(st.sampled_from(["A", "B", "1", "true"]), min_size=n, max_size=n))
    path = tmp_path_factory.mktemp("infer") / "events.csv"

    def quoted(value: str) -> str:
        if not quote_all and not any(c in value for c in ',"\r\n'):
            return value
        return '"' + value.replace('"', '""') + '"'

    header = '"type","ts","a","b"' if data.draw(st.booleans()) else "type,ts,a,b"  # writers often quote it
    lines = [header] + [",".join(quoted(v) for v in row) for row in zip(types, ts, columns["a"], columns["b"], strict=True)]
    path.write_text("\n".join(lines) + "\n")

    def read(**patches: object) -> object:
        with pytest.MonkeyPatch.context() as mp:
            for name, value in patches.items():
                mp.setattr(files, name, value)
            try:
                return files.read_event_table(path)
            except EventFileError as err:
                return f"error: {err}"

    # every column as text, typed by the rules, looking for line breaks in quoted fields
    want = read(_has_hex_prefix=lambda p: True, _has_quoted_records=lambda p: True)
    got = read(STREAM_BYTES=0, CSV_BLOCK_SIZE=256) if stream else read()
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    import pyarrow as pa

    # without a stream schema the event type is dictionary-encoded: the same text either way
    assert pa.types.is_dictionary(got.schema.field("type").type)
    assert pa.types.is_dictionary(want.schema.field("type").type)
    got = got.set_column(0, "type", got.column("type").cast(pa.string()))
    want = want.set_column(0, "type", want.column("type").cast(pa.string()))
    assert got.schema == want.schema, (got.schema, want.schema)
    # cell by cell as repr: -0.0 is not 0.0, and NaN equals NaN
    assert [[repr(v) for v in row.values()] for row in got.to_pylist()] == [
        [repr(v) for v in row.values()] for row in want.to_pylist()
    ]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("", False),
        ("x0\n", False),
        ("0x10", True),
        ("a,b\n1,0X1f\n", True),
        ("type,x\nA,x\nB,xx\n", False),
        ("x" * 200 + "\n", False),  # more x's than looked at one by one: the pair search decides
        ("x" * 200 + ",0x1\n", True),
        ("X" * 200 + ",0x1\n", True),
    ],
)
def test_hex_prefix_scan(tmp_path: Path, text: str, found: bool) -> None:
    from trendlake.engine.files import _has_hex_prefix

    path = tmp_path / "f.csv"
    path.write_text(text)
    assert _has_hex_prefix(path) is found
