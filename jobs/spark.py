"""The one place that builds the SparkSession trendlake jobs run in.

Settings follow ``STACK.md``: UTC session time zone, few shuffle partitions,
no UI, a 4 GiB driver, Python workers on this interpreter, loopback binding,
and Parquet timestamps written as INT64 microseconds (delta-rs and other Delta
readers do not read Spark's default INT96). ``delta_mode()`` tells whether
Delta's own Spark jars are loadable ("delta-spark") or whether ``jobs.lake``
commits through delta-rs ("delta-rs").
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

log = logging.getLogger("trendlake.spark")

DEFAULT_MASTER = "local[*]"
_MODE_CACHE: dict[int, str] = {}

CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "4g",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
}


def get_spark(master: str | None = None, app_name: str = "trendlake") -> Any:
    """The active SparkSession, or a new one with trendlake's settings.

    ``master`` defaults to ``$TRENDLAKE_SPARK_MASTER`` or ``local[*]``. An
    already active session is returned as is (one session per process).
    """
    master = master or os.environ.get("TRENDLAKE_SPARK_MASTER", DEFAULT_MASTER)
    local = master.startswith("local")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in CONF.items():
        builder = builder.config(key, value)
    if local:
        # a local session listens on loopback only
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1")
    else:
        # executors on other hosts must reach the driver: bind $SPARK_LOCAL_IP (Spark's
        # own variable; a loopback-only cluster sets 127.0.0.1) or every interface, and
        # advertise $SPARK_DRIVER_HOST (e.g. the Airflow container's service name)
        bind = os.environ.get("SPARK_LOCAL_IP") or "0.0.0.0"
        builder = builder.config("spark.driver.bindAddress", bind)
        host = os.environ.get("SPARK_DRIVER_HOST") or (bind if bind != "0.0.0.0" else None)
        if host:
            builder = builder.config("spark.driver.host", host)
    log.info("Spark session on %s", master)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def delta_mode(spark: Any | None = None) -> str:
    """``"delta-spark"`` when Delta's Spark jars are loadable, else ``"delta-rs"``.

    ``$TRENDLAKE_DELTA_MODE`` forces either. The choice is logged once per session.
    """
    forced = os.environ.get("TRENDLAKE_DELTA_MODE")
    if forced in ("delta-spark", "delta-rs"):
        return forced
    spark = spark or get_spark()
    key = id(spark)
    if key not in _MODE_CACHE:
        mode = "delta-rs"
        try:
            jvm = spark.sparkContext._jvm  # absent under Spark Connect
            jvm.org.apache.spark.util.Utils.classForName(
                "org.apache.spark.sql.delta.DeltaLog", True, False
            )
            mode = "delta-spark"
        except Exception:  # noqa: BLE001 - any failure means "not loadable"
            mode = "delta-rs"
        _MODE_CACHE[key] = mode
        if mode == "delta-spark":
            log.info("Delta via delta-spark jars: df.write.format('delta')")
        else:
            log.info("Delta via delta-rs: Spark stages Parquet, the driver commits with deltalake")
    return _MODE_CACHE[key]
