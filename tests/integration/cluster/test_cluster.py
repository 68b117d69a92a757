"""The pipeline on a real Spark standalone cluster equals the pipeline in local mode.

A master and two workers (one core, 1 GiB each) run as separate processes on
loopback (``standalone.py``); every executor is its own JVM with its own
Python workers. ingest, stats, optimize and replay run through the command
line's ``jobs.cli.main``, once with ``--master spark://...`` into one lake and
once in ``local[2]`` into another, on the same generated landing day. The
cluster run is one driver process (a subprocess running the four commands one
after the other, as a scheduler's worker does), so one Spark application whose
executors serve all its jobs; each command in a process of its own is what
``spark/test_exit_codes.py`` runs. The local run is the reference: its four
commands run in the test process, on the worker's running local[2] session,
so they start no JVM of their own. Both lakes must hold the same bronze and
quarantine rows, the same statistics, the same plan (but for the statistics
run's id and time) and the same result tables (all columns but
``computed_at`` and run ids).

The cluster is made unlike the driver on purpose, as real nodes are: the
workers run in their own folder (the lake is given to the driver as a
*relative* path), with their own ``TMPDIR`` and ``HOME``, in another time
zone, without the virtualenv on ``PATH`` and without ``PYSPARK_PYTHON``; the
driver sends the Python executable. Replay's wall time in both modes is
printed (``-s``); set ``TRENDLAKE_CLUSTER_EVENTS`` to change the day's size.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from trendlake.schemas import workload_path

from tests.integration.cluster.standalone import HOST, StandaloneCluster

pytestmark = [pytest.mark.spark, pytest.mark.slow]

EVENTS = int(os.environ.get("TRENDLAKE_CLUSTER_EVENTS", "5000"))
DAY_FROM, DAY_TO = "2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z"
WORKLOAD = workload_path("sample_rides.etq")
STEP_TIMEOUT = float(os.environ.get("TRENDLAKE_CLUSTER_STEP_TIMEOUT", "900"))  # a hung job fails, never hangs CI
CLUSTER_TIMEOUT = 240.0


def trendlake_cmd() -> list[str]:
    script = Path(sys.executable).with_name("trendlake")
    return [str(script)] if script.exists() else [sys.executable, "-m", "trendlake.jobs.cli"]


def worker_env(folder: Path) -> dict[str, str | None]:
    """What a worker node looks like: its own temp and home folders, clock zone, no venv."""
    private = folder / "node"
    (private / "tmp").mkdir(parents=True, exist_ok=True)
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return {
        "TMPDIR": str(private / "tmp"),
        "HOME": str(private),
        "TZ": "Pacific/Kiritimati",  # UTC+14: a result that depends on a node's zone differs
        "PATH": path,
        "PYSPARK_PYTHON": None,
        "VIRTUAL_ENV": None,
    }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("cluster")
    with StandaloneCluster(folder, workers=2, cores=1, memory="1g", worker_env=worker_env(folder),
                           timeout=CLUSTER_TIMEOUT) as running:
        yield running


def driver_env() -> dict[str, str]:
    """The environment of a driver process (the machine the commands are typed on)."""
    env = dict(os.environ)
    env.update({"SPARK_LOCAL_IP": HOST, "TZ": "America/Los_Angeles"})
    env.pop("TRENDLAKE_SPARK_MASTER", None)
    return env


# the cluster run's driver: the commands given as JSON, one after the other in this one
# process (one Spark application); each command's status, output and wall time as a JSON line
DRIVER = r"""
import contextlib, io, json, sys, time
from trendlake.jobs.cli import main
from trendlake.jobs.process import exit_now
for args in json.loads(sys.argv[2]):
    out, started = io.StringIO(), time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(["--master", sys.argv[1], *args])
    print(json.dumps({"args": args, "code": code, "stdout": out.getvalue(),
                      "wall": time.perf_counter() - started}), flush=True)
    if code:
        break
exit_now(code)
"""


def pipeline_steps(lake: str, landing: str = "landing") -> list[list[str]]:
    """ingest, stats, optimize and replay of the landing day into ``lake`` (relative to the working folder)."""
    return [
        ["ingest", "--lake", lake, "--stream", "rides", "--landing", landing],
        ["stats", "--lake", lake, "--stream", "rides", "--workload", str(WORKLOAD), "--from", DAY_FROM, "--to", DAY_TO],
        ["optimize", str(WORKLOAD), "--lake", lake, "--stream", "rides"],
        ["replay", str(WORKLOAD), "--lake", lake, "--stream", "rides", "--from", DAY_FROM, "--to", DAY_TO],
    ]


def replay_timings(stdout: str, wall: float) -> dict[str, float]:
    job = re.search(r"plan \S+, (?:replay run \S+, )?([0-9.]+)s", stdout)
    assert job, stdout
    return {"replay_wall_s": wall, "replay_job_s": float(job.group(1))}


def pipeline(cwd: Path, lake: str, master: str) -> dict[str, float]:
    """The pipeline into ``cwd/lake`` by one driver process on ``master``; replay's timings."""
    steps = pipeline_steps(lake)
    try:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, master, json.dumps(steps)], cwd=cwd, env=driver_env(),
            capture_output=True, text=True, timeout=STEP_TIMEOUT * len(steps), stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"the pipeline on {master} did not finish in {STEP_TIMEOUT * len(steps):.0f}s:\n"
                    f"{(err.stderr or b'')[-3000:]!r}")
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"args"')]
    failed = [r for r in reports if r["code"] != 0]
    assert done.returncode == 0 and not failed and len(reports) == len(steps), (
        f"the pipeline on {master} exited {done.returncode} after {[r['args'][0] for r in reports]}\n"
        f"failed: {failed[-1:]}\nstdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-4000:]}"
    )
    return replay_timings(reports[-1]["stdout"], reports[-1]["wall"])


def pipeline_in_this_driver(folder: Path, lake: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, float]:
    """The same commands into ``folder/lake`` through ``jobs.cli.main`` in this process, as the
    executable runs them: the test worker's running local[2] session serves every Spark command
    (``jobs.spark.get_spark`` returns the active session), so no driver JVM is started for them.
    Paths are absolute: the running JVM's working folder is not ``folder``."""
    from trendlake.jobs.cli import main

    monkeypatch.setenv("TRENDLAKE_SPARK_MASTER", "local[2]")  # restored after the test (main sets it)
    for args in pipeline_steps(str(folder / lake), str(folder / "landing")):
        out = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out):
            code = main(["--master", "local[2]", *args])
        elapsed = time.perf_counter() - started
        assert code == 0, f"`trendlake {' '.join(args)}` in local mode exited {code}: {out.getvalue()[-2000:]}"
    return replay_timings(out.getvalue(), elapsed)


# ---------------------------------------------------------------------- comparing lakes


RUN_COLUMNS = re.compile(r"(^computed_at$|^ingested_at$|run_id$)")


def rows_of(lake: Path, table: str) -> list[str]:
    """A table's rows without time-of-run and run-id columns, as sorted canonical JSON."""
    from deltalake import DeltaTable

    data = DeltaTable(str(lake / table)).to_pyarrow_table()
    keep = [c for c in data.column_names if not RUN_COLUMNS.search(c)]
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in data.select(keep).to_pylist())


def tables_of(lake: Path) -> list[str]:
    return sorted(
        f"{kind.name}/{t.name}" for kind in lake.iterdir() if kind.is_dir() and not kind.name.startswith("_")
        for t in kind.iterdir() if (t / "_delta_log").is_dir()
    )


def current_plan(lake: Path) -> dict[str, Any]:
    folder = lake / "plans" / WORKLOAD.stem
    plan_id = json.loads((folder / "current.json").read_text())["plan_id"]
    return json.loads((folder / f"{plan_id}.json").read_text())


def without_run(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan but for when it was made and what names the statistics run (its id and time, and
    so the plan id's tail: the optimizer fingerprints the whole statistics record)."""
    plan = json.loads(json.dumps(plan))
    plan.pop("created_at", None)
    plan.pop("content_hash", None)  # it covers the fields above
    stats = plan.get("statistics") or {}
    for key in ("run_id", "computed_at"):
        stats.pop(key, None)
    plan["plan_id"] = plan["plan_id"].rsplit("-", 1)[0]
    return plan


def executor_logs(folder: Path) -> dict[str, list[Path]]:
    """Per worker, the stderr files of the executors it launched (``work/app-*/N/stderr``)."""
    return {w.name: sorted(w.glob("app-*/*/stderr")) for w in sorted(folder.glob("worker*"))}


# ---------------------------------------------------------------------- the test


def test_cluster_pipeline_equals_local(cluster: StandaloneCluster, spark: Any, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    generated = subprocess.run(
        [*trendlake_cmd(), "generate", "rides", "-n", str(EVENTS), "--rate", str(EVENTS / 80_000),
         "--param", "drivers=300", "--param", "riders=1000", "--start", DAY_FROM, "-o", "landing/day.csv"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert generated.returncode == 0, generated.stderr

    on_cluster = pipeline(tmp_path, "lake-cluster", cluster.url)
    local = pipeline_in_this_driver(tmp_path, "lake-local", monkeypatch)

    # every Spark job of the cluster run got executors on both workers
    apps = (cluster.master_state() or {}).get("completedapps", []) + (cluster.master_state() or {}).get("activeapps", [])
    assert len(apps) == 1, [a.get("name") for a in apps]  # the one driver's (optimize needs no Spark)
    launched = executor_logs(cluster.folder)
    assert all(len(files) == 1 for files in launched.values()) and len(launched) == 2, launched
    for files in launched.values():  # ... and reached the driver on loopback, as $SPARK_LOCAL_IP says
        for stderr in files:
            assert f"Connecting to driver: spark://CoarseGrainedScheduler@{HOST}:" in stderr.read_text(), stderr

    cluster_lake, local_lake = tmp_path / "lake-cluster", tmp_path / "lake-local"
    tables = tables_of(local_lake)
    assert tables == tables_of(cluster_lake)
    assert {t.split("/")[0] for t in tables} >= {"bronze", "quarantine", "ingest_log", "stats", "results"}

    bronze = rows_of(cluster_lake, "bronze/rides")
    assert len(bronze) == EVENTS
    assert bronze == rows_of(local_lake, "bronze/rides")
    assert without_run(current_plan(cluster_lake)) == without_run(current_plan(local_lake))
    results = [t for t in tables if t.startswith("results/")]
    assert len(results) == len(current_plan(local_lake)["queries"])
    found = 0
    for table in tables:
        if table.startswith("results/"):
            # plan_id names the lake's own statistics run; the rest must match row for row
            a = [re.sub(r'"plan_id": "[^"]*"', "", r) for r in rows_of(cluster_lake, table)]
            b = [re.sub(r'"plan_id": "[^"]*"', "", r) for r in rows_of(local_lake, table)]
            assert a == b, f"{table}: {len(a)} rows on the cluster, {len(b)} in local mode"
            found += len(a)
        elif table.startswith("replay_log/"):
            # one log per lake's own run (ids, plan ids and times differ): the same statuses
            from deltalake import DeltaTable

            statuses = [sorted(DeltaTable(str(lake / table)).to_pyarrow_table().column("status").to_pylist())
                        for lake in (cluster_lake, local_lake)]
            assert statuses[0] == statuses[1] and "complete" in statuses[0], statuses
        else:
            assert rows_of(cluster_lake, table) == rows_of(local_lake, table), table
    assert found > 0

    print(f"\nreplay of {EVENTS} events ({DAY_FROM} .. {DAY_TO}), {found} result rows: "
          f"cluster (2 workers x 1 core) {on_cluster['replay_wall_s']:.1f}s wall / {on_cluster['replay_job_s']:.1f}s in job; "
          f"local[2] {local['replay_wall_s']:.1f}s wall (in the test's running driver) / {local['replay_job_s']:.1f}s in job")
