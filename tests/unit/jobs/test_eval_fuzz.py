"""Fuzzing ``trendlake eval``: random bytes and random, partly broken CSV and JSON lines.

Never a traceback: every run ends with exit 0 or a one-line error with exit 2.
Never a wrong answer: when eval accepts a file, its rows equal the independent
reference (tests/oracle) evaluated on the same file read independently (Python's
``csv``/``json`` modules and the documented column typing: an all-integer column
is a long, an all-number column a double, text otherwise; empty is missing).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trendlake.engine.timeline import format_ts
from trendlake.jobs.cli import main

from tests import oracle
from tests.randomized import once

WORKLOAD = """QUERY trips RETURN g, COUNT(*), SUM(B.x), MAX(B.x)
PATTERN SEQ(A, B+, C) WHERE B.x > 1 GROUP-BY g WITHIN 10 seconds SLIDE 5 seconds;
QUERY pairs RETURN COUNT(*), MIN(A.x)
PATTERN SEQ(A, NOT C, B) WITHIN 6 seconds;
"""

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def run_eval(tmp: Path, name: str, data: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    (tmp / "w.etq").write_text(WORKLOAD)
    path = tmp / name
    path.write_bytes(data)
    capsys.readouterr()
    code = main(["eval", str(tmp / "w.etq"), "--events", str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (0, 2), (code, err)
    if code:
        assert err.startswith("trendlake: error:"), err
    return code, out, err


@SETTINGS
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".csv", ".jsonl", ".parquet"]))
def test_random_bytes_never_crash(tmp_path_factory: pytest.TempPathFactory, capsys, data: bytes, suffix: str) -> None:
    run_eval(tmp_path_factory.mktemp("bytes"), "events" + suffix, data, capsys)


CELL = st.one_of(
    st.integers(-3, 12).map(str), st.sampled_from(["", "1.5", "abc", "nan", "inf", "-0", "1e3", '"q,uoted"', "7 "]),
)


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A CSV over types A, B, C with columns ts, x, g; ``clean``: no deliberate damage."""
    n = draw(once.integers(0, 25))
    clean = draw(once.booleans())
    lines = ["type,ts,x,g"]
    for _ in range(n):
        t = draw(once.sampled_from("ABCD"))
        ts = draw(once.integers(0, 30)) if clean or draw(once.booleans()) else draw(CELL)
        x = draw(once.integers(-2, 9)) if clean else draw(CELL)
        g = draw(once.integers(0, 2)) if clean or draw(once.booleans()) else draw(CELL)
        line = f"{t},{ts},{x},{g}"
        if not clean and draw(once.integers(0, 9)) == 0:
            line = draw(once.sampled_from((line + ",extra", f"{t},{ts}", line.replace(",", ";"), "")))
        lines.append(line)
    return ("\n".join(lines) + "\n").encode(), clean


def typed_column(values: list[str]) -> list[Any]:
    present = [v for v in values if v != ""]

    def is_int(v: str) -> bool:
        try:
            int(v)
            return True
        except ValueError:
            return False

    def is_float(v: str) -> bool:
        try:
            float(v)
            return True
        except ValueError:
            return False

    if all(is_int(v) for v in present):
        return [int(v) if v != "" else None for v in values]
    if all(is_float(v) for v in present):
        return [float(v) if v != "" else None for v in values]
    return [v if v != "" else None for v in values]


def oracle_rows(data: bytes) -> list[dict[str, Any]]:
    records = list(csv.DictReader(io.StringIO(data.decode())))
    columns = {k: typed_column([r[k] for r in records]) for k in ("ts", "x", "g")}
    rows = []
    for i, r in enumerate(records):
        row = {"type": r["type"], "ts": columns["ts"][i], "seq": i}
        for k in ("x", "g"):
            if columns[k][i] is not None:
                row[k] = columns[k][i]
        rows.append(row)
    return rows


@SETTINGS
@given(file=csv_files())
def test_random_csv_is_an_error_or_the_right_answer(tmp_path_factory, capsys, file: tuple[bytes, bool]) -> None:
    data, clean = file
    code, out, err = run_eval(tmp_path_factory.mktemp("csv"), "events.csv", data, capsys)
    if clean:
        assert code == 0, err
    if code:
        return
    got = [json.loads(line) for line in out.splitlines()]
    want = oracle.evaluate(WORKLOAD, oracle_rows(data))
    for row in want:
        row["window_start"], row["window_end"] = format_ts(row["window_start"]), format_ts(row["window_end"])
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(map(key, got)) == sorted(map(key, want))


@SETTINGS
@given(rows=st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from("ABC"), "ts": st.integers(0, 30), "x": st.integers(0, 9)}),
    st.dictionaries(st.sampled_from(["type", "ts", "x", "g"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=3), st.floats(), st.lists(st.integers(), max_size=2))),
    st.text(max_size=10),
), max_size=15))
def test_random_json_lines_never_crash(tmp_path_factory, capsys, rows: list[Any]) -> None:
    lines = [json.dumps(r) if not isinstance(r, str) else r for r in rows]
    run_eval(tmp_path_factory.mktemp("jsonl"), "events.jsonl", ("\n".join(lines) + "\n").encode(), capsys)
