"""The one place that builds the SparkSession trendlake jobs run in.

Settings follow ``STACK.md``: UTC session time zone, few shuffle partitions,
no UI, a 4 GiB driver, Python workers on this interpreter, loopback binding,
and Parquet timestamps written as INT64 microseconds (delta-rs and other Delta
readers do not read Spark's default INT96). PySpark's DataFrame debugging is
off: it costs several py4j round trips per Column operation (docs/lake.md,
"What a job costs before its first row"). ``delta_mode()`` tells whether
Delta's own Spark jars are loadable ("delta-spark") or whether ``jobs.lake``
commits through delta-rs ("delta-rs").

Logging: the driver JVM logs at ``$TRENDLAKE_SPARK_LOG_LEVEL`` (default
``ERROR``) from its first line (a log4j2 configuration passed at launch), and
``configure_logging`` gives the commands trendlake's own messages at INFO with
every other Python library at WARNING, so a command's summary stays visible.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path
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
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")


def configure_logging(level: int = logging.INFO) -> None:
    """Python logging of a command: trendlake's loggers at ``level``, other libraries at WARNING, to stderr."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("trendlake").setLevel(level)


def spark_log_level() -> str:
    """The driver JVM's log level: ``$TRENDLAKE_SPARK_LOG_LEVEL`` (a log4j level), default ERROR."""
    level = os.environ.get("TRENDLAKE_SPARK_LOG_LEVEL", "ERROR").strip().upper() or "ERROR"
    if level not in LOG_LEVELS:
        raise ValueError(f"TRENDLAKE_SPARK_LOG_LEVEL={level!r} is not a log4j level ({', '.join(LOG_LEVELS)})")
    return level


def log4j_config(level: str) -> Path:
    """A log4j2 properties file sending the JVM's log lines of ``level`` and above to stderr."""
    path = Path(tempfile.gettempdir()) / f"trendlake-log4j2-{level.lower()}-{os.getuid()}.properties"
    # PySpark's driver counts as a shell: when the root level is not WARN, Spark prints
    # "Setting default log level to WARN" and lowers it to WARN. So the root stays at WARN
    # for quieter levels and the console appender's threshold filter drops what is below.
    quieter = LOG_LEVELS.index(level) < LOG_LEVELS.index("WARN")
    lines = [
        f"rootLogger.level = {'warn' if quieter else level.lower()}",
        "rootLogger.appenderRef.stderr.ref = console",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_ERR",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex",
    ]
    if quieter:
        lines += ["appender.console.filter.threshold.type = ThresholdFilter",
                  f"appender.console.filter.threshold.level = {level.lower()}"]
    text = "\n".join([*lines, ""])
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_name(f"{path.name}.{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path


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
    level = spark_log_level()
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in CONF.items():
        builder = builder.config(key, value)
    # the driver JVM's own log configuration from its first line (its defaults print WARN lines at start)
    builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j_config(level).as_uri()}")
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
    spark.sparkContext.setLogLevel(level)
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
