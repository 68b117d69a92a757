"""``trendlake explain PLAN.json``: a plan in words, its measured engine seconds beside the
estimates, and its merged templates as SVG (the job: ``jobs.explain``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain",
        help="describe a plan: strategies, sharing groups, costs, merged templates",
        description="Describe what the engine does with PLAN.json (written by `trendlake plan` or "
        "`trendlake optimize`): per query its strategy, per sharing group its queries, shared "
        "sub-pattern, snapshots and estimated costs; --svg draws each group's merged template "
        "(and Sharon's graph of candidates, the chosen ones filled).",
    )
    p.add_argument("plan", type=Path, help="plan JSON file")
    p.add_argument("--svg", type=Path, metavar="FILE", help="write the merged templates as an SVG picture")
    p.add_argument("--replay-report", type=Path, metavar="REPORT.json",
                   help="compare the plan's estimates with the engine seconds a replay measured "
                        "(written by `trendlake replay --report-out`)")
    p.set_defaults(func=run)


def read_replay_report(path: Path) -> dict:
    """A replay report (``trendlake replay --report-out``), else bad input naming the file."""
    from trendlake.jobs.errors import BadInputError

    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(f"--replay-report: no file {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BadInputError(f"--replay-report {path}: not a JSON file ({err})") from None
    if not isinstance(report, dict) or not isinstance(report.get("engine_seconds"), dict):
        raise BadInputError(f"--replay-report {path}: not a replay report "
                            "(no engine_seconds; written by `trendlake replay --report-out`)")
    return report


def run(args: argparse.Namespace) -> int:
    from trendlake.jobs.errors import BadInputError
    from trendlake.jobs.explain import explain_text, measured_text, template_svg

    from trendlake import engine

    loaded = engine.load_plan(args.plan)
    print(explain_text(loaded))
    if args.replay_report is not None:
        print(measured_text(loaded.raw, read_replay_report(args.replay_report)))
    if args.svg is not None:
        if not args.svg.parent.is_dir():
            raise BadInputError(f"--svg {args.svg}: folder {args.svg.parent} does not exist")
        args.svg.write_text(template_svg(loaded.raw))
        print(f"wrote {args.svg}", file=sys.stderr)
    return 0
