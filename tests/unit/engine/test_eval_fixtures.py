"""Eval fixtures (tests/fixtures/eval/<case>/): `trendlake eval` on files, for every strategy.

Each case directory holds ``workload.etq`` (its leading ``--`` comment says where
the expected numbers come from), ``events.csv``, ``expected.jsonl`` and
optionally ``stream.json`` (a stream schema passed as ``--stream``). The
format is described in docs/testing.md, "Eval fixtures".

``expected.jsonl`` holds the exact output lines of ``trendlake eval`` (result
rows in output order, column order and number kinds included) and
declarations, each one JSON object:

* ``{"unsupported": STRATEGY, "query": NAME}`` -- the strategy refuses the
  query (its ``supports`` gives a reason): the declared set must equal the
  registry's answer, and eval of that query alone must fail with the reason;
* ``{"not_run": "twostep" | "oracle", "reason": ...}`` -- the exponential
  two-step reference or the oracle cannot enumerate this case's trends; the
  test is reported as skipped with the reason;
* ``{"xfail": STRATEGY | "*", "reason": ...}`` -- a known engine bug: the
  comparison is expected to fail (strictly).

Every strategy runs: ``auto`` and every name of ``engine.STRATEGIES``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from trendlake.jobs.cli import main
from trendlake.jobs.evaluate import compile_plan

from tests.oracle import evaluate as oracle_evaluate
from trendlake import engine

CASES_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "eval"
STRATEGIES = ["auto", *sorted(engine.STRATEGIES)]
NOT_RUNNABLE = {"twostep", "oracle"}  # exponential in the trends of a window
DIRECTIVES = ("unsupported", "not_run", "xfail")


@dataclass
class Case:
    name: str
    path: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    unsupported: dict[str, set[str]] = field(default_factory=dict)
    not_run: dict[str, str] = field(default_factory=dict)
    xfail: dict[str, str] = field(default_factory=dict)

    @property
    def workload(self) -> Path:
        return self.path / "workload.etq"

    @property
    def events(self) -> Path:
        return self.path / "events.csv"

    @property
    def stream(self) -> Path | None:
        p = self.path / "stream.json"
        return p if p.exists() else None

    def eval_args(self, strategy: str) -> list[str]:
        args = ["eval", str(self.workload), "--events", str(self.events), "--strategy", strategy]
        return args + (["--stream", str(self.stream)] if self.stream else [])


def load_case(path: Path) -> Case:
    case = Case(path.name, path)
    expected = path / "expected.jsonl"
    # a case without the file fails test_cases_are_complete, not the collection
    lines = expected.read_text().splitlines() if expected.exists() else []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        obj = json.loads(line)
        where = f"{path.name}/expected.jsonl:{number}"
        kind = next((d for d in DIRECTIVES if d in obj), None)
        if kind is None:
            assert "query" in obj and "window_start" in obj, f"{where}: neither a row nor a declaration"
            case.rows.append(obj)
        elif kind == "unsupported":
            assert set(obj) == {"unsupported", "query"}, where
            case.unsupported.setdefault(obj["unsupported"], set()).add(obj["query"])
        else:
            assert set(obj) == {kind, "reason"} and obj["reason"].strip(), where
            getattr(case, kind)[obj[kind]] = obj["reason"]
    return case


CASES = [load_case(p) for p in sorted(CASES_DIR.iterdir()) if p.is_dir()]


def canonical(row: dict[str, Any]) -> str:
    """A row as JSON text: key order, values and number kinds (5 vs 5.0) all count."""
    return json.dumps(row)


def strategy_params() -> list[Any]:
    params = []
    for case in CASES:
        for strategy in STRATEGIES:
            marks = []
            if strategy in case.not_run:
                marks.append(pytest.mark.skip(reason=f"{case.name}: {case.not_run[strategy]}"))
            reason = case.xfail.get(strategy) or case.xfail.get("*")
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=f"{case.name}: {reason}"))
            params.append(pytest.param(case, strategy, marks=marks, id=f"{case.name}-{strategy}"))
    return params


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def unsupported_by(case: Case, strategy: str) -> dict[str, str]:
    """Query name -> reason, for the queries of the case that ``strategy`` refuses."""
    if strategy == "auto":
        return {}
    plan, whash = compile_plan(case.workload, str(case.stream) if case.stream else None)
    loaded = engine.load_plan(plan, workload_hash=whash)
    chosen = engine.STRATEGIES[strategy]
    reasons = {name: chosen.supports(q) for name, q in loaded.queries.items()}
    return {name: r for name, r in reasons.items() if r is not None}


@pytest.mark.parametrize(("case", "strategy"), strategy_params())
def test_eval_gives_the_expected_rows(
    case: Case, strategy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = unsupported_by(case, strategy)
    assert set(refused) == case.unsupported.get(strategy, set()), (
        f"{case.name}: {strategy} refuses {sorted(refused)}; expected.jsonl declares "
        f"{sorted(case.unsupported.get(strategy, set()))}"
    )
    args = case.eval_args(strategy)
    queries = [q for q in dict.fromkeys(r["query"] for r in case.rows) if q not in refused]
    if refused:
        args += [a for q in queries for a in ("--query", q)]
    if queries:
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        got = [canonical(json.loads(line)) for line in out.splitlines()]
        want = [canonical(r) for r in case.rows if r["query"] in queries]
        assert got == want
    for name, reason in refused.items():
        code, out, err = run_cli([*case.eval_args(strategy), "--query", name], capsys)
        assert (code, out, err) == (2, "", f"trendlake: error: {reason}\n")


# ---------------------------------------------------------------------------
# the expected numbers against the independent oracle (tests/oracle)


def iso(us: int) -> str:
    t = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{t.microsecond:06d}" if t.microsecond else "") + "Z"


def oracle_rows(case: Case) -> list[dict[str, Any]]:
    """The oracle's rows for the case, as eval prints them (the file read by eval's reader)."""
    import pyarrow as pa
    from trendlake.engine.files import read_event_table
    from trendlake.jobs.evaluate import json_value
    from trendlake.schemas import load_stream_schema

    schema = load_stream_schema(str(case.stream)) if case.stream else None
    table = read_event_table(case.events, schema)
    stamps = table["ts"].cast(pa.int64()).to_pylist()
    rows = []
    for us, row in zip(stamps, table.drop_columns(["ts"]).to_pylist(), strict=True):
        row["ts"] = Fraction(us, 1_000_000)  # the oracle takes seconds
        rows.append(row)
    out = []
    for r in oracle_evaluate(case.workload.read_text(), rows):
        r = {k: json_value(v) for k, v in r.items()}  # eval's output form: -0.0 as 0.0, "Infinity"
        r["window_start"], r["window_end"] = iso(r["window_start"]), iso(r["window_end"])
        out.append(r)
    return out


def oracle_params() -> list[Any]:
    return [
        pytest.param(
            case,
            marks=[pytest.mark.skip(reason=f"{case.name}: {case.not_run['oracle']}")]
            if "oracle" in case.not_run
            else [],
            id=case.name,
        )
        for case in CASES
    ]


@pytest.mark.parametrize("case", oracle_params())
def test_expected_rows_agree_with_the_oracle(case: Case) -> None:
    got = sorted(canonical(r) for r in oracle_rows(case))
    assert got == sorted(canonical(r) for r in case.rows)


# ---------------------------------------------------------------------------
# the fixtures themselves


def test_cases_are_complete() -> None:
    assert len(CASES) >= 12, [c.name for c in CASES]
    for case in CASES:
        assert case.workload.read_text().startswith("--"), f"{case.name}: say where the numbers come from"
        assert case.events.exists() and (case.path / "expected.jsonl").exists(), case.name
        plan, _ = compile_plan(case.workload, str(case.stream) if case.stream else None)
        names = [q["name"] for q in plan["queries"]]
        # every query has a row, every row is of a query, in workload order
        assert list(dict.fromkeys(r["query"] for r in case.rows)) == names, case.name
        for kind in ("not_run", "xfail"):
            for who in getattr(case, kind):
                allowed = NOT_RUNNABLE if kind == "not_run" else {*STRATEGIES, "*"}
                assert who in allowed, f"{case.name}: {kind} {who!r}"
        for strategy, queries in case.unsupported.items():
            assert strategy in engine.STRATEGIES and queries <= set(names), case.name


def test_only_cogra_refuses_and_only_event_grained_queries() -> None:
    """What the fixtures declare unsupported, counted: COGRA on next-match / contiguous
    queries with adjacent predicates or negation, nothing else."""
    declared = sorted(
        (case.name, strategy, q)
        for case in CASES
        for strategy, queries in case.unsupported.items()
        for q in queries
    )
    assert declared, "some fixture must show a refused query"
    for name, strategy, q in declared:
        case = next(c for c in CASES if c.name == name)
        plan, whash = compile_plan(case.workload, str(case.stream) if case.stream else None)
        query = engine.load_plan(plan, workload_hash=whash).queries[q]
        assert strategy == "cogra"
        assert query.semantics != "skip-till-any-match" and (query.has_adjacent or query.negations)
