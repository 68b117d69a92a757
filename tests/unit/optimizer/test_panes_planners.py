"""The planners of the ``panes`` kind: incremental planning against a stored plan, and the
nightly rule for when to plan incrementally."""

from __future__ import annotations

from pathlib import Path

import pytest
from trendlake.engine.shared.panes import available
from trendlake.jobs.optimize import changed_little, optimize, previous_plan, workload_name
from trendlake.optimizer import parse_workload
from trendlake.optimizer.plan import build_plan

from trendlake import engine

pytestmark = pytest.mark.skipif(not available(), reason="the compiled panes pass is not built")

DENSE = {"pane_us": 1_000_000, "types": {"A": {"rate_mean": 2.0}, "B": {"rate_mean": 40.0}}}
WINDOWS = ((30, 5), (60, 10), (30, 10), (120, 30), (60, 15))


def _text(windows: tuple[tuple[int, int], ...]) -> str:
    return "\n".join(f"QUERY q{w}_{s} RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN {w} seconds SLIDE {s} seconds;"
                     for w, s in windows)


def _rows(n: int) -> list[dict]:
    return [{"type": "A" if i % 7 == 0 else "B", "ts": i // 2, "seq": i, "x": 0} for i in range(n)]


def test_a_new_query_is_woven_into_the_stored_trees() -> None:
    before = build_plan(parse_workload(_text(WINDOWS[:4])), planner="weaveshare", statistics=DENSE)
    assert before["sharing"] and all(g["kind"] == "panes" for g in before["sharing"])
    text = _text(WINDOWS)
    after = build_plan(parse_workload(text), planner="weaveshare", statistics=DENSE, previous=before)
    scratch = build_plan(parse_workload(text), planner="weaveshare", statistics=DENSE)
    assert "-incremental-" in after["plan_id"] and "-incremental-" not in scratch["plan_id"]
    assert after["sharing"] and all(g["parameters"] == {"woven": 1.0} for g in after["sharing"])
    assert all("woven" not in g["parameters"] for g in scratch["sharing"])
    engine.load_plan(after)
    table = engine.table_from_rows(_rows(400))
    alone = build_plan(parse_workload(text), planner="none")
    assert engine.evaluate(after, table) == engine.evaluate(alone, table)


def test_queries_dropped_since_the_stored_plan_leave_its_trees() -> None:
    before = build_plan(parse_workload(_text(WINDOWS)), planner="weaveshare", statistics=DENSE)
    after = build_plan(parse_workload(_text(WINDOWS[1:])), planner="weaveshare", statistics=DENSE, previous=before)
    assert "q30_5" in {q for g in before["sharing"] for q in g["queries"]}
    # the stored trees lose the dropped query and are kept (woven), not planned anew
    assert after["sharing"] and all(g["parameters"] == {"woven": 1.0} for g in after["sharing"])
    engine.load_plan(after)


def test_the_nightly_plan_is_incremental_when_the_workload_changed_little(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    wl = tmp_path / "dash.etq"
    wl.write_text(_text(WINDOWS[:4]))
    assert previous_plan(lake, workload_name(wl)) is None
    assert not changed_little(None, wl)  # no plan yet: from scratch
    first = optimize(lake, wl, statistics=DENSE, planner="weaveshare")
    previous = previous_plan(lake, workload_name(wl))
    assert previous is not None and previous["plan_id"] == first.plan_id
    wl.write_text(_text(WINDOWS))  # one query of five added: 20%
    assert changed_little(previous, wl)
    second = optimize(lake, wl, statistics=DENSE, planner="weaveshare", previous=previous)
    assert "-incremental-" in second.plan_id
    assert previous_plan(lake, workload_name(wl))["plan_id"] == second.plan_id
    wl.write_text(_text(WINDOWS[:2]))  # three of five gone
    assert not changed_little(previous_plan(lake, workload_name(wl)), wl)



def _partitioned(partitions: int) -> tuple[str, dict]:
    """The five windows' queries partitioned by g (a state of 4 counts), and the DENSE rates
    spread over ``partitions`` partitions of g."""
    text = "\n".join(f"QUERY q{w}_{s} RETURN g, COUNT(*), COUNT(B) PATTERN SEQ(A, B+) GROUP-BY g "
                     f"WITHIN {w} seconds SLIDE {s} seconds;" for w, s in WINDOWS)
    return text, dict(DENSE, partitions=[{"partition_by": ["g"], "count": partitions}])


def _estimate(partitions: int) -> tuple[float, float]:
    from trendlake.optimizer.planners.panes import estimate
    from trendlake.optimizer.statistics import Statistics

    text, stats = _partitioned(partitions)
    entries = {q["name"]: q for q in build_plan(parse_workload(text), planner="none")["queries"]}
    return estimate(entries, list(entries), Statistics.of(stats))


def test_sharing_panes_is_estimated_dearer_as_the_events_spread_over_more_partitions() -> None:
    """A window carries its state through each pane with an event in its own partition: the
    same events over more partitions leave more panes with an event, so more products. The
    shared estimate grows with the partitions (the estimate alone does not change): cheaper
    than alone with one partition, dearer where each partition's panes hold far less than one
    event (42 events a second, 5-second panes, 4096 partitions), as a product of a 4-count
    state (20 multiply-adds) costs about one step of a window alone."""
    got = [_estimate(parts) for parts in (1, 4, 16, 64, 256, 1024, 4096)]
    shared = [s for s, _ in got]
    assert len({alone for _, alone in got}) == 1
    assert shared == sorted(shared) and shared[0] < shared[-1]
    assert got[0][0] < got[0][1] and got[-1][0] > got[-1][1]


@pytest.mark.parametrize("planner", ["shared-panes", "weaveshare", "auto"])
def test_no_panes_group_where_each_partition_has_about_one_event_per_pane(planner: str) -> None:
    for parts, shares in ((1, True), (4096, False)):
        text, stats = _partitioned(parts)
        plan = build_plan(parse_workload(text), planner=planner, statistics=stats)
        assert any(g["kind"] == "panes" for g in plan["sharing"]) is shares, (parts, plan["sharing"])
