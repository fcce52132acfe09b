"""The collision kernel: one thread per environment runs the whole pipeline (shape poses
and bounds, grid, filtering, narrow phase) into the environment's contact buffer.

``collide_env`` is a ``wp.func`` so that the solver's step kernel can call it in place,
on the link frames its forward kinematics has just computed (no extra launch). The solver
also tells it how far each frame can move within the step (``frame_move``, ``reach0``): a
pair then looks only as far as its shapes can close (its *margin*, never beyond the contact
offsets but for a shape against a plane, which looks as far as the shape can move), so pairs
that cannot touch within the step leave the narrow phase at its first separating axis or GJK
plane, and cost no manifold.
"""

from __future__ import annotations

import warp as wp

from .broadphase import cell, cell_of, filtered, insert_cells
from .narrowphase import narrow
from .support import col
from .wp_types import PLANE, CollisionData, CollisionScratch, ContactBuffer, ShapeData

# forward only, loops left rolled: the cold compile stays a few seconds
wp.set_module_options({"enable_backward": False, "max_unroll": 0})

#: up to this many shapes small enough for the grid, every pair of them is a candidate (a
#: gripper's 15: 105 box tests); the grid's cells and buckets cost more than that until the
#: shapes spread over many cells (measured on the grasp: benchmarks/RESULTS.md, "Grasp")
ALL_PAIRS_MAX = wp.constant(32)


@wp.func
def shape_bounds(
    cd: CollisionData,
    frame_R: wp.array2d(dtype=wp.mat33),
    frame_p: wp.array2d(dtype=wp.vec3),
    sc: CollisionScratch,
    e: int,
):
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
            A = wp.mat33(
                wp.abs(R[0, 0]),
                wp.abs(R[0, 1]),
                wp.abs(R[0, 2]),
                wp.abs(R[1, 0]),
                wp.abs(R[1, 1]),
                wp.abs(R[1, 2]),
                wp.abs(R[2, 0]),
                wp.abs(R[2, 1]),
                wp.abs(R[2, 2]),
            )
            hw = A * s.half + wp.vec3(s.offset)
            s_lo[e, i] = c - hw
            s_hi[e, i] = c + hw


@wp.func
def boxes_overlap(lo: wp.array2d(dtype=wp.vec3), hi: wp.array2d(dtype=wp.vec3), e: int, i: int, j: int):
    return wp.min(wp.min(hi[e, i] - lo[e, j], hi[e, j] - lo[e, i])) >= 0.0


@wp.func
def shape_reach(
    s: ShapeData,
    frame_p: wp.array2d(dtype=wp.vec3),
    frame_move: wp.array2d(dtype=wp.vec2),
    lo: wp.array2d(dtype=wp.vec3),
    hi: wp.array2d(dtype=wp.vec3),
    e: int,
    i: int,
    x: float,
):
    """How far a point of shape i, within ``x`` of its bounding box, can move in the step: its
    frame's origin moves ``frame_move.x`` and turns by ``frame_move.y`` radians."""
    if s.frame < 0:
        return float(0.0)
    mv = frame_move[e, s.frame]
    c = 0.5 * (lo[e, i] + hi[e, i])
    return mv[0] + mv[1] * (wp.length(c - frame_p[e, s.frame]) + wp.length(s.half) + x)


@wp.func
def pair_margin(
    cd: CollisionData,
    frame_p: wp.array2d(dtype=wp.vec3),
    frame_move: wp.array2d(dtype=wp.vec2),
    lo: wp.array2d(dtype=wp.vec3),
    hi: wp.array2d(dtype=wp.vec3),
    e: int,
    i: int,
    j: int,
    reach0: float,
    ahead: bool,
):
    """The separation up to which the pair reports contacts: its contact offsets, or less,
    the rest offsets plus ``reach0`` plus how far both shapes can move (when the caller says
    how far its frames move: ``reach0`` below the offsets). ``ahead`` (a pair with a plane):
    as far as the shapes can move even past the contact offsets, so a fast impact is found
    before the surfaces overlap, as PhysX finds it (the grid bounds the other pairs' boxes to
    their offsets)."""
    a = cd.shapes[i]
    b = cd.shapes[j]
    off = a.offset + b.offset
    if reach0 >= off:
        return off
    x = 0.5 * off
    m = (
        a.rest
        + b.rest
        + reach0
        + shape_reach(a, frame_p, frame_move, lo, hi, e, i, x)
        + shape_reach(b, frame_p, frame_move, lo, hi, e, j, x)
    )
    # 1% and a micrometre over the bound: float32 rounding never drops a contact the caller wants
    mm = 1.01 * m + 1.0e-6
    if ahead:
        return mm
    return wp.min(off, mm)


@wp.func
def box_gap(lo: wp.array2d(dtype=wp.vec3), hi: wp.array2d(dtype=wp.vec3), e: int, i: int, j: int):
    """The largest gap between the two bounding boxes along an axis (< 0: they overlap)."""
    return wp.max(wp.max(lo[e, j] - hi[e, i], lo[e, i] - hi[e, j]))


@wp.func
def near_plane(
    Rw: wp.array2d(dtype=wp.mat33),
    pw: wp.array2d(dtype=wp.vec3),
    lo: wp.array2d(dtype=wp.vec3),
    hi: wp.array2d(dtype=wp.vec3),
    e: int,
    plane: int,
    j: int,
    offset: float,
):
    n = col(Rw[e, plane], 2)
    c = 0.5 * (lo[e, j] + hi[e, j])
    h = 0.5 * (hi[e, j] - lo[e, j])
    return wp.dot(c - pw[e, plane], n) - wp.dot(wp.vec3(wp.abs(n[0]), wp.abs(n[1]), wp.abs(n[2])), h) <= offset


@wp.func
def finite_pair(
    cd: CollisionData,
    frame_p: wp.array2d(dtype=wp.vec3),
    frame_move: wp.array2d(dtype=wp.vec2),
    reach0: float,
    sc: CollisionScratch,
    out: ContactBuffer,
    e: int,
    s: int,
    t: int,
):
    """One candidate pair of finite shapes (small or big): its counts (collided, filtered, skipped
    as still far apart), each 0 or 1. Collided when the bounds meet and, grown by the offsets, lie
    within the pair's margin."""
    lo = sc.lo
    hi = sc.hi
    counts = wp.vec3i(0)
    if boxes_overlap(lo, hi, e, s, t):
        if filtered(cd, s, t):
            counts = wp.vec3i(0, 1, 0)
        else:
            mg = pair_margin(cd, frame_p, frame_move, lo, hi, e, s, t, reach0, False)
            # the bounds grown by the offsets overlap; apart by more than the margin?
            if box_gap(lo, hi, e, s, t) + cd.shapes[s].offset + cd.shapes[t].offset <= mg:
                counts = wp.vec3i(1, 0, narrow(cd, sc, out, e, s, t, mg))
    return counts


@wp.func
def collide_env(
    cd: CollisionData,
    frame_R: wp.array2d(dtype=wp.mat33),
    frame_p: wp.array2d(dtype=wp.vec3),
    frame_move: wp.array2d(dtype=wp.vec2),
    reach0: float,
    sc: CollisionScratch,
    out: ContactBuffer,
    e: int,
):
    """All contacts of environment ``e`` for the frames ``frame_R[e], frame_p[e]``, each pair
    within its margin (``pair_margin``: ``reach0`` at or above every contact offset for all of
    them). Counts: candidate pairs, pairs whose bounds meet and that are collided (within
    their margins: a pair whose bounds are farther apart than its margin is not), those
    filtered, and of the collided ones those skipped as still far apart (``gjk``). Up to
    ``ALL_PAIRS_MAX`` small shapes are paired directly, every pair a candidate; more go
    through the hash grid (``broadphase``)."""
    lo = sc.lo
    hi = sc.hi
    heads = sc.heads
    ent = sc.ent
    nxt = sc.nxt
    shapes = cd.shapes
    out.count[e] = 0
    out.lost[e] = 0
    n_cand = int(0)
    counts = wp.vec3i(0)  # collided, filtered, skipped
    shape_bounds(cd, frame_R, frame_p, sc, e)
    if cd.n_small <= ALL_PAIRS_MAX:
        for a in range(cd.n_small):
            for b in range(a + 1, cd.n_small):
                s = cd.small[a]
                t = cd.small[b]
                if t < s:
                    s = cd.small[b]
                    t = cd.small[a]
                n_cand = n_cand + 1
                counts = counts + finite_pair(cd, frame_p, frame_move, reach0, sc, out, e, s, t)
    else:
        insert_cells(cd, sc, e)
        for k in range(cd.n_small * 8):
            s = cd.small[k // 8]
            ok, c, h = cell(lo[e, s], hi[e, s], cd.inv_cell, cd.hash_mask, k % 8)
            it = int(-1)
            if ok:
                it = heads[e, h]
            while it >= 0:
                en = ent[e, it]
                t = en[0]
                # t in this very cell (not another one hashed alike), and this is the cell of
                # the lowest corner of the two boxes' overlap: the pair is examined once
                if t > s and wp.vec3i(en[1], en[2], en[3]) == c:
                    if cell_of(wp.max(lo[e, s], lo[e, t]), cd.inv_cell) == c:
                        n_cand = n_cand + 1
                        counts = counts + finite_pair(cd, frame_p, frame_move, reach0, sc, out, e, s, t)
                it = nxt[e, it]
    # shapes too big for the cells, and planes, against every (other) finite shape
    for k in range((cd.n_big + cd.n_planes) * cd.n_shapes):
        s = int(0)
        plane = k >= cd.n_big * cd.n_shapes
        if plane:
            s = cd.planes[k // cd.n_shapes - cd.n_big]
        else:
            s = cd.big[k // cd.n_shapes]
        t = k % cd.n_shapes
        st = shapes[t]
        if t != s and st.kind != PLANE and (plane or st.big == 0 or t > s):
            n_cand = n_cand + 1
            if plane:  # within its margin, looking ahead past the offsets when the shape moves fast
                mg = pair_margin(cd, frame_p, frame_move, lo, hi, e, s, t, reach0, True)
                if near_plane(sc.Rw, sc.pw, lo, hi, e, s, t, wp.max(shapes[s].offset, mg - st.offset)):
                    if filtered(cd, s, t):
                        counts = counts + wp.vec3i(0, 1, 0)
                    else:
                        counts = counts + wp.vec3i(1, 0, narrow(cd, sc, out, e, s, t, mg))
            else:
                counts = counts + finite_pair(cd, frame_p, frame_move, reach0, sc, out, e, s, t)
    out.stats[e] = wp.vec4i(n_cand, counts[0], counts[1], counts[2])


#: a ``reach0`` that keeps every pair's margin at its contact offsets
NO_REACH = wp.constant(3.0e38)


@wp.kernel
def collide_kernel(
    cd: CollisionData,
    frame_R: wp.array2d(dtype=wp.mat33),
    frame_p: wp.array2d(dtype=wp.vec3),
    frame_move: wp.array2d(dtype=wp.vec2),
    reach0: float,
    sc: CollisionScratch,
    out: ContactBuffer,
):
    """Detection alone (``reach0 = NO_REACH``: every pair out to its contact offsets, ``frame_move``
    not read), or as the solver's step detects.

    Model in: ``cd`` (the shapes, their pairs and filters). State in: ``frame_R``, ``frame_p``
    (each environment's link frames), ``frame_move`` (their motion bounds this step), ``reach0``.
    Out: ``out`` (the contacts per environment); ``sc`` (the broad phase's and the far-pair cache's
    per-environment state, carried to the next call)."""
    collide_env(cd, frame_R, frame_p, frame_move, reach0, sc, out, wp.tid())
