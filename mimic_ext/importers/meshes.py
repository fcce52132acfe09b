"""Optional mesh conversion: only when a well-kept mesh library (trimesh) is installed.

Mesh files (STL, OBJ, DAE, GLB) need a real parser; without one the importer keeps the
physics (bodies, joints, mass of primitives, relations) and says once which meshes were
left out, instead of shipping a half-correct parser of its own. The ``mesh`` extra brings
trimesh with what real robot files need besides: pycollada for ``.dae``, Pillow for
textured ``.obj`` and glTF, scipy for convex hulls.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import cast

import numpy as np

from ..errors import MimicInputError
from ..input_files import check_regular_file

RGBA = tuple[float, float, float, float]


@dataclass(frozen=True)
class MeshData:
    """A triangle mesh as read from its file (then scaled), and the file's own colour."""

    points: np.ndarray  # (N, 3) float64
    faces: np.ndarray  # (M, 3) int64
    rgba: tuple[float, float, float, float] | None  # mean colour of the file's material/texture


def mesh_library():
    """The trimesh module, or None when it is not installed."""
    try:
        import trimesh
    except ImportError:
        return None
    return trimesh


def _mean_color(mesh) -> tuple[float, float, float, float] | None:
    """The mean colour of a trimesh mesh's visual (vertex colours, or its texture sampled at
    the vertices, or its material), or None when the file gives none."""
    visual = getattr(mesh, "visual", None)
    if visual is None or not getattr(visual, "defined", False):
        return None
    try:
        colors = visual.to_color().vertex_colors if visual.kind == "texture" else visual.vertex_colors
    except Exception:  # a texture Pillow cannot decode: fall back to the material's colour
        material = getattr(visual, "material", None)
        main = getattr(material, "main_color", None)
        return None if main is None else cast(RGBA, tuple(float(c) / 255.0 for c in main))
    colors = np.asarray(colors, dtype=float)
    if colors.ndim != 2 or colors.shape[1] < 3 or not len(colors):
        return None
    mean = colors.mean(axis=0) / 255.0
    return (float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3]) if len(mean) > 3 else 1.0)


@lru_cache(maxsize=128)
def _read(path: str, mtime_ns: int) -> MeshData:
    trimesh = mesh_library()
    if trimesh is None:
        raise RuntimeError("no mesh library installed")
    mesh = trimesh.load(path, force="mesh")
    points = np.asarray(mesh.vertices, dtype=float)
    faces = np.asarray(mesh.faces, dtype=np.int64)
    if points.ndim != 2 or points.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3 or not len(faces):
        raise ValueError("not a triangle mesh")
    points.setflags(write=False)
    faces.setflags(write=False)
    return MeshData(points, faces, _mean_color(mesh))


def load_mesh(path: Path, scale) -> MeshData:
    """The mesh in ``path`` with its vertices scaled (a mirroring scale flips the faces, as
    MuJoCo does, so they still face outwards); raises on any failure."""
    p = check_regular_file(path, "mesh file")  # a FIFO would block the parser forever
    data = _read(str(p), p.stat().st_mtime_ns)
    s = np.asarray(scale, dtype=float)
    faces = data.faces if np.prod(s) > 0 else data.faces[:, [0, 2, 1]]
    return MeshData(data.points * s, faces, data.rgba)


@lru_cache(maxsize=64)
def _image_mean(path: str, mtime_ns: int) -> tuple[float, float, float, float] | None:
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(path) as image:
            pixels = np.asarray(image.convert("RGBA"), dtype=float) / 255.0
    except Exception:  # unreadable texture: the material colour alone
        return None
    mean = pixels.reshape(-1, 4).mean(axis=0)
    return cast(RGBA, tuple(float(x) for x in mean))  # the image converted to RGBA


def image_mean_color(path: Path) -> tuple[float, float, float, float] | None:
    """The mean RGBA of a texture image (Pillow), or None when it cannot be read."""
    try:
        p = check_regular_file(path, "texture")
        return _image_mean(str(p), p.stat().st_mtime_ns)
    except (OSError, MimicInputError):  # missing or not a file: the material colour alone
        return None
