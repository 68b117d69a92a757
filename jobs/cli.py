"""The ``trendlake`` command line: one sub-command per module listed in COMMANDS.

Each module in COMMANDS defines ``add_parser(subparsers)`` which registers its
sub-command and sets ``func`` (taking the parsed ``argparse.Namespace`` and
returning an exit code). Modules are imported lazily so ``trendlake --help``
stays fast and a sub-command never pays for another's imports (Spark, Airflow).
"""

from __future__ import annotations

import argparse
import importlib
import sys

# module path -> sub-commands it registers (for lazy import)
COMMANDS: dict[str, tuple[str, ...]] = {
    "trendlake.jobs.eval_cmd": ("eval", "plan"),
    "trendlake.jobs.optimize": ("optimize",),
    "trendlake.jobs.replay": ("replay",),
    "trendlake.jobs.demo": ("demo",),
    "trendlake.datagen.workloads": ("workload",),
    "trendlake.jobs.ingest": ("ingest",),
    "trendlake.jobs.stats": ("stats",),
    "trendlake.jobs.sql": ("sql",),
    "trendlake.datagen.streams": ("generate",),
    "trendlake.datagen.adapters": ("adapt",),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trendlake",
        description="Shared event trend aggregation over historical event streams.",
    )
    parser.add_argument(
        "--master",
        help="Spark master URL for the jobs (default: $TRENDLAKE_SPARK_MASTER or local[*])",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name, names in COMMANDS.items():
        if only is not None and only not in names:
            # register a cheap placeholder so --help lists every command
            for name in names:
                sub.add_parser(name, help=f"(see trendlake {name} --help)", add_help=False)
            continue
        importlib.import_module(module_name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    known = {n for names in COMMANDS.values() for n in names}
    parser = build_parser(first if first in known else None)
    args = parser.parse_args(argv)
    if getattr(args, "master", None):
        import os

        os.environ["TRENDLAKE_SPARK_MASTER"] = args.master
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
