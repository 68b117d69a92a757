"""What a plan does, in words and as a picture (the job behind ``trendlake explain PLAN.json``).

Prints, per query, how the engine evaluates it (its granularity and the
strategy ``auto`` picks) and, per sharing group, what its kind says it shares
and how (``Kind.describe``), the estimated shared and non-shared cost and the
merged template with the queries each transition serves (``Kind.template``). ``--svg
FILE`` draws the merged templates (one panel per group; no extra needed) and, for a
group whose kind keeps the graph of candidates its planner chose from (``Kind.graph``:
Sharon's graph), that graph: candidates with their benefits, conflicts as lines, the
chosen ones filled.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["explain_text", "measured_text", "svg_document", "template_svg"]


def explain_text(loaded: Any) -> str:
    """The plan in words (see the module docstring)."""
    from trendlake.engine.strategies import strategy_for

    raw = loaded.raw
    lines = [f"plan {raw.get('plan_id')} (planner {raw.get('planner')}, format {raw.get('format_version')})"]
    stats = raw.get("statistics")
    if stats is None:
        lines.append("statistics: none")
    elif stats.get("assumption"):
        lines.append(f"statistics: assumed {stats['assumption']} rates (no statistics were read)")
    else:
        lines.append(f"statistics: {stats.get('events', '?')} events, {len(stats.get('types') or {})} types")
    cost = raw.get("estimated_cost")
    chosen = raw.get("chosen_planner")
    lines.append(f"estimated cost: {cost}" + (f" (planner auto chose {chosen})" if chosen else ""))
    for a in raw.get("alternatives", []):
        why = f": {a['reason']}" if a.get("reason") else ""
        lines.append(f"  rejected {a['planner']}, estimated {a['estimated_cost']}{why}")
    grouped = {q: g["id"] for g in raw.get("sharing", []) for q in g["queries"]}
    lines.append("queries:")
    for name, q in loaded.queries.items():
        where = f"shared in {grouped[name]}" if name in grouped else f"alone, strategy {strategy_for(q, 'auto')}"
        lines.append(f"  {name}: {q.granularity}-grained, {where}")
    if not raw.get("sharing"):
        lines.append("sharing: none (every query runs alone)")
    from trendlake.engine.shared import kind_of

    for g in raw.get("sharing", []):
        kind = kind_of(g["kind"])
        assert kind is not None  # load_plan refuses a kind the engine does not know
        est = g["estimated_cost"]
        ratio = est["non_shared"] / est["shared"] if est["shared"] else float("inf")
        head, *rest = kind.describe(g)
        lines.append(f"group {g['id']}: {g['kind']} — {head}")
        lines += [f"  {line}" for line in rest]
        lines.append(f"  estimated cost per window (steps): shared {est['shared']}, non-shared {est['non_shared']} "
                     f"({ratio:.2f}x)")
        tpl = kind.template(g)
        if tpl is None:
            continue
        lines.append("  merged template:")
        for s in tpl["start"]:
            lines.append(f"    start {s['type']}: {', '.join(s['queries'])}")
        for t in tpl["transitions"]:
            lines.append(f"    {t['from']} -> {t['to']}: {', '.join(t['queries'])}")
        for s in tpl["end"]:
            lines.append(f"    end {s['type']}: {', '.join(s['queries'])}")
    return "\n".join(lines)


def measured_text(raw: dict[str, Any], report: dict[str, Any]) -> str:
    """The plan's estimates against a replay's measured engine seconds: per sharing group and
    per query run alone, its share of the plan's estimated cost and of the measured time, and
    the non-shared plan's time at the measured seconds per estimated step."""
    from trendlake.optimizer.cost import alone_costs
    from trendlake.optimizer.statistics import Statistics

    spent = report["engine_seconds"]
    groups, queries = spent.get("groups") or {}, spent.get("queries") or {}
    lines = [f"estimate against measured (replay run {report.get('run_id', '?')}, plan {report.get('plan_id', '?')}):"]
    if report.get("plan_id") != raw.get("plan_id"):
        lines.append(f"  the report is of plan {report.get('plan_id')}, not this one: figures may not match")
    statistics = Statistics.of(raw.get("statistics"))
    if statistics is None:
        lines.append("  the plan has no statistics, hence no estimates; measured engine seconds only:")
    entries = {q["name"]: q for q in raw["queries"]}
    alone = alone_costs(entries, statistics) if statistics is not None else {}
    estimate: dict[str, float] = {}
    label: dict[str, str] = {}
    measured: dict[str, float] = {}
    for g in raw.get("sharing", []):
        key = f"group {g['id']} ({len(g['queries'])} queries)"
        estimate[key], measured[key], label[key] = g["estimated_cost"]["shared"], groups.get(g["id"], 0.0), key
    grouped = {q for g in raw.get("sharing", []) for q in g["queries"]}
    for name in entries:
        if name not in grouped:
            key = f"query {name} (alone)"
            estimate[key], measured[key] = alone.get(name, 0.0), queries.get(name, 0.0)
    total_est = sum(estimate.values())
    total_seconds = sum(measured.values())
    for key in estimate:
        est = (f"estimated {estimate[key]:.6g} steps/window ({estimate[key] / total_est:.1%})"
               if statistics is not None and total_est > 0 else "no estimate")
        share = f" ({measured[key] / total_seconds:.1%})" if total_seconds > 0 else ""
        lines.append(f"  {key}: {est}, measured {measured[key]:.3f}s{share}")
    lines.append(f"  engine seconds measured: {total_seconds:.3f}s")
    if statistics is not None and total_est > 0 and total_seconds > 0:
        non_shared = sum(alone.values())
        rate = total_seconds / total_est
        lines.append(f"  without sharing (estimated {non_shared:.6g} steps/window): about {rate * non_shared:.3f}s "
                     f"at the measured {rate:.3g}s per estimated step, {non_shared / total_est:.2f}x the measured time")
    return "\n".join(lines)


def _label(queries: list[str], limit: int = 3) -> str:
    shown = ", ".join(queries[:limit])
    return shown + (f" +{len(queries) - limit}" if len(queries) > limit else "")


def _graph_panel(gid: str, graph: Any, y0: int) -> tuple[str, int, int]:
    """The group's graph of candidates (``Kind.graph``) as SVG from ``y0``: vertices on a circle,
    labelled with their pattern, queries and benefit, the chosen ones filled; conflicts as lines.
    Returns the SVG, its height and its width."""
    import math

    vertices, edges = graph["vertices"], graph["edges"]
    n = len(vertices)
    radius = max(110.0, 110.0 * n / (2 * math.pi))
    cx, cy = 240 + radius, y0 + 50 + radius
    pos = [(cx + radius * math.cos(2 * math.pi * i / max(n, 1) - math.pi / 2),
            cy + radius * math.sin(2 * math.pi * i / max(n, 1) - math.pi / 2)) for i in range(n)]
    chosen = sum(1 for v in vertices if v["chosen"])
    shown = "" if n == graph["vertices_total"] else f", {n} drawn"
    parts = [f'<text x="10" y="{y0 + 20}" font-weight="bold">{html.escape(gid)}: the graph of candidates '
             f'({graph["vertices_total"]} vertices, {graph["edges_total"]} conflicts{shown}; '
             f'{chosen} chosen, filled)</text>']
    for a, b in edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#999"/>')
    for (x, y), v in zip(pos, vertices, strict=True):
        fill, stroke, sw = ("#ffd27f", "#b35900", 2.5) if v["chosen"] else ("#f4f4f4", "#777", 1)
        label = f'({", ".join(v["pattern"])}){{{_label(v["queries"])}}}'
        tx, anchor = (x + 12, "start") if x >= cx - 1 else (x - 12, "end")  # labels outside the circle
        parts.append(f'<g class="{"chosen" if v["chosen"] else "candidate"}">'
                     f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="9" ry="9" fill="{fill}" stroke="{stroke}" '
                     f'stroke-width="{sw}"/>'
                     f'<text x="{tx:.1f}" y="{y - 2:.1f}" font-size="11" text-anchor="{anchor}">'
                     f'{html.escape(label)}</text>'
                     f'<text x="{tx:.1f}" y="{y + 11:.1f}" font-size="10" fill="#555" text-anchor="{anchor}">'
                     f'benefit {v["benefit"]:.6g}</text></g>')
    return "\n".join(parts), int(2 * radius + 100), int(2 * radius + 480)


def template_svg(raw: dict[str, Any]) -> str:
    """An SVG of every sharing group's merged template: types as boxes in columns by their
    distance from a start type, transitions as arrows labelled with the queries they serve."""
    from trendlake.engine.shared import kind_of

    panels = []
    y0 = 10
    width = 200
    for g in raw.get("sharing", []):
        kind = kind_of(g["kind"])
        tpl = kind.template(g) if kind is not None else None
        if tpl is None:
            panels.append(f'<text x="10" y="{y0 + 20}" font-weight="bold">{html.escape(g["id"])}: {html.escape(g["kind"])} '
                          f'shared by {html.escape(_label(g["queries"], 6))}</text>')
            y0 += 40
            continue
        shared = set(tpl.get("shared") or [])
        starts = {s["type"] for s in tpl["start"]}
        ends = {s["type"] for s in tpl["end"]}
        types = sorted({t for e in tpl["transitions"] for t in (e["from"], e["to"])} | starts | ends)
        col = {t: 0 for t in starts}
        for _ in types:  # longest distance from a start along non-loop transitions (acyclic)
            for e in tpl["transitions"]:
                if e["from"] != e["to"] and e["from"] in col:
                    col[e["to"]] = max(col.get(e["to"], 0), col[e["from"]] + 1)
        for t in types:
            col.setdefault(t, 0)
        rows: dict[int, list[str]] = {}
        for t in types:
            rows.setdefault(col[t], []).append(t)
        pos = {}
        for c, ts in rows.items():
            for r, t in enumerate(ts):
                pos[t] = (40 + 190 * c, y0 + 50 + 60 * r)
        # a group without types (a plan the engine's checks refuse; drawn empty, never a crash)
        height = 60 + 60 * max((len(ts) for ts in rows.values()), default=0)
        width = max(width, 120 + 190 * (max(rows, default=0) + 1))
        parts = [f'<text x="10" y="{y0 + 20}" font-weight="bold">{html.escape(g["id"])}: '
                 f'{html.escape(", ".join(sorted(shared)))} shared by {html.escape(_label(g["queries"], 6))}</text>']
        for e in tpl["transitions"]:
            (x1, y1), (x2, y2) = pos[e["from"]], pos[e["to"]]
            label = html.escape(_label(e["queries"]))
            if e["from"] == e["to"]:
                parts.append(f'<path d="M{x1 + 20},{y1 - 15} C{x1 + 20},{y1 - 45} {x1 + 70},{y1 - 45} {x1 + 70},{y1 - 15}" '
                             'fill="none" stroke="#555" marker-end="url(#arrow)"/>')
                parts.append(f'<text x="{x1 + 75}" y="{y1 - 35}" font-size="11">{label}</text>')
            else:
                parts.append(f'<line x1="{x1 + 90}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#555" marker-end="url(#arrow)"/>')
                parts.append(f'<text x="{(x1 + 90 + x2) / 2 - 20}" y="{(y1 + y2) / 2 - 6}" font-size="11">{label}</text>')
        for t, (x, y) in pos.items():
            fill = "#ffd27f" if t in shared else "#dde8f7"
            stroke = "#b35900" if t in ends else "#335"
            parts.append(f'<rect x="{x}" y="{y - 15}" width="90" height="30" rx="6" fill="{fill}" stroke="{stroke}"/>')
            parts.append(f'<text x="{x + 45}" y="{y + 5}" text-anchor="middle">{html.escape(t)}</text>')
        panels.append("\n".join(parts))
        y0 += height + 20
        graph = kind.graph(g) if kind is not None else None
        if graph:
            panel, height, wide = _graph_panel(g["id"], graph, y0)
            panels.append(panel)
            y0 += height + 20
            width = max(width, wide)
    if not panels:
        panels.append(f'<text x="10" y="30">plan {html.escape(str(raw.get("plan_id")))}: nothing is shared</text>')
        y0 = 50
    return svg_document(width, y0 + 10, panels)


def svg_document(width: float, height: float, parts: list[str], markers: dict[str, str] | None = None) -> str:
    """An SVG document of ``parts`` (SVG elements), with an arrow head marker ``arrow`` (grey)
    and one per ``markers`` entry (id -> colour) for ``marker-end``: the writer of every
    picture the CLI draws (``explain --svg``, ``trends --svg``)."""
    heads = "".join(
        f'<marker id="{html.escape(mid)}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{html.escape(colour)}"/></marker>'
        for mid, colour in {"arrow": "#555", **(markers or {})}.items()
    )
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'font-family="sans-serif" font-size="13">\n<defs>{heads}</defs>\n')
    return head + "\n".join(parts) + "\n</svg>\n"
