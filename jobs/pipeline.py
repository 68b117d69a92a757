"""What the DAGs run: settings from the environment and one function per pipeline step.

The DAG files stay thin (they only wire these functions); everything here is
importable and testable without Airflow. Settings are read when a step runs,
never at DAG parse time:

| variable | default | meaning |
|---|---|---|
| ``TRENDLAKE_LAKE`` | ``./lake`` | lake root (Delta tables and plans) |
| ``TRENDLAKE_LANDING`` | ``<lake>/../landing`` | folder of raw event files to ingest |
| ``TRENDLAKE_STREAM`` | ``rides`` | stream: a name or a schema JSON path (``trendlake.jobs.lake.resolve_stream``) |
| ``TRENDLAKE_REPLACE_CHANGED`` | ``0`` | ``1``: a changed landing file replaces its earlier rows (else it is refused) |
| ``TRENDLAKE_WORKLOAD`` | bundled ``rides_team.etq`` | workload file |
| ``TRENDLAKE_SPARK_MASTER`` | ``local[*]`` | Spark master URL |
| ``TRENDLAKE_STATS_DAYS`` | ``7`` | trailing days of bronze the nightly stats cover |
| ``TRENDLAKE_PLANNER`` | ``auto`` | planner of the nightly optimize (``auto``: the cheapest estimated plan; ``none``, ``hamlet``, ... as ``--planner``) |
| ``TRENDLAKE_DRILL_TOP`` | ``0`` | after each replay, drill the K windows of largest ``COUNT(*)`` of every query into ``trends.<query>`` (``0``: off, the task is skipped) |
| ``TRENDLAKE_DRILL_LIMIT`` | ``1000`` | trends stored per drilled window (``0``: all of them) |
| ``TRENDLAKE_DRILL_MEMORY`` | ``1G`` | memory budget per drilled window (bytes, or ``512K``, ``64M``, ``2G``) |

A run of ``trendlake_ingest`` triggered with ``{"replace_changed": true}`` in
its conf replaces changed files for that run; a ``trendlake_replay`` run with
``{"from": ISO, "to": ISO}`` replays that interval, and ``{"drill_top": K}`` sets the
drill-down for that run (``0``: off). Bad settings and conf
values are errors naming the variable or conf key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from trendlake.schemas import workload_path

SPARK_POOL = "trendlake_spark"


TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")


def _flag(variable: str, default: str = "0") -> bool:
    text = os.environ.get(variable, default).strip().lower()
    if text not in TRUE + FALSE:
        raise ValueError(f"{variable}={text!r}: expected 1/0, true/false, yes/no or on/off")
    return text in TRUE


def _planner(variable: str) -> str:
    from trendlake.optimizer.planners import PLANNERS

    name = os.environ.get(variable, "auto").strip()
    if name not in PLANNERS:
        raise ValueError(f"{variable}={name!r}: expected one of {', '.join(sorted(PLANNERS))}")
    return name


def _days(variable: str, default: str) -> int:
    text = os.environ.get(variable, default).strip()
    try:
        days = int(text)
    except ValueError:
        raise ValueError(f"{variable}={text!r}: expected a whole number of days") from None
    if days < 1:
        raise ValueError(f"{variable}={text!r}: expected at least 1 day")
    return days


def _count(variable: str, default: str) -> int:
    text = os.environ.get(variable, default).strip()
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{variable}={text!r}: expected a whole number") from None
    if value < 0:
        raise ValueError(f"{variable}={text!r}: expected 0 or more")
    return value


def _bytes(variable: str, default: str) -> int:
    import argparse

    from trendlake.jobs.cli.trends import byte_size

    text = os.environ.get(variable, default).strip()
    try:
        return byte_size(text)
    except argparse.ArgumentTypeError as err:
        raise ValueError(f"{variable}={text!r}: {err}") from None


@dataclass(frozen=True)
class Settings:
    lake: Path
    landing: Path
    stream: str
    workload: Path
    stats_days: int
    replace_changed: bool = False
    planner: str = "none"
    drill_top: int = 0  # windows per query drilled after a replay; 0: off
    drill_limit: int | None = 1000  # trends per window; None: all
    drill_memory: int = 2**30

    @classmethod
    def from_env(cls) -> Settings:
        lake = Path(os.environ.get("TRENDLAKE_LAKE", "lake")).resolve()
        return cls(
            lake=lake,
            landing=Path(os.environ.get("TRENDLAKE_LANDING", str(lake.parent / "landing"))).resolve(),
            stream=os.environ.get("TRENDLAKE_STREAM", "rides"),
            workload=Path(
                os.environ.get("TRENDLAKE_WORKLOAD", str(workload_path("rides_team.etq")))
            ).resolve(),
            stats_days=_days("TRENDLAKE_STATS_DAYS", "7"),
            replace_changed=_flag("TRENDLAKE_REPLACE_CHANGED"),
            planner=_planner("TRENDLAKE_PLANNER"),
            drill_top=_count("TRENDLAKE_DRILL_TOP", "0"),
            drill_limit=_count("TRENDLAKE_DRILL_LIMIT", "1000") or None,
            drill_memory=_bytes("TRENDLAKE_DRILL_MEMORY", "1G"),
        )

    @property
    def stream_name(self) -> str:
        """The stream's name, resolved like every command resolves ``--stream``."""
        from trendlake.jobs.lake import resolve_stream

        return resolve_stream(self.stream, self.lake, need_schema=False)[0]


def run_conf(context: Any) -> dict[str, Any]:
    """The conf a DAG run was triggered with (empty for scheduled runs)."""
    run = context.get("dag_run") if context else None
    conf = (getattr(run, "conf", None) or {}) if run is not None else {}
    if not isinstance(conf, dict):
        raise ValueError(f"the run conf must be a JSON object, not {type(conf).__name__}")
    return conf


def replace_changed_from(conf: dict[str, Any], settings: Settings) -> bool:
    """The run conf's ``replace_changed`` (a JSON boolean) if given, else the setting."""
    if "replace_changed" not in conf:
        return settings.replace_changed
    value = conf["replace_changed"]
    if not isinstance(value, bool):
        raise ValueError(f'ingest conf "replace_changed" must be true or false, not {value!r}')
    return value


def run_ingest(settings: Settings | None = None, context: Any = None) -> dict[str, Any]:
    """Ingest the landing folder; ``context`` (the task's) may carry ``{"replace_changed": true}``."""
    from trendlake.jobs.ingest import ingest
    from trendlake.jobs.lake import resolve_stream

    s = settings or Settings.from_env()
    replace = replace_changed_from(run_conf(context), s)
    _, schema = resolve_stream(s.stream, s.lake)
    report = ingest(s.lake, schema, s.landing, replace_changed=replace)  # type: ignore[arg-type]
    return _plain(report)


def run_stats(end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    """Statistics over the trailing ``stats_days`` of bronze up to ``end``."""
    from trendlake.jobs.stats import run_stats as stats_job

    s = settings or Settings.from_env()
    start = end - timedelta(days=s.stats_days)
    version = stats_job(s.lake, s.stream, s.workload, start, end)
    return {"stats_version": version, "range_start": str(start), "range_end": str(end)}


def run_optimize(settings: Settings | None = None) -> dict[str, Any]:
    """The nightly plan: incremental (``optimize --incremental``) when the workload changed
    little since the current plan (``changed_little``), else from scratch."""
    from trendlake.jobs.optimize import (
        changed_little,
        latest_statistics,
        optimize,
        previous_plan,
        workload_name,
    )

    s = settings or Settings.from_env()
    previous = previous_plan(s.lake, workload_name(s.workload))
    incremental = changed_little(previous, s.workload)
    ref = optimize(
        s.lake, s.workload, stream=s.stream, statistics=latest_statistics(s.lake, s.stream), planner=s.planner,
        previous=previous if incremental else None,
    )
    return {"plan_id": ref.plan_id, "path": str(ref.path), "created": ref.created, "incremental": incremental}


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
    from trendlake.engine.timeline import parse_ts
    from trendlake.jobs.times import utc

    conf = run_conf(context)
    if conf.get("from") or conf.get("to"):
        if not (conf.get("from") and conf.get("to")):
            raise ValueError('replay conf needs both "from" and "to" (ISO-8601)')
        bounds = []
        for key in ("from", "to"):
            try:
                bounds.append(utc(parse_ts(conf[key])))
            except (ValueError, TypeError, OverflowError) as err:
                raise ValueError(f'replay conf "{key}": {err} (ISO-8601 expected)') from None
        if bounds[1] <= bounds[0]:
            raise ValueError(f'replay conf "to" ({conf["to"]}) must be after "from" ({conf["from"]})')
        return bounds[0], bounds[1]
    return context["data_interval_start"], context["data_interval_end"]


def run_replay(start: datetime, end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    from trendlake.jobs.replay import replay

    s = settings or Settings.from_env()
    report = replay(s.lake, s.workload, start, end, stream=s.stream)
    return _plain(report)


def drill_top(context: Any, settings: Settings | None = None) -> int:
    """The windows per query a replay run drills: the conf's ``drill_top`` (a whole number >= 0)
    if given, else ``TRENDLAKE_DRILL_TOP``; 0 is off."""
    conf = run_conf(context)
    if "drill_top" not in conf:
        return (settings or Settings.from_env()).drill_top
    value = conf["drill_top"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f'replay conf "drill_top" must be a whole number >= 0, not {value!r}')
    return value


def run_drill(start: datetime, end: datetime, top: int, settings: Settings | None = None) -> dict[str, Any]:
    """Drill the ``top`` windows ending in ``(start, end]`` of every query of the current plan
    that returns ``COUNT(*)`` (``trendlake drill --top K --from --to``), one ``trends.<query>``
    commit each; a refused window is in its query's summary, and fails nothing."""
    from trendlake.jobs.drill import count_column, drill
    from trendlake.jobs.optimize import current_plan, workload_name

    s = settings or Settings.from_env()
    plan = current_plan(s.lake, workload_name(s.workload))
    out: dict[str, Any] = {}
    for q in plan["queries"]:
        if count_column(q) is None:
            out[q["name"]] = {"skipped": "the query returns no COUNT(*) to rank its windows by"}
            continue
        report = drill(s.lake, s.workload, q["name"], top=top, start=start, end=end, limit=s.drill_limit,
                       memory=s.drill_memory, stream=s.stream, plan=plan)
        out[q["name"]] = report.to_dict()
    return out


def check_results(start: datetime, end: datetime, settings: Settings | None = None) -> dict[str, Any]:
    from trendlake.jobs.checks import check_result_tables

    s = settings or Settings.from_env()
    return check_result_tables(s.lake, s.workload, start, end)


def _plain(report: Any) -> dict[str, Any]:
    """A JSON-able summary of a report dataclass (for XCom and logs)."""
    from dataclasses import asdict, is_dataclass

    data = asdict(report) if is_dataclass(report) else dict(report or {})
    return {k: (str(v) if isinstance(v, (Path, datetime)) else v) for k, v in data.items()}
