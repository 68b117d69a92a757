"""``trendlake bench NAME``: the side-by-side benchmarks, from a checkout of trendlake.

The benchmarks (``benchmarks/``) are not installed with the package: they
need the repository's recorded results and are run from a checkout. This
command finds the checkout (the current folder or one of its parents holding
``benchmarks/suite.py``) and runs ``python -m benchmarks`` there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trendlake.jobs.cli import positive_int

__all__ = ["add_parser", "find_checkout"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run a benchmark experiment side by side (from a checkout of trendlake)",
        description="Run experiment NAME (hamlet, sharon, gloria, weaveshare, greta_vs_twostep, replay; "
        "'all' or 'list'): every compared strategy in this process on the same events, repeated; "
        "writes OUT/NAME.json and OUT/NAME.png. Runs from a checkout of trendlake (benchmarks/ is "
        "not installed).",
    )
    p.add_argument("name", metavar="NAME", help="experiment name, 'all' or 'list'")
    p.add_argument("--size", choices=("smoke", "small", "full"), default="smoke",
                   help="smoke (seconds), small (minutes), full (up to ~15 min each); default: smoke")
    p.add_argument("--out", type=Path, default=Path("out/bench"), help="output folder (default: out/bench)")
    p.add_argument("--repeat", type=positive_int, metavar="N", help="repetitions per measurement")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated events and workloads")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG figure")
    p.set_defaults(func=run)


def find_checkout(start: Path | None = None) -> Path | None:
    """The trendlake checkout holding ``start`` (default: the current folder), or None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "benchmarks" / "suite.py").is_file() and (folder / "engine").is_dir():
            return folder
    return None


def run(args: argparse.Namespace) -> int:
    root = find_checkout()
    if root is None:
        from trendlake.jobs.errors import BadInputError

        raise BadInputError("trendlake bench runs from a checkout of trendlake (benchmarks/ is not "
                            "installed); cd into the checkout")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from benchmarks.suite import run_bench

    return int(run_bench(args))  # a missing --repeat is the suite's default for the size
