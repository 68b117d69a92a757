"""``trendlake demo``: the whole pipeline on a generated ride-sharing day, no servers.

Steps (each printed as it starts, with its duration when it ends):

1. prepare ``OUT/`` — Airflow home on SQLite, the Spark pool, landing folder;
2. generate one day of ride-sharing events (Parquet) plus a small CSV with
   malformed rows, into the landing folder;
3. run the ``trendlake_ingest`` DAG (bronze + quarantine);
4. run the ``trendlake_optimize`` DAG (stats -> plan -> validation);
5. run the ``trendlake_replay`` DAG for the day's data interval (replay ->
   Great Expectations checks of the result tables);
6. query the result tables with Spark SQL and plot one query per window;
   print what the nightly plan shares and the replayed day's engine seconds
   against the plan's estimates;
7. drill down: construct the first complete trends behind the top
   ``stuck_trips`` window (``trendlake drill --top 1 --limit 5``) into
   ``trends.stuck_trips`` and show them with Spark SQL.

Airflow runs every DAG in-process with ``dag.test()`` against its SQLite
metadata database; Spark runs ``local[*]``; Delta tables live on local disk.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from trendlake.jobs.pipeline import SPARK_POOL
from trendlake.jobs.times import utc
from trendlake.schemas import workload_path

DAY = datetime(2026, 1, 1, tzinfo=UTC)


class Steps:
    """Numbered step lines with timings, so progress is visible."""

    def __init__(self, total: int) -> None:
        self.total, self.n, self.started = total, 0, time.perf_counter()
        self._t = self.started

    def __call__(self, title: str) -> None:
        self._done()
        self.n += 1
        self._t = time.perf_counter()
        print(f"[{self.n}/{self.total}] {title} ...", flush=True)

    def _done(self) -> None:
        if self.n:
            print(f"      done in {time.perf_counter() - self._t:.1f}s", flush=True)

    def finish(self) -> None:
        self._done()
        print(f"pipeline finished in {time.perf_counter() - self.started:.1f}s", flush=True)


def configure_environment(out: Path, dags: Path) -> dict[str, str]:
    """Environment for Airflow on SQLite and trendlake's settings, set before Airflow imports."""
    out = out.resolve()
    env = {
        "AIRFLOW_HOME": str(out / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags.resolve()),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{out / 'airflow' / 'airflow.db'}",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        "TRENDLAKE_LAKE": str(out / "lake"),
        "TRENDLAKE_LANDING": str(out / "landing"),
        "TRENDLAKE_STREAM": "rides",
        "TRENDLAKE_WORKLOAD": str(workload_path("rides_team.etq")),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    os.environ.update(env)
    (out / "airflow").mkdir(parents=True, exist_ok=True)
    (out / "landing").mkdir(parents=True, exist_ok=True)
    return env


def prepare_airflow() -> None:
    """Migrate Airflow's metadata database and set the Spark pool to one slot, in this process.

    The same as ``airflow db migrate`` and ``airflow pools set trendlake_spark 1 ...`` (both
    are idempotent), without an interpreter and an Airflow import for each: 2.3 s here once
    Airflow is imported (2.5 s, paid by the DAG runs anyway) against 10.3 s for the two
    commands. Airflow's settings must be in the environment
    before Airflow is imported (``configure_environment``).
    """
    from airflow.models.pool import Pool
    from airflow.utils import db

    db.upgradedb()
    Pool.create_or_update_pool(SPARK_POOL, 1, "Serialises Spark tasks on small machines", include_deferred=False)


def write_sample(landing: Path, events: int, seed: int) -> tuple[Path, Path]:
    """One generated day of rides (Parquet) and a small CSV with good and malformed rows."""
    from trendlake.datagen.streams import write_events

    day_file = landing / f"rides-{DAY:%Y-%m-%d}.parquet"
    if not day_file.exists():
        write_events(
            "rides", day_file, events, seed,
            format="parquet", start=DAY.isoformat(), rate_per_second=events / 86_400,
        )
    late_file = landing / f"rides-{DAY:%Y-%m-%d}-late.csv"
    if not late_file.exists():
        late_file.write_text(
            "type,ts,driver,rider,district,duration,speed,price\n"
            "Request,2026-01-01T23:10:00Z,7,70,Midtown,,,12.5\n"
            "Travel,2026-01-01T23:11:00Z,7,70,Midtown,60,8.5,\n"
            "Travel,2026-01-01T23:12:00Z,7,70,Midtown,60,7.0,\n"
            "Teleport,2026-01-01T23:13:00Z,7,70,Midtown,1,1,1\n"
            "Travel,yesterday,7,70,Midtown,60,7.0,\n"
            "Travel,2026-01-01T23:14:00Z,7,70,,60,7.0,\n"
            "Travel,2026-01-01T23:15:00Z,7,70,Midtown,60,fast,\n"
        )
    return day_file, late_file


def run_dag(dag_id: str, logical_date: datetime, dags: Path) -> None:
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(dags))
    if dag_id not in bag.dags:
        raise RuntimeError(f"DAG {dag_id} did not load: {bag.import_errors}")
    run = bag.dags[dag_id].test(logical_date=logical_date)
    state = str(getattr(run, "state", ""))
    if "success" not in state:
        raise RuntimeError(f"DAG {dag_id} run {logical_date:%Y-%m-%d} ended {state}")


def show_results(lake: Path, out: Path) -> Path:
    """Print a few rows through Spark SQL and plot one query's counts per window."""
    from trendlake.jobs.spark import get_spark
    from trendlake.jobs.sql import run_sql

    spark = get_spark()
    run_sql(spark, lake, "SELECT table_name, rows FROM trendlake_tables ORDER BY table_name", show=True)
    run_sql(
        spark,
        lake,
        "SELECT district, window_start, window_end, count AS trends, total_duration "
        "FROM results_stuck_trips ORDER BY trends DESC, district LIMIT 8",
        show=True,
    )
    series = run_sql(
        spark,
        lake,
        "SELECT window_start, SUM(CAST(count AS DOUBLE)) AS trends FROM results_stuck_trips "
        "GROUP BY window_start ORDER BY window_start",
        show=False,
        as_arrow=True,
    )
    return plot_series(series, out / "stuck_trips.png")


def sharing_summary(lake: Path, workload: Path) -> str:
    """What the nightly plan shares, and the replayed day's engine seconds against the plan's
    estimates (``explain --replay-report`` of the newest replay report)."""
    import json

    from trendlake.jobs.explain import measured_text
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan, workload_name

    name = workload_name(workload)
    plan = current_plan(lake, name)
    chosen = plan.get("chosen_planner") or plan["planner"]
    lines = [f"nightly plan {plan['plan_id']}: planner {plan['planner']}"
             + (f" kept {chosen}" if plan.get("chosen_planner") else "")
             + f", estimated {plan.get('estimated_cost')} steps per window"]
    for alt in plan.get("alternatives", []):
        lines.append(f"  rejected {alt['planner']} (estimated {alt['estimated_cost']}): {alt.get('reason', '')}")
    if not plan["sharing"]:
        lines.append("  nothing is shared: every query runs alone")
    for g in plan["sharing"]:
        est = g["estimated_cost"]
        lines.append(f"  group {g['id']} ({g['kind']}): {', '.join(g['queries'])}; estimated {est['shared']} "
                     f"shared against {est['non_shared']} alone")
    reports = sorted(Lake(lake).reports(name).glob("*.json"))
    if reports:
        lines.append(measured_text(plan, json.loads(reports[-1].read_text())))
    return "\n".join(lines)


DRILL_QUERY = "stuck_trips"
DRILL_LIMIT = 5


def drill_down(lake: Path, workload: Path, stream: str) -> str:
    """Drill the top window of ``stuck_trips`` (else of the first query returning ``COUNT(*)``),
    at most ``DRILL_LIMIT`` trends, and show them; a one-line summary."""
    from trendlake.jobs.drill import count_column, drill
    from trendlake.jobs.optimize import current_plan, workload_name
    from trendlake.jobs.spark import get_spark
    from trendlake.jobs.sql import run_sql

    ranked = [q["name"] for q in current_plan(lake, workload_name(workload))["queries"] if count_column(q)]
    if not ranked:
        return "no query returns COUNT(*): no window to drill"
    query = DRILL_QUERY if DRILL_QUERY in ranked else ranked[0]
    report = drill(lake, workload, query, top=1, limit=DRILL_LIMIT, stream=stream)
    if not report.windows:
        return f"results.{query} has no rows: no window to drill"
    w = report.windows[0]
    where = ", ".join(f"{g}={v}" for g, v in zip(report.group_by, w.target.group, strict=True))
    window = f"{query} [{where}] {utc(w.target.start):%Y-%m-%d %H:%M}..{utc(w.target.end):%H:%M} UTC"
    if w.status == "refused":
        return f"{window}: COUNT(*) {w.target.count}, refused: {w.message}"
    run_sql(get_spark(), lake, f"""
        SELECT trend, size(events) AS events,
               concat_ws(' ', transform(events, e -> concat(e.type, '#', e.id, '@', date_format(e.ts, 'HH:mm:ss')))) AS trend_events
        FROM trends_{query} WHERE drill_run_id = '{report.run_id}' ORDER BY trend""", show=True)
    return (f"{window}: COUNT(*) {w.target.count}, {w.listed} complete trend(s) ({w.algorithm}); "
            f"the first {w.trends} stored in trends.{query} (events named type#seq@time)")


def plot_series(table: Any, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = table.to_pydict()
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.plot(data["window_start"], data["trends"], marker=".", linewidth=1)
    ax.set_title("stuck_trips: trends per 30-minute window (all districts)")
    ax.set_xlabel("window start (UTC)")
    ax.set_ylabel("COUNT(*)")
    ax.set_yscale("symlog")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def demo(out: Path, events: int, seed: int, dags: Path) -> int:
    if not (dags / "trendlake_replay.py").is_file():
        from trendlake.jobs.errors import BadInputError

        raise BadInputError(f"no trendlake DAG files in {dags}; run the demo from the repository "
                            "checkout or pass --dags DIR (the folder holding trendlake_*.py)")
    steps = Steps(7)
    steps("prepare Airflow (SQLite) and folders under " + str(out))
    configure_environment(out, dags)
    prepare_airflow()
    steps(f"generate a ride-sharing day ({events:,} events) and a malformed CSV into the landing folder")
    write_sample(out / "landing", events, seed)
    steps("run DAG trendlake_ingest (raw files -> bronze.rides + quarantine.rides)")
    run_dag("trendlake_ingest", DAY + timedelta(days=1), dags)
    steps("run DAG trendlake_optimize (stats -> optimize -> validate plan)")
    run_dag("trendlake_optimize", DAY + timedelta(days=1), dags)
    steps(f"run DAG trendlake_replay for the data interval {DAY:%Y-%m-%d} .. {DAY + timedelta(days=1):%Y-%m-%d}")
    run_dag("trendlake_replay", DAY + timedelta(days=1), dags)
    steps("query the result tables with Spark SQL and plot stuck_trips")
    plot = show_results(out / "lake", out)
    print(sharing_summary(out / "lake", Path(os.environ["TRENDLAKE_WORKLOAD"])))
    steps("drill down: the trends behind the top stuck_trips window (trendlake drill --top 1)")
    print(drill_down(out / "lake", Path(os.environ["TRENDLAKE_WORKLOAD"]), os.environ["TRENDLAKE_STREAM"]))
    steps.finish()
    print(f"plot: {plot}")
    print(f"lake: {out / 'lake'}  (try: .venv/bin/trendlake sql --lake {out / 'lake'} \"SELECT * FROM results_stuck_trips LIMIT 5\")")
    return 0
