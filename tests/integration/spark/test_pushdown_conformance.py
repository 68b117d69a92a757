"""The Spark pushdown against the expression conformance fixture, with ANSI mode on.

Pushdown may keep events the engine rejects (the engine checks every predicate
again) but must never drop an event whose predicate holds, and must never fail
where the engine does not: the fixture's cases (tests/fixtures/expr/*.jsonl)
as typed one-row DataFrames, and a replay whose predicate overflows 64 bits in
Spark (``A.a * 1000 > 5`` with ``a = 2**62``) returns the engine's result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trendlake.engine.expr import compile_local
from trendlake.jobs.spark_expr import pushdown_filter

from tests.unit.engine.test_expr_backends import LOCAL
from trendlake import engine

pytestmark = pytest.mark.spark


def spark_type(value: Any) -> Any:
    from pyspark.sql import types as T

    if isinstance(value, bool):
        return T.BooleanType()
    if isinstance(value, int):
        return T.LongType()
    if isinstance(value, float):
        return T.DoubleType()
    if isinstance(value, str):
        return T.StringType()
    return T.LongType()  # a column holding only nulls


def plan_of(expr: dict[str, Any]) -> dict[str, Any]:
    return {"queries": [{
        "name": "q", "semantics": "skip-till-any-match",
        "variables": [{"name": "E", "type": "E"}],
        "local_predicates": {"E": [expr]},
        "required_attributes": {},
    }]}


@pytest.fixture(scope="module")
def ansi(spark):
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    yield spark
    spark.conf.set("spark.sql.ansi.enabled", before)


def test_pushdown_never_drops_what_the_engine_keeps_and_never_fails(ansi) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    # the cases by the attributes and types of their event: one DataFrame per group, a row per
    # case, and one filter applying to each row its own case's pushed-down condition (a CASE on
    # the row's case number evaluates only that one): a Spark query per group, not per case
    groups: dict[tuple[tuple[str, Any], ...], list[tuple[int, dict[str, Any]]]] = {}
    for i, case in enumerate(LOCAL):
        event = {k: v for k, v in case["event"].items() if not (isinstance(v, int) and not -2**63 <= v < 2**63)}
        groups.setdefault(tuple((k, spark_type(v)) for k, v in event.items()), []).append((i, event))
    kept: set[int] = set()
    for attributes, members in groups.items():
        fields = [T.StructField("_case", T.LongType()), T.StructField("type", T.StringType()),
                  *(T.StructField(k, t) for k, t in attributes)]
        df = ansi.createDataFrame([(i, "E", *event.values()) for i, event in members], T.StructType(fields))
        dtypes = [d for d in df.dtypes if d[0] != "_case"]
        conds = {i: pushdown_filter(plan_of(LOCAL[i]["expr"]), dtypes) for i, _ in members}
        kept |= {i for i, cond in conds.items() if cond is None}
        pushed = {i: cond for i, cond in conds.items() if cond is not None}
        if not pushed:
            continue
        own = None
        for i, cond in pushed.items():
            own = (F if own is None else own).when(F.col("_case") == i, cond)
        try:
            kept |= {row._case for row in df.where(own).select("_case").collect()}
        except Exception:
            for i, cond in pushed.items():  # the case that fails, by name
                try:
                    df.where((F.col("_case") == i) & cond).count()
                except Exception as err:
                    pytest.fail(f"{LOCAL[i]['where']}: the pushed-down filter fails in Spark: {err}")
            raise
    dropped = []
    for i, case in enumerate(LOCAL):
        if i not in kept:
            assert not case["holds"], f"{case['where']}: pushdown dropped an event whose predicate holds"
            dropped.append(case["id"])
    # the pushdown does narrow the read where it safely can, at the edges too: exact int64
    # comparisons, -0.0 = 0.0, subnormals, a NaN made by arithmetic in = and <
    assert {"int_lt_false", "float_ge_false", "string_ne_false", "int_sum_lt_false", "in_numbers_miss",
            "minus_zero_lt_zero_false", "minus_zero_ne_zero_false", "minus_zero_lt_zero_attrs",
            "subnormal_eq_zero_false", "subnormal_times_half_gt_false", "subnormal_in_zero_false",
            "inf_minus_inf_eq", "inf_minus_inf_lt", "huge_overflow_minus_overflow_eq"} <= set(dropped), dropped


def test_pushdown_widens_narrow_columns_and_keeps_nan_for_not_equal(ansi) -> None:
    """``f + 1 > f`` on a ``float`` column holding 2**24 holds in the engine (doubles) but not
    in single precision; ``x * 2 > 0`` on an ``int`` column holding 2**30 overflows 32 bits;
    ``(f - f) != (g - g)`` with infinities is NaN != NaN, true for the engine, false in
    Spark's own ``!=``. Each event must be kept."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("type", T.StringType()), T.StructField("f", T.FloatType()),
                           T.StructField("x", T.IntegerType()), T.StructField("d", T.DoubleType())])
    df = ansi.createDataFrame([("E", 16777216.0, 2**30, float("inf"))], schema)
    f, x, d = ({"attr": n, "var": "E"} for n in ("f", "x", "d"))
    exprs = [
        {"op": ">", "args": [{"op": "+", "args": [f, {"lit": 1}]}, f]},
        {"op": ">", "args": [{"op": "*", "args": [x, {"lit": 2}]}, {"lit": 0}]},
        {"op": "!=", "args": [{"op": "-", "args": [d, d]}, {"op": "-", "args": [d, d]}]},
    ]
    for expr in exprs:
        assert compile_local([expr], [])({"f": 16777216.0, "x": 2**30, "d": float("inf")}) is True
        cond = pushdown_filter(plan_of(expr), df.dtypes)
        assert cond is not None, expr  # pushed down, and
        assert df.where(cond).count() == 1, expr  # the event kept


STREAM = {
    "stream": "probe",
    "time_column": "ts",
    "type_column": "type",
    "event_types": ["A", "B"],
    "attributes": {
        "g": {"type": "string", "types": "*", "required": True},
        "a": {"type": "long", "types": ["A"], "required": False},
    },
}
WORKLOAD = """QUERY big
RETURN g, COUNT(*)
PATTERN SEQ(A, B+)
WHERE A.a * 1000 > 5
GROUP-BY g
WITHIN 1 hour;
"""


def test_replay_with_a_predicate_overflowing_in_spark_returns_the_engines_result(ansi, tmp_path: Path) -> None:
    from trendlake.jobs import lake as lakelib
    from trendlake.jobs.ingest import ingest
    from trendlake.jobs.optimize import current_plan, optimize
    from trendlake.jobs.replay import replay

    schema_path = tmp_path / "probe.json"
    schema_path.write_text(json.dumps(STREAM))
    landing = tmp_path / "landing"
    landing.mkdir()
    lines = ["type,ts,g,a"]
    for i, (t, g, a) in enumerate([
        ("A", "x", 2**62), ("B", "x", ""), ("B", "x", ""),  # holds only with exact arithmetic
        ("A", "y", 0), ("B", "y", ""),                        # fails the predicate: no trend
        ("A", "z", 2**62 - 1), ("B", "z", ""),
    ]):
        lines.append(f"{t},2026-01-01T08:{i:02d}:00Z,{g},{a}")
    (landing / "probe.csv").write_text("\n".join(lines) + "\n")
    workload = tmp_path / "probe.etq"
    workload.write_text(WORKLOAD)
    lake = tmp_path / "lake"
    ingest(lake, STREAM, landing, spark=ansi)
    optimize(lake, workload, stream=str(schema_path))
    replay(lake, workload, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", stream="probe", spark=ansi)
    got = sorted((r["g"], int(r["count"])) for r in lakelib.Lake(lake).read_arrow("results/big").to_pylist())
    plan = current_plan(lake, "probe")
    rows = engine.evaluate(plan, engine.table_from_rows([
        {"type": t, "ts": f"2026-01-01T08:{i:02d}:00Z", "g": g, **({"a": a} if a != "" else {})}
        for i, (t, g, a) in enumerate([("A", "x", 2**62), ("B", "x", ""), ("B", "x", ""),
                                       ("A", "y", 0), ("B", "y", ""), ("A", "z", 2**62 - 1), ("B", "z", "")])
    ]))
    want = sorted((r["g"], r["COUNT(*)"]) for r in rows)
    assert want == [("x", 3), ("z", 1)]
    assert got == want
