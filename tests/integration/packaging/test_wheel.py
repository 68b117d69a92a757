"""The wheel built from the repository installs with only the core extra and works outside the checkout.

Builds ``pip wheel .``, installs it into a fresh virtual environment with the
core dependencies only (no Spark, Airflow, Great Expectations, deltalake), and
from a folder outside the checkout runs ``trendlake generate``, ``plan`` and
``eval`` on the bundled sample workload; the generic top-level names
(``engine``, ``jobs``, ...) must not be importable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    # build from a copy holding only tracked files, as a clean clone would
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    dist = root / "dist"
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv:
        _run([uv, "build", "-q", "--wheel", "-o", str(dist), str(source)], cwd=root)
    else:
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)], cwd=root)
    (wheel,) = dist.glob("trendlake-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"trendlake"}, f"stray top-level entries in the wheel: {tops - {'trendlake'}}"
    assert "trendlake/schemas/workloads/sample_rides.etq" in names
    assert "trendlake/optimizer/grammar.lark" in names
    assert "trendlake/optimizer/gloria/__init__.py" in names
    venv = root / "venv"
    if uv:
        _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], cwd=root)
        _run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(wheel)], cwd=root)
    else:
        _run([sys.executable, "-m", "venv", str(venv)], cwd=root)
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], cwd=root)
    return venv


def test_core_install_runs_eval_and_plan_outside_the_checkout(core_venv: Path, tmp_path: Path) -> None:
    py = str(core_venv / "bin" / "python")
    tl = str(core_venv / "bin" / "trendlake")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    work = tmp_path / "elsewhere"
    work.mkdir()
    for heavy in ("pyspark", "airflow", "great_expectations", "deltalake", "pandas", "matplotlib"):
        probe = subprocess.run([py, "-c", f"import {heavy}"], cwd=work, env=env, capture_output=True)
        assert probe.returncode != 0, f"{heavy} is installed by the core extra"
    for stray in ("engine", "jobs", "optimizer", "schemas", "dags", "benchmarks", "datagen"):
        probe = subprocess.run([py, "-c", f"import {stray}"], cwd=work, env=env, capture_output=True, text=True)
        assert probe.returncode != 0 and "No module named" in probe.stderr, f"`import {stray}` works"
    # COGRA's compiled count kernel is built into the wheel (a C compiler is at hand here)
    _run([py, "-c", "from trendlake.engine.strategies.cogra import _steps"], cwd=work, env=env)
    workload = _run([py, "-c", "from trendlake.schemas import workload_path; print(workload_path('sample_rides.etq'))"],
                    cwd=work, env=env).stdout.strip()
    _run([tl, "generate", "rides", "-n", "3000", "-o", "day.csv", "--seed", "5"], cwd=work, env=env)
    plan = json.loads(_run([tl, "plan", workload, "--stream", "rides"], cwd=work, env=env).stdout)
    assert [q["name"] for q in plan["queries"]]
    rows = [json.loads(line) for line in
            _run([tl, "eval", workload, "--events", "day.csv", "--stream", "rides"], cwd=work, env=env).stdout.splitlines()]
    assert {r["query"] for r in rows} <= {q["name"] for q in plan["queries"]}
    # a pipeline command says which extra it needs instead of a traceback
    missing = subprocess.run([tl, "sql", "--lake", "lake", "SELECT 1"], cwd=work, env=env, capture_output=True, text=True)
    assert missing.returncode == 2, missing.stderr
    assert "trendlake[spark]" in missing.stderr and "Traceback" not in missing.stderr
