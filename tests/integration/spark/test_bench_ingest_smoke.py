"""The ingest benchmark's smoke runs: both ways of writing the typing rules, and both ways of
reading a CSV file, ingest the same file into the same rows (the benchmark fails otherwise),
and the records are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import ingest_bench

pytestmark = pytest.mark.spark


def test_ingest_bench_smoke_run(spark, tmp_path: Path) -> None:
    from trendlake.jobs import ingest

    assert ingest_bench.main(["--events", "300", "--warmup", "0", "--repeat", "1", "--out", str(tmp_path),
                              "--workdir", str(tmp_path / "work")]) == 0
    assert ingest.LAYERED, "the benchmark restores what ships"
    report = json.loads((tmp_path / "ingest_bench.json").read_text())
    assert report["rows_read"] == 300 + len(ingest_bench.BAD_ROWS)
    assert report["rows_bad"] == len(ingest_bench.BAD_ROWS)  # quarantined alike both ways (or exit 1)
    assert {m: len(t) for m, t in report["seconds"].items()} == {"layered": 1, "inline": 1}
    assert report["inline_over_layered"] == report["median_seconds"]["inline"] / report["median_seconds"]["layered"]


def test_ingest_bench_smoke_run_of_the_csv_reads(spark, tmp_path: Path) -> None:
    from trendlake.jobs import ingest

    assert ingest_bench.main(["--compare", "csv-read", "--events", "300", "--warmup", "0", "--repeat", "1",
                              "--out", str(tmp_path), "--workdir", str(tmp_path / "work")]) == 0
    assert ingest.SPLIT_CSV, "the benchmark restores what ships"
    report = json.loads((tmp_path / "ingest_bench_csv_read.json").read_text())
    assert report["file_read_in_splits"], "else the benchmark compares the whole read with itself"
    assert report["rows_bad"] == len(ingest_bench.BAD_ROWS)
    assert {m: len(t) for m, t in report["seconds"].items()} == {"split": 1, "whole": 1}
    assert report["whole_over_split"] == report["median_seconds"]["whole"] / report["median_seconds"]["split"]
