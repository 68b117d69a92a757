"""Reading a plan: format version, workload hash, and the compiled queries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendlake.engine.errors import EngineError
from trendlake.engine.query import CompiledQuery, compile_query

FORMAT_VERSION = 1


class PlanError(EngineError, ValueError):
    """A plan the engine refuses: wrong format version, wrong workload, malformed."""


@dataclass
class Plan:
    raw: dict[str, Any]
    queries: dict[str, CompiledQuery]

    @property
    def plan_id(self) -> str:
        return str(self.raw.get("plan_id", ""))

    @property
    def workload_hash(self) -> str:
        return str(self.raw.get("workload_hash", ""))


def load_plan(plan: dict[str, Any] | str | Path, workload_hash: str | None = None) -> Plan:
    """Check and compile a plan (a dict or a JSON file path).

    When ``workload_hash`` is given, a plan made for another workload is refused.
    """
    if not isinstance(plan, dict):
        path = Path(plan)
        try:
            plan = json.loads(path.read_text())
        except FileNotFoundError:
            raise PlanError(f"no plan file {path}") from None
        except json.JSONDecodeError as err:
            raise PlanError(f"{path} is not JSON: {err}") from None
    version = plan.get("format_version")
    if version != FORMAT_VERSION:
        raise PlanError(
            f"plan format version {version!r} is not supported (this engine reads version {FORMAT_VERSION})"
        )
    if workload_hash is not None and plan.get("workload_hash") != workload_hash:
        raise PlanError(
            f"plan {plan.get('plan_id', '?')} was made for workload {plan.get('workload_hash')}, "
            f"not for this workload ({workload_hash}); run `trendlake optimize` again"
        )
    try:
        queries = {q["name"]: compile_query(q) for q in plan["queries"]}
    except (KeyError, TypeError, ValueError) as err:
        raise PlanError(f"malformed plan: {err!r}") from None
    return Plan(plan, queries)
