"""Reading a plan: format version, content hash, JSON Schema, semantic rules, workload hash; compiling its queries.

Every plan that is *read* (a JSON file, or a dict checked against a
workload hash: replay, ``eval --plan``) is validated before anything runs:

1. ``format_version`` is the one this engine reads;
2. ``content_hash`` equals the SHA-256 of the plan's canonical JSON without
   ``plan_id`` and ``content_hash`` (``content_hash()``), so an edited plan is
   refused;
3. the plan matches ``schemas/plan.schema.json``;
4. the semantic rules hold (``check_plan``): unique query names (also
   ignoring case), slide no larger than the window, every variable that the
   template, predicates and aggregates name exists, negation ids defined,
   ``partition_by`` = ``group_by`` + ``equivalence``, panes dividing every
   window and slide, sharing groups whose queries exist and agree with the
   group (types, partitioning, windows, the kind's own rules, and a merged
   template equal to the one their templates give), and a ``plan_id`` that
   matches the workload hash, planner and statistics;
5. with ``workload_hash`` given, the plan was made for that workload.

Every message about a plan is one line of bounded size: at most
``MAX_PROBLEMS`` distinct problems (a repeated one counted, the rest as "and
N more"), each value quoted from the plan shortened (``brief``), and the
whole message at most ``MAX_MESSAGE_CHARS`` characters.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendlake.engine.errors import EngineError, brief
from trendlake.engine.query import CompiledQuery, compile_query

FORMAT_VERSION = 3
# version 1: plans written before sharing groups existed; version 2: sharing groups of kind
# kleene with their fields beside the envelope's (read as version 3, ``upgrade``)
READABLE_VERSIONS = (1, 2, 3)
SEMANTICS = ("skip-till-any-match", "skip-till-next-match", "contiguous")
UNHASHED = ("plan_id", "content_hash")  # the fields the content hash does not cover
MAX_PROBLEMS = 5  # distinct problems a PlanError lists; the rest are counted
MAX_PROBLEM_CHARS = 300
MAX_MESSAGE_CHARS = 2000


def bounded_problems(problems: list[str]) -> str:
    """The problems as one ``; ``-separated line: equal ones once with their count, at most
    ``MAX_PROBLEMS`` of them, each at most ``MAX_PROBLEM_CHARS`` characters, then "and N more"."""
    counts: dict[str, int] = {}
    for p in problems:
        counts[p] = counts.get(p, 0) + 1
    shown = [brief(p, MAX_PROBLEM_CHARS) + (f" ({n} times)" if n > 1 else "")
             for p, n in list(counts.items())[:MAX_PROBLEMS]]
    rest = len(counts) - len(shown)
    return "; ".join(shown) + (f"; and {rest} more problem{'s' if rest > 1 else ''}" if rest else "")


class PlanError(EngineError, ValueError):
    """A plan the engine refuses: wrong format version, wrong workload, malformed.

    The message is one line of at most ``MAX_MESSAGE_CHARS`` characters, whatever the plan holds."""

    def __init__(self, message: str) -> None:
        super().__init__(brief(message, MAX_MESSAGE_CHARS))


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


def canonical_json(plan: dict[str, Any]) -> str:
    """The plan without ``plan_id``/``content_hash`` as sorted, compact JSON (what the hash covers)."""
    body = {k: v for k, v in plan.items() if k not in UNHASHED}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def content_hash(plan: dict[str, Any]) -> str:
    """``sha256:`` + hex SHA-256 of ``canonical_json(plan)``."""
    return "sha256:" + hashlib.sha256(canonical_json(plan).encode("utf-8")).hexdigest()


def statistics_fingerprint(statistics: dict[str, Any] | None) -> str:
    """The statistics part of a plan id (the optimizer's rule, docs/plan-format.md)."""
    if statistics is None:
        return "nostats"
    data = json.dumps(statistics, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:12]


def plan_schema() -> dict[str, Any]:
    """The plan JSON Schema with one ``oneOf`` branch per sharing kind this engine knows: the
    file's envelope, each kind's body schema (``Kind.body_schema``) under its ``kind``."""
    from trendlake.engine.shared import KINDS
    from trendlake.schemas import load_plan_schema

    schema = load_plan_schema()
    schema["$defs"]["sharing_group"]["oneOf"] = [
        {"properties": {"kind": {"const": name}, "body": kind.body_schema}} for name, kind in sorted(KINDS.items())
    ]
    return schema


def _kinds_key() -> tuple[tuple[str, int], ...]:
    from trendlake.engine.shared import KINDS

    return tuple(sorted((name, id(kind)) for name, kind in KINDS.items()))


def _validator() -> Any:
    return _validators(_kinds_key())[0]


def _fast_validator() -> Any:
    return _validators(_kinds_key())[1]


@functools.lru_cache(maxsize=4)
def _validators(kinds: tuple[tuple[str, int], ...]) -> tuple[Any, Any]:
    """The full and the fast validator of the plan schema for the registered kinds ``kinds``."""
    import jsonschema
    import jsonschema_rs

    schema = plan_schema()
    return jsonschema.validators.validator_for(schema)(schema), jsonschema_rs.validator_for(schema)


def _schema_error(plan: dict[str, Any]) -> str | None:
    """The plan's first JSON Schema violation, or None. A valid plan is recognised by
    jsonschema-rs (a compiled validator, about 400 times faster on a plan of a few queries:
    every ``load_plan`` pays it); the message of an invalid one is the ``jsonschema``
    package's best match, so that its wording does not depend on the fast path."""
    import jsonschema

    try:
        if _fast_validator().is_valid(plan):
            return None
    except (ValueError, TypeError, OverflowError):  # a value it cannot take (e.g. a huge int): the full check decides
        pass
    error = jsonschema.exceptions.best_match(_validator().iter_errors(plan))
    if error is None:
        return None
    where = brief("/".join(str(p) for p in error.absolute_path) or "(top level)")
    return f"{where}: {brief(error.message, MAX_PROBLEM_CHARS)}"


def _expr_vars(expr: Any) -> set[str]:
    out: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "var" in node:
                out.add(str(node["var"]))
            stack.extend(node.get("args", []))
    return out


def _query_problems(q: dict[str, Any], panes: Any) -> list[str]:
    name = q["name"]
    out: list[str] = []

    def bad(message: str) -> None:
        out.append(f"query {name}: {message}")

    within, slide = q["window"]["within_us"], q["window"]["slide_us"]
    if within <= 0 or slide <= 0:
        bad(f"window {within}us and slide {slide}us must be positive")
    elif slide > within:
        bad(f"slide {slide}us is larger than the window {within}us")
    elif isinstance(panes, int) and panes > 0 and (within % panes or slide % panes):
        out.append(f"panes_us {panes} does not divide the window or slide of query {name}")
    if q["semantics"] not in SEMANTICS:
        bad(f"unknown semantics {q['semantics']!r}")
    names = [v["name"] for v in q["variables"]]
    known = set(names)
    positive = {v["name"] for v in q["variables"] if not v["negated"]}
    if len(known) != len(names):
        bad("a variable name is used twice")
    tpl = q["template"]
    for part in ("start", "end"):
        for v in tpl[part]:
            if v not in positive:
                bad(f"template {part} refers to unknown variable {v}")
    neg_ids = {n["id"] for n in q["negations"]}
    if neg_ids != set(range(len(q["negations"]))):
        bad(f"negation ids {sorted(neg_ids)} are not 0..{len(q['negations']) - 1}")
    for n in q["negations"]:
        for v in n["sequence"]:
            if v not in known:
                bad(f"negation {n['id']} refers to unknown variable {v}")
    referenced = list(tpl["start_negations"]) + list(tpl["end_negations"])
    for t in tpl["transitions"]:
        for v in (t["from"], t["to"]):
            if v not in positive:
                bad(f"template transition {t['from']} -> {t['to']} refers to unknown variable {v}")
        referenced += t["negations"]
    for i in referenced:
        if i not in neg_ids:
            bad(f"the template uses negation {i}, which is not defined")
    for v, exprs in q["local_predicates"].items():
        if v not in known:
            bad(f"local predicate of unknown variable {v}")
        for e in exprs:
            for u in _expr_vars(e) - known:
                bad(f"local predicate of {v} refers to unknown variable {u}")
    for a in q["adjacent_predicates"]:
        for u in sorted(({a["from"], a["to"]} | _expr_vars(a["expr"])) - known):
            bad(f"adjacent predicate {a['from']} -> {a['to']} refers to unknown variable {u}")
    for v in q["required_attributes"]:
        if v not in known:
            bad(f"required attributes of unknown variable {v}")
    agg_names = [a["name"] for a in q["aggregates"]]
    if len(set(agg_names)) != len(agg_names):
        bad("an aggregate name is used twice")
    for a in q["aggregates"]:
        if a["fn"] != "count_star" and a.get("var") not in known:
            bad(f"aggregate {a['name']} refers to unknown variable {a.get('var')}")
        if a["fn"] in ("sum", "avg", "min", "max") and not a.get("attr"):
            bad(f"aggregate {a['name']} has no attribute")
    columns = set(q["group_by"]) | set(agg_names)
    for r in q["returns"]:
        if r not in columns:
            bad(f"RETURN column {r} is neither a GROUP-BY attribute nor an aggregate")
    expected = list(dict.fromkeys(list(q["group_by"]) + list(q["equivalence"])))
    if list(q["partition_by"]) != expected:
        bad(f"partition_by {q['partition_by']} is not group_by + equivalence {expected}")
    return out


def check_plan(plan: dict[str, Any]) -> None:
    """Raise ``PlanError`` listing every broken semantic rule of a schema-valid plan."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for q in plan["queries"]:
        name = q["name"]
        other = seen.get(name.lower())
        if other == name:
            problems.append(f"query name {name} is used twice")
        elif other is not None:
            problems.append(f"query name {name} differs from query {other} only in case")
        seen.setdefault(name.lower(), name)
        problems += _query_problems(q, plan.get("panes_us"))
    whash = str(plan["workload_hash"])
    expected_id = f"{whash.split(':', 1)[-1][:12]}-{plan['planner']}-{statistics_fingerprint(plan['statistics'])}"
    problems += _sharing_problems(plan, queries_ok=not problems)
    if plan["plan_id"] != expected_id:
        problems.append(
            f"plan id {plan['plan_id']} does not match its content (expected {expected_id} "
            "from its workload hash, planner and statistics)"
        )
    if problems:
        raise PlanError(f"invalid plan {brief(plan.get('plan_id', '?'))}: " + bounded_problems(problems))


def _sharing_problems(plan: dict[str, Any], queries_ok: bool = True) -> list[str]:
    """The rules of ``sharing`` (docs/plan-format.md, "Sharing") a schema-valid plan breaks:
    the envelope's (unique ids, queries that exist, a query in at most one group, the
    group's partitioning and windows those of its queries, a kind this engine knows), then
    the kind's own (``Kind.check``) and, with ``queries_ok`` (the queries passed their rules,
    so they compile), whether this engine runs the group (``Kind.supports``)."""
    from trendlake.engine.shared import kind_of

    problems: list[str] = []
    queries = {q["name"]: q for q in plan["queries"]}
    owner: dict[str, str] = {}
    ids: set[str] = set()
    for group in plan.get("sharing", []):
        gid = group["id"]
        found: list[str] = []
        if gid in ids:
            found.append(f"sharing group id {gid} is used twice")
        ids.add(gid)
        kind = kind_of(group["kind"])
        same_window = getattr(kind, "same_window", True)  # a kind may hold queries of other windows
        for name in group["queries"]:
            q = queries.get(name)
            if q is None:
                found.append(f"sharing group {gid}: no query {name}")
                continue
            if name in owner:
                found.append(f"query {name} is in sharing groups {owner[name]} and {gid}")
            owner[name] = gid
            if q["partition_by"] != group["partition_by"] or (q["window"] != group["window"] and same_window):
                found.append(f"sharing group {gid}: query {name} has other partitioning or windows than the group")
        if kind is None:
            found.append(f"sharing group {gid}: kind {group['kind']} is not known to this engine")
        elif not found:
            found += [f"sharing group {gid}: {p}" for p in kind.check(group, queries)]
        if not found and queries_ok and kind is not None:
            compiled = [compile_query(queries[name]) for name in group["queries"]]
            reason = kind.supports(group, compiled)
            if reason is not None:
                found.append(f"sharing group {gid}: {reason}")
        problems += found
    return problems


def validate_plan(plan: Any) -> None:
    """Check a plan read from outside: content hash, JSON Schema and semantic rules (see module doc)."""
    if not isinstance(plan, dict):
        raise PlanError(f"a plan is a JSON object, not {type(plan).__name__}")
    plan_id = brief(plan.get("plan_id", "?"))
    stored = brief(plan.get("content_hash"))
    if not plan.get("content_hash"):
        raise PlanError(
            f"plan {plan_id} has no content hash (written by an older trendlake?); run `trendlake optimize` again"
        )
    try:
        actual = content_hash(plan)
    except (TypeError, ValueError) as err:
        raise PlanError(f"plan {plan_id} is not plain JSON: {err}") from None
    if plan.get("content_hash") != actual:
        raise PlanError(
            f"plan {plan_id} was edited: its content hash is {actual}, not the {stored} it was written with; "
            "run `trendlake optimize` again instead of editing plans"
        )
    queries, sharing = plan.get("queries"), plan.get("sharing")
    if isinstance(queries, list) and isinstance(sharing, list) and len(sharing) > len(queries) // 2:
        # before the schema, whose check of thousands of groups takes minutes
        raise PlanError(
            f"plan {plan_id} has {len(sharing)} sharing groups for {len(queries)} queries: a group shares "
            "at least two queries and a query is in at most one group"
        )
    plan = upgrade(plan)
    problem = _schema_error(plan)
    if problem is not None:
        raise PlanError(f"plan {plan_id} does not match the plan schema: {problem}")
    check_plan(plan)


def upgrade(plan: dict[str, Any]) -> dict[str, Any]:
    """A plan of an older readable format version in the current form (the same plan, not a
    copy, when it is current): each sharing group as its kind reads it (``Kind.upgrade``;
    version 2 kept a group's own fields beside the envelope's). The content hash stays the one
    the plan was written with: it is checked on the plan as read, before this."""
    from trendlake.engine.shared import kind_of

    version = plan.get("format_version")
    if version == FORMAT_VERSION or not isinstance(plan.get("sharing"), list):
        return plan
    entries = {q.get("name"): q for q in plan.get("queries") or [] if isinstance(q, dict)}
    groups = []
    for group in plan["sharing"]:
        kind = kind_of(group.get("kind", "")) if isinstance(group, dict) else None
        groups.append(kind.upgrade(group, entries, version) if kind is not None else group)
    return {**plan, "format_version": FORMAT_VERSION, "sharing": groups}


def load_plan(
    plan: dict[str, Any] | str | Path, workload_hash: str | None = None, *, validate: bool | None = None
) -> Plan:
    """Check and compile a plan (a dict or a JSON file path).

    When ``workload_hash`` is given, a plan made for another workload is refused.
    ``validate`` (default: for files and whenever ``workload_hash`` is given)
    runs ``validate_plan``; only plans built in this process (tests, the
    executors' copy of a plan the driver validated) skip it.
    """
    if validate is None:
        validate = not isinstance(plan, dict) or workload_hash is not None
    if not isinstance(plan, dict):
        path = Path(plan)
        try:
            plan = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PlanError(f"no plan file {path}") from None
        except IsADirectoryError:
            raise PlanError(f"plan {path} is a directory, not a JSON file") from None
        except UnicodeDecodeError as err:
            raise PlanError(f"{path} is not UTF-8 text (byte {err.start})") from None
        except json.JSONDecodeError as err:
            raise PlanError(f"{path} is not JSON: {err}") from None
        if not isinstance(plan, dict):
            raise PlanError(f"{path} is not a plan (a JSON object)")
    version = plan.get("format_version")
    if version not in READABLE_VERSIONS:
        raise PlanError(
            f"plan format version {brief(repr(version))} is not supported (this engine reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))})"
        )
    if validate:
        validate_plan(plan)
    plan = upgrade(plan)
    if workload_hash is not None and plan.get("workload_hash") != workload_hash:
        raise PlanError(
            f"plan {brief(plan.get('plan_id', '?'))} was made for workload {brief(plan.get('workload_hash'))}, "
            f"not for this workload ({workload_hash}); run `trendlake optimize` again"
        )
    try:
        queries = {q["name"]: compile_query(q) for q in plan["queries"]}
    except (KeyError, TypeError, ValueError) as err:
        raise PlanError(f"malformed plan: {brief(repr(err))}") from None
    return Plan(plan, queries)
