"""Mutation score of the engine (and optimizer/analysis.py) against the fast tier's engine tests.

Mutants come from cosmic-ray (its core operators: arithmetic, comparison,
unary and boolean operators, numbers, True/False, break/continue, exception
types, decorators, zero-iteration loops). Mutants inside annotations of a module
that never evaluates them (``from __future__ import annotations``) are counted
but not run: they cannot change behaviour. The engine yields thousands of them,
so each module gets a seeded random sample (``--sample N`` per module,
``--sample all`` for every mutant); the score is given per module and
overall, with a 95% interval.

Every sampled mutant is written into the checkout (cosmic-ray works in place,
the editable install sees it), the module's tests run once, and the file is
restored (try/finally; a mutant left behind by a killed run is restored from
``out/mutation/in-progress.json`` by the next run). Tests per module:

* ``engine/**``: every ``tests/unit/engine/test_*.py`` (the targeted
  ``test_mutants_*.py`` first, then cheap, strong files), ``pytest -x -q -p no:cacheprovider``, ``HYPOTHESIS_PROFILE=mutation``
  (few examples, derandomized: the same examples for every mutant, no example
  database, no shrinking);
* ``optimizer/analysis.py``: ``tests/unit/optimizer/test_analysis.py`` first,
  then the same engine tests (the engine runs the plans the analysis builds).

A mutant that is not valid Python (cosmic-ray takes the bare ``*`` of
keyword-only parameters for a multiplication) is counted as *invalid* and not
run. A mutant is *killed* when the tests fail or exceed the per-mutant timeout
(``--timeout``; by default 4x the clean run, at least 60 s), *survived* when
they pass. Survivors that were shown equivalent by reading the code are listed
in ``scripts/mutation_equivalent.toml`` (matched by module, operator, the
original and the mutated line), counted apart and left out of the score, never
dropped silently.

    make mutation                                   # SAMPLE=5 SEED=1
    make mutation SAMPLE=all                        # every mutant (hours)
    .venv/bin/python scripts/mutation.py --sample 5 --seed 1 --modules greta,negation
    .venv/bin/python scripts/mutation.py --resume out/mutation/results.json  # tests added: run what was not killed
    .venv/bin/python scripts/mutation.py --list --sample 5 --seed 1         # the sample, no run

Writes ``out/mutation/results.json`` (one record per sampled mutant),
``out/mutation/report.md`` (the tables and the survivors) and the cosmic-ray
session ``out/mutation/session.sqlite`` (``cr-report`` reads it).
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import random
import signal
import sys
import time
import tomllib
import warnings
from collections import defaultdict
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "out" / "mutation"
EQUIVALENT = ROOT / "scripts" / "mutation_equivalent.toml"
IN_PROGRESS = OUT / "in-progress.json"
ANALYSIS = "optimizer/analysis.py"
# cheap and strong first: a killed mutant stops at the first failure (-x); pytest drops a
# directory given after some of its files, so every file is named
FIRST = [
    "tests/unit/engine/test_expr_conformance.py",
    "tests/unit/engine/test_oracle.py",
    "tests/unit/engine/test_worked_examples.py",
    "tests/unit/engine/test_oracle_differential.py",
]


def engine_tests() -> list[str]:
    # the targeted tests written against earlier survivors (small and quick) before all others
    targeted = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/unit/engine").glob("test_mutants_*.py"))
    rest = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/unit/engine").glob("test_*.py"))
    return targeted + FIRST + [t for t in rest if t not in FIRST and t not in targeted]


def tests_for(module: str) -> list[str]:
    if module == ANALYSIS:
        return ["tests/unit/optimizer/test_analysis.py", *engine_tests()]
    return engine_tests()


def command(tests: list[str]) -> str:
    return " ".join([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests])


def all_modules() -> list[str]:
    engine = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "engine").rglob("*.py"))
    return [*engine, ANALYSIS]


@dataclass
class Mutant:
    module: str
    operator: str
    occurrence: int
    line: int
    before: str  # the original line, stripped
    after: str  # the mutated line, stripped ("" when the mutation removes it)
    outcome: str = "pending"  # killed | timeout | survived | equivalent | invalid | error | no-mutation
    seconds: float = 0.0
    why: str = ""  # the reason an equivalent mutant is equivalent
    failed: str = ""  # the first failing test of a killed mutant

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.module, self.operator, self.occurrence)

    @property
    def op(self) -> str:
        return self.operator.removeprefix("core/")


# ---------------------------------------------------------------- mutants


def enumerate_mutants(modules: list[str]) -> dict[str, list]:
    """All cosmic-ray work items per module (a fresh session in out/mutation/session.sqlite)."""
    import cosmic_ray.commands
    from cosmic_ray.work_db import WorkDB, use_db

    OUT.mkdir(parents=True, exist_ok=True)
    session = OUT / "session.sqlite"
    session.unlink(missing_ok=True)
    with use_db(str(session), WorkDB.Mode.create) as db:
        cosmic_ray.commands.init([Path(m) for m in modules], db, {})
        items = list(db.work_items)
    per: dict[str, list] = defaultdict(list)
    for item in items:
        per[str(item.mutations[0].module_path)].append(item)
    for m in per:
        per[m].sort(key=lambda i: (i.mutations[0].operator_name, i.mutations[0].occurrence))
    return per


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the module's annotations are, if it never evaluates them (``from __future__ import
    annotations``): a mutant there cannot change what the code does."""
    import ast

    tree = ast.parse(source)
    lazy = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
               and any(a.name == "annotations" for a in n.names) for n in tree.body)
    if not lazy:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            found.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in found]


def in_annotation(item, spans) -> bool:
    spec = item.mutations[0]
    return any(lo <= tuple(spec.start_pos) and tuple(spec.end_pos) <= hi for lo, hi in spans)


def describe(item, source: str) -> Mutant:
    """The mutant's line before and after (cosmic-ray mutates in memory here, nothing is written)."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    spec = item.mutations[0]
    operator = cosmic_ray.plugins.get_operator(spec.operator_name)(**(spec.operator_args or {}))
    mutated = mutate_code(source, operator, spec.occurrence) or source
    old, new = source.splitlines(), mutated.splitlines()
    before = after = ""
    line = spec.start_pos[0]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            line = i1 + 1
            before = " ".join(s.strip() for s in old[i1:i2])
            after = " ".join(s.strip() for s in new[j1:j2])
            break
    m = Mutant(str(spec.module_path), spec.operator_name, spec.occurrence, line, before, after)
    try:
        with warnings.catch_warnings():  # `x is "literal"` mutants warn
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(mutated, m.module, "exec")
    except SyntaxError:  # e.g. the bare `*` of keyword-only parameters taken for a multiplication
        m.outcome = "invalid"
    return m


def sample(per: dict[str, list], size: int | None, seed: int) -> list:
    """Per module, the first ``size`` mutants of a seeded shuffle (its own stream of the seed, so
    one module's change leaves the others' samples; a larger sample extends a smaller one)."""
    chosen = []
    for module in sorted(per):
        items = list(per[module])
        random.Random(f"{seed}:{module}").shuffle(items)
        chosen.extend(items if size is None else items[:size])
    return chosen


def load_equivalent() -> list[dict]:
    if not EQUIVALENT.exists():
        return []
    return tomllib.loads(EQUIVALENT.read_text())["equivalent"]


def equivalent_reason(m: Mutant, known: list[dict]) -> str:
    for e in known:
        if (e["module"], e["operator"], e["before"], e["after"]) == (m.module, m.operator, m.before, m.after):
            return e["why"]
    return ""


# ---------------------------------------------------------------- running


def restore_leftover() -> None:
    if IN_PROGRESS.exists():
        left = json.loads(IN_PROGRESS.read_text())
        path = ROOT / left["module"]
        if path.read_text() != left["source"]:
            path.write_text(left["source"])
            print(f"restored {left['module']}: a previous run stopped with a mutant in it", file=sys.stderr)
        IN_PROGRESS.unlink()


def first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split()[1].split(" - ")[0]
    return ""


def run_mutant(item, m: Mutant, timeout: float) -> Any:
    """Mutate, test, restore; records the outcome in ``m`` and returns cosmic-ray's WorkResult."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    path = ROOT / m.module
    IN_PROGRESS.write_text(json.dumps({"module": m.module, "source": path.read_text()}))
    start = time.monotonic()
    try:
        result = mutate_and_test(item.mutations, command(tests_for(m.module)), timeout)
    finally:
        restore_leftover()
    m.seconds = round(time.monotonic() - start, 1)
    if result.worker_outcome == WorkerOutcome.NO_TEST:
        m.outcome = "no-mutation"
    elif result.worker_outcome != WorkerOutcome.NORMAL or result.test_outcome == TestOutcome.INCOMPETENT:
        m.outcome = "error"
        m.failed = (result.output or "")[-300:]
    elif result.test_outcome == TestOutcome.SURVIVED:
        m.outcome = "survived"
    elif result.output == "timeout":
        m.outcome = "timeout"
    else:
        m.outcome = "killed"
        m.failed = first_failure(result.output or "")
    return result


def baseline(modules: list[str]) -> float:
    """Run each distinct test command on the clean code; all must pass. The slowest time."""
    import subprocess

    slowest = 0.0
    for tests in {tuple(tests_for(m)) for m in modules}:
        start = time.monotonic()
        proc = subprocess.run(command(list(tests)).split(), cwd=ROOT, capture_output=True, text=True,
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        took = time.monotonic() - start
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-15:])
            raise SystemExit(f"error: the tests fail on the clean code, a mutation score means nothing:\n{tail}")
        print(f"clean run: {len(tests)} test files pass in {took:.0f} s", flush=True)
        slowest = max(slowest, took)
    return slowest


# ---------------------------------------------------------------- report

Z = 1.96


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def stratified(rows: list[tuple[int, int, int]]) -> tuple[float, float, float]:
    """Score over strata (population N, scored n, killed k): sum of N/total * k/n, with a 95%
    interval from the stratified variance (Agresti-Coull in each stratum, so a stratum with
    every mutant killed still counts its uncertainty; finite-population correction)."""
    rows = [r for r in rows if r[1] > 0]
    total = sum(N for N, _, _ in rows)
    if not total:
        return (0.0, 0.0, 1.0)
    est = sum(N / total * k / n for N, n, k in rows)
    var = 0.0
    for N, n, k in rows:
        q = (k + 2) / (n + 4)
        fpc = (N - n) / (N - 1) if N > 1 else 0.0
        var += (N / total) ** 2 * q * (1 - q) / n * fpc
    half = Z * math.sqrt(var)
    return (est, max(0.0, est - half), min(1.0, est + half))


def report(mutants: list[Mutant], population: dict[str, int], annotations: dict[str, int], meta: dict) -> str:
    by: dict[str, list[Mutant]] = defaultdict(list)
    for m in mutants:
        by[m.module].append(m)
    lines = [
        f"Run {meta['date']}: `{meta['command']}` (sample {meta['sample']} per module, seed {meta['seed']}, "
        f"timeout {meta['timeout']:.0f} s per mutant, {meta['minutes']:.0f} min).",
        "",
        "| module | mutants (in annotations) | sampled | killed (timeout) | survived | equivalent | score | 95% interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    strata = {"engine": [], "all": []}
    for module in sorted(by):
        ms = by[module]
        count = {o: sum(m.outcome == o for m in ms)
                 for o in ("killed", "timeout", "survived", "equivalent", "invalid", "error")}
        k = count["killed"] + count["timeout"]
        n = k + count["survived"]
        lo, hi = wilson(k, n)
        score = f"{k / n:.0%}" if n else "-"
        err = f", {count['error']} error" if count["error"] else ""
        err += f", {count['invalid']} invalid" if count["invalid"] else ""
        lines.append(f"| {module} | {population[module]} ({annotations[module]}) | {len(ms)} | {k} ({count['timeout']}){err} | "
                     f"{count['survived']} | {count['equivalent']} | {score} | {lo:.0%}-{hi:.0%} |")
        # equivalent mutants leave the population in proportion to their share of the sample
        N = round(population[module] * n / max(1, n + count["equivalent"]))
        strata["all"].append((N, n, k))
        if module.startswith("engine/"):
            strata["engine"].append((N, n, k))
    lines.append("")
    for name, rows in (("engine (engine/**)", strata["engine"]), ("engine + optimizer/analysis.py", strata["all"])):
        est, lo, hi = stratified(rows)
        k, n = sum(r[2] for r in rows), sum(r[1] for r in rows)
        lines.append(f"- **{name}**: {k} of {n} sampled non-equivalent mutants killed ({k / max(1, n):.1%}); "
                     f"weighted by module size {est:.1%}, 95% interval {lo:.1%}-{hi:.1%}")
    survivors = [m for m in mutants if m.outcome in ("survived", "equivalent", "error")]
    if survivors:
        lines += ["", "| mutant | operator | line -> mutant | outcome |", "|---|---|---|---|"]
        for m in sorted(survivors, key=lambda m: (m.module, m.line)):
            what = m.why or ("error: " + m.failed.splitlines()[-1] if m.outcome == "error" and m.failed else "")
            lines.append(f"| {m.module}:{m.line} | {m.op} | `{m.before}` -> `{m.after}` | "
                         f"{m.outcome}{': ' + what if what else ''} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="5", help="mutants per module, or 'all' (default 5)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modules", default="", help="comma-separated parts of module paths (default: all)")
    parser.add_argument("--timeout", type=float, default=0, help="seconds per mutant (default: 4x clean, >= 60)")
    parser.add_argument("--resume", type=Path, nargs="+", default=[],
                        help="keep the killed mutants (and the survivors still listed as equivalent) of these "
                        "results.json files (same mutant, same lines) and run the others: only when nothing "
                        "but tests changed since")
    parser.add_argument("--list", action="store_true", help="print the sample and stop")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    os.environ["HYPOTHESIS_PROFILE"] = "mutation"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    # a SIGTERM unwinds like Ctrl-C, so the mutated file is restored (finally)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    OUT.mkdir(parents=True, exist_ok=True)
    restore_leftover()

    modules = [m for m in all_modules() if not args.modules or any(p in m for p in args.modules.split(","))]
    size = None if args.sample == "all" else int(args.sample)
    per = enumerate_mutants(modules)
    sources = {m: (ROOT / m).read_text() for m in per}
    annotations = {}
    for module, items in per.items():
        spans = annotation_spans(sources[module])
        per[module] = [i for i in items if not in_annotation(i, spans)]
        annotations[module] = len(items) - len(per[module])
    population = {m: len(per[m]) for m in per}
    previous: dict[tuple, dict] = {}
    for path in args.resume:
        for r in json.loads(path.read_text())["mutants"]:
            if r["outcome"] in ("killed", "timeout", "equivalent"):
                previous[(r["module"], r["operator"], r["occurrence"])] = r
    items = sample(per, size, args.seed)
    mutants = [describe(i, sources[str(i.mutations[0].module_path)]) for i in items]
    print(f"{sum(population.values())} mutants in {len(per)} modules (and {sum(annotations.values())} in "
          "annotations, never evaluated: not run); sample of "
          f"{args.sample} per module, seed {args.seed}: {len(mutants)}", flush=True)
    if args.list:
        for m in mutants:
            print(f"{m.module}:{m.line} {m.op}: {m.before} -> {m.after}")
        return 0

    known = load_equivalent()
    timeout = args.timeout or max(60.0, 4 * baseline(modules))
    started = time.monotonic()
    from cosmic_ray.work_db import WorkDB, use_db

    def meta() -> dict:
        return {
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "command": f"scripts/mutation.py --sample {size or 'all'} --seed {args.seed}"
                       + (f" --modules {args.modules}" if args.modules else "")
                       + (" --resume (killed mutants of an earlier run kept)" if previous else ""),
            "sample": str(size) if size is not None else "all",
            "seed": args.seed,
            "timeout": timeout,
            "minutes": (time.monotonic() - started) / 60,
        }

    def save() -> None:  # after every mutant: a stopped run keeps what it found (--resume)
        (OUT / "results.json").write_text(json.dumps(
            {"meta": meta(), "population": population, "annotations": annotations,
             "mutants": [asdict(m) for m in mutants]}, indent=1))

    with use_db(str(OUT / "session.sqlite"), WorkDB.Mode.open) as db:
        for number, (item, m) in enumerate(zip(items, mutants, strict=True), 1):
            done = previous.get(m.key)
            if m.outcome == "invalid":
                continue  # not Python: no test could tell anything about it
            if done and (done["before"], done["after"]) == (m.before, m.after):
                # killed earlier (tests were only added since), or survived and still listed equivalent
                why = equivalent_reason(m, known)
                if done["outcome"] != "equivalent" or why:
                    m.outcome, m.seconds, m.failed, m.why = done["outcome"], done["seconds"], done.get("failed", ""), why
                    continue
            result = run_mutant(item, m, timeout)
            if result is not None:
                db.set_result(item.job_id, result)
            if m.outcome == "survived" and (why := equivalent_reason(m, known)):
                m.outcome, m.why = "equivalent", why
            save()
            print(f"[{number}/{len(mutants)}] {m.outcome:10} {m.seconds:5.1f}s {m.module}:{m.line} {m.op}: "
                  f"{m.before} -> {m.after}", flush=True)
    save()
    text = report(mutants, population, annotations, meta())
    (OUT / "report.md").write_text(text)
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
