"""The drill job's parts that need no Spark: ``--window`` texts, the top-K order, the executors'
per-window drilling (against ``engine.trends.drill`` on the same events) and the DAG setting.
The job on Spark and Delta: tests/integration/spark/test_drill.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from trendlake.engine import trends
from trendlake.jobs import drill as job
from trendlake.jobs.drill import DrillInputError, Target, parse_window, same_value, top_targets
from trendlake.jobs.pipeline import Settings, drill_top

from trendlake import engine

WORKLOAD = """QUERY q RETURN g, h, COUNT(*) PATTERN SEQ(A, B+, C)
WHERE [g, h] GROUP-BY g, h WITHIN 10 seconds SLIDE 5 seconds;
"""


def plan(tmp=None) -> dict:
    import tempfile
    from pathlib import Path

    from trendlake.jobs.evaluate import compile_plan

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.etq"
        path.write_text(WORKLOAD)
        return compile_plan(path, None)[0]


@pytest.fixture(scope="module")
def spec() -> dict:
    return plan()["queries"][0]


def test_a_window_text_names_every_group_value_and_a_window_start(spec) -> None:
    assert parse_window("g=x,h=3@1970-01-01T00:00:05Z", spec) == ({"g": "x", "h": "3"}, 5_000_000)
    assert parse_window(" h=a@b , g = y @10", spec) == ({"h": "a@b ", "g": " y "}, 10_000_000)


@pytest.mark.parametrize(("text", "message"), [
    ("g=x,h=3", "expected GROUP=VALUE,...@START"),
    ("g=x,h=3@", "expected GROUP=VALUE,...@START"),
    ("g=x,h=3@noon", "'noon' is not a time stamp"),
    ("g=x,h=3@7", "no window of query q starts then (windows start every 5 seconds"),
    ("g=x@5", "missing h"),
    ("g=x,h=3,k=1@5", "groups by g, h, not 'k'"),
    ("g=x,g=y,h=1@5", "g given twice"),
    ("g,h=1@5", "expected ATTRIBUTE=VALUE, got 'g'"),
])
def test_a_bad_window_text_is_one_clear_error(spec, text, message) -> None:
    with pytest.raises(DrillInputError, match="^--window") as err:
        parse_window(text, spec)
    assert message in str(err.value)


def test_group_values_compare_as_the_column_types_them() -> None:
    assert same_value(3, "3") and same_value(3, " 3") and not same_value(3, "3.5") and not same_value(3, "x")
    assert same_value(2.5, "2.50") and not same_value(2.5, "two")
    assert same_value(True, "true") and not same_value(True, "1")
    assert same_value("a b", "a b") and not same_value("a", " a")


def target(count, start, group=("x",), overflowed=False) -> Target:
    return Target(group, start, start + 10, count, overflowed, "p", "r")


def test_top_k_is_the_largest_counts_then_the_earlier_window_then_the_group() -> None:
    rows = [target(5, 20), target(9, 30), target(5, 10, ("b",)), target(5, 10, ("a",)), target(None, 40, overflowed=True),
            target(1, 0)]
    assert top_targets(rows, 4) == [rows[4], rows[1], rows[3], rows[2]]
    assert top_targets(rows, 10)[-2:] == [rows[0], rows[5]]
    assert top_targets(list(reversed(rows)), 3) == top_targets(rows, 3)


def test_the_predicate_quotes_text_values(spec) -> None:
    t = Target(("it's", 3), 5_000_000, 15_000_000, 2, False, "p", "r")
    pred = job.windows_predicate(spec, [t, Target(("b", -1), 0, 10_000_000, 1, False, "p", "r")])
    assert pred == (
        "(window_date = '1970-01-01' AND window_start = '1970-01-01 00:00:05.000000' AND g = 'it''s' AND h = 3) OR "
        "(window_date = '1970-01-01' AND window_start = '1970-01-01 00:00:00.000000' AND g = 'b' AND h = -1)")


def events_table(rows: list[tuple[int, str, str, int, int]]):
    """An Arrow table of (cluster number, type, g, h, ts seconds), as the job's Spark frame holds them."""
    import pyarrow as pa

    ordered = sorted(enumerate(rows), key=lambda ir: (ir[1][0], ir[1][4], ir[0]))
    return pa.table({
        "type": [r[1] for _, r in ordered], "ts": pa.array([r[4] * 10**6 for _, r in ordered], pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        "seq": pa.array([i for i, _ in ordered], pa.int64()), "g": [r[2] for _, r in ordered],
        "h": pa.array([r[3] for _, r in ordered], pa.int64()), "_c": pa.array([r[0] for _, r in ordered], pa.int32()),
    })


def test_each_window_is_drilled_as_the_library_drills_its_events(monkeypatch) -> None:
    """Windows arrive contiguous in one task; each gets an info row and its trends, in batches."""
    import pyarrow as pa
    from trendlake.engine.columns import events_from_arrow

    monkeypatch.setattr(job, "ROWS_PER_BATCH", 2)
    p = plan()
    stream = [("A", 0), ("B", 1), ("B", 2), ("B", 3), ("C", 4), ("A", 6), ("B", 7), ("C", 8)]
    rows = [(0, t, "x", 1, s) for t, s in stream] + [(1, t, "y", 2, s + 5) for t, s in stream[:5]]
    targets = [(("x", 1), 0), (("y", 2), 5_000_000)]
    table = events_table(rows)
    out = pa.Table.from_batches(list(job.drill_windows(p, "q", targets, table, False, 2**30, None)))
    assert out.schema == job.arrow_generic_schema()
    q = engine.load_plan(p).queries["q"]
    for w, (group, start) in enumerate(targets):
        mine = out.filter(pa.compute.equal(out.column("_w"), w)).to_pylist()
        info = json.loads(mine[-1]["info"])
        evs = events_from_arrow(table.filter(pa.compute.equal(table.column("_c"), w)).drop_columns(["_c"]))
        d = trends.drill(q, evs, group, start // q.slide, complete=False, memory=2**30)
        assert mine[-1]["trend"] == 0 and info["status"] == "drilled" and info["count_all"] == d.count_all > 1
        want = [[(e.seq, e.type, v, datetime.fromtimestamp(e.ts / 1e6, UTC)) for e, v in t] for t in d.trends()]
        got = [[(e["id"], e["type"], e["variable"], e["ts"]) for e in r["events"]] for r in mine[:-1]]
        assert got == want and [r["trend"] for r in mine[:-1]] == list(range(1, len(want) + 1))


def test_overlapping_windows_of_a_group_share_and_equal_each_window_alone() -> None:
    """Windows of one group that overlap form a cluster: its span's events arrive once (``_c``),
    its windows are drilled by start on one graph with shared graphlets, each exactly as the
    library drills the window alone; a window of another group stays alone."""
    import pyarrow as pa
    from trendlake.engine.columns import events_from_arrow

    p = plan()
    q = engine.load_plan(p).queries["q"]
    stream = [("A", 0), ("B", 1), ("B", 3), ("A", 4), ("A", 5), ("B", 6), ("C", 7), ("B", 8), ("C", 9), ("B", 11), ("C", 13),
              ("A", 15), ("B", 16), ("C", 18)]
    targets = [(("x", 1), 10_000_000), (("x", 1), 0), (("y", 2), 0), (("x", 1), 5_000_000)]
    clusters = job.target_clusters(targets, q.within)
    assert clusters == [[1, 3, 0], [2]]
    rows = [(0, t, "x", 1, s) for t, s in stream] + [(1, t, "y", 2, s) for t, s in stream if s < 10]
    table = events_table(rows)
    out = pa.Table.from_batches(list(job.drill_windows(p, "q", targets, table, True, 2**30, None, clusters)))
    for w, (group, start) in enumerate(targets):
        mine = out.filter(pa.compute.equal(out.column("_w"), w)).to_pylist()
        info = json.loads(mine[-1]["info"])
        c = next(i for i, ws in enumerate(clusters) if w in ws)
        evs = events_from_arrow(table.filter(pa.compute.equal(table.column("_c"), c)).drop_columns(["_c"]))
        d = trends.drill(q, evs, group, start // q.slide, memory=2**30)
        want = [[(e.seq, v) for e, v in t] for t in d.trends()]
        assert want and [[(e["id"], e["variable"]) for e in r["events"]] for r in mine[:-1]] == want
        assert info["shared"] == (group == ("x", 1)) and info["listed"] == d.count
    infos = [json.loads(r["info"]) for r in out.to_pylist() if r["trend"] == 0]
    assert sum(i.get("graphlets_reused", 0) + i.get("graphlets_partly", 0) for i in infos) > 0


def least_memory(q, events, group) -> int:
    """The smallest budget the library accepts for window 0 of ``group`` (every trend)."""
    lo, hi = 1, 2**30
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            trends.drill(q, events, group, 0, complete=False, memory=mid)
            hi = mid
        except trends.TrendsRefused:
            lo = mid + 1
    return lo


def test_a_window_over_the_budget_is_refused_and_the_next_still_runs() -> None:
    import pyarrow as pa
    from trendlake.engine.columns import events_from_arrow

    p = plan()
    q = engine.load_plan(p).queries["q"]
    rows = [(0, t, "x", 1, s) for t, s in [("A", 0), *[("B", i) for i in range(1, 9)], ("C", 9)]]
    rows += [(1, t, "y", 2, s) for t, s in [("A", 0), ("B", 1), ("C", 2)]]
    table = events_table(rows)
    targets = [(("x", 1), 0), (("y", 2), 0)]

    def events(w):
        return events_from_arrow(table.filter(pa.compute.equal(table.column("_c"), w)).drop_columns(["_c"]))

    need = [least_memory(q, events(w), group) for w, (group, _) in enumerate(targets)]
    assert need[1] < need[0]
    out = pa.Table.from_batches(list(job.drill_windows(p, "q", targets, table, False, need[0] - 1, None))).to_pylist()
    first, second = json.loads(out[0]["info"]), json.loads(out[-1]["info"])
    assert first["status"] == "refused" and "255 trends, the aggregation's COUNT(*)" in first["message"]
    assert second["status"] == "drilled" and second["count_all"] == 1 and [r["_w"] for r in out[1:]] == [1, 1]


def test_the_dag_drills_only_when_told(monkeypatch) -> None:
    class Run:
        def __init__(self, conf):
            self.conf = conf

    monkeypatch.delenv("TRENDLAKE_DRILL_TOP", raising=False)
    assert drill_top({"dag_run": Run({})}) == 0, "off by default"
    monkeypatch.setenv("TRENDLAKE_DRILL_TOP", "3")
    monkeypatch.setenv("TRENDLAKE_DRILL_LIMIT", "0")
    monkeypatch.setenv("TRENDLAKE_DRILL_MEMORY", "64M")
    s = Settings.from_env()
    assert (s.drill_top, s.drill_limit, s.drill_memory) == (3, None, 64 * 2**20)
    assert drill_top({"dag_run": Run({})}) == 3
    assert drill_top({"dag_run": Run({"drill_top": 0})}) == 0
    with pytest.raises(ValueError, match='replay conf "drill_top" must be a whole number >= 0'):
        drill_top({"dag_run": Run({"drill_top": "2"})})
    for variable, value in (("TRENDLAKE_DRILL_TOP", "-1"), ("TRENDLAKE_DRILL_LIMIT", "many"),
                            ("TRENDLAKE_DRILL_MEMORY", "lots")):
        monkeypatch.setenv(variable, value)
        with pytest.raises(ValueError, match=f"^{variable}="):
            Settings.from_env()
        monkeypatch.setenv(variable, "1")

