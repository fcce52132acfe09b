"""Convex hulls of mesh colliders (build time, float64 numpy; no SciPy).

Quickhull (farthest point first), so stopping at a vertex limit keeps the points that
matter most, as PhysX's cooking does with ``physxConvexHullCollision:hullVertexLimit``
(default 64). The triangles of one plane are merged into one polygon face, ordered
counter-clockwise about its outward normal: the contact manifold clips against whole faces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_VERTEX_LIMIT = 64


class FlatHullError(ValueError):
    """The points span no volume (a plane, a line or a point)."""


@dataclass
class Hull:
    vertices: np.ndarray  # (V, 3)
    faces: list[np.ndarray]  # vertex indices per face, counter-clockwise about the normal
    normals: np.ndarray  # (F, 3) outward unit normals
    offsets: np.ndarray  # (F,)  normal . x = offset on the face
    truncated: bool = False  # the vertex limit cut points off (an inner approximation)

    def contains(self, p: np.ndarray, tol: float = 1e-9) -> bool:
        return bool(np.all(self.normals @ np.asarray(p, float) - self.offsets <= tol))


def _plane(p: np.ndarray, a: int, b: int, c: int):
    n = np.cross(p[b] - p[a], p[c] - p[a])
    n = n / np.linalg.norm(n)
    return n, float(n @ p[a])


def convex_hull(points, vertex_limit: int | None = DEFAULT_VERTEX_LIMIT) -> Hull:
    """Hull of ``points`` (N, 3); ``vertex_limit`` None keeps every extreme point."""
    p = np.unique(np.asarray(points, float).reshape(-1, 3), axis=0)
    if len(p) < 4:
        raise FlatHullError("fewer than 4 distinct points")
    extent = float(np.max(p.max(0) - p.min(0)))
    tol = 1e-9 * max(extent, 1e-12) * 10.0
    # initial tetrahedron from extreme points
    ext = np.concatenate([p.argmin(0), p.argmax(0)])
    d = np.linalg.norm(p[ext][:, None] - p[ext][None], axis=2)
    i, j = np.unravel_index(np.argmax(d), d.shape)
    a, b = int(ext[i]), int(ext[j])
    u = p[b] - p[a]
    if np.linalg.norm(u) <= tol:
        raise FlatHullError("all points coincide")
    u = u / np.linalg.norm(u)
    off = p - p[a]
    line = np.linalg.norm(off - np.outer(off @ u, u), axis=1)
    c = int(np.argmax(line))
    if line[c] <= tol:
        raise FlatHullError("the points lie on a line")
    n0, d0 = _plane(p, a, b, c)
    h = p @ n0 - d0
    e = int(np.argmax(np.abs(h)))
    if abs(h[e]) <= tol:
        raise FlatHullError("the points lie in a plane")
    if h[e] > 0:
        b, c = c, b
    tris = [(a, b, c), (a, e, b), (b, e, c), (c, e, a)]
    faces: list[list] = []  # [tri, normal, offset, outside indices]
    remaining = np.setdiff1d(np.arange(len(p)), [a, b, c, e])
    for t in tris:
        n, off_ = _plane(p, *t)
        faces.append([t, n, off_, np.empty(0, int)])
    _assign(p, faces, remaining, tol)
    used = {a, b, c, e}
    truncated = False
    while True:
        k = next((fi for fi, f in enumerate(faces) if len(f[3])), None)
        if k is None:
            break
        if vertex_limit is not None and len(used) >= vertex_limit:
            truncated = True
            break
        f = faces[k]
        eye = int(f[3][np.argmax(p[f[3]] @ f[1] - f[2])])
        normals = np.array([g[1] for g in faces])
        offsets = np.array([g[2] for g in faces])
        visible = np.nonzero(normals @ p[eye] - offsets > tol)[0]
        edges = set()
        for fi in visible:
            t = faces[fi][0]
            for x, y in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
                if (y, x) in edges:
                    edges.discard((y, x))
                else:
                    edges.add((x, y))
        orphans = np.unique(np.concatenate([faces[fi][3] for fi in visible]))
        orphans = orphans[orphans != eye]
        vis = set(visible.tolist())
        faces = [g for fi, g in enumerate(faces) if fi not in vis]
        new = []
        for x, y in edges:
            n, off_ = _plane(p, x, y, eye)
            new.append([(x, y, eye), n, off_, np.empty(0, int)])
        _assign(p, new, orphans, tol)
        faces.extend(new)
        used.add(eye)
    return _merge(p, faces, tol, truncated)


def _assign(p, faces, idx, tol):
    """Give each point to the first face it is outside of (points inside every face drop out)."""
    idx = np.asarray(idx, int)
    for f in faces:
        if not len(idx):
            break
        out = p[idx] @ f[1] - f[2] > tol
        f[3] = idx[out]
        idx = idx[~out]


def _merge(p, faces, tol, truncated) -> Hull:
    """Join neighbouring triangles of one plane (on a convex hull they are connected)."""
    parent = list(range(len(faces)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_edge = {}
    for fi, (t, _, _, _) in enumerate(faces):
        for x, y in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            by_edge[(x, y)] = fi
    for fi, (t, n, off_, _) in enumerate(faces):
        for x, y in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            gi = by_edge.get((y, x))
            if gi is not None and n @ faces[gi][1] > 1.0 - 1e-9 and abs(off_ - faces[gi][2]) <= 10 * tol:
                parent[find(fi)] = find(gi)
    groups: dict[int, list[int]] = {}
    for fi in range(len(faces)):
        groups.setdefault(find(fi), []).append(fi)
    keep = sorted({v for t, _, _, _ in faces for v in t})
    remap = {v: i for i, v in enumerate(keep)}
    verts = p[keep]
    out_faces, normals, offsets = [], [], []
    for members in groups.values():
        n = sum(faces[fi][1] for fi in members)
        n = n / np.linalg.norm(n)
        ids = np.array(sorted({remap[v] for fi in members for v in faces[fi][0]}))
        q = verts[ids]
        cen = q.mean(0)
        x = q[0] - cen
        x = x - (x @ n) * n
        x /= np.linalg.norm(x)
        y = np.cross(n, x)
        ang = np.arctan2((q - cen) @ y, (q - cen) @ x)
        out_faces.append(ids[np.argsort(ang)])
        normals.append(n)
        offsets.append(float(np.max(q @ n)))
    return Hull(
        vertices=verts, faces=out_faces, normals=np.array(normals), offsets=np.array(offsets), truncated=truncated
    )
