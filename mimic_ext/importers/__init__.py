"""URDF and MJCF robots to simulation-ready USD with their mimic relations, and back to URDF.

``import_robot(path, out=None, schema='physx') -> ImportResult`` and
``export_urdf(stage, out)``. Conventions and pitfalls: docs/importers.md.
Names load on first use, so that ``mimic-ext --help`` (which imports ``commands``) does
not pull in USD.
"""

from __future__ import annotations

from ..lazy_exports import lazy_getattr

_EXPORTS = {
    "ImportResult": "importing",
    "import_robot": "importing",
    "read_robot": "importing",
    "export_urdf": "urdf_export",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (the lazy table is the one list of public names)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
