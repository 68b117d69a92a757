"""The ingest benchmark's smoke run: both ways of writing the typing rules ingest the
same file into the same rows (the benchmark fails otherwise), and the record is written."""

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
