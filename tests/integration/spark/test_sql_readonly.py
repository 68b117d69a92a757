"""``trendlake sql`` is read-only: only queries over the lake's views run (real Spark, real Delta).

Each attack is refused before Spark runs it, and the lake is byte-for-byte
unchanged afterwards (same files, same versions, same rows); legitimate
queries (SELECT, WITH, JOIN, aggregates, subqueries, windows, UNION, VALUES)
work, and ``--format csv|json`` print every row.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from trendlake.jobs.cli import main
from trendlake.jobs.lake import Lake
from trendlake.jobs.spark import get_spark
from trendlake.jobs.sql import SqlRefused, run_sql


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sqllake")
    lk = Lake(root)
    lk.write_arrow("results/trips", pa.table({"driver": [1, 2, 1], "n": [10, 20, 30]}))
    lk.write_arrow("bronze/rides", pa.table({"driver": [1, 2, 3], "type": ["A", "B", "A"]}))
    return root


@pytest.fixture(scope="module")
def spark():  # noqa: ANN201
    return get_spark()


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
