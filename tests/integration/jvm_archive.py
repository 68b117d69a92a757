"""A class-data archive for the test run's Spark driver JVMs (AppCDS, JDK 13+).

Every Spark driver the integration tier starts (the workers' sessions, each
``trendlake`` command run as a subprocess, the cluster test's drivers) loads and
verifies the same classes from Spark's jars before its first job: about 7 s of a
cold ``trendlake ingest`` on 2 cores (37.5-38.7 s without the archive, 29.4-31.9 s
with it, in two runs each; see docs/testing.md). A dynamic archive
(``-XX:ArchiveClassesAtExit``) written once by a short warm-up driver lets the
JVMs map those classes instead.

The archive is a cache: it lives in ``$TRENDLAKE_TEST_CACHE`` (default
``~/.cache/trendlake``) under a key made of the Java version and Spark's jar
folder and list, so a new Java, Spark or virtual environment makes a new one
(the three most recently used are kept). A JVM whose class path does not
match (Spark's launcher, the cluster test's master and workers) ignores it; its
CDS messages are turned off. Nothing here changes what a test checks: without
an archive (``TRENDLAKE_TEST_CDS=0``, or when the warm-up fails) the JVMs load
their classes as usual.

A test run writes it when it needs it: ``tests/conftest.py`` calls
:func:`run_jvm_options` in the controller of any run that can reach an
integration test, before the xdist workers start. ``python -m
tests.integration.jvm_archive`` writes it ahead of a run.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the test run's JVM options (set by ``tests/conftest.py``); an archive is only used by
# JVMs started with the options it was written with
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
WARM_UP_TIMEOUT = 300.0
KEEP = 3
# what the warm-up driver runs: the classes of a session, a typed CSV read, the SQL
# expressions ingest builds, a shuffle, Parquet out and in, Arrow to Python and back
WARM_UP = r"""
import sys
from pyspark.sql import SparkSession
from trendlake.jobs import spark as tl
b = SparkSession.builder.master("local[1]").appName("trendlake-cds")
for k, v in tl.CONF.items():
    b = b.config(k, v)
b = b.config("spark.driver.bindAddress", "127.0.0.1")
b = b.config("spark.driver.extraJavaOptions",
             f"-Dlog4j2.configurationFile={tl.log4j_config('ERROR').as_uri()} -XX:ArchiveClassesAtExit={sys.argv[1]}")
s = b.getOrCreate()
folder = sys.argv[2]
with open(f"{folder}/in.csv", "w") as fh:
    fh.write("type,ts,x\nA,2026-01-01T00:00:00Z,1\nB,2026-01-01T00:00:05Z,x\n")
df = s.read.options(header=True, multiLine=True, escape='"').schema("type string, ts string, x string").csv(f"{folder}/in.csv")
df = df.selectExpr("*", "TRY_CAST(regexp_replace(x, '^\\\\s+|\\\\s+$', '') AS bigint) AS v",
                   "timestamp_micros(unix_micros(TRY_CAST(ts AS timestamp))) AS t",
                   "CASE WHEN x RLIKE '^[0-9]+$' THEN 'ok' END AS why", "monotonically_increasing_id() AS id")
df.groupBy("type").count().collect()
df.write.mode("overwrite").partitionBy("type").parquet(f"{folder}/out")
back = s.read.parquet(f"{folder}/out")
back.mapInArrow(lambda batches: batches, back.schema).toArrow()
s.createDataFrame(back.toPandas()).count()
s.stop()
"""


def _key() -> str:
    import pyspark

    java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=60).stderr
    jars = Path(pyspark.__file__).parent / "jars"
    listing = sorted(f"{p.name}:{p.stat().st_size}" for p in jars.glob("*.jar"))
    return hashlib.sha256("\n".join([java, str(jars), *listing]).encode()).hexdigest()[:16]


def archive(jvm_options: str, log=print) -> Path | None:
    """The archive for this Java and Spark, written first if missing (by a driver started with
    ``jvm_options``, the options of the JVMs that will use it); None when none can be made."""
    if os.environ.get("TRENDLAKE_TEST_CDS", "1") == "0":
        return None
    try:
        folder = Path(os.environ.get("TRENDLAKE_TEST_CACHE") or Path.home() / ".cache" / "trendlake")
        path = folder / f"spark-classes-{_key()}.jsa"
        if path.is_file():
            os.utime(path)  # recently used: kept by _prune
            return path
        folder.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="warm-up-", dir=folder) as work:
            partial = Path(work) / "classes.jsa"
            env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                       JDK_JAVA_OPTIONS=jvm_options)
            done = subprocess.run([sys.executable, "-c", WARM_UP, str(partial), work], capture_output=True,
                                  text=True, timeout=WARM_UP_TIMEOUT, env=env)
            if done.returncode != 0 or not partial.is_file():
                log(f"no class-data archive (warm-up exited {done.returncode}): {done.stderr[-500:]}")
                return None
            os.replace(partial, path)  # whole or absent: a concurrent run sees one or the other
        _prune(folder)
        log(f"class-data archive for Spark's driver JVMs written in {time.monotonic() - started:.0f}s: {path}")
        return path
    except (OSError, subprocess.SubprocessError, ImportError) as err:
        log(f"no class-data archive: {err}")
        return None


def _prune(folder: Path) -> None:
    """Keep the KEEP most recently used archives (each is about 180 MB; a checkout's venv is its own key)."""
    archives = sorted(folder.glob("spark-classes-*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in archives[KEEP:]:
        stale.unlink(missing_ok=True)


def run_jvm_options(log=print) -> str | None:
    """``JDK_JAVA_OPTIONS`` for a test run's JVMs: ``TEST_JVM_OPTIONS`` and the archive
    (written first if missing); None when the user set ``JDK_JAVA_OPTIONS`` (theirs win)."""
    if "JDK_JAVA_OPTIONS" in os.environ:
        return None
    return " ".join(filter(None, [TEST_JVM_OPTIONS, java_options(archive(TEST_JVM_OPTIONS, log=log))]))


def java_options(path: Path | None) -> str:
    """JVM options using the archive (nothing when there is none)."""
    if path is None:
        return ""
    return f"-XX:SharedArchiveFile={path} -Xlog:cds=off,cds+dynamic=off"


if __name__ == "__main__":  # ahead of a test run
    run_jvm_options(log=lambda line: print(line, file=sys.stderr))
