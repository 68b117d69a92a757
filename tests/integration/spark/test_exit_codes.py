"""Every Spark job exits with its real status, run after run: no SIGABRT (134) from
native thread pools torn down at interpreter exit (jobs/process.py).

Each command runs as the installed ``trendlake`` executable in a fresh process on a
small lake (built in this process with the test session's Spark: the commands under
test are the runs below). ``TRENDLAKE_EXIT_RUNS=20`` is the full check (stats and
replay 20 times each, ingest and optimize 5 times each); every run starts a JVM, so
the default run (CI) runs each command once. (Other tests run ``trendlake`` commands
as processes too and check their status: the cluster test, the ingest summary test.)
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


def run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([TRENDLAKE, *args], capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture(scope="module")
def lake(tmp_path_factory, spark) -> dict:
    from trendlake.jobs.ingest import ingest
    from trendlake.jobs.optimize import optimize
    from trendlake.schemas import load_stream_schema

    root = tmp_path_factory.mktemp("exits")
    write_csv(root / "landing" / "trips.csv", trip_rows(40, seed=5, hours=20.0))
    ingest(root / "lake", load_stream_schema("rides"), root / "landing", spark=spark)
    optimize(root / "lake", WORKLOAD, stream="rides")
    return {"lake": str(root / "lake"), "landing": str(root / "landing")}


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
    assert done.returncode not in (0, 134), done.stderr[-2000:]
    assert "trendlake: error:" in done.stderr
