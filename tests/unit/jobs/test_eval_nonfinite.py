"""Non-finite numbers and signed zeros in ``trendlake eval``'s output and in result tables.

JSON has no literal for infinities or NaN: ``--format json`` prints them as the strings
``"Infinity"``, ``"-Infinity"`` and ``"NaN"`` (as it prints ``"OVERFLOW"``), ``-0.0`` as
``0.0``; ``--format table`` shows the same words. Every line is parsed with a
``parse_constant`` that raises, so a bare ``Infinity`` or ``NaN`` fails. The rows are made
by data that produce these values today (MIN/MAX over a Parquet file holding infinities and
signed zeros, a predicate whose arithmetic makes a NaN); NaN as an aggregate value (a SUM
of ``inf`` and ``-inf``) is checked on the formatting functions directly. A result table
stores the same numbers natively in its double columns (``jobs.replay.result_table``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from trendlake.jobs.cli import main
from trendlake.jobs.evaluate import _cell, json_line, json_row, json_value

from trendlake import engine

INF = math.inf

WORKLOAD = """
QUERY extremes
RETURN g, COUNT(*), MIN(A.x) AS lo, MAX(A.x) AS hi
PATTERN A+
GROUP-BY g
WITHIN 10 seconds;

QUERY made_nan
RETURN g, COUNT(*)
PATTERN A
WHERE A.x - A.x != 0
GROUP-BY g
WITHIN 10 seconds;

QUERY by_value
RETURN x, COUNT(*)
PATTERN A
GROUP-BY x
WITHIN 10 seconds;
"""
# (group, x): infinities, signed zeros (in both orders), a finite pair and a NaN (missing)
EVENTS = [("p", INF), ("p", 1.0), ("n", -INF), ("n", -1.0), ("z", -0.0), ("z", 0.0),
          ("w", 0.0), ("w", -0.0), ("m", -0.0), ("q", math.nan), ("q", 2.5)]


def strict(line: str) -> dict[str, Any]:
    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: bare {name} in {line}")

    return json.loads(line, parse_constant=refuse)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    workload = tmp_path / "w.etq"
    workload.write_text(WORKLOAD)
    events = tmp_path / "events.parquet"
    pq.write_table(pa.table({
        "type": ["A"] * len(EVENTS),
        "ts": list(range(1, len(EVENTS) + 1)),
        "g": [g for g, _ in EVENTS],
        "x": pa.array([x for _, x in EVENTS], pa.float64()),
    }), events)
    return workload, events


@pytest.mark.parametrize("strategy", ["auto", *sorted(engine.STRATEGIES)])
def test_json_output_is_strict_json_with_words_for_non_finite_values(files, capsys, strategy: str) -> None:
    workload, events = files
    assert main(["eval", str(workload), "--events", str(events), "--strategy", strategy]) == 0
    out = capsys.readouterr().out
    rows = [strict(line) for line in out.splitlines()]
    assert "-0.0" not in out and "Infinity\"" in out
    extremes = {r["g"]: (r["lo"], r["hi"]) for r in rows if r["query"] == "extremes"}
    assert extremes == {
        "p": (1.0, "Infinity"), "n": ("-Infinity", -1.0), "z": (0.0, 0.0), "w": (0.0, 0.0), "m": (0.0, 0.0),
        "q": (2.5, 2.5),  # the NaN is missing (the NULL rule)
    }
    for lo, hi in extremes.values():
        for v in (lo, hi):
            assert v != 0.0 or math.copysign(1.0, v) == 1.0  # one zero: 0.0
    # inf - inf is NaN, and NaN != 0 holds: only the infinite events match
    assert sorted(r["g"] for r in rows if r["query"] == "made_nan") == ["n", "p"]
    by_value = {r["x"]: r["COUNT(*)"] for r in rows if r["query"] == "by_value"}
    assert by_value == {"Infinity": 1, "-Infinity": 1, 1.0: 1, -1.0: 1, 0.0: 5, 2.5: 1}


def test_table_output_uses_the_same_words(files, capsys) -> None:
    workload, events = files
    assert main(["eval", str(workload), "--events", str(events), "--query", "extremes", "--format", "table"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[1].split()
    cells = {row.split()[0]: dict(zip(header, row.split(), strict=True)) for row in lines[2:] if row.strip()}
    assert (cells["p"]["lo"], cells["p"]["hi"]) == ("1", "Infinity")
    assert (cells["n"]["lo"], cells["n"]["hi"]) == ("-Infinity", "-1")
    assert (cells["z"]["lo"], cells["z"]["hi"]) == ("0", "0")
    assert not {"inf", "-inf", "nan", "-0", "-0.0"} & {cell for line in lines for cell in line.split()}


def test_the_formatting_of_every_special_value() -> None:
    assert json_value(INF) == "Infinity" and json_value(-INF) == "-Infinity" and json_value(math.nan) == "NaN"
    assert json_value(engine.OVERFLOW) == "OVERFLOW"
    zero = json_value(-0.0)
    assert zero == 0.0 and math.copysign(1.0, zero) == 1.0
    assert json_value(2**200) == 2**200 and type(json_value(5)) is int and type(json_value(5.0)) is float
    assert json_value(5e-324) == 5e-324 and json_value(1.7e308) == 1.7e308
    row = {"query": "q", "window_start": 0, "window_end": 10_000_000, "s": math.nan, "a": INF, "b": -0.0,
           "c": 2**64, "d": None}
    assert strict(json_line(row)) == {"query": "q", "window_start": "1970-01-01T00:00:00Z",
                                      "window_end": "1970-01-01T00:00:10Z", "s": "NaN", "a": "Infinity",
                                      "b": 0.0, "c": 2**64, "d": None}
    assert [_cell(v) for v in json_row(row).values()][3:] == ["NaN", "Infinity", "0", str(2**64), "NULL"]


def test_a_result_table_stores_the_numbers_eval_prints() -> None:
    """Double columns hold infinities and NaN as they are (what Spark users expect); ``-0.0``
    is stored as ``0.0``, the form eval prints; the stored value prints as eval's value."""
    from datetime import UTC, datetime

    import pyarrow as pa
    from trendlake.jobs.replay import result_schema, result_table

    query = {"name": "q", "group_by": ["g"], "aggregates": [
        {"name": "lo", "fn": "min", "var": "A", "attr": "x"},
        {"name": "total", "fn": "sum", "var": "A", "attr": "x"},
        {"name": "AVG(A.x)", "fn": "avg", "var": "A", "attr": "x"},
    ]}
    bronze = pa.schema([pa.field("g", pa.float64()), pa.field("x", pa.float64())])
    schema = result_schema(query, bronze)
    rows = [
        {"g": INF, "lo": -INF, "total": math.nan, "AVG(A.x)": INF},
        {"g": -0.0, "lo": -0.0, "total": -0.0, "AVG(A.x)": 5e-324},
        {"g": 1.5, "lo": 1.7e308, "total": engine.OVERFLOW, "AVG(A.x)": -1.7e308},
    ]
    for r in rows:
        r.update(window_start=0, window_end=10_000_000)
    stored = result_table(query, rows, schema, "plan", datetime(2026, 1, 1, tzinfo=UTC)).to_pylist()
    for row, back in zip(rows, stored, strict=True):
        for name, col in (("g", "g"), ("lo", "lo"), ("total", "total"), ("AVG(A.x)", "avg_a_x")):
            assert json_value(back[col] if back[col] is not None else engine.OVERFLOW) == json_value(row[name]) \
                or (row[name] is engine.OVERFLOW and back[col] is None and back["overflowed"] == [col])
            if isinstance(back[col], float) and back[col] == 0.0:
                assert math.copysign(1.0, back[col]) == 1.0
    assert stored[0]["g"] == INF and stored[0]["lo"] == -INF and math.isnan(stored[0]["total"])
    assert stored[1]["avg_a_x"] == 5e-324 and stored[2]["overflowed"] == ["total"]
