"""The one constructor of a sharing group (the plan's group envelope, docs/plan-format.md).

Every planner makes its groups here: the envelope's fields (``kind``,
``queries``, ``partition_by``, ``window``, ``parameters``,
``estimated_cost``) come from the group's queries and the planner's numbers,
the ``body`` from the kind's candidates module. ``build_plan`` numbers the
groups (``id``) in the order the planner returns them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["make_group"]


def make_group(
    kind: str,
    queries: Sequence[str],
    entries: Mapping[str, Mapping[str, Any]],
    body: Mapping[str, Any],
    parameters: Mapping[str, float],
    estimated_cost: tuple[float, float],
    window: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A group of ``kind`` sharing ``queries`` (at least two, with the same partitioning and,
    unless the kind gives the group's ``window``, the same windows: ValueError otherwise);
    ``estimated_cost`` is (shared, non-shared) per window, in the plan's unit (steps:
    ``optimizer.cost``)."""
    if len(queries) < 2 or len(set(queries)) != len(queries):
        raise ValueError(f"a {kind} group shares two or more distinct queries, not {list(queries)}")
    first = entries[queries[0]]
    for name in queries[1:]:
        other = entries[name]
        if other["partition_by"] != first["partition_by"] or (window is None and other["window"] != first["window"]):
            raise ValueError(f"a {kind} group's queries have one partitioning and windows: {queries[0]} and {name} differ")
    shared, non_shared = estimated_cost
    return {
        "id": "",
        "kind": kind,
        "queries": list(queries),
        "partition_by": list(first["partition_by"]),
        "window": dict(first["window"] if window is None else window),
        "parameters": dict(parameters),
        "estimated_cost": {"shared": round(float(shared), 6), "non_shared": round(float(non_shared), 6)},
        "body": dict(body),
    }
