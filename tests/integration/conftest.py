"""Integration tiers: real Spark (local[2]), real Delta tables, Airflow (``dag.test()``).

Fixtures for every integration test (use them instead of building a pipeline
per test; the pipeline steps cost tens of seconds each on 2 cores):

* ``spark`` -- the one local SparkSession of the run (trendlake's own settings;
  the test JVM runs with ``jvm_archive.TEST_JVM_OPTIONS``: C1-only JIT and the serial
  collector: the short test jobs then spend far less CPU on C2 compilation
  and GC threads, about 40% less CPU for an ingest/replay/check sequence on
  2 cores; a ``JDK_JAVA_OPTIONS`` you set wins), and a class-data archive of
  Spark's driver classes, written once per Java and Spark version into a cache
  folder (``jvm_archive.py``; ``TRENDLAKE_TEST_CDS=0`` turns it off); both set by
  ``tests/conftest.py`` in the run's controller.
* ``sample_lake`` (session) -- a :class:`SampleLake`: the sample ride stream
  (``tests/integration/sample.py``, 300 trips over 2026-01-01 and 01-02, one
  CSV landing file) run once through the whole pipeline: ingest -> stats over
  both days -> optimize with those statistics -> replay of day one -> replay
  of day two, with the reports and the result-table versions after day one.
  READ ONLY: a test that writes must use ``lake_copy``; the fixture checks at
  the end of the run that no file of the shared lake changed.
* ``lake_copy`` (function) -- a private copy of the sample lake (Delta tables
  are plain folders; their logs hold relative paths), for tests that replay,
  re-ingest, corrupt or otherwise write.

Scheduling on pytest-xdist workers (``make test-integration``: ``-n 2 --dist
loadgroup -m integration tests``): every integration test gets an
``xdist_group`` -- its file, except that the files using ``sample_lake`` form
one group (``SAMPLE_LAKE_FILES``), so the sample pipeline runs once per run
instead of once per worker. Files are handed out longest first
(``LONGEST_FIRST``, from ``--durations=0``), and xdist's own reordering by test
count is turned off (``tests/conftest.py``): it queued the one-test files, the
longest ones, last, where a single file on one worker is the run's tail. The
order and groups only decide where and when a file runs, never what it checks;
with ``--dist loadfile`` the groups are ignored and each file is its own unit.
"""

from __future__ import annotations

import gc
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import trip_rows, write_csv

INTEGRATION = Path(__file__).resolve().parent
# the files whose tests use ``sample_lake``: one xdist group, so one worker builds it once
SAMPLE_LAKE_FILES = (
    "airflow/test_dags.py",
    "spark/test_replay.py",
    "spark/test_replay_shared.py",
    "spark/test_drill.py",
    "spark/test_bench_replay_smoke.py",
)
# units of work (files, or the sample-lake group), longest first as measured on 2 cores
# (``--junitxml`` of a full run, the test times summed per unit); files not listed, each
# under 10 s, follow in collection order and fill the end of the run
LONGEST_FIRST = (
    "sample_lake",
    "cluster/test_cluster.py",
    "spark/test_exit_codes.py",
    "benchmarks/test_bench_suite_smoke.py",
    "spark/test_ingest_reliability.py",
    "spark/test_ingest.py",
    "spark/test_bench_ingest_smoke.py",
    "spark/test_sql_readonly.py",
    "spark/test_sql_registry.py",
    "spark/test_ingest_fuzz.py",
    "spark/test_adapters_ingest.py",
    "packaging/test_wheel.py",
    "spark/test_typing_agreement.py",
    "spark/test_ingest_typing_edges.py",
    "spark/test_pushdown_conformance.py",
    "spark/test_csv_split.py",
    "spark/test_replay_atomic.py",
    "spark/test_stats.py",
)


def _work_unit(item: pytest.Item) -> str | None:
    """The xdist group of an integration test: the sample-lake group or its own file."""
    path = Path(str(item.path)).resolve()
    if not path.is_relative_to(INTEGRATION):
        return None
    name = path.relative_to(INTEGRATION).as_posix()
    return "sample_lake" if name in SAMPLE_LAKE_FILES else name


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {unit: i for i, unit in enumerate(LONGEST_FIRST)}
    units = {id(item): _work_unit(item) for item in items}
    if config.pluginmanager.hasplugin("xdist"):  # the mark exists only with xdist (-p no:xdist runs too)
        for item in items:
            if units[id(item)] is not None:
                item.add_marker(pytest.mark.xdist_group(units[id(item)]))
    # a stable sort: within a unit (and among unlisted units) the collection order stays; tests
    # outside tests/integration stay first (tests/conftest.py: the fast tier runs first)
    items.sort(key=lambda item: -1 if units[id(item)] is None else rank.get(units[id(item)], len(rank)))


SAMPLE_DAY = datetime(2026, 1, 1, tzinfo=UTC)
ONE_DAY = timedelta(days=1)


@dataclass(frozen=True)
class SampleLake:
    """The shared pipeline run (see the module docstring); days are ``[start, end)`` intervals."""

    root: Path
    lake: Path
    landing: Path
    events: Path  # the landing CSV that was ingested (``trendlake eval`` input for the same events)
    workload: Path
    stream: str
    rows: list[dict[str, Any]]  # the rows of ``events``
    ingest: Any  # jobs.ingest.IngestReport
    stats_version: int
    plan: dict[str, Any]  # the current plan (made from the statistics)
    days: tuple[tuple[datetime, datetime], ...]  # the replayed intervals, in order
    replays: tuple[Any, ...]  # jobs.replay.ReplayReport per replayed interval
    day_one_versions: dict[str, int] = field(default_factory=dict)  # query -> results version after day one


@pytest.fixture(autouse=True, scope="module")
def _frozen_heap():
    """Each test file runs with the heap it starts with frozen (``gc.freeze``).

    The jobs collect garbage after every delta-rs write (``jobs.lake.settle``:
    a write's objects must not outlive it). In a test worker, whose heap holds
    Spark, Great Expectations, Airflow and everything earlier tests left alive,
    each full collection walked about 420,000 objects (0.3 s here), and the
    collections were about 50 s of the workers' CPU in a run of the tier.
    Frozen objects are skipped: a collection then walks what the file's tests
    made, which holds every object of their own writes, so a write's garbage
    is still freed where it was. The heap is collected before it is frozen and
    unfrozen after the file, so nothing is kept beyond its file.
    """
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for every Spark test of the run (trendlake's own settings)."""
    from trendlake.jobs.spark import get_spark

    return get_spark("local[2]", app_name="trendlake-tests")


def _fingerprint(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="session")
def sample_lake(tmp_path_factory: pytest.TempPathFactory, spark: Any):
    """The sample stream through ingest, stats, optimize and two daily replays, once per test run."""
    from trendlake.jobs.ingest import ingest
    from trendlake.jobs.lake import Lake
    from trendlake.jobs.optimize import current_plan, latest_statistics, optimize, workload_name
    from trendlake.jobs.replay import replay
    from trendlake.jobs.stats import run_stats
    from trendlake.schemas import load_stream_schema, workload_path

    root = tmp_path_factory.mktemp("sample_lake")
    lake_dir, landing = root / "lake", root / "landing"
    workload = workload_path("sample_rides.etq")
    rows = trip_rows(300, seed=11)
    events = write_csv(landing / "trips.csv", rows)

    report = ingest(lake_dir, load_stream_schema("rides"), landing, spark=spark)
    stats_version = run_stats(lake_dir, "rides", workload, SAMPLE_DAY, SAMPLE_DAY + 2 * ONE_DAY, spark=spark)
    optimize(lake_dir, workload, stream="rides", statistics=latest_statistics(lake_dir, "rides"))
    plan = current_plan(lake_dir, workload_name(workload))
    days = ((SAMPLE_DAY, SAMPLE_DAY + ONE_DAY), (SAMPLE_DAY + ONE_DAY, SAMPLE_DAY + 2 * ONE_DAY))
    lake = Lake(lake_dir)
    first = replay(lake_dir, workload, *days[0], spark=spark)
    day_one_versions = {q["name"]: lake.version(f"results/{q['name']}") for q in plan["queries"]}
    second = replay(lake_dir, workload, *days[1], spark=spark)

    sample = SampleLake(
        root=root, lake=lake_dir, landing=landing, events=events, workload=workload, stream="rides",
        rows=rows, ingest=report, stats_version=stats_version, plan=plan, days=days,
        replays=(first, second), day_one_versions=day_one_versions,
    )
    before = _fingerprint(lake_dir)
    yield sample
    changed = {f for f, _ in set(before) ^ set(_fingerprint(lake_dir))}
    assert not changed, f"a test wrote into the shared sample lake (use lake_copy): {sorted(changed)[:5]}"


@pytest.fixture
def lake_copy(sample_lake: SampleLake, tmp_path: Path) -> Path:
    """A private copy of the sample lake's root, for a test that writes to it."""
    return Path(shutil.copytree(sample_lake.lake, tmp_path / "lake"))
