"""Several ``trendlake`` commands in one process, so in one Spark driver.

``python one_driver.py '[["--master", "local[2]", "ingest", ...], [...], ...]'`` runs
each argument list through ``trendlake.jobs.cli.main`` in order, as the
``trendlake`` executable would, but with the Spark session of the first Spark
command kept for the next ones (``jobs.spark.get_spark`` returns the active
session). Stops at the first command that does not exit 0. Prints one JSON line
per command: its arguments, exit status, wall time and stdout. Ends through
``jobs.process.exit_now``, as the executable does.

For a test whose subject is not the process boundary (the local-mode reference
run of ``test_cluster.py``): each separate command would start its own JVM.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time

MARK = "one-driver-step: "


def run_all(steps: list[list[str]]) -> int:
    from trendlake.jobs.cli import main

    for argv in steps:
        out = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out):
            code = main(list(argv))
        elapsed = time.perf_counter() - started
        print(MARK + json.dumps({"argv": argv, "code": code, "seconds": elapsed, "stdout": out.getvalue()}),
              flush=True)
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    from trendlake.jobs.process import exit_now

    exit_now(run_all(json.loads(sys.argv[1])))
