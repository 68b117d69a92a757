"""Every benchmark experiment runs at smoke size, writes its JSON and figure, and what it
compares agrees; the harness's command lines pass each experiment its own options.

No timing assertions: the numbers are whatever this machine measures. The Spark
experiments' smoke runs are in tests/integration/spark/ (test_bench_*_smoke.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.suite import EXPERIMENTS, SPARK_EXPERIMENTS, main, run_experiment

RECORD_KEYS = {
    "experiment", "title", "paper", "compares", "paper_reported", "size", "repeat", "seed", "status",
    "strategies", "strategies_ran", "figures", "ratios", "points", "agreement",
    "elapsed_s", "started_at", "command", "options", "machine",
}
MACHINE_KEYS = {"cpu_count", "cpu_model", "python", "libraries", "git_commit", "platform"}
FIGURE_KEYS = {"id", "title", "x_label", "x", "series", "ratios", "notes"}
# what each paper experiment runs: engine strategies and registered planners (common.STRATEGIES)
RUNS = {
    "greta_vs_twostep": {"twostep", "greta", "cogra"},
    "sharon": {"sharon", "sharon-greedy", "greta", "cogra", "twostep", "optimizer:sharon", "optimizer:sharon-greedy",
               "optimizer:sharon-exhaustive"},
    "hamlet": {"greta", "cogra", "hamlet-static", "hamlet-dynamic", "auto", "shared-all-static", "shared-all-dynamic",
               "eval-none", "eval-hamlet", "eval-hamlet-plan"},
    "gloria": {"greta", "cogra", "optimizer:none", "hamlet-dynamic", "auto", "gloria", "gloria-greedy",
               "optimizer:gloria", "optimizer:gloria-noprune", "optimizer:gloria-greedy"},
    "weaveshare": {"cogra", "auto", "shared-panes", "weaveshare"},
}
LOCAL = [n for n in EXPERIMENTS if n not in SPARK_EXPERIMENTS]
_RECORDS: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench")


def smoke(name: str, out_dir: Path) -> dict[str, Any]:
    """The record of ``name`` at smoke size, as written (each experiment runs once per module)."""
    if name not in _RECORDS:
        options = {"workdir": out_dir / "work-eval"} if name == "eval" else None
        record = run_experiment(name, size="smoke", out=out_dir, repeat=1, log=lambda line: None, options=options)
        data = json.loads((out_dir / f"{name}.json").read_text())
        assert record["agreement"] == data["agreement"]
        _RECORDS[name] = data
    return _RECORDS[name]


def test_the_registry_holds_every_experiment() -> None:
    assert set(LOCAL) >= {"greta_vs_twostep", "sharon", "hamlet", "gloria", "weaveshare", "engine", "eval",
                          "stats", "calibrate_sequence", "typed_sharing"}
    assert set(SPARK_EXPERIMENTS) == {"ingest", "replay", "replay_shared"} <= set(EXPERIMENTS)


@pytest.mark.parametrize("name", LOCAL)
def test_experiment_runs_at_smoke_size(name: str, out_dir: Path) -> None:
    data = smoke(name, out_dir)
    assert (out_dir / f"{name}.png").stat().st_size > 0
    assert RECORD_KEYS <= set(data), RECORD_KEYS - set(data)
    assert MACHINE_KEYS <= set(data["machine"])
    assert data["machine"]["cpu_count"] >= 1
    assert data["experiment"] == name and data["size"] == "smoke" and data["status"] == "ok"
    assert data["command"].startswith(f"python -m benchmarks {name} --size smoke")
    assert data["agreement"]["all_agree"], data["agreement"]["disagreements"]
    assert data["figures"]
    for fig in data["figures"]:
        assert FIGURE_KEYS <= set(fig)
        for strategy, values in fig["series"].items():
            assert strategy in data["strategies"], strategy
            assert len(values) == len(fig["x"])
        assert any(v is not None for values in fig["series"].values() for v in values), fig["id"]
    assert all(s["status"] == "ok" for s in data["strategies"].values())
    assert {p["strategy"] for p in data["points"]} <= set(data["strategies"])


@pytest.mark.parametrize("name", sorted(RUNS))
def test_paper_experiments_run_what_is_registered(name: str, out_dir: Path) -> None:
    from trendlake.optimizer.planners import PLANNERS

    data = smoke(name, out_dir)
    assert set(data["strategies"]) == RUNS[name], sorted(data["strategies"])
    for status in data["strategies"].values():  # a planner strategy names a registered planner
        if status["kind"] in ("shared", "planner"):
            assert status["planner"] in PLANNERS
    # each ran somewhere; the two-step reference and the exhaustive search may skip big points
    skips = {"twostep", "optimizer:sharon-exhaustive"}
    for strategy in RUNS[name]:
        statuses = [p["status"] for p in data["points"] if p["strategy"] == strategy]
        assert "ok" in statuses and set(statuses) <= ({"ok", "skipped"} if strategy in skips else {"ok"}), (
            strategy, statuses,
        )
    executed = [p for p in data["points"] if p["status"] == "ok" and "rows" in p]
    if executed:
        assert data["agreement"]["checked"] >= 1, "strategies that ran side by side were compared"
        assert any(p["rows"] > 0 for p in executed), "the data makes trends"


def test_sharon_records_its_plans_and_their_quality(out_dir: Path) -> None:
    data = smoke("sharon", out_dir)
    figures = {f["id"]: f for f in data["figures"]}
    sharon = ("optimizer:sharon", "optimizer:sharon-exhaustive", "optimizer:sharon-greedy")
    assert set(figures["optimizer"]["series"]) == set(figures["quality"]["series"]) == set(sharon)
    # every shared point says what its plan shared; the figure's extra counts the groups
    shared = [p for p in data["points"] if p["strategy"] in ("sharon", "sharon-greedy") and p["status"] == "ok"]
    assert shared and all({"groups", "shared_parts", "score", "estimated_cost"} <= set(p["plan"]) for p in shared)
    for fig in figures.values():
        for name in ("sharon", "sharon-greedy"):
            if name in fig["series"]:
                counts = [sum(p["plan"]["groups"].values()) for p in shared
                          if p["figure"] == fig["id"] and p["strategy"] == name]
                assert fig["extra"][f"{name} groups"] == counts
    assert any(p["plan"]["groups"] for p in shared), "the planners share somewhere on the workloads"
    # the exhaustive search finds Sharon's score where it does not refuse, and refuses with a reason
    quality = figures["quality"]["series"]
    both = [(a, b) for a, b in zip(quality["optimizer:sharon"], quality["optimizer:sharon-exhaustive"], strict=True)
            if b is not None]
    assert both and all(a == b for a, b in both)
    skipped = [p for p in data["points"] if p["strategy"] == "optimizer:sharon-exhaustive" and p["status"] != "ok"]
    assert all("more than 20" in p["reason"] for p in skipped)
    assert all(a >= b for a, b in zip(quality["optimizer:sharon"], quality["optimizer:sharon-greedy"], strict=True)
               if a is not None and b is not None)


def test_engine_experiment_sweeps_agree_and_time_the_kernel(out_dir: Path) -> None:
    data = smoke("engine", out_dir)
    assert [s["series"] for s in data["series"]] == ["selectivity 1", "selectivity 0.1", "sparse 2,1,1"]
    for series in data["series"]:
        assert [p["size"] for p in series["points"]] == [10, 100, 1000]
        for point in series["points"]:
            assert point["agree"] is True, point["mismatches"]
            assert set(point["strategies"]) == {"twostep", "greta", "cogra"}
            # the engines always run; the two-step reference at least at the smallest size
            assert all(point["strategies"][name]["status"] == "ok" for name in ("greta", "cogra"))
        assert series["points"][0]["strategies"]["twostep"]["status"] == "ok"
        assert "speedup_best_engine_vs_twostep" in series["points"][0]
    # the sparse series keeps the two-step reference feasible at every size
    assert data["summary"]["series"]["sparse 2,1,1"]["twostep_largest_size"] == 1000
    assert data["agreement"]["checked"] >= 9
    assert data["throughput"]
    for entry in data["throughput"]:
        assert entry["columnar"]["events_per_s"] > 0
    assert data["figures"][-1]["id"] == "throughput"


def test_eval_experiment_reads_the_file_it_describes(out_dir: Path) -> None:
    import pyarrow.csv as pcsv

    data = smoke("eval", out_dir)
    assert data["baseline"]["type_counts"] == {"A": 1000, "B": 2000, "C": 500, "N": 500}
    for key in ("count", "sum_avg"):
        run = data["runs"][key]
        assert run["result_rows"] > 0
        assert run["ratio_to_baseline"] == run["seconds"] / data["baseline"]["seconds"]
    table = pcsv.read_csv(out_dir / "work-eval" / "events_4000.csv")
    assert table.column("ts").to_pylist()[:21] == [0] * 20 + [1]
    assert set(table.column("g").to_pylist()) <= set(range(50))


def test_bench_cli_lists_and_rejects_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in EXPERIMENTS)
    assert main(["nope"]) == 2
    assert "unknown experiment 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # an option another experiment has
        main(["weaveshare", "--queries", "3"])
    assert stop.value.code == 2


def test_bench_cli_passes_the_experiments_own_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate_sequence", "--out", str(tmp_path), "--queries", "28", "--no-plot"]) == 0
    data = json.loads((tmp_path / "calibrate_sequence.json").read_text())
    assert data["options"] == {"queries": [28]} and "--queries 28" in data["command"]
    assert {r["queries_in_workload"] for r in data["rows"]} == {28}
    assert not (tmp_path / "calibrate_sequence.png").exists()
    assert "calibrate_sequence: ok" in capsys.readouterr().out


def test_trendlake_bench_runs_the_harness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trendlake.jobs.cli import main as trendlake

    assert trendlake(["bench", "typed_sharing", "--out", str(tmp_path), "--no-plot", "--same-threshold",
                      "--queries", "3", "--no-eval"]) == 0
    data = json.loads((tmp_path / "typed_sharing_same_threshold.json").read_text())
    assert data["facts"]["queries"] == 3 and data["options"]["same_threshold"] is True
    assert data["agreement"]["all_agree"]
    capsys.readouterr()
    assert trendlake(["bench", "nope"]) == 2
    assert "unknown experiment 'nope'" in capsys.readouterr().err
    assert trendlake(["bench", "engine", "--sparse", "1,2"]) == 2
    assert "three counts" in capsys.readouterr().err


def test_a_point_interleaves_its_repeats_and_names_the_plans_it_ran() -> None:
    from benchmarks.experiments.common import Context, Figure, Recorder, make_events, prepare

    ctx = Context("probe", size="smoke", repeat=2, log=lambda line: None)
    names = ["cogra", "hamlet-dynamic", "auto"]
    rec = Recorder(ctx, names)
    fig = rec.figure(Figure("probe", "probe", "queries", [1], names))
    one_query = "QUERY q RETURN COUNT(*) PATTERN SEQ(Request, Travel+) WITHIN 10 minutes;"
    rec.run_point(fig, 0, prepare(one_query), make_events(ctx, 300, 600))
    points = {p["strategy"]: p for p in rec.points}
    assert all(p["status"] == "ok" and len(p["times_s"]) == 2 for p in points.values())
    assert "plan_planner" not in points["cogra"]  # an engine strategy runs the workload's own plan
    # one query shares nothing: both planners ran the same plan, with no groups
    assert points["hamlet-dynamic"]["plan_planner"] == "hamlet" and points["hamlet-dynamic"]["plan_groups"] == []
    assert points["auto"]["plan_planner"] != "auto" and points["auto"]["same_plan_as"] == "hamlet-dynamic"
    assert rec.checks == 2 and not rec.disagreements


def test_cet_holds_the_memory_limit_and_partitions(out_dir: Path) -> None:
    """Every H-CET run stayed within its budget (tracemalloc peak), the budget made it cut the
    larger graphs, and no optimizer's plan beat exhaustive search or broke the budget."""
    data = smoke("cet", out_dir)
    limit = data["memory_limit"]
    assert limit["runs"] == len(data["figures"][0]["x"]) and limit["held"] == limit["runs"], limit["violations"]
    assert all(r["peak_bytes"] <= r["budget"] for r in limit["per_run"])
    assert any(r["algorithm"] == "h-cet" and r["cuts"] > 0 for r in limit["per_run"]), "the budget never bound"
    detect = [p for p in data["points"] if p["figure"] == "detect_cpu" and p["status"] == "ok"]
    assert {p["strategy"] for p in detect} == {"m-cet", "t-cet", "h-cet"}
    assert all(p["rows"] == p["complete_trends"] > 0 for p in detect)
    quality = next(f for f in data["figures"] if f["id"] == "partition_quality")
    assert quality["series"]["exhaustive"] == [1.0] * len(quality["x"])
    assert all(v is None or v >= 1.0 for name in ("branch-and-bound", "greedy") for v in quality["series"][name])
    # Fig. 8.1(c): overlapping windows were shared and reused graphlets; rows checked equal (no disagreement)
    overlap = [p for p in data["points"] if p["figure"] == "window_overlap" and p["strategy"] == "shared"]
    assert [p["x"] for p in overlap] == next(f for f in data["figures"] if f["id"] == "window_overlap")["x"]
    most = overlap[-1]["sharing"]
    assert most["shared_windows"] > 0 and most["graphlets_reused"] + most["graphlets_partly"] > 0, most
    assert not [d for d in data["agreement"]["disagreements"] if d["figure"] == "window_overlap"]
