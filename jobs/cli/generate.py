"""``trendlake generate``: write a seeded synthetic event stream to a file (the generators:
``datagen.streams``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from trendlake.datagen.streams.registry import STREAMS
from trendlake.datagen.streams.writer import FORMATS, write_events
from trendlake.jobs.cli import bad_input
from trendlake.jobs.errors import BadInputError


def _mix_arg(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"--mix wants TYPE=WEIGHT[,TYPE=WEIGHT...], got {part!r}")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--mix weight of {name!r} is not a number: {value!r}") from None
    return out


def _param_arg(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"--param wants NAME=VALUE, got {text!r}")
    v: Any = value
    for cast in (int, float):
        try:
            v = cast(value)
            break
        except ValueError:
            continue
    return name.strip(), v


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="write a seeded synthetic event stream (rides, stocks, linear_road, ...)",
        description=(
            "Generate N events of a bundled stream with a seeded generator shaped after the papers' data "
            "sets (docs/generators.md) and write them to a Parquet, CSV or JSON-lines file. Same seed and "
            "parameters, same bytes."
        ),
    )
    p.add_argument("stream", nargs="?", help=f"stream: {', '.join(STREAMS)}")
    p.add_argument("--events", "-n", type=int, help="number of events")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", "-o", type=Path, help="output file (.parquet, .csv, .jsonl)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: from the file suffix)")
    p.add_argument("--rate", type=float, metavar="R", help="events per second (default: the stream's)")
    p.add_argument("--burst", type=float, metavar="B", help="mean burst length: events per run of one type (default: the stream's)")
    p.add_argument("--start", default="2026-01-01T00:00:00Z", metavar="ISO", help="time of the first event (default 2026-01-01T00:00:00Z)")
    p.add_argument("--mix", type=_mix_arg, metavar="T=W,...", help="override type weights, e.g. Travel=8,Cancel=0.5")
    p.add_argument("--param", type=_param_arg, action="append", default=[], metavar="NAME=VALUE",
                   help="stream model parameter, e.g. drivers=500 (repeatable; see --list)")
    p.add_argument("--chunk-size", type=int, default=1_000_000, help="rows per written chunk / row group")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar (default: on for 1M events or more)")
    p.add_argument("--list", action="store_true", help="list the streams with their defaults and parameters")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list:
        for name, spec in STREAMS.items():
            params = ", ".join(f"{k}={v}" for k, v in spec.params.items()) or "-"
            print(f"{name:12s} {spec.description}")
            print(f"{'':12s}   source: {spec.source}")
            print(f"{'':12s}   rate {spec.rate:g}/s, burst {spec.burst:g}, params: {params}")
        return 0
    if not args.stream or args.events is None or args.out is None:
        raise BadInputError("STREAM, --events and --out are required (or --list)")
    progress = args.progress if args.progress is not None else args.events >= 1_000_000
    stats: dict[str, Any] = {}
    with bad_input(ValueError):  # an unknown stream or parameter, a value the generator refuses
        path = write_events(
            args.stream, args.out, args.events, args.seed, format=args.format, progress=progress, stats=stats,
            start=args.start, rate_per_second=args.rate, burst=args.burst, mix=args.mix,
            chunk_size=args.chunk_size, **dict(args.param),
        )
    top = sorted(stats["type_mix"].items(), key=lambda kv: -kv[1])[:6]
    mix = ", ".join(f"{t} {f:.1%}" for t, f in top)
    rate = stats["rate_per_second"]
    burst = stats["mean_burst"]
    print(
        f"wrote {stats['events']} {args.stream} events to {path} in {stats['seconds']:.1f}s "
        f"({stats['events_per_second'] or 0:,.0f} events/s)\n"
        f"  {stats['start']} .. {stats['end']}, rate {rate or 0:.2f}/s, mean burst {burst or 0:.2f}, mix: {mix}",
        file=sys.stderr,
    )
    return 0
