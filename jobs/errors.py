"""The jobs' error classes; the CLI maps each to its exit code (``jobs/cli/__init__.py``).

- ``JobError``: a job refused to run or to commit (nothing half-written is left) -> 1;
- ``BadInputError``: a job found bad input (a lake file, an argument, a path, a query that is
  not what it must be) -> 2, as the engine's and the optimizer's input errors;
- ``InternalError``: a bug surfaced through a job (e.g. Spark's ``INTERNAL_ERROR``) -> 3.
"""

from __future__ import annotations


class JobError(RuntimeError):
    """A job refused to run or to commit (nothing half-written is left behind)."""


class BadInputError(JobError, ValueError):
    """A job found bad input (a file of the lake or an argument that is not what it must be)."""


class InternalError(JobError):
    """A bug surfaced through a job, not the user's input (reported as an internal error)."""
