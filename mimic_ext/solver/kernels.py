"""The fused Warp step: one thread per environment does the whole articulation step.

Kept in one module so that Warp compiles it once (tens of seconds on a small CPU) and one
recorded launch per step replays it. Spatial vectors are Plücker coordinates in the world
frame about a point ``o`` near the system, ``(angular, linear)``; a spatial inertia is stored
as ``(m, h = m c, Ibar = I_c - m [c][c])`` so that composite inertias are plain sums.
Per-environment scalars and dense matrices share one row of a 2-D work array per environment
(``ws[e, o_AS + i * k + c]``, offsets in ``ModelData.o_*``): one array to address, not a dozen.

The step works in the reduced space of the relations (``u = S v + u0``, k columns) as early
as it can: the CRBA writes ``A S`` (n x k) instead of the n x n mass matrix, ``M (u - u0)``
and the bias forces come from one composite-momentum pass over the links, so nothing per
step is quadratic in the DOF count except the k x k reduced system.
"""

from __future__ import annotations

from typing import Any

import warp as wp

wp.set_module_options({"enable_backward": False})   # forward only: halves the compile time

REVOLUTE = wp.constant(0)
PRISMATIC = wp.constant(1)
FREE = wp.constant(2)

F_LOWER = wp.constant(1)
F_UPPER = wp.constant(2)
F_VMAX = wp.constant(4)
F_FRICTION = wp.constant(8)
F_DRIVE = wp.constant(16)
F_ROWS = wp.constant(15)

ACTIVE_ROW = wp.constant(0)
REDUNDANT_ROW = wp.constant(1)
SOFT_ROW = wp.constant(2)


@wp.struct
class LinkData:
    """One link and the joint to its parent, in the parent's joint-motion frame. Each joint
    frame is turned so that the joint axis is its x axis (the motion is then a rotation
    about, or a translation along, x); the link's COM and inertia are in its own such frame."""

    parent: int
    jtype: int
    qs: int             # first coordinate in joint_q
    us: int             # first DOF in joint_qd
    nd: int             # DOF count (1, or 6 for a floating base)
    root: int
    Rp: wp.mat33        # joint frame in the parent's joint-motion frame (world for roots):
    pp: wp.vec3         # rotation and origin
    mass: float
    com: wp.vec3
    I: wp.mat33         # about the COM


@wp.struct
class JointData:
    """A 1-DOF joint's limits, drive and place in the reduced space (u_j = gain v_col + u0_j)."""

    flags: int
    col: int
    rootdof: int
    gain: float
    beta: float
    lower: float
    upper: float
    vmax: float
    friction: float
    armature: float
    damping: float
    kp: float
    kd: float
    fmax: float


@wp.struct
class RelData:
    """A relation q_f = m q_l + c between DOFs f and l; kind ACTIVE/REDUNDANT/SOFT_ROW; a soft
    one's natural frequency w and damping ratio z."""

    f: int
    l: int
    kind: int
    m: float
    c: float
    w: float
    z: float


@wp.struct
class ElimStep:
    """Read relation ``rel``'s impulse from the residual at DOF ``node`` (where its impulse has
    coefficient ``coef``), less the already solved relations ``terms[start:end]`` there."""

    rel: int
    node: int
    start: int
    end: int
    coef: float


@wp.struct
class ElimTerm:
    rel: int
    coef: float     # -1 at a follower, the multiplier at a leader


@wp.struct
class ModelData:
    n_links: int
    n_u: int
    n1: int
    k: int
    n_rel: int
    n_elim: int
    n_soft: int
    has_float: int
    has_rows: int
    iterations: int
    erp: float
    gravity: wp.vec3
    links: wp.array(dtype=LinkData)
    joints: wp.array(dtype=JointData)
    dof_col: wp.array(dtype=int)
    dof_gain: wp.array(dtype=float)
    rels: wp.array(dtype=RelData)
    elims: wp.array(dtype=ElimStep)
    terms: wp.array(dtype=ElimTerm)
    # offsets of the work arrays in a row of Scratch.ws (sizes: see Model._build_data)
    o_AS: int
    o_H0: int
    o_Hinv: int
    o_H: int
    o_f: int
    o_bh: int
    o_v: int
    o_u0: int
    o_tmp: int
    o_res: int
    o_rowW: int
    o_lam: int
    o_soft: int


@wp.struct
class Scratch:
    R: wp.array2d(dtype=wp.mat33)
    pos: wp.array2d(dtype=wp.vec3)
    V: wp.array2d(dtype=wp.spatial_vector)
    Acc: wp.array2d(dtype=wp.spatial_vector)
    G: wp.array2d(dtype=wp.spatial_vector)
    Ic_m: wp.array2d(dtype=float)
    Ic_h: wp.array2d(dtype=wp.vec3)
    Ic_I: wp.array2d(dtype=wp.mat33)
    S: wp.array2d(dtype=wp.spatial_vector)
    ws: wp.array2d(dtype=float)     # every per-environment scalar work array, at md.o_*
    # floating bases: momentum bookkeeping in float64 (see momentum64)
    Rd: wp.array2d(dtype=wp.mat33d)
    pd: wp.array2d(dtype=wp.vec3d)
    Vd: wp.array2d(dtype=wp.spatial_vectord)
    Pd: wp.array2d(dtype=wp.spatial_vectord)
    Td: wp.array2d(dtype=wp.spatial_vectord)
    Imd: wp.array2d(dtype=wp.float64)
    Ihd: wp.array2d(dtype=wp.vec3d)
    IId: wp.array2d(dtype=wp.mat33d)


@wp.func
def soft_row_columns(md: ModelData, rd: RelData):
    """A compliant row g = e_f - m e_l in the reduced space: its two columns and entries."""
    return md.dof_col[rd.f], md.dof_col[rd.l], md.dof_gain[rd.f], -rd.m * md.dof_gain[rd.l]


@wp.func
def turn_about_x(R: Any, c: Any, s: Any):
    """``R Rx(q)`` from ``(cos q, sin q)``: the frame's y and z columns turned about its x axis.

    Generic so that the float32 step and the float64 momentum bookkeeping share it.
    """
    return type(R)(R[0, 0], c * R[0, 1] + s * R[0, 2], c * R[0, 2] - s * R[0, 1],
                   R[1, 0], c * R[1, 1] + s * R[1, 2], c * R[1, 2] - s * R[1, 1],
                   R[2, 0], c * R[2, 1] + s * R[2, 2], c * R[2, 2] - s * R[2, 1])


@wp.func
def sv(w: wp.vec3, v: wp.vec3):
    return wp.spatial_vector(w[0], w[1], w[2], v[0], v[1], v[2])


@wp.func
def top(a: wp.spatial_vector):
    return wp.vec3(a[0], a[1], a[2])


@wp.func
def bot(a: wp.spatial_vector):
    return wp.vec3(a[3], a[4], a[5])


@wp.func
def motion_cross(a: wp.spatial_vector, b: wp.spatial_vector):
    w1 = top(a)
    v1 = bot(a)
    w2 = top(b)
    v2 = bot(b)
    return sv(wp.cross(w1, w2), wp.cross(w1, v2) + wp.cross(v1, w2))


@wp.func
def force_cross(a: wp.spatial_vector, f: wp.spatial_vector):
    w = top(a)
    v = bot(a)
    n = top(f)
    fl = bot(f)
    return sv(wp.cross(w, n) + wp.cross(v, fl), wp.cross(w, fl))


@wp.func
def inertia_mul(m: float, h: wp.vec3, Ib: wp.mat33, a: wp.spatial_vector):
    w = top(a)
    v = bot(a)
    return sv(Ib * w + wp.cross(h, v), m * v - wp.cross(h, w))


@wp.func
def forward(md: ModelData, e: int, q: wp.array2d(dtype=float), u: wp.array2d(dtype=float), sc: Scratch,
            o: wp.vec3, dt: float):
    """FK, joint motion axes, body velocities, bias accelerations, own inertias, and each
    link's RNEA force F (gravity, Coriolis) folded into ``G = I v - dt F`` (its momentum
    less the bias impulse), while the link's numbers are at hand.

    Frames are rotation matrices (``sc.R``, ``sc.pos``: each link's joint frame after the
    joint motion): composing them and turning about the frame's x axis is about half the
    work of quaternions followed by the matrix the inertia needs anyway.
    Spatial quantities are taken about the point ``o`` (world axes), chosen near the system:
    about the world origin, a body far away would lose float32 precision to cancellation.
    """
    a_world = sv(wp.vec3(0.0), -md.gravity)
    for l in range(md.n_links):
        ld = md.links[l]
        us = ld.us
        Rl = wp.identity(n=3, dtype=float)
        pl = wp.vec3(0.0)
        vl = wp.spatial_vector()
        al = a_world
        if ld.jtype == FREE:
            # u = (angular velocity, velocity of the base frame origin), world axes
            qs = ld.qs
            Rl = wp.quat_to_matrix(wp.normalize(wp.quat(q[e, qs + 3], q[e, qs + 4], q[e, qs + 5], q[e, qs + 6])))
            pl = wp.vec3(q[e, qs], q[e, qs + 1], q[e, qs + 2])
            r = pl - o
            om = wp.vec3(u[e, us], u[e, us + 1], u[e, us + 2])
            vp = wp.vec3(u[e, us + 3], u[e, us + 4], u[e, us + 5])
            for d in range(3):
                ed = wp.vec3(0.0)
                ed[d] = 1.0
                sc.S[e, us + d] = sv(ed, wp.cross(r, ed))
                sc.S[e, us + 3 + d] = sv(wp.vec3(0.0), ed)
            vl = sv(om, vp + wp.cross(r, om))
            al = al + sv(wp.vec3(0.0), wp.cross(vp, om))
        else:
            p = ld.parent
            Rj = ld.Rp
            pj = ld.pp
            vpar = wp.spatial_vector()
            if p >= 0:
                Rpar = sc.R[e, p]
                Rj = Rpar * ld.Rp
                pj = sc.pos[e, p] + Rpar * ld.pp
                vpar = sc.V[e, p]
                al = sc.Acc[e, p]
            aw = wp.vec3(Rj[0, 0], Rj[1, 0], Rj[2, 0])      # the joint axis is the frame's x axis
            qj = q[e, ld.qs]
            s = sv(wp.vec3(0.0), aw)
            Rl = Rj
            pl = pj
            if ld.jtype == REVOLUTE:
                Rl = turn_about_x(Rj, wp.cos(qj), wp.sin(qj))
                s = sv(aw, wp.cross(pj - o, aw))
            else:
                pl = pj + aw * qj
            sc.S[e, us] = s
            vj = s * u[e, us]
            vl = vpar + vj
            al = al + motion_cross(vl, vj)
        sc.R[e, l] = Rl
        sc.pos[e, l] = pl
        sc.V[e, l] = vl
        sc.Acc[e, l] = al
        # own spatial inertia about o
        m = ld.mass
        c = Rl * ld.com + pl - o
        Ib = Rl * ld.I * wp.transpose(Rl) + m * (wp.dot(c, c) * wp.identity(n=3, dtype=float) - wp.outer(c, c))
        h = m * c
        sc.Ic_m[e, l] = m
        sc.Ic_h[e, l] = h
        sc.Ic_I[e, l] = Ib
        Iv = inertia_mul(m, h, Ib, vl)
        sc.G[e, l] = Iv - dt * (inertia_mul(m, h, Ib, al) + force_cross(vl, Iv))


@wp.func
def momentum64(md: ModelData, e: int, q: wp.array2d(dtype=float), u: wp.array2d(dtype=float), sc: Scratch,
               o: wp.vec3d):
    """Per tree (at its root link): spatial momentum about ``o`` and composite inertia, float64.

    Restoring a floating system's momentum each step compares this at the end of the step
    with its value at the start. Evaluated in float32, the sum of the links' momenta carries
    rounding noise of the size of the largest link's momentum, and that noise random-walks
    from step to step; in float64 the same function of the stored state is smooth, so the
    start and end values telescope and only the float32 storage of the base velocity rounds.
    """
    for l in range(md.n_links):
        ld = md.links[l]
        us = ld.us
        Rl = wp.identity(n=3, dtype=wp.float64)
        pl = wp.vec3d()
        vl = wp.spatial_vectord()
        if ld.jtype == FREE:
            qs = ld.qs
            Rl = wp.quat_to_matrix(wp.normalize(wp.quatd(wp.float64(q[e, qs + 3]), wp.float64(q[e, qs + 4]),
                                                         wp.float64(q[e, qs + 5]), wp.float64(q[e, qs + 6]))))
            pl = wp.vec3d(wp.float64(q[e, qs]), wp.float64(q[e, qs + 1]), wp.float64(q[e, qs + 2]))
            om = wp.vec3d(wp.float64(u[e, us]), wp.float64(u[e, us + 1]), wp.float64(u[e, us + 2]))
            vp = wp.vec3d(wp.float64(u[e, us + 3]), wp.float64(u[e, us + 4]), wp.float64(u[e, us + 5]))
            v_o = vp + wp.cross(pl - o, om)
            vl = wp.spatial_vectord(om[0], om[1], om[2], v_o[0], v_o[1], v_o[2])
        else:
            p = ld.parent
            Rj = wp.mat33d(ld.Rp)
            pj = wp.vec3d(ld.pp)
            vpar = wp.spatial_vectord()
            if p >= 0:
                Rpar = sc.Rd[e, p]
                pj = sc.pd[e, p] + Rpar * pj
                Rj = Rpar * Rj
                vpar = sc.Vd[e, p]
            aw = wp.vec3d(Rj[0, 0], Rj[1, 0], Rj[2, 0])
            qj = wp.float64(q[e, ld.qs])
            uj = wp.float64(u[e, us])
            Rl = Rj
            pl = pj
            if ld.jtype == REVOLUTE:
                Rl = turn_about_x(Rj, wp.cos(qj), wp.sin(qj))
                lin = wp.cross(pj - o, aw)
                vl = vpar + uj * wp.spatial_vectord(aw[0], aw[1], aw[2], lin[0], lin[1], lin[2])
            else:
                pl = pj + aw * qj
                vl = vpar + uj * wp.spatial_vectord(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0),
                                                    aw[0], aw[1], aw[2])
        sc.Rd[e, l] = Rl
        sc.pd[e, l] = pl
        sc.Vd[e, l] = vl
        m = wp.float64(ld.mass)
        c = Rl * wp.vec3d(ld.com) + pl - o
        Ib = Rl * wp.mat33d(ld.I) * wp.transpose(Rl) + m * (wp.dot(c, c) * wp.identity(n=3, dtype=wp.float64)
                                                          - wp.outer(c, c))
        h = m * c
        w = wp.vec3d(vl[0], vl[1], vl[2])
        v = wp.vec3d(vl[3], vl[4], vl[5])
        ang = Ib * w + wp.cross(h, v)
        lmo = m * v - wp.cross(h, w)
        mom = wp.spatial_vectord(ang[0], ang[1], ang[2], lmo[0], lmo[1], lmo[2])
        rt = ld.root
        if rt == l:
            sc.Pd[e, rt] = mom
            sc.Imd[e, rt] = m
            sc.Ihd[e, rt] = h
            sc.IId[e, rt] = Ib
        else:
            sc.Pd[e, rt] = sc.Pd[e, rt] + mom
            sc.Imd[e, rt] = sc.Imd[e, rt] + m
            sc.Ihd[e, rt] = sc.Ihd[e, rt] + h
            sc.IId[e, rt] = sc.IId[e, rt] + Ib


@wp.func
def cholesky_inverse(ws: wp.array2d(dtype=float), e: int, oH: int, oHinv: int, oT: int, k: int):
    """Factor the k x k SPD matrix at ws[e, oH:] in place (lower) and write its inverse at
    ws[e, oHinv:] (scratch: k values at ws[e, oT:])."""
    for j in range(k):
        s = ws[e, oH + j * k + j]
        for p in range(j):
            s = s - ws[e, oH + j * k + p] * ws[e, oH + j * k + p]
        d = wp.sqrt(wp.max(s, 1.0e-30))
        ws[e, oH + j * k + j] = d
        for i in range(j + 1, k):
            s2 = ws[e, oH + i * k + j]
            for p in range(j):
                s2 = s2 - ws[e, oH + i * k + p] * ws[e, oH + j * k + p]
            ws[e, oH + i * k + j] = s2 / d
    for c in range(k):
        for i in range(k):          # forward: L y = e_c
            s = float(0.0)
            if i == c:
                s = 1.0
            for p in range(i):
                s = s - ws[e, oH + i * k + p] * ws[e, oT + p]
            ws[e, oT + i] = s / ws[e, oH + i * k + i]
        for ii in range(k):         # backward: L^T x = y
            i = k - 1 - ii
            s = ws[e, oT + i]
            for p in range(i + 1, k):
                s = s - ws[e, oH + p * k + i] * ws[e, oT + p]
            ws[e, oT + i] = s / ws[e, oH + i * k + i]
        for i in range(k):
            ws[e, oHinv + i * k + c] = ws[e, oT + i]


@wp.func
def pgs_row(ws: wp.array2d(dtype=float), e: int, o_lam: int, o_v: int, o_Hinv: int, k: int, r: int,
            a: float, row: int, w: float, W: float, iW: float, target: float, lo: float, hi: float):
    """One projected Gauss-Seidel update of a row acting on reduced column r with gain a
    (``W = a^2 Hinv_rr``, ``iW = 1 / W``); returns the row's new velocity."""
    old = ws[e, o_lam + row]
    new = wp.clamp(old + (target - w) * iW, lo, hi)
    dl = new - old
    wn = w
    if dl != 0.0:
        ws[e, o_lam + row] = new
        for i in range(k):
            ws[e, o_v + i] = ws[e, o_v + i] + ws[e, o_Hinv + i * k + r] * a * dl
        wn = w + W * dl
    return wn


@wp.kernel
def step_kernel(md: ModelData, sc: Scratch,
                q_in: wp.array2d(dtype=float), u_in: wp.array2d(dtype=float),
                target_pos: wp.array2d(dtype=float), target_vel: wp.array2d(dtype=float),
                effort: wp.array2d(dtype=float), dt: float,
                q_out: wp.array2d(dtype=float), u_out: wp.array2d(dtype=float),
                rel_imp: wp.array2d(dtype=float), rel_err: wp.array2d(dtype=float)):
    e = wp.tid()
    n = md.n_u
    k = md.k
    L = md.n_links
    n1 = md.n1
    BIG = float(3.0e38)
    ws = sc.ws
    o_AS = md.o_AS
    o_H0 = md.o_H0
    o_Hinv = md.o_Hinv
    o_H = md.o_H
    o_f = md.o_f
    o_bh = md.o_bh
    o_v = md.o_v
    o_u0 = md.o_u0
    o_tmp = md.o_tmp
    o_res = md.o_res
    o_rowW = md.o_rowW
    o_lam = md.o_lam
    o_soft = md.o_soft
    root = md.links[0]
    o = root.pp
    if root.jtype == FREE:
        o = wp.vec3(q_in[e, root.qs], q_in[e, root.qs + 1], q_in[e, root.qs + 2])
    # position-error correction u0 (Baumgarte at erp) of every eliminated DOF
    for j in range(n):
        u0j = float(0.0)
        if j < n1:
            jd = md.joints[j]
            if jd.rootdof != j:
                err = q_in[e, j] - jd.gain * q_in[e, jd.rootdof] - jd.beta
                u0j = -(md.erp / dt) * err
        ws[e, o_u0 + j] = u0j
    forward(md, e, q_in, u_in, sc, o, dt)
    od = wp.vec3d(o)
    if md.has_float != 0:
        # momentum target of each floating tree: start momentum + gravity and base effort impulses
        momentum64(md, e, q_in, u_in, sc, od)
        gd = wp.vec3d(md.gravity)
        dtd = wp.float64(dt)
        for l in range(L):
            ld = md.links[l]
            if ld.jtype == FREE:
                us = ld.us
                ang = wp.cross(sc.Ihd[e, l], gd)
                lmo = sc.Imd[e, l] * gd
                tau = wp.spatial_vectord()
                for d in range(6):
                    tau[d] = wp.float64(effort[e, us + d])
                grav = wp.spatial_vectord(ang[0], ang[1], ang[2], lmo[0], lmo[1], lmo[2])
                sc.Td[e, l] = sc.Pd[e, l] + dtd * (grav + tau)
    # From the leaves up: composite inertias and G; f = S^T G + dt tau = M u + dt (tau - h);
    # and, with each link's composite inertia complete, its CRBA column straight into A S
    # (n x k): M_ij = s_j . Ic_i s_i for j on i's link or an ancestor. The same pairs give
    # f -= M u0 (only eliminated DOFs have u0 != 0).
    rel = int(0)
    if k < n:
        rel = int(1)
    for i in range(n * k):
        ws[e, o_AS + i] = 0.0
    for i in range(n):
        ws[e, o_f + i] = 0.0
    for ll in range(L):
        l = L - 1 - ll
        ld = md.links[l]
        p = ld.parent
        us = ld.us
        nd = ld.nd
        Gl = sc.G[e, l]
        m = sc.Ic_m[e, l]
        h = sc.Ic_h[e, l]
        Ib = sc.Ic_I[e, l]
        for d in range(nd):
            i = us + d
            Si = sc.S[e, i]
            ci = md.dof_col[i]
            ai = md.dof_gain[i]
            u0i = ws[e, o_u0 + i]
            Fd = inertia_mul(m, h, Ib, Si)
            fu0 = float(0.0)
            for d2 in range(nd):
                jj = us + d2
                val = wp.dot(sc.S[e, jj], Fd)
                a_ij = o_AS + i * k + md.dof_col[jj]
                ws[e, a_ij] = ws[e, a_ij] + md.dof_gain[jj] * val
                if rel != 0:
                    fu0 = fu0 + val * ws[e, o_u0 + jj]
            j = p
            while j >= 0:
                lj = md.links[j]
                for d2 in range(lj.nd):
                    jj = lj.us + d2
                    val = wp.dot(sc.S[e, jj], Fd)
                    a_ij = o_AS + i * k + md.dof_col[jj]
                    a_ji = o_AS + jj * k + ci
                    ws[e, a_ij] = ws[e, a_ij] + md.dof_gain[jj] * val
                    ws[e, a_ji] = ws[e, a_ji] + ai * val
                    if rel != 0:
                        fu0 = fu0 + val * ws[e, o_u0 + jj]
                        ws[e, o_f + jj] = ws[e, o_f + jj] - val * u0i
                j = lj.parent
            ws[e, o_f + i] = ws[e, o_f + i] + wp.dot(Si, Gl) + dt * effort[e, i] - fu0
        if p >= 0:
            sc.G[e, p] = sc.G[e, p] + Gl
            sc.Ic_m[e, p] = sc.Ic_m[e, p] + m
            sc.Ic_h[e, p] = sc.Ic_h[e, p] + h
            sc.Ic_I[e, p] = sc.Ic_I[e, p] + Ib
    # implicit drives, damping, armature: A = M + diag, f' = f - A u0 with
    # f = M u + dt (tau - h + drive) + armature u
    for j in range(n1):
        jd = md.joints[j]
        qj = q_in[e, j]
        uj = u_in[e, j]
        diag = jd.armature + dt * jd.damping
        fj = ws[e, o_f + j] + jd.armature * uj
        if (jd.flags & F_DRIVE) != 0:
            kp = jd.kp
            kd = jd.kd
            qt = target_pos[e, j]
            ut = target_vel[e, j]
            est = kp * (qt - qj - dt * uj) + kd * (ut - uj)
            if wp.abs(est) > jd.fmax:
                fj = fj + dt * wp.clamp(est, -jd.fmax, jd.fmax)
            else:
                diag = diag + dt * (kd + dt * kp)
                fj = fj + dt * (kp * (qt - qj) + kd * ut)
        ws[e, o_f + j] = fj - diag * ws[e, o_u0 + j]
        cj = j * k + jd.col
        ws[e, o_AS + cj] = ws[e, o_AS + cj] + jd.gain * diag
    # reduced system: H = S^T (A S), bh = S^T f'
    for i in range(k * k):
        ws[e, o_H + i] = 0.0
    for i in range(k):
        ws[e, o_bh + i] = 0.0
    for i in range(n):
        ci = md.dof_col[i]
        ai = md.dof_gain[i]
        ws[e, o_bh + ci] = ws[e, o_bh + ci] + ai * ws[e, o_f + i]
        for c in range(k):
            ws[e, o_H + ci * k + c] = ws[e, o_H + ci * k + c] + ai * ws[e, o_AS + i * k + c]
    # position errors of every relation at the start of the step
    for g in range(md.n_rel):
        rd = md.rels[g]
        rel_err[e, g] = q_in[e, rd.f] - rd.m * q_in[e, rd.l] - rd.c
        rel_imp[e, g] = 0.0
    if md.n_soft > 0:
        # compliant rows: k = w^2 / r, d = 2 w z / r with r = g^T H^-1 g of the hard-constrained system
        for i in range(k * k):
            ws[e, o_H0 + i] = ws[e, o_H + i]
        cholesky_inverse(ws, e, o_H0, o_Hinv, o_tmp, k)
        for g in range(md.n_rel):
            rd = md.rels[g]
            if rd.kind == SOFT_ROW:
                cf, cl, af, al = soft_row_columns(md, rd)
                rinv = af * af * ws[e, o_Hinv + cf * k + cf] + al * al * ws[e, o_Hinv + cl * k + cl] \
                    + 2.0 * af * al * ws[e, o_Hinv + cf * k + cl]
                wn = rd.w
                ks = wn * wn / rinv
                ds = 2.0 * wn * rd.z / rinv
                cs = dt * (ds + dt * ks)
                ws[e, o_soft + 2 * g] = cs
                ws[e, o_soft + 2 * g + 1] = dt * ks * rel_err[e, g]
        for g in range(md.n_rel):
            rd = md.rels[g]
            if rd.kind == SOFT_ROW:
                fi = rd.f
                li = rd.l
                cf, cl, af, al = soft_row_columns(md, rd)
                cs = ws[e, o_soft + 2 * g]
                rhs = -ws[e, o_soft + 2 * g + 1] - cs * (ws[e, o_u0 + fi] - rd.m * ws[e, o_u0 + li])
                ws[e, o_H + cf * k + cf] = ws[e, o_H + cf * k + cf] + cs * af * af
                ws[e, o_H + cl * k + cl] = ws[e, o_H + cl * k + cl] + cs * al * al
                ws[e, o_H + cf * k + cl] = ws[e, o_H + cf * k + cl] + cs * af * al
                ws[e, o_H + cl * k + cf] = ws[e, o_H + cl * k + cf] + cs * af * al
                ws[e, o_bh + cf] = ws[e, o_bh + cf] + rhs * af
                ws[e, o_bh + cl] = ws[e, o_bh + cl] + rhs * al
    cholesky_inverse(ws, e, o_H, o_Hinv, o_tmp, k)
    for i in range(k):
        acc = float(0.0)
        for j in range(k):
            acc = acc + ws[e, o_Hinv + i * k + j] * ws[e, o_bh + j]
        ws[e, o_v + i] = acc
    # inequality rows (limits, velocity limits, friction) by projected Gauss-Seidel in the reduced space
    if md.has_rows != 0:
        for i in range(5 * n1):
            ws[e, o_lam + i] = 0.0
        for j in range(n1):             # each joint's rows see the effective mass 1 / W, fixed in the step
            jd = md.joints[j]
            W = jd.gain * jd.gain * ws[e, o_Hinv + jd.col * k + jd.col]
            ws[e, o_rowW + j] = W
            ws[e, o_rowW + n1 + j] = 1.0 / W
        # Gauss-Seidel over the joints, cyclically, until n1 joints in a row leave v unchanged:
        # the same updates as whole passes until a pass changes nothing (at most `iterations`
        # passes), without the rest of that last pass, whose joints have already seen this v
        quiet = int(0)
        left = md.iterations * n1
        j = int(0)
        while quiet < n1 and left > 0:
            left = left - 1
            jd = md.joints[j]
            fl = jd.flags
            quiet = quiet + 1
            if (fl & F_ROWS) != 0:
                r = jd.col
                a = jd.gain
                W = ws[e, o_rowW + j]
                iW = ws[e, o_rowW + n1 + j]
                w = a * ws[e, o_v + r] + ws[e, o_u0 + j]
                w0 = w
                qj = q_in[e, j]
                if (fl & F_LOWER) != 0:
                    t = (jd.lower - qj) / dt
                    if qj < jd.lower:
                        t = md.erp * t
                    w = pgs_row(ws, e, o_lam, o_v, o_Hinv, k, r, a, 5 * j, w, W, iW, t, 0.0, BIG)
                if (fl & F_UPPER) != 0:
                    t = (jd.upper - qj) / dt
                    if qj > jd.upper:
                        t = md.erp * t
                    w = pgs_row(ws, e, o_lam, o_v, o_Hinv, k, r, a, 5 * j + 1, w, W, iW, t, -BIG, 0.0)
                if (fl & F_VMAX) != 0:
                    w = pgs_row(ws, e, o_lam, o_v, o_Hinv, k, r, a, 5 * j + 2, w, W, iW, jd.vmax, -BIG, 0.0)
                    w = pgs_row(ws, e, o_lam, o_v, o_Hinv, k, r, a, 5 * j + 3, w, W, iW, -jd.vmax, 0.0, BIG)
                if (fl & F_FRICTION) != 0:
                    fr = dt * jd.friction
                    w = pgs_row(ws, e, o_lam, o_v, o_Hinv, k, r, a, 5 * j + 4, w, W, iW, 0.0, -fr, fr)
                if w != w0:
                    quiet = int(0)
            j = j + 1
            if j == n1:
                j = int(0)
    # u+ = S v + u0
    for i in range(n):
        u_out[e, i] = md.dof_gain[i] * ws[e, o_v + md.dof_col[i]] + ws[e, o_u0 + i]
    # coupling impulses: residual r = A u+ - f - J^T lambda - (soft rows) = (A S) v - f' - ... = G^T mu
    if md.n_rel > 0:
        for i in range(n):
            acc = -ws[e, o_f + i]
            for c in range(k):
                acc = acc + ws[e, o_AS + i * k + c] * ws[e, o_v + c]
            if md.has_rows != 0 and i < n1:
                acc = acc - (ws[e, o_lam + 5 * i] + ws[e, o_lam + 5 * i + 1] + ws[e, o_lam + 5 * i + 2]
                             + ws[e, o_lam + 5 * i + 3] + ws[e, o_lam + 5 * i + 4])
            ws[e, o_res + i] = acc
        if md.n_soft > 0:
            for g in range(md.n_rel):
                rd = md.rels[g]
                if rd.kind == SOFT_ROW:
                    fi = rd.f
                    li = rd.l
                    lam_s = -ws[e, o_soft + 2 * g + 1] \
                        - ws[e, o_soft + 2 * g] * (u_out[e, fi] - rd.m * u_out[e, li])
                    rel_imp[e, g] = lam_s
                    ws[e, o_res + fi] = ws[e, o_res + fi] - lam_s
                    ws[e, o_res + li] = ws[e, o_res + li] + rd.m * lam_s
        for s in range(md.n_elim):       # peel the forest of active relations leaf by leaf
            st = md.elims[s]
            acc = ws[e, o_res + st.node]
            for ti in range(st.start, st.end):
                tm = md.terms[ti]
                acc = acc + tm.coef * rel_imp[e, tm.rel]
            rel_imp[e, st.rel] = acc / st.coef
    # integrate: q+ = q (+) dt u+
    for j in range(n1):
        q_out[e, j] = q_in[e, j] + dt * u_out[e, j]
    if md.has_float != 0:
        for l in range(L):
            ld = md.links[l]
            if ld.jtype == FREE:
                qs = ld.qs
                us = ld.us
                om = wp.vec3(u_out[e, us], u_out[e, us + 1], u_out[e, us + 2])
                vo = wp.vec3(u_out[e, us + 3], u_out[e, us + 4], u_out[e, us + 5])
                pos = wp.vec3(q_in[e, qs], q_in[e, qs + 1], q_in[e, qs + 2])
                rot = wp.quat(q_in[e, qs + 3], q_in[e, qs + 4], q_in[e, qs + 5], q_in[e, qs + 6])
                pos = pos + dt * vo
                omn = wp.length(om)
                if omn > 0.0:
                    rot = wp.quat_from_axis_angle(om / omn, omn * dt) * rot
                rot = wp.normalize(rot)
                q_out[e, qs] = pos[0]
                q_out[e, qs + 1] = pos[1]
                q_out[e, qs + 2] = pos[2]
                q_out[e, qs + 3] = rot[0]
                q_out[e, qs + 4] = rot[1]
                q_out[e, qs + 5] = rot[2]
                q_out[e, qs + 6] = rot[3]
        # the semi-implicit step conserves momentum only to O(dt^2); restore it exactly with a
        # base-velocity correction (internal joint velocities, hence the relations, untouched)
        momentum64(md, e, q_out, u_out, sc, od)
        for l in range(L):
            ld = md.links[l]
            if ld.jtype == FREE:
                us = ld.us
                dP = sc.Td[e, l] - sc.Pd[e, l]
                mt = sc.Imd[e, l]
                ht = sc.Ihd[e, l]
                Icom = sc.IId[e, l] - (wp.dot(ht, ht) * wp.identity(n=3, dtype=wp.float64) - wp.outer(ht, ht)) / mt
                dPa = wp.vec3d(dP[0], dP[1], dP[2])
                dPl = wp.vec3d(dP[3], dP[4], dP[5])
                dw = wp.inverse(Icom) * (dPa - wp.cross(ht, dPl) / mt)
                dv = (dPl + wp.cross(ht, dw)) / mt
                dvp = dv + wp.cross(dw, sc.pd[e, l] - od)
                for d in range(3):
                    u_out[e, us + d] = float(wp.float64(u_out[e, us + d]) + dw[d])
                    u_out[e, us + 3 + d] = float(wp.float64(u_out[e, us + 3 + d]) + dvp[d])
