"""``trendlake trends``: the trends behind one result row (CET drill-down; the job: ``jobs.trends``)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from trendlake.jobs.cli import EXIT_JOB_FAILED, positive_int, timestamp

SIZE = re.compile(r"^\s*(\d+)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)
DEFAULT_MEMORY = 2**30


def byte_size(text: str) -> int:
    """An option value that is a number of bytes: ``1000000``, ``512K``, ``64M``, ``2G``
    (powers of 1024)."""
    m = SIZE.match(text)
    if not m or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"not a size in bytes (like 1000000, 512K, 64M, 2G): {text!r}")
    unit = (m.group(2) or "b")[0].lower()
    return int(m.group(1)) * {"b": 1, "k": 2**10, "m": 2**20, "g": 2**30}[unit]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "trends",
        help="list the trends behind one result row (complete event trends, under a memory budget)",
        description=(
            "Construct the trends of one (group, window) of query Q over the events of FILE: the "
            "complete ones (no other trend contains them) by default, every trend with --all. "
            "Without --window-start, list the windows with their COUNT(*) to pick from. A window "
            "whose trends would not fit --memory is refused before anything is built."
        ),
    )
    p.add_argument("workload", type=Path, help="workload file (*.etq)")
    p.add_argument("--query", required=True, metavar="Q", help="the query")
    p.add_argument("--events", required=True, type=Path, metavar="FILE", help="event file: .csv, .jsonl or .parquet")
    p.add_argument("--stream", metavar="SCHEMA", help="stream schema (bundled name or a JSON path) typing the events")
    p.add_argument("--group", action="append", default=[], metavar="K=V", help="a GROUP-BY value of the row (repeatable)")
    p.add_argument("--window-start", type=timestamp, action="append", metavar="T",
                   help="the window's start (ISO-8601 or epoch seconds); repeat it for several windows of the "
                        "group: they are constructed by start, overlapping ones sharing their CET graph and "
                        "graphlets, each window's trends exactly its own")
    p.add_argument("--all", action="store_true", help="every trend, not only the complete ones")
    p.add_argument("--limit", type=positive_int, metavar="N", help="at most N trends, in time order, without holding the rest")
    p.add_argument("--memory", type=byte_size, default=DEFAULT_MEMORY, metavar="BYTES",
                   help="the memory budget of graph, state and kept trends (default 1G)")
    p.add_argument("--algorithm", choices=("auto", "m-cet", "t-cet", "h-cet"), default="auto",
                   help="auto (default): H-CET on the optimizer's partitioning, else M-CET")
    p.add_argument("--optimizer", choices=("branch-and-bound", "greedy", "exhaustive"), default="branch-and-bound",
                   help="H-CET's partitioning optimizer (default branch-and-bound)")
    p.add_argument("--id", dest="id_column", metavar="COLUMN", help="name events by this column (default: their row number)")
    p.add_argument("--format", choices=("json", "table"), default="json", help="output format (default: json lines)")
    p.add_argument("--explain", action="store_true",
                   help="print the chosen plan (cuts, graphlets, estimated CPU and memory) and why the other "
                        "plans lost, instead of the trends (json: one document; table: words)")
    p.add_argument("--svg", type=Path, metavar="F", help="write the window's CET graph (graphlets, cut edges) to F")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.engine.timeline import format_ts
    from trendlake.jobs.errors import BadInputError
    from trendlake.jobs.evaluate import json_value
    from trendlake.jobs.trends import (
        Request,
        explain_document,
        explain_lines,
        graph_svg,
        list_windows,
        plan_file,
    )

    starts = args.window_start or []
    req = Request(args.workload, args.query, args.events, args.stream, tuple(args.group), starts[0] if starts else None,
                  not args.all, args.limit, args.memory, args.algorithm, args.optimizer, args.id_column)
    if len(starts) > 1:
        if args.svg is not None:
            raise BadInputError("--svg draws one window: give one --window-start")
        return _several(args, req, starts)
    if args.window_start is None and (args.explain or args.svg is not None):
        raise BadInputError(f"{'--explain' if args.explain else '--svg'} needs one window: give --window-start "
                            "(and --group); without it the windows are listed")
    if args.svg is not None and not args.svg.parent.is_dir():
        raise BadInputError(f"--svg {args.svg}: folder {args.svg.parent} does not exist")
    if args.window_start is None:
        windows = list_windows(req)
        for w in windows:
            row = {"query": w.query, **{k: json_value(v) for k, v in w.group.items()},
                   "window_start": format_ts(w.start), "window_end": format_ts(w.end), "COUNT(*)": w.count}
            if args.format == "json":
                print(json.dumps(row))
            else:
                print("  ".join(f"{k}={v}" for k, v in row.items()))
        print(f"{len(windows)} windows with trends", file=sys.stderr)
        return 0
    planning = plan_file(req)
    if args.svg is not None:
        args.svg.write_text(graph_svg(planning, args.id_column))
        print(f"wrote {args.svg}", file=sys.stderr)
    if args.explain:
        doc = explain_document(planning, args.id_column)
        if args.format == "json":
            print(json.dumps(doc, default=str))
        else:
            print("\n".join(explain_lines(doc)))
        return 0
    d = planning.drill()
    n = _print_trends(args, d)
    print(f"{_outcome(args, d, n)}, estimated memory {d.plan.memory} bytes", file=sys.stderr)
    return 0


def _outcome(args: argparse.Namespace, d: Any, n: int) -> str:
    """What a window's drill listed, and how: ``n of COUNT trends (COUNT(*) ...); algorithm``."""
    kind = "trends" if args.all else "complete trends"
    cuts = f", {len(d.plan.cuts)} cut(s)" if d.plan.algorithm == "h-cet" else ""
    return f"{n} of {d.count} {kind} (COUNT(*) {d.count_all}); {d.plan.algorithm}{cuts}"


def _print_trends(args: argparse.Namespace, d: Any) -> int:
    from trendlake.jobs.evaluate import json_value
    from trendlake.jobs.trends import trend_row

    n = 0
    for n, trend in enumerate(d.trends(), start=1):
        row = trend_row(d, n, trend, args.id_column)
        if args.format == "json":
            print(json.dumps({k: json_value(v) if k != "events" else v for k, v in row.items()}, default=str))
        else:
            print(f"{n:>6}  " + "  ".join(f"{e['id']}:{e['type']}@{e['ts']}" for e in row["events"]))
    return n


def _several(args: argparse.Namespace, req: object, starts: list[str]) -> int:
    """Several windows of one group, by start: overlapping ones share graph and graphlets.
    A refused window is reported and the others still run (exit 1)."""
    from trendlake.engine.timeline import format_ts
    from trendlake.engine.trends import TrendsRefused
    from trendlake.jobs.trends import shared_document, shared_file, shared_lines

    shared = shared_file(req, starts)  # type: ignore[arg-type]
    refused = 0
    for _, p in shared.plans():
        if isinstance(p, TrendsRefused):
            print(f"refused: {p}", file=sys.stderr)
            refused += 1
            continue
        where = f"window [{format_ts(p.window[0])}, {format_ts(p.window[1])})"
        if args.explain:
            doc = shared_document(p, args.id_column)
            print(json.dumps(doc, default=str) if args.format == "json" else "\n".join(shared_lines(doc)))
            continue
        try:
            d = p.drill()
        except TrendsRefused as err:
            print(f"refused: {err}", file=sys.stderr)
            refused += 1
            continue
        before = shared.stats.graphlet_counts()
        n = _print_trends(args, d)
        how = "planned alone"
        if d.sharing is not None:
            got = {k: v - before[k] for k, v in shared.stats.graphlet_counts().items()}
            how = (f"shared graph; graphlets {got['reused']} reused, {got['partly']} partly reused, "
                   f"{got['built']} built")
        print(f"{where}: {_outcome(args, d, n)}, {how}", file=sys.stderr)
    s = shared.stats
    if args.explain:
        return EXIT_JOB_FAILED if refused else 0
    print(f"{s.windows} windows: {s.shared_windows} on {s.span_graphs} shared graph(s), {s.alone} alone; "
          f"graphlets {s.graphlets_reused} reused, {s.graphlets_partly} partly reused, {s.graphlets_built} built",
          file=sys.stderr)
    return EXIT_JOB_FAILED if refused else 0
