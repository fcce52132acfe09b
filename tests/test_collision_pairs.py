"""Narrow phase against float64 references: every primitive pair's closed form, GJK/EPA on
cylinders and hulls, manifold point counts. Each test batches its configurations as
environments (one pose per environment), so it also exercises the per-environment layout.

Tolerances: the kernels run in float32 on coordinates of order 0.1-1 m (unit roundoff
6e-8), so closed forms carry a few 1e-7 m of error; 2e-5 m leaves a wide margin and is
still far below anything physical (contact offsets are 2 cm). GJK/EPA stop at 1e-6 m
absolute plus 1e-5 relative to the depth, so they get 1e-4 m.
"""

from __future__ import annotations

import numpy as np
import pytest
from collision_scenes import (
    box,
    box_corners,
    box_point_dist,
    box_projector,
    capsule,
    collide,
    convex_distance,
    cylinder,
    deepest,
    hull_of,
    plane,
    pose,
    random_rotations,
    rot,
    seg_box_dist,
    seg_point_dist,
    seg_seg_dist,
    sphere,
)

CLOSED = 2e-5  # m, closed forms (see module docstring)
ITER = 1e-4  # m, GJK/EPA
MARGIN = 0.04  # contact offsets 0.02 + 0.02: contacts are reported up to 4 cm apart


def unit(v):
    return v / np.linalg.norm(v)


def check_separations(c, expected, tol, normals=None):
    """One contact (or none beyond the margin) per environment, with the expected
    separation and, where given, normal (from shape b to shape a)."""
    for e, want in enumerate(expected):
        if abs(want - MARGIN) < 1e-3:
            continue  # on the margin: either answer is right
        if want > MARGIN:
            assert c.count[e] == 0, (e, want, c.separation[e, : c.count[e]])
            continue
        sep, n = deepest(c, e)
        assert sep is not None, (e, want)
        assert sep == pytest.approx(want, abs=tol), e
        if normals is not None:
            assert np.dot(n, normals[e]) > 1 - 1e-6, (e, n, normals[e])  # within 0.08 deg


# ---- spheres and capsules: closest points of segments ------------------------------------------
def test_sphere_sphere_matches_the_centre_distance():
    rng = np.random.default_rng(1)
    N = 40
    ca = rng.uniform(-1, 1, (N, 3))
    d = np.array([unit(v) for v in rng.normal(size=(N, 3))])
    dist = 0.17 + rng.uniform(-0.08, 0.08, N)
    cb = ca - d * dist[:, None]
    cm, c = collide(
        [sphere(0.1, "a"), sphere(0.07, "b")],
        {"a": np.array([pose(x) for x in ca]), "b": np.array([pose(x) for x in cb])},
    )
    check_separations(c, dist - 0.17, CLOSED, d)
    for e in range(N):
        if c.count[e]:
            mid = 0.5 * ((ca[e] - 0.1 * d[e]) + (cb[e] + 0.07 * d[e]))
            np.testing.assert_allclose(c.point[e, 0], mid, atol=CLOSED)


def test_sphere_capsule_and_capsule_capsule_match_sampled_distances():
    rng = np.random.default_rng(2)
    N = 60
    Ra, Rb = random_rotations(N, rng), random_rotations(N, rng)
    ca = rng.uniform(-0.5, 0.5, (N, 3))
    cb = ca + rng.uniform(-0.3, 0.3, (N, 3))
    want_sc, want_cc = [], []
    for e in range(N):
        a0, a1 = ca[e] - Ra[e][:, 2] * 0.1, ca[e] + Ra[e][:, 2] * 0.1
        b0, b1 = cb[e] - Rb[e][:, 2] * 0.15, cb[e] + Rb[e][:, 2] * 0.15
        want_sc.append(seg_point_dist(b0, b1, ca[e]) - 0.05 - 0.04)
        want_cc.append(seg_seg_dist(a0, a1, b0, b1) - 0.05 - 0.04)
    poses = {
        "a": np.array([pose(ca[e], Ra[e]) for e in range(N)]),
        "b": np.array([pose(cb[e], Rb[e]) for e in range(N)]),
    }
    _, c = collide([sphere(0.05, "a"), capsule(0.04, 0.15, "b")], poses)
    check_separations(c, want_sc, CLOSED)
    _, c = collide([capsule(0.05, 0.1, "a"), capsule(0.04, 0.15, "b")], poses)
    check_separations(c, want_cc, CLOSED)


def test_parallel_capsules_touch_at_the_two_ends_of_their_overlap():
    a = pose((0, 0, 0.05), rot((0, 1, 0), np.pi / 2))  # along x, from -0.2 to 0.2
    b = pose((0.3, 0, -0.05), rot((0, 1, 0), np.pi / 2))  # along x, from 0.1 to 0.5, touching
    _, c = collide([capsule(0.05, 0.2, "a"), capsule(0.05, 0.2, "b")], {"a": a[None], "b": b[None]})
    assert c.count[0] == 2
    np.testing.assert_allclose(sorted(c.point[0, :2, 0]), [0.1, 0.2], atol=CLOSED)
    np.testing.assert_allclose(c.separation[0, :2], [0, 0], atol=CLOSED)
    np.testing.assert_allclose(c.normal[0, :2], [[0, 0, 1]] * 2, atol=1e-6)


# ---- boxes -------------------------------------------------------------------------------------
def test_sphere_box_outside_and_inside():
    rng = np.random.default_rng(3)
    N = 60
    h = np.array([0.2, 0.1, 0.05])
    Rb = random_rotations(N, rng)
    loc = rng.uniform(-1, 1, (N, 3)) * (h + 0.1)
    cs = np.array([Rb[e] @ loc[e] for e in range(N)])
    want = []
    for e in range(N):
        d = box_point_dist(np.zeros(3), Rb[e], h, cs[e])
        want.append(d - 0.04 if d > 0 else -(np.min(h - np.abs(loc[e]))) - 0.04)
    _, c = collide(
        [sphere(0.04, "a"), box(h, "b")],
        {"a": np.array([pose(x) for x in cs]), "b": np.array([pose((0, 0, 0), R) for R in Rb])},
    )
    check_separations(c, want, CLOSED)


def test_capsule_box_matches_sampled_distances():
    rng = np.random.default_rng(4)
    N = 80
    h = np.array([0.15, 0.1, 0.08])
    Ra = random_rotations(N, rng)
    ca = rng.uniform(-1, 1, (N, 3)) * 0.35
    want = []
    for e in range(N):
        a0, a1 = ca[e] - Ra[e][:, 2] * 0.12, ca[e] + Ra[e][:, 2] * 0.12
        want.append(seg_box_dist(a0, a1, np.zeros(3), np.eye(3), h) - 0.03)
    keep = [e for e in range(N) if want[e] > -0.029]  # the core stays outside: sampled distance is exact
    _, c = collide(
        [capsule(0.03, 0.12, "a"), box(h, "b")],
        {"a": np.array([pose(ca[e], Ra[e]) for e in keep]), "b": np.array([pose()] * len(keep))},
    )
    check_separations(c, [want[e] for e in keep], CLOSED)


def test_capsule_entering_a_box_is_pushed_out_the_nearest_way():
    # a capsule lying along x, its core 1 cm inside the box's top face: depth = 1 cm + radius
    a = pose((0, 0, 0.09), rot((0, 1, 0), np.pi / 2))
    _, c = collide([capsule(0.03, 0.1, "a"), box((0.3, 0.3, 0.1), "b")], {"a": a[None], "b": pose()[None]})
    assert c.count[0] == 2  # lying on a face: both ends
    np.testing.assert_allclose(c.separation[0, :2], [-0.04, -0.04], atol=CLOSED)
    np.testing.assert_allclose(c.normal[0, :2], [[0, 0, 1]] * 2, atol=1e-6)


def test_box_box_separated_matches_alternating_projections():
    rng = np.random.default_rng(5)
    N = 40
    ha, hb = np.array([0.1, 0.07, 0.05]), np.array([0.12, 0.04, 0.09])
    Ra, Rb = random_rotations(N, rng), random_rotations(N, rng)
    d = np.array([unit(v) for v in rng.normal(size=(N, 3))])
    ca = d * rng.uniform(0.2, 0.32, N)[:, None]
    want = [
        convex_distance(box_projector(ca[e], Ra[e], ha), box_projector(np.zeros(3), Rb[e], hb), ca[e]) for e in range(N)
    ]
    keep = [e for e in range(N) if want[e] > 1e-6]  # overlapping ones have no distance to compare
    assert sum(want[e] < MARGIN for e in keep) > 5
    _, c = collide(
        [box(ha, "a"), box(hb, "b")],
        {"a": np.array([pose(ca[e], Ra[e]) for e in keep]), "b": np.array([pose((0, 0, 0), Rb[e]) for e in keep])},
    )
    check_separations(c, [want[e] for e in keep], CLOSED)


@pytest.mark.parametrize("angle", [0.0, 0.3, 1.0])
def test_box_resting_on_a_box_gets_four_contacts_at_the_depth(angle):
    # the top box turned about z, sunk 3 mm into the bottom one's top face
    top = pose((0.01, -0.02, 0.1 + 0.05 - 0.003), rot((0, 0, 1), angle))
    _, c = collide([box((0.05, 0.05, 0.05), "a"), box((0.3, 0.3, 0.1), "b")], {"a": top[None], "b": pose()[None]})
    assert c.count[0] == 4
    np.testing.assert_allclose(c.separation[0, :4], [-0.003] * 4, atol=CLOSED)
    np.testing.assert_allclose(c.normal[0, :4], [[0, 0, 1]] * 4, atol=1e-6)
    assert np.allclose(c.point[0, :4, 2], 0.1 - 0.0015, atol=CLOSED)


def test_box_box_edge_on_edge_is_one_point():
    a = pose((0, 0, 0.15 * np.sqrt(2) + 0.005), rot((1, 0, 0), np.pi / 4))  # edge along x, 5 mm above
    b = pose((0, 0, 0), rot((0, 1, 0), np.pi / 4))  # ridge along y
    _, c = collide([box((0.05, 0.05, 0.05), "a"), box((0.1, 0.1, 0.1), "b")], {"a": a[None], "b": b[None]})
    assert c.count[0] == 1
    want = a[2, 3] - 0.05 * np.sqrt(2) - 0.1 * np.sqrt(2)
    assert c.separation[0, 0] == pytest.approx(want, abs=CLOSED)
    np.testing.assert_allclose(c.normal[0, 0], [0, 0, 1], atol=1e-5)


# ---- planes ------------------------------------------------------------------------------------
def test_every_shape_on_a_plane_matches_its_lowest_point():
    rng = np.random.default_rng(6)
    N = 50
    R = random_rotations(N, rng)
    z = rng.uniform(-0.05, 0.3, N)
    poses = {"a": np.array([pose((0.1, 0.2, z[e]), R[e]) for e in range(N)])}
    h = np.array([0.1, 0.06, 0.04])
    cases = {
        "sphere": (sphere(0.05), lambda e: z[e] - 0.05),
        "capsule": (capsule(0.05, 0.1), lambda e: z[e] - 0.1 * abs(R[e][2, 2]) - 0.05),
        "box": (box(h), lambda e: z[e] - np.sum(h * np.abs(R[e][2, :]))),
        "cylinder": (
            cylinder(0.05, 0.1),
            lambda e: z[e] - 0.1 * abs(R[e][2, 2]) - 0.05 * np.sqrt(max(0.0, 1 - R[e][2, 2] ** 2)),
        ),
        "hull": (hull_of(box_corners(h)), lambda e: z[e] - np.sum(h * np.abs(R[e][2, :]))),
    }
    for kind, (s, want) in cases.items():
        _, c = collide([s, plane(0.0, offset=0.02)], poses)
        check_separations(c, [want(e) for e in range(N)], CLOSED, [np.array([0, 0, 1.0])] * N)


@pytest.mark.parametrize(
    "kind, tilt, count",
    [
        ("box", 0.0, 4),
        ("box", 0.3, 2),
        ("hull", 0.0, 4),
        ("hull", 0.3, 2),
        ("cylinder", 0.0, 4),
        ("cylinder", np.pi / 2, 2),
        ("capsule", np.pi / 2, 2),
        ("sphere", 0.0, 1),
    ],
)
def test_manifold_point_counts_on_a_plane(kind, tilt, count):
    # resting 1 mm deep: a face gives 4 points, an edge or a lying cylinder/capsule 2, a sphere 1;
    # "tilt" turns about x (0.3 rad puts a box on an edge: its other edge is 3 cm up, out of reach)
    h = np.array([0.1, 0.1, 0.1])
    s = {
        "box": box(h),
        "hull": hull_of(box_corners(h)),
        "cylinder": cylinder(0.1, 0.1),
        "capsule": capsule(0.05, 0.1),
        "sphere": sphere(0.05),
    }[kind]
    R = rot((1, 0, 0), tilt)
    lowest = {
        "box": lambda: np.sum(h * np.abs(R[2, :])),
        "hull": lambda: np.sum(h * np.abs(R[2, :])),
        "cylinder": lambda: 0.1 * abs(R[2, 2]) + 0.1 * np.sqrt(1 - R[2, 2] ** 2),
        "capsule": lambda: 0.05,
        "sphere": lambda: 0.05,
    }[kind]()
    _, c = collide([s, plane(0.0, offset=0.005)], {"a": pose((0, 0, lowest - 0.001), R)[None]})
    assert c.count[0] == count
    np.testing.assert_allclose(c.separation[0, :count].min(), -0.001, atol=CLOSED)


# ---- GJK/EPA: cylinders and hulls ----------------------------------------------------------------
def test_sphere_cylinder_matches_the_analytic_distance():
    rng = np.random.default_rng(7)
    N = 60
    Rb = random_rotations(N, rng)
    loc = rng.uniform(-1, 1, (N, 3)) * np.array([0.14, 0.14, 0.14])
    cs = np.array([Rb[e] @ loc[e] for e in range(N)])
    want = []
    for e in range(N):
        rho, z = np.hypot(loc[e][0], loc[e][1]), loc[e][2]
        out_r, out_z = max(rho - 0.08, 0.0), max(abs(z) - 0.1, 0.0)
        want.append(np.hypot(out_r, out_z) - 0.03 if out_r or out_z else -min(0.08 - rho, 0.1 - abs(z)) - 0.03)
    _, c = collide(
        [sphere(0.03, "a"), cylinder(0.08, 0.1, "b")],
        {"a": np.array([pose(x) for x in cs]), "b": np.array([pose((0, 0, 0), R) for R in Rb])},
    )
    check_separations(c, want, ITER)


@pytest.mark.parametrize("pair", ["hull-hull", "box-hull", "sphere-hull", "capsule-hull"])
def test_gjk_epa_on_box_hulls_matches_the_closed_forms(pair):
    """The same boxes as hulls of their corners: separations, normals and contact counts of
    GJK/EPA + clipping agree with the closed forms, separated and penetrating."""
    rng = np.random.default_rng(8)
    N = 80
    ha, hb = np.array([0.08, 0.05, 0.04]), np.array([0.1, 0.07, 0.06])
    Ra, Rb = random_rotations(N, rng), random_rotations(N, rng)
    ca = np.array([unit(v) for v in rng.normal(size=(N, 3))]) * rng.uniform(0.08, 0.2, N)[:, None]
    poses = {"a": np.array([pose(ca[e], Ra[e]) for e in range(N)]), "b": np.array([pose((0, 0, 0), R) for R in Rb])}
    first = {
        "hull-hull": box(ha, "a"),
        "box-hull": box(ha, "a"),
        "sphere-hull": sphere(0.06, "a"),
        "capsule-hull": capsule(0.04, 0.07, "a"),
    }[pair]
    first_hull = hull_of(box_corners(ha), "a") if pair == "hull-hull" else first
    _, ref = collide([first, box(hb, "b")], poses)
    _, got = collide([first_hull, hull_of(box_corners(hb), "b")], poses)
    compared = 0
    for e in range(N):
        rs, rn = deepest(ref, e)
        gs, gn = deepest(got, e)
        if rs is None and gs is None:
            continue
        if rs is None or gs is None:
            # only on the margin may one report a contact and the other not
            assert (rs if rs is not None else gs) == pytest.approx(MARGIN, abs=ITER), e
            continue
        compared += 1
        assert gs == pytest.approx(rs, abs=ITER), (e, rs, gs)
        if rs < MARGIN - 1e-3:
            # a normal is defined up to the degeneracy of face/face contacts: compare the
            # separation along it instead of the vector when the contact is a face
            assert np.dot(gn, rn) > 1 - 1e-3 or abs(gs - rs) < ITER, (e, rn, gn)
        if pair == "hull-hull" and rs < 0:
            assert got.count[e] == ref.count[e], e
    assert compared > N // 3


def test_cylinder_standing_on_a_box_gets_four_contacts():
    a = pose((0.0, 0.0, 0.1 + 0.05 - 0.002))
    _, c = collide([box((0.3, 0.3, 0.1), "b"), cylinder(0.04, 0.05, "a")], {"a": a[None], "b": pose()[None]})
    assert c.count[0] == 4
    np.testing.assert_allclose(c.separation[0, :4], [-0.002] * 4, atol=ITER)
    # the box is shape a (box < cylinder): the normal points from the cylinder to the box
    np.testing.assert_allclose(c.normal[0, :4], [[0, 0, -1]] * 4, atol=1e-4)
