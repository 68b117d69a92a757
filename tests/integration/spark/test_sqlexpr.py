"""``schemas.typing.sqlexpr`` writes the expressions PySpark's Column API would build: the same
values and types for tricky literals, and the same results for every operator."""

from __future__ import annotations

import pytest
from trendlake.schemas.typing.sqlexpr import NotWritable, call, col, lit, when

pytestmark = pytest.mark.spark

LITERALS = [
    None, True, False, 0, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, -(2**63),
    0.0, -0.0, 1.5, -2.25, 1e16, 9.2e18, 1e-300, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"),
    "", "a", "it's", "back\\slash", "\\s+", "'", "\\'", "tab\there", "new\nline", "100%_", "ünïcödé ✓", "`tick`",
    "${x}", "$", "${system:user.name}", "\\u0024", "--", "/*", '"dq"',
]


def test_literals_have_the_value_and_type_of_f_lit(spark) -> None:
    from pyspark.sql import functions as F

    ours = spark.range(1).select(*[lit(v).column().alias(f"c{i}") for i, v in enumerate(LITERALS)])
    theirs = spark.range(1).select(*[F.lit(v).alias(f"c{i}") for i, v in enumerate(LITERALS)])
    assert [f.dataType for f in ours.schema.fields] == [f.dataType for f in theirs.schema.fields]
    assert list(ours.first()) == list(theirs.first()) == LITERALS


def test_nan_literal(spark) -> None:
    import math

    (value,) = spark.range(1).select(lit(float("nan")).column()).first()
    assert math.isnan(value)


def test_operators_match_the_column_api(spark) -> None:
    from pyspark.sql import functions as F

    rows = [(None, None), ("", 0), (" 7 ", 3), ("x'y", -2), ("a\\b", 10)]
    df = spark.createDataFrame(rows, "s string, n int")
    s, n = col("s"), col("n")
    ours = [
        (s == lit("")) | s.isNull(),
        ~(n > lit(0)) & n.isNotNull(),
        n.isin([0, 3, None]),
        s.isin([]),
        when(n < lit(0), lit("neg")).when(n == lit(0), lit("zero")).otherwise(lit("pos")),
        when(n >= lit(3), n * lit(2) + lit(1) - lit(4) / lit(2)),
        call("regexp_replace", s, r"^\s+|\s+$", ""),
        s.rlike(r"^[0-9 ]+$"),
        s.try_cast("int"),
        n.cast("string"),
        call("concat", lit("'"), s, lit("'")),
        n <= lit(3),
    ]
    S, N = F.col("s"), F.col("n")
    theirs = [
        (S == "") | S.isNull(),
        ~(N > 0) & N.isNotNull(),
        N.isin([0, 3, None]),
        S.isin([]),
        F.when(N < 0, "neg").when(N == 0, "zero").otherwise("pos"),
        F.when(N >= 3, N * 2 + 1 - F.lit(4) / 2),
        F.regexp_replace(S, r"^\s+|\s+$", ""),
        S.rlike(r"^[0-9 ]+$"),
        S.try_cast("int"),
        N.cast("string"),
        F.concat(F.lit("'"), S, F.lit("'")),
        N <= 3,
    ]
    got = df.select(*[e.column().alias(f"e{i}") for i, e in enumerate(ours)])
    want = df.select(*[e.alias(f"e{i}") for i, e in enumerate(theirs)])
    assert [f.dataType for f in got.schema.fields] == [f.dataType for f in want.schema.fields]
    assert [tuple(r) for r in got.collect()] == [tuple(r) for r in want.collect()]


def test_a_closed_case_takes_no_more_branches() -> None:
    with pytest.raises(ValueError, match="not an open CASE"):
        when(lit(True), lit(1)).otherwise(lit(2)).when(lit(False), lit(3))
    with pytest.raises(ValueError, match="not an open CASE"):
        col("x").otherwise(lit(1))


def test_a_name_spark_would_substitute_is_refused() -> None:
    with pytest.raises(NotWritable, match="cannot appear"):
        col("${x}")
