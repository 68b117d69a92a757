"""What the DAGs run: settings from the environment and one function per pipeline step.

The DAG files stay thin (they only wire these functions); everything here is
importable and testable without Airflow. Settings are read when a step runs,
never at DAG parse time:

| variable | default | meaning |
|---|---|---|
| ``TRENDLAKE_LAKE`` | ``./lake`` | lake root (Delta tables and plans) |
| ``TRENDLAKE_LANDING`` | ``<lake>/../landing`` | folder of raw event files to ingest |
| ``TRENDLAKE_STREAM`` | ``rides`` | stream schema (bundled name or JSON path) |
| ``TRENDLAKE_WORKLOAD`` | bundled ``sample_rides.etq`` | workload file |
| ``TRENDLAKE_SPARK_MASTER`` | ``local[*]`` | Spark master URL |
| ``TRENDLAKE_STATS_DAYS`` | ``7`` | trailing days of bronze the nightly stats cover |
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from trendlake.schemas import workload_path

SPARK_POOL = "trendlake_spark"


@dataclass(frozen=True)
class Settings:
    lake: Path
    landing: Path
    stream: str
    workload: Path
    stats_days: int

    @classmethod
    def from_env(cls) -> Settings:
        lake = Path(os.environ.get("TRENDLAKE_LAKE", "lake")).resolve()
        return cls(
            lake=lake,
            landing=Path(os.environ.get("TRENDLAKE_LANDING", str(lake.parent / "landing"))).resolve(),
            stream=os.environ.get("TRENDLAKE_STREAM", "rides"),
            workload=Path(
                os.environ.get("TRENDLAKE_WORKLOAD", str(workload_path("sample_rides.etq")))
            ).resolve(),
            stats_days=int(os.environ.get("TRENDLAKE_STATS_DAYS", "7")),
        )

    @property
    def stream_name(self) -> str:
        return Path(self.stream).stem


def run_ingest(settings: Settings | None = None) -> dict[str, Any]:
    from trendlake.jobs.ingest import ingest
    from trendlake.schemas import load_stream_schema

    s = settings or Settings.from_env()
    report = ingest(s.lake, load_stream_schema(s.stream), s.landing)
    return _plain(report)


def run_stats(end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    """Statistics over the trailing ``stats_days`` of bronze up to ``end``."""
    from trendlake.jobs.stats import run_stats as stats_job

    s = settings or Settings.from_env()
    start = end - timedelta(days=s.stats_days)
    version = stats_job(s.lake, s.stream_name, s.workload, start, end)
    return {"stats_version": version, "range_start": str(start), "range_end": str(end)}


def run_optimize(settings: Settings | None = None) -> dict[str, Any]:
    from trendlake.jobs.optimize import latest_statistics, optimize

    s = settings or Settings.from_env()
    ref = optimize(s.lake, s.workload, stream=s.stream, statistics=latest_statistics(s.lake, s.stream_name))
    return {"plan_id": ref.plan_id, "path": str(ref.path), "created": ref.created}


def validate_current_plan(settings: Settings | None = None) -> str:
    """Check the current plan against the JSON Schema and the workload's hash."""
    from trendlake.jobs.optimize import current_plan, validate_plan, workload_name

    from trendlake import engine, optimizer

    s = settings or Settings.from_env()
    plan = current_plan(s.lake, workload_name(s.workload))
    validate_plan(plan)
    engine.load_plan(plan, workload_hash=optimizer.workload_hash(s.workload.read_text()))
    return plan["plan_id"]


def replay_interval(context: Any) -> tuple[datetime, datetime]:
    """The interval a replay run covers: ``conf["from"]``/``conf["to"]`` if given, else its data interval."""
    from trendlake.engine.events import parse_ts
    from trendlake.jobs.replay import _dt

    run = context.get("dag_run")
    conf = (getattr(run, "conf", None) or {}) if run is not None else {}
    if conf.get("from") or conf.get("to"):
        if not (conf.get("from") and conf.get("to")):
            raise ValueError('replay conf needs both "from" and "to" (ISO-8601)')
        return _dt(parse_ts(conf["from"])), _dt(parse_ts(conf["to"]))
    return context["data_interval_start"], context["data_interval_end"]


def run_replay(start: datetime, end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    from trendlake.jobs.replay import replay

    s = settings or Settings.from_env()
    report = replay(s.lake, s.workload, start, end, stream=s.stream_name)
    return _plain(report)


def check_results(start: datetime, end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    from trendlake.jobs.checks import check_result_tables

    s = settings or Settings.from_env()
    return check_result_tables(s.lake, s.workload, start, end)


def _plain(report: Any) -> dict[str, Any]:
    """A JSON-able summary of a report dataclass (for XCom and logs)."""
    from dataclasses import asdict, is_dataclass

    data = asdict(report) if is_dataclass(report) else dict(report or {})
    return {k: (str(v) if isinstance(v, (Path, datetime)) else v) for k, v in data.items()}
