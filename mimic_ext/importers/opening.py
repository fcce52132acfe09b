"""A USD stage or a URDF/MJCF robot, opened as one stage, for commands that only read.

A new user runs ``list``, ``validate`` or ``sweep`` on the robot file they have; it is
imported in memory, exactly as ``mimic-ext import`` would write it, and nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..schema.stage_io import ROBOT_SUFFIXES, OpenedStage, open_stage


def is_robot_file(path: str | os.PathLike) -> bool:
    return Path(path).suffix.lower() in ROBOT_SUFFIXES


def open_stage_or_robot(path: str | os.PathLike, schema: str | None = None) -> OpenedStage:
    """``open_stage`` for USD; a URDF or MJCF file is imported in memory (``import_robot``) with
    ``mimic-ext import``'s defaults (``schema`` None: its default mimic schema, NewtonMimicAPI)."""
    if not is_robot_file(path):
        return open_stage(path)
    from .importing import DEFAULT_SCHEMA, import_robot

    result = import_robot(path, schema=schema or DEFAULT_SCHEMA)
    return OpenedStage(
        stage=result.stage, path=Path(path), files=[Path(os.path.realpath(path))], warnings=list(result.warnings)
    )
