"""A real Spark standalone cluster on this machine, started from the installed pyspark.

``StandaloneCluster(folder, workers=2)`` starts a master and the workers as
separate processes through ``$SPARK_HOME/bin/spark-class`` (the pip package
has no ``sbin/`` scripts; ``SPARK_HOME`` is the ``pyspark`` folder), each
bound to 127.0.0.1 on ports found free at run time, and waits until the
master's web UI (``/json/``) reports every worker ALIVE. Every daemon runs in
its own process group, so stopping it by the id we started also ends the
executor JVMs and Python workers it spawned. Logs go to ``folder/logs``.

Used as a context manager, the cluster is always stopped; ``start`` fails
with the daemons' log tails when the cluster is not up within ``timeout``.
Run ``python -m tests.integration.cluster.standalone FOLDER`` to keep one
up by hand (Ctrl-C or SIGTERM stops it).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"


class ClusterError(RuntimeError):
    """The cluster did not come up (or a daemon died); carries the daemons' log tails."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def spark_home() -> Path:
    """The installed pyspark folder: it holds ``bin/spark-class`` and ``jars/``."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class StandaloneCluster:
    """A master and ``workers`` workers (``cores`` cores, ``memory`` each) on loopback."""

    def __init__(
        self, folder: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g",
        worker_env: dict[str, str | None] | None = None, timeout: float = 180.0,
    ) -> None:
        self.folder = Path(folder).resolve()
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.worker_env = dict(worker_env or {})
        self.timeout = timeout
        self.port = free_port()
        self.webui_port = free_port()
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    @property
    def url(self) -> str:
        """The master URL drivers connect to."""
        return f"spark://{HOST}:{self.port}"

    def _env(self, extra: dict[str, str | None] | None = None) -> dict[str, str]:
        """The daemons' environment: ours, Spark's variables, then ``extra`` (None unsets)."""
        env = dict(os.environ)
        env.update({
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOCAL_HOSTNAME": "localhost",
            "SPARK_DAEMON_MEMORY": "512m",
            "SPARK_LOCAL_DIRS": str(self.folder / "scratch"),
        })
        for key, value in (extra or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        logs = self.folder / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        out = (logs / f"{name}.log").open("wb")
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        # a session of its own: its id is the daemon's pid, and the executors it starts share it
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=self.folder, start_new_session=True)
        out.close()
        self.procs.append((name, proc))

    def start(self, timeout: float | None = None) -> StandaloneCluster:
        """Start the daemons and wait until every worker is ALIVE at the master (``timeout`` seconds)."""
        timeout = self.timeout if timeout is None else timeout
        (self.folder / "scratch").mkdir(parents=True, exist_ok=True)
        self._spawn("master", [
            "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(self.port),
            "--webui-port", str(self.webui_port),
        ], self._env())
        for i in range(self.workers):
            work = self.folder / f"worker{i}"
            work.mkdir(parents=True, exist_ok=True)
            self._spawn(f"worker{i}", [
                "org.apache.spark.deploy.worker.Worker", "--host", HOST, "--cores", str(self.cores),
                "--memory", self.memory, "--webui-port", str(free_port()), "--work-dir", str(work),
                self.url,
            ], self._env(self.worker_env))
        deadline = time.monotonic() + timeout
        state: dict[str, Any] = {}
        while time.monotonic() < deadline:
            dead = [(n, p.returncode) for n, p in self.procs if p.poll() is not None]
            if dead:
                raise ClusterError(f"daemon exited early: {dead}\n{self.log_tails()}")
            state = self.master_state() or {}
            alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
            if state.get("status") == "ALIVE" and len(alive) >= self.workers:
                return self
            time.sleep(1.0)
        raise ClusterError(
            f"cluster not up within {timeout:.0f}s (master state: {json.dumps(state)[:400]})\n{self.log_tails()}"
        )

    def master_state(self) -> dict[str, Any] | None:
        """The master's ``/json/`` report, None while its web UI does not answer."""
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.webui_port}/json/", timeout=5) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except (OSError, ValueError):
            return None

    def log_tails(self, lines: int = 25) -> str:
        out = []
        for path in sorted((self.folder / "logs").glob("*.log")):
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(tail))
        return "\n".join(out)

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM each daemon's process group, SIGKILL what is left after ``grace`` seconds."""
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for _, proc in reversed(self.procs):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for _, proc in self.procs:
            _signal_group(proc.pid, signal.SIGKILL)  # executors and Python workers left in the group
            if proc.poll() is None:
                proc.wait(timeout=10)
        self.procs.clear()

    def __enter__(self) -> StandaloneCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    import sys

    def _interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)  # `kill PID` stops the daemons too
    with StandaloneCluster(Path(sys.argv[1] if len(sys.argv) > 1 else "cluster")) as cluster:
        print(f"master {cluster.url}, web UI http://{HOST}:{cluster.webui_port}/ (Ctrl-C or SIGTERM stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
