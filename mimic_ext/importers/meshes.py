"""Optional mesh conversion: only when a well-kept mesh library (trimesh) is installed.

Mesh files (STL, OBJ, DAE, GLB) need a real parser; without one the importer keeps the
physics (bodies, joints, mass, primitives, relations) and says once which meshes were
left out, instead of shipping a half-correct parser of its own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def mesh_library():
    """The trimesh module, or None when it is not installed."""
    try:
        import trimesh
    except ImportError:
        return None
    return trimesh


def load_mesh(path: Path, scale) -> tuple[np.ndarray, np.ndarray]:
    """(points (N, 3), triangles (M, 3)) of a mesh file, scaled; raises on any failure."""
    trimesh = mesh_library()
    if trimesh is None:
        raise RuntimeError("no mesh library installed")
    mesh = trimesh.load(str(path), force="mesh")
    points = np.asarray(mesh.vertices, dtype=float) * np.asarray(scale, dtype=float)
    faces = np.asarray(mesh.faces, dtype=np.int64)
    if points.ndim != 2 or points.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3 or not len(faces):
        raise ValueError("not a triangle mesh")
    return points, faces
