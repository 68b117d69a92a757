"""Test-wide settings.

* hypothesis profiles: ``ci`` (default) and ``thorough`` for long local runs
  (``HYPOTHESIS_PROFILE=thorough``); ``planted`` for scripts/plant_bugs.py;
  ``mutation`` for scripts/mutation.py.
* a shrink budget: hypothesis stops shrinking a failing example after
  ``SHRINK_SECONDS`` and reports the smallest one found so far (under
  ``thorough``, after hypothesis' own five minutes).
* Tiers by marker: every test under ``tests/integration`` is marked
  ``integration`` here (and those of ``integration/spark`` and
  ``integration/airflow`` ``spark`` / ``airflow``); the fast tier is
  ``-m "not integration"`` (``make test-fast``), and such a run does not even
  collect ``tests/integration``. A run of both (``make test``) runs every
  fast-tier test before any integration test, in each process (xdist worker):
  the fast-tier tests then run where nothing imported the pipeline stack.
  Each test file under ``tests/unit`` is one ``xdist_group`` (``--dist
  loadgroup`` hands out files, not single tests, in such a run).
* A process that ran fast-tier tests fails the run if pyspark, airflow,
  great_expectations or deltalake was imported by the time its fast-tier tests
  were over (before its first integration test, or at its end): unit tests must
  not need the pipeline stack, even indirectly; nor may a test module import it
  at collection.
* The controller of a run that can reach an integration test sets the JVM
  options of its Spark drivers, with the class-data archive written first if
  missing (``tests/integration/jvm_archive.py``), before any xdist worker starts
  (the workers inherit them), and keeps the conftests' work order
  (``--dist loadgroup``: xdist's reordering by test count off).
"""

import itertools
import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.internal.conjecture import engine as conjecture_engine

from tests.integration.jvm_archive import run_jvm_options

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
INTEGRATION = TESTS / "integration"
HEAVY = ("pyspark", "airflow", "great_expectations", "deltalake")
# pytest's own identifier syntax in a -m expression (_pytest/mark/expression.py)
MARK_NAME = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")


def _integration_deselected(config: pytest.Config) -> bool:
    """Whether ``-m`` is false for every test marked ``integration``, whatever its other marks
    (``-m "not integration"``): each assignment of the expression's other names is tried."""
    text = config.option.markexpr
    if not text:
        return False
    from _pytest.mark.expression import Expression, ParseError

    try:
        expression = Expression.compile(text)
    except ParseError:
        return False  # pytest reports it itself
    names = sorted(set(MARK_NAME.findall(text)) - {"and", "or", "not", "integration"})
    if len(names) > 10:
        return False
    for values in itertools.product((False, True), repeat=len(names)):
        marks = dict(zip(names, values, strict=True), integration=True)
        if expression.evaluate(lambda name, marks=marks, **kwargs: marks.get(name, False)):
            return False
    return True


def _reaches_integration(config: pytest.Config) -> bool:
    """Whether the run's paths and ``-m`` can select a test under ``tests/integration``."""
    if _integration_deselected(config):
        return False
    here = config.invocation_params.dir
    for arg in config.args:
        path = (here / arg.split("::")[0]).resolve()
        if path == INTEGRATION or INTEGRATION in path.parents or path in INTEGRATION.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller did this
        return
    # Read by the `java` launcher of every JVM the run starts (Spark's drivers) and of the
    # processes it starts; set in the controller before the xdist workers start (they inherit
    # it). A run that only collects, or selects no integration test, starts no JVM and
    # writes no archive.
    if not config.option.collectonly and _reaches_integration(config):
        options = run_jvm_options(log=lambda line: print(line, file=sys.stderr))
        if options is not None:
            os.environ["JDK_JAVA_OPTIONS"] = options
    if hasattr(config.option, "loadscopereorder"):
        # xdist would queue work units by test count (most first): the one-test files, the
        # longest integration files, would start last; keep tests/integration/conftest.py's order
        config.option.loadscopereorder = False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A run of the fast tier (``-m "not integration"``) does not import the integration tier."""
    if collection_path == INTEGRATION and _integration_deselected(config):
        return True
    return None


def _tier(item: pytest.Item) -> str | None:
    """``unit`` or ``integration`` for a test under that folder, else None."""
    path = Path(str(item.path)).resolve()
    parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
    return parts[0] if parts[:1] in (("unit",), ("integration",)) else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    xdist = config.pluginmanager.hasplugin("xdist")  # the group mark exists only with xdist
    for item in items:
        path = Path(str(item.path)).resolve()
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        if parts[:1] == ("integration",):
            item.add_marker(pytest.mark.integration)
        elif parts[:1] == ("unit",) and xdist:
            item.add_marker(pytest.mark.xdist_group(path.relative_to(TESTS).as_posix()))
        if parts[:2] == ("integration", "spark"):
            item.add_marker(pytest.mark.spark)
        elif parts[:2] == ("integration", "airflow"):
            item.add_marker(pytest.mark.airflow)
            item.add_marker(pytest.mark.spark)
    # the fast tier first (tests/integration/conftest.py's order keeps it so too)
    items.sort(key=lambda item: _tier(item) == "integration")


def _unit_tests_over(config: pytest.Config) -> None:
    """This process's fast-tier tests are over: record what of the pipeline stack they left
    imported (once, and only if one ran here)."""
    if getattr(config, "_trendlake_unit_over", False):
        return
    config._trendlake_unit_over = True
    if getattr(config, "_trendlake_ran_unit", False):
        config._trendlake_heavy = [m for m in HEAVY if m in sys.modules]


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting (importing the test modules) imported of the pipeline stack."""
    session.config._trendlake_collected_heavy = [m for m in HEAVY if m in sys.modules]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    tier = _tier(item)
    if tier == "integration":
        _unit_tests_over(item.config)
    elif tier == "unit":
        item.config._trendlake_ran_unit = True


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    _unit_tests_over(config)
    loaded = getattr(config, "_trendlake_heavy", [])
    at_collection = getattr(config, "_trendlake_collected_heavy", [])
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller reports it
        workeroutput["trendlake_heavy"] = loaded
        workeroutput["trendlake_collected_heavy"] = at_collection if loaded else []
        return
    if not loaded:
        loaded = sorted(set(getattr(config, "_trendlake_worker_heavy", ())))
        at_collection = sorted(set(getattr(config, "_trendlake_worker_collected_heavy", ())))
    if loaded:
        where = (f" ({', '.join(at_collection)} already at collection: a test module imports it at module level)"
                 if at_collection else "")
        print(f"\nfast tier imported {', '.join(loaded)}{where}: unit tests must not need the pipeline stack",
              file=sys.stderr)
        session.exitstatus = 1


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """pytest-xdist controller: a worker's fast-tier tests imported the pipeline stack."""
    output = getattr(node, "workeroutput", {})
    config = getattr(node, "config", None)
    if output.get("trendlake_heavy") and config is not None:
        config._trendlake_worker_heavy = [*getattr(config, "_trendlake_worker_heavy", ()), *output["trendlake_heavy"]]
        config._trendlake_worker_collected_heavy = [
            *getattr(config, "_trendlake_worker_collected_heavy", ()), *output.get("trendlake_collected_heavy", ())
        ]
