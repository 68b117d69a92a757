"""A file of the repository as it was at a git revision, loaded as a module.

A benchmark that compares what ships with an older implementation loads the
older one from git (``module_at``), so that no switch keeps it alive in the
code that ships.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def source_at(rev: str, path: str) -> str:
    """The text of ``path`` (relative to the repository) at revision ``rev``; ValueError if git cannot show it."""
    try:
        done = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{path}"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ValueError(f"git show {rev}:{path}: {err}") from None
    if done.returncode != 0:
        raise ValueError(f"git show {rev}:{path}: {done.stderr.strip() or 'failed'} (run from a git checkout)")
    return done.stdout


def module_at(rev: str, path: str, name: str) -> types.ModuleType:
    """``path`` at ``rev`` executed as a new module called ``name`` (entered in ``sys.modules``
    under that name, which its dataclasses need; a second call executes it anew). The tree's
    own modules, what it imports included, stay what they are: the old file runs against
    today's other modules."""
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:{path}"
    code = compile(source_at(rev, path), module.__file__, "exec")
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - a file of this repository's own history
    except BaseException:
        del sys.modules[name]
        raise
    return module
