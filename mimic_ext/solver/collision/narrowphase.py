"""Narrow phase: one pair of shapes to contacts, by the kinds of the two shapes.

Shapes are ordered by kind (sphere < capsule < box < cylinder < hull < plane) so each
pair has one routine; the normal of every contact points from the pair's second shape
to its first. Sphere, capsule and box pairs and every pair with a plane have closed
forms (``primitives``); pairs with a cylinder or a hull go through GJK/EPA (``gjk``).
"""

from __future__ import annotations

import warp as wp

from .gjk import convex_pair
from .manifold import manifold, reduce_emit
from .primitives import CONVEX, MANIFOLD, NOTHING, box_box, plane_pair, segments
from .wp_types import BOX, CAPSULE, PLANE, CollisionData, CollisionScratch, ContactBuffer, Pair


@wp.func
def narrow(cd: CollisionData, sc: CollisionScratch, out: ContactBuffer, e: int, i: int, j: int, margin: float):
    """Contacts of shapes i and j with a separation up to ``margin``; returns 1 when the pair
    was skipped as still far apart (``gjk``'s cache), else 0."""
    c_shapes = cd.shapes
    a = i
    b = j
    if c_shapes[j].kind < c_shapes[i].kind:
        a = j
        b = i
    sa = c_shapes[a]
    sb = c_shapes[b]
    pr = Pair()
    pr.e = e
    pr.a = a
    pr.b = b
    pr.margin = margin
    ka = sa.kind
    kb = sb.kind
    hit = int(NOTHING)
    n = wp.vec3(0.0)
    sep = float(0.0)
    pa = wp.vec3(0.0)
    m = int(0)
    if kb == PLANE:
        if ka != PLANE:
            hit, n, sep, pa, m = plane_pair(cd, sc, pr)
    elif kb <= CAPSULE:
        hit, n, sep, pa, m = segments(cd, sc, pr)
    elif kb == BOX:
        hit, n, sep, pa, m = box_box(cd, sc, pr)
    else:
        hit = CONVEX
    skipped = int(0)
    if hit == CONVEX:
        hit, n, sep, pa, m = convex_pair(cd, sc, pr)
        if m < 0:
            skipped = 1
            m = 0
    if hit == MANIFOLD and sep <= pr.margin:
        m = manifold(cd, sc, pr, n, sep, pa)
    reduce_emit(sc.cand, sc.cs, out, pr, m, n)
    return skipped
