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
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendlake.engine.errors import EngineError
from trendlake.engine.query import CompiledQuery, compile_query

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1: plans written before sharing groups existed
SEMANTICS = ("skip-till-any-match", "skip-till-next-match", "contiguous")
UNHASHED = ("plan_id", "content_hash")  # the fields the content hash does not cover
MAX_PROBLEMS = 5  # distinct problems a PlanError lists; the rest are counted
MAX_VALUE_CHARS = 80  # a value quoted from the plan (an id, a name, a list) in a message
MAX_PROBLEM_CHARS = 300
MAX_MESSAGE_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def brief(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """``value`` as text on one line (control characters escaped), at most ``limit`` characters:
    a longer text keeps its head and says how much was cut."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(value))
    if len(text) <= limit:
        return text
    tail = f"... ({len(text) - limit} more characters)"
    return text[: max(limit - len(tail), 0)] + tail


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


@functools.cache
def _validator() -> Any:
    import jsonschema
    from trendlake.schemas import load_plan_schema

    schema = load_plan_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@functools.cache
def _fast_validator() -> Any:
    import jsonschema_rs
    from trendlake.schemas import load_plan_schema

    return jsonschema_rs.validator_for(load_plan_schema())


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
    """The rules of ``sharing`` (docs/plan-format.md, "Sharing") a schema-valid plan breaks.

    ``queries_ok``: the queries themselves passed their rules, so they compile (the kind's
    ``supports`` needs compiled queries)."""
    problems: list[str] = []
    queries = {q["name"]: q for q in plan["queries"]}
    owner: dict[str, str] = {}
    ids: set[str] = set()
    for group in plan.get("sharing", []):
        gid = group["id"]
        if gid in ids:
            problems.append(f"sharing group id {gid} is used twice")
        ids.add(gid)
        if set(group["variables"]) != set(group["queries"]):
            problems.append(f"sharing group {gid}: variables must name exactly its queries")
        for name in group["queries"]:
            q = queries.get(name)
            if q is None:
                problems.append(f"sharing group {gid}: no query {name}")
                continue
            if name in owner:
                problems.append(f"query {name} is in sharing groups {owner[name]} and {gid}")
            owner[name] = gid
            var = group["variables"].get(name)
            types = {v["name"]: v["type"] for v in q["variables"] if not v["negated"]}
            if var not in types:
                problems.append(f"sharing group {gid}: query {name} has no positive variable {var}")
            elif types[var] != group["type"]:
                problems.append(f"sharing group {gid}: variable {name}.{var} is of type {types[var]}, not {group['type']}")
            if q["partition_by"] != group["partition_by"] or q["window"] != group["window"]:
                problems.append(f"sharing group {gid}: query {name} has other partitioning or windows than the group")
        if all(name in queries for name in group["queries"]):
            problems += _template_problems(gid, group, queries)
        if not problems and queries_ok:
            from trendlake.engine.shared import kind_module

            module = kind_module(group["kind"])
            if module is None:
                problems.append(f"sharing group {gid}: kind {group['kind']} is not known to this engine")
            else:
                compiled = [compile_query(queries[name]) for name in group["queries"]]
                reason = module.supports(compiled, group["variables"])
                if reason is not None:
                    problems.append(f"sharing group {gid}: {reason}")
    return problems


def group_template(queries: dict[str, dict[str, Any]], members: list[str]) -> dict[str, dict[tuple[str, ...], set[str]]]:
    """The merged template a group's queries give (Hamlet Fig. 3), by section: each start and
    end type ``(type,)`` and each transition ``(from type, to type)`` with the queries it serves."""
    out: dict[str, dict[tuple[str, ...], set[str]]] = {"start": {}, "end": {}, "transitions": {}}
    for name in members:
        q = queries[name]
        types = {v["name"]: v["type"] for v in q["variables"]}
        for part in ("start", "end"):
            for v in q["template"][part]:
                out[part].setdefault((types.get(v, v),), set()).add(name)
        for t in q["template"]["transitions"]:
            out["transitions"].setdefault((types.get(t["from"], t["from"]), types.get(t["to"], t["to"])), set()).add(name)
    return out


def _template_problems(gid: str, group: dict[str, Any], queries: dict[str, dict[str, Any]]) -> list[str]:
    """How a group's ``template`` differs from the merged template of its queries' templates:
    every query it names is one of the group's, no entry is listed twice, and each start type,
    end type and transition serves exactly the group's queries whose own templates have it."""
    members = list(group["queries"])
    derived = group_template(queries, members)
    if not any(group["template"][part] for part in derived):
        return [f"sharing group {gid}: the template is empty, but its queries' templates have "
                f"{sum(len(d) for d in derived.values())} start types, end types and transitions"]
    problems: list[str] = []
    for part in ("start", "end", "transitions"):
        stated: dict[tuple[str, ...], set[str]] = {}
        for entry in group["template"][part]:
            key = (entry["from"], entry["to"]) if part == "transitions" else (entry["type"],)
            what = f"transition {key[0]} -> {key[1]}" if part == "transitions" else f"{part} type {key[0]}"
            if key in stated:
                problems.append(f"sharing group {gid}: the template lists {what} twice")
            if len(set(entry["queries"])) != len(entry["queries"]):
                problems.append(f"sharing group {gid}: the template's {what} names a query twice")
            for name in entry["queries"]:
                if name not in members:
                    where = "the group" if name in queries else "the plan"
                    problems.append(f"sharing group {gid}: the template's {what} names query {brief(name)}, "
                                    f"which is not in {where}")
            stated.setdefault(key, set()).update(entry["queries"])
        for key in sorted(set(stated) | set(derived[part])):
            want = derived[part].get(key, set())
            got = stated.get(key, set()) & set(members)
            if got != want:
                what = f"transition {key[0]} -> {key[1]}" if part == "transitions" else f"{part} type {key[0]}"
                problems.append(
                    f"sharing group {gid}: the template's {what} serves {brief(sorted(got) or 'no query')}, "
                    f"but the templates of its queries give {brief(sorted(want) or 'no query')}"
                )
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
    problem = _schema_error(plan)
    if problem is not None:
        raise PlanError(f"plan {plan_id} does not match the plan schema: {problem}")
    check_plan(plan)


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
