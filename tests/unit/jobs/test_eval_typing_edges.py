"""`trendlake eval` at the edges of input typing: every Arrow type mapped to a stream-schema
type or refused naming file, row and column; integers beyond 64 bits never doubles in
disguise; a CSV that does not tokenize cleanly, bytes that are not UTF-8 and absurd time
stamps are one-line errors; a column the stream schema declares ``string`` keeps its text."""

from __future__ import annotations

import csv
import datetime
import decimal
import io
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trendlake.engine.errors import EventFileError
from trendlake.engine.files import read_event_table
from trendlake.schemas.typing import arrow, rawfiles, rules

from tests.typing_cases import ATTRIBUTE_VALUES
from tests.unit.jobs.test_eval_inputs import (
    EXPECTED,
    GOOD,
    SCHEMA,
    exact,
    one_line_error,
    result,
    run,
)

TS = pa.array([1767607380, 1767607381, 1767607382], pa.int64())


def parquet(path: Path, x: Any) -> Path:
    pq.write_table(pa.table({"type": ["A", "A", "B"], "ts": TS, "x": x, "y": pa.array([None, None, 0.5])}), path)
    return path


# Arrow types the rules refuse, as attribute columns: the value sits on row 2 (row 1 is null)
REFUSED = {
    "timestamp": (pa.array([None, datetime.datetime(2026, 1, 1), None], pa.timestamp("us")), "timestamp[us] column"),
    "timestamp-tz": (pa.array([None, 1, None], pa.timestamp("ms", tz="UTC")), "timestamp[ms, tz=UTC] column"),
    "date": (pa.array([None, datetime.date(2026, 1, 1), None], pa.date32()), "date32[day] column"),
    "time": (pa.array([None, 1, None], pa.time64("us")), "time64[us] column"),
    "duration": (pa.array([None, 5, None], pa.duration("s")), "duration[s] column"),
    "binary": (pa.array([None, b"7", None], pa.binary()), "binary data"),
    "large-binary": (pa.array([None, b"7", None], pa.large_binary()), "binary data"),
    "fixed-binary": (pa.array([None, b"77", None], pa.binary(2)), "binary data"),
    "list": (pa.array([None, [1], None], pa.list_(pa.int64())), "a list where a single value belongs"),
    "large-list": (pa.array([None, [1], None], pa.large_list(pa.int64())), "a list where a single value belongs"),
    "fixed-list": (pa.array([None, [1], None], pa.list_(pa.int64(), 1)), "a list where a single value belongs"),
    "struct": (pa.array([None, {"v": 1}, None], pa.struct([("v", pa.int64())])), "a JSON object"),
    "map": (pa.array([None, [("k", 1)], None], pa.map_(pa.string(), pa.int64())), "a map"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_parquet_types_without_a_stream_type_are_refused_naming_row_and_column(
    setup, tmp_path: Path, capsys, name: str
) -> None:
    workload, schema = setup
    values, what = REFUSED[name]
    events = parquet(tmp_path / "typed.parquet", values)
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), "typed.parquet: row 2: column 'x'", what)


@pytest.mark.parametrize("kind", [pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(), pa.uint32(),
                                  pa.uint64(), pa.decimal128(10, 0), pa.decimal128(38, 0), pa.decimal256(40, 0)])
def test_integer_and_scale_0_decimal_parquet_columns_are_exact_longs(setup, tmp_path: Path, capsys, kind) -> None:
    workload, schema = setup
    values = [1, 2, None]
    events = parquet(tmp_path / "ints.parquet", pa.array([decimal.Decimal(v) if v is not None and
                                                          pa.types.is_decimal(kind) else v for v in values], kind))
    for s in (schema, None):
        code, out, err = run(capsys, workload, events, s)
        assert code == 0, err
        assert result(out) == exact(EXPECTED)


@pytest.mark.parametrize(("kind", "top"), [(pa.uint64(), 2**63 - 1), (pa.decimal128(38, 0), 2**63 - 1),
                                           (pa.decimal128(38, 0), -(2**63))])
def test_the_int64_extremes_read_exactly(tmp_path: Path, kind, top: int) -> None:
    value = decimal.Decimal(top) if pa.types.is_decimal(kind) else top
    events = parquet(tmp_path / "edge.parquet", pa.array([value, None, None], kind))
    for s in (SCHEMA, None):
        column = read_event_table(events, s).column("x")
        assert column.type == pa.int64()
        assert [(type(v), v) for v in column.to_pylist()] == [(int, top), (type(None), None), (type(None), None)]


@pytest.mark.parametrize(("kind", "value", "shown"), [
    (pa.uint64(), 2**64 - 1, "18446744073709551615"),
    (pa.uint64(), 2**63, "9223372036854775808"),
    (pa.decimal128(30, 0), decimal.Decimal(10**20), "100000000000000000000"),
    (pa.decimal128(38, 0), decimal.Decimal(-(2**63) - 1), "-9223372036854775809"),
])
def test_integers_beyond_64_bits_in_parquet_are_errors_naming_the_row(
    setup, tmp_path: Path, capsys, kind, value, shown: str
) -> None:
    workload, schema = setup
    events = parquet(tmp_path / "wide.parquet", pa.array([None, value, None], kind))
    one_line_error(*run(capsys, workload, events, schema), "wide.parquet: row 2: column 'x'",
                   f"not a long: '{shown}'")
    one_line_error(*run(capsys, workload, events, None), "wide.parquet: row 2: column 'x'", shown,
                   "beyond 64 bits" if pa.types.is_decimal(kind) else "not a long")


def test_decimals_with_a_fraction_are_their_decimal_text(setup, tmp_path: Path, capsys) -> None:
    """A decimal is typed as its exact text, as a CSV cell holding it: ``1.50`` is no long but a
    double where one is declared (or, without a schema, in a column of non-integers)."""
    workload, schema = setup
    events = tmp_path / "frac.parquet"
    pq.write_table(pa.table({
        "type": ["A", "A", "B"], "ts": TS,
        "x": pa.array([decimal.Decimal("1.00"), decimal.Decimal("2.00"), None], pa.decimal128(10, 2)),
        "y": pa.array([None, None, decimal.Decimal("0.50")], pa.decimal128(10, 2)),
    }), events)
    for s in (schema, None):
        code, out, err = run(capsys, workload, events, s)
        assert code == 0, err
        assert result(out) == exact(EXPECTED)
    table = read_event_table(events, None)
    assert (table.column("x").type, table.column("y").type) == (pa.int64(), pa.float64())


def test_dictionary_encoded_text_reads_as_text(tmp_path: Path) -> None:
    events = tmp_path / "dict.parquet"
    pq.write_table(pa.table({
        "type": pa.array(["A", "A", "B"]).dictionary_encode(), "ts": TS,
        "note": pa.array(["007", None, "1e3"]).dictionary_encode(),
        "x": pa.array(["7", "-8", None]).dictionary_encode(),
    }), events)
    table = read_event_table(events, SCHEMA)
    assert table.column("note").to_pylist() == ["007", None, "1e3"]
    assert table.column("x").type == pa.int64() and table.column("x").to_pylist() == [7, -8, None]
    assert table.column("type").to_pylist() == ["A", "A", "B"]


# ---------------------------------------------------------------------- integers beyond 64 bits in text


@pytest.mark.parametrize("value", ["99999999999999999999", "9223372036854775808", "-9223372036854775809",
                                   " 18446744073709551616", "+99999999999999999999"])
def test_csv_integers_beyond_64_bits_are_errors_not_doubles(setup, tmp_path: Path, capsys, value: str) -> None:
    workload, schema = setup
    events = tmp_path / "wide.csv"
    events.write_text(GOOD.replace("A,1767607381,2,", f"A,1767607381,{value},"))
    one_line_error(*run(capsys, workload, events, None), "wide.csv: line 3: column 'x'", "beyond 64 bits",
                   value.strip(), "--stream")
    one_line_error(*run(capsys, workload, events, schema), "wide.csv: line 3: column 'x'",
                   f"not a long: '{value}'")


def test_json_integers_beyond_64_bits_are_errors_not_doubles(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "wide.jsonl"
    events.write_text('{"type": "A", "ts": 1767607380, "x": 1}\n'
                      '{"type": "A", "ts": 1767607381, "x": 99999999999999999999}\n'
                      '{"type": "B", "ts": 1767607382, "y": 0.5}\n')
    one_line_error(*run(capsys, workload, events, None), "wide.jsonl: line 2: column 'x'", "beyond 64 bits")
    one_line_error(*run(capsys, workload, events, schema), "wide.jsonl: line 2: column 'x'",
                   "not a long: '99999999999999999999'")


def test_a_declared_double_reads_a_wide_integer_rounded(tmp_path: Path) -> None:
    """Declaring ``double`` is how a wide integer is read: rounded to the nearest double, as its text."""
    events = tmp_path / "wide.csv"
    events.write_text("type,ts,y\nB,1767607380,99999999999999999999\n")
    schema = dict(SCHEMA, attributes={"y": {"type": "double", "types": "*"}})
    assert read_event_table(events, schema).column("y").to_pylist() == [1e20]


# ---------------------------------------------------------------------- CSV tokenization


FOUR = "type,ts,x,note\nA,1767607380,1,a\nA,1767607381,2,b\nA,1767607382,3,c\nB,1767607383,,d\n"


@pytest.mark.parametrize(("broken", "line", "what"), [
    ("A,1767607381,2,\"b", 3, "not closed before the end of the file"),  # the rest would be one field
    ("A,1767607381,2,\"b\"x", 3, "after the closing quote"),
    ("A,1767607381,2,\"b\" ", 3, "after the closing quote"),
    ("A,1767607381,\"2", 3, "not closed"),
])
def test_a_csv_that_does_not_tokenize_cleanly_is_an_error_naming_the_line(
    setup, tmp_path: Path, capsys, broken: str, line: int, what: str
) -> None:
    workload, schema = setup
    events = tmp_path / "stray.csv"
    events.write_text(FOUR.replace("A,1767607381,2,b", broken))
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), f"stray.csv: line {line}:", what)


def test_a_quote_inside_an_unquoted_field_is_an_ordinary_character(tmp_path: Path) -> None:
    events = tmp_path / "inch.csv"
    events.write_text('type,ts,x,note\nA,1767607380,1,5" screen\nB,1767607381,,"quoted, ""twice"""\n')
    table = read_event_table(events, SCHEMA)
    assert table.column("note").to_pylist() == ['5" screen', 'quoted, "twice"']


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='a,"\n\r', max_size=40))
def test_the_fast_quote_check_never_clears_a_file_the_strict_reader_refuses(tmp_path_factory, text: str) -> None:
    path = tmp_path_factory.mktemp("quotes") / "f.csv"
    path.write_bytes(text.encode())
    try:
        list(csv.reader(io.StringIO(text, newline=""), strict=True))
        strict_ok = True
    except csv.Error:
        strict_ok = False
    problem = rawfiles.csv_token_problem(path)
    assert (problem is None) == strict_ok, (text, problem)


# ---------------------------------------------------------------------- absurd time stamps


@pytest.mark.parametrize(("ts", "what"), [
    ("1.7e308", "no time: far outside the years 1900..2299"),
    ("-1.7e308", "no time"), ("-1e300", "no time"), ("1e300", "no time"), ("1e25", "no time"),
    ("inf", "unparseable timestamp 'inf'"), ("-inf", "unparseable"), ("NaN", "unparseable"),
    ("Infinity", "unparseable"),
])
def test_absurd_time_stamps_are_one_line_errors(setup, tmp_path: Path, capsys, ts: str, what: str) -> None:
    workload, schema = setup
    events = tmp_path / "absurd.csv"
    events.write_text(GOOD.replace("1767607381,", f"{ts},"))
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), "absurd.csv: line 3: column 'ts'", what)


@pytest.mark.parametrize("value", [1.7e308, -1e300, math.inf, -math.inf, math.nan])
def test_absurd_float_time_stamps_in_parquet(setup, tmp_path: Path, capsys, value: float) -> None:
    workload, schema = setup
    events = tmp_path / "absurd.parquet"
    pq.write_table(pa.table({"type": ["A", "B"], "ts": pa.array([1767607380.0, value]), "x": [1, None]}), events)
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), "absurd.parquet: row 2: column 'ts'")


# ---------------------------------------------------------------------- bytes that are not UTF-8


@pytest.mark.parametrize("pad", [0, 20_000], ids=["near-the-header", "past-the-first-block"])
def test_bytes_that_are_not_utf8_name_line_and_column(setup, tmp_path: Path, capsys, pad: int) -> None:
    workload, schema = setup
    events = tmp_path / "latin.csv"
    filler = "".join(f"A,1767607380,1,{'p' * 10}\n" for _ in range(pad // 30))
    first = 2 + filler.count("\n")
    events.write_bytes(("type,ts,x,note\n" + filler).encode() + b"A,1767607381,2,caf\xe9\nB,1767607382,,x\n")
    one_line_error(*run(capsys, workload, events, schema), f"latin.csv: line {first}: column 'note'",
                   "not UTF-8 text (byte 0xe9)")
    with pytest.raises(EventFileError, match=f"latin.csv: line {first}: column 'note': not UTF-8 text"):
        read_event_table(events, None)


def test_a_header_that_is_not_utf8_is_line_1(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "header.csv"
    events.write_bytes(b"type,ts,x,n\xf6te\nA,1767607381,2,a\n")
    for s in (schema, None):
        one_line_error(*run(capsys, workload, events, s), "header.csv: line 1:", "not UTF-8 text (byte 0xf6)")


def test_parquet_text_that_is_not_utf8_names_row_and_column(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    latin = pa.array([b"a", b"caf\xe9", None], pa.binary())  # pyarrow does not check it on writing
    latin = pa.Array.from_buffers(pa.string(), len(latin), latin.buffers(), null_count=1)
    events = tmp_path / "latin.parquet"
    pq.write_table(pa.table({"type": ["A", "A", "B"], "ts": TS, "x": [1, 2, None], "y": [None, None, 0.5],
                             "note": latin}), events)
    one_line_error(*run(capsys, workload, events, schema), "latin.parquet: row 2: column 'note'",
                   "not UTF-8 text (byte 0xe9)")
    with pytest.raises(EventFileError, match="latin.parquet: row 2: column 'note': not UTF-8 text"):
        read_event_table(events, None)


def test_json_lines_that_are_not_utf8_name_line_and_key(setup, tmp_path: Path, capsys) -> None:
    workload, schema = setup
    events = tmp_path / "latin.jsonl"
    events.write_bytes(b'{"type": "A", "ts": 1767607380, "x": 1}\n'
                       b'{"type": "A", "ts": 1767607381, "x": 2, "note": "caf\xe9"}\n'
                       b'{"type": "B", "ts": 1767607382, "y": 0.5}\n')
    one_line_error(*run(capsys, workload, events, schema), "latin.jsonl: line 2: column 'note'",
                   "not UTF-8 text (byte 0xe9)")
    one_line_error(*run(capsys, workload, events, None), "latin.jsonl: line 2: column 'note'")


# ---------------------------------------------------------------------- declared strings stay text


@pytest.mark.parametrize("texts", [["007", "7", "0"], ["1", "2", "3"], ["1.5", "-0", "1e3"]])
def test_a_declared_string_column_of_numbers_only_keeps_its_text(tmp_path: Path, texts: list[str]) -> None:
    # every cell looks like a number: only the stream schema says the column is text
    csv_file = tmp_path / "digits.csv"
    csv_file.write_text("type,ts,note\n" + "".join(f"A,{1767607380 + i},{t}\n" for i, t in enumerate(texts)))
    column = read_event_table(csv_file, SCHEMA).column("note")
    assert column.type == pa.string()
    assert column.to_pylist() == texts


def test_a_declared_string_column_keeps_its_text(tmp_path: Path) -> None:
    texts = ["007", " 7 ", "1e3", "+7", "-0", "3.0", "true", "0x10", "9223372036854775808", "nan"]
    csv_file = tmp_path / "notes.csv"
    csv_file.write_text("type,ts,note\n" + "".join(f"A,{1767607380 + i},{t}\n" for i, t in enumerate(texts)))
    json_file = tmp_path / "notes.jsonl"
    json_file.write_text("".join(json.dumps({"type": "A", "ts": 1767607380 + i, "note": t}) + "\n"
                                 for i, t in enumerate(texts)))
    for events in (csv_file, json_file):
        column = read_event_table(events, SCHEMA).column("note")
        assert column.type == pa.string()
        assert column.to_pylist() == texts


# JSON numbers in a column declared string, and the text Spark's from_json gives each (Java's)
JSON_NUMBERS = [(1.0, "1.0"), (1e3, "1000.0"), (7, "7"), (0.1, "0.1"), (1.5, "1.5"), (-0.0, "-0.0"),
                (1e20, "1.0E20"), (2.5e-5, "2.5E-5"), (12345678.5, "1.23456785E7"), (True, "true"),
                (99999999999999999999, "99999999999999999999")]


@pytest.mark.parametrize("mixed", [False, True], ids=["numbers", "numbers-and-text"])
def test_json_numbers_in_a_declared_string_column_are_the_text_ingest_stores(tmp_path: Path, mixed: bool) -> None:
    values = JSON_NUMBERS + ([("007", "007")] if mixed else [])
    events = tmp_path / "numbers.jsonl"
    events.write_text("".join(json.dumps({"type": "A", "ts": 1767607380 + i, "note": v}) + "\n"
                              for i, (v, _) in enumerate(values)))
    assert read_event_table(events, SCHEMA).column("note").to_pylist() == [text for _, text in values]


# the property: a stream schema declaring each column's type (strings often), random cells
CELLS = st.one_of(st.sampled_from(ATTRIBUTE_VALUES), st.integers(-(2**65), 2**65).map(str),
                  st.sampled_from(["007", "0", "-0", "00", "+0", "7.50", "1e3"]))


def expected_cell(text: str, kind: str) -> Any:
    """What the rules make of one CSV cell: a string column's text as it is (independent of the
    code under test), other kinds by ``arrow.cast_value`` (checked against Spark elsewhere)."""
    if text == "":
        return None
    return text if kind == "string" else arrow.cast_value(text, kind)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), n=st.integers(1, 8),
       kinds=st.lists(st.sampled_from(["string", "string", "long", "double", "boolean"]), min_size=2, max_size=2),
       quote_all=st.booleans())
def test_a_stream_schema_types_every_cell_by_its_declared_type(
    tmp_path_factory, data, n: int, kinds: list[str], quote_all: bool
) -> None:
    """``eval --stream`` reads each cell as the declared type exactly (a ``string`` column
    keeps ``007``), compared as (type, repr): 7 is not "7" nor 7.0; or it stops at the first
    cell that does not fit, naming its line and column with the rule's reason."""
    names = ["a", "b"]
    schema = dict(SCHEMA, attributes={name: {"type": kind, "types": "*"} for name, kind in zip(names, kinds,
                                                                                                strict=True)})
    cells = {name: data.draw(st.lists(CELLS, min_size=n, max_size=n)) for name in names}
    path = tmp_path_factory.mktemp("declared") / "events.csv"

    def quoted(value: str) -> str:
        if not quote_all and not any(c in value for c in ',"\r\n'):
            return value
        return '"' + value.replace('"', '""') + '"'

    lines = ["type,ts,a,b"] + [f"A,{1767607380 + i},{quoted(cells['a'][i])},{quoted(cells['b'][i])}"
                               for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    starts, at = [], 1  # the physical line each record starts on (a quoted cell may hold a line break)
    for line in lines:
        starts.append(at)
        at += line.count("\n") + 1
    want: dict[str, list[Any]] = {}
    error = None
    for name, kind in zip(names, kinds, strict=True):
        want[name] = []
        for i, text in enumerate(cells[name]):
            try:
                want[name].append(expected_cell(text, kind))
            except rules.TypingError as why:
                reason = str(why).replace("'value'", repr(name), 1)  # cast_value's column name
                error = error or f"{path}: line {starts[i + 1]}: column '{name}': {reason}"
                want[name].append("BAD")
        if error:
            break
    if error:
        with pytest.raises(EventFileError) as err:
            read_event_table(path, schema)
        assert str(err.value) == error
        return
    table = read_event_table(path, schema)
    for name, kind in zip(names, kinds, strict=True):
        assert table.column(name).type == {"string": pa.string(), "long": pa.int64(), "double": pa.float64(),
                                           "boolean": pa.bool_()}[kind]
        got = [(type(v).__name__, repr(v)) for v in table.column(name).to_pylist()]
        assert got == [(type(v).__name__, repr(v)) for v in want[name]], (name, kind)


@pytest.mark.parametrize("text", ["-9223372036854775808", "9223372036854775807", "9007199254740993"])
def test_a_long_beyond_2_53_read_as_double_is_the_nearest_double(text: str) -> None:
    # the fast integer path checks its bounds by min and max: abs of the int64 minimum wraps
    cells = ["0"] * 7 + [text]
    typed = arrow.cast_column(pa.array(cells), "double", "x")
    assert typed.first_bad() is None
    got = typed.values.to_pylist()
    assert [(type(v), v) for v in got] == [(float, 0.0)] * 7 + [(float, float(int(text)))]


@pytest.mark.parametrize(("values", "kind", "read"), [
    (["0", "12", ""], pa.int64(), [0, 12, None]),
    ([" -7", "+3", "0"], pa.int64(), [-7, 3, 0]),
    (["0", "1e3", ""], pa.float64(), [0.0, 1000.0, None]),
    (["3.0", "4", "5"], pa.float64(), [3.0, 4.0, 5.0]),
])
def test_without_a_schema_a_column_is_long_only_when_written_as_integers(
    tmp_path: Path, values: list[str], kind: pa.DataType, read: list[Any]
) -> None:
    """An integral decimal (``1e3``, ``3.0``) makes an untyped column a double, as it reads: ``MIN``
    of such a column prints ``0.0``, not ``0`` (found by test_eval_fuzz)."""
    events = tmp_path / "x.csv"
    events.write_text("type,ts,x\n" + "".join(f"A,{1767607380 + i},{v}\n" for i, v in enumerate(values)))
    column = read_event_table(events, None).column("x")
    assert column.type == kind
    assert column.to_pylist() == read
