"""The fused Warp step: one thread per environment does the whole articulation step.

Kept in one module so that Warp compiles it once (tens of seconds on a small CPU) and one
recorded launch per step replays it. Spatial vectors are Plücker coordinates in the world
frame at the world origin, ``(angular, linear)``; a spatial inertia is stored as
``(m, h = m c, Ibar = I_c - m [c][c])`` so that composite inertias are plain sums.
Dense per-environment matrices live in rows of 2-D arrays (``M[e, i * n + j]``).
"""

from __future__ import annotations

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
    link_parent: wp.array(dtype=int)
    link_type: wp.array(dtype=int)
    link_q: wp.array(dtype=int)
    link_u: wp.array(dtype=int)
    link_root: wp.array(dtype=int)
    link_Xp: wp.array(dtype=wp.transform)
    link_Xc_inv: wp.array(dtype=wp.transform)
    link_axis: wp.array(dtype=wp.vec3)
    link_mass: wp.array(dtype=float)
    link_com: wp.array(dtype=wp.vec3)
    link_I: wp.array(dtype=wp.mat33)
    j_lower: wp.array(dtype=float)
    j_upper: wp.array(dtype=float)
    j_vmax: wp.array(dtype=float)
    j_friction: wp.array(dtype=float)
    j_armature: wp.array(dtype=float)
    j_damping: wp.array(dtype=float)
    j_kp: wp.array(dtype=float)
    j_kd: wp.array(dtype=float)
    j_fmax: wp.array(dtype=float)
    j_flags: wp.array(dtype=int)
    dof_col: wp.array(dtype=int)
    dof_gain: wp.array(dtype=float)
    dof_beta: wp.array(dtype=float)
    dof_rootdof: wp.array(dtype=int)
    rel_f: wp.array(dtype=int)
    rel_l: wp.array(dtype=int)
    rel_m: wp.array(dtype=float)
    rel_c: wp.array(dtype=float)
    rel_kind: wp.array(dtype=int)
    rel_w: wp.array(dtype=float)
    rel_z: wp.array(dtype=float)
    elim_rel: wp.array(dtype=int)
    elim_node: wp.array(dtype=int)


@wp.struct
class Scratch:
    X: wp.array2d(dtype=wp.transform)
    V: wp.array2d(dtype=wp.spatial_vector)
    Acc: wp.array2d(dtype=wp.spatial_vector)
    F: wp.array2d(dtype=wp.spatial_vector)
    P: wp.array2d(dtype=wp.spatial_vector)
    Ic_m: wp.array2d(dtype=float)
    Ic_h: wp.array2d(dtype=wp.vec3)
    Ic_I: wp.array2d(dtype=wp.mat33)
    S: wp.array2d(dtype=wp.spatial_vector)
    M: wp.array2d(dtype=float)
    H: wp.array2d(dtype=float)
    H0: wp.array2d(dtype=float)
    Hinv: wp.array2d(dtype=float)
    f: wp.array2d(dtype=float)
    bh: wp.array2d(dtype=float)
    v: wp.array2d(dtype=float)
    u0: wp.array2d(dtype=float)
    tmp: wp.array2d(dtype=float)
    res: wp.array2d(dtype=float)
    lam: wp.array2d(dtype=float)
    soft: wp.array2d(dtype=float)


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
            o: wp.vec3):
    """FK, joint motion axes, body velocities, bias accelerations, own inertias.

    Spatial quantities are taken about the point ``o`` (world axes), chosen near the system:
    about the world origin, a body far away would lose float32 precision to cancellation.
    """
    a_world = sv(wp.vec3(0.0), -md.gravity)
    for l in range(md.n_links):
        p = md.link_parent[l]
        t = md.link_type[l]
        qs = md.link_q[l]
        us = md.link_u[l]
        Xl = wp.transform_identity()
        vl = wp.spatial_vector()
        al = a_world
        if t == FREE:
            # u = (angular velocity, velocity of the base frame origin), world axes
            rot = wp.normalize(wp.quat(q[e, qs + 3], q[e, qs + 4], q[e, qs + 5], q[e, qs + 6]))
            pb = wp.vec3(q[e, qs], q[e, qs + 1], q[e, qs + 2])
            Xl = wp.transform(pb, rot)
            r = pb - o
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
            Xpar = wp.transform_identity()
            vpar = wp.spatial_vector()
            if p >= 0:
                Xpar = sc.X[e, p]
                vpar = sc.V[e, p]
                al = sc.Acc[e, p]
            Xj = wp.transform_multiply(Xpar, md.link_Xp[l])
            axis = md.link_axis[l]
            aw = wp.quat_rotate(wp.transform_get_rotation(Xj), axis)
            qj = q[e, qs]
            s = sv(wp.vec3(0.0), aw)
            Xm = wp.transform(axis * qj, wp.quat_identity())
            if t == REVOLUTE:
                Xm = wp.transform(wp.vec3(0.0), wp.quat_from_axis_angle(axis, qj))
                s = sv(aw, wp.cross(wp.transform_get_translation(Xj) - o, aw))
            Xl = wp.transform_multiply(wp.transform_multiply(Xj, Xm), md.link_Xc_inv[l])
            sc.S[e, us] = s
            vj = s * u[e, us]
            vl = vpar + vj
            al = al + motion_cross(vl, vj)
        sc.X[e, l] = Xl
        sc.V[e, l] = vl
        sc.Acc[e, l] = al
        # own spatial inertia at the world origin
        m = md.link_mass[l]
        R = wp.quat_to_matrix(wp.transform_get_rotation(Xl))
        c = wp.transform_point(Xl, md.link_com[l]) - o
        Iw = R * md.link_I[l] * wp.transpose(R)
        Ib = Iw + m * (wp.dot(c, c) * wp.identity(n=3, dtype=float) - wp.outer(c, c))
        h = m * c
        sc.Ic_m[e, l] = m
        sc.Ic_h[e, l] = h
        sc.Ic_I[e, l] = Ib


@wp.func
def cholesky_inverse(H: wp.array2d(dtype=float), Hinv: wp.array2d(dtype=float), tmp: wp.array2d(dtype=float),
                     e: int, k: int):
    """Factor the k x k SPD H[e] in place (lower) and write its inverse to Hinv[e]."""
    for j in range(k):
        s = H[e, j * k + j]
        for p in range(j):
            s = s - H[e, j * k + p] * H[e, j * k + p]
        d = wp.sqrt(wp.max(s, 1.0e-30))
        H[e, j * k + j] = d
        for i in range(j + 1, k):
            s2 = H[e, i * k + j]
            for p in range(j):
                s2 = s2 - H[e, i * k + p] * H[e, j * k + p]
            H[e, i * k + j] = s2 / d
    for c in range(k):
        for i in range(k):          # forward: L y = e_c
            s = float(0.0)
            if i == c:
                s = 1.0
            for p in range(i):
                s = s - H[e, i * k + p] * tmp[e, p]
            tmp[e, i] = s / H[e, i * k + i]
        for ii in range(k):         # backward: L^T x = y
            i = k - 1 - ii
            s = tmp[e, i]
            for p in range(i + 1, k):
                s = s - H[e, p * k + i] * tmp[e, p]
            tmp[e, i] = s / H[e, i * k + i]
        for i in range(k):
            Hinv[e, i * k + c] = tmp[e, i]


@wp.func
def pgs_row(sc: Scratch, e: int, k: int, r: int, a: float, row: int, w: float, W: float,
            target: float, lo: float, hi: float):
    """One projected Gauss-Seidel update of a row acting on reduced column r with gain a."""
    old = sc.lam[e, row]
    new = wp.clamp(old + (target - w) / W, lo, hi)
    dl = new - old
    if dl != 0.0:
        sc.lam[e, row] = new
        for i in range(k):
            sc.v[e, i] = sc.v[e, i] + sc.Hinv[e, i * k + r] * a * dl
    return w + W * dl


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
    BIG = float(3.0e38)
    o = wp.transform_get_translation(md.link_Xp[0])
    if md.link_type[0] == FREE:
        o = wp.vec3(q_in[e, md.link_q[0]], q_in[e, md.link_q[0] + 1], q_in[e, md.link_q[0] + 2])
    forward(md, e, q_in, u_in, sc, o)
    # RNEA forces and (for floating bases) momentum + gravity impulse; composite inertias
    for l in range(L):
        m = sc.Ic_m[e, l]
        h = sc.Ic_h[e, l]
        Ib = sc.Ic_I[e, l]
        vl = sc.V[e, l]
        Iv = inertia_mul(m, h, Ib, vl)
        sc.F[e, l] = inertia_mul(m, h, Ib, sc.Acc[e, l]) + force_cross(vl, Iv)
        if md.has_float != 0:
            sc.P[e, l] = Iv + dt * sv(wp.cross(h, md.gravity), m * md.gravity)
    for ll in range(L):
        l = L - 1 - ll
        p = md.link_parent[l]
        us = md.link_u[l]
        nd = 1
        if md.link_type[l] == FREE:
            nd = 6
        for d in range(nd):
            sc.res[e, us + d] = wp.dot(sc.S[e, us + d], sc.F[e, l])    # bias h
        if p >= 0:
            sc.F[e, p] = sc.F[e, p] + sc.F[e, l]
            sc.Ic_m[e, p] = sc.Ic_m[e, p] + sc.Ic_m[e, l]
            sc.Ic_h[e, p] = sc.Ic_h[e, p] + sc.Ic_h[e, l]
            sc.Ic_I[e, p] = sc.Ic_I[e, p] + sc.Ic_I[e, l]
            if md.has_float != 0:
                sc.P[e, p] = sc.P[e, p] + sc.P[e, l]
    # CRBA: M (n x n)
    for l in range(L):
        us = md.link_u[l]
        nd = 1
        if md.link_type[l] == FREE:
            nd = 6
        m = sc.Ic_m[e, l]
        h = sc.Ic_h[e, l]
        Ib = sc.Ic_I[e, l]
        for d in range(nd):
            i = us + d
            Fd = inertia_mul(m, h, Ib, sc.S[e, i])
            for d2 in range(nd):
                sc.M[e, i * n + us + d2] = wp.dot(sc.S[e, us + d2], Fd)
            j = md.link_parent[l]
            while j >= 0:
                ujs = md.link_u[j]
                nj = 1
                if md.link_type[j] == FREE:
                    nj = 6
                for d2 in range(nj):
                    val = wp.dot(sc.S[e, ujs + d2], Fd)
                    sc.M[e, i * n + ujs + d2] = val
                    sc.M[e, (ujs + d2) * n + i] = val
                j = md.link_parent[j]
    # implicit drives, damping, armature: A = M + diag, f = M u + dt (tau - h + drive)
    for i in range(n):
        acc = float(0.0)
        for j in range(n):
            acc = acc + sc.M[e, i * n + j] * u_in[e, j]
        sc.f[e, i] = acc + dt * (effort[e, i] - sc.res[e, i])
        sc.u0[e, i] = 0.0
    for j in range(md.n1):
        qj = q_in[e, j]
        uj = u_in[e, j]
        diag = md.j_armature[j] + dt * md.j_damping[j]
        sc.f[e, j] = sc.f[e, j] + md.j_armature[j] * uj
        fl = md.j_flags[j]
        if (fl & F_DRIVE) != 0:
            kp = md.j_kp[j]
            kd = md.j_kd[j]
            qt = target_pos[e, j]
            ut = target_vel[e, j]
            est = kp * (qt - qj - dt * uj) + kd * (ut - uj)
            fmax = md.j_fmax[j]
            if wp.abs(est) > fmax:
                sc.f[e, j] = sc.f[e, j] + dt * wp.clamp(est, -fmax, fmax)
            else:
                diag = diag + dt * (kd + dt * kp)
                sc.f[e, j] = sc.f[e, j] + dt * (kp * (qt - qj) + kd * ut)
        sc.M[e, j * n + j] = sc.M[e, j * n + j] + diag
        rd = md.dof_rootdof[j]
        if rd != j:
            err = qj - md.dof_gain[j] * q_in[e, rd] - md.dof_beta[j]
            sc.u0[e, j] = -(md.erp / dt) * err
    # from here M holds A. Reduced system: H = S^T A S, bh = S^T (f - A u0)
    for i in range(k * k):
        sc.H[e, i] = 0.0
    for i in range(k):
        sc.bh[e, i] = 0.0
    for i in range(n):
        ci = md.dof_col[i]
        ai = md.dof_gain[i]
        acc = sc.f[e, i]
        for j in range(n):
            Aij = sc.M[e, i * n + j]
            acc = acc - Aij * sc.u0[e, j]
            cj = md.dof_col[j]
            sc.H[e, ci * k + cj] = sc.H[e, ci * k + cj] + ai * md.dof_gain[j] * Aij
        sc.bh[e, ci] = sc.bh[e, ci] + ai * acc
    # position errors of every relation at the start of the step
    for g in range(md.n_rel):
        rel_err[e, g] = q_in[e, md.rel_f[g]] - md.rel_m[g] * q_in[e, md.rel_l[g]] - md.rel_c[g]
        rel_imp[e, g] = 0.0
    if md.n_soft > 0:
        # compliant rows: k = w^2 / r, d = 2 w z / r with r = g^T H^-1 g of the hard-constrained system
        for i in range(k * k):
            sc.H0[e, i] = sc.H[e, i]
        cholesky_inverse(sc.H0, sc.Hinv, sc.tmp, e, k)
        for g in range(md.n_rel):
            if md.rel_kind[g] == SOFT_ROW:
                fi = md.rel_f[g]
                li = md.rel_l[g]
                cf = md.dof_col[fi]
                cl = md.dof_col[li]
                af = md.dof_gain[fi]
                al = -md.rel_m[g] * md.dof_gain[li]
                rinv = af * af * sc.Hinv[e, cf * k + cf] + al * al * sc.Hinv[e, cl * k + cl] \
                    + 2.0 * af * al * sc.Hinv[e, cf * k + cl]
                wn = md.rel_w[g]
                ks = wn * wn / rinv
                ds = 2.0 * wn * md.rel_z[g] / rinv
                cs = dt * (ds + dt * ks)
                sc.soft[e, 2 * g] = cs
                sc.soft[e, 2 * g + 1] = dt * ks * rel_err[e, g]
        for g in range(md.n_rel):
            if md.rel_kind[g] == SOFT_ROW:
                fi = md.rel_f[g]
                li = md.rel_l[g]
                cf = md.dof_col[fi]
                cl = md.dof_col[li]
                af = md.dof_gain[fi]
                al = -md.rel_m[g] * md.dof_gain[li]
                cs = sc.soft[e, 2 * g]
                rhs = -sc.soft[e, 2 * g + 1] - cs * (sc.u0[e, fi] - md.rel_m[g] * sc.u0[e, li])
                sc.H[e, cf * k + cf] = sc.H[e, cf * k + cf] + cs * af * af
                sc.H[e, cl * k + cl] = sc.H[e, cl * k + cl] + cs * al * al
                sc.H[e, cf * k + cl] = sc.H[e, cf * k + cl] + cs * af * al
                sc.H[e, cl * k + cf] = sc.H[e, cl * k + cf] + cs * af * al
                sc.bh[e, cf] = sc.bh[e, cf] + rhs * af
                sc.bh[e, cl] = sc.bh[e, cl] + rhs * al
    cholesky_inverse(sc.H, sc.Hinv, sc.tmp, e, k)
    for i in range(k):
        acc = float(0.0)
        for j in range(k):
            acc = acc + sc.Hinv[e, i * k + j] * sc.bh[e, j]
        sc.v[e, i] = acc
    # inequality rows (limits, velocity limits, friction) by projected Gauss-Seidel in the reduced space
    if md.has_rows != 0:
        for i in range(5 * md.n1):
            sc.lam[e, i] = 0.0
        it = int(0)
        moved = int(1)
        while it < md.iterations and moved != 0:     # stops early once no row changes
            it = it + 1
            moved = int(0)
            for j in range(md.n1):
                fl = md.j_flags[j]
                if (fl & F_ROWS) == 0:
                    continue
                r = md.dof_col[j]
                a = md.dof_gain[j]
                W = a * a * sc.Hinv[e, r * k + r]
                w = a * sc.v[e, r] + sc.u0[e, j]
                w0 = w
                qj = q_in[e, j]
                if (fl & F_LOWER) != 0:
                    lo = md.j_lower[j]
                    t = (lo - qj) / dt
                    if qj < lo:
                        t = md.erp * t
                    w = pgs_row(sc, e, k, r, a, 5 * j, w, W, t, 0.0, BIG)
                if (fl & F_UPPER) != 0:
                    hi = md.j_upper[j]
                    t = (hi - qj) / dt
                    if qj > hi:
                        t = md.erp * t
                    w = pgs_row(sc, e, k, r, a, 5 * j + 1, w, W, t, -BIG, 0.0)
                if (fl & F_VMAX) != 0:
                    vmax = md.j_vmax[j]
                    w = pgs_row(sc, e, k, r, a, 5 * j + 2, w, W, vmax, -BIG, 0.0)
                    w = pgs_row(sc, e, k, r, a, 5 * j + 3, w, W, -vmax, 0.0, BIG)
                if (fl & F_FRICTION) != 0:
                    fr = dt * md.j_friction[j]
                    w = pgs_row(sc, e, k, r, a, 5 * j + 4, w, W, 0.0, -fr, fr)
                if w != w0:
                    moved = int(1)
    # u+ = S v + u0
    for i in range(n):
        u_out[e, i] = md.dof_gain[i] * sc.v[e, md.dof_col[i]] + sc.u0[e, i]
    # coupling impulses: residual r = A u+ - f - J^T lambda - (soft rows) = G^T mu
    if md.n_rel > 0:
        for i in range(n):
            acc = -sc.f[e, i]
            for j in range(n):
                acc = acc + sc.M[e, i * n + j] * u_out[e, j]
            if md.has_rows != 0 and i < md.n1:
                acc = acc - (sc.lam[e, 5 * i] + sc.lam[e, 5 * i + 1] + sc.lam[e, 5 * i + 2]
                             + sc.lam[e, 5 * i + 3] + sc.lam[e, 5 * i + 4])
            sc.res[e, i] = acc
        for g in range(md.n_rel):
            if md.rel_kind[g] == SOFT_ROW:
                fi = md.rel_f[g]
                li = md.rel_l[g]
                lam_s = -sc.soft[e, 2 * g + 1] - sc.soft[e, 2 * g] * (u_out[e, fi] - md.rel_m[g] * u_out[e, li])
                rel_imp[e, g] = lam_s
                sc.res[e, fi] = sc.res[e, fi] - lam_s
                sc.res[e, li] = sc.res[e, li] + md.rel_m[g] * lam_s
        for s in range(md.n_elim):
            g = md.elim_rel[s]
            node = md.elim_node[s]
            acc = sc.res[e, node]
            coef = float(1.0)
            if md.rel_f[g] != node:
                coef = -md.rel_m[g]
            for other in range(md.n_rel):
                if other != g and md.rel_kind[other] == ACTIVE_ROW:
                    if md.rel_f[other] == node:
                        acc = acc - rel_imp[e, other]
                    elif md.rel_l[other] == node:
                        acc = acc + md.rel_m[other] * rel_imp[e, other]
            rel_imp[e, g] = acc / coef
    # integrate: q+ = q (+) dt u+
    for j in range(md.n1):
        q_out[e, j] = q_in[e, j] + dt * u_out[e, j]
    if md.has_float != 0:
        for l in range(L):
            if md.link_type[l] == FREE:
                qs = md.link_q[l]
                us = md.link_u[l]
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
                # momentum target: start momentum + gravity impulse + base effort impulse
                tgt = sc.P[e, l]
                for d in range(6):
                    tgt[d] = tgt[d] + dt * effort[e, us + d]
                sc.P[e, l] = tgt
        # the semi-implicit step conserves momentum only to O(dt^2); restore it exactly with a
        # base-velocity correction (internal joint velocities, hence the relations, untouched)
        forward(md, e, q_out, u_out, sc, o)
        for l in range(L):
            if md.link_type[l] == FREE:
                sc.F[e, l] = wp.spatial_vector()
        for l in range(L):
            rt = md.link_root[l]
            Iv = inertia_mul(sc.Ic_m[e, l], sc.Ic_h[e, l], sc.Ic_I[e, l], sc.V[e, l])
            sc.F[e, rt] = sc.F[e, rt] + Iv
            if rt != l:
                sc.Ic_m[e, rt] = sc.Ic_m[e, rt] + sc.Ic_m[e, l]
                sc.Ic_h[e, rt] = sc.Ic_h[e, rt] + sc.Ic_h[e, l]
                sc.Ic_I[e, rt] = sc.Ic_I[e, rt] + sc.Ic_I[e, l]
        for l in range(L):
            if md.link_type[l] == FREE:
                us = md.link_u[l]
                dP = sc.P[e, l] - sc.F[e, l]
                m = sc.Ic_m[e, l]
                h = sc.Ic_h[e, l]
                Icom = sc.Ic_I[e, l] - (wp.dot(h, h) * wp.identity(n=3, dtype=float) - wp.outer(h, h)) / m
                dw = wp.inverse(Icom) * (top(dP) - wp.cross(h, bot(dP)) / m)
                dv = (bot(dP) + wp.cross(h, dw)) / m
                dvp = dv + wp.cross(dw, wp.transform_get_translation(sc.X[e, l]) - o)
                for d in range(3):
                    u_out[e, us + d] = u_out[e, us + d] + dw[d]
                    u_out[e, us + 3 + d] = u_out[e, us + 3 + d] + dvp[d]
