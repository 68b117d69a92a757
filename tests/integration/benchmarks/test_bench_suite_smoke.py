"""Every benchmark experiment runs at smoke size, writes its JSON and figure, and its strategies agree.

No timing assertions: the numbers are whatever this machine measures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.suite import EXPERIMENTS, main, run_experiment

RECORD_KEYS = {
    "experiment", "title", "paper", "compares", "paper_reported", "size", "repeat", "seed", "status",
    "strategies", "strategies_ran", "not_built", "figures", "ratios", "points", "agreement",
    "elapsed_s", "started_at", "command", "machine",
}
MACHINE_KEYS = {"cpu_count", "cpu_model", "python", "libraries", "git_commit", "platform"}
FIGURE_KEYS = {"id", "title", "x_label", "x", "series", "ratios", "notes"}
# what each experiment runs in this build (engine strategies and registered planners);
# a sharing planner that lands moves from NOT_BUILT to BUILT here, on purpose
BUILT = {
    "greta_vs_twostep": {"twostep", "greta", "cogra"},
    "sharon": {"greta", "cogra", "twostep", "optimizer:none"},
    "hamlet": {"greta", "cogra", "hamlet-static", "hamlet-dynamic", "auto", "shared-all-static", "shared-all-dynamic",
               "eval-none", "eval-hamlet", "eval-hamlet-plan"},
    "gloria": {"greta", "cogra", "optimizer:none", "hamlet-dynamic", "auto", "gloria", "gloria-greedy",
               "optimizer:gloria", "optimizer:gloria-noprune", "optimizer:gloria-greedy"},
    "weaveshare": {"greta", "cogra"},
}
NOT_BUILT = {
    "greta_vs_twostep": set(),
    "sharon": {"sharon", "optimizer:sharon", "optimizer:exhaustive", "optimizer:greedy"},
    "hamlet": set(),
    "gloria": set(),
    "weaveshare": {"weaveshare", "weaveshare-shared"},
}


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench")


# replay and replay_shared run Spark: their smoke runs are in tests/integration/spark/ (once each)
@pytest.mark.parametrize("name", [n for n in EXPERIMENTS if not n.startswith("replay")])
def test_experiment_runs_at_smoke_size(name: str, out_dir: Path) -> None:
    record = run_experiment(name, size="smoke", out=out_dir, repeat=1, log=lambda line: None)
    data = json.loads((out_dir / f"{name}.json").read_text())
    assert (out_dir / f"{name}.png").stat().st_size > 0
    assert RECORD_KEYS <= set(data), RECORD_KEYS - set(data)
    assert MACHINE_KEYS <= set(data["machine"])
    assert data["machine"]["cpu_count"] >= 1
    assert data["experiment"] == name and data["size"] == "smoke"
    assert data["agreement"]["all_agree"], data["agreement"]["disagreements"]
    assert record["agreement"] == data["agreement"]
    assert data["status"] == "ok"
    assert data["figures"]
    for fig in data["figures"]:
        assert FIGURE_KEYS <= set(fig)
        for strategy, values in fig["series"].items():
            assert strategy in data["strategies"]
            assert len(values) == len(fig["x"])
    # exactly the strategies built today run; the others are listed as not built, with a reason
    built = {s for s, status in data["strategies"].items() if status["status"] == "ok"}
    not_built = {s for s, status in data["strategies"].items() if status["status"] == "not built yet"}
    assert built == BUILT[name], f"{name} ran {sorted(built)}; update BUILT when a strategy lands"
    assert not_built == NOT_BUILT[name]
    assert set(data["not_built"]) == NOT_BUILT[name]
    for strategy in not_built:
        assert data["strategies"][strategy]["reason"]
        assert any(p["strategy"] == strategy and p["status"] == "not built yet" for p in data["points"])
    for strategy in built:  # each ran somewhere; the two-step reference may skip big points
        statuses = [p["status"] for p in data["points"] if p["strategy"] == strategy]
        assert "ok" in statuses and set(statuses) <= ({"ok", "skipped"} if strategy == "twostep" else {"ok"}), (
            strategy, statuses,
        )
    executed = [p for p in data["points"] if p["status"] == "ok" and "rows" in p]
    if executed:
        assert data["agreement"]["checked"] >= 1, "strategies that ran side by side were compared"
        assert any(p["rows"] > 0 for p in executed), "the data makes trends"


def test_bench_cli_lists_and_rejects_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in EXPERIMENTS)
    assert main(["nope"]) == 2


def test_bench_cli_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["weaveshare", "--size", "smoke", "--out", str(tmp_path), "--repeat", "1", "--no-plot"]) == 0
    assert json.loads((tmp_path / "weaveshare.json").read_text())["repeat"] == 1
    assert "weaveshare: ok" in capsys.readouterr().out
