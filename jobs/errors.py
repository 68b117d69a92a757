"""The jobs' error root: a job that refuses to run or to commit raises a ``JobError``.

The CLI maps the root to a one-line message and exit code 1 (``jobs/cli.py``).
"""

from __future__ import annotations


class JobError(RuntimeError):
    """A job refused to run or to commit (nothing half-written is left behind)."""
