"""The engine's error root: every error the engine raises for bad input is an ``EngineError``.

The CLI maps the root to a one-line message and exit code 2 (``jobs/cli.py``).
"""

from __future__ import annotations

import re
from typing import Any

MAX_VALUE_CHARS = 80  # a value quoted from input (an id, a name, a list) in a message
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class EngineError(Exception):
    """Bad input to the engine: a plan it refuses, an unreadable event file, an unsupported query."""


class EventFileError(EngineError, ValueError):
    """Events the engine cannot read; the message names the file (or source) and row."""


class StrategyError(EngineError, ValueError):
    """A strategy name the engine does not know."""


def brief(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """``value`` as text on one line (control characters escaped), at most ``limit`` characters:
    a longer text keeps its head and says how much was cut."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(value))
    if len(text) <= limit:
        return text
    tail = f"... ({len(text) - limit} more characters)"
    return text[: max(limit - len(tail), 0)] + tail
