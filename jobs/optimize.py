"""The optimize job: workload + latest statistics -> a versioned plan under the lake.

Plans live at ``<lake>/plans/<workload>/<plan_id>.json``; ``current.json`` next
to them names the plan that replay runs. Writing a plan that already exists
(same workload, planner and statistics) changes nothing, so a rerun is a
no-op. Every plan is validated against ``schemas/plan.schema.json`` before it
becomes current.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("trendlake.optimize")


@dataclass
class PlanRef:
    workload: str
    plan_id: str
    path: Path
    created: bool


def plans_dir(lake_root: str | Path, workload: str) -> Path:
    from trendlake.jobs.lake import Lake

    return Lake(lake_root).plans(workload)


def workload_name(workload_path: str | Path) -> str:
    return Path(workload_path).stem


def validate_plan(plan: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` when the plan breaks the plan JSON Schema."""
    import jsonschema
    from trendlake.schemas import load_plan_schema

    jsonschema.validate(plan, load_plan_schema())


def optimize(
    lake_root: str | Path,
    workload_path: str | Path,
    *,
    stream: str | None = None,
    statistics: dict[str, Any] | None = None,
    planner: str = "none",
) -> PlanRef:
    """Compile the workload, plan it with ``planner`` and make that plan current.

    The lake root must exist (``trendlake ingest`` creates it): a mistyped
    ``--lake`` is an error, not a new empty lake.
    """
    from trendlake.jobs.lake import resolve_stream

    from trendlake import optimizer

    if not Path(lake_root).is_dir():
        raise FileNotFoundError(
            f"no lake at {lake_root} (not a folder); check --lake, or create the lake with `trendlake ingest`"
        )
    text = Path(workload_path).read_text()
    schema = resolve_stream(stream, lake_root)[1] if stream else None
    workload = optimizer.compile_workload(text, stream_schema=schema, path=str(workload_path))
    plan = optimizer.build_plan(
        workload, planner=planner, statistics=statistics, stream=schema["stream"] if schema else None
    )
    validate_plan(plan)
    name = workload_name(workload_path)
    folder = plans_dir(lake_root, name)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{plan['plan_id']}.json"
    created = not path.exists()
    if created:
        _atomic_write(path, json.dumps(plan, indent=2, sort_keys=True) + "\n")
    _atomic_write(folder / "current.json", json.dumps({"plan_id": plan["plan_id"]}) + "\n")
    log.info("plan %s for workload %s (%s)", plan["plan_id"], name, "new" if created else "unchanged")
    return PlanRef(name, plan["plan_id"], path, created)


def current_plan(lake_root: str | Path, workload: str) -> dict[str, Any]:
    """The plan ``current.json`` points at; a clear error when there is none."""
    folder = plans_dir(lake_root, workload)
    pointer = folder / "current.json"
    if not pointer.exists():
        raise FileNotFoundError(
            f"no plan for workload {workload!r} under {folder}; run `trendlake optimize` first"
        )
    plan_id = json.loads(pointer.read_text())["plan_id"]
    return json.loads((folder / f"{plan_id}.json").read_text())


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "optimize",
        help="plan a workload from the latest statistics and make the plan current",
        description=(
            "Compile WORKLOAD.etq, plan it from the latest statistics of the stream and store "
            "the plan under LAKE/plans/<workload>/<plan_id>.json with current.json pointing at it."
        ),
    )
    p.add_argument("workload", type=Path, help="workload file (*.etq)")
    p.add_argument("--lake", required=True, type=Path, help="lake root folder")
    p.add_argument("--stream", help="stream: a name (bundled, or recorded in the lake by ingest) or a schema JSON path")
    from trendlake.optimizer.planners import PLANNERS

    p.add_argument("--planner", default="none", choices=sorted(PLANNERS),
                   help=f"planner ({', '.join(sorted(PLANNERS))}; default: none, no sharing)")
    p.add_argument("--no-stats", action="store_true", help="plan without reading stats.<stream>")
    p.add_argument("--stats", type=Path, metavar="STATS.json",
                   help="plan from these statistics instead of the lake's newest stats run")
    p.add_argument("--assume-uniform", action="store_true",
                   help="plan without statistics, assuming every event type has the same rate (recorded in the plan)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from trendlake.jobs.eval_cmd import planning_statistics

    from trendlake import optimizer

    statistics = planning_statistics(args) if (args.stats is not None or args.assume_uniform) else None
    if statistics is None and args.stream and not args.no_stats:
        statistics = latest_statistics(args.lake, args.stream)
    try:
        ref = optimize(args.lake, args.workload, stream=args.stream, statistics=statistics, planner=args.planner)
    except optimizer.WorkloadError as err:
        print(f"trendlake: error: invalid workload, no plan written:\n{err}", file=sys.stderr)
        return 2
    print(f"plan {ref.plan_id} is current for workload {ref.workload} ({ref.path})")
    return 0


def latest_statistics(lake_root: str | Path, stream: str) -> dict[str, Any] | None:
    """The newest statistics snapshot of ``stats.<stream>`` as plain data, or None."""
    try:
        from trendlake.jobs import stats
    except ImportError:
        return None
    reader = getattr(stats, "latest_statistics", None)
    return reader(lake_root, stream) if reader else None
