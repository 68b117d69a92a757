"""The benchmark suite: a registry of experiments and ``python -m benchmarks NAME``.

Every experiment runs the strategies it compares side by side in one process
on the same events, repeats each measurement, checks that the strategies that
ran agree on every result row, and writes

* ``<out>/<name>.json`` — every figure's numbers, every measured point, the
  ratios, the agreement checks, which strategies are not built yet, and the
  machine facts (CPU, Python and library versions, git commit);
* ``<out>/<name>.png`` — the figure (matplotlib, one panel per varied factor).

Experiments are modules of ``benchmarks.experiments`` listed in
``EXPERIMENTS`` and imported lazily; ``replay`` wraps
``benchmarks.replay_bench`` and reports ``not available`` without it.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import platform
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# experiment name -> module defining TITLE and run(ctx) -> dict
EXPERIMENTS: dict[str, str] = {
    "greta_vs_twostep": "benchmarks.experiments.greta_vs_twostep",
    "sharon": "benchmarks.experiments.sharon",
    "hamlet": "benchmarks.experiments.hamlet",
    "gloria": "benchmarks.experiments.gloria",
    "weaveshare": "benchmarks.experiments.weaveshare",
    "replay": "benchmarks.experiments.replay",
    "replay_shared": "benchmarks.experiments.replay_shared",
}

DEFAULT_REPEAT = {"smoke": 1, "small": 3, "full": 3}
LIBRARIES = ("trendlake", "numpy", "pandas", "pyarrow", "matplotlib", "lark", "jsonschema", "pyspark", "deltalake")


# ---- machine facts ------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine_facts() -> dict[str, Any]:
    """CPU, OS, Python and library versions, git commit: what a reader needs to compare runs."""
    from importlib import metadata

    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    status = _git("status", "--porcelain")
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "libraries": versions,
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "hostname": platform.node(),
    }


def _peak_rss_mb() -> float | None:
    try:
        import resource

        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    except (ImportError, OSError):
        return None


# ---- running ------------------------------------------------------------------------


def run_experiment(
    name: str,
    *,
    size: str = "smoke",
    out: str | Path = "out/bench",
    repeat: int | None = None,
    seed: int = 0,
    log: Any = None,
    plot: bool = True,
) -> dict[str, Any]:
    """Run one experiment, write ``<out>/<name>.json`` and ``.png``, return the record."""
    from benchmarks.experiments.common import SIZES, Context

    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r} (known: {', '.join(EXPERIMENTS)})")
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r} (use {', '.join(SIZES)})")
    repeat = DEFAULT_REPEAT[size] if repeat is None else repeat
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    module = importlib.import_module(EXPERIMENTS[name])
    ctx = Context(name=name, size=size, repeat=repeat, seed=seed, log=log)
    log(f"[{name}] {module.TITLE} — size {size}, repeat {repeat}")
    started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    started = time.perf_counter()
    # the timed runs collect garbage before each measurement; what existed before the experiment
    # (imports, a caller's Spark session and test state) is not its garbage: frozen, a collection
    # walks only the experiment's own objects (the suite's smoke runs in a test worker: 110 s
    # before, 16-18 s after, benchmarks/results/testing/README.md)
    gc.collect()
    gc.freeze()
    try:
        record = module.run(ctx)
    finally:
        gc.unfreeze()
    record["elapsed_s"] = round(time.perf_counter() - started, 3)
    record["started_at"] = started_at
    record["command"] = f"python -m benchmarks {name} --size {size} --repeat {repeat} --seed {seed} --out {out}"
    record["machine"] = machine_facts()
    record["peak_rss_mb"] = _peak_rss_mb()
    json_path = out / f"{name}.json"
    json_path.write_text(json.dumps(_finite(record), indent=2, default=_json_default, allow_nan=False) + "\n")
    png_path = out / f"{name}.png"
    if plot:
        plot_record(record, png_path)
    log(f"[{name}] {record.get('status')} in {record['elapsed_s']:.1f}s; agreement: "
        f"{_agreement_text(record)}; wrote {json_path}" + (f" and {png_path}" if plot else ""))
    return record


def _json_default(value: Any) -> Any:
    return repr(value)


def _finite(value: Any) -> Any:
    """Strict JSON: infinite or NaN numbers (an overflowed count) become the strings "inf" / "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _agreement_text(record: dict[str, Any]) -> str:
    agreement = record.get("agreement") or {}
    if not agreement.get("checked"):
        return "nothing to compare"
    return ("all strategies agree" if agreement.get("all_agree") else "DISAGREEMENT") + f" ({agreement['checked']} checks)"


# ---- plotting -----------------------------------------------------------------------


def plot_record(record: dict[str, Any], path: Path) -> None:
    """One panel per figure: median time per strategy over the varied factor (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = record.get("figures") or []
    n = max(1, len(figures))
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.2 * rows), squeeze=False)
    statuses = record.get("strategies", {})
    for ax, f in zip(axes.flat, figures, strict=False):
        xs = f["x"]
        positions = list(range(len(xs)))
        drawn = 0
        for name, values in f["series"].items():
            pts = [(p, v) for p, v in zip(positions, values, strict=False) if v is not None]
            if not pts:
                continue
            label = statuses.get(name, {}).get("label", name)
            ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o", label=label)
            drawn += 1
        ax.set_xticks(positions)
        ax.set_xticklabels([str(x) for x in xs], rotation=30 if len(xs) > 6 else 0, fontsize=8)
        ax.set_xlabel(f["x_label"])
        ax.set_ylabel(f.get("y_label", "seconds"))
        ax.set_title(f["title"], fontsize=10)
        if f.get("log_y", True) and drawn:
            ax.set_yscale("log")
        skipped = sorted({f"{p['strategy']} at {p['x']}" for p in record.get("points", [])
                          if p.get("figure") == f["id"] and p.get("status") in ("skipped", "unsupported")})
        if skipped:
            ax.text(0.02, 0.02, textwrap.fill("over budget / unsupported: " + ", ".join(skipped), 60),
                    transform=ax.transAxes, fontsize=7, va="bottom", color="dimgray")
        if drawn:
            ax.legend(fontsize=7, loc="best")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(figures):]:
        ax.axis("off")
    if not figures:
        ax = axes.flat[0]
        ax.text(0.5, 0.5, f"{record.get('experiment')}: {record.get('status')}\n{record.get('reason', '')}",
                ha="center", va="center", wrap=True)
    machine = record.get("machine", {})
    fig.suptitle(
        f"{record.get('title', record.get('experiment'))} — size {record.get('size')}, repeat {record.get('repeat')}, "
        f"{machine.get('cpu_count')} CPUs, commit {str(machine.get('git_commit') or '?')[:10]}",
        fontsize=10,
    )
    not_built = [f"{statuses[n].get('label', n)} ({statuses[n].get('planner') or statuses[n].get('engine_strategy')})"
                 for n in record.get("not_built", []) if n in statuses]
    footer = "not built yet (listed in the JSON, no measurements): " + "; ".join(not_built) if not_built else ""
    if footer:
        fig.text(0.01, 0.005, textwrap.fill(footer, 200), fontsize=7, color="dimgray", va="bottom")
    fig.tight_layout(rect=(0, 0.04 if footer else 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- CLI ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=(
            "Run experiment NAME (or 'all'; 'list' prints them): every compared strategy runs in "
            "this process on the same events, repeated; results must agree. Writes OUT/NAME.json "
            "(figures, ratios, machine facts) and OUT/NAME.png. Experiments: " + ", ".join(EXPERIMENTS) + "."
        ),
    )
    p.add_argument("name", metavar="NAME", help="experiment name, 'all' or 'list'")
    p.add_argument("--size", choices=("smoke", "small", "full"), default="smoke",
                   help="smoke (seconds, CI), small (minutes), full (up to ~15 min each); default: smoke")
    p.add_argument("--out", type=Path, default=Path("out/bench"), help="output folder (default: out/bench)")
    p.add_argument("--repeat", type=int, default=None, metavar="N",
                   help="repetitions per measurement (default: 1 for smoke, 3 otherwise)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated events and workloads (default: 0)")
    p.add_argument("--no-plot", action="store_true", help="write the JSON only")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks NAME ...`` (run from the repository checkout)."""
    return run_bench(build_parser().parse_args(argv))


def run_bench(args: argparse.Namespace) -> int:
    if args.name == "list":
        for name, module in EXPERIMENTS.items():
            print(f"{name:18} {module}")
        return 0
    names = list(EXPERIMENTS) if args.name == "all" else [args.name]
    if any(n not in EXPERIMENTS for n in names):
        print(f"trendlake: error: unknown experiment {args.name!r} (known: {', '.join(EXPERIMENTS)}, all, list)", file=sys.stderr)
        return 2
    code = 0
    for name in names:
        try:
            record = run_experiment(name, size=args.size, out=args.out, repeat=args.repeat, seed=args.seed,
                                    plot=not args.no_plot)
        except ValueError as err:
            print(f"trendlake: error: {err}", file=sys.stderr)
            return 2
        print(summary_line(record))
        if not (record.get("agreement") or {}).get("all_agree", True):
            code = 1
    return code


def summary_line(record: dict[str, Any]) -> str:
    """One line per experiment: status, agreement, headline ratios, strategies not built."""
    parts = [f"{record.get('experiment')}: {record.get('status')}", _agreement_text(record)]
    for key, r in (record.get("ratios") or {}).items():
        parts.append(f"{key} {r['min']:.3g}–{r['max']:.3g}x")
    if record.get("not_built"):
        parts.append("not built yet: " + ", ".join(record["not_built"]))
    return "; ".join(parts)
