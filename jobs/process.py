"""How a trendlake command process ends: with its real exit status.

Processes that used pyarrow or delta-rs can abort during interpreter shutdown
(SIGABRT, exit 134, "terminate called without an active exception") when native
thread pools are torn down after their work is done (STACK.md "Known shutdown crash").
Schedulers read 134 as failure and retry. So the command-line entry point, once the
command has returned, flushes its output, stops Spark, releases native objects and
leaves with ``os._exit`` — skipping the interpreter finalization that crashes.
"""

from __future__ import annotations

import gc
import logging
import os
import sys

__all__ = ["exit_now"]


def _flush() -> bool:
    """Flush stdout and stderr; False if a reader has gone away."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            ok = False
    return ok


def _stop_spark() -> None:
    if "pyspark" not in sys.modules:
        return
    try:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        if session is not None:
            session.stop()
    except Exception:  # noqa: BLE001 - the command's work is done; its status stands
        pass


def exit_now(code: int) -> None:
    """End the process with ``code`` once output is flushed, Spark stopped and native
    objects released; never returns. Only for a command-line entry point (tests call
    ``cli.main``, which returns the status)."""
    code = int(code) if isinstance(code, int) else 1
    _flush()
    _stop_spark()
    logging.shutdown()
    gc.collect()
    _flush()
    os._exit(code & 0xFF if code >= 0 else 1)
