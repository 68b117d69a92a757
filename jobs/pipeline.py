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

from schemas import WORKLOADS_DIR

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
                os.environ.get("TRENDLAKE_WORKLOAD", str(WORKLOADS_DIR / "sample_rides.etq"))
            ).resolve(),
            stats_days=int(os.environ.get("TRENDLAKE_STATS_DAYS", "7")),
        )

    @property
    def stream_name(self) -> str:
        return Path(self.stream).stem


def run_ingest(settings: Settings | None = None) -> dict[str, Any]:
    from jobs.ingest import ingest
    from schemas import load_stream_schema

    s = settings or Settings.from_env()
    report = ingest(s.lake, load_stream_schema(s.stream), s.landing)
    return _plain(report)


def run_stats(end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    from jobs.stats import compute_stats

    s = settings or Settings.from_env()
    plan = _current_plan_or_none(s)
    start = end - timedelta(days=s.stats_days)
    return _plain(compute_stats(s.lake, s.stream_name, plan_or_queries=plan, start=start, end=end))


def run_optimize(settings: Settings | None = None) -> dict[str, Any]:
    from jobs.optimize import latest_statistics, optimize

    s = settings or Settings.from_env()
    ref = optimize(s.lake, s.workload, stream=s.stream, statistics=latest_statistics(s.lake, s.stream_name))
    return {"plan_id": ref.plan_id, "path": str(ref.path), "created": ref.created}


def validate_current_plan(settings: Settings | None = None) -> str:
    """Check the current plan against the JSON Schema and the workload's hash."""
    import engine
    import optimizer
    from jobs.optimize import current_plan, validate_plan, workload_name

    s = settings or Settings.from_env()
    plan = current_plan(s.lake, workload_name(s.workload))
    validate_plan(plan)
    engine.load_plan(plan, workload_hash=optimizer.workload_hash(s.workload.read_text()))
    return plan["plan_id"]


def run_replay(start: datetime, end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    from jobs.replay import replay

    s = settings or Settings.from_env()
    report = replay(s.lake, s.workload, start, end, stream=s.stream_name)
    return _plain(report)


def check_results(start: datetime, end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    from jobs.checks import check_result_tables

    s = settings or Settings.from_env()
    return check_result_tables(s.lake, s.workload, start, end)


def _current_plan_or_none(s: Settings) -> dict[str, Any] | None:
    from jobs.optimize import current_plan, workload_name

    try:
        return current_plan(s.lake, workload_name(s.workload))
    except FileNotFoundError:
        return None


def _plain(report: Any) -> dict[str, Any]:
    """A JSON-able summary of a report dataclass (for XCom and logs)."""
    from dataclasses import asdict, is_dataclass

    data = asdict(report) if is_dataclass(report) else dict(report or {})
    return {k: (str(v) if isinstance(v, (Path, datetime)) else v) for k, v in data.items()}
