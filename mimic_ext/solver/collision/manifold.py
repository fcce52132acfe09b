"""Contact manifolds: clip one shape's feature against the other's, keep the points
within the pair's margin, reduce them to at most four, and write them to the buffer.

A face resting on a face yields its overlap polygon's corners (four for a box on a
plane: what a rigid body needs to rest without rocking); an edge on a face two points;
anything else one. Reduction keeps the deepest point, then the points that span the
largest area, as the contact patch's extent is what resists tipping.
"""

from __future__ import annotations

import warp as wp

from .support import feature
from .wp_types import MAXC, MAXW, O_FA, O_FB, O_W1, O_W2, CollisionData, CollisionScratch, ContactBuffer, Pair


@wp.func
def add_candidate(cand: wp.array2d(dtype=wp.vec3), cs: wp.array2d(dtype=float), e: int, m: int, p: wp.vec3, s: float):
    """Append a contact point and separation; a point already listed is not repeated."""
    for i in range(m):
        if wp.length_sq(cand[e, i] - p) < 1.0e-14:
            return m
    if m < MAXC:
        cand[e, m] = p
        cs[e, m] = s
        return m + 1
    return m


@wp.func
def reduce_emit(
    cand: wp.array2d(dtype=wp.vec3), cs: wp.array2d(dtype=float), out: ContactBuffer, pr: Pair, m: int, n: wp.vec3
):
    """Write the m candidates, or four of them: the deepest, the farthest from it, the one
    spanning the largest triangle with those two, and the one farthest outside that
    triangle (none when all lie inside)."""
    e = pr.e
    sel = wp.vec4i(0, 1, 2, 3)
    cnt = int(m)
    if m > 4:
        cnt = int(1)
        for i in range(m):
            if cs[e, i] < cs[e, sel[0]]:
                sel[0] = i
        p0 = cand[e, sel[0]]
        p1 = wp.vec3(p0)
        t = wp.vec3(n)
        for stage in range(1, 4):
            best = float(0.0)
            bi = int(-1)
            for i in range(m):
                p = cand[e, i]
                score = float(0.0)
                if stage == 1:
                    score = wp.length_sq(p - p0)
                elif stage == 2:
                    score = wp.length_sq(wp.cross(p1 - p0, p - p0))
                else:
                    # distance outside the triangle: the most negative edge side
                    p2 = cand[e, sel[2]]
                    score = -wp.min(
                        wp.dot(wp.cross(p1 - p0, p - p0), t),
                        wp.min(wp.dot(wp.cross(p2 - p1, p - p1), t), wp.dot(wp.cross(p0 - p2, p - p2), t)),
                    )
                if score > best:
                    best = score
                    bi = i
            if bi >= 0:
                sel[cnt] = bi
                cnt = cnt + 1
                if stage == 1:
                    p1 = cand[e, bi]
                elif stage == 2:
                    t = wp.cross(p1 - p0, cand[e, bi] - p0)
    c = out.count[e]
    for k in range(cnt):
        if c < out.point.shape[1]:
            out.shapes[e, c] = wp.vec2i(pr.a, pr.b)
            out.point[e, c] = cand[e, sel[k]]
            out.normal[e, c] = n
            out.sep[e, c] = cs[e, sel[k]]
            c = c + 1
        else:
            out.lost[e] = out.lost[e] + 1
    out.count[e] = c


@wp.func
def facing(pts: wp.array2d(dtype=wp.vec3), e: int, off: int, k: int, n: wp.vec3):
    """Whether a feature can be the reference one (a face within 5.7 deg of the normal, a
    segment within 5.7 deg of square to it), and the normal of the plane to project on."""
    r0 = pts[e, off]
    if k >= 3:
        nf = wp.normalize(wp.cross(pts[e, off + k // 3] - r0, pts[e, off + (2 * k) // 3] - r0))
        return wp.abs(wp.dot(nf, n)) >= 0.995, nf
    u = wp.normalize(pts[e, off + 1] - r0)
    return k == 2 and wp.abs(wp.dot(u, n)) <= 0.1, wp.normalize(n - wp.dot(n, u) * u)


@wp.func
def clip_features(
    pts: wp.array2d(dtype=wp.vec3),
    cand: wp.array2d(dtype=wp.vec3),
    cs: wp.array2d(dtype=float),
    e: int,
    ka: int,
    kb: int,
    n: wp.vec3,
    margin: float,
):
    """Clip the incident feature against the side planes of the reference one (a segment's
    two end planes, or a polygon's edges swept along n), then pair each clipped point with
    its projection along n onto the reference feature. The reference is the feature with
    more points if it faces along n, else the other if that one does; with neither (two
    edges crossing) there is nothing to clip. Returns the number of candidates written
    (those within the margin)."""
    ok_a, nf_a = facing(pts, e, O_FA, ka, n)
    ok_b, nf_b = facing(pts, e, O_FB, kb, n)
    if not ok_a and not ok_b:
        return 0
    ref = int(O_FB)
    k = kb
    inc = int(O_FA)
    ki = ka
    nf = nf_b
    sign = float(-1.0)  # separation = sign * (projection - point) . n
    if (ka > kb and ok_a) or not ok_b:
        ref = O_FA
        k = ka
        inc = O_FB
        ki = kb
        nf = nf_a
        sign = 1.0
    r0 = pts[e, ref]
    cen = wp.vec3(0.0)
    for q in range(k):
        cen = cen + pts[e, ref + q]
    cen = cen / float(k)
    src = int(O_W1)
    dst = int(O_W2)
    for q in range(ki):
        pts[e, src + q] = pts[e, inc + q]
    cnt = ki
    for i in range(k):
        # side plane i: through pt with inward normal pm (Sutherland-Hodgman)
        pt = pts[e, ref + i]
        pm = wp.vec3(0.0)
        if k == 2:
            pm = pts[e, ref + 1 - i] - pt
        else:
            pm = wp.cross(pts[e, ref + (i + 1) % k] - pt, n)
            if wp.dot(cen - pt, pm) < 0.0:
                pm = -pm
        out = int(0)
        s = pts[e, src + cnt - 1]
        ds = wp.dot(s - pt, pm)
        for q in range(cnt):
            p = pts[e, src + q]
            dp = wp.dot(p - pt, pm)
            if (dp < 0.0) != (ds < 0.0) and out < MAXW:
                pts[e, dst + out] = s + (ds / (ds - dp)) * (p - s)
                out = out + 1
            if dp >= 0.0 and out < MAXW:
                pts[e, dst + out] = p
                out = out + 1
            s = p
            ds = dp
        cnt = out
        tmp = src
        src = dst
        dst = tmp
    m = int(0)
    den = wp.dot(n, nf)
    if wp.abs(den) > 1.0e-6:
        for q in range(cnt):
            p = pts[e, src + q]
            proj = p + (wp.dot(r0 - p, nf) / den) * n
            gap = sign * wp.dot(proj - p, n)
            if gap <= margin:
                m = add_candidate(cand, cs, e, m, 0.5 * (p + proj), gap)
    return m


@wp.func
def manifold(cd: CollisionData, sc: CollisionScratch, pr: Pair, n: wp.vec3, sep: float, pa: wp.vec3):
    """Candidates of a pair whose normal n (from b to a), separation sep and deepest point
    pa on a's surface are known: the clipped features, plus pa when they miss it (a hull
    whose most aligned face does not hold its support vertex, an edge contact)."""
    e = pr.e
    pts = sc.pts
    cand = sc.cand
    cs = sc.cs
    sa = cd.shapes[pr.a]
    near = sc.pw[e, pr.a] + sc.Rw[e, pr.a] * sa.center  # a plane's square lies under a's box
    extent = wp.length(sa.half) + pr.margin
    ka = int(0)
    kb = int(0)
    for side in range(2):
        idx = pr.a
        d = -n
        off = int(O_FA)
        if side == 1:
            idx = pr.b
            d = n
            off = O_FB
        k = feature(
            cd.shapes[idx], cd.verts, cd.faces, cd.fverts, sc.Rw[e, idx], sc.pw[e, idx], d, pts, e, off, near, extent
        )
        if side == 0:
            ka = k
        else:
            kb = k
    m = int(0)
    if ka > 1 and kb > 1:
        m = clip_features(pts, cand, cs, e, ka, kb, n, pr.margin)
    deepest = float(3.0e38)
    for i in range(m):
        deepest = wp.min(deepest, cs[e, i])
    if sep < deepest - 1.0e-5:
        m = add_candidate(cand, cs, e, m, pa - (0.5 * sep) * n, sep)
    return m
