"""Build plan JSON by hand for engine tests that must not depend on the parser."""

from __future__ import annotations

from typing import Any

SECOND = 1_000_000


def query_spec(
    *,
    name: str = "q",
    variables: list[tuple[str, str]] | list[tuple[str, str, bool]],
    start: list[str],
    end: list[str],
    transitions: list[tuple[str, str]] | list[tuple[str, str, list[int]]],
    semantics: str = "skip-till-any-match",
    within: int = 1000 * SECOND,
    slide: int | None = None,
    negations: list[list[str]] | None = None,
    start_negations: list[int] | None = None,
    end_negations: list[int] | None = None,
    local: dict[str, list[dict[str, Any]]] | None = None,
    adjacent: list[tuple[str, str, dict[str, Any]]] | None = None,
    required: dict[str, list[str]] | None = None,
    aggregates: list[dict[str, Any]] | None = None,
    group_by: list[str] | None = None,
    equivalence: list[str] | None = None,
    granularity: str = "event",
) -> dict[str, Any]:
    group_by = group_by or []
    equivalence = equivalence or []
    return {
        "name": name,
        "semantics": semantics,
        "window": {"within_us": within, "slide_us": slide or within},
        "group_by": group_by,
        "equivalence": equivalence,
        "partition_by": group_by + [a for a in equivalence if a not in group_by],
        "variables": [
            {"name": v[0], "type": v[1], "negated": bool(v[2]) if len(v) > 2 else False}
            for v in variables
        ],
        "template": {
            "start": start,
            "end": end,
            "transitions": [
                {"from": t[0], "to": t[1], "negations": list(t[2]) if len(t) > 2 else []}
                for t in transitions
            ],
            "start_negations": start_negations or [],
            "end_negations": end_negations or [],
        },
        "negations": [{"id": i, "sequence": seq} for i, seq in enumerate(negations or [])],
        "local_predicates": local or {},
        "adjacent_predicates": [{"from": a, "to": b, "expr": e} for a, b, e in adjacent or []],
        "required_attributes": required or {},
        "aggregates": aggregates or [{"name": "COUNT(*)", "fn": "count_star"}],
        "returns": [],
        "granularity": granularity,
    }


def plan_of(*queries: dict[str, Any]) -> dict[str, Any]:
    return {"format_version": 1, "workload_hash": "sha256:test", "queries": list(queries), "sharing": []}


def fig_2_3_query(semantics: str = "skip-till-any-match", **kw: Any) -> dict[str, Any]:
    """(SEQ(A+, B))+ of the dissertation's Figures 2.3 and 2.4."""
    return query_spec(
        variables=[("A", "A"), ("B", "B")],
        start=["A"],
        end=["B"],
        transitions=[("A", "A"), ("A", "B"), ("B", "A")],
        semantics=semantics,
        **kw,
    )


def kleene_group(
    plan: dict[str, Any],
    variables: dict[str, str],
    *,
    decision: str = "static",
    snapshot_cost: float = 4.0,
    gid: str = "g0",
) -> dict[str, Any]:
    """A complete ``kleene`` group of ``plan``'s queries ``variables`` names (query -> its
    shared variable), whether or not the engine supports it: the shared type and the
    partitioning and windows are the first query's, the grain what the queries give."""
    from trendlake.engine.shared.template import merged_template

    entries = {q["name"]: q for q in plan["queries"]}
    names = list(variables)
    first = entries[names[0]]
    types = {v["name"]: v["type"] for v in first["variables"]}
    event = any(entries[q].get("adjacent_predicates") or entries[q].get("negations") for q in names)
    return {
        "id": gid, "kind": "kleene", "queries": names,
        "partition_by": list(first["partition_by"]), "window": dict(first["window"]),
        "parameters": {"snapshot_cost": snapshot_cost},
        "estimated_cost": {"shared": 0.0, "non_shared": 0.0},
        "body": {"type": types[variables[names[0]]], "variables": dict(variables),
                 "grain": "event" if event else "type", "decision": decision,
                 "snapshots": ["graphlet", "event"], "template": merged_template(entries, names)},
    }


def sequence_group(
    plan: dict[str, Any],
    qsets: dict[tuple[str, str], list[tuple[list[str], str]]],
    *,
    queries: list[str] | None = None,
    gid: str = "g0",
) -> dict[str, Any]:
    """A complete ``sequence`` group of ``plan``'s queries (all, or ``queries``), whether or
    not it is valid: ``qsets[(from type, to type)]`` lists the transition's Q-sets as (queries,
    snapshot type); each query's variables by type and the merged template are its own."""
    from trendlake.engine.shared.template import merged_template

    entries = {q["name"]: q for q in plan["queries"]}
    names = queries or list(entries)
    first = entries[names[0]]
    variables = {q: {v["type"]: v["name"] for v in entries[q]["variables"] if not v["negated"]} for q in names}
    return {
        "id": gid, "kind": "sequence", "queries": names,
        "partition_by": list(first["partition_by"]), "window": dict(first["window"]),
        "parameters": {}, "estimated_cost": {"shared": 0.0, "non_shared": 0.0},
        "body": {
            "variables": variables,
            "transitions": [{"from": p, "to": v, "qsets": [{"queries": list(qs), "snapshots": e} for qs, e in sets]}
                            for (p, v), sets in sorted(qsets.items())],
            "template": merged_template(entries, names),
        },
    }
