"""Ingest's errors: the run's (``IngestError``, ``IngestInputError``; the CLI maps them, see
``jobs/errors.py``) and one file's (``FileRefused``: the run's other files go through)."""

from __future__ import annotations

from trendlake.jobs.errors import BadInputError, JobError


class IngestError(JobError):
    """Ingest refused to commit (rows unaccounted for)."""


class IngestInputError(IngestError, BadInputError):
    """Ingest cannot run on this input (a bad stream schema, no landing folder, an unreadable
    CSV header)."""


class FileRefused(Exception):
    """One landing file cannot be ingested (the run's other files go through)."""
