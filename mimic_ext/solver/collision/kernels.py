"""The collision kernel: one thread per environment runs the whole pipeline (shape poses
and bounds, grid, filtering, narrow phase) into the environment's contact buffer.

``collide_env`` is a ``wp.func`` so that the solver's step kernel can call it in place,
on the link frames its forward kinematics has just computed (no extra launch).
"""

from __future__ import annotations

import warp as wp

from .broadphase import bucket, cell_of, filtered, insert_cells
from .narrowphase import narrow
from .support import col
from .wp_types import PLANE, CollisionData, CollisionScratch, ContactBuffer

# forward only, loops left rolled: the cold compile stays a few seconds
wp.set_module_options({"enable_backward": False, "max_unroll": 0})


@wp.func
def shape_bounds(cd: CollisionData, frame_R: wp.array2d(dtype=wp.mat33), frame_p: wp.array2d(dtype=wp.vec3),
                 sc: CollisionScratch, e: int):
    """World pose of every shape (its frame's pose times its pose in the frame) and the
    world bounding box of every finite one, grown by its contact offset."""
    s_Rw = sc.Rw
    s_pw = sc.pw
    s_lo = sc.lo
    s_hi = sc.hi
    c_shapes = cd.shapes
    for i in range(cd.n_shapes):
        s = c_shapes[i]
        R = s.R
        p = s.p
        if s.frame >= 0:
            Rf = frame_R[e, s.frame]
            R = Rf * s.R
            p = Rf * s.p + frame_p[e, s.frame]
        s_Rw[e, i] = R
        s_pw[e, i] = p
        if s.kind != PLANE:
            c = p + R * s.center
            hw = wp.vec3(0.0)
            for k in range(3):
                hw[k] = wp.abs(R[k, 0]) * s.half[0] + wp.abs(R[k, 1]) * s.half[1] \
                    + wp.abs(R[k, 2]) * s.half[2] + s.offset
            s_lo[e, i] = c - hw
            s_hi[e, i] = c + hw


@wp.func
def boxes_overlap(sc: CollisionScratch, e: int, i: int, j: int):
    s_lo = sc.lo
    s_hi = sc.hi
    a0 = s_lo[e, i]
    a1 = s_hi[e, i]
    b0 = s_lo[e, j]
    b1 = s_hi[e, j]
    return a0[0] <= b1[0] and b0[0] <= a1[0] and a0[1] <= b1[1] and b0[1] <= a1[1] \
        and a0[2] <= b1[2] and b0[2] <= a1[2]


@wp.func
def near_plane(cd: CollisionData, sc: CollisionScratch, e: int, plane: int, j: int):
    s_Rw = sc.Rw
    s_pw = sc.pw
    s_lo = sc.lo
    s_hi = sc.hi
    c_shapes = cd.shapes
    n = col(s_Rw[e, plane], 2)
    c = 0.5 * (s_lo[e, j] + s_hi[e, j])
    h = 0.5 * (s_hi[e, j] - s_lo[e, j])
    r = wp.abs(n[0]) * h[0] + wp.abs(n[1]) * h[1] + wp.abs(n[2]) * h[2]
    return wp.dot(c - s_pw[e, plane], n) - r <= c_shapes[plane].offset


@wp.func
def consider(cd: CollisionData, sc: CollisionScratch, out: ContactBuffer, e: int, i: int, j: int,
             near: bool, stats: wp.vec4i):
    """A candidate pair: count it, filter it, collide it when its bounds meet."""
    c_shapes = cd.shapes
    stats[0] = stats[0] + 1
    if near:
        if filtered(cd, i, j, c_shapes[i], c_shapes[j]):
            stats[2] = stats[2] + 1
        else:
            stats[1] = stats[1] + 1
            narrow(cd, sc, out, e, i, j)
    return stats


@wp.func
def collide_env(cd: CollisionData, frame_R: wp.array2d(dtype=wp.mat33), frame_p: wp.array2d(dtype=wp.vec3),
                sc: CollisionScratch, out: ContactBuffer, e: int):
    """All contacts of environment ``e`` for the frames ``frame_R[e], frame_p[e]``."""
    s_lo = sc.lo
    s_hi = sc.hi
    s_heads = sc.heads
    s_ent = sc.ent
    s_nxt = sc.nxt
    c_shapes = cd.shapes
    c_small = cd.small
    c_big = cd.big
    c_planes = cd.planes
    out.count[e] = 0
    out.lost[e] = 0
    stats = wp.vec4i(0, 0, 0, 0)
    shape_bounds(cd, frame_R, frame_p, sc, e)
    insert_cells(cd, sc, e)
    for k in range(cd.n_small):
        s = c_small[k]
        c0 = cell_of(s_lo[e, s], cd.inv_cell)
        c1 = cell_of(s_hi[e, s], cd.inv_cell)
        for x in range(c0[0], c1[0] + 1):
            for y in range(c0[1], c1[1] + 1):
                for z in range(c0[2], c1[2] + 1):
                    it = s_heads[e, bucket(x, y, z, cd.hash_mask)]
                    while it >= 0:
                        en = s_ent[e, it]
                        t = en[0]
                        if t > s and en[1] == x and en[2] == y and en[3] == z:
                            first = cell_of(wp.max(s_lo[e, s], s_lo[e, t]), cd.inv_cell)
                            if first[0] == x and first[1] == y and first[2] == z:
                                stats = consider(cd, sc, out, e, s, t, boxes_overlap(sc, e, s, t), stats)
                        it = s_nxt[e, it]
    for k in range(cd.n_big):
        s = c_big[k]
        for t in range(cd.n_shapes):
            st = c_shapes[t]
            if t != s and st.kind != PLANE and (st.big == 0 or t > s):
                stats = consider(cd, sc, out, e, s, t, boxes_overlap(sc, e, s, t), stats)
    for k in range(cd.n_planes):
        s = c_planes[k]
        for t in range(cd.n_shapes):
            if c_shapes[t].kind != PLANE:
                stats = consider(cd, sc, out, e, s, t, near_plane(cd, sc, e, s, t), stats)
    out.stats[e] = stats


@wp.kernel
def collide_kernel(cd: CollisionData, frame_R: wp.array2d(dtype=wp.mat33), frame_p: wp.array2d(dtype=wp.vec3),
                   sc: CollisionScratch, out: ContactBuffer):
    collide_env(cd, frame_R, frame_p, sc, out, wp.tid())
