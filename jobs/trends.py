"""``trendlake trends``: the trends behind one result row, from a local event file (no Spark).

The job behind ``jobs/cli/trends.py``: compile the workload, read the events the query
needs, list the windows with their ``COUNT(*)`` or construct the trends of one (group,
window) with ``engine.trends.drill`` under a memory budget, or of several windows of the
group with ``engine.trends.SharedWindows`` (``shared_file``). Bad input raises
``BadInputError``; a window over the budget raises the engine's ``TrendsRefused``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendlake.jobs.errors import BadInputError

__all__ = ["MAX_SVG_EDGES", "MAX_SVG_VERTICES", "ROW", "Request", "Window", "drill_file", "explain_document",
           "explain_lines", "graph_svg", "list_windows", "plan_file", "shared_document", "shared_file",
           "shared_lines", "trend_row"]

ROW = "__row__"  # the 1-based data row of each event in its file (its id without --id)


@dataclass
class Request:
    workload: Path
    query: str
    events: Path
    stream: str | None = None
    group: tuple[str, ...] = ()  # K=V texts
    window_start: str | None = None
    complete: bool = True
    limit: int | None = None
    memory: int | None = None
    algorithm: str = "auto"
    optimizer: str = "branch-and-bound"
    id_column: str | None = None


@dataclass
class Window:
    """One window of the query with its ``COUNT(*)``."""

    query: str
    group: dict[str, Any]
    start: int
    end: int
    count: int


def _load(req: Request) -> tuple[Any, list[Any]]:
    """The compiled query and the events of the file."""
    import pyarrow as pa
    from trendlake.engine.columns import events_from_arrow
    from trendlake.jobs.evaluate import compile_plan, load_schema, read_event_file

    from trendlake import engine

    plan, whash = compile_plan(req.workload, req.stream)
    loaded = engine.load_plan(plan, workload_hash=whash)
    if req.query not in loaded.queries:
        raise BadInputError(f"--query: no query {req.query!r} in {req.workload} (queries: {', '.join(loaded.queries)})")
    schema = load_schema(req.stream) if req.stream else None
    columns = set(engine.columns_needed(loaded, [req.query]))
    if req.id_column is not None:
        columns.add(req.id_column)
    table = read_event_file(req.events, schema, columns)
    if req.id_column is not None and req.id_column not in table.column_names:
        raise BadInputError(f"--id: {req.events} has no column {req.id_column!r}")
    table = table.append_column(ROW, pa.array(range(1, table.num_rows + 1), pa.int64()))
    ts = table.column("ts").cast(pa.timestamp("us", tz="UTC"))  # µs integers (engine.read_events)
    table = table.set_column(table.column_names.index("ts"), "ts", ts)
    return loaded.queries[req.query], events_from_arrow(table, where=str(req.events))


def _group_filter(q: Any, texts: tuple[str, ...]) -> dict[str, str]:
    """``--group K=V`` options as {attribute: value text}; keys must be GROUP-BY attributes."""
    out: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise BadInputError(f"--group: expected ATTRIBUTE=VALUE, got {text!r}")
        if key not in q.group_by:
            by = ", ".join(q.group_by) or "nothing"
            raise BadInputError(f"--group: query {q.name} groups by {by}, not {key!r}")
        out[key] = value
    return out


def _matches(q: Any, group: tuple[Any, ...], wanted: dict[str, str]) -> bool:
    return all(str(v) == wanted[a] for a, v in zip(q.group_by, group, strict=True) if a in wanted)


def list_windows(req: Request) -> list[Window]:
    """Every window of the query (of the ``--group`` given) with at least one trend."""
    from trendlake.engine.trends import window_counts

    q, events = _load(req)
    return _windows(q, window_counts(q, events), _group_filter(q, req.group))


def _windows(q: Any, counts: dict[Any, int], wanted: dict[str, str]) -> list[Window]:
    out = []
    for (group, k), count in sorted(counts.items(), key=lambda kv: (repr(kv[0][0]), kv[0][1])):
        if _matches(q, group, wanted):
            start, end = q.window_bounds(k)
            out.append(Window(q.name, dict(zip(q.group_by, group, strict=True)), start, end, count))
    return out


def drill_file(req: Request) -> Any:
    """The ``engine.trends.Drill`` of the window starting at ``req.window_start``; a window over
    the budget raises ``TrendsRefused``."""
    return plan_file(req).drill()


def plan_file(req: Request) -> Any:
    """The ``engine.trends.Planning`` of the window starting at ``req.window_start`` (its graph
    and chosen plan, refused or not)."""
    from trendlake.engine.trends import plan

    q, events = _load(req)
    group, k = _target(q, events, req, req.window_start)
    return plan(q, events, group, k, complete=req.complete, algorithm=req.algorithm, memory=req.memory,
                limit=req.limit, optimizer=req.optimizer)


def shared_file(req: Request, starts: list[str]) -> Any:
    """The windows starting at ``starts`` (several ``--window-start``, one group) planned
    together: an ``engine.trends.SharedWindows`` whose overlapping windows share their graph
    and graphlets; its ``plans()`` yields them by start."""
    from trendlake.engine.trends import SharedWindows, window_counts

    q, events = _load(req)
    counts = window_counts(q, events)
    targets = [_target(q, events, req, text, counts) for text in starts]
    ks = [k for _, k in targets]
    if len(set(ks)) < len(ks):
        raise BadInputError("--window-start: a window is given twice")
    return SharedWindows(q, events, targets[0][0], ks, complete=req.complete, algorithm=req.algorithm,
                         memory=req.memory, limit=req.limit, optimizer=req.optimizer)


def _target(
    q: Any, events: list[Any], req: Request, start_text: str | None, counts: dict[Any, int] | None = None,
) -> tuple[tuple[Any, ...], int]:
    """The (group, window index) that ``--group`` and a ``--window-start`` name (``counts``: the
    query's ``window_counts`` when known)."""
    from trendlake.engine.timeline import format_ts, parse_ts
    from trendlake.engine.trends import window_counts

    wanted = _group_filter(q, req.group)
    if set(wanted) != set(q.group_by):
        missing = [a for a in q.group_by if a not in wanted]
        raise BadInputError(f"--group: query {q.name} groups by {', '.join(q.group_by)}; give "
                            + " ".join(f"--group {a}=VALUE" for a in missing))
    start = parse_ts(start_text)
    if start % q.slide:
        raise BadInputError(f"--window-start {start_text}: no window of query {q.name} starts then "
                            f"(windows start every {q.slide // 10**6} seconds from the epoch)")
    k = start // q.slide
    windows = _windows(q, counts if counts is not None else window_counts(q, events), wanted)
    groups = {tuple(w.group.values()) for w in windows}
    if not groups:
        raise BadInputError(f"query {q.name} has no trend in the group {wanted}")
    group = next(iter(groups)) if len(groups) == 1 else None
    if group is None:
        raise BadInputError(f"--group {wanted} names {len(groups)} groups of query {q.name}")
    if not any(w.start == start for w in windows):
        raise BadInputError(f"the window of query {q.name} starting {format_ts(start)} has no trend in "
                            f"the group {wanted} (without --window-start the windows with trends are listed)")
    return group, k


def shared_document(planning: Any, id_column: str | None) -> dict[str, Any]:
    """``trends --explain`` of one of several windows: a window planned alone as
    ``explain_document``; one planned on its cluster's shared graph with the span graph, the
    panes and the window's plan over them (the graphlets it will reuse are known once its
    trends are constructed: ``trendlake trends`` reports them after each window)."""
    from trendlake.engine.timeline import format_ts
    from trendlake.engine.trends.explain import graphlets

    if planning.sharing is None:
        return {**explain_document(planning, id_column), "shared": False}
    info, c = planning.sharing, planning.plan
    a, n = info["first_vertex"], info["vertices"]
    parts = [g for g in graphlets(planning, c.cuts) if g["vertices"]]
    for g in parts:  # the window's vertices of each graphlet (a graphlet also numbers the span's others)
        inside = [v for v in range(a, a + n) if planning.paths.group[v] in _group_range(planning, g)]
        g["first"], g["last"] = _vertex(planning, inside[0], id_column), _vertex(planning, inside[-1], id_column)
        g["vertices"] = len(inside)
    return {
        "query": planning.query.name, "group": dict(zip(planning.query.group_by, planning.group, strict=True)),
        "window": [format_ts(t) for t in planning.window], "shared": True, "complete": planning.complete,
        "count_all": planning.count_all, "count": planning.count, "budget": planning.memory,
        "span_graph": {"vertices": info["span_vertices"], "edges": info["span_edges"], "bytes": info["span_bytes"],
                       "panes": info["panes"]},
        "chosen": {"algorithm": c.algorithm, "cuts": list(c.cuts), "graphlets": c.graphlets, "cpu": c.cpu,
                   "memory": c.memory, "graphlet_list": parts},
        "estimated_memory": info["estimated_memory"],
    }


def _group_range(planning: Any, g: dict[str, Any]) -> range:
    groups = planning.paths.group
    return range(groups[g["first"]], groups[g["last"]] + 1)


def shared_lines(doc: dict[str, Any]) -> list[str]:
    """``shared_document`` in words."""
    if not doc["shared"]:
        return [*explain_lines(doc), "  (planned alone: it overlaps no other window given, or sharing did not fit)"]
    group = ", ".join(f"{k}={v}" for k, v in doc["group"].items()) or "no GROUP-BY"
    kind = "complete trends" if doc["complete"] else "trends"
    s, c = doc["span_graph"], doc["chosen"]
    lines = [
        f"query {doc['query']}, {group}, window [{doc['window'][0]}, {doc['window'][1]})",
        f"  {doc['count']} {kind} (COUNT(*) {doc['count_all']}); shares the CET graph of the overlapping "
        f"windows' span ({s['vertices']} vertices, {s['edges']} edges, {s['bytes']} bytes) cut into "
        f"{s['panes']} panes at their starts and ends",
        f"chosen: H-CET on its {c['graphlets']} panes: estimated CPU {c['cpu']}, memory {c['memory']} bytes; with "
        f"the span graph and the cache {doc['estimated_memory']} bytes (budget "
        + ("none" if doc["budget"] is None else f"{doc['budget']} bytes") + ")",
    ]
    for i, p in enumerate(c["graphlet_list"], start=1):
        lines.append(f"  graphlet {i}: events {p['first']['id']} ({p['first']['ts']}) .. {p['last']['id']} "
                     f"({p['last']['ts']}): {p['vertices']} vertices, {p['edges']} edges inside, "
                     f"{p['cut_edges']} cut edges out")
    return lines


def trend_row(d: Any, number: int, trend: Any, id_column: str | None) -> dict[str, Any]:
    """One output record of a trend: the row's keys, its number and its events."""
    from trendlake.engine.timeline import format_ts

    row: dict[str, Any] = {"query": d.query.name}
    row.update(zip(d.query.group_by, d.group, strict=True))
    row["window_start"], row["window_end"] = format_ts(d.window[0]), format_ts(d.window[1])
    row["trend"] = number
    row["events"] = [
        {"id": e.attrs.get(id_column) if id_column else e.attrs[ROW], "type": e.type, "variable": var, "ts": format_ts(e.ts)}
        for e, var in trend
    ]
    return row


def _event_id(e: Any, id_column: str | None) -> Any:
    return e.attrs.get(id_column) if id_column else e.attrs[ROW]


def _vertex(planning: Any, v: int, id_column: str | None) -> dict[str, Any]:
    from trendlake.engine.timeline import format_ts

    e, var = planning.graph.vertices[v]
    return {"id": _event_id(e, id_column), "type": e.type, "variable": var, "ts": format_ts(e.ts)}


def explain_document(planning: Any, id_column: str | None) -> dict[str, Any]:
    """``engine.trends.explain.explain`` with vertices named as events (id, type, variable,
    time) and the window's bounds as times: what ``trends --explain --format json`` prints."""
    from trendlake.engine.timeline import format_ts
    from trendlake.engine.trends.explain import explain

    doc = explain(planning)
    doc["group"] = dict(zip(planning.query.group_by, planning.group, strict=True))
    doc["window"] = [format_ts(t) for t in planning.window]
    if doc["chosen"] is not None:
        for g in doc["chosen"]["graphlet_list"]:
            g["first"], g["last"] = _vertex(planning, g["first"], id_column), _vertex(planning, g["last"], id_column)
    for entry in [doc["chosen"], *doc["alternatives"]]:
        if entry is not None:  # a cut after time stamp c falls after the last event at c
            entry["cuts_after"] = [_vertex(planning, _last_of_group(planning, c), id_column) for c in entry["cuts"]]
    return doc


def _last_of_group(planning: Any, c: int) -> int:
    """The last vertex of time stamp group ``c`` (a cut after ``c`` falls after it)."""
    import bisect

    return bisect.bisect_right(planning.paths.group, c) - 1


def explain_lines(doc: dict[str, Any]) -> list[str]:
    """``explain_document`` in words (``trends --explain --format table``)."""
    group = ", ".join(f"{k}={v}" for k, v in doc["group"].items()) or "no GROUP-BY"
    g = doc["graph"]
    kind = "complete trends" if doc["complete"] else "trends"
    budget = "none" if doc["budget"] is None else f"{doc['budget']} bytes"
    lines = [
        f"query {doc['query']}, {group}, window [{doc['window'][0]}, {doc['window'][1]})",
        f"  {doc['count']} {kind} (COUNT(*) {doc['count_all']}); CET graph: {g['vertices']} vertices, "
        f"{g['edges']} edges ({g['edges_of_the_trends']} on the {kind}), {g['time_stamps']} time stamps, "
        f"{g['bytes']} bytes",
        f"  memory budget {budget}: kept trends {doc['kept_trends_bytes']} bytes, left to the algorithm "
        + ("unlimited" if doc["room"] is None else f"{doc['room']} bytes"),
        f"  --algorithm {doc['algorithm']}, --optimizer {doc['optimizer']}",
    ]
    c = doc["chosen"]
    if c is None:
        lines.append("chosen: none (no plan fits the budget)")
    else:
        state = "" if c["fits"] else " -- does not fit the budget"
        edges = f", {c['cut_edges']} cut edges" if c["cuts"] else ""
        lines.append(f"chosen: {_plan_name(c)}{edges}: estimated CPU {c['cpu']}, memory {c['memory']} bytes "
                     f"({c['memory_with_kept_trends']} with the kept trends){state}")
        for i, p in enumerate(c["graphlet_list"], start=1):
            lines.append(f"  graphlet {i}: events {p['first']['id']} ({p['first']['ts']}) .. {p['last']['id']} "
                         f"({p['last']['ts']}): {p['vertices']} vertices, {p['edges']} edges inside, "
                         f"{p['cut_edges']} cut edges out")
    lines.append("alternatives:")
    for a in doc["alternatives"]:
        tag = f" [{a['label']}]" if a.get("label") else " [costed by the optimizer]" if a["source"] == "optimizer" else ""
        lines.append(f"  {_plan_name(a)}{tag}: CPU {a['cpu']}, memory {a['memory']} bytes -- {a['why']}")
    if doc["optimizer_evaluated"]:
        more = f", {doc['alternatives_not_shown']} not shown" if doc["alternatives_not_shown"] else ""
        lines.append(f"the optimizer ({doc['optimizer']}) costed {doc['optimizer_evaluated']} plans: "
                     f"{doc['optimizer_fitting']} fit, {doc['optimizer_over_budget']} over the budget{more}")
    if doc["refused"]:
        lines.append(f"refused: {doc['refused']}")
    return lines


def _plan_name(c: dict[str, Any]) -> str:
    if c["algorithm"] != "h-cet":
        return c["algorithm"].upper()
    if not c["cuts"]:
        return "H-CET, 1 graphlet (no cut)"
    after = ", ".join(f"{v['id']} ({v['ts']})" for v in c["cuts_after"])
    return f"H-CET, {c['graphlets']} graphlets, cuts after events {after}"


MAX_SVG_VERTICES = 2000
MAX_SVG_EDGES = 20000


def graph_svg(planning: Any, id_column: str | None) -> str:
    """The window's CET graph (the edges of the trends listed) as SVG: vertices by time stamp
    (x) and variable (y), START ones with a thick border, END ones filled darker; the chosen
    plan's graphlets as shaded bands and its cut edges red. A graph over ``MAX_SVG_VERTICES``
    vertices or ``MAX_SVG_EDGES`` edges is refused (``BadInputError``)."""
    import html

    from trendlake.engine.timeline import format_ts
    from trendlake.engine.trends.explain import cut_edges, graphlets
    from trendlake.jobs.explain import svg_document

    paths, graph = planning.paths, planning.graph
    n, m = len(paths), paths.edges
    if n > MAX_SVG_VERTICES or m > MAX_SVG_EDGES:
        raise BadInputError(f"--svg: the window's CET graph has {n} vertices and {m} edges; at most "
                            f"{MAX_SVG_VERTICES} and {MAX_SVG_EDGES} are drawn (choose a narrower window)")
    q = planning.query
    variables = list(q.positive)
    row_of = {var: i for i, var in enumerate(variables)}
    dx, dy, left, top = 70, 70, 150, 70
    # vertices at the same time stamp and variable (several partitions) are stacked in their cell
    stack: dict[tuple[int, str], int] = {}
    pos = []
    for v, (_, var) in enumerate(graph.vertices):
        cell = (paths.group[v], var)
        j = stack.get(cell, 0)
        stack[cell] = j + 1
        pos.append((left + dx * paths.group[v] + 12 * j, top + dy * row_of[var] + 12 * j))
    width = left + dx * max(paths.groups, 1) + 60
    height = top + dy * len(variables) + 40
    plan = planning.plan
    cuts = plan.cuts if plan is not None and plan.algorithm == "h-cet" else ()
    crossing = set(cut_edges(planning, cuts))
    parts = []
    title = (f"query {q.name}, group {', '.join(map(str, planning.group)) or '()'}, window "
             f"[{format_ts(planning.window[0])}, {format_ts(planning.window[1])}): {n} vertices, {m} edges, "
             + ("no plan fits the budget" if plan is None else
                f"{plan.algorithm.upper()}" + (f", {len(cuts) + 1} graphlets, {len(crossing)} cut edges" if cuts else "")))
    parts.append(f'<text x="10" y="22" font-weight="bold">{html.escape(title)}</text>')
    width = max(width, 20 + 8.5 * len(title))
    for i, g in enumerate(graphlets(planning, cuts) if n else []):
        x0 = left + dx * paths.group[g["first"]] - dx / 2
        x1 = left + dx * paths.group[g["last"]] + dx / 2
        fill = "#e8f0fb" if i % 2 == 0 else "#fbf1e1"
        parts.append(f'<g class="graphlet"><rect x="{x0:.1f}" y="{top - 35}" width="{x1 - x0:.1f}" '
                     f'height="{height - top + 5}" fill="{fill}"/><text x="{x0 + 4:.1f}" y="{top - 20}" '
                     f'font-size="11" fill="#555">graphlet {i + 1} ({g["vertices"]} vertices)</text></g>')
    for var, r in row_of.items():
        parts.append(f'<text x="10" y="{top + dy * r + 4}" font-size="12">{html.escape(var)}</text>')
    for v, ws in enumerate(paths.succ):
        for w in ws:
            (x1, y1), (x2, y2) = pos[v], pos[w]
            cut = (v, w) in crossing
            cls, colour, mark, sw = ("cut-edge", "#c0392b", "cut", 2.2) if cut else ("edge", "#777", "arrow", 1)
            skip = paths.group[w] - paths.group[v]
            bend = -12 - 6 * min(skip, 6) if y1 == y2 and skip > 1 else 0  # arcs over the row's vertices
            mx, my = (x1 + x2) / 2, (y1 + y2) / 2 + bend
            parts.append(f'<path class="{cls}" d="M{x1:.1f},{y1:.1f} Q{mx:.1f},{my:.1f} {x2 - 9:.1f},{y2:.1f}" '
                         f'fill="none" stroke="{colour}" stroke-width="{sw}" marker-end="url(#{mark})"/>')
    for v, (e, var) in enumerate(graph.vertices):
        x, y = pos[v]
        label = str(_event_id(e, id_column))
        fill = "#9ab8e0" if paths.last[v] or paths.first1[v] else "#ffffff"
        sw = 2.5 if paths.first[v] or paths.first1[v] else 1
        tip = f"{label}: {e.type} as {var} at {format_ts(e.ts)}"
        parts.append(f'<g class="vertex"><title>{html.escape(tip)}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="9" '
                     f'fill="{fill}" stroke="#234" stroke-width="{sw}"/><text x="{x:.1f}" y="{y + 24:.1f}" '
                     f'font-size="10" text-anchor="middle">{html.escape(label)}</text></g>')
    for gi in range(0, paths.groups, max(2, paths.groups // 12)):  # a time label every few time stamps
        ts = graph.vertices[paths.group.index(gi)][0].ts
        parts.append(f'<text x="{left + dx * gi}" y="{height - 8}" font-size="9" text-anchor="middle" '
                     f'fill="#555">{html.escape(format_ts(ts))}</text>')
    return svg_document(width, height, parts, markers={"cut": "#c0392b"})
