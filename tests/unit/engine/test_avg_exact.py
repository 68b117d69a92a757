"""AVG is exact even when the trend count, the event count and the sum overflow.

``SEQ(A+)`` under skip-till-any-match over n events has ``2**n - 1`` trends;
every event is in ``2**(n-1)`` of them, so ``COUNT(A) = n * 2**(n-1)``,
``SUM(A.x) = 2**(n-1) * sum(x)`` and ``AVG(A.x)`` is the plain mean of x,
whatever n is. From n = 127 on the counts pass the result columns' bound
(``10**38 - 1``) and are reported as OVERFLOW, but AVG must not be.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trendlake.engine.numbers import CAP, FAR_BITS, Far
from trendlake.engine.results import WindowResult, from_state, to_state
from trendlake.jobs import replay
from trendlake.jobs.cli import main

from tests.unit.engine.engine_adapter import run_engine
from trendlake import engine, optimizer

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
    """Counts beyond 2**1024 do not break float sums: AVG is still the mean, never a crash."""
    for strategy in ("greta", "cogra"):
        row = _eval(tmp_path, [0.5] * 1100, strategy, capsys)
        assert row["AVG(A.x)"] == 0.5
        assert row["COUNT(*)"] == "OVERFLOW" and row["SUM(A.x)"] == "OVERFLOW"


# ---------------------------------------------------------------------------
# closed forms on other shapes, the far range, the replay path and the Far numbers


def _closed_form_seq_a_plus_b(kinds: list[str], xs: list[int]) -> tuple[int, int, int]:
    """``SEQ(A+, B)`` under skip-till-any-match, distinct time stamps (other types ignored): each B event ends
    ``2**a - 1`` trends (a = A events before it), holding ``a * 2**(a-1)`` A events whose
    x sum to ``2**(a-1) * sum(x)``. Returns (trends, COUNT(A), SUM(A.x))."""
    trends = count = total = 0
    a, sx = 0, 0
    for kind, x in zip(kinds, xs, strict=True):
        if kind == "A":
            a, sx = a + 1, sx + x
        elif kind == "B" and a:
            trends += 2**a - 1
            count += a * 2 ** (a - 1)
            total += 2 ** (a - 1) * sx
    return trends, count, total


def _rows(kinds: list[str], xs: list[int | float], ts: list[int] | None = None) -> list[dict]:
    ts = ts or list(range(len(kinds)))
    return [{"type": k, "ts": 1000 + t, "seq": i, "x": x} for i, (k, x, t) in enumerate(zip(kinds, xs, ts, strict=True))]


def _one_row(text: str, rows: list[dict], strategy: str) -> dict:
    plan = optimizer.build_plan(optimizer.compile_workload(text))
    got = run_engine(plan, rows, strategy)
    assert len(got) == 1, got
    return got[0]


def _overflow_or(value: int) -> int | str:
    return value if abs(value) <= CAP else "OVERFLOW"


SEQ_AB = (
    "QUERY q RETURN COUNT(*), COUNT(A), SUM(A.x), AVG(A.x) "
    "PATTERN SEQ(A+, B) SEMANTICS skip-till-any-match WITHIN 1 hour;\n"
)
# the same trends through other state granularities: negation ("since" aggregates of
# COGRA's interpreter; the C event comes before every A, so it blocks nothing) and an
# adjacent predicate that always holds (mixed-grained: kept events)
SHAPES = {
    "plain": SEQ_AB,
    "negation": SEQ_AB.replace("SEQ(A+, B)", "SEQ(A+, NOT C, B)"),
    "adjacent": SEQ_AB.replace("WITHIN", "WHERE NEXT(A).x < A.x + 5000 WITHIN"),
}


@pytest.mark.parametrize("strategy", ["auto", "greta", "cogra"])
@pytest.mark.parametrize(
    ("shape", "n"),
    [("plain", 150), ("plain", 400), ("plain", 2300), ("negation", 400), ("negation", 2300), ("adjacent", 400)],
)
def test_seq_a_plus_b_matches_its_closed_form(strategy: str, shape: str, n: int) -> None:
    """Counts past CAP (n >= 150) and past the exact range of the state (2300 events:
    trend counts near 2**2000, kept as Far numbers): AVG is still the exact mean rounded
    once (within 1e-15 in the far range), COUNT and SUM are OVERFLOW or exact."""
    rng = random.Random(n)
    kinds = ["C"] + ["A" if rng.random() < 0.9 else "B" for _ in range(n)] + ["B"]
    xs = [rng.randint(-50, 1000) for _ in kinds]
    trends, count, total = _closed_form_seq_a_plus_b(kinds, xs)
    row = _one_row(SHAPES[shape], _rows(kinds, xs), strategy)
    assert row["COUNT(*)"] == _overflow_or(trends)
    assert row["COUNT(A)"] == _overflow_or(count)
    assert row["SUM(A.x)"] == _overflow_or(total)
    mean = float(Fraction(total, count))
    if count.bit_length() <= 2000:
        assert row["AVG(A.x)"] == mean
    else:
        assert row["AVG(A.x)"] == pytest.approx(mean, rel=1e-15)


@pytest.mark.parametrize("strategy", ["auto", "greta", "cogra"])
def test_simultaneous_events_match_the_closed_form(strategy: str) -> None:
    """``A+`` over groups of simultaneous events (sizes g_i): an event of group i is in
    ``prod_{j != i} (1 + g_j)`` trends (at most one event per time stamp in a trend)."""
    rng = random.Random(5)
    sizes = [rng.randint(1, 4) for _ in range(150)]
    kinds, xs, ts = [], [], []
    for t, g in enumerate(sizes):
        for _ in range(g):
            kinds.append("A")
            xs.append(rng.randint(0, 9))
            ts.append(t)
    prod = 1
    for g in sizes:
        prod *= 1 + g
    count = total = 0
    pos = 0
    for g in sizes:
        others = prod // (1 + g)
        count += g * others
        total += sum(xs[pos : pos + g]) * others
        pos += g
    row = _one_row(WORKLOAD, _rows(kinds, xs, ts), strategy)
    assert prod - 1 > CAP and row["COUNT(*)"] == "OVERFLOW" and row["COUNT(A)"] == "OVERFLOW"
    assert row["AVG(A.x)"] == float(Fraction(total, count))


@pytest.mark.parametrize("strategy", ["auto", "greta", "cogra", "twostep"])
def test_every_strategy_small_closed_form(strategy: str) -> None:
    """The two-step reference (exponential: small n only) and the others agree with the
    closed form where nothing overflows; ``AVG`` is the exact mean rounded once."""
    kinds = list("AABAAAB" "AAB")
    xs = [3, -1, 0, 7, 7, 2, 0, 5, 1, 0]
    trends, count, total = _closed_form_seq_a_plus_b(kinds, xs)
    row = _one_row(SEQ_AB, _rows(kinds, xs), strategy)
    assert (row["COUNT(*)"], row["COUNT(A)"], row["SUM(A.x)"]) == (trends, count, total) == (161, 532, 1828)
    assert row["AVG(A.x)"] == 1828 / 532


def test_float_attribute_far_range_is_the_mean() -> None:
    """Float values times counts far past the float range (2**2600): the mean, not OVERFLOW."""
    rng = random.Random(3)
    xs = [rng.random() * 100 for _ in range(2600)]
    want = float(sum(map(Fraction, xs)) / len(xs))
    for strategy in ("greta", "cogra"):
        row = _one_row(WORKLOAD, _rows(["A"] * len(xs), xs), strategy)
        assert row["AVG(A.x)"] == pytest.approx(want, rel=1e-15)
        assert row["SUM(A.x)"] == "OVERFLOW" and row["COUNT(A)"] == "OVERFLOW"


def test_state_of_an_avg_query_stays_bounded() -> None:
    """Cost: past BIG a state value is a Far number of FAR_BITS bits, not an int of
    thousands of digits; a query without AVG saturates to NaN as before."""
    rows = _rows(["A"] * 2100, [1] * 2100)
    table = engine.table_from_rows(rows)
    for text, exact in ((WORKLOAD, True), (WORKLOAD.replace(", AVG(A.x)", ""), False)):
        plan = optimizer.build_plan(optimizer.compile_workload(text))
        for strategy in ("greta", "cogra"):
            (state,) = engine.evaluate_partials(plan, table, strategy=strategy)["q"].values()
            if exact:
                assert isinstance(state.trends, Far) and isinstance(state.counts["A"], Far)
                assert state.trends.m.bit_length() <= FAR_BITS + 1
            else:
                assert state.trends != state.trends  # NaN: saturated


# -- replay: partial states of disjoint partitions, shipped as JSON and merged


REPLAY_WORKLOAD = (
    "QUERY r RETURN district, COUNT(*), COUNT(A), SUM(A.x), AVG(A.x) "
    "PATTERN A+ SEMANTICS skip-till-any-match WHERE [d] GROUP-BY district WITHIN 1 hour;\n"
)


@pytest.mark.parametrize("sizes", [(300, 200), (2100, 40)])
def test_replay_merges_exact_states(sizes: tuple[int, int]) -> None:
    """Two partitions (d = 1, 2) of one group, evaluated in separate chunks as replay's
    executors do, their states serialized to JSON rows and merged by ``finish_rows``: AVG is
    the mean over both partitions' trends (2100 events: Far numbers in the JSON state)."""
    rng = random.Random(sum(sizes))
    d, xs, ts = [], [], []
    for key, n in zip((1, 2), sizes, strict=True):
        d += [key] * n
        xs += [rng.randint(0, 20) for _ in range(n)]
        ts += list(range(n))
    table = pa.table({
        "type": pa.array(["A"] * len(d)),
        "ts": pa.array([t * 1_000_000 for t in ts], pa.timestamp("us", tz="UTC")),
        "seq": pa.array(range(len(d))),
        "d": pa.array(d),
        "district": pa.array(["north"] * len(d)),
        "x": pa.array(xs),
    })
    plan_raw = optimizer.build_plan(optimizer.compile_workload(REPLAY_WORKLOAD))
    compiled = engine.load_plan(plan_raw)
    batches = table.sort_by([("d", "ascending"), ("ts", "ascending"), ("seq", "ascending")]).to_batches(max_chunksize=64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(replay, "CHUNK_ROWS", 1)  # every key its own chunk: two partial rows
        partial = [
            row
            for out in replay.evaluate_sorted_batches(plan_raw, ["r"], ["d"], iter(batches), 0, 2**62)
            for row in out.to_pylist()
        ]
    results = [r for r in partial if r["query"]]
    assert len(results) == 2 and all(isinstance(r["state_json"], str) for r in results)
    assert set(replay.engine_seconds(partial)["queries"]) == {"r"}  # each chunk's engine seconds ride along
    (row,) = replay.finish_rows(compiled, partial)["r"]
    count = total = trends = 0
    pos = 0
    for n in sizes:
        trends += 2**n - 1
        count += n * 2 ** (n - 1)
        total += 2 ** (n - 1) * sum(xs[pos : pos + n])
        pos += n
    assert row["COUNT(*)"] is engine.OVERFLOW and row["COUNT(A)"] is engine.OVERFLOW
    mean = float(Fraction(total, count))
    if max(sizes) <= 2000:
        assert row["AVG(A.x)"] == mean
    else:
        assert row["AVG(A.x)"] == pytest.approx(mean, rel=1e-15)
    assert row["AVG(A.x)"] == engine.evaluate(plan_raw, table)[0]["AVG(A.x)"]


def test_state_json_round_trip_keeps_far_numbers() -> None:
    state = WindowResult(
        trends=Far(3 << 300, 5000), counts={"A": 10**40}, sums={("A", "x"): Far(-7, -3)}, mins={("A", "x"): 1}
    )
    back = from_state(json.loads(json.dumps(to_state(state))))
    assert (back.trends.m, back.trends.e) == (state.trends.m, state.trends.e)
    assert back.counts == {"A": 10**40} and back.mins == {("A", "x"): 1}
    far = back.sums[("A", "x")]
    assert (far.m, far.e) == (-7, -3)


# -- Far numbers against exact rationals

_FAR_VALUES = st.one_of(
    st.integers(-(2**3000), 2**3000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.builds(Far, st.integers(-(2**300), 2**300), st.integers(-5000, 5000)),
)


def _exact_value(v: int | float | Far) -> Fraction:
    if isinstance(v, Far):
        return Fraction(v.m) * Fraction(2) ** v.e
    return Fraction(v)


def _close(got: Far, want: Fraction, scale: Fraction) -> bool:
    """``got`` is ``want`` up to 2**-250 of ``scale`` (the operands' magnitude)."""
    return abs(_exact_value(got) - want) <= scale / 2**250


@settings(max_examples=300, deadline=None)
@given(a=_FAR_VALUES, b=_FAR_VALUES)
def test_far_arithmetic_is_exact_to_its_precision(a: int | float | Far, b: int | float | Far) -> None:
    fa, fb = Far.of(a), Far.of(b)
    xa, xb = _exact_value(a), _exact_value(b)
    magnitude = abs(xa) + abs(xb)
    assert _close(fa + b, xa + xb, magnitude) and _close(a + fb, xa + xb, magnitude)
    assert _close(fa - b, xa - xb, magnitude) and _close(a - fb, xa - xb, magnitude)
    assert _close(fa * b, xa * xb, abs(xa * xb))
    assert (fa < b) == (xa < xb) or abs(xa - xb) <= magnitude / 2**250
    assert (fa == b) == (xa == xb) or abs(xa - xb) <= magnitude / 2**250
    if fa == xa:  # not rounded: hashes as the number it equals
        assert hash(fa) == hash(xa)
    if xb:
        try:
            q = fa.ratio(b)
        except OverflowError:
            assert abs(xa / xb) >= 2**1023
        else:
            assert q == pytest.approx(float(xa / xb), rel=1e-15, abs=1e-300)
