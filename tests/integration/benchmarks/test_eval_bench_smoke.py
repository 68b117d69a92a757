"""The eval benchmark's small run end to end: both workloads evaluated, ratios recorded,
and its event file is what the benchmark says (types, 20 events per time stamp)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.csv as pcsv

from benchmarks import eval_bench


def test_eval_bench_small_run(tmp_path: Path) -> None:
    assert eval_bench.main(["--events", "4000", "--repeat", "1", "--out", str(tmp_path),
                            "--workdir", str(tmp_path / "work")]) == 0
    report = json.loads((tmp_path / "eval_bench.json").read_text())
    assert report["baseline"]["type_counts"] == {"A": 1000, "B": 2000, "C": 500, "N": 500}
    for key in ("count", "sum_avg"):
        run = report["runs"][key]
        assert run["result_rows"] > 0
        assert run["ratio_to_baseline"] == run["seconds"] / report["baseline"]["seconds"]
    table = pcsv.read_csv(tmp_path / "work" / "events_4000.csv")
    assert table.column("ts").to_pylist()[:21] == [0] * 20 + [1]
    assert set(table.column("g").to_pylist()) <= set(range(50))
