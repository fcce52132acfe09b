"""GJK (distance) and EPA (penetration) on the Minkowski difference of two convex cores.

Used for every pair with a cylinder or a convex hull (other than a plane). GJK's
simplex is kept in the environment's scratch row (``O_SW``: Minkowski points, ``O_SA``:
their witness points on shape a); its closest point to the origin is found by trying
each sub-simplex (at most 15) and keeping the nearest whose projection lies inside it,
which is short to write and exact for the small simplices GJK keeps. EPA grows a
polytope from GJK's tetrahedron in the same row. Callers pass positions relative to
shape a's centre, so float32 keeps its precision far from the world origin.

A pair GJK proved farther apart than its margin is remembered per environment (``gk_*``
in the scratch: the proven distance and b's pose relative to a's): while b's pose
relative to a has moved less than that distance's slack over the margin, no point of b's
core can have come closer than the margin, so the pair is skipped as GJK would have
rejected it (the same nothing; steps bitwise those without the cache). A gripper's finger
links and the box they hold sit 5-7 mm apart, still relative to each other, step after step.
"""

from __future__ import annotations

import warp as wp

from .primitives import MANIFOLD, NOTHING
from .support import support
from .wp_types import GK_SLOTS, MAXE, MAXF, MAXV, O_SA, O_SW, CollisionData, CollisionScratch, Pair, ShapeData

SEPARATED = wp.constant(0)
OVERLAP = wp.constant(1)
FAR = wp.constant(2)


@wp.func
def msupport(
    verts: wp.array(dtype=wp.vec3),
    sa: ShapeData,
    Ra: wp.mat33,
    ca: wp.vec3,
    sb: ShapeData,
    Rb: wp.mat33,
    cb: wp.vec3,
    d: wp.vec3,
):
    """Support point of a - b along d, and its point on a."""
    a = support(sa, verts, Ra, ca, d)
    return a - support(sb, verts, Rb, cb, -d), a


@wp.func
def set_point(pts: wp.array2d(dtype=wp.vec3), e: int, i: int, w: wp.vec3, a: wp.vec3):
    pts[e, O_SW + i] = w
    pts[e, O_SA + i] = a


@wp.func
def sub_simplex(pts: wp.array2d(dtype=wp.vec3), e: int, i0: int, i1: int, i2: int, cnt: int):
    """Closest point to the origin of the affine hull of 1-3 simplex points, if it lies
    strictly inside them: (ok, point, witness on a)."""
    w0 = pts[e, O_SW + i0]
    a0 = pts[e, O_SA + i0]
    if cnt == 1:
        return True, w0, a0
    e1 = pts[e, O_SW + i1] - w0
    f1 = pts[e, O_SA + i1] - a0
    if cnt == 2:
        den = wp.dot(e1, e1)
        if den < 1.0e-24:
            return False, w0, a0
        t = -wp.dot(w0, e1) / den
        return t > 0.0 and t < 1.0, w0 + t * e1, a0 + t * f1
    e2 = pts[e, O_SW + i2] - w0
    f2 = pts[e, O_SA + i2] - a0
    g11 = wp.dot(e1, e1)
    g12 = wp.dot(e1, e2)
    g22 = wp.dot(e2, e2)
    det = g11 * g22 - g12 * g12
    if det <= 1.0e-10 * g11 * g22 or det <= 1.0e-30:
        return False, w0, a0
    r1 = -wp.dot(w0, e1)
    r2 = -wp.dot(w0, e2)
    u = (r1 * g22 - r2 * g12) / det
    v = (r2 * g11 - r1 * g12) / det
    return u > 0.0 and v > 0.0 and u + v < 1.0, w0 + u * e1 + v * e2, a0 + u * f1 + v * f2


@wp.func
def origin_in_tetrahedron(pts: wp.array2d(dtype=wp.vec3), e: int):
    w0 = pts[e, O_SW]
    m = wp.matrix_from_cols(pts[e, O_SW + 1] - w0, pts[e, O_SW + 2] - w0, pts[e, O_SW + 3] - w0)
    det = wp.determinant(m)
    if wp.abs(det) < 1.0e-18:
        return False
    mu = wp.inverse(m) * (-w0)
    return mu[0] >= 0.0 and mu[1] >= 0.0 and mu[2] >= 0.0 and mu[0] + mu[1] + mu[2] <= 1.0


@wp.func
def closest_on_simplex(pts: wp.array2d(dtype=wp.vec3), e: int, n: int):
    """Closest point of the simplex to the origin; the simplex shrinks to the points that
    support it. Returns (point, witness on a, new count, origin inside)."""
    if n == 4:
        if origin_in_tetrahedron(pts, e):
            return wp.vec3(0.0), wp.vec3(0.0), 4, True
    best = float(3.0e38)
    bm = int(1)
    bv = wp.vec3(0.0)
    ba = wp.vec3(0.0)
    for mask in range(1, (1 << n) - (n // 4)):  # every non-empty subset but the whole tetrahedron
        i0 = int(-1)
        i1 = int(-1)
        i2 = int(-1)
        cnt = int(0)
        for k in range(n):
            if (mask >> k) & 1 == 1:
                if cnt == 0:
                    i0 = k
                elif cnt == 1:
                    i1 = k
                else:
                    i2 = k
                cnt = cnt + 1
        if cnt <= 3:
            ok, v, a = sub_simplex(pts, e, i0, i1, i2, cnt)
            if ok:
                d = wp.length_sq(v)
                if d < best:
                    best = d
                    bm = mask
                    bv = v
                    ba = a
    j = int(0)
    for k in range(n):
        if (bm >> k) & 1 == 1:
            set_point(pts, e, j, pts[e, O_SW + k], pts[e, O_SA + k])
            j = j + 1
    return bv, ba, j, False


@wp.func
def gjk(
    verts: wp.array(dtype=wp.vec3),
    sa: ShapeData,
    Ra: wp.mat33,
    ca: wp.vec3,
    sb: ShapeData,
    Rb: wp.mat33,
    cb: wp.vec3,
    pts: wp.array2d(dtype=wp.vec3),
    e: int,
    far: float,
):
    """(status, v = pa - pb, pa, simplex size): SEPARATED with the closest core points,
    OVERLAP with the simplex left for EPA, or FAR once a separating plane proves the
    cores farther apart than ``far`` (v then along the plane's normal, as long as the
    distance it proves)."""
    v = ca - cb
    if wp.length_sq(v) < 1.0e-18:
        v = wp.vec3(1.0, 0.0, 0.0)
    pa = wp.vec3(0.0)
    n = int(0)
    for it in range(48):
        w, a = msupport(verts, sa, Ra, ca, sb, Rb, cb, -v)
        if n == 0:
            set_point(pts, e, 0, w, a)
            n = 1
            v = w
            pa = a
        else:
            vv = wp.length_sq(v)
            vw = wp.dot(v, w)
            if vw > 0.0 and vw * vw > far * far * vv:
                return FAR, v * (vw / vv), pa, n
            # converged: the support plane is within 1e-5 of |v| (float32 cannot do much better)
            if vv - vw <= 1.0e-5 * vv + 1.0e-12:
                return SEPARATED, v, pa, n
            set_point(pts, e, n, w, a)
            v0 = v
            pa0 = pa
            inside = bool(False)
            v, pa, n, inside = closest_on_simplex(pts, e, n + 1)
            if inside:
                return OVERLAP, v, pa, n
            if wp.length_sq(v) >= vv:  # no progress left: rounding, not geometry
                return SEPARATED, v0, pa0, n
        if wp.length_sq(v) < 1.0e-14:
            return OVERLAP, v, pa, n
    return SEPARATED, v, pa, n


@wp.func
def epa_face(
    pts: wp.array2d(dtype=wp.vec3),
    tri: wp.array2d(dtype=wp.vec3i),
    pln: wp.array2d(dtype=wp.vec4),
    e: int,
    f: int,
    i: int,
    j: int,
    k: int,
):
    a = pts[e, O_SW + i]
    nrm = wp.cross(pts[e, O_SW + j] - a, pts[e, O_SW + k] - a)
    l = wp.length(nrm)
    tri[e, f] = wp.vec3i(i, j, k)
    if l < 1.0e-20:
        pln[e, f] = wp.vec4(0.0, 0.0, 0.0, 3.0e38)  # degenerate: never nearest, never visible
    else:
        nrm = nrm / l
        pln[e, f] = wp.vec4(nrm[0], nrm[1], nrm[2], wp.dot(nrm, a))


@wp.func
def horizon_edge(edges: wp.array2d(dtype=wp.vec2i), e: int, ne: int, a: int, b: int):
    """Add edge a->b of a removed face, or cancel it against b->a of a neighbour removed too."""
    for k in range(ne):
        ed = edges[e, k]
        if ed[0] == b and ed[1] == a:
            edges[e, k] = edges[e, ne - 1]
            return ne - 1
    if ne < MAXE:
        edges[e, ne] = wp.vec2i(a, b)
        return ne + 1
    return ne


@wp.func
def epa(
    verts: wp.array(dtype=wp.vec3),
    sa: ShapeData,
    Ra: wp.mat33,
    ca: wp.vec3,
    sb: ShapeData,
    Rb: wp.mat33,
    cb: wp.vec3,
    sc: CollisionScratch,
    e: int,
    n: int,
):
    """(ok, unit direction of least penetration (the normal of a - b's nearest face),
    depth, witness point on a) from GJK's simplex of n points containing the origin."""
    pts = sc.pts
    tri = sc.tri
    pln = sc.pln
    edges = sc.edges
    # a tetrahedron from GJK's points, each kept only if it adds a dimension (1 um), then
    # support points along the axes and normals of what is there (symmetric poses leave
    # GJK with flat simplices)
    nn = int(1)
    for k in range(1, n + 12):
        w = wp.vec3(0.0)
        a = wp.vec3(0.0)
        w0 = pts[e, O_SW]
        u = pts[e, O_SW + 1] - w0
        t = wp.cross(u, pts[e, O_SW + 2] - w0)
        if nn < 4:
            if k < n:
                w = pts[e, O_SW + k]
                a = pts[e, O_SA + k]
            else:
                j = k - n
                d = wp.vec3(0.0)
                d[(j // 2) % 3] = 1.0 - 2.0 * float(j % 2)
                if nn == 2:
                    d = wp.cross(u, d)
                elif nn == 3:
                    d = t * (1.0 - 2.0 * float(j % 2))
                w, a = msupport(verts, sa, Ra, ca, sb, Rb, cb, wp.normalize(d))
            x = w - w0
            gain = wp.length_sq(x)
            if nn == 2:
                gain = wp.length_sq(wp.cross(x, u)) / wp.max(wp.length_sq(u), 1.0e-30)
            elif nn == 3:
                gain = wp.dot(x, t) * wp.dot(x, t) / wp.max(wp.length_sq(t), 1.0e-30)
            if gain > 1.0e-12:
                set_point(pts, e, nn, w, a)
                nn = nn + 1
    w0 = pts[e, O_SW]
    if nn < 4:
        return False, wp.vec3(0.0), 0.0, w0
    vol = wp.dot(wp.cross(pts[e, O_SW + 1] - w0, pts[e, O_SW + 2] - w0), pts[e, O_SW + 3] - w0)
    if vol > 0.0:  # make face (0, 1, 2) point away from point 3
        w1 = pts[e, O_SW + 1]
        a1 = pts[e, O_SA + 1]
        set_point(pts, e, 1, pts[e, O_SW + 2], pts[e, O_SA + 2])
        set_point(pts, e, 2, w1, a1)
    epa_face(pts, tri, pln, e, 0, 0, 1, 2)
    epa_face(pts, tri, pln, e, 1, 0, 3, 1)
    epa_face(pts, tri, pln, e, 2, 0, 2, 3)
    epa_face(pts, tri, pln, e, 3, 1, 3, 2)
    nf = int(4)
    nv = int(4)
    bf = int(0)
    for it in range(MAXV):
        best = float(3.0e38)
        bf = int(-1)
        for f in range(nf):
            if tri[e, f][0] >= 0 and pln[e, f][3] < best:
                best = pln[e, f][3]
                bf = f
        if bf < 0:
            return False, wp.vec3(0.0), 0.0, w0
        p = pln[e, bf]
        nrm = wp.vec3(p[0], p[1], p[2])
        w, a = msupport(verts, sa, Ra, ca, sb, Rb, cb, nrm)
        if wp.dot(w, nrm) - best <= 1.0e-6 + 1.0e-5 * wp.abs(best) or nv >= MAXV:
            break
        set_point(pts, e, nv, w, a)
        ne = int(0)
        for f in range(nf):
            tf = tri[e, f]
            if tf[0] >= 0:
                q = pln[e, f]
                if q[0] * w[0] + q[1] * w[1] + q[2] * w[2] - q[3] > 1.0e-6:  # 1 um: a face w lies on is kept
                    for c in range(3):
                        ne = horizon_edge(edges, e, ne, tf[c], tf[(c + 1) % 3])
                    tri[e, f] = wp.vec3i(-1, -1, -1)
        slot = int(0)
        for k in range(ne):
            while slot < nf:
                if tri[e, slot][0] < 0:
                    break
                slot = slot + 1
            if slot == nf:
                if nf == MAXF:
                    break
                nf = nf + 1
            ed = edges[e, k]
            epa_face(pts, tri, pln, e, slot, ed[0], ed[1], nv)
        nv = nv + 1
    tb = tri[e, bf]
    pb = pln[e, bf]
    nb = wp.vec3(pb[0], pb[1], pb[2])
    v = nb * pb[3]
    x0 = pts[e, O_SW + tb[0]]
    x1 = pts[e, O_SW + tb[1]]
    x2 = pts[e, O_SW + tb[2]]
    tc = wp.cross(x1 - x0, x2 - x0)
    den = wp.max(wp.dot(tc, tc), 1.0e-30)
    l0 = wp.dot(wp.cross(x1 - v, x2 - v), tc) / den
    l1 = wp.dot(wp.cross(x2 - v, x0 - v), tc) / den
    pa = l0 * pts[e, O_SA + tb[0]] + l1 * pts[e, O_SA + tb[1]] + (1.0 - l0 - l1) * pts[e, O_SA + tb[2]]
    return True, nb, pb[3], pa


@wp.func
def convex_pair(cd: CollisionData, sc: CollisionScratch, pr: Pair):
    """Cylinders and hulls with anything but a plane, and boxes apart: GJK on the cores, EPA
    when they overlap; radii added after. Positions relative to a's centre keep float32
    precise far from the world origin."""
    e = pr.e
    sa = cd.shapes[pr.a]
    sb = cd.shapes[pr.b]
    o = sc.pw[e, pr.a]
    Ra = sc.Rw[e, pr.a]
    Rb = sc.Rw[e, pr.b]
    cb = sc.pw[e, pr.b] - o
    z = wp.vec3(0.0)
    ra = sa.radius
    rb = sb.radius
    far = pr.margin + ra + rb
    nrm = wp.vec3(0.0, 0.0, 1.0)
    sep = float(3.0e38)
    # b's pose in a's frame, against the one GJK last proved this pair far apart at
    key = pr.a * cd.n_shapes + pr.b
    slot = key % GK_SLOTS
    R_ab = wp.transpose(Ra) * Rb
    t_ab = wp.transpose(Ra) * cb
    if sc.gk_key[e, slot] == key:
        dR = R_ab - sc.gk_R[e, slot]
        # no point of b's core (within |center| + |half| of its origin) moved closer than this
        moved = wp.length(t_ab - sc.gk_t[e, slot]) + wp.sqrt(wp.ddot(dR, dR)) * (
            wp.length(sb.center) + wp.length(sb.half)
        )
        # 1% and a micrometre over the margin: float32 rounding never skips a pair GJK would keep
        if sc.gk_d[e, slot] - moved > 1.01 * far + 1.0e-6:
            return NOTHING, nrm, sep, o - ra * nrm, -1  # m = -1: skipped (counted in the stats)
    status, v, pa, n = gjk(cd.verts, sa, Ra, z, sb, Rb, cb, sc.pts, e, far)
    if status == FAR:
        sc.gk_key[e, slot] = key
        sc.gk_R[e, slot] = R_ab
        sc.gk_t[e, slot] = t_ab
        sc.gk_d[e, slot] = wp.length(v)
    if status == SEPARATED:
        l = wp.length(v)
        nrm = v / l
        sep = l - ra - rb
    elif status == OVERLAP:
        ok, m, depth, pa2 = epa(cd.verts, sa, Ra, z, sb, Rb, cb, sc, e, n)
        if ok:
            nrm = -m
            sep = -depth - ra - rb
            pa = pa2
    hit = NOTHING
    if sep <= pr.margin:
        hit = MANIFOLD
    return hit, nrm, sep, pa + o - ra * nrm, 0
