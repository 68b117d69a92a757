"""The jobs' error root: a job that refuses to run or to commit raises a ``JobError``.

The CLI maps the root to a one-line message and exit code 1 (``jobs/cli.py``); a
``BadInputError`` (bad input found by a job, e.g. a lake file that is not what it must
be) to exit code 2, as the engine's and the optimizer's input errors.
"""

from __future__ import annotations


class JobError(RuntimeError):
    """A job refused to run or to commit (nothing half-written is left behind)."""


class BadInputError(JobError, ValueError):
    """A job found bad input (a file of the lake or an argument that is not what it must be)."""
