"""``trendlake sql`` is read-only: only queries over the lake's views run (real Spark, real Delta).

Each attack is refused before Spark runs it, and the lake is byte-for-byte
unchanged afterwards (same files, same versions, same rows); every trick that
resolves a name to reflection (``IDENTIFIER(...)``, concatenated names,
``try_reflect``, ``java_method``, case, backquotes, ``system.builtin.``,
lambdas, subqueries, CTEs, hints, generators, UDFs, other views) is refused,
by each of the two passes on its own where both see it; legitimate queries
work; the text and the plan are bounded; ``--file`` and ``-`` (stdin) read
long queries; errors are one line with Spark's error class, and a real
``trendlake sql`` process prints nothing else on stderr.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from trendlake.jobs import sql as sqlmod
from trendlake.jobs.cli import main
from trendlake.jobs.lake import Lake
from trendlake.jobs.sql import (
    SqlError,
    SqlRefused,
    check_analyzed,
    check_read_only,
    register_views,
    run_sql,
)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sqllake")
    lk = Lake(root)
    lk.write("results/trips", pa.table({"driver": [1, 2, 1], "n": [10, 20, 30]}))
    lk.write("bronze/rides", pa.table({"driver": [1, 2, 3], "type": ["A", "B", "A"]}))
    return root


def snapshot(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


ATTACKS = {
    "insert overwrite directory": "INSERT OVERWRITE DIRECTORY '{lake}/results/trips' USING parquet SELECT 1",
    "local file as text": "SELECT * FROM text.`/etc/hostname`",
    "lake folder as parquet": "SELECT * FROM parquet.`{lake}/results/trips`",
    "csv file in a CTE": "WITH x AS (SELECT * FROM csv.`/etc/passwd`) SELECT * FROM x",
    "file in a scalar subquery": "SELECT (SELECT count(*) FROM text.`/etc/hostname`) AS n",
    "file in an IN subquery": "SELECT * FROM results_trips WHERE driver IN (SELECT value FROM text.`/etc/hostname`)",
    "read_files": "SELECT * FROM read_files('/etc/hostname', format => 'text')",
    "range tvf": "SELECT * FROM range(10)",
    "identifier clause": "SELECT * FROM IDENTIFIER('text.`/etc/hostname`')",
    "insert into view": "INSERT INTO results_trips SELECT * FROM results_trips",
    "create table as": "CREATE TABLE t USING parquet LOCATION '{lake}/results/trips' AS SELECT 1 AS x",
    "drop view": "DROP VIEW results_trips",
    "set": "SET spark.sql.ansi.enabled=false",
    "cache": "CACHE TABLE results_trips",
    "add jar": "ADD JAR /tmp/nothing.jar",
    "explain": "EXPLAIN SELECT * FROM results_trips",
    "script": "BEGIN SELECT 1; DROP VIEW results_trips; END",
    "reflect": "SELECT reflect('java.lang.System', 'getProperty', 'user.home') AS h",
    "unknown view": "SELECT * FROM some_other_view",
    "two statements": "SELECT 1; DROP VIEW results_trips",
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_is_refused_and_the_lake_unchanged(spark, lake: Path, name: str) -> None:  # noqa: ANN001
    before = snapshot(lake)
    versions = {t: Lake(lake).version(t) for t in Lake(lake).tables()}
    with pytest.raises(SqlRefused):
        run_sql(spark, lake, ATTACKS[name].format(lake=lake))
    assert snapshot(lake) == before
    assert {t: Lake(lake).version(t) for t in Lake(lake).tables()} == versions
    assert (lake / "results" / "trips" / "_delta_log").is_dir()
    rows = run_sql(spark, lake, "SELECT sum(n) AS s FROM results_trips", as_arrow=True).to_pylist()
    assert rows == [{"s": 60}]


def test_the_cli_refuses_with_one_line_and_exit_2(spark, lake: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    before = snapshot(lake)
    code = main(["sql", "--lake", str(lake), ATTACKS["insert overwrite directory"].format(lake=lake)])
    err = capsys.readouterr().err
    assert code == 2
    assert "InsertIntoDir" in err and "read-only" in err
    assert snapshot(lake) == before


LEGIT = {
    "select": ("SELECT driver, n FROM results_trips WHERE n > 10 ORDER BY n", [(2, 20), (1, 30)]),
    "aggregate": ("SELECT driver, sum(n) AS s FROM results_trips GROUP BY driver ORDER BY driver", [(1, 40), (2, 20)]),
    "with and join": (
        "WITH t AS (SELECT driver, n FROM results_trips) "
        "SELECT b.type, sum(t.n) AS s FROM t JOIN bronze_rides b ON t.driver = b.driver GROUP BY b.type ORDER BY b.type",
        [("A", 40), ("B", 20)],
    ),
    "subquery": ("SELECT count(*) FROM bronze_rides WHERE driver IN (SELECT driver FROM results_trips)", [(2,)]),
    "window": ("SELECT driver, n, rank() OVER (PARTITION BY driver ORDER BY n) AS r FROM results_trips "
               "ORDER BY n", [(1, 10, 1), (2, 20, 1), (1, 30, 2)]),
    "union": ("SELECT driver FROM results_trips UNION SELECT driver FROM bronze_rides ORDER BY driver",
              [(1,), (2,), (3,)]),
    "values": ("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(x, y) ORDER BY x", [(1, "a"), (2, "b")]),
    "tables view": ("SELECT table_name, rows FROM trendlake_tables ORDER BY table_name",
                    [("bronze.rides", 3), ("results.trips", 3)]),
}


@pytest.mark.parametrize("name", list(LEGIT))
def test_legitimate_queries_work(spark, lake: Path, name: str) -> None:  # noqa: ANN001
    sql, expected = LEGIT[name]
    rows = [tuple(r) for r in run_sql(spark, lake, sql).collect()]
    assert rows == expected


def test_csv_and_json_print_every_row(spark, lake: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    sql = "SELECT id, id * 2 AS twice FROM (SELECT explode(sequence(1, 250)) AS id) ORDER BY id"
    assert main(["sql", "--lake", str(lake), "--format", "csv", "--limit", "5", sql]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["id", "twice"]
    assert len(rows) == 251 and rows[-1] == ["250", "500"]
    assert main(["sql", "--lake", str(lake), "--format", "json", sql]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 250 and lines[0] == {"id": 1, "twice": 2}


def test_json_output_is_json_at_non_finite_doubles(spark, lake: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    sql = ("SELECT CAST('Infinity' AS DOUBLE) AS inf, CAST('-Infinity' AS DOUBLE) AS ninf, "
           "CAST('NaN' AS DOUBLE) AS nan, CAST('-0.0' AS DOUBLE) AS negzero, 1.5D AS x")

    def refuse(constant: str) -> None:
        raise AssertionError(f"bare {constant} is not JSON")

    assert main(["sql", "--lake", str(lake), "--format", "json", sql]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    row = json.loads(line, parse_constant=refuse)
    assert row == {"inf": "Infinity", "ninf": "-Infinity", "nan": "NaN", "negzero": 0.0, "x": 1.5}
    assert '"negzero": 0.0' in line  # one output form for the two zeros, as eval prints


# ------------------------------------------------ resolution tricks (what Spark resolved, not the text)

REFLECT = "'java.lang.System', 'setProperty', 'trendlake.sql.probe', 'ran'"
PROBE = "trendlake.sql.probe"

TRICKS = {
    "identifier literal": f"SELECT IDENTIFIER('reflect')({REFLECT}) AS h",
    "identifier concatenation": f"SELECT IDENTIFIER('ref' || 'lect')({REFLECT}) AS h",
    "identifier concat()": f"SELECT IDENTIFIER(concat('java_', 'method'))({REFLECT}) AS h",
    "identifier try_reflect": f"SELECT IDENTIFIER('try_reflect')({REFLECT}) AS h",
    "identifier java_method": f"SELECT IDENTIFIER('java_method')({REFLECT}) AS h",
    "identifier qualified": f"SELECT IDENTIFIER('system.builtin.reflect')({REFLECT}) AS h",
    "identifier backquoted": f"SELECT IDENTIFIER('`reflect`')({REFLECT}) AS h",
    "identifier from a subquery": f"SELECT IDENTIFIER((SELECT 'reflect'))({REFLECT}) AS h",
    "try_reflect": f"SELECT try_reflect({REFLECT}) AS h",
    "java_method": f"SELECT java_method({REFLECT}) AS h",
    "upper case": f"SELECT JAVA_METHOD({REFLECT}) AS h",
    "mixed case": f"SELECT ReFlEcT({REFLECT}) AS h",
    "backquoted": f"SELECT `reflect`({REFLECT}) AS h",
    "backquoted mixed case": f"SELECT `Try_Reflect`({REFLECT}) AS h",
    "system.builtin": f"SELECT system.builtin.reflect({REFLECT}) AS h",
    "builtin.": f"SELECT builtin.java_method({REFLECT}) AS h",
    "backquoted parts": f"SELECT `system`.`builtin`.`try_reflect`({REFLECT}) AS h",
    "lambda in transform": f"SELECT transform(array(1), x -> reflect({REFLECT})) AS h",
    "lambda in aggregate": f"SELECT aggregate(array(1), '', (acc, x) -> concat(acc, java_method({REFLECT}))) AS h",
    "identifier in a lambda": f"SELECT filter(array('a'), x -> IDENTIFIER('reflect')({REFLECT}) IS NULL) AS h",
    "scalar subquery in SELECT": f"SELECT (SELECT reflect({REFLECT})) AS h",
    "IN subquery in WHERE": f"SELECT * FROM results_trips WHERE CAST(n AS string) IN (SELECT java_method({REFLECT}))",
    "EXISTS subquery": f"SELECT * FROM results_trips WHERE EXISTS (SELECT try_reflect({REFLECT}))",
    "CTE": f"WITH x AS (SELECT reflect({REFLECT}) AS h) SELECT * FROM x",
    "nested CTE": f"SELECT * FROM (WITH x AS (SELECT IDENTIFIER('reflect')({REFLECT}) AS h) SELECT * FROM x) y",
    "lateral subquery": f"SELECT * FROM results_trips r, LATERAL (SELECT reflect({REFLECT}) AS h)",
    "ORDER BY": f"SELECT n FROM results_trips ORDER BY reflect({REFLECT})",
    "GROUP BY": f"SELECT max(n) FROM results_trips GROUP BY java_method({REFLECT})",
    "HAVING": f"SELECT max(n) FROM results_trips HAVING max(reflect({REFLECT})) IS NOT NULL",
    "window partition": f"SELECT rank() OVER (PARTITION BY reflect({REFLECT}) ORDER BY n) FROM results_trips",
    "LATERAL VIEW": f"SELECT e FROM results_trips LATERAL VIEW explode(array(reflect({REFLECT}))) t AS e",
    "hint argument": f"SELECT /*+ REPARTITION(3, reflect({REFLECT})) */ * FROM results_trips",
    "CLUSTER BY": f"SELECT * FROM results_trips CLUSTER BY java_method({REFLECT})",
    "pipe syntax": f"SELECT * FROM results_trips |> EXTEND reflect({REFLECT}) AS h",
    "VALUES row": f"SELECT * FROM VALUES (1), (length(java_method({REFLECT}))) AS t(x)",
    "LIMIT expression": f"SELECT * FROM results_trips LIMIT length(reflect({REFLECT}))",
    "aggregate FILTER": f"SELECT sum(n) FILTER (WHERE reflect({REFLECT}) IS NULL) FROM results_trips",
    "unused named window": f"SELECT n FROM results_trips WINDOW w AS (PARTITION BY reflect({REFLECT}))",
    "named window, file read while resolved": (
        "SELECT max(n) OVER w FROM results_trips WINDOW w AS (PARTITION BY from_protobuf(CAST(NULL AS binary), "
        "'M', '/etc/passwd'))"),
    "named arguments": "SELECT reflect(class => 'java.lang.System', method => 'getenv') AS h",
    "protobuf descriptor file": "SELECT from_protobuf(CAST(NULL AS binary), 'M', '/etc/passwd') AS h",
    "protobuf by concatenation": "SELECT IDENTIFIER('from_' || 'protobuf')(CAST(NULL AS binary), 'M', '/etc/passwd') AS h",
    "xml schema file": "SELECT from_xml('<a>1</a>', 'a INT', map('rowValidationXSDPath', '/etc/passwd')) AS h",
    "avro": "SELECT from_avro(CAST(NULL AS binary), '{}') AS h",
    "script transform": "SELECT TRANSFORM(n) USING 'touch /tmp/trendlake-sql-probe' AS (x) FROM results_trips",
    "execute immediate": "EXECUTE IMMEDIATE 'SELECT reflect(''java.lang.System'', ''getenv'', ''HOME'')'",
    "declare variable": "DECLARE VARIABLE v STRING DEFAULT 'x'",
    "set variable": "SET VAR v = 'y'",
    "reset": "RESET",
    "reset a key": "RESET spark.sql.ansi.enabled",
    "time travel": "SELECT * FROM results_trips VERSION AS OF 0",
    "recursive CTE": "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 3) SELECT * FROM r",
    "unknown function": "SELECT no_such_function(1)",
    "persistent function": "SELECT default.my_function(1)",
    "parameter marker": "SELECT * FROM results_trips WHERE n = :param",
}


@pytest.fixture(scope="module")
def views(spark, lake: Path) -> set[str]:  # noqa: ANN001
    return {r["view"] for r in register_views(spark, lake)} | {sqlmod.TABLES_VIEW}


def analysed(spark, sql: str):  # noqa: ANN001, ANN201
    """Spark's analysed plan of ``sql`` -- resolution only, nothing runs (the second pass's input)."""
    state = spark._jsparkSession.sessionState()
    skip = spark.sparkContext._jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    return state.executePlan(state.sqlParser().parsePlan(sql), skip).analyzed()


@pytest.mark.parametrize("name", list(TRICKS))
def test_resolution_tricks_are_refused(spark, views: set[str], name: str) -> None:  # noqa: ANN001
    with pytest.raises(SqlRefused) as refused:
        check_read_only(spark, TRICKS[name], views)
    assert "\n" not in str(refused.value)
    assert spark.sparkContext._jvm.java.lang.System.getProperty(PROBE) is None
    assert not Path("/tmp/trendlake-sql-probe").exists()


@pytest.mark.parametrize("sql", [
    f"SELECT reflect({REFLECT})", f"SELECT try_reflect({REFLECT})", f"SELECT java_method({REFLECT})",
    f"SELECT IDENTIFIER('ref' || 'lect')({REFLECT})", f"SELECT transform(array(1), x -> java_method({REFLECT}))",
    f"SELECT (SELECT max(x) FROM (SELECT IDENTIFIER('java_' || 'method')({REFLECT}) AS x))",
    f"WITH q AS (SELECT try_reflect({REFLECT}) AS h) SELECT * FROM q",
])
def test_the_analysed_pass_alone_refuses_what_reflection_resolved_to(spark, views: set[str], sql: str) -> None:  # noqa: ANN001
    """Even if the parsed pass let it through, the analysed plan shows ``CallMethodViaReflection``."""
    with pytest.raises(SqlRefused, match="not allowed in lake queries"):
        check_analyzed(spark, analysed(spark, sql), views)
    assert spark.sparkContext._jvm.java.lang.System.getProperty(PROBE) is None


def test_udfs_and_other_views_are_refused_by_both_passes(spark, views: set[str]) -> None:  # noqa: ANN001
    spark.udf.register("lake_probe_udf", lambda x: x)
    spark.range(3).createOrReplaceTempView("not_a_lake_view")
    try:
        with pytest.raises(SqlRefused, match="temporary function"):
            check_read_only(spark, "SELECT lake_probe_udf(n) FROM results_trips", views)
        with pytest.raises(SqlRefused, match="temporary function"):
            check_read_only(spark, "SELECT IDENTIFIER('lake_probe_udf')(n) FROM results_trips", views)
        with pytest.raises(SqlRefused, match="PythonUDF"):
            check_analyzed(spark, analysed(spark, "SELECT lake_probe_udf(1)"), views)
        with pytest.raises(SqlRefused, match="not a lake view"):
            check_read_only(spark, "SELECT * FROM not_a_lake_view", views)
        with pytest.raises(SqlRefused, match="not_a_lake_view is not a lake view"):
            check_analyzed(spark, analysed(spark, "SELECT * FROM not_a_lake_view"), views)
    finally:
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS lake_probe_udf")
        spark.catalog.dropTempView("not_a_lake_view")


def test_a_refused_trick_leaves_no_trace_end_to_end(spark, lake: Path) -> None:  # noqa: ANN001
    before = snapshot(lake)
    for name in ("identifier concatenation", "try_reflect", "lambda in transform", "CTE"):
        with pytest.raises(SqlRefused):
            run_sql(spark, lake, TRICKS[name])
    assert spark.sparkContext._jvm.java.lang.System.getProperty(PROBE) is None
    assert snapshot(lake) == before


MORE_LEGIT = {
    "identifier literal": ("SELECT IDENTIFIER('abs')(-n) AS a FROM results_trips WHERE IDENTIFIER('n') = 10", [(10,)]),
    "lambdas": ("SELECT transform(array(n, 1), x -> x * 2) AS t, aggregate(array(n, 1), 0L, (a, x) -> a + x) AS s "
                "FROM results_trips WHERE n = 10", [([20, 2], 11)]),
    "correlated EXISTS": ("SELECT count(*) FROM results_trips r WHERE EXISTS "
                          "(SELECT 1 FROM bronze_rides b WHERE b.driver = r.driver AND b.type = 'B')", [(1,)]),
    "scalar subquery in nvl": ("SELECT nvl((SELECT max(n) FROM results_trips), 0) AS m", [(30,)]),
    "pipe syntax": ("FROM results_trips |> WHERE n > 10 |> AGGREGATE sum(n) AS s GROUP BY driver |> ORDER BY driver",
                    [(1, 30), (2, 20)]),
    "pivot": ("SELECT * FROM (SELECT driver, n FROM results_trips) PIVOT (sum(n) FOR driver IN (1 AS one, 2 AS two))",
              [(40, 20)]),
    "lateral view": ("SELECT e FROM results_trips LATERAL VIEW explode(array(n)) t AS e ORDER BY e",
                     [(10,), (20,), (30,)]),
    "rollup": ("SELECT driver, sum(n) FROM results_trips GROUP BY ROLLUP(driver) ORDER BY driver NULLS LAST",
               [(1, 40), (2, 20), (None, 60)]),
    "window frame": ("SELECT n, sum(n) OVER (ORDER BY n ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM results_trips "
                     "ORDER BY n", [(10, 10), (20, 30), (30, 50)]),
    "named arguments": ("SELECT mask(str => 'ab1', digitChar => '#')", [("xx#",)]),
    "try_ functions": ("SELECT try_divide(n, 0), try_add(n, 1) FROM results_trips WHERE n = 10", [(None, 11)]),
    "date arithmetic": ("SELECT DATE '2026-01-02' - DATE '2026-01-01' = INTERVAL 1 DAY", [(True,)]),
}


@pytest.mark.parametrize("name", list(MORE_LEGIT))
def test_more_legitimate_queries_work(spark, lake: Path, name: str) -> None:  # noqa: ANN001
    sql, expected = MORE_LEGIT[name]
    assert [tuple(r) for r in run_sql(spark, lake, sql).collect()] == expected


# ------------------------------------------------------------------------------------------ bounds


def test_the_query_text_is_bounded(spark, views: set[str]) -> None:  # noqa: ANN001
    at_limit = "SELECT 1 AS one -- " + "x" * (sqlmod.MAX_QUERY_BYTES - 19)
    assert len(at_limit.encode()) == sqlmod.MAX_QUERY_BYTES
    check_read_only(spark, at_limit, views)
    with pytest.raises(SqlRefused, match=f"is {sqlmod.MAX_QUERY_BYTES + 1} bytes; the limit is"):
        check_read_only(spark, at_limit + "x", views)


def test_the_plan_is_bounded(spark, views: set[str], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    # a WITH query counts at each reference: 40 lines of doubling would be 2^40 relations to analyse
    doubling = "WITH a0 AS (SELECT n FROM results_trips), " + ", ".join(
        f"a{i} AS (SELECT x.n FROM a{i - 1} x JOIN a{i - 1} y ON x.n = y.n)" for i in range(1, 40)
    ) + " SELECT count(*) FROM a39"
    with pytest.raises(SqlRefused, match="query too large to check: with each WITH query counted"):
        check_read_only(spark, doubling, views)
    sql = "SELECT driver, sum(n) + 1 AS s FROM results_trips GROUP BY driver"
    check_read_only(spark, sql, views)
    monkeypatch.setattr(sqlmod, "MAX_PLAN_NODES", 8)
    with pytest.raises(SqlRefused, match="more than 8 nodes"):
        check_read_only(spark, sql, views)


# ------------------------------------------------------------------------------- CLI: input, errors


def cli(lake: Path, *args: str) -> list[str]:
    return ["sql", "--lake", str(lake), "--format", "csv", *args]


def test_the_query_from_a_file_or_stdin(spark, lake: Path, tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    # longer than any shell argument comfortably is: 60 KB of comment lines, then the query
    long_query = "".join(f"-- filler line {i:05d} {'x' * 80}\n" for i in range(600)) + "SELECT sum(n) AS s FROM results_trips"
    assert len(long_query) > 50_000
    query_file = tmp_path / "q.sql"
    query_file.write_text(long_query)
    assert main(cli(lake, "--file", str(query_file))) == 0
    assert capsys.readouterr().out.splitlines() == ["s", "60"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(long_query.encode())))
    assert main(cli(lake, "-")) == 0
    assert capsys.readouterr().out.splitlines() == ["s", "60"]


@pytest.mark.parametrize("case", ["both", "neither", "not utf-8", "too long", "missing file", "empty"])
def test_bad_query_input_is_one_line_and_exit_2(lake: Path, tmp_path: Path, capsys, case: str) -> None:  # noqa: ANN001
    query_file = tmp_path / "q.sql"
    query_file.write_bytes({"not utf-8": b"SELECT '\xff'", "too long": b"-" * (sqlmod.MAX_QUERY_BYTES + 1),
                            "empty": b"  \n"}.get(case, b"SELECT 1"))
    args = {"both": ["--file", str(query_file), "SELECT 1"], "neither": [],
            "missing file": ["--file", str(tmp_path / "nope.sql")]}.get(case, ["--file", str(query_file)])
    assert main(cli(lake, *args)) == 2
    err = capsys.readouterr().err
    assert err.startswith("trendlake: error: ") and err.count("\n") == 1, err
    if case in ("not utf-8", "too long", "missing file", "empty"):
        assert "q.sql" in err or "nope.sql" in err


@pytest.mark.parametrize(("sql", "condition"), [
    ("SELECT nocol FROM results_trips", "UNRESOLVED_COLUMN.WITH_SUGGESTION"),
    ("SELEC 1", "PARSE_SYNTAX_ERROR"),
    ("SELECT 1 / (n - n) FROM results_trips", "DIVIDE_BY_ZERO"),
    ("SELECT raise_error('boom') FROM results_trips", "USER_RAISED_EXCEPTION"),
])
def test_spark_errors_are_one_line_with_the_error_class(spark, lake: Path, capsys, sql: str, condition: str) -> None:  # noqa: ANN001
    assert main(["sql", "--lake", str(lake), sql]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"trendlake: error: {condition}: ") and err.count("\n") == 1, err
    assert "\tat " not in err and "[" + condition + "]" not in err


def test_a_spark_error_line_is_bounded(spark, views: set[str]) -> None:  # noqa: ANN001
    # Spark quotes the failing expression in its message: here a 20,000-character literal
    with pytest.raises(SqlError) as error:
        check_read_only(spark, "SELECT array(1) + '" + "x" * 20_000 + "' AS bad", views)
    assert error.value.condition.startswith("DATATYPE_MISMATCH")
    assert len(str(error.value)) < sqlmod.MAX_MESSAGE_CHARS + 200 and "\n" not in str(error.value)
    assert str(error.value).endswith("more characters)")


def test_a_sql_process_prints_one_line_on_stderr(lake: Path) -> None:
    """The installed command in a fresh process (its own JVM): a failing query gives exit 2 and
    exactly one line on stderr -- no Java stack, no JVM log record, no JVM start-up notice."""
    trendlake = shutil.which("trendlake", path=str(Path(sys.executable).parent)) or "trendlake"
    env = {k: v for k, v in os.environ.items() if k != "TRENDLAKE_SPARK_LOG_LEVEL"}
    done = subprocess.run([trendlake, "sql", "--lake", str(lake), "-"], input="SELECT 1 / (n - n) FROM results_trips",
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr[-3000:]
    assert done.stderr.startswith("trendlake: error: DIVIDE_BY_ZERO: Division by zero."), done.stderr
