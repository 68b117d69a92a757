"""The benchmark harness: a registry of experiments and ``python -m benchmarks NAME``.

Every experiment runs what it compares side by side in one process on the
same data, repeats each measurement, checks that the compared ways agree on
their results, and writes

* ``<out>/<record>.json`` — every figure's numbers, every measured point, the
  ratios, the agreement checks and the machine facts (CPU, Python and library
  versions, git commit); ``<record>`` is the experiment's name, or the name of
  the variant its options chose (``ingest --compare csv-read``: ``ingest_csv_read``);
* ``<out>/<record>.png`` — the figure (matplotlib, one panel per varied factor).

An experiment is a module listed in ``EXPERIMENTS`` (imported lazily) that
defines ``TITLE`` and ``run(ctx: common.Context) -> dict`` (the record), and
may define ``add_options(parser)`` (its own options, which the harness exposes
after the common ones: ``python -m benchmarks engine --sizes 10,100``; read
with ``ctx.option``) and ``SEED`` (its default seed, else 0).
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

from trendlake.jobs.cli import positive_int

REPO = Path(__file__).resolve().parent.parent

# experiment name -> module defining TITLE and run(ctx) -> dict (and maybe add_options, SEED)
EXPERIMENTS: dict[str, str] = {
    "greta_vs_twostep": "benchmarks.experiments.greta_vs_twostep",
    "sharon": "benchmarks.experiments.sharon",
    "hamlet": "benchmarks.experiments.hamlet",
    "gloria": "benchmarks.experiments.gloria",
    "weaveshare": "benchmarks.experiments.weaveshare",
    "engine": "benchmarks.experiments.engine",
    "eval": "benchmarks.experiments.eval",
    "stats": "benchmarks.experiments.stats",
    "calibrate_sequence": "benchmarks.experiments.calibrate_sequence",
    "calibrate_graph": "benchmarks.experiments.calibrate_graph",
    "cet": "benchmarks.experiments.cet",
    # measures one sharing kind's internals, so it lives outside the kind-free experiments
    "typed_sharing": "benchmarks.calibration.typed_sharing",
    "calibrate_panes": "benchmarks.calibration.panes",
    "calibrate_prefix": "benchmarks.calibration.prefix",
    "ingest": "benchmarks.experiments.ingest",
    "replay": "benchmarks.experiments.replay",
    "replay_shared": "benchmarks.experiments.replay_shared",
}
# run Spark (a JVM): left out of ``all`` unless asked for with --spark
SPARK_EXPERIMENTS = ("ingest", "replay", "replay_shared")

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
    seed: int | None = None,
    log: Any = None,
    plot: bool = True,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one experiment, write ``<out>/<record>.json`` and ``.png``, return the record.

    ``options`` are the experiment's own (``add_options``; by their ``dest``), the rest
    keep their defaults."""
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
    seed = getattr(module, "SEED", 0) if seed is None else seed
    defaults = {k: v for k, v in vars(experiment_parser(name).parse_args([name])).items() if k not in COMMON}
    unknown = set(options or {}) - set(defaults)
    if unknown:
        raise ValueError(f"experiment {name!r} has no option {', '.join(sorted(unknown))}")
    given = {k: v for k, v in (options or {}).items() if v != defaults[k]}
    ctx = Context(name=name, size=size, repeat=repeat, seed=seed, log=log,
                  options=argparse.Namespace(**(defaults | given)), record_name=name, out=out)
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
    record["options"] = {k: v for k, v in vars(ctx.options).items()}
    record["command"] = command_line(name, size, repeat, seed, out, given)
    record["machine"] = machine_facts()
    record["peak_rss_mb"] = _peak_rss_mb()
    json_path = out / f"{ctx.record_name}.json"
    json_path.write_text(json.dumps(_finite(record), indent=2, default=_json_default, allow_nan=False) + "\n")
    png_path = out / f"{ctx.record_name}.png"
    if plot:
        plot_record(record, png_path)
    log(f"[{name}] {record.get('status')} in {record['elapsed_s']:.1f}s; agreement: "
        f"{_agreement_text(record)}; wrote {json_path}" + (f" and {png_path}" if plot else ""))
    return record


def command_line(name: str, size: str, repeat: int, seed: int, out: Path, given: dict[str, Any]) -> str:
    """The ``python -m benchmarks`` command that repeats a run (its options that differ from the defaults)."""
    parts = ["python -m benchmarks", name, "--size", size, "--repeat", str(repeat), "--seed", str(seed),
             "--out", str(out)]
    flags = {a.dest: a for a in experiment_parser(name)._actions}
    for dest, value in given.items():
        action = flags[dest]
        flag = action.option_strings[-1]
        if isinstance(action, argparse._StoreTrueAction):
            parts += [flag] if value else []
        else:
            parts += [flag, ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)]
    return " ".join(parts)


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
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- CLI ----------------------------------------------------------------------------

COMMON = {"name", "size", "out", "repeat", "seed", "no_plot", "spark"}  # the harness's own options


def add_common_options(p: argparse.ArgumentParser) -> None:
    """The options every experiment takes (``python -m benchmarks`` and ``trendlake bench``)."""
    p.add_argument("--size", choices=("smoke", "small", "full"), default="smoke",
                   help="smoke (seconds, CI), small (minutes), full (up to ~15 min each); default: smoke")
    p.add_argument("--out", type=Path, default=Path("out/bench"), help="output folder (default: out/bench)")
    p.add_argument("--repeat", type=positive_int, default=None, metavar="N",
                   help="repetitions per measurement (default: 1 for smoke, 3 otherwise)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the generated events and workloads (default: the experiment's)")
    p.add_argument("--no-plot", action="store_true", help="write the JSON only")


def experiment_parser(name: str | None, prog: str = "python -m benchmarks",
                      cls: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The parser of ``NAME [common options] [NAME's own options]`` (another name: 'all', 'list')."""
    module = importlib.import_module(EXPERIMENTS[name]) if name in EXPERIMENTS else None
    p = cls(
        prog=f"{prog} {name}" if module else prog,
        description=(
            f"{module.TITLE}. " if module else
            "Run experiment NAME (or 'all'; 'list' prints them): everything compared runs in "
            "this process on the same data, repeated; results must agree. Writes OUT/NAME.json "
            "(figures, ratios, machine facts) and OUT/NAME.png. Experiments: " + ", ".join(EXPERIMENTS) + ". "
            f"'{prog} NAME --help' lists NAME's own options."
        ),
    )
    p.add_argument("name", metavar="NAME", help="experiment name, 'all' or 'list'")
    add_common_options(p)
    if module is None:
        p.add_argument("--spark", action="store_true",
                       help="with 'all': the Spark experiments too (" + ", ".join(SPARK_EXPERIMENTS) + ")")
    elif hasattr(module, "add_options"):
        module.add_options(p.add_argument_group(f"options of {name}"))
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks NAME ...`` (run from the repository checkout); a bad name or
    option value is one line and exit 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return run_bench(parse(argv))
    except ValueError as err:
        print(f"python -m benchmarks: error: {err}", file=sys.stderr)
        return 2


def parse(argv: list[str], prog: str = "python -m benchmarks",
          cls: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.Namespace:
    """``argv`` parsed by the parser of the experiment it names (the first word that is one, else
    the first word: an unknown name is refused by ``run_bench``)."""
    words = [a for a in argv if not a.startswith("-")]
    name = next((a for a in words if a in EXPERIMENTS), words[0] if words else None)
    return experiment_parser(name, prog, cls).parse_args(argv)


def run_bench(args: argparse.Namespace) -> int:
    """Run the experiments ``args`` names; 1 when compared ways disagree. ValueError for an
    unknown experiment or a bad option value."""
    if args.name == "list":
        for name, module in EXPERIMENTS.items():
            print(f"{name:20} {module}")
        return 0
    if args.name == "all":
        names = [n for n in EXPERIMENTS if getattr(args, "spark", False) or n not in SPARK_EXPERIMENTS]
    elif args.name in EXPERIMENTS:
        names = [args.name]
    else:
        raise ValueError(f"unknown experiment {args.name!r} (known: {', '.join(EXPERIMENTS)}, all, list)")
    options = {k: v for k, v in vars(args).items() if k not in COMMON}
    code = 0
    for name in names:
        record = run_experiment(name, size=args.size, out=args.out, repeat=args.repeat, seed=args.seed,
                                plot=not args.no_plot, options=options if len(names) == 1 else None)
        print(summary_line(record))
        if not (record.get("agreement") or {}).get("all_agree", True):
            code = 1
    return code


def summary_line(record: dict[str, Any]) -> str:
    """One line per experiment: status, agreement, headline ratios."""
    parts = [f"{record.get('experiment')}: {record.get('status')}", _agreement_text(record)]
    for key, r in (record.get("ratios") or {}).items():
        if r.get("min") is not None:
            parts.append(f"{key} {r['min']:.3g}–{r['max']:.3g}x")
    return "; ".join(parts)
