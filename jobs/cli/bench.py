"""``trendlake bench NAME``: the side-by-side benchmarks, from a checkout of trendlake.

The benchmarks (``benchmarks/``) are not installed with the package: they
need the repository's recorded results and are run from a checkout. This
command finds the checkout (the current folder or one of its parents holding
``benchmarks/suite.py``, else the checkout trendlake itself is installed from
in development mode) and runs the harness there, exactly as ``python -m
benchmarks NAME ...`` does: the common options and the experiment's own
(``trendlake bench NAME --help`` lists them) follow NAME.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_parser", "find_checkout"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run a benchmark experiment side by side (from a checkout of trendlake)",
        description="Run experiment NAME ('all' or 'list'; 'trendlake bench list' names them): everything "
        "compared runs in this process on the same data, repeated; writes OUT/NAME.json and OUT/NAME.png. "
        "Options follow NAME: --size smoke|small|full, --out DIR, --repeat N, --seed S, --no-plot, and the "
        "experiment's own ('trendlake bench NAME --help'). Runs from a checkout of trendlake (benchmarks/ "
        "is not installed).",
    )
    p.add_argument("name", metavar="NAME", help="experiment name, 'all' or 'list'")
    p.add_argument("options", nargs=argparse.REMAINDER, metavar="...",
                   help="the harness's and the experiment's options")
    p.set_defaults(func=run)


def find_checkout(start: Path | None = None) -> Path | None:
    """The trendlake checkout holding ``start`` (default: the current folder), else the one this
    module lives in (an install in development mode), or None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents, Path(__file__).resolve().parents[2]):
        if (folder / "benchmarks" / "suite.py").is_file() and (folder / "engine").is_dir():
            return folder
    return None


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.cli import EXIT_BAD_INPUT, OptionParser
    from trendlake.jobs.errors import BadInputError

    root = find_checkout()
    if root is None:
        raise BadInputError("trendlake bench runs from a checkout of trendlake (benchmarks/ is not installed); "
                            "cd into the checkout")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from benchmarks.suite import parse, run_bench

    try:
        parsed = parse([args.name, *args.options], prog="trendlake bench", cls=OptionParser)
    except SystemExit as stop:  # --help (0), or a bad option (OptionParser printed it: 2)
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT
    try:
        return int(run_bench(parsed))
    except ValueError as err:  # an unknown experiment, a bad option value
        raise BadInputError(str(err)) from None
