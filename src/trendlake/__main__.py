"""``python -m trendlake``: the command line (exits with the command's status)."""

from trendlake.jobs.cli import entry

entry()
