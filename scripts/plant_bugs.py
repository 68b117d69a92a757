"""Plant known one-line bugs into the code, one at a time, and see whether the fast tier notices.

Each bug is an exact code snippet replaced inside the body of the definition
an anchor (a class or function header) starts, both located by *content*
anywhere under the bug's folder (``engine/``, ``optimizer/`` or ``schemas/``)
-- never by file name or line number, since files move. The anchor must occur
exactly once under that folder and the snippet exactly once in its body (up
to the next line indented no deeper than the header); otherwise the script
stops with an error and the bug list must be updated to the new code.
``--list`` checks every bug that way (and that the planted code still
compiles) without running anything: exit 0 when all can be planted, 2
otherwise.

Where a strategy uses shared code (``engine.timeline.window_range``,
``engine.vertices.VarList.from_time``), its bug is planted where that strategy
calls it, so it breaks that strategy alone, as before the engine was split.
``EXTRA`` holds the same mistakes at the other strategies' call sites and in
the shared code (``--extra``); the bugs of ``BUGS`` are the default.

For every bug and every hypothesis seed the script runs the bug's tests: for
an engine bug, the engine tests of the fast tier (``tests/unit/engine``; the
oracle tests first, so a caught bug stops early with ``-x``); a bug with tests
of its own (``Bug.tests``: glob patterns, the files expected to catch it
first) runs those, expanded when the script runs, so test files added later
are included. They run under the ``planted`` hypothesis profile (no example
database, so seeds are independent; no shrinking), and each run records caught
(a test failed) or missed (all passed). The code is restored after every bug,
whatever happens (try/finally). A clean run per seed of every test file the
chosen bugs run comes first: a suite that fails without a bug proves nothing.

    .venv/bin/python scripts/plant_bugs.py                  # every bug of BUGS x seeds 0-4
    .venv/bin/python scripts/plant_bugs.py --seeds 0 --bugs greta-kmin,expr-missing-as-zero
    .venv/bin/python scripts/plant_bugs.py --extra          # and the EXTRA bugs
    .venv/bin/python scripts/plant_bugs.py --list           # check every bug can be planted

Prints a table bug x seed -> caught (naming the first test file that failed) or missed;
exits 1 if any bug was missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("engine", "optimizer", "schemas")  # where bugs are planted
MARK = "  # planted bug"
# the engine tests of the fast tier, cheapest and strongest first (pytest drops a
# directory given after some of its files, so every file is named)
FIRST = [
    "tests/unit/engine/test_expr_conformance.py",
    "tests/unit/engine/test_oracle.py",
    "tests/unit/engine/test_oracle_differential.py",
    "tests/unit/engine/test_negation_window_boundaries.py",
    "tests/unit/engine/test_next_contiguous_patterns.py",
    "tests/unit/engine/test_worked_examples.py",
]
TESTS = FIRST + sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "tests/unit/engine").glob("test_*.py")
    if str(p.relative_to(ROOT)) not in FIRST
)
# Test selections of the bugs outside the engine's strategies (Bug.tests), the expected catchers
# first. The shared graph: its differential tests (each query alone, the two-step reference;
# large, negative and mixed-sign integers), then every engine test.
SHARED_TESTS = ("tests/unit/engine/test_shared_graph*.py", "tests/unit/engine/test_shared*.py", "tests/unit/engine/test_*.py")
# Planners: the plan check over every planner's plans of random workloads and the planner
# fixtures (tests/fixtures/planners/) in tests/unit/optimizer, the sharing differential tests,
# the CLI's sharing output, then the rest of the jobs' fast tier.
PLANNER_TESTS = (
    "tests/unit/optimizer/test_*.py",
    "tests/unit/engine/test_shared*.py",
    "tests/unit/jobs/test_cli_sharing.py",
    "tests/unit/jobs/test_*.py",
)
# Input typing: the typing properties (eval's reader, with and without a stream schema), the
# rules themselves, the eval fixtures and reader tests, then the rest of the jobs' fast tier.
TYPING_TESTS = (
    "tests/unit/jobs/test_eval_typing_edges.py",
    "tests/unit/jobs/test_eval_inputs.py",
    "tests/unit/schemas/test_*.py",
    "tests/unit/engine/test_eval_fixtures.py",
    "tests/unit/engine/test_mutants_files.py",
    "tests/unit/jobs/test_*.py",
)


@dataclass(frozen=True)
class Bug:
    name: str
    what: str
    anchor: str  # text that occurs exactly once under ``under``; the snippet is searched after it
    old: str  # exact text, replaced at its first occurrence after the anchor
    new: str
    under: str = "engine"  # the folder the anchor is unique in (one of FOLDERS)
    # glob patterns (from the repository root) of the test files to run, the files expected to
    # catch the bug first; empty: the engine tests (TESTS)
    tests: tuple[str, ...] = ()


BUGS = [
    # GRETA (engine/strategies/greta.py) is the time-stamp driver (engine/timestamps.py) under the
    # semantics classes (engine/semantics.py); COGRA's interpreter runs the same driver, so these
    # break it too
    Bug("greta-next-never-closes", "GRETA: skip-till-next-match never closes a vertex",
        "class _Selective(", "p.closed = True", "p.closed = False"),
    Bug("greta-contiguous-middle", "GRETA: a contiguous middle event may share its time stamp",
        "class Contiguous(", "middle_alone = True", "middle_alone = False"),
    Bug("greta-leading-not-boundary", "GRETA: leading NOT window boundary < -> <=",
        "def starts_after(", "return sb is None or sb < k * slide", "return sb is None or sb <= k * slide"),
    Bug("greta-trailing-not-boundary", "GRETA: trailing NOT window boundary < -> <=",
        "def add_results(", "if not end_bound < k * q.slide + q.within", "if not end_bound <= k * q.slide + q.within"),
    # VarList.from_time (engine/vertices.py) is shared with COGRA's mixed-grained path:
    # the bug goes where the any-match semantics reads kept vertices (bisect_left at bound + 1 ==
    # bisect_right at bound, time stamps being integers), so kept vertices at the NOT match's
    # start are skipped
    Bug("greta-not-at-predecessor-ts", "GRETA: a NOT match starting at the predecessor's time stamp blocks it",
        "def read_list(", "islice(vl.vertices, vl.from_time(bound), None)",
        "islice(vl.vertices, vl.from_time(None if bound is None else bound + 1), None)"),
    # window_range (engine/timeline.py) is shared by every strategy and the reference:
    # the bug goes where the time-stamp driver takes its windows (one more window, k = (t - within)
    # // slide, which does not contain t, and kmin one lower for pruning and predecessor sums)
    Bug("greta-kmin", "GRETA: sliding-window kmin off by one",
        "class TimeStampDriver:", "windows = window_range(t, within, slide)",
        "windows = range(window_range(t, within, slide).start - 1, window_range(t, within, slide).stop)"),
    # COGRA pattern-grained (engine/strategies/cogra/pattern.py)
    Bug("cogra-pattern-next-never-closes", "COGRA pattern-grained: next-match never closes the open ends",
        "def run_pattern(", "closed.add(tr.src)", "closed.discard(tr.src)"),
    Bug("cogra-pattern-contiguous-middle", "COGRA pattern-grained: a contiguous middle event may share its time stamp",
        "def run_pattern(", "if contiguous and len(group) > 1:", "if contiguous and len(group) > 1 and False:"),
    # COGRA type+negation: the "since" aggregates of its interpreter (engine/strategies/cogra/mixed.py)
    Bug("cogra-since-earliest-negation", "COGRA type+negation: reads the since aggregate of the negation that started first",
        "def read_since(", "if b is not None and (nb is None or b > nb):",
        "if b is not None and (nb is None or b < nb):"),
    Bug("cogra-since-prefix-aliased", "COGRA type+negation: a prefix's since aggregate aliases the one before",
        "def negations_advanced(self, advanced: dict[int, list[int]], new: list[Vertex], kmin: int) -> None:\n        \"\"\"Prefix",
        "lst[j] = copy_aggs(alg, lst[j - 1])", "lst[j] = lst[j - 1]"),
    Bug("cogra-negation-at-predecessor-ts", "COGRA type+negation: a NOT match starting at the predecessor's time stamp blocks it",
        "def negations_advanced(self, advanced: dict[int, list[int]], new: list[Vertex], kmin: int) -> None:\n        \"\"\"Prefix",
        "lst[0] = fresh", "lst[0] = {}"),
    # the row evaluator (engine/expr/python.py); engine/expr/vector.py refuses or agrees with it
    Bug("expr-missing-as-zero", "expressions: a missing value compares as 0",
        "def _compare(", "if a is None or b is None:",
        "if (a := 0 if a is None else a) is None or (b := 0 if b is None else b) is None:"),
    # the four kinds the first trust round's planted bugs showed missed (benchmarks/results/testing/README.md)
    # (a) the shared event-grained graph's coefficients (engine/shared/kleene/coefficients.py): a sum's
    # sign lost, on the int64 path and on the exact Python-integer path that large values take
    Bug("shared-coef-sum-sign", "shared graph: an integer sum coefficient adds |x| (int64 path)",
        "def vertex(self, sid: int", "s + m * value", "s + m * abs(value)", tests=SHARED_TESTS),
    Bug("shared-coef-exact-sum-sign", "shared graph: an integer sum coefficient adds |x| (exact path)",
        "def vertex(self, sid: int", "x + times(value, y)", "x + times(abs(value), y)", tests=SHARED_TESTS),
    # (b) a planner writing a plan that eval refuses (optimizer/candidates/kleene.py): next-match queries
    # taken for sharable (the key of a set then keeps them apart from any-match ones, and the
    # engine shares skip-till-any-match only), or a sharable set's key without the window
    Bug("sharing-next-match-eligible", "planners: next-match queries share a Kleene group",
        "def eligible(entry: dict", 'if entry["semantics"] != ANY:', 'if entry["semantics"] == "contiguous":',
        under="optimizer", tests=PLANNER_TESTS),
    Bug("sharing-key-without-window", "planners: queries of other windows in one sharing group",
        "def candidates(entries: list[dict[str, Any]], same_predicates", 'entry["window"]["within_us"],\n                entry["window"]["slide_us"],', "",
        under="optimizer", tests=PLANNER_TESTS),
    # (c) a planner grouping other queries, a valid plan with the same answers at another cost
    # (optimizer/candidates/kleene.py): only queries with the same predicates on K share
    Bug("hamlet-same-predicates-only", "hamlet: only queries with equal predicates on K share (cost only)",
        "def candidates(entries: list[dict[str, Any]], same_predicates", "if event_grained or same_predicates:", "if True:",
        under="optimizer", tests=PLANNER_TESTS),
    # (d) input typing (engine/files.py): a CSV read with a stream schema keeps the columns pyarrow
    # infers as int64, so a string attribute "007" becomes "7"
    Bug("csv-schema-strings-as-numbers", "eval input: a declared string column of digits read as a number",
        "def read_event_table(", "infer=stream_schema is None", "infer=True", tests=TYPING_TESTS),
]


# Not in BUGS (run with --extra, or name them in --bugs): the same mistakes where
# the other strategies use the shared code, and in the shared code itself.
_KMIN = "windows = range(window_range(t, within, slide).start - 1, window_range(t, within, slide).stop)"
EXTRA = [
    Bug("cogra-pattern-kmin", "COGRA pattern-grained: sliding-window kmin off by one",
        "def run_pattern(", "windows = window_range(t, within, slide)", _KMIN),
    Bug("cogra-kernel-kmin", "COGRA type-grained kernel: sliding-window kmin off by one",
        "def windows(self, p: Panes", "windows = window_range(t, within, slide)", _KMIN),
    Bug("timeline-kmin", "shared window_range (every strategy and twostep): kmin off by one",
        "def window_range(ts: int", "return range((ts - within) // slide + 1, ts // slide + 1)",
        "return range((ts - within) // slide, ts // slide + 1)"),
    Bug("expr-vector-missing-as-zero", "numpy expressions: a missing value compares as 0",
        "def vec_predicate(", "return _valid_and(res, _and(oka, okb), n)", "return _valid_and(res, True, n)"),
]


class PlantError(Exception):
    pass


def _sources() -> dict[Path, str]:
    return {p: p.read_text() for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))}


def selected_tests(bug: Bug) -> list[str]:
    """The bug's test files, its patterns expanded in order (each sorted), each file once.
    Files, not folders: ``pytest FILE DIR`` with FILE inside DIR collects only FILE."""
    out: list[str] = []
    for pattern in bug.tests or TESTS:
        for path in sorted(ROOT.glob(pattern)):
            name = str(path.relative_to(ROOT))
            if name not in out:
                out.append(name)
    return out


def body(text: str, at: int) -> tuple[int, int]:
    """Start and end offsets of the definition whose header starts at ``at``: up to the
    next line (not blank, not a comment, not closing a bracket) indented no deeper than
    the header, or the end of the file."""
    line_start = text.rfind("\n", 0, at) + 1
    indent = len(text[line_start:at]) - len(text[line_start:at].lstrip())
    pos = text.find("\n", at)
    while pos >= 0:
        nxt = text.find("\n", pos + 1)
        line = text[pos + 1: nxt if nxt >= 0 else len(text)]
        stripped = line.lstrip()
        if stripped and not stripped.startswith(("#", ")", "]", "}")) and len(line) - len(stripped) <= indent:
            return line_start, pos + 1
        pos = nxt
    return line_start, len(text)


def locate(bug: Bug, sources: dict[Path, str]) -> tuple[Path, int]:
    """The file and offset of the bug's snippet: its only occurrence in the body of the
    definition its anchor (unique under the bug's folder) starts."""
    if bug.under not in FOLDERS:
        raise PlantError(f"{bug.name}: bugs are planted under {', '.join(FOLDERS)}, not {bug.under}/")
    folder = ROOT / bug.under
    hits = [(p, text.find(bug.anchor)) for p, text in sources.items()
            if p.is_relative_to(folder) and bug.anchor in text]
    if len(hits) != 1 or sources[hits[0][0]].count(bug.anchor) != 1:
        where = ", ".join(str(p.relative_to(ROOT)) for p, _ in hits) or "nowhere"
        raise PlantError(
            f"{bug.name}: anchor {bug.anchor!r} must occur exactly once under {bug.under}/ (found in {where})"
        )
    path, at = hits[0]
    text = sources[path]
    start, end = body(text, at)
    count = text.count(bug.old, start, end)
    if count != 1:
        raise PlantError(
            f"{bug.name}: snippet {bug.old!r} must occur exactly once in the body of {bug.anchor!r} "
            f"({path.relative_to(ROOT)}, lines {text.count(chr(10), 0, start) + 1}-{text.count(chr(10), 0, end)}), "
            f"found {count} times"
        )
    return path, text.find(bug.old, start, end)


def planted_text(bug: Bug, sources: dict[Path, str]) -> tuple[Path, str]:
    """The bug's file and its text with the bug planted (the changed line marked)."""
    path, offset = locate(bug, sources)
    text = sources[path]
    planted = text[:offset] + bug.new + text[offset + len(bug.old):]
    end = planted.find("\n", offset)
    planted = planted[:end] + MARK + planted[end:]
    return path, planted


def check(bug: Bug, sources: dict[Path, str]) -> str:
    """Where the bug goes (``file:line``), after checking that it can be planted: the
    snippet is found exactly once, the planted code differs and still compiles."""
    if bug.old == bug.new:
        raise PlantError(f"{bug.name}: the planted text equals the snippet")
    path, planted = planted_text(bug, sources)
    try:
        compile(planted, str(path), "exec")
    except SyntaxError as err:
        raise PlantError(f"{bug.name}: the planted code does not compile: {err}") from None
    line = sources[path].count("\n", 0, locate(bug, sources)[1]) + 1
    return f"{path.relative_to(ROOT)}:{line}"


def plant(bug: Bug, sources: dict[Path, str]) -> Path:
    path, planted = planted_text(bug, sources)
    path.write_text(planted)
    return path


def run_tests(seed: int, python: str, tests: list[str]) -> tuple[str, float]:
    env = dict(os.environ, HYPOTHESIS_PROFILE="planted", PYTHONDONTWRITEBYTECODE="1")
    cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", f"--hypothesis-seed={seed}", *tests]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    took = time.monotonic() - start
    if proc.returncode == 0:
        return "missed", took
    if proc.returncode == 1:
        failed = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
        test = failed[0].split("::")[0].rsplit("/", 1)[-1].removesuffix(".py") if failed else "?"
        return f"caught ({test})", took
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
    raise PlantError(f"pytest exited with {proc.returncode} (seed {seed}):\n{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--bugs", default="", help="comma-separated bug names (default: all)")
    parser.add_argument(
        "--list", action="store_true",
        help="check that every bug can be planted (anchor unique under its folder, snippet exactly once "
        "in its body, planted code compiles), list where each goes and the tests expected to catch "
        "it, then stop (exit 2 if one cannot)",
    )
    parser.add_argument("--tests", nargs="+", default=None,
                        help="test paths for every bug (default: each bug's own, else the engine tests)")
    parser.add_argument("--extra", action="store_true", help="also the bugs outside BUGS (EXTRA)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the clean run per seed")
    args = parser.parse_args(argv)
    sources = _sources()
    planted = [str(p.relative_to(ROOT)) for p, text in sources.items() if MARK in text]
    if planted:
        print(f"error: {', '.join(planted)} still holds a planted bug (a line ending in '# planted bug'); "
              "restore it first", file=sys.stderr)
        return 2
    names = [b.name for b in BUGS + EXTRA]
    default = [b.name for b in BUGS + (EXTRA if args.extra or args.list else [])]
    wanted = [n for n in args.bugs.split(",") if n] or default
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f"error: unknown bug {', '.join(unknown)} (known: {', '.join(names)})", file=sys.stderr)
        return 2
    bugs = [b for b in BUGS + EXTRA if b.name in wanted]
    errors = []
    for bug in bugs:  # every bug must be plantable before anything runs
        try:
            where = check(bug, sources)
        except PlantError as err:
            errors.append(str(err))
            continue
        if args.list:
            print(f"{bug.name:34} {where:42} {'(extra) ' if bug in EXTRA else ''}{bug.what}")
            if bug.tests:
                print(f"{'':34} tests: {', '.join(bug.tests)}")
    if errors:
        for err in errors:
            print(f"error: {err}", file=sys.stderr)
        return 2
    if args.list:
        return 0
    python = sys.executable
    tests = {bug.name: args.tests or selected_tests(bug) for bug in bugs}
    every = list(dict.fromkeys(t for bug in bugs for t in tests[bug.name]))
    table: dict[str, dict[int, str]] = {}
    try:
        if not args.no_baseline:
            for seed in args.seeds:
                outcome, took = run_tests(seed, python, every)
                print(f"clean code, seed {seed}: {'passes' if outcome == 'missed' else outcome} ({took:.0f} s)", flush=True)
                if outcome != "missed":
                    print("error: the tests fail without a planted bug", file=sys.stderr)
                    return 2
        for bug in bugs:
            table[bug.name] = {}
            for seed in args.seeds:
                path = plant(bug, sources)
                try:
                    outcome, took = run_tests(seed, python, tests[bug.name])
                finally:
                    path.write_text(sources[path])
                table[bug.name][seed] = outcome
                print(f"{bug.name}, seed {seed}: {outcome} ({took:.0f} s)", flush=True)
    except PlantError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        for path, text in sources.items():  # restore everything, whatever happened
            if path.read_text() != text:
                path.write_text(text)
    print()
    header = f"| bug | {' | '.join(f'seed {s}' for s in args.seeds)} |"
    print(header)
    print("|" + "---|" * (len(args.seeds) + 1))
    for bug in bugs:
        print(f"| {bug.name} | {' | '.join(table[bug.name][s] for s in args.seeds)} |")
    missed = sum(v == "missed" for row in table.values() for v in row.values())
    print(f"\n{sum(len(r) for r in table.values()) - missed} caught, {missed} missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
