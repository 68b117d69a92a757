"""`python -m benchmarks replay --size smoke`: replay vs the I/O baseline on real Spark, with the suite's record."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.spark


def test_bronze_built_directly_has_ingests_schema_and_partitioning(tmp_path, sample_lake) -> None:
    """The benchmark writes bronze from Arrow; it must look exactly like what `ingest` commits."""
    from trendlake.jobs.lake import Lake

    from benchmarks.experiments.replay import build_bronze

    facts = build_bronze(tmp_path / "direct", 500, seed=3)
    assert facts["events"] == 500
    direct, ingested = Lake(tmp_path / "direct"), Lake(sample_lake.lake)  # the sample lake's bronze is ingest's
    a, b = direct.arrow_schema("bronze/rides"), ingested.arrow_schema("bronze/rides")
    assert a.names == b.names
    assert [str(f.type) for f in a] == [str(f.type) for f in b]
    assert direct.partition_columns("bronze/rides") == ingested.partition_columns("bronze/rides") == ["event_date"]
    rows = direct.read_arrow("bronze/rides", columns=["seq", "event_date"])
    assert sorted(rows.column("seq").to_pylist()) == list(range(500))


def test_replay_bench_smoke_writes_the_record(tmp_path, spark) -> None:
    from benchmarks.suite import run_experiment

    record = run_experiment("replay", size="smoke", out=tmp_path, log=lambda line: None)
    assert record["status"] == "ok"
    bench = record["replay_bench"]
    assert bench["queries"] == 50
    assert len(bench["partition_keys"]) >= 2
    assert bench["events"] == 20_000
    assert bench["median_s"]["replay"] > 0 and bench["median_s"]["baseline"] > 0
    assert bench["ratio_replay_over_baseline"] == pytest.approx(
        bench["median_s"]["replay"] / bench["median_s"]["baseline"], rel=1e-2)
    # the baseline counted every event it read once per distinct partition key
    assert set(bench["baseline_events_per_key"]) == {",".join(k) for k in bench["partition_keys"]}
    assert all(0 < n <= bench["events"] for n in bench["baseline_events_per_key"].values())
    # replay's result tables equal the engine's own evaluation of the same events
    assert record["agreement"]["checked"] == 50
    assert record["agreement"]["all_agree"], record["agreement"]["disagreements"]
    assert bench["replay_result_rows"] > 0
    saved = json.loads((tmp_path / "replay.json").read_text())
    assert saved["replay_bench"]["ratio_replay_over_baseline"] == bench["ratio_replay_over_baseline"]
    assert saved["machine"]["cpu_count"]
    assert (tmp_path / "replay.png").stat().st_size > 0


def test_replay_shared_bench_smoke_agrees_and_shares(tmp_path, spark) -> None:
    """`python -m benchmarks replay_shared --size smoke`: the hamlet plan shares, and its result
    tables equal those of the plan sharing nothing."""
    from benchmarks.suite import run_experiment

    record = run_experiment("replay_shared", size="smoke", out=tmp_path, repeat=1, log=lambda line: None)
    data = json.loads((tmp_path / "replay_shared.json").read_text())
    assert data["status"] == "ok" and record["agreement"] == data["agreement"]
    assert data["agreement"]["all_agree"], data["agreement"]["disagreements"]
    assert data["replay_shared"]["groups"], "the hamlet plan must share on this workload"
    assert {p["strategy"] for p in data["points"]} == {"replay-none", "replay-hamlet", "replay-forced"}
    assert all(p["median_s"] > 0 and p["result_rows"] > 0 for p in data["points"])
