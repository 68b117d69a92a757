"""Test-wide settings.

* hypothesis profiles: ``ci`` (default) and ``thorough`` for long local runs
  (``HYPOTHESIS_PROFILE=thorough``); ``planted`` for scripts/plant_bugs.py;
  ``mutation`` for scripts/mutation.py.
* a shrink budget: hypothesis stops shrinking a failing example after
  ``SHRINK_SECONDS`` and reports the smallest one found so far (under
  ``thorough``, after hypothesis' own five minutes).
* Tiers by folder: ``tests/unit`` is the fast tier (no Spark, no Airflow:
  ``make test-fast``), ``tests/integration/spark`` and
  ``tests/integration/airflow`` are marked ``spark`` / ``airflow`` here. A run
  of the fast tier alone fails if anything imported pyspark or airflow.
"""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.internal.conjecture import engine as conjecture_engine

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# scripts/plant_bugs.py: the ci budget, no example database (each seed on its own), no shrinking
settings.register_profile(
    "planted",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.target],
)
# scripts/mutation.py: one run of the engine tests per mutant -- few examples, the same ones every
# run (derandomized), no example database, no shrinking (a mutant is killed by the first failure)
settings.register_profile(
    "mutation",
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate, Phase.target],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)

# The shrink budget. Hypothesis has no setting for it: the shrink phase (with the explain
# phase inside it) stops at its module constant MAX_SHRINKING_SECONDS, 300 s, which it keeps
# monkeypatchable for this purpose; the example reported is then the smallest failing one
# found so far, with hypothesis' warning that it "spent more than five minutes" (its fixed
# text). A failing shared-executor property took 3-6 minutes to be reported before.
SHRINK_SECONDS = 20
if PROFILE != "thorough":
    conjecture_engine.MAX_SHRINKING_SECONDS = SHRINK_SECONDS

TESTS = Path(__file__).resolve().parent
UNIT = TESTS / "unit"
HEAVY = ("pyspark", "airflow", "great_expectations", "deltalake")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    only_unit = True
    for item in items:
        path = Path(str(item.path)).resolve()
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        if parts[:2] == ("integration", "spark"):
            item.add_marker(pytest.mark.spark)
        elif parts[:2] == ("integration", "airflow"):
            item.add_marker(pytest.mark.airflow)
            item.add_marker(pytest.mark.spark)
        if not path.is_relative_to(UNIT):
            only_unit = False
    config._trendlake_only_unit = only_unit and bool(items)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    loaded = [m for m in HEAVY if m in sys.modules] if getattr(config, "_trendlake_only_unit", False) else []
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller reports it
        workeroutput["trendlake_heavy"] = loaded
        return
    loaded = sorted(set(loaded) | set(getattr(config, "_trendlake_worker_heavy", ())))
    if loaded:
        print(f"\nfast tier imported {', '.join(loaded)}: unit tests must not need the pipeline stack",
              file=sys.stderr)
        session.exitstatus = 1


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """pytest-xdist controller: a worker of a fast-tier run imported the pipeline stack."""
    heavy = getattr(node, "workeroutput", {}).get("trendlake_heavy", [])
    config = getattr(node, "config", None)
    if heavy and config is not None:
        config._trendlake_worker_heavy = [*getattr(config, "_trendlake_worker_heavy", ()), *heavy]
