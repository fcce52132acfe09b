"""URDF and MJCF robots to simulation-ready USD with their mimic relations, and back to URDF.

``import_robot(path, out=None, schema='physx') -> ImportResult`` and
``export_urdf(stage, out)``. Conventions and pitfalls: docs/importers.md.
Names load on first use, so that ``mimic-ext --help`` (which imports ``commands``) does
not pull in USD.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"ImportResult": "importing", "import_robot": "importing", "read_robot": "importing",
            "export_urdf": "urdf_export"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mimic_ext.importers' has no attribute '{name}'")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
