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
from .wp_types import (MAXC, MAXW, O_FA, O_FB, O_W1, O_W2, PLANE, CollisionData, CollisionScratch,
                       ContactBuffer, Pair)


@wp.func
def add_candidate(sc: CollisionScratch, e: int, m: int, p: wp.vec3, s: float):
    """Append a contact point and separation; a point already listed is not repeated."""
    s_cand = sc.cand
    s_cs = sc.cs
    for i in range(m):
        if wp.length_sq(s_cand[e, i] - p) < 1.0e-14:
            return m
    if m < MAXC:
        s_cand[e, m] = p
        s_cs[e, m] = s
        return m + 1
    return m


@wp.func
def emit(out: ContactBuffer, pr: Pair, point: wp.vec3, n: wp.vec3, sep: float):
    e = pr.e
    c = out.count[e]
    if c < out.point.shape[1]:
        out.shapes[e, c] = wp.vec2i(pr.a, pr.b)
        out.frames[e, c] = wp.vec2i(pr.fa, pr.fb)
        out.point[e, c] = point
        out.normal[e, c] = n
        out.sep[e, c] = sep
        out.rest[e, c] = pr.rest
        out.mat[e, c] = pr.mat
        out.count[e] = c + 1
    else:
        out.lost[e] = out.lost[e] + 1


@wp.func
def reduce_emit(sc: CollisionScratch, out: ContactBuffer, pr: Pair, m: int, n: wp.vec3):
    """Emit the m candidates, or four of them: the deepest, the farthest from it, the one
    spanning the largest triangle with those two, and the one farthest outside that
    triangle (none when all lie inside)."""
    s_cand = sc.cand
    s_cs = sc.cs
    e = pr.e
    sel = wp.vec4i(0, 1, 2, 3)
    cnt = int(m)
    if m > 4:
        cnt = int(1)
        for i in range(m):
            if s_cs[e, i] < s_cs[e, sel[0]]:
                sel[0] = i
        p0 = s_cand[e, sel[0]]
        p1 = wp.vec3(p0)
        t = wp.vec3(n)
        for stage in range(1, 4):
            best = float(0.0)
            bi = int(-1)
            for i in range(m):
                p = s_cand[e, i]
                score = float(0.0)
                if stage == 1:
                    score = wp.length_sq(p - p0)
                elif stage == 2:
                    score = wp.length_sq(wp.cross(p1 - p0, p - p0))
                else:
                    # distance outside the triangle: the most negative edge side
                    p2 = s_cand[e, sel[2]]
                    score = -wp.min(wp.dot(wp.cross(p1 - p0, p - p0), t),
                                    wp.min(wp.dot(wp.cross(p2 - p1, p - p1), t), wp.dot(wp.cross(p0 - p2, p - p2), t)))
                if score > best:
                    best = score
                    bi = i
            if bi >= 0:
                sel[cnt] = bi
                cnt = cnt + 1
                if stage == 1:
                    p1 = s_cand[e, bi]
                elif stage == 2:
                    t = wp.cross(p1 - p0, s_cand[e, bi] - p0)
    for k in range(cnt):
        emit(out, pr, s_cand[e, sel[k]], n, s_cs[e, sel[k]])


@wp.func
def facing(sc: CollisionScratch, e: int, off: int, k: int, n: wp.vec3):
    """Whether a feature can be the reference one (a face within 5.7 deg of the normal, a
    segment within 5.7 deg of square to it), and the normal of the plane to project on."""
    s_pts = sc.pts
    r0 = s_pts[e, off]
    if k >= 3:
        nf = wp.normalize(wp.cross(s_pts[e, off + k // 3] - r0, s_pts[e, off + (2 * k) // 3] - r0))
        return wp.abs(wp.dot(nf, n)) >= 0.995, nf
    u = wp.normalize(s_pts[e, off + 1] - r0)
    return k == 2 and wp.abs(wp.dot(u, n)) <= 0.1, wp.normalize(n - wp.dot(n, u) * u)


@wp.func
def clip_features(sc: CollisionScratch, e: int, ka: int, kb: int, n: wp.vec3, margin: float):
    """Clip the incident feature against the side planes of the reference one (a segment's
    two end planes, or a polygon's edges swept along n), then pair each clipped point with
    its projection along n onto the reference feature. The reference is the feature with
    more points if it faces along n, else the other if that one does; with neither (two
    edges crossing) there is nothing to clip. Returns the number of candidates written
    (those within the margin)."""
    s_pts = sc.pts
    ok_a, nf_a = facing(sc, e, O_FA, ka, n)
    ok_b, nf_b = facing(sc, e, O_FB, kb, n)
    use_a = (ka > kb and ok_a) or not ok_b
    if not ok_a and not ok_b:
        return 0
    ref = int(O_FB)
    k = kb
    inc = int(O_FA)
    ki = ka
    nf = nf_b
    sign = float(-1.0)           # separation = sign * (projection - point) . n
    if use_a:
        ref = O_FA
        k = ka
        inc = O_FB
        ki = kb
        nf = nf_a
        sign = 1.0
    r0 = s_pts[e, ref]
    cen = wp.vec3(0.0)
    for q in range(k):
        cen = cen + s_pts[e, ref + q]
    cen = cen / float(k)
    src = int(O_W1)
    dst = int(O_W2)
    for q in range(ki):
        s_pts[e, src + q] = s_pts[e, inc + q]
    cnt = ki
    for i in range(k):
        # side plane i: through pt with inward normal pm
        pt = s_pts[e, ref + i]
        pm = wp.vec3(0.0)
        if k == 2:
            pm = s_pts[e, ref + 1 - i] - pt
        else:
            pm = wp.cross(s_pts[e, ref + (i + 1) % k] - pt, n)
            if wp.dot(cen - pt, pm) < 0.0:
                pm = -pm
        out = int(0)
        s = s_pts[e, src + cnt - 1]
        ds = wp.dot(s - pt, pm)
        for q in range(cnt):
            p = s_pts[e, src + q]
            dp = wp.dot(p - pt, pm)
            if (dp < 0.0) != (ds < 0.0) and out < MAXW:
                s_pts[e, dst + out] = s + (ds / (ds - dp)) * (p - s)
                out = out + 1
            if dp >= 0.0 and out < MAXW:
                s_pts[e, dst + out] = p
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
            p = s_pts[e, src + q]
            proj = p + (wp.dot(r0 - p, nf) / den) * n
            gap = sign * wp.dot(proj - p, n)
            if gap <= margin:
                m = add_candidate(sc, e, m, 0.5 * (p + proj), gap)
    return m


@wp.func
def manifold(cd: CollisionData, sc: CollisionScratch, pr: Pair, n: wp.vec3, sep: float, pa: wp.vec3):
    """Candidates of a pair whose normal n (from b to a), separation sep and deepest point
    pa on a's surface are known: the clipped features, plus pa when they miss it (a hull
    whose most aligned face does not hold its support vertex, an edge contact)."""
    s_cs = sc.cs
    c_shapes = cd.shapes
    e = pr.e
    ka = int(0)
    kb = int(0)
    sa = c_shapes[pr.a]
    near = sc.pw[e, pr.a] + sc.Rw[e, pr.a] * sa.center      # a plane's square lies under a's box
    extent = wp.length(sa.half) + pr.margin
    for side in range(2):
        idx = pr.a
        d = -n
        off = int(O_FA)
        if side == 1:
            idx = pr.b
            d = n
            off = O_FB
        k = feature(cd, sc, e, idx, d, off, near, extent)
        if side == 0:
            ka = k
        else:
            kb = k
    m = int(0)
    if ka > 1 and kb > 1:
        m = clip_features(sc, e, ka, kb, n, pr.margin)
    deepest = float(3.0e38)
    for i in range(m):
        deepest = wp.min(deepest, s_cs[e, i])
    if sep < deepest - 1.0e-5:
        m = add_candidate(sc, e, m, pa - (0.5 * sep) * n, sep)
    return m
