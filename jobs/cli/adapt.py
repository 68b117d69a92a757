"""``trendlake adapt``: convert a downloaded public data file to an event file ``ingest`` accepts
(the adapters: ``datagen.adapters``)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow as pa
from trendlake.datagen.adapters.base import AdaptError
from trendlake.datagen.adapters.core import adapt
from trendlake.datagen.adapters.registry import ADAPTERS
from trendlake.jobs.cli import bad_input, positive_int
from trendlake.jobs.errors import BadInputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    kinds = "; ".join(f"{a.kind}: {a.description}" for a in ADAPTERS.values())
    p = sub.add_parser(
        "adapt",
        help="convert a downloaded public data file (NYC TLC, DEBS 2014, OHLCV, Dublin bus) to an event file",
        description=(
            "Convert one real data file into an event file of a bundled stream that `trendlake ingest` "
            f"accepts, in chunks. Kinds: {kinds}. Rows that cannot be converted are skipped and "
            "reported with their reasons and line numbers (docs/generators.md)."
        ),
    )
    p.add_argument("kind", choices=sorted(ADAPTERS), metavar="KIND", help=f"one of {', '.join(ADAPTERS)}")
    p.add_argument("src", type=Path, metavar="SRC", help="the downloaded source file")
    p.add_argument("--out", "-o", type=Path, required=True, help="output event file (.parquet, .csv, .jsonl)")
    p.add_argument("--format", choices=("parquet", "csv", "jsonl"), help="output format (default: from the suffix)")
    p.add_argument("--mode", choices=("rides", "zones"), help="tlc: rides (Request/Pickup/Dropoff) or zones (taxi_zones)")
    p.add_argument("--timezone", help="time zone of naive source times (tlc default America/New_York, ohlcv UTC)")
    p.add_argument("--zone-lookup", type=Path, help="tlc: TLC's taxi_zone_lookup.csv (rides district = pickup borough)")
    p.add_argument("--ticker", help="ohlcv: the ticker (default: a Ticker/Symbol/Name column, else the file name)")
    p.add_argument("--sector", help="ohlcv: the sector of the company (default unknown)")
    p.add_argument("--chunk-rows", type=positive_int, default=200_000, help="source rows per chunk (about)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    options = {"mode": args.mode, "timezone": args.timezone, "zone_lookup": args.zone_lookup,
               "ticker": args.ticker, "sector": args.sector}
    allowed = ADAPTERS[args.kind].options
    given = {k: v for k, v in options.items() if v is not None}
    bad = [k for k in given if k not in allowed]
    if bad:
        raise BadInputError(f"{args.kind} takes no --{bad[0].replace('_', '-')}")
    with bad_input(AdaptError, OSError, pa.ArrowInvalid):  # a source file that is not what its kind reads
        report = adapt(args.kind, args.src, args.out, format=args.format, chunk_rows=args.chunk_rows, **given)
    print(report.summary())
    return 0
