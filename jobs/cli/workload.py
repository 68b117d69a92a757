"""``trendlake workload``: write a seeded workload shaped after a paper's experiments (the
generator: ``datagen.workloads``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from trendlake.datagen.workloads.common import show
from trendlake.datagen.workloads.core import generate_workload
from trendlake.datagen.workloads.registry import KINDS
from trendlake.jobs.cli import bad_input


def add_parser(sub: argparse._SubParsersAction) -> None:
    kinds_help = "; ".join(f"{name}: {k.paper}" for name, k in KINDS.items())
    p = sub.add_parser(
        "workload",
        help="generate a seeded workload shaped after a paper's experiments",
        description=(
            "Write a workload (*.etq) of N queries of KIND for a stream schema. The same kind, "
            "count, seed, stream and parameters give the same text. Kinds: " + kinds_help + "."
        ),
    )
    p.add_argument("kind", choices=sorted(KINDS), metavar="KIND", help="workload kind: " + ", ".join(KINDS))
    p.add_argument("--queries", type=int, default=10, metavar="N", help="number of queries (default: 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--stream", default="rides", help="stream schema: bundled name or JSON path (default: rides)")
    p.add_argument("--out", type=Path, metavar="FILE.etq", help="write here instead of stdout")
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE",
        help="override a kind parameter, repeatable (see --list-params)",
    )
    p.add_argument("--list-params", action="store_true", help="print the kind's parameters and defaults, then exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.errors import BadInputError
    from trendlake.schemas import load_stream_schema

    from trendlake import optimizer

    if args.list_params:
        for name, default in KINDS[args.kind].defaults.items():
            print(f"{name}={show(default)}")
        return 0
    params: dict[str, Any] = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep:
            raise BadInputError(f"--param {item!r}: expected NAME=VALUE")
        params[name.strip()] = value.strip()
    with bad_input(ValueError):  # an unknown parameter or a value the kind refuses
        schema = load_stream_schema(args.stream)
        text = generate_workload(args.kind, args.queries, args.seed, schema, **params)
        optimizer.compile_workload(text, schema, path=str(args.out or "<generated>"))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.queries} {args.kind} queries for stream {schema['stream']} to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
