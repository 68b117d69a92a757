"""The optimize job: workload + latest statistics -> a versioned plan under the lake.

Plans live at ``<lake>/plans/<workload>/<plan_id>.json``; ``current.json`` next
to them names the plan that replay runs. Writing a plan that already exists
(same workload, planner and statistics) changes nothing, so a rerun is a
no-op. Every plan is validated against ``schemas/plan.schema.json`` before it
becomes current.

``current.json`` is data read from disk and checked as such
(``read_pointer``, docs/plan-format.md "The current plan"): exactly
``{"plan_id": "<plan id>"}`` with a plan id of the plan schema's form, the
pointer and the plan file it names resolving (links followed) inside the
lake root, and that file holding the plan of that id. Anything else is a
``PlanPointerError`` naming the file.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trendlake.jobs.lake import LakeInputError

if TYPE_CHECKING:
    from trendlake.optimizer.statistics import Statistics

log = logging.getLogger("trendlake.optimize")

POINTER = "current.json"
MAX_POINTER_BYTES = 4096  # {"plan_id": ...} is under 300 bytes; a larger file is not a pointer
MAX_PLAN_ID_CHARS = 200  # the plan file's name must fit a file system's 255


class PlanPointerError(LakeInputError):
    """``current.json`` is not a pointer to a plan of its folder (the message names the file)."""


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
    statistics: dict[str, Any] | Statistics | None = None,
    planner: str = "auto",
    previous: dict[str, Any] | None = None,
) -> PlanRef:
    """Compile the workload, plan it with ``planner`` and make that plan current.

    ``previous``: a plan of the workload (its current one, ``previous_plan``) to plan against
    incrementally (``optimizer.build_plan(previous=)``: Weave Share's trees woven into the stored ones).
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
        workload, planner=planner, statistics=statistics, stream=schema["stream"] if schema else None,
        previous=previous,
    )
    validate_plan(plan)
    name = workload_name(workload_path)
    from trendlake.jobs.lake import Lake

    lake = Lake(lake_root)
    folder = lake.plans(name)
    folder.mkdir(parents=True, exist_ok=True)
    pointer = {"plan_id": plan["plan_id"]}
    _pointer_problem(pointer)  # a plan id that cannot name a plan file is refused before writing
    path = lake.inside(folder / f"{plan['plan_id']}.json")
    created = not path.exists()
    if created:
        _atomic_write(path, json.dumps(plan, indent=2, sort_keys=True) + "\n")
    _atomic_write(lake.inside(folder / POINTER), json.dumps(pointer) + "\n")
    log.info("plan %s for workload %s (%s)", plan["plan_id"], name, "new" if created else "unchanged")
    return PlanRef(name, plan["plan_id"], path, created)


def previous_plan(lake_root: str | Path, workload: str) -> dict[str, Any] | None:
    """The workload's current plan, or None where it has none yet."""
    if not (plans_dir(lake_root, workload) / POINTER).exists():
        return None
    return current_plan(lake_root, workload)


def changed_little(previous: dict[str, Any] | None, workload_path: str | Path, limit: float = 0.25) -> bool:
    """Whether the workload's queries differ from ``previous``'s (by name: added or removed) in
    at most ``limit`` of them: the nightly plan is then made incrementally."""
    from trendlake import optimizer

    if previous is None:
        return False
    old = {q["name"] for q in previous.get("queries", [])}
    new = {q.name for q in optimizer.parse_workload(Path(workload_path).read_text()).queries}
    changed = len(set(old) ^ new)
    return changed <= limit * max(len(old), len(new), 1)


def current_plan(lake_root: str | Path, workload: str) -> dict[str, Any]:
    """The plan ``current.json`` points at; a clear error when there is none (``read_pointer``)."""
    return read_pointer(lake_root, workload)[1]


def _pointer_problem(pointer: Any) -> str | None:
    """Why ``pointer`` (parsed JSON) is not ``{"plan_id": "<plan id>"}``, or None."""
    from trendlake.schemas import load_plan_schema

    if not isinstance(pointer, dict):
        return f"expected a JSON object {{\"plan_id\": ...}}, not {type(pointer).__name__}"
    if set(pointer) != {"plan_id"}:
        from trendlake.engine.plan import brief

        return f"expected exactly the key plan_id, not {brief(sorted(map(str, pointer)))}"
    plan_id = pointer["plan_id"]
    pattern = load_plan_schema()["properties"]["plan_id"]["pattern"]
    if not isinstance(plan_id, str) or len(plan_id) > MAX_PLAN_ID_CHARS or not re.fullmatch(pattern, plan_id):
        from trendlake.engine.plan import brief

        return (f"plan_id {brief(json.dumps(plan_id))} is not a plan id "
                "(<12 hex digits>-<planner>-<statistics fingerprint>)")
    return None


def read_pointer(lake_root: str | Path, workload: str) -> tuple[str, dict[str, Any]]:
    """``(plan_id, plan)`` of the plan a workload's ``current.json`` names, checked as data
    (see the module docstring); ``PlanPointerError`` naming the file otherwise."""
    from trendlake.jobs.lake import Lake, LakeNameError

    lake = Lake(lake_root)
    folder = lake.plans(workload)
    pointer = folder / POINTER
    if not pointer.exists() and not pointer.is_symlink():
        raise FileNotFoundError(
            f"no plan for workload {workload!r} under {folder}; run `trendlake optimize` first"
        )
    try:
        lake.inside(pointer)
    except LakeNameError as err:
        raise PlanPointerError(f"{pointer}: refused, {err}") from None
    try:
        with pointer.open("rb") as fh:
            data = fh.read(MAX_POINTER_BYTES + 1)
    except OSError as err:
        raise PlanPointerError(f"{pointer}: cannot be read ({err.strerror or err})") from None
    if len(data) > MAX_POINTER_BYTES:
        raise PlanPointerError(f"{pointer}: more than {MAX_POINTER_BYTES} bytes, not a plan pointer")
    try:
        content = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PlanPointerError(f"{pointer}: not JSON ({err})") from None
    problem = _pointer_problem(content)
    if problem is not None:
        raise PlanPointerError(f"{pointer}: {problem}; run `trendlake optimize` again")
    plan_id = content["plan_id"]
    path = folder / f"{plan_id}.json"
    try:
        lake.inside(path)
    except LakeNameError as err:
        raise PlanPointerError(f"{pointer} names plan {plan_id}, whose file is refused: {err}") from None
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanPointerError(f"{pointer} names plan {plan_id}, but there is no file {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PlanPointerError(f"{pointer} names plan {plan_id}, but {path} is not a JSON plan ({err})") from None
    if not isinstance(plan, dict) or plan.get("plan_id") != plan_id:
        held = plan.get("plan_id") if isinstance(plan, dict) else None
        from trendlake.engine.plan import brief

        raise PlanPointerError(f"{pointer} names plan {plan_id}, but {path} holds plan {brief(held)}")
    return plan_id, plan


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def latest_statistics(lake_root: str | Path, stream: str) -> Statistics | None:
    """The newest statistics snapshot of ``stats.<stream>``, checked, or None; an
    ``OptimizerError`` naming the run's bad field when it breaks the statistics schema."""
    from trendlake.optimizer.errors import OptimizerError
    from trendlake.optimizer.statistics import Statistics, schema_error

    try:
        from trendlake.jobs import stats
    except ImportError:
        return None
    reader = getattr(stats, "latest_statistics", None)
    newest = reader(lake_root, stream) if reader else None
    if newest is None:
        return None
    problem = schema_error(newest)
    if problem is not None:
        raise OptimizerError(f"stats/{stream} (newest run): not statistics: {problem}; see docs/lake.md §stats")
    return Statistics.from_dict(newest)
