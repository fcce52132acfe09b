"""Volume, centre of mass and inertia of a mesh exactly as MuJoCo's compiler computes them.

A body without ``<inertial>`` gets its mass from its geoms, meshes included, and MuJoCo's
rule for a mesh depends on the mesh's ``inertia`` setting (src/user/user_mesh.cc,
``mjCMesh::Process``, ``ComputeVolume``, ``ComputeSurfaceArea``, ``ComputeInertia``):

- the vertices are stored as float32 after ``scale``;
- pyramids from the area-weighted centroid of the faces give the volume and centre of
  mass; ``legacy`` (MuJoCo's default) adds every pyramid's volume as a positive number,
  ``exact`` keeps the sign (a closed, consistently oriented surface), ``convex`` uses the
  faces of the convex hull, ``shell`` spreads the mass over the surface;
- the inertia integrals are then taken about that centre of mass, and the volume is
  recomputed from pyramids with their apex there (for ``legacy`` this second volume is the
  one the mass uses).

The geom's mass is ``density * volume`` (or its ``mass``), its inertia that integral
scaled by ``mass / volume``, as ``mjCGeom::SetInertia`` does through its equivalent box.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MODES = ("legacy", "convex", "exact", "shell")
#: MuJoCo's mjMINVAL: smaller volumes or areas are refused, as MuJoCo refuses them
MINVAL = 1e-15


class MeshInertiaError(ValueError):
    """MuJoCo would refuse this mesh for mass computation (the message says why)."""


@dataclass
class MeshMass:
    """Per unit density: ``volume`` (area for a shell), centre of mass and the inertia
    tensor about it, in the mesh's (scaled) frame."""

    volume: float
    com: np.ndarray
    inertia: np.ndarray


def _triangles(points: np.ndarray, faces: np.ndarray):
    """(area, unit normal, centroid) of every triangle, as MuJoCo's ``triangle``."""
    a, b, c = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    n = np.cross(b - a, c - a)
    length = np.linalg.norm(n, axis=1)
    normal = n / np.where(length > 0, length, 1.0)[:, None]
    return length / 2.0, normal, (a + b + c) / 3.0


def _hull_faces(points: np.ndarray) -> np.ndarray:
    """Triangles of the convex hull, oriented outwards (MuJoCo asks qhull with ``Qt``)."""
    try:
        from scipy.spatial import ConvexHull
    except ImportError as exc:  # pragma: no cover - scipy comes with the mesh extra
        raise MeshInertiaError('inertia="convex" needs scipy (pip install mimic-ext[mesh])') from exc
    hull = ConvexHull(points, qhull_options="Qt")
    faces = hull.simplices.copy()
    a, b, c = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    faces[flip] = faces[flip][:, [0, 2, 1]]
    return faces


def mesh_mass(points, faces, mode: str = "legacy") -> MeshMass:
    """MuJoCo's mass properties of a triangle mesh (points already scaled)."""
    if mode not in MODES:
        raise MeshInertiaError(f'unknown mesh inertia "{mode}" (use {", ".join(MODES)})')
    vert = np.asarray(points, dtype=np.float32).astype(np.float64)  # MuJoCo keeps float vertices
    face = np.asarray(faces, dtype=np.int64)
    area, normal, center = _triangles(vert, face)
    total_area = area.sum()
    if total_area < MINVAL:
        raise MeshInertiaError("mesh surface area is too small")
    facecen = (area[:, None] * center).sum(axis=0) / total_area

    shell = mode == "shell"
    if mode == "convex":
        face = _hull_faces(vert)
        area, normal, center = _triangles(vert, face)
    if shell:
        weight = area
    else:
        weight = np.einsum("ij,ij->i", center - facecen, normal) * area / 3.0
        if mode == "legacy":
            weight = np.abs(weight)
    volume = weight.sum()
    if volume < MINVAL:
        if volume < 0:
            raise MeshInertiaError("mesh volume is negative (misoriented triangles)")
        raise MeshInertiaError('mesh volume is too small (inertia="shell" suits an open surface)')
    com = (weight[:, None] * (center * 0.75 + facecen * 0.25)).sum(axis=0) / volume

    # inertia integrals about the centre of mass, volume recomputed from there
    v = vert - com
    D, E, F = v[face[:, 0]], v[face[:, 1]], v[face[:, 2]]
    area, normal, center = _triangles(v, face)
    if shell:
        w = area
    else:
        w = np.einsum("ij,ij->i", center, normal) * area / 3.0
        if mode == "legacy":
            w = np.abs(w)
    volume = w.sum()
    C = 12.0 if shell else 20.0
    P = np.zeros((3, 3))
    for i in range(3):
        for j in range(i, 3):
            term = (
                2 * (D[:, i] * D[:, j] + E[:, i] * E[:, j] + F[:, i] * F[:, j])
                + D[:, i] * E[:, j]
                + D[:, j] * E[:, i]
                + D[:, i] * F[:, j]
                + D[:, j] * F[:, i]
                + E[:, i] * F[:, j]
                + E[:, j] * F[:, i]
            )
            P[i, j] = P[j, i] = (w / C * term).sum()
    inertia = np.trace(P) * np.eye(3) - P
    if volume < MINVAL:
        raise MeshInertiaError("mesh volume is too small")
    return MeshMass(float(volume), com, inertia)
