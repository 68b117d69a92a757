"""The pipeline's replay vs an I/O baseline: a thin wrapper around ``benchmarks.replay_bench``.

``benchmarks.replay_bench`` (written with the replay job) must define
``run(ctx) -> dict`` returning a record like the other experiments'
(``figures``, ``points``, ``agreement``...; ``common.Recorder.result`` builds
one). Until it exists, this experiment reports ``not available``.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from benchmarks.experiments.common import NOT_AVAILABLE, Context

TITLE = "Replay (Spark + Delta pipeline) vs an I/O baseline"
PAPER = "DESIGN §6 pipeline; no paper figure"
MODULE = "benchmarks.replay_bench"


def _empty(ctx: Context, status: str, reason: str) -> dict[str, Any]:
    return {
        "experiment": ctx.name,
        "title": TITLE,
        "paper": PAPER,
        "compares": "replay of windowed panes through the engine vs reading the same panes only",
        "paper_reported": [],
        "size": ctx.size,
        "repeat": ctx.repeat,
        "seed": ctx.seed,
        "status": status,
        "reason": reason,
        "strategies": {},
        "strategies_ran": [],
        "not_built": [],
        "figures": [],
        "ratios": {},
        "points": [],
        "agreement": {"checked": 0, "all_agree": True, "disagreements": []},
    }


def run(ctx: Context) -> dict[str, Any]:
    if importlib.util.find_spec(MODULE) is None:
        ctx.log(f"  {MODULE} is not available: nothing to run")
        return _empty(ctx, NOT_AVAILABLE, f"module {MODULE} is not in this build")
    module = importlib.import_module(MODULE)
    if not hasattr(module, "run"):
        return _empty(ctx, NOT_AVAILABLE, f"{MODULE} has no run(ctx) function")
    record = dict(module.run(ctx))
    base = _empty(ctx, "ok", "")
    base.pop("reason")
    base.update(record)
    return base
