"""AVG is exact even when the trend count, the event count and the sum overflow.

``SEQ(A+)`` under skip-till-any-match over n events has ``2**n - 1`` trends;
every event is in ``2**(n-1)`` of them, so ``COUNT(A) = n * 2**(n-1)``,
``SUM(A.x) = 2**(n-1) * sum(x)`` and ``AVG(A.x)`` is the plain mean of x,
whatever n is. From n = 127 on the counts pass the result columns' bound
(``10**38 - 1``) and are reported as OVERFLOW, but AVG must not be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.results import CAP
from trendlake.jobs.cli import main

# The engine's aggregate state (engine.aggregates) still saturates counts and sums at CAP,
# so AVG of an overflowing count reads OVERFLOW (issue 11 item 7): the exact-state change
# was written against the engine before its reorganisation and is not ported yet.
NOT_PORTED = pytest.mark.xfail(
    strict=True, reason="AVG from exact sum and count: engine.aggregates still saturates at CAP"
)

WORKLOAD = (
    "QUERY q RETURN COUNT(*), COUNT(A), SUM(A.x), AVG(A.x), MIN(A.x), MAX(A.x) "
    "PATTERN A+ SEMANTICS skip-till-any-match WITHIN 1 hour;\n"
)


def _eval(tmp_path: Path, xs: list[int | float], strategy: str, capsys: pytest.CaptureFixture[str]) -> dict:
    wl = tmp_path / "w.etq"
    wl.write_text(WORKLOAD)
    events = tmp_path / "e.csv"
    events.write_text("type,ts,x\n" + "".join(f"A,{1000 + i},{x}\n" for i, x in enumerate(xs)))
    assert main(["eval", str(wl), "--events", str(events), "--strategy", strategy]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(rows) == 1, rows
    return rows[0]


@NOT_PORTED
@pytest.mark.parametrize("strategy", ["auto", "greta", "cogra"])
@pytest.mark.parametrize("n", [126, 127, 128, 300])
def test_avg_of_ones_is_one(tmp_path: Path, capsys: pytest.CaptureFixture[str], strategy: str, n: int) -> None:
    row = _eval(tmp_path, [1] * n, strategy, capsys)
    assert row["AVG(A.x)"] == 1.0
    trends = 2**n - 1
    assert row["COUNT(*)"] == (trends if trends <= CAP else "OVERFLOW")
    count_a = n * 2 ** (n - 1)
    assert row["COUNT(A)"] == (count_a if count_a <= CAP else "OVERFLOW")
    assert row["SUM(A.x)"] == (count_a if count_a <= CAP else "OVERFLOW")
    assert row["MIN(A.x)"] == 1 and row["MAX(A.x)"] == 1


@NOT_PORTED
@settings(max_examples=15, deadline=None)
@given(
    xs=st.lists(st.integers(-1000, 1000), min_size=120, max_size=200),
    strategy=st.sampled_from(["greta", "cogra"]),
)
def test_avg_is_the_mean_for_any_length(tmp_path_factory: pytest.TempPathFactory, xs: list[int], strategy: str) -> None:
    import contextlib
    import io

    tmp = tmp_path_factory.mktemp("avg")
    (tmp / "w.etq").write_text(WORKLOAD)
    (tmp / "e.csv").write_text("type,ts,x\n" + "".join(f"A,{1000 + i},{x}\n" for i, x in enumerate(xs)))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["eval", str(tmp / "w.etq"), "--events", str(tmp / "e.csv"), "--strategy", strategy])
    assert code == 0
    (row,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert row["AVG(A.x)"] == pytest.approx(sum(xs) / len(xs), rel=1e-12, abs=1e-12)


def test_float_attribute_avg_past_float_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Counts beyond 2**1024 do not break float sums: AVG is still the mean or OVERFLOW, never a crash."""
    row = _eval(tmp_path, [0.5] * 1100, "greta", capsys)
    assert row["AVG(A.x)"] in (0.5, "OVERFLOW")
    assert row["COUNT(*)"] == "OVERFLOW"
