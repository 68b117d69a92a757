"""What the demo prints about sharing: the nightly plan's decision and, from the newest replay
report in the lake, the measured engine seconds against the plan's estimates."""

from __future__ import annotations

import json
from pathlib import Path

from trendlake.jobs.demo import sharing_summary
from trendlake.jobs.optimize import optimize

from tests.unit.jobs.test_measured import STATS
from tests.unit.jobs.test_measured import TEXT as WORKLOAD


def test_the_summary_names_the_groups_and_compares_with_the_newest_report(tmp_path: Path) -> None:
    wl = tmp_path / "team.etq"
    wl.write_text(WORKLOAD)
    ref = optimize(tmp_path, wl, statistics=STATS)  # planner auto
    text = sharing_summary(tmp_path, wl)
    assert text.startswith(f"nightly plan {ref.plan_id}: planner auto kept ")
    assert "group g0 (kleene): q1, q2; estimated " in text and "rejected none" in text
    assert "estimate against measured" not in text  # no replay yet
    reports = tmp_path / "reports" / "team"
    reports.mkdir(parents=True)
    for run, seconds in (("r1", 9.0), ("r2", 0.3)):  # the newest (by run id) is the one compared
        (reports / f"{run}.json").write_text(json.dumps(
            {"plan_id": ref.plan_id, "run_id": run, "engine_seconds": {"groups": {"g0": seconds}, "queries": {"q3": 0.1}}}))
    text = sharing_summary(tmp_path, wl)
    assert "estimate against measured (replay run r2" in text and "measured 0.300s (75.0%)" in text
