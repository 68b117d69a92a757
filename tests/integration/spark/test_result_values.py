"""Signed zeros, infinities and NaN in result tables: stored as eval prints them, read by Spark.

* ingest → optimize → replay of MIN/MAX over doubles holding ``-0.0`` and ``0.0`` (in both
  orders) and ``±1.7e308``: the result table stores ``0.0`` (never ``-0.0``) and the numbers
  ``trendlake eval --format json`` prints for the same file;
* a result table holding ``inf``, ``-inf`` and NaN in its double columns (written by
  ``result_table`` as replay writes it; ingest refuses non-finite input, so here they stand
  for an IEEE sum or mean): Spark reads them as its own ``Infinity`` and ``NaN``.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
from trendlake.jobs.cli import main
from trendlake.jobs.evaluate import json_value

pytestmark = pytest.mark.spark

STREAM = {
    "stream": "zeros",
    "time_column": "ts",
    "type_column": "type",
    "event_types": ["A"],
    "attributes": {
        "g": {"type": "string", "types": "*", "required": True},
        "x": {"type": "double", "types": ["A"], "required": True},
    },
}
WORKLOAD = """QUERY extremes
RETURN g, COUNT(*), MIN(A.x) AS lo, MAX(A.x) AS hi
PATTERN A+
GROUP-BY g
WITHIN 1 hour;
"""
EVENTS = [("z", "-0.0"), ("z", "0.0"), ("w", "0.0"), ("w", "-0.0"), ("m", "-0.0"), ("h", "1.7e308"), ("h", "-1.7e308")]


def test_replay_stores_the_numbers_eval_prints(spark, tmp_path: Path, capsys) -> None:
    from trendlake.jobs import lake as lakelib
    from trendlake.jobs.ingest import ingest
    from trendlake.jobs.optimize import optimize
    from trendlake.jobs.replay import replay

    schema_path = tmp_path / "zeros.json"
    schema_path.write_text(json.dumps(STREAM))
    landing = tmp_path / "landing"
    landing.mkdir()
    lines = ["type,ts,g,x"] + [f"A,2026-01-01T08:{i:02d}:00Z,{g},{x}" for i, (g, x) in enumerate(EVENTS)]
    (landing / "zeros.csv").write_text("\n".join(lines) + "\n")
    workload = tmp_path / "zeros.etq"
    workload.write_text(WORKLOAD)
    lake = tmp_path / "lake"
    ingest(lake, STREAM, landing, spark=spark)
    optimize(lake, workload, stream=str(schema_path))
    replay(lake, workload, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", stream="zeros", spark=spark)

    stored = {r["g"]: r for r in lakelib.Lake(lake).read_arrow("results/extremes").to_pylist()}
    assert main(["eval", str(workload), "--events", str(landing / "zeros.csv"), "--stream", str(schema_path)]) == 0
    printed = {r["g"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(stored) == set(printed) == {"z", "w", "m", "h"}
    for g, row in stored.items():
        for col in ("lo", "hi"):
            assert json_value(row[col]) == printed[g][col], (g, col)
            if row[col] == 0.0:
                assert math.copysign(1.0, row[col]) == 1.0, (g, col)  # 0.0, never -0.0
    assert (stored["h"]["lo"], stored["h"]["hi"]) == (-1.7e308, 1.7e308)
    spark_rows = {r["g"]: r for r in lakelib.Lake(lake).read_spark(spark, "results/extremes").collect()}
    assert {g: (r["lo"], r["hi"]) for g, r in spark_rows.items()} == {g: (r["lo"], r["hi"]) for g, r in stored.items()}
    assert all(math.copysign(1.0, spark_rows[g]["lo"]) == 1.0 for g in ("z", "w", "m"))


def test_spark_reads_infinities_and_nan_from_a_result_table(spark, tmp_path: Path) -> None:
    import pyarrow as pa
    from trendlake.jobs import lake as lakelib
    from trendlake.jobs.replay import result_schema, result_table

    query = {"name": "q", "group_by": ["g"], "aggregates": [
        {"name": "total", "fn": "sum", "var": "A", "attr": "x"},
        {"name": "mean", "fn": "avg", "var": "A", "attr": "x"},
    ]}
    schema = result_schema(query, pa.schema([pa.field("g", pa.string()), pa.field("x", pa.float64())]))
    rows = [{"g": "a", "total": math.inf, "mean": -math.inf}, {"g": "b", "total": math.nan, "mean": -0.0}]
    for r in rows:
        r.update(window_start=0, window_end=3_600_000_000)
    table = result_table(query, rows, schema, "plan", datetime(2026, 1, 1, tzinfo=UTC))
    lake = lakelib.Lake(tmp_path / "lake")
    lake.write("results/q", table, partition_by=["window_date"])
    df = lake.read_spark(spark, "results/q")
    got = {r["g"]: (r["total"], r["mean"], r["nan"]) for r in df.selectExpr("g", "total", "mean", "isnan(total) AS nan").collect()}
    assert got["a"] == (math.inf, -math.inf, False)
    assert math.isnan(got["b"][0]) and got["b"][2] is True
    assert got["b"][1] == 0.0 and math.copysign(1.0, got["b"][1]) == 1.0
    assert df.where("total = double('Infinity') AND mean = double('-Infinity')").count() == 1
    # what eval prints for the same rows
    assert [json_value(v) for v in (math.inf, -math.inf, math.nan, -0.0)] == ["Infinity", "-Infinity", "NaN", 0.0]
