"""Closed-form narrow phase for primitive pairs (normals from shape b to shape a).

Spheres and capsules are a point or a segment (their *core*) inflated by a radius, so
sphere/sphere, sphere/capsule and capsule/capsule are closest points of two segments.
Box/box is the separating-axis test on 15 axes, and sphere/box and capsule/box the same
test with the core as a flat box: exact whenever the cores overlap; cores apart go to
GJK, exact too. Every pair with a plane starts from the shape's support point towards
the plane. Pairs that return ``MANIFOLD`` get their contact points from the clipped
features (``manifold``).
"""

from __future__ import annotations

import warp as wp

from .manifold import add_candidate
from .support import box_corner, col, sgn, support
from .wp_types import BOX, CollisionData, CollisionScratch, Pair, ShapeData

NOTHING = wp.constant(0)
MANIFOLD = wp.constant(1)  # normal, separation, deepest point known: clip the features
WRITTEN = wp.constant(2)  # contact candidates written
CONVEX = wp.constant(3)  # not decided here: GJK/EPA


@wp.func
def segment_params(p1: wp.vec3, q1: wp.vec3, p2: wp.vec3, q2: wp.vec3):
    """Parameters (s, t) of the closest points p1 + s (q1 - p1), p2 + t (q2 - p2)."""
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = wp.dot(d1, d1)
    e = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    c = wp.dot(d1, r)
    b = wp.dot(d1, d2)
    s = float(0.0)
    t = float(0.0)
    if a > 1.0e-20 and e > 1.0e-20:
        den = a * e - b * b
        if den > 1.0e-12 * a * e:
            s = wp.clamp((b * f - c * e) / den, 0.0, 1.0)
        t = (b * s + f) / e
        if t < 0.0:
            t = 0.0
            s = wp.clamp(-c / a, 0.0, 1.0)
        elif t > 1.0:
            t = 1.0
            s = wp.clamp((b - c) / a, 0.0, 1.0)
    elif a > 1.0e-20:
        s = wp.clamp(-c / a, 0.0, 1.0)
    elif e > 1.0e-20:
        t = wp.clamp(f / e, 0.0, 1.0)
    return s, t


@wp.func
def core_axis(cd: CollisionData, sc: CollisionScratch, e: int, idx: int):
    """Half of a sphere's or capsule's core segment (zero for a sphere), world."""
    s_Rw = sc.Rw
    c_shapes = cd.shapes
    return col(s_Rw[e, idx], 2) * c_shapes[idx].size[1]


@wp.func
def segments(cd: CollisionData, sc: CollisionScratch, pr: Pair):
    """Sphere and capsule cores against each other: one contact at the closest points,
    or two at the ends of the overlap of parallel capsules."""
    s_Rw = sc.Rw
    s_pw = sc.pw
    c_shapes = cd.shapes
    e = pr.e
    ua = core_axis(cd, sc, e, pr.a)
    ub = core_axis(cd, sc, e, pr.b)
    ca = s_pw[e, pr.a]
    cb = s_pw[e, pr.b]
    ra = c_shapes[pr.a].radius
    rb = c_shapes[pr.b].radius
    s, t = segment_params(ca - ua, ca + ua, cb - ub, cb + ub)
    x0 = ca - ua + (2.0 * s) * ua
    y0 = cb - ub + (2.0 * t) * ub
    x1 = x0
    y1 = y0
    count = int(1)
    la = wp.length_sq(ua)
    lb = wp.length_sq(ub)
    if la > 0.0 and lb > 0.0 and wp.length_sq(wp.cross(ua, ub)) < 1.0e-6 * la * lb:
        # parallel: the overlap of b's extent on a's segment, each end to its nearest point on b
        t0 = wp.clamp(wp.dot(cb - ub - ca, ua) / la, -1.0, 1.0)
        t1 = wp.clamp(wp.dot(cb + ub - ca, ua) / la, -1.0, 1.0)
        if wp.abs(t1 - t0) > 1.0e-6:
            x0 = ca + t0 * ua
            x1 = ca + t1 * ua
            y0 = cb + ub * wp.clamp(wp.dot(x0 - cb, ub) / lb, -1.0, 1.0)
            y1 = cb + ub * wp.clamp(wp.dot(x1 - cb, ub) / lb, -1.0, 1.0)
            count = 2
    up = col(s_Rw[e, pr.b], 0)
    n = up
    m = int(0)
    for k in range(count):
        x = x0
        y = y0
        if k == 1:
            x = x1
            y = y1
        d = x - y
        l = wp.length(d)
        nk = up
        if l > 1.0e-9:
            nk = d / l
        if k == 0:
            n = nk
        sep = l - ra - rb
        if sep <= pr.margin:
            m = add_candidate(sc.cand, sc.cs, e, m, 0.5 * ((x - ra * nk) + (y + rb * nk)), sep)
    return WRITTEN, n, 0.0, x0, m


@wp.func
def box_radius(R: wp.mat33, h: wp.vec3, L: wp.vec3):
    return (
        h[0] * wp.abs(wp.dot(col(R, 0), L)) + h[1] * wp.abs(wp.dot(col(R, 1), L)) + h[2] * wp.abs(wp.dot(col(R, 2), L))
    )


@wp.func
def core_box(s: ShapeData):
    """Half extents of a shape's core as a box: a sphere's is a point, a capsule's a segment."""
    if s.kind == BOX:
        return s.size
    return wp.vec3(0.0, 0.0, s.size[1])


@wp.func
def box_box(cd: CollisionData, sc: CollisionScratch, pr: Pair):
    """A box, or a sphere's or capsule's core as a flat box, against a box (b): separating
    axes, 3 + 3 face normals and 9 edge cross products. Overlapping cores take the axis of
    least overlap (exact: it is among these), an edge axis only when it beats the best face
    clearly; its deepest point is then the closest point of the two edges. Cores apart are
    left to GJK, as the axes only bound their distance from below (a corner facing an edge
    is nearer along none of them)."""
    s_Rw = sc.Rw
    s_pw = sc.pw
    c_shapes = cd.shapes
    e = pr.e
    ha = core_box(c_shapes[pr.a])
    r = c_shapes[pr.a].radius
    hb = c_shapes[pr.b].size
    Ra = s_Rw[e, pr.a]
    Rb = s_Rw[e, pr.b]
    ca = s_pw[e, pr.a]
    cb = s_pw[e, pr.b]
    D = ca - cb
    tol = 1.0e-3 * wp.min(hb[0], wp.min(hb[1], hb[2]))
    best = float(-3.0e38)
    face_best = float(-3.0e38)
    bn = wp.vec3(0.0)
    bq = int(0)
    for q in range(15):
        L = wp.vec3(0.0)
        if q < 3:
            L = col(Ra, q)
        elif q < 6:
            L = col(Rb, q - 3)
        else:
            L = wp.cross(col(Ra, (q - 6) // 3), col(Rb, (q - 6) % 3))
        l = wp.length(L)
        if l > 1.0e-5:
            L = L / l
            s = wp.abs(wp.dot(D, L)) - box_radius(Ra, ha, L) - box_radius(Rb, hb, L)
            if s - r > pr.margin:
                return NOTHING, bn, s, ca, 0
            if q < 6:
                face_best = wp.max(face_best, s)
            if s > best and (q < 6 or s > face_best + tol):
                best = s
                bn = L * sgn(wp.dot(D, L))
                bq = q
    if best > 0.0:
        return CONVEX, bn, best, ca, 0
    sep = best - r
    pa = box_corner(Ra, ca, ha, -bn) - r * bn
    if bq >= 6:
        # edge x edge: a's edge along its axis i farthest along -n, b's along +n
        i = (bq - 6) // 3
        j = (bq - 6) % 3
        ua = col(Ra, i) * ha[i]
        ub = col(Rb, j) * hb[j]
        xa = box_corner(Ra, ca, ha, -bn)
        xa = xa - col(Ra, i) * (wp.dot(xa - ca, col(Ra, i)))
        xb = box_corner(Rb, cb, hb, bn)
        xb = xb - col(Rb, j) * (wp.dot(xb - cb, col(Rb, j)))
        s, t = segment_params(xa - ua, xa + ua, xb - ub, xb + ub)
        xa = xa - ua + (2.0 * s) * ua
        sep = wp.dot(xa - (xb - ub + (2.0 * t) * ub), bn) - r
        pa = xa - r * bn
    elif bq < 3:
        pa = box_corner(Rb, cb, hb, bn) + sep * bn
    return MANIFOLD, bn, sep, pa, 0


@wp.func
def plane_pair(cd: CollisionData, sc: CollisionScratch, pr: Pair):
    """Any shape (a) against a static infinite plane (b): its support point towards it."""
    e = pr.e
    n = col(sc.Rw[e, pr.b], 2)
    sa = cd.shapes[pr.a]
    pa = support(sa, cd.verts, sc.Rw[e, pr.a], sc.pw[e, pr.a], -n) - n * sa.radius
    return MANIFOLD, n, wp.dot(pa - sc.pw[e, pr.b], n), pa, 0
