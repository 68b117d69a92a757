"""The drill job on real Spark and Delta: stored trends equal ``engine.trends.drill`` on the same
events, every trend row is linked to its result row, a rerun changes nothing, a refused window
is reported while the others are written, and ``trendlake sql`` reads the table.

Works on copies of the shared sample lake (``lake_copy``); the reference reads every bronze
event (no pushdown) with delta-rs and runs the library directly.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from decimal import Decimal

import pytest
from trendlake.engine import trends
from trendlake.engine.timeline import format_ts
from trendlake.jobs import lake as lakelib
from trendlake.jobs.drill import count_column, drill
from trendlake.jobs.times import utc

from trendlake import engine

pytestmark = pytest.mark.spark


def bronze_events(lake) -> list:
    """Every bronze event, in (ts, seq) order, as the engine's events."""
    from trendlake.engine.columns import events_from_arrow

    table = lakelib.Lake(lake).read_arrow("bronze/rides").sort_by([("ts", "ascending"), ("seq", "ascending")])
    return events_from_arrow(table.drop_columns(["event_date", "source_file", "source_checksum"]))


def with_group(lake, plan, query):
    table = lakelib.Lake(lake).read_arrow(f"trends/{query}")
    spec = next(q for q in plan["queries"] if q["name"] == query)
    rows = table.to_pylist()
    for r in rows:
        r["group"] = tuple(r[g] for g in spec["group_by"])
    return rows


def by_window(rows) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for row in sorted(rows, key=lambda r: r["trend"]):
        out.setdefault((row["group"], row["window_start"]), []).append(row)
    return out


def result_rows(lake, spec) -> dict[tuple, dict]:
    table = lakelib.Lake(lake).read_arrow(f"results/{spec['name']}")
    return {(tuple(r[g] for g in spec["group_by"]), r["window_start"]): r for r in table.to_pylist()}


def reference(plan, events, query, group, start_us, **options) -> list[list[tuple]]:
    """The trends ``engine.trends.drill`` constructs for the window, as (id, type, variable, ts) lists."""
    q = engine.load_plan(plan).queries[query]
    d = trends.drill(q, events, group, start_us // q.slide, **options)
    return [[(e.seq, e.type, var, utc(e.ts)) for e, var in t] for t in d.trends()]


def as_tuples(row) -> list[tuple]:
    return [(e["id"], e["type"], e["variable"], e["ts"]) for e in row["events"]]


def test_top_windows_store_the_library_trends_linked_to_their_rows_and_rerun_changes_nothing(
    sample_lake, lake_copy, spark
) -> None:
    plan, query = sample_lake.plan, "stuck_trips"
    spec = next(q for q in plan["queries"] if q["name"] == query)
    report = drill(lake_copy, sample_lake.workload, query, top=3, spark=spark)
    assert [w.status for w in report.windows] == ["drilled"] * 3

    results = result_rows(lake_copy, spec)
    count = count_column(spec)
    counts = sorted((int(r[count]) for r in results.values()), reverse=True)
    assert [w.target.count for w in report.windows] == counts[:3], "the three rows of largest COUNT(*)"

    rows = with_group(lake_copy, plan, query)
    windows = by_window(rows)
    assert len(windows) == 3 and report.rows_written == len(rows) > 3
    events = bronze_events(lake_copy)
    for (group, start), got in windows.items():
        row = results[(group, start)]
        want = reference(plan, events, query, group, int(start.timestamp()) * 10**6, memory=report.memory)
        assert [as_tuples(r) for r in got] == want, f"window {group} {start}"
        assert [r["trend"] for r in got] == list(range(1, len(want) + 1))
        for r in got:  # linked to the result row
            assert (r["query"], r["window_end"], r["plan_id"], r["replay_run_id"]) == (
                query, row["window_end"], row["plan_id"], row["replay_run_id"])
            assert r["complete"] is True and r["drill_run_id"] == report.run_id
            assert r["window_date"] == utc(int(row["window_end"].timestamp()) * 10**6 - 1).date()

    # the same drill again: one new version, the same rows but for the run's id and time
    lake = lakelib.Lake(lake_copy)
    version = lake.version(f"trends/{query}")

    def comparable(rs):
        return sorted(str({k: v for k, v in r.items() if k not in ("drill_run_id", "computed_at")}) for r in rs)

    again = drill(lake_copy, sample_lake.workload, query, top=3, spark=spark)
    assert lake.version(f"trends/{query}") == version + 1
    assert comparable(with_group(lake_copy, plan, query)) == comparable(rows)
    assert again.run_id != report.run_id

    # readable with trendlake sql, every trend row joined to its result row
    from trendlake.jobs.sql import run_sql

    joined = run_sql(spark, lake_copy, f"""
        SELECT t.trend, size(t.events) AS n, t.events[0].type AS first_type, r.{count} AS count, t.plan_id = r.plan_id AS same_plan
        FROM trends_{query} t JOIN results_{query} r USING (district, window_start)""", as_arrow=True).to_pylist()
    assert len(joined) == len(rows)
    assert all(j["same_plan"] and j["first_type"] == "Request" and j["n"] >= 2 for j in joined)


def test_listed_windows_with_all_trends_count_the_aggregation(sample_lake, lake_copy, spark) -> None:
    """``--all`` over listed windows of other semantics (contiguous: nothing pushed down; next-match;
    aliases with negation): as many trends as the row's COUNT(*), and the library's trends."""
    plan = sample_lake.plan
    events = bronze_events(lake_copy)
    for query in ("accelerating_approach", "cancelled_on_the_way", "rebooked_riders"):
        spec = next(q for q in plan["queries"] if q["name"] == query)
        results = result_rows(lake_copy, spec)
        count = count_column(spec)
        chosen = sorted(results.items(), key=lambda kv: (-int(kv[1][count]), kv[0][1]))[:2]
        texts = [",".join(f"{g}={v}" for g, v in zip(spec["group_by"], group, strict=True)) + "@" +
                 format_ts(int(start.timestamp()) * 10**6) for (group, start), _ in chosen]
        report = drill(lake_copy, sample_lake.workload, query, windows=texts, complete=False, spark=spark)
        assert [w.status for w in report.windows] == ["drilled"] * len(chosen)
        windows = by_window(with_group(lake_copy, plan, query))
        assert set(windows) == {key for key, _ in chosen}
        for (group, start), row in chosen:
            got = windows[(group, start)]
            assert len(got) == int(row[count]) == report.windows[[k for k, _ in chosen].index((group, start))].count_all
            want = reference(plan, events, query, group, int(start.timestamp()) * 10**6, complete=False,
                             memory=report.memory)
            assert [as_tuples(r) for r in got] == want
            assert all(r["complete"] is False for r in got)


def test_overlapping_listed_windows_share_graphlets_and_store_each_windows_trends(
    sample_lake, lake_copy, spark
) -> None:
    """Three consecutive (overlapping) windows of one district: drilled as one cluster on a shared
    graph, each window's rows exactly the library's for that window alone."""
    plan, query = sample_lake.plan, "stuck_trips"
    spec = next(q for q in plan["queries"] if q["name"] == query)
    slide = spec["window"]["slide_us"]
    results = result_rows(lake_copy, spec)
    starts = {}
    for group, start in results:
        starts.setdefault(group, set()).add(int(start.timestamp()) * 10**6)
    chosen = next((g, s) for g, ss in sorted(starts.items()) for s in sorted(ss)
                  if s + slide in ss and s + 2 * slide in ss)
    group, first = chosen
    texts = [f"district={group[0]}@{format_ts(first + i * slide)}" for i in range(3)]
    report = drill(lake_copy, sample_lake.workload, query, windows=texts, spark=spark)
    assert [w.status for w in report.windows] == ["drilled"] * 3
    assert all(w.shared for w in report.windows), [w.graphlets for w in report.windows]
    assert sum(w.graphlets["reused"] + w.graphlets["partly"] for w in report.windows) > 0
    windows = by_window(with_group(lake_copy, plan, query))
    events = bronze_events(lake_copy)
    for w in report.windows:
        got = windows.get((group, utc(w.target.start)), [])
        want = reference(plan, events, query, group, w.target.start, memory=report.memory)
        assert [as_tuples(r) for r in got] == want and len(want) == w.listed


def test_a_refused_window_is_reported_and_the_others_are_written(sample_lake, lake_copy, spark) -> None:
    """With a budget between what two windows need, the CLI writes one, reports the other with its
    COUNT(*) in one line, exits 1, and replaces the refused window's earlier rows by none."""
    from trendlake.jobs.cli import main

    plan, query = sample_lake.plan, "stuck_trips"
    spec = next(q for q in plan["queries"] if q["name"] == query)
    q = engine.load_plan(plan).queries[query]
    events = bronze_events(lake_copy)
    count = count_column(spec)
    rows = sorted(result_rows(lake_copy, spec).items(), key=lambda kv: (-int(kv[1][count]), kv[0][1]))
    big, small = rows[0], rows[-1]

    def least_memory(key) -> int:  # the smallest budget the library accepts for the window
        (group, start), _ = key
        lo, hi = 1, 2**30
        while lo < hi:
            mid = (lo + hi) // 2
            try:
                trends.drill(q, events, group, int(start.timestamp()) * 10**6 // q.slide, memory=mid)
                hi = mid
            except trends.TrendsRefused:
                lo = mid + 1
        return lo

    need_big, need_small = least_memory(big), least_memory(small)
    assert need_small < need_big, "the sample's largest and smallest windows need different budgets"

    def text(key) -> str:
        (group, start), _ = key
        return f"district={group[0]}@{format_ts(int(start.timestamp()) * 10**6)}"

    base = ["drill", "--lake", str(lake_copy), "--workload", str(sample_lake.workload), "--query", query]
    assert main([*base, "--window", text(big)]) == 0
    assert set(by_window(with_group(lake_copy, plan, query))) == {big[0]}
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([*base, "--window", text(big), "--window", text(small), "--memory", str(need_big - 1)])
    assert code == 1
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"{text(big)}: refused (COUNT(*) {int(big[1][count])}): ")
    assert f"{int(big[1][count])} trends, the aggregation's COUNT(*)" in lines[0]
    assert lines[1].startswith(f"{text(small)}: ") and "refused" not in lines[1]
    assert set(by_window(with_group(lake_copy, plan, query))) == {small[0]}, "the refused window's rows are gone"
    assert isinstance(big[1][count], Decimal)


def test_bad_windows_are_refused_before_anything_runs(sample_lake, lake_copy, spark) -> None:
    from trendlake.jobs.drill import DrillInputError

    wl = sample_lake.workload
    cases = {
        "district=center": "expected GROUP=VALUE,...@START",
        "district=center@2026-01-01T00:01:00Z": "no window of query stuck_trips starts then",
        "driver=3@2026-01-01T00:00:00Z": "groups by district, not 'driver'",
        "district=nowhere@2026-01-01T00:00:00Z": "results.stuck_trips has no row for that group and window",
    }
    for window, message in cases.items():
        with pytest.raises(DrillInputError, match=message):
            drill(lake_copy, wl, "stuck_trips", windows=[window], spark=spark)
    with pytest.raises(DrillInputError, match="no query 'nope'"):
        drill(lake_copy, wl, "nope", top=1, spark=spark)
    assert not lakelib.Lake(lake_copy).exists("trends/stuck_trips")
