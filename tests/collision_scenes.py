"""Shapes and poses for the collision tests, and float64 numpy references written
independently of the kernels (sampling and convex minimisation, not the closed forms)."""

from __future__ import annotations

import numpy as np

from mimic_ext.solver.collision import CollisionModel, MaterialSpec, ShapeSpec, convex_hull


def pose(t=(0, 0, 0), R=None) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = np.eye(3) if R is None else R
    m[:3, 3] = t
    return m


def rot(axis, angle) -> np.ndarray:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def random_rotations(n: int, rng) -> np.ndarray:
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        1,
    )


def shape(
    kind: str,
    body: str | None = "a",
    size=(0, 0, 0),
    local=None,
    offset=0.02,
    rest=0.0,
    material=MaterialSpec(),  # noqa: B008 (a frozen dataclass: one shared default is safe)
    groups=frozenset(),
    hull=None,
    path=None,
) -> ShapeSpec:
    return ShapeSpec(
        path=path or f"/{body}/{kind}",
        kind=kind,
        body=body,
        static=body is None,
        pose=pose() if local is None else local,
        size=np.array(size, float),
        contact_offset=offset,
        rest_offset=rest,
        material=material,
        groups=frozenset(groups),
        hull=hull,
    )


def sphere(r, body="a", **kw):
    return shape("sphere", body, (r, 0, 0), **kw)


def capsule(r, half, body="a", **kw):
    return shape("capsule", body, (r, half, 0), **kw)


def box(half, body="a", **kw):
    return shape("box", body, half, **kw)


def cylinder(r, half, body="a", **kw):
    return shape("cylinder", body, (r, half, 0), **kw)


def plane(height=0.0, R=None, **kw):
    return shape("plane", None, local=pose((0, 0, height) if R is None else R[:, 2] * height, R), **kw)


def box_corners(half) -> np.ndarray:
    h = np.asarray(half, float)
    return np.array([[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def hull_of(points, body="a", **kw):
    return shape("hull", body, hull=convex_hull(points), **kw)


def collide(shapes, poses: dict, capacity=None):
    """Contacts for per-environment body poses ``{body: (N, 4, 4)}`` (same N for all)."""
    n = len(next(iter(poses.values()))) if poses else 1
    cm = CollisionModel.of_shapes(shapes, num_envs=n, capacity=capacity)
    R, p = cm.frames(free_poses=poses)
    cm.collide(R, p)
    return cm, cm.contacts()


def deepest(c, env: int):
    """(separation, normal) of an environment's deepest contact, or (None, None)."""
    k = int(c.count[env])
    if k == 0:
        return None, None
    i = int(np.argmin(c.separation[env, :k]))
    return float(c.separation[env, i]), c.normal[env, i].astype(float)


# ---- float64 references ------------------------------------------------------------------------
def seg_point_dist(a, b, x):
    ab = b - a
    t = np.clip(np.dot(x - a, ab) / max(np.dot(ab, ab), 1e-300), 0, 1)
    return np.linalg.norm(x - (a + t * ab))


def golden_min(f, lo=0.0, hi=1.0, iters=200):
    """Minimum of a convex function on [lo, hi] (golden section), float64."""
    g = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    for _ in range(iters):
        if f(c) < f(d):
            b = d
        else:
            a = c
        c, d = b - g * (b - a), a + g * (b - a)
    x = 0.5 * (a + b)
    return min((f(lo), lo), (f(hi), hi), (f(x), x))


def box_point_dist(c, R, h, x):
    """Distance from x to a solid box (0 inside)."""
    loc = R.T @ (x - c)
    return np.linalg.norm(loc - np.clip(loc, -h, h))


def seg_seg_dist(a0, a1, b0, b1):
    return golden_min(lambda s: seg_point_dist(b0, b1, a0 + s * (a1 - a0)))[0]


def seg_box_dist(a0, a1, c, R, h):
    return golden_min(lambda s: box_point_dist(c, R, h, a0 + s * (a1 - a0)))[0]


def convex_distance(project_a, project_b, x0, iters=100000):
    """Distance between two separated convex sets by alternating projections (until the
    distance stops changing at 1e-14 m)."""
    x = project_a(x0)
    y = project_b(x)
    d = np.linalg.norm(x - y)
    for _ in range(iters):
        x = project_a(y)
        y = project_b(x)
        dn = np.linalg.norm(x - y)
        if d - dn < 1e-14:
            return dn
        d = dn
    return d


def box_projector(c, R, h):
    return lambda x: c + R @ np.clip(R.T @ (x - c), -h, h)
