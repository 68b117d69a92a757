"""A SUM of a ``long`` column holding the int64 minimum lands exactly in the result table.

``SEQ(A, K+)`` over A, K(-2**63), K(-2**63), K(5) has 7 trends (A and a non-empty
subsequence of the three K), each K event in 4 of them: the SUM is
4 * (-2**64 + 5) = -73786976294838206444, far below the int64 range. The engine (COGRA, the default for this type-grained query) once summed the
column with numpy after a guard ``abs(col).max() * n < 2**63``, which passes for -2**63
(numpy's abs leaves it negative), and wrote 20. Here it goes ingest -> optimize -> replay
on a small lake: the result column is a decimal(38,0) and holds the exact sum.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from trendlake.jobs import lake as lakelib
from trendlake.jobs.ingest import ingest
from trendlake.jobs.optimize import optimize
from trendlake.jobs.replay import replay
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan
from trendlake.schemas import load_stream_schema

from trendlake import engine

pytestmark = pytest.mark.spark

WORKLOAD = """
QUERY extremes
RETURN COUNT(*), SUM(K.x) AS total, MIN(K.x) AS low, AVG(K.x) AS mean
PATTERN SEQ(A, K+)
WITHIN 1 hour;
"""
CSV = "type,ts,x\nA,2026-01-01T08:00:01Z,0\nK,2026-01-01T08:00:02Z,-9223372036854775808\n" \
      "K,2026-01-01T08:00:03Z,-9223372036854775808\nK,2026-01-01T08:00:04Z,5\n"
WANT = -73786976294838206444


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, spark) -> dict:
    root = tmp_path_factory.mktemp("sum_exact")
    schema_path = root / "edges.json"
    schema_path.write_text(json.dumps({
        "stream": "edges", "time_column": "ts", "type_column": "type", "event_types": ["A", "K"],
        "attributes": {"x": {"type": "long", "types": "*", "required": True}},
    }))
    (root / "landing").mkdir()
    (root / "landing" / "edges.csv").write_text(CSV)
    workload = root / "edges.etq"
    workload.write_text(WORKLOAD)
    report_ingest = ingest(root / "lake", load_stream_schema(schema_path), root / "landing", spark=spark)
    optimize(root / "lake", workload, stream=str(schema_path))
    replay(root / "lake", workload, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", stream=str(schema_path),
           spark=spark)
    lake = lakelib.Lake(root / "lake")
    table = lake.read_arrow("results/extremes")
    return {"rows": table.to_pylist(), "schema": table.schema, "ingest": report_ingest, "root": root}


def test_the_engine_alone_gives_the_exact_sum() -> None:
    """The same events through ``engine.evaluate`` on every strategy (the fixed engine)."""
    plan = build_plan(parse_workload(WORKLOAD), planner="none")
    rows = [{"type": t, "ts": i + 1, "x": x} for i, (t, x) in enumerate(
        [("A", 0), ("K", -(2**63)), ("K", -(2**63)), ("K", 5)])]
    for strategy in ("twostep", "greta", "cogra"):
        (row,) = engine.evaluate(plan, engine.table_from_rows(rows), strategy=strategy)
        assert row["total"] == WANT, strategy


def test_the_sum_lands_exactly_in_the_result_table(replayed) -> None:
    (row,) = replayed["rows"]
    assert row["total"] == Decimal(WANT)
    assert row["count"] == Decimal(7)
    assert row["low"] == -(2**63)
    assert row["mean"] == pytest.approx(WANT / 12, rel=1e-15)
    assert row["overflowed"] == []


def test_the_sum_of_a_long_is_a_decimal_38_0(replayed) -> None:
    field = replayed["schema"].field("total")
    assert str(field.type) == "decimal128(38, 0)", field.type
