"""Convex hulls of mesh colliders (numpy quickhull): every input point inside, faces merged
per plane and closed (Euler V - E + F = 2), and PhysX's vertex limit keeping the extremes.

Tolerance: float64 hulls of unit-size point sets; 1e-9 covers the rounding of the planes.
"""

from __future__ import annotations

import numpy as np
import pytest

from mimic_ext.solver.collision.hull import FlatHullError, convex_hull


def check_closed_convex(hull, points):
    assert all(hull.contains(p, tol=1e-9) for p in points)  # every input point inside
    for n, d, face in zip(hull.normals, hull.offsets, hull.faces):
        np.testing.assert_allclose(hull.vertices[face] @ n, d, atol=1e-9)  # the face is planar
    edges = {tuple(sorted((f[i], f[(i + 1) % len(f)]))) for f in hull.faces for i in range(len(f))}
    assert len(hull.vertices) - len(edges) + len(hull.faces) == 2  # a closed polyhedron


def test_box_with_interior_points_is_its_eight_corners_and_six_quads():
    rng = np.random.default_rng(0)
    corners = np.array([[x, y, z] for x in (-1, 2) for y in (-0.5, 0.5) for z in (0, 3)], float)
    pts = np.vstack([corners, rng.uniform([-1, -0.5, 0], [2, 0.5, 3], (500, 3))])
    hull = convex_hull(pts)
    assert len(hull.vertices) == 8 and sorted(len(f) for f in hull.faces) == [4] * 6
    check_closed_convex(hull, pts)


def test_round_point_cloud_and_the_vertex_limit():
    rng = np.random.default_rng(1)
    pts = rng.normal(size=(400, 3))
    pts /= np.linalg.norm(pts, axis=1)[:, None]
    full = convex_hull(pts, vertex_limit=None)
    assert len(full.vertices) == 400 and not full.truncated
    check_closed_convex(full, pts)
    cut = convex_hull(pts, vertex_limit=64)
    assert len(cut.vertices) == 64 and cut.truncated
    assert set(map(tuple, cut.vertices)) <= set(map(tuple, pts))
    # farthest-point first: the cut hull still reaches far out in every direction
    dirs = rng.normal(size=(200, 3))
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    assert np.min(np.max(dirs @ cut.vertices.T, axis=1)) > 0.8


@pytest.mark.parametrize(
    "pts",
    [
        np.zeros((5, 3)),
        np.outer(np.arange(6), [1, 2, 3]),
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 3, 0]], float),
    ],
)
def test_flat_point_sets_are_refused(pts):
    with pytest.raises(FlatHullError):
        convex_hull(pts)
