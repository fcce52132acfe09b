"""Support mappings and contact features of the shapes, world coordinates.

``support`` is the farthest point of a shape's *core* along a direction (a sphere's core
is its centre, a capsule's its segment: GJK works on cores and adds the radius after).
``feature`` writes the surface points of the face, edge or vertex a shape turns towards a
direction: a box's most aligned face, a plane's square under the other shape, a
cylinder's cap (its inscribed square, a corner at the rim's support point) or side line,
a capsule's segment, a hull's most aligned face. The manifold clips one feature against
the other. Polygons' winding is not used (side planes are oriented by the centroid).

Helpers called in loops take the arrays they read, not the model and scratch structs:
Warp passes structs by value, and copying them per call cost more than the geometry.
"""

from __future__ import annotations

import warp as wp

from .wp_types import BOX, CAPSULE, CYLINDER, HULL, MAXP, PLANE, FaceData, ShapeData


@wp.func
def col(R: wp.mat33, k: int):
    return wp.vec3(R[0, k], R[1, k], R[2, k])


@wp.func
def sgn(x: float):
    """+1 for x >= 0 (a direction orthogonal to an axis still picks one side)."""
    if x < 0.0:
        return -1.0
    return 1.0


@wp.func
def box_corner(R: wp.mat33, c: wp.vec3, h: wp.vec3, d: wp.vec3):
    """The corner of a box farthest along d."""
    p = c
    for k in range(3):
        ax = col(R, k)
        p = p + ax * (h[k] * sgn(wp.dot(ax, d)))
    return p


@wp.func
def support(s: ShapeData, verts: wp.array(dtype=wp.vec3), R: wp.mat33, c: wp.vec3, d: wp.vec3):
    """Farthest point of a shape's core along ``d`` (world)."""
    if s.kind == BOX:
        return box_corner(R, c, s.size, d)
    dl = wp.transpose(R) * d
    loc = wp.vec3(0.0)
    if s.kind == CAPSULE:
        loc = wp.vec3(0.0, 0.0, sgn(dl[2]) * s.size[1])
    elif s.kind == CYLINDER:
        rxy = wp.sqrt(dl[0] * dl[0] + dl[1] * dl[1])
        loc = wp.vec3(0.0, 0.0, sgn(dl[2]) * s.size[1])
        if rxy > 1.0e-12:
            loc = loc + wp.vec3(dl[0], dl[1], 0.0) * (s.size[0] / rxy)
    elif s.kind == HULL:
        best = float(-3.0e38)
        for i in range(s.v0, s.v0 + s.nv):
            h = wp.dot(verts[i], dl)
            if h > best:
                best = h
                loc = verts[i]
    return c + R * loc


@wp.func
def feature(
    s: ShapeData,
    verts: wp.array(dtype=wp.vec3),
    faces: wp.array(dtype=FaceData),
    fverts: wp.array(dtype=int),
    R: wp.mat33,
    c: wp.vec3,
    d: wp.vec3,
    pts: wp.array2d(dtype=wp.vec3),
    e: int,
    off: int,
    near: wp.vec3,
    extent: float,
):
    """Write the surface points of the feature a shape turns towards ``d`` at
    ``pts[e, off:]``; return their count (1 point, 2 a segment, more a face). A plane's
    feature is a square of half side ``extent`` under the point ``near``."""
    dl = wp.transpose(R) * d
    n = int(0)
    h = s.size[1]
    r = s.size[0]
    rxy = wp.sqrt(dl[0] * dl[0] + dl[1] * dl[1])
    u = wp.vec3(1.0, 0.0, 0.0)  # d across a cylinder's axis, its local frame
    if rxy > 1.0e-9:
        u = wp.vec3(dl[0] / rxy, dl[1] / rxy, 0.0)
    if s.kind == HULL:
        best = float(-3.0e38)
        bf = int(s.f0)
        for f in range(s.f0, s.f0 + s.nf):
            a = wp.dot(faces[f].n, dl)
            if a > best:
                best = a
                bf = f
        fd = faces[bf]
        n = wp.min(fd.count, MAXP)
        for q in range(n):
            # a face with more corners than a feature holds: every (count / MAXP)-th corner
            pts[e, off + q] = c + R * verts[fverts[fd.start + (q * fd.count) // n]]
    elif s.kind == BOX or s.kind == PLANE or (s.kind == CYLINDER and wp.abs(dl[2]) >= 0.70710678):
        # a quad: centre +- t1 +- t2
        cen = near - col(R, 2) * wp.dot(near - c, col(R, 2))  # a plane: a square under ``near``
        t1 = col(R, 0) * extent
        t2 = col(R, 1) * extent
        if s.kind == BOX:
            k = int(0)
            if wp.abs(dl[1]) > wp.abs(dl[k]):
                k = 1
            if wp.abs(dl[2]) > wp.abs(dl[k]):
                k = 2
            cen = c + col(R, k) * (sgn(dl[k]) * s.size[k])
            t1 = col(R, (k + 1) % 3) * s.size[(k + 1) % 3]
            t2 = col(R, (k + 2) % 3) * s.size[(k + 2) % 3]
        elif s.kind == CYLINDER:
            # the cap's inscribed square with a corner at the rim's support point
            v = wp.vec3(-u[1], u[0], 0.0)
            cen = c + col(R, 2) * (sgn(dl[2]) * h)
            t1 = R * (u + v) * (0.5 * r)
            t2 = R * (u - v) * (0.5 * r)
        for q in range(4):  # corners (+,+), (-,+), (-,-), (+,-)
            a = 1.0 - 2.0 * float((q ^ (q >> 1)) & 1)
            b = 1.0 - 2.0 * float(q >> 1)
            pts[e, off + q] = cen + a * t1 + b * t2
        n = 4
    else:
        # a segment pushed out by the radius: a capsule's (a sphere's is a point), or the
        # side line of a cylinder facing d
        out = d * s.radius
        if s.kind == CYLINDER:
            out = R * (u * r)
        ax = col(R, 2) * h
        pts[e, off] = c + ax + out
        pts[e, off + 1] = c - ax + out
        n = 1
        if h > 0.0:
            n = 2
    return n
