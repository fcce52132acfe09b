"""URDF and MJCF robots to simulation-ready USD with their mimic relations, and back to URDF.

``import_robot(path, out=None, schema='physx') -> ImportResult`` and
``export_urdf(stage, out)``. Conventions and pitfalls: docs/importers.md.
"""

from .importing import ImportResult, import_robot, read_robot
from .urdf_export import export_urdf

__all__ = ["ImportResult", "import_robot", "read_robot", "export_urdf"]
