"""Every Spark job exits with its real status, run after run: no SIGABRT (134) from
native thread pools torn down at interpreter exit (jobs/process.py).

Each command runs as the installed ``trendlake`` executable in a fresh process on a
small lake. The lake's first ingest is itself such a process, run as a user runs it
(no ``TRENDLAKE_SPARK_LOG_LEVEL``): its summary must be the last line it prints and
Spark must say nothing on stderr. ``TRENDLAKE_EXIT_RUNS=20`` is the full check (stats
and replay 20 times each, ingest and optimize 5 times each); every run starts a JVM,
so the default run (CI) runs each command once. (The cluster test runs the commands
through ``jobs.cli.main`` in one ``python -c`` driver process and checks its status.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trendlake.schemas import workload_path

from tests.integration.sample import trip_rows, write_csv

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TRENDLAKE = shutil.which("trendlake", path=str(Path(sys.executable).parent)) or "trendlake"
WORKLOAD = str(workload_path("sample_rides.etq"))
DAY = ["--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z"]
SCALE = float(os.environ.get("TRENDLAKE_EXIT_RUNS", "1")) / 20


def runs(n: int) -> int:
    return max(1, round(n * SCALE))


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
    return subprocess.run([TRENDLAKE, *args], capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> dict:
    """The small lake, ingested by a ``trendlake ingest`` process with Spark's default log level."""
    from trendlake.jobs.optimize import optimize

    root = tmp_path_factory.mktemp("exits")
    rows = trip_rows(40, seed=5, hours=20.0)
    write_csv(root / "landing" / "trips.csv", rows)
    user_env = {k: v for k, v in os.environ.items() if k != "TRENDLAKE_SPARK_LOG_LEVEL"}
    first = run("ingest", "--lake", str(root / "lake"), "--landing", str(root / "landing"), "--stream", "rides",
                env=user_env)
    assert first.returncode == 0, first.stderr[-2000:]
    optimize(root / "lake", WORKLOAD, stream="rides")
    return {"lake": str(root / "lake"), "landing": str(root / "landing"), "first_ingest": first, "rows": len(rows)}


def test_the_ingest_summary_is_the_last_thing_printed_and_spark_is_quiet(lake) -> None:
    done = lake["first_ingest"]
    assert done.stdout.strip().splitlines()[-1].startswith(
        f"rides: 1 files ingested, 0 skipped; {lake['rows']} rows read"), done.stdout
    noise = [line for line in done.stderr.splitlines()
             if " WARN " in line or " INFO " in line or "log level" in line or "log4j" in line
             or "clientserver" in line or "Skipping registering" in line]
    assert noise == [], noise


def repeat(times: int, *args: str) -> None:
    codes = []
    for _ in range(times):
        done = run(*args)
        codes.append(done.returncode)
        assert done.returncode == 0, f"{args[0]} exited {done.returncode} after {len(codes)} runs: {done.stderr[-2000:]}"
    assert codes == [0] * times


def test_stats_exits_zero_every_time(lake) -> None:
    repeat(runs(20), "stats", "--lake", lake["lake"], "--stream", "rides", "--workload", WORKLOAD, *DAY)


def test_replay_exits_zero_every_time(lake) -> None:
    repeat(runs(20), "replay", WORKLOAD, "--lake", lake["lake"], "--stream", "rides", *DAY)


def test_ingest_exits_zero_every_time(lake) -> None:
    # the landing file was ingested already: every rerun is a no-op run that still commits its log
    repeat(runs(5), "ingest", "--lake", lake["lake"], "--stream", "rides", "--landing", lake["landing"])


def test_optimize_exits_zero_every_time(lake) -> None:
    repeat(runs(5), "optimize", WORKLOAD, "--lake", lake["lake"], "--stream", "rides")


def test_a_failing_command_keeps_its_status(tmp_path) -> None:
    done = run("replay", WORKLOAD, "--lake", str(tmp_path / "missing"), "--stream", "rides", *DAY)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "trendlake: error:" in done.stderr


# The Spark sub-commands on bad input: exit 2 and one ``trendlake: error:`` line naming what is
# wrong (docs/cli.md; the other sub-commands: tests/unit/jobs/test_exit_codes.py).
BAD_INPUT = {
    "ingest, no landing folder": (["ingest", "--lake", "{lake}", "--stream", "rides", "--landing", "{tmp}/nope"],
                                  "landing folder"),
    "ingest, unknown stream": (["ingest", "--lake", "{lake}", "--stream", "trains", "--landing", "{landing}"],
                               "no stream schema 'trains'"),
    "stats, no bronze": (["stats", "--lake", "{tmp}/empty", "--stream", "rides", *DAY], "run ingest first"),
    "stats, empty range": (["stats", "--lake", "{lake}", "--stream", "rides", "--from", "2026-01-02T00:00:00Z",
                            "--to", "2026-01-01T00:00:00Z"], "empty stats range"),
    "replay, empty interval": (["replay", WORKLOAD, "--lake", "{lake}", "--stream", "rides",
                                "--from", "2026-01-02T00:00:00Z", "--to", "2026-01-01T00:00:00Z"], "empty interval"),
    "replay, report folder": (["replay", WORKLOAD, "--lake", "{lake}", "--stream", "rides", *DAY,
                               "--report-out", "{tmp}/no/r.json"], "--report-out"),
    "sql, no query": (["sql", "--lake", "{lake}", "--file", "{tmp}/nope.sql"], "nope.sql"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_the_spark_commands_on_bad_input_exit_2(lake, tmp_path, case) -> None:
    argv, words = BAD_INPUT[case]
    (tmp_path / "empty").mkdir()
    names = {"lake": lake["lake"], "landing": lake["landing"], "tmp": str(tmp_path)}
    done = run(*[a.format(**names) if a.startswith("{") else a for a in argv])
    assert done.returncode == 2, (case, done.returncode, done.stderr[-2000:])
    errors = [line for line in done.stderr.splitlines() if line.startswith("trendlake: error:")]
    assert len(errors) == 1 and words in errors[0], (case, done.stderr[-2000:])
    assert "Traceback" not in done.stderr


def test_great_expectations_never_ends_a_process_without_a_main_file(tmp_path) -> None:
    """``python -c`` has a ``__main__`` without ``__file__``: pyspark.sql.connect, which GE
    tries to import, then calls ``sys.exit(0)`` (it takes the process for its doctest run),
    and an ingest driven from such a process stopped before its commit with status 0."""
    script = (
        "import sys\n"
        "from trendlake.jobs.quality import import_great_expectations\n"
        "gx = import_great_expectations()\n"
        "from great_expectations.datasource.fluent import SparkDatasource\n"  # what ingest's validation uses
        "print('still running', gx.__name__, hasattr(sys.modules['__main__'], '__file__'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "still running great_expectations False", (done.stdout, done.stderr[-2000:])
