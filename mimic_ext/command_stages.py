"""What every command prints of the stage it reads: opened (a robot file imported in memory where
the command allows it), and what opening it found, said as warnings on stderr.

The top-level commands (``cli``) and the importers' (``importers.commands``: ``diff``) share it,
so a stage opened by any command says the same lines. Standard library only at load: the
command modules import it before they parse their arguments.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable


def warn(lines: Iterable[str | None]) -> None:
    """Each non-empty line as ``mimic-ext: warning: LINE`` on stderr."""
    for line in lines:
        if line:
            print(f"mimic-ext: warning: {line}", file=sys.stderr)


def open_read_stage(path: str, robots: bool = False):
    """The stage at ``path`` (``schema.stage_io.OpenedStage``; with ``robots``, a URDF/MJCF file is
    imported in memory), its opening's warnings and composition summary said (``warn``)."""
    if robots:
        from .importers.opening import open_stage_or_robot as opener
    else:
        from .schema import open_stage as opener

    opened = opener(path)
    warn([*opened.warnings, opened.composition_summary()])
    return opened


__all__ = ["open_read_stage", "warn"]
