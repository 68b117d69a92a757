"""The engine benchmark's smoke mode runs end to end and its strategies agree (no timing checks)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import engine_bench


def test_engine_bench_smoke(tmp_path: Path) -> None:
    assert engine_bench.main(["--smoke", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "engine_bench.json").read_text())
    assert (tmp_path / "engine_bench.png").stat().st_size > 0
    for key in (
        "benchmark",
        "query",
        "stream",
        "config",
        "environment",
        "series",
        "throughput",
        "agree",
        "summary",
    ):
        assert key in report, key
    assert report["agree"] is True
    assert {"python", "numpy", "cpu", "platform"} <= report["environment"].keys()
    assert [s["series"] for s in report["series"]] == [
        "selectivity 1",
        "selectivity 0.1",
        "sparse 2,1,1",
    ]
    for series in report["series"]:
        assert [p["size"] for p in series["points"]] == [10, 100, 1000]
        for point in series["points"]:
            assert point["agree"] is True, point["mismatches"]
            assert set(point["strategies"]) == set(engine_bench.STRATEGIES)
            for entry in point["strategies"].values():
                assert entry["status"] == "ok" or entry["status"].startswith("skipped")
                if entry["status"] == "ok":
                    assert entry["best_s"] > 0 and entry["events_per_s"] > 0
            # the engines always run; the two-step reference at least at the smallest size
            assert all(point["strategies"][name]["status"] == "ok" for name in engine_bench.ENGINES)
        assert series["points"][0]["strategies"]["twostep"]["status"] == "ok"
        assert "speedup_best_engine_vs_twostep" in series["points"][0]
    # the sparse series keeps the two-step reference feasible at every size
    assert report["summary"]["series"]["sparse 2,1,1"]["twostep_largest_size"] == 1000
    assert report["throughput"]
    for entry in report["throughput"]:
        assert entry["columnar"]["events_per_s"] > 0
        assert entry["columnar_no_overflow_skip"]["events_per_s"] > 0
