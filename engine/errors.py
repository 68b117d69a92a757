"""The engine's error root: every error the engine raises for bad input is an ``EngineError``.

The CLI maps the root to a one-line message and exit code 2 (``jobs/cli.py``).
"""

from __future__ import annotations


class EngineError(Exception):
    """Bad input to the engine: a plan it refuses, an unreadable event file, an unsupported query."""


class EventFileError(EngineError, ValueError):
    """Events the engine cannot read; the message names the file (or source) and row."""


class StrategyError(EngineError, ValueError):
    """A strategy name the engine does not know."""
