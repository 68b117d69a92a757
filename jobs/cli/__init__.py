"""The ``trendlake`` command line: every sub-command, and the one map from errors to exit codes.

Convention (docs/cli.md, "Where a sub-command lives"): sub-command ``NAME`` is the module
``jobs/cli/NAME.py`` holding ``add_parser(subparsers)`` (its options; ``set_defaults(func=run)``)
and ``run(args) -> int`` (reads the options, calls a job, prints what the job returns). The
work itself lives in the job modules (``jobs/ingest/``, ``jobs/evaluate.py``, ...), which
neither print errors nor choose exit codes: they raise. Modules are imported lazily so
``trendlake --help`` stays fast and a sub-command never pays for another's imports (Spark,
Airflow).

An error that ends a command becomes one ``trendlake: error:`` line and an exit code here and
nowhere else (``error_message``, ``EXIT_*``): each package has one error root
(``OptimizerError``, ``EngineError``, ``JobError``) and the input errors under them
(``WorkloadError``, ``EngineError``, ``BadInputError``) are exit 2; bad input never shows a
traceback. A sub-command's ``run`` turns a library's plain ``ValueError`` into a
``BadInputError`` with ``bad_input()``; it returns ``EXIT_JOB_FAILED`` itself only when the job
ran and reports a partial failure (``ingest`` with a refused file). A bad option (unknown,
missing, or a value its type or choices refuse) is one line and exit 2, before a sub-command
runs anything (``OptionParser``; the option types below check values at parse time).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

# Arrow's allocator (mimalloc) otherwise keeps freed pages for a while: ``eval`` frees the
# file's parse buffers and its temporary index arrays as it goes, and the peak memory of a
# large file is what a laptop feels. Set before pyarrow loads (it reads it once).
os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")

# the sub-commands, in --help order: ``trendlake NAME`` is the module ``trendlake.jobs.cli.NAME``
COMMANDS: tuple[str, ...] = (
    "eval", "trends", "plan", "explain", "bench", "optimize", "replay", "drill", "demo", "workload",
    "ingest", "stats", "sql", "generate", "adapt",
)


EXIT_OK = 0
EXIT_JOB_FAILED = 1  # a job refused to run or to commit, or its checks failed
EXIT_BAD_INPUT = 2  # the workload, plan, event file, option or path is wrong
EXIT_INTERNAL = 3  # a bug in trendlake: please report it with TRENDLAKE_DEBUG=1's traceback
EXIT_INTERRUPTED = 130


class OptionParser(argparse.ArgumentParser):
    """argparse with a one-line error (``trendlake eval: error: argument --strategy: invalid
    choice: ... (see trendlake eval --help)``) and exit status 2; sub-command parsers inherit it."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """An option value that is a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """An option value that is a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {text}")
    return value


def timestamp(text: str) -> str:
    """An option value that is a time stamp (ISO-8601 or epoch seconds, ``engine`` rules); the
    text itself is kept for the job, which parses it again."""
    from trendlake.engine.timeline import parse_ts

    try:
        parse_ts(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"not a time stamp (ISO-8601 or epoch seconds): {text!r}") from None
    return text


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = OptionParser(
        prog="trendlake",
        description="Shared event trend aggregation over historical event streams.",
    )
    parser.add_argument(
        "--master",
        help="Spark master URL for the jobs (default: $TRENDLAKE_SPARK_MASTER or local[*])",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and only != name:
            # register a cheap placeholder so --help lists every command
            sub.add_parser(name, help=f"(see trendlake {name} --help)", add_help=False)
            continue
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return parser


def add_lake_options(p: argparse.ArgumentParser, *, stream: str | None = "required") -> None:
    """``--lake`` (required) and ``--stream``: ``stream="required"``, ``"optional"``, a default
    stream name, or None for no ``--stream`` at all."""
    p.add_argument("--lake", required=True, type=Path, help="lake root folder")
    if stream is None:
        return
    what = "stream: a name (bundled, or recorded in the lake by ingest) or a schema JSON path"
    if stream == "required":
        p.add_argument("--stream", required=True, help=what)
    elif stream == "optional":
        p.add_argument("--stream", help=what)
    else:
        p.add_argument("--stream", default=stream, help=f"{what} (default: {stream})")


def add_planning_options(p: argparse.ArgumentParser, *, events: bool) -> None:
    """``--planner``, ``--stats``, ``--assume-uniform``, ``--stats-out`` (and ``--events``, the
    statistics' file, with ``events``): what ``eval`` and ``plan`` plan from."""
    from trendlake.optimizer.planners import PLANNERS

    p.add_argument("--planner", default=None, choices=sorted(PLANNERS),
                   help=f"planner ({', '.join(sorted(PLANNERS))}; default: auto, the plan of least estimated "
                        "cost, when statistics are given (--stats, --assume-uniform"
                        + (", --events" if events else "") + "), else none)")
    if events:
        p.add_argument("--events", type=Path, metavar="FILE",
                       help="compute the statistics the planner needs from this event file")
    p.add_argument("--stats", type=Path, metavar="STATS.json",
                   help="statistics for the planner: a statistics JSON, or a plan whose statistics to reuse"
                   + ("" if events else " (default: computed from the evaluated file)"))
    p.add_argument("--assume-uniform", action="store_true",
                   help="plan without statistics, assuming every event type has the same rate (recorded in the plan)")
    p.add_argument("--stats-out", type=Path, metavar="STATS.json",
                   help="also write the statistics the plan was made from to this file")


@contextlib.contextmanager
def bad_input(*kinds: type[BaseException]) -> Iterator[None]:
    """Inside: an error of ``kinds`` (a library's ``ValueError``, say) is bad input, exit 2; the
    errors ``error_message`` knows (the packages' roots) keep their own code."""
    from trendlake.engine.errors import EngineError
    from trendlake.jobs.errors import JobError
    from trendlake.optimizer.errors import OptimizerError

    try:
        yield
    except kinds as err:
        if isinstance(err, (EngineError, JobError, OptimizerError)):
            raise
        from trendlake.jobs.errors import BadInputError

        raise BadInputError(str(err).strip() or type(err).__name__) from err


def missing_extra(module: str) -> str | None:
    """The install extra that provides ``module`` (a top-level import name), if it is one."""
    extras = {
        "pyspark": "spark", "deltalake": "spark", "pandas": "spark",
        "great_expectations": "quality", "airflow": "airflow", "matplotlib": "plots",
    }
    return extras.get(module.split(".")[0])


def error_message(err: BaseException) -> tuple[str, int]:
    """The one-line message and exit code of an error that ended a command."""
    from trendlake.engine.errors import EngineError
    from trendlake.jobs.errors import BadInputError, InternalError, JobError
    from trendlake.optimizer.errors import OptimizerError, WorkloadError

    if isinstance(err, WorkloadError):
        return f"invalid workload, nothing done:\n{err}", EXIT_BAD_INPUT
    if isinstance(err, InternalError):
        return f"internal error: {err}", EXIT_INTERNAL
    if isinstance(err, (OptimizerError, EngineError, BadInputError)):
        return str(err), EXIT_BAD_INPUT
    if isinstance(err, JobError):
        return str(err), EXIT_JOB_FAILED
    if isinstance(err, ModuleNotFoundError) and err.name and (extra := missing_extra(err.name)):
        return (f"this command needs the '{extra}' extra ({err.name} is not installed): "
                f"pip install 'trendlake[{extra}]'"), EXIT_BAD_INPUT
    if isinstance(err, (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)) or (
            isinstance(err, OSError) and err.filename):
        where = f": {err.filename}" if getattr(err, "filename", None) else ""
        return f"{err.strerror or err}{where}", EXIT_BAD_INPUT
    if isinstance(err, UnicodeDecodeError):
        return f"not UTF-8 text ({err.reason} at byte {err.start})", EXIT_BAD_INPUT
    if isinstance(err, RecursionError):
        return "input nested too deeply to process", EXIT_BAD_INPUT
    return f"internal error: {type(err).__name__}: {err} (set TRENDLAKE_DEBUG=1 for the traceback)", EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else None)
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit as stop:  # --help (0), or a bad option (OptionParser.error printed it: 2)
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT
    if extra:  # named with the sub-command they were given to, unlike argparse's own message
        prog = f"{parser.prog} {args.command}" if getattr(args, "command", None) else parser.prog
        print(f"{prog}: error: unrecognized arguments: {' '.join(extra)} (see {prog} --help)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if getattr(args, "master", None):
        os.environ["TRENDLAKE_SPARK_MASTER"] = args.master
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (``trendlake generate --list | head``): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - an error that ended the command becomes its message
        if os.environ.get("TRENDLAKE_DEBUG"):
            raise
        message, code = error_message(err)
        print(f"trendlake: error: {message}", file=sys.stderr)
        return code


def entry() -> None:
    """The ``trendlake`` executable: ``main()``, then exit with its status (``jobs.process``)."""
    from trendlake.jobs.process import exit_now

    exit_now(main())


if __name__ == "__main__":
    entry()
