"""The plan writer: a checked workload → plan JSON (docs/plan-format.md, format version 2)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from trendlake.optimizer import ast
from trendlake.optimizer.analysis import Scope, granularity, panes_us, predicates, template
from trendlake.optimizer.parser import canonical_tokens
from trendlake.optimizer.statistics import Statistics

FORMAT_VERSION = 3


def workload_hash(text: str) -> str:
    """``sha256:`` + hex SHA-256 of the canonical token stream joined by one space."""
    canonical = " ".join(canonical_tokens(text))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def statistics_fingerprint(statistics: dict[str, Any] | None) -> str:
    """``nostats``, or the first 12 hex digits of the SHA-256 of the statistics as sorted JSON."""
    if statistics is None:
        return "nostats"
    data = json.dumps(statistics, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:12]


def query_entry(query: ast.Query) -> dict[str, Any]:
    """One entry of the plan's ``queries`` list for a checked query."""
    scope = Scope(query.pattern)
    preds = predicates(query, scope)
    tpl = template(query.pattern)
    assert query.window is not None
    group_by = [g.name for g in query.group_by]
    partition_by = list(dict.fromkeys(group_by + preds.equivalence))
    aggregates: list[dict[str, Any]] = []
    returns: list[str] = []
    for item in query.returns:
        if isinstance(item, ast.Name):
            returns.append(item.name)
            continue
        agg: dict[str, Any] = {"name": item.output_name, "fn": item.fn}
        if item.var is not None:
            agg["var"] = scope.var(item.var)
        if item.attr is not None:
            agg["attr"] = item.attr
        aggregates.append(agg)
        returns.append(item.output_name)
    return {
        "name": query.name,
        "semantics": query.semantics,
        "window": {"within_us": query.window.within_us, "slide_us": query.window.slide_us},
        "group_by": group_by,
        "equivalence": preds.equivalence,
        "partition_by": partition_by,
        "variables": [
            {"name": o.name, "type": o.type, "negated": o.negated} for o in scope.occurrences
        ],
        "template": tpl.to_dict(),
        "negations": [{"id": i, "sequence": seq} for i, seq in enumerate(tpl.negations)],
        "local_predicates": preds.local,
        "adjacent_predicates": preds.adjacent,
        "required_attributes": preds.required,
        "aggregates": aggregates,
        "returns": returns,
        "granularity": granularity(query, preds),
        "source": {"line": query.line, "column": query.column},
    }


def build_plan(
    workload: ast.Workload,
    planner: str = "none",
    statistics: dict[str, Any] | Statistics | None = None,
    stream: str | None = None,
    previous: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The plan of a checked workload made by ``planner`` (see ``optimizer.planners``): the
    query entries once, every kind's candidates once, the planner's groups numbered ``g0``,
    ``g1``, ... and, with statistics, the plan's estimated cost against running every query
    alone (``optimizer.cost.plan_cost``).

    ``statistics``: a statistics document (checked here: ``OptimizerError`` naming the bad
    field) or its ``Statistics`` view; the planners read the view, the plan records the
    document. ``previous``: a plan of the same workload's earlier version to plan against
    incrementally where a planner can (``weaveshare``: ``optimizer.planners.panes.stored``);
    the plan's id then says ``incremental``."""
    from trendlake.optimizer.candidates import find
    from trendlake.optimizer.cost import plan_cost
    from trendlake.optimizer.planners import get_planner
    from trendlake.optimizer.planners.panes import stored

    plan_fn = get_planner(planner)
    document = statistics.to_dict() if isinstance(statistics, Statistics) else statistics
    statistics = Statistics.of(statistics)
    entries = {q.name: query_entry(q) for q in workload.queries}
    candidates = find(entries)
    estimate: float | None = None
    alternatives: list[dict[str, Any]] = []
    chosen: dict[str, str] = {}
    if planner == "auto":  # every costed planner's plan estimated, the cheapest kept
        from trendlake.optimizer.planners.auto import choose

        with stored(previous):
            choice = choose(entries, candidates, statistics)
        groups, estimate, alternatives = choice.groups, choice.estimated_cost, choice.alternatives
        chosen = {"chosen_planner": choice.planner}
    else:
        with stored(previous):
            groups = plan_fn(entries, candidates, statistics)
        if statistics is not None:
            cost, alone = plan_cost(entries, groups, statistics)
            estimate = round(cost, 6)
            if planner != "none":
                alternatives.append({"planner": "none", "estimated_cost": round(alone, 6),
                                     "reason": "every query alone"})
    for i, group in enumerate(groups):
        group["id"] = f"g{i}"
    whash = workload_hash(workload.text)
    plan = {
        "format_version": FORMAT_VERSION,
        "workload_hash": whash,
        "plan_id": f"{whash.split(':', 1)[1][:12]}-{planner}{'-incremental' if previous else ''}-"
                   f"{statistics_fingerprint(document)}",
        "planner": planner,
        **chosen,
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "stream": stream,
        "statistics": document,
        "estimated_cost": estimate,
        "alternatives": alternatives,
        "panes_us": panes_us(workload),
        "queries": list(entries.values()),
        "sharing": groups,
    }
    plan["content_hash"] = content_hash(plan)
    return plan


def content_hash(plan: dict[str, Any]) -> str:
    """``sha256:`` + hex SHA-256 of the plan's sorted compact JSON without ``plan_id`` and ``content_hash``.

    The engine recomputes it on every read (``engine.plan.content_hash``, the same rule) and
    refuses a plan whose content changed after it was written.
    """
    body = {k: v for k, v in plan.items() if k not in ("plan_id", "content_hash")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
