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
