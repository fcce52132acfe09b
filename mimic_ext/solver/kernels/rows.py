"""Constraint rows of the velocity-level solve, all in the reduced space ``u = S v + u0``.

- Loop closures: bilateral rows ``J_L u+ = -(erp / dt) e_L`` solved exactly with the reduced
  system through its Schur complement ``J_L H^-1 J_L^T`` (rank-revealing: planar loops repeat
  rows), so every later row acts through the constrained inverse
  ``C = H^-1 - Y S^+ Y^T`` (``Y = H^-1 J_L^T``) and never opens a loop.
- Compliant relations: implicit spring-dampers on the relation error whose one-step map has
  the authored natural frequency and damping ratio, with the relation's effective mass
  ``1 / (g C_M g^T)`` from the mass matrix alone (``C_M``: mass, armature and loops, no drives).
- Inequality and bounded rows, one joint each (limits, velocity caps, friction, drive force
  bounds): projected Gauss-Seidel on responses ``C J^T`` computed by applying ``C`` to a
  vector (no explicit inverse), only for a joint whose rows act, within its group.
- The coupling impulses of the hard relations, read back from the residual.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import warp as wp

from .dynamics import F_DRIVE, F_DSAT, F_FRICTION, F_LOWER, F_ROWS, F_UPPER, F_VMAX

SOFT_ROW = wp.constant(2)


def build(ns) -> None:
    T, V3 = ns.T, ns.vec3
    A2 = wp.array2d(dtype=T)
    I2 = wp.array2d(dtype=wp.int32)
    MD, SC = ns.ModelData, ns.Scratch
    sv = ns.sv
    factor, solve, dot_run = ns.factor, ns.solve, ns.dot_run
    sparse_factor, sparse_solve = ns.sparse_factor, ns.sparse_solve
    unwrapped, poses, displace = ns.unwrapped, ns.poses, ns.displace
    f_tree, f_pairs = ns.mass_times_tree, ns.mass_times_pairs

    # Arrays, not the model and scratch structs: Warp passes structs by value (some 5 KB a call of
    # a function it does not inline); one function for the loop rows and the contact rows.
    @wp.func(inline=False)
    def chain_add(links: wp.array(dtype=ns.LinkData), S: wp.array2d(dtype=ns.spatial), ws: A2, e: int, l: int,
                  wr: ns.spatial, oj: int, sign: T):
        """J[j] += sign S_j . wr for every DOF j on the path from link l to its root (a row of
        a wrench ``wr`` acting on link l)."""
        while l >= 0:
            ld = links[l]
            for d2 in range(ld.nd):
                j = ld.us + d2
                ws[e, oj + j] = ws[e, oj + j] + sign * wp.dot(S[e, j], wr)
            l = ld.parent

    @wp.func
    def row_to_solve_space(md: MD, ws: A2, e: int, oj: int, ox: int):
        """A row ``J`` in joint-velocity space (n entries at ``oj``) as a row of the solve space
        (``J S``, k entries at ``ox``); returns ``J u0``, the part of ``J u`` that the solve does
        not move (``J u = (J S) v + J u0``)."""
        k = md.k
        for c in range(k):
            ws[e, ox + c] = T(0.0)
        ju0 = T(0.0)
        for j in range(md.n_u):
            val = ws[e, oj + j]
            if val != T(0.0):
                c = md.dof_col[j]
                ws[e, ox + c] = ws[e, ox + c] + md.dof_gain[j] * val
                ju0 = ju0 + val * ws[e, md.o_u0 + j]
        return ju0

    @wp.func
    def closure_frames(md: MD, sc: SC, e: int, cl: int):
        """A loop closure's side-a frame (world), side-b anchor, the gap b - a and the rotation
        error of b relative to a (the free axes' misalignment when x turns freely)."""
        lp = md.loops[cl]
        Ra = lp.Ra
        pa = lp.pa
        if lp.la >= 0:
            Ra = sc.R[e, lp.la] * lp.Ra
            pa = sc.pos[e, lp.la] + sc.R[e, lp.la] * lp.pa
        Rb = lp.Rb
        pb = lp.pb
        if lp.lb >= 0:
            Rb = sc.R[e, lp.lb] * lp.Rb
            pb = sc.pos[e, lp.lb] + sc.R[e, lp.lb] * lp.pb
        Ta = wp.transpose(Ra)
        Tb = wp.transpose(Rb)
        rot = wp.cross(Ta[0], Tb[0])
        if lp.angmode == 0:
            rot = T(0.5) * (rot + wp.cross(Ta[1], Tb[1]) + wp.cross(Ta[2], Tb[2]))
        return Ta, pb, pb - pa, rot

    @wp.func
    def row_error(d: int, Ta: ns.mat33, gap: V3, rot: V3):
        """A loop row's error: the gap along side a's axis ``d`` (d < 3), else the rotation
        error about axis ``d - 3``."""
        ax = Ta[d % 3]
        err = wp.dot(rot, ax)
        if d < 3:
            err = wp.dot(gap, ax)
        return err

    @wp.func
    def loops_closed(md: MD, sc: SC, e: int):
        """1 when every loop row's error at the frames in ``sc`` is within ``loop_closed`` (metres
        or radians), else 0."""
        for cl in range(md.n_loops):
            lp = md.loops[cl]
            Ta, pb, gap, rot = closure_frames(md, sc, e, cl)
            for rr in range(lp.row0, lp.row1):
                if wp.abs(row_error(md.loop_dir[rr], Ta, gap, rot)) > T(wp.static(ns.loop_closed)):
                    return int(0)
        return int(1)

    @wp.func
    def side_motion(sc: SC, e: int, l: int, p: V3, o: V3, a_world: ns.spatial):
        """(angular velocity, velocity at p, angular acceleration, acceleration at p) of link ``l``'s
        material point at ``p`` (world; all zero for the world, l < 0) from the forward pass's
        velocities and bias accelerations (``sc.V``, ``sc.Acc``: velocity products only, the
        pass's uniform ``a_world`` taken out)."""
        w = V3(T(0.0))
        vp = V3(T(0.0))
        wd = V3(T(0.0))
        ap = V3(T(0.0))
        if l >= 0:
            V = sc.V[e, l]
            A = sc.Acc[e, l] - a_world
            r = p - o
            w = V3(V[0], V[1], V[2])
            vp = V3(V[3], V[4], V[5]) + wp.cross(w, r)
            wd = V3(A[0], A[1], A[2])
            ap = V3(A[3], A[4], A[5]) + wp.cross(wd, r) + wp.cross(w, vp)
        return w, vp, wd, ap

    @wp.func(inline=False)
    def loop_rows(md: MD, sc: SC, e: int, o: V3, dt: T, bias: int):
        """Each loop row's error e_L, full Jacobian J_L (m x n), reduced J_L S and target
        ``t_L = -(erp / dt) e_L - J_L u0 - (dt / 2) (dJ_L/dt) u`` (so that ``(J_L S) v = t_L``).

        A translation row measures both sides' velocities at side b's anchor, the exact rate
        of its error also where side a's frame slides (a prismatic closure); a rotation row
        the relative angular velocity about side a's axis.

        ``bias`` (the step's call, after the forward pass): the last term, half a step of the rows'
        velocity-product rate at the step's start velocity, so that u+ is tangent to the loops
        half-way through the step. Without it u+ was tangent where the step starts, and the next
        step's velocity solve, tangent to the loops where this one ends, removed a normal part
        ``c = dt (dJ_L/dt) u`` each step: a plastic impact whose energy loss ``c^T S^-1 c / 2``
        drained a coasting linkage in proportion to dt (a four-bar kept 44% of its energy over
        3.5 s at 60 Hz). Half-way, the incoming normal part (``+dt/2``) and the target (``-dt/2``)
        cancel to O(dt^2), so the loop impulse ``lambda`` does no work to that order
        (``lambda^T J_L (u + u+) / 2``). A full step's term would reverse the loss into a gain.
        """
        ws = sc.ws
        n = md.n_u
        k = md.k
        a_world = sv(V3(T(0.0)), -md.gravity)
        for cl in range(md.n_loops):
            lp = md.loops[cl]
            Ta, pb, gap, rot = closure_frames(md, sc, e, cl)
            wa = V3(T(0.0))
            va = V3(T(0.0))
            wda = V3(T(0.0))
            aa = V3(T(0.0))
            wb = V3(T(0.0))
            vb = V3(T(0.0))
            wdb = V3(T(0.0))
            ab = V3(T(0.0))
            if bias != 0:
                wa, va, wda, aa = side_motion(sc, e, lp.la, pb, o, a_world)
                wb, vb, wdb, ab = side_motion(sc, e, lp.lb, pb, o, a_world)
            for rr in range(lp.row0, lp.row1):
                d = md.loop_dir[rr]
                ax = Ta[d % 3]
                err = row_error(d, Ta, gap, rot)
                jdu = T(0.0)            # d/dt (ax . relative motion) with no joint acceleration
                if bias != 0:
                    if d < 3:
                        jdu = wp.dot(wp.cross(wa, ax), vb - va) + wp.dot(ax, ab - aa)
                    else:
                        jdu = wp.dot(wp.cross(wa, ax), wb - wa) + wp.dot(ax, wdb - wda)
                wr = sv(ax, V3(T(0.0)))
                if d < 3:
                    wr = sv(wp.cross(pb - o, ax), ax)
                oj = md.o_JL + rr * n
                for j in range(n):
                    ws[e, oj + j] = T(0.0)
                chain_add(md.links, sc.S, ws, e, lp.lb, wr, oj, T(1.0))
                chain_add(md.links, sc.S, ws, e, lp.la, wr, oj, T(-1.0))
                ju0 = row_to_solve_space(md, ws, e, oj, md.o_JLr + rr * k)
                ws[e, md.o_eL + rr] = err
                ws[e, md.o_tL + rr] = -(md.erp / dt) * err - ju0 - T(0.5) * dt * jdu

    @wp.func(inline=False)
    def loop_schur(md: MD, ws: A2, e: int, oL: int, okL: int, oYT: int, oS: int, okeep: int):
        """Y^T = (H^-1 J_L^T)^T (m x k) and the factored Schur complement S = J_L H^-1 J_L^T,
        with H's factor at ``oL``."""
        k = md.k
        m = md.m
        c0 = md.loop_c0
        c1 = md.loop_c1
        for r in range(m):
            for c in range(c0, c1):
                ws[e, oYT + r * k + c] = ws[e, md.o_JLr + r * k + c]
            sparse_solve(md.lp, ws, e, oL, okL, oYT + r * k, c0, c1)
        for r in range(m):
            for s in range(m):
                ws[e, oS + r * m + s] = dot_run(ws, e, md.o_JLr + r * k + c0, oYT + s * k + c0, c1 - c0)
        big_lin = T(0.0)
        big_ang = T(0.0)
        for r in range(m):
            if md.loop_dir[r] < 3:
                big_lin = wp.max(big_lin, ws[e, oS + r * m + r])
            else:
                big_ang = wp.max(big_ang, ws[e, oS + r * m + r])
        for r in range(m):
            floor = big_ang
            if md.loop_dir[r] < 3:
                floor = big_lin
            ws[e, okeep + r] = md.rank_tol * floor
        factor(ws, e, oS, m, okeep, md.rank_tol)

    @wp.func(inline=False)
    def loop_correct(md: MD, ws: A2, e: int, oYT: int, oS: int, okeep: int, ox: int, c0: int, c1: int):
        """z <- z - Y S^+ (J_L z) for z = H^-1 x at ``ox`` (nonzero in the groups ``c0 .. c1 - 1``):
        the part of the response that would open a loop removed (only the loops' columns: J_L and
        Y vanish outside them)."""
        k = md.k
        m = md.m
        lo = wp.max(c0, md.loop_c0)
        hi = wp.min(c1, md.loop_c1)
        if lo >= hi:
            return
        for r in range(m):
            ws[e, md.o_tm + r] = dot_run(ws, e, md.o_JLr + r * k + lo, ox + lo, hi - lo)
        solve(ws, e, oS, m, okeep, md.o_tm)
        for r in range(m):
            lr = ws[e, md.o_tm + r]
            if lr != T(0.0):
                for c in range(lo, hi):
                    ws[e, ox + c] = ws[e, ox + c] - ws[e, oYT + r * k + c] * lr

    @wp.func
    def one_minus_exp(y: wp.float64):
        """1 - exp(-y) for y >= 0 without cancellation at small y (its series below 0.01: the
        dropped y^7/5040 is 2e-16 of it there)."""
        r = wp.float64(1.0) - wp.exp(-y)
        if y < wp.float64(0.01):
            r = y * (wp.float64(1.0) - y / wp.float64(2.0) * (wp.float64(1.0) - y / wp.float64(3.0) * (
                wp.float64(1.0) - y / wp.float64(4.0) * (wp.float64(1.0) - y / wp.float64(5.0) * (
                    wp.float64(1.0) - y / wp.float64(6.0))))))
        return r

    @wp.func
    def soft_coefficients(w: T, z: T, dt: T):
        """(gamma, eta, kappa) per unit effective mass of a compliant row
        ``lambda = -gamma g u+ - kappa e - eta g u``, chosen so that the row's one-step map has
        eigenvalues ``exp(s dt)`` with ``s`` the roots of ``s^2 + 2 z w s + w^2`` (the authored
        frequency and damping, exactly, at any w dt) and its static stiffness is ``w^2`` (kappa
        = w^2 dt). In float64, with ``1 + rho^2 - tau`` (the characteristic polynomial at 1,
        ``(w dt)^2`` to leading order) formed as a product of small terms, not as that difference:
        the difference cancels to 0 at ``w dt`` below 1e-8 and the row read 0/0."""
        x = wp.float64(w) * wp.float64(dt)
        zd = wp.float64(z)
        rho2 = wp.exp(wp.float64(-2.0) * zd * x)
        p1 = wp.float64(0.0)
        if zd < wp.float64(1.0):
            # 1 + rho^2 - 2 rho cos(b) = (1 - rho)^2 + 4 rho sin^2(b / 2), rho = exp(-z x)
            om = one_minus_exp(zd * x)
            sn = wp.sin(wp.float64(0.5) * x * wp.sqrt(wp.float64(1.0) - zd * zd))
            p1 = om * om + wp.float64(4.0) * wp.exp(-zd * x) * sn * sn
        else:
            # 1 + r1 r2 - r1 - r2 = (1 - r1)(1 - r2), r = exp(-(z -+ sqrt(z^2 - 1)) x)
            sq = wp.sqrt(zd * zd - wp.float64(1.0))
            p1 = one_minus_exp(x / (zd + sq)) * one_minus_exp((zd + sq) * x)     # z - sq = 1 / (z + sq)
        dm = x * x / p1      # D / m_eff, with D = m_eff + gamma
        return T(dm - wp.float64(1.0)), T(wp.float64(1.0) - rho2 * dm), T(wp.float64(w) * wp.float64(w) * wp.float64(dt))

    @wp.func
    def soft_rows(md: MD, sc: SC, e: int, q: A2, u: A2, t: I2, dt: T):
        """Each compliant relation's ``gamma`` and constant part ``c2`` (``soft``), from its effective
        mass in H_M = S^T (M + armature) S (at o_HM, factored here) with the loops.

        A row's reduced form has at most two entries, ``gx`` at the follower's column and ``gy``
        at the leader's (one entry when both share a column)."""
        ws = sc.ws
        k = md.k
        sparse_factor(md.lp, ws, e, md.o_HM, md.o_kHM)
        if md.m > 0:
            loop_schur(md, ws, e, md.o_HM, md.o_kHM, md.o_YM, md.o_SLM, md.o_keepM)
        for g in range(md.n_rel):
            rd = md.rels[g]
            if rd.kind == SOFT_ROW:
                cf = md.dof_col[rd.f]
                cl = md.dof_col[rd.l]
                for c in range(k):
                    ws[e, md.o_tk + c] = T(0.0)
                ws[e, md.o_tk + cf] = ws[e, md.o_tk + cf] + md.dof_gain[rd.f]
                ws[e, md.o_tk + cl] = ws[e, md.o_tk + cl] - rd.m * md.dof_gain[rd.l]
                gx = ws[e, md.o_tk + cf]
                gy = ws[e, md.o_tk + cl]
                c0 = md.grp_lo[cf]
                c1 = md.grp_hi[cf]
                sparse_solve(md.lp, ws, e, md.o_HM, md.o_kHM, md.o_tk, c0, c1)
                if md.m > 0:
                    loop_correct(md, ws, e, md.o_YM, md.o_SLM, md.o_keepM, md.o_tk, c0, c1)
                r = gx * ws[e, md.o_tk + cf]
                if cl != cf:
                    r = r + gy * ws[e, md.o_tk + cl]
                meff = T(1.0) / wp.max(r, T(1.0e-30))
                gam, eta, kap = soft_coefficients(rd.w, rd.z, dt)
                gam = gam * meff
                err = T(unwrapped(q, t, e, rd.f, rd.cont) - rd.m64 * unwrapped(q, t, e, rd.l, rd.cont) - rd.c64)
                w0 = u[e, rd.f] - rd.m * u[e, rd.l]
                c2 = -meff * (kap * err + eta * w0)
                ws[e, md.o_soft + 2 * g] = gam
                ws[e, md.o_soft + 2 * g + 1] = c2

    @wp.func
    def soft_fold(md: MD, ws: A2, e: int):
        """Each compliant row ``lambda = c2 - gamma g u+`` folded into H (its slots) and bh."""
        for g in range(md.n_rel):
            rd = md.rels[g]
            if rd.kind == SOFT_ROW:
                cf = md.dof_col[rd.f]
                cl = md.dof_col[rd.l]
                gam = ws[e, md.o_soft + 2 * g]
                rhs = ws[e, md.o_soft + 2 * g + 1] - gam * (ws[e, md.o_u0 + rd.f] - rd.m * ws[e, md.o_u0 + rd.l])
                gx = md.dof_gain[rd.f]
                gy = -rd.m * md.dof_gain[rd.l]
                if cf == cl:
                    gx = gx + gy
                ws[e, md.o_H + cf] = ws[e, md.o_H + cf] + gam * gx * gx
                ws[e, md.o_bh + cf] = ws[e, md.o_bh + cf] + rhs * gx
                if cl != cf:
                    ws[e, md.o_H + cl] = ws[e, md.o_H + cl] + gam * gy * gy
                    ws[e, md.o_H + rd.slot] = ws[e, md.o_H + rd.slot] + gam * gx * gy
                    ws[e, md.o_bh + cl] = ws[e, md.o_bh + cl] + rhs * gy

    @wp.func(inline=False)
    def loop_project(md: MD, sc: SC, e: int, q: A2, t: I2, o: V3, dt: T):
        """Post-stabilisation, one Gauss-Newton step in the metric of H: the loop rows' errors and
        Jacobian at the integrated positions q, then q += S dv with ``dv = -Y S^+ e_L(q)``, so that
        the loops close at the end of the step whatever the velocity. Velocities are untouched;
        ``S dv`` keeps every hard relation. (It reuses the step's loop work space: call it after
        the coupling impulses are read.) Returns 0, and moves nothing, when the loops are
        already closed to ``loop_closed`` at q (a step that needs no further projection)."""
        ws = sc.ws
        k = md.k
        poses(md, sc, e, q, o)
        for j in range(md.n_u):
            ws[e, md.o_u0 + j] = T(0.0)     # u0 is spent; loop_rows folds it into its targets
        if loops_closed(md, sc, e) != 0:
            return int(0)
        loop_rows(md, sc, e, o, dt, 0)
        loop_schur(md, ws, e, md.o_H, md.o_kH, md.o_YT, md.o_SL, md.o_keep)
        for r in range(md.m):
            ws[e, md.o_tm + r] = -ws[e, md.o_eL + r]
        solve(ws, e, md.o_SL, md.m, md.o_keep, md.o_tm)
        for c in range(k):
            acc = T(0.0)
            if c >= md.loop_c0 and c < md.loop_c1:
                for r in range(md.m):
                    acc = acc + ws[e, md.o_YT + r * k + c] * ws[e, md.o_tm + r]
            ws[e, md.o_tk + c] = acc
        for j in range(md.n_u):
            ws[e, md.o_res + j] = md.dof_gain[j] * ws[e, md.o_tk + md.dof_col[j]]
        displace(md, ws, e, md.o_res, T(1.0), q, t, q, t)
        return int(1)

    @wp.func
    def loop_solve(md: MD, ws: A2, e: int):
        """v <- v + Y lambda_L with S lambda_L = t_L - J_L v: the loop rows hold exactly."""
        k = md.k
        m = md.m
        loop_schur(md, ws, e, md.o_H, md.o_kH, md.o_YT, md.o_SL, md.o_keep)
        c0 = md.loop_c0
        c1 = md.loop_c1
        for r in range(m):
            ws[e, md.o_lamL + r] = ws[e, md.o_tL + r] - dot_run(ws, e, md.o_JLr + r * k + c0, md.o_v + c0, c1 - c0)
        solve(ws, e, md.o_SL, m, md.o_keep, md.o_lamL)
        for r in range(m):
            lr = ws[e, md.o_lamL + r]
            for c in range(c0, c1):
                ws[e, md.o_v + c] = ws[e, md.o_v + c] + ws[e, md.o_YT + r * k + c] * lr

    @wp.func
    def drive_root(wf: T, W: T, y: T, P: T, gam: T, B: T, has: int):
        """The joint velocity w with ``(w - wf) / W - D(w) = y``, ``D(w) = clamp(P - gam w, -B, B)``
        the impulse of a bounded drive (none when ``has`` is 0): closed form, D piecewise linear."""
        w = wf + W * y
        if has != 0:
            w = (W * (y + P) + wf) / (T(1.0) + gam * W)
            d = P - gam * w
            if d > B:
                w = wf + W * (y + B)
            elif d < -B:
                w = wf + W * (y - B)
        return w

    @wp.func
    def limit_speed(bound: T, qj: T, idt: T, erp: T, past: bool):
        """The velocity a speculative limit row allows: reach ``bound`` within the step, or, once
        ``past`` it, come back at ``erp``."""
        tgt = (bound - qj) * idt
        if past:
            tgt = erp * tgt
        return tgt

    @wp.func
    def joint_interval(md: MD, jd: ns.JointData, j: int, w: T, u0: T, q: A2, e: int, idt: T):
        """w clamped into the joint's velocity-cap interval (on its velocity and on the
        relation-consistent part that moves its leader), then its speculative limit interval."""
        if (jd.flags & F_VMAX) != 0:
            lo = -jd.vmax
            hi = jd.vmax
            if jd.rootdof != j:
                lo = wp.max(lo, u0 - jd.vmax)
                hi = wp.min(hi, u0 + jd.vmax)
            w = wp.min(wp.max(w, lo), hi)
        qj = q[e, j]
        if (jd.flags & F_LOWER) != 0:
            w = wp.max(w, limit_speed(jd.lower, qj, idt, md.erp, qj < jd.lower))
        if (jd.flags & F_UPPER) != 0:
            w = wp.min(w, limit_speed(jd.upper, qj, idt, md.erp, qj > jd.upper))
        return w

    @wp.func
    def column_response(md: MD, ws: A2, e: int, c: int):
        """Where ``C e_c`` lies (computed on first use: a row that never acts costs no solve).
        The first ``n_rslots`` columns asked for keep theirs for the step; past that, one
        scratch vector is recomputed. Records the column's unconstrained ``(H^-1)_cc``."""
        s = int(ws[e, md.o_rslot + c])
        if s >= 0:
            return md.o_resp + s * md.k
        c0 = md.grp_lo[c]
        c1 = md.grp_hi[c]
        used = int(ws[e, md.o_rslot + md.k])
        oR = md.o_rtmp
        if used < md.n_rslots:
            oR = md.o_resp + used * md.k
            ws[e, md.o_rslot + c] = T(float(used))
            ws[e, md.o_rslot + md.k] = T(float(used + 1))
        for i in range(c0, c1):
            ws[e, oR + i] = T(0.0)
        ws[e, oR + c] = T(1.0)
        sparse_solve(md.lp, ws, e, md.o_H, md.o_kH, oR, c0, c1)
        ws[e, md.o_tk + c] = ws[e, oR + c]       # the response were there no loops
        if md.m > 0:
            loop_correct(md, ws, e, md.o_YT, md.o_SL, md.o_keep, oR, c0, c1)
        return oR

    @wp.func
    def joint_W(md: MD, ws: A2, e: int, j: int):
        """Joint j's response ``W = a^2 C_cc`` and 1 / W (W = 0: a joint the loops lock, no rows)."""
        jd = md.joints[j]
        oR = column_response(md, ws, e, jd.col)
        a2 = jd.gain * jd.gain
        W = a2 * ws[e, oR + jd.col]
        iW = T(0.0)
        if W > md.rank_tol * a2 * ws[e, md.o_tk + jd.col]:
            iW = T(1.0) / W
        else:
            W = T(0.0)
        ws[e, md.o_W + 2 * j] = W
        ws[e, md.o_W + 2 * j + 1] = iW

    @wp.func
    def joint_impulse(md: MD, ws: A2, e: int, j: int, new: T, dl: T):
        """Joint j's row impulse set to ``new``: the solve-space velocity moved by its change ``dl``
        along its column's response (within its group), and the rows' impulse sum."""
        jd = md.joints[j]
        c = jd.col
        ws[e, md.o_lam + j] = new
        oR = column_response(md, ws, e, c)
        ad = jd.gain * dl
        for i in range(md.grp_lo[c], md.grp_hi[c]):
            ws[e, md.o_v + i] = ws[e, md.o_v + i] + ws[e, oR + i] * ad
        ws[e, md.o_gsum + c] = ws[e, md.o_gsum + c] + ad

    @wp.func
    def joint_block(md: MD, ws: A2, e: int, j: int, q: A2, dt: T, idt: T):
        """All rows of joint j solved together, exactly, along its response: a bounded drive
        (when it is a row), Coulomb friction, the velocity cap and the speculative limits.

        With every other impulse fixed the joint's velocity is ``w = wf + W L`` (L: the joint's
        row impulse); its rows make L a monotone function of w, so the solution is the root of
        ``(w - wf) / W - D(w) + F sign(w) = 0`` clamped into the cap, then the limit, interval.
        A joint with no impulse yet whose velocity already lies inside its intervals (and no
        friction or drive row) is left without computing its response. Returns 1 when the
        joint's impulse changed."""
        jd = md.joints[j]
        c = jd.col
        a = jd.gain
        u0 = ws[e, md.o_u0 + j]
        w0 = a * ws[e, md.o_v + c] + u0
        has = int(0)
        P = T(0.0)
        gam = T(0.0)
        B = T(0.0)
        if (jd.flags & F_DSAT) != 0:
            od = md.o_drv + 3 * j
            if ws[e, od + 2] == T(1.0):
                has = int(1)
                P = ws[e, od]
                gam = ws[e, od + 1]
                B = dt * jd.fmax
        F = T(0.0)
        if (jd.flags & F_FRICTION) != 0:
            F = dt * jd.friction
        if ws[e, md.o_W + 2 * j] < T(0.0):      # response not computed yet, no impulse yet
            if has == 0 and F == T(0.0):
                if joint_interval(md, jd, j, w0, u0, q, e, idt) == w0:
                    return int(0)
            joint_W(md, ws, e, j)
        W = ws[e, md.o_W + 2 * j]
        changed = int(0)
        if W > T(0.0):
            iW = ws[e, md.o_W + 2 * j + 1]
            old = ws[e, md.o_lam + j]
            wf = w0 - W * old
            w = T(0.0)
            g0 = -wf * iW
            if has != 0:
                g0 = g0 - wp.clamp(P, -B, B)
            if g0 > F:
                w = drive_root(wf, W, F, P, gam, B, has)
            elif g0 < -F:
                w = drive_root(wf, W, -F, P, gam, B, has)
            w = joint_interval(md, jd, j, w, u0, q, e, idt)
            dl = (w - wf) * iW - old
            if dl != T(0.0):
                changed = int(1)
                if wp.static(ns.contacts):      # the contact passes' test: a velocity change above V_TOL
                    changed = int(wp.abs(dl) * W > T(wp.static(ns.contact_v_tol)))
                joint_impulse(md, ws, e, j, old + dl, dl)
        return changed

    @wp.func
    def constrained_response(md: MD, ws: A2, e: int, ox: int):
        """x <- C x in the solve space at ``ox``: C the inverse of the step's system with every hard
        relation and loop closure held (a row impulse ``dl`` along ``x`` moves the solve-space
        velocity ``ws[e, md.o_v:]`` by ``(C x) dl``). Valid once the step has factored its system."""
        sparse_solve(md.lp, ws, e, md.o_H, md.o_kH, ox, 0, md.k)
        if md.m > 0:
            loop_correct(md, ws, e, md.o_YT, md.o_SL, md.o_keep, ox, 0, md.k)

    @wp.func
    def joint_rows_setup(md: MD, sc: SC, e: int):
        """Before the sweeps: no row impulse yet, no column response computed yet."""
        ws = sc.ws
        for i in range(md.n1):
            ws[e, md.o_lam + i] = T(0.0)
            ws[e, md.o_W + 2 * i] = T(-1.0)
        for c in range(md.k):
            ws[e, md.o_gsum + c] = T(0.0)
            ws[e, md.o_rslot + c] = T(-1.0)
        ws[e, md.o_rslot + md.k] = T(0.0)

    @wp.func
    def joint_pass(md: MD, sc: SC, e: int, q: A2, dt: T, idt: T):
        """One Gauss-Seidel pass over every joint's row block; returns how many changed their
        impulse (0: the joints' rows have converged for the current velocity)."""
        changed = int(0)
        for j in range(md.n1):
            if (md.joints[j].flags & F_ROWS) != 0:
                changed = changed + joint_block(md, sc.ws, e, j, q, dt, idt)
        return changed

    @wp.func
    def joint_rows_finish(md: MD, sc: SC, e: int):
        """After the sweeps: the loops' impulses moved by what the rows did
        (lambda_L -= S^+ J_L H^-1 sum of row impulses)."""
        ws = sc.ws
        k = md.k
        if md.m > 0:
            c0 = md.loop_c0
            c1 = md.loop_c1
            for c in range(c0, c1):
                ws[e, md.o_tk + c] = ws[e, md.o_gsum + c]
            sparse_solve(md.lp, ws, e, md.o_H, md.o_kH, md.o_tk, c0, c1)
            for r in range(md.m):
                ws[e, md.o_tm + r] = dot_run(ws, e, md.o_JLr + r * k + c0, md.o_tk + c0, c1 - c0)
            solve(ws, e, md.o_SL, md.m, md.o_keep, md.o_tm)
            for r in range(md.m):
                ws[e, md.o_lamL + r] = ws[e, md.o_lamL + r] - ws[e, md.o_tm + r]

    @wp.func
    def joint_rows(md: MD, sc: SC, e: int, q: A2, dt: T):
        """The joints' rows (and, in a contact model, the contact rows) by block Gauss-Seidel:
        passes until one changes nothing (at most ``iterations``; with contacts a joint pass and
        a contact pass alternate, at most ``c_iter`` times). Then the loops' impulses follow the
        rows."""
        joint_rows_setup(md, sc, e)
        idt = T(1.0) / dt
        if wp.static(ns.contacts):
            ns.contact_prepare(md, sc, e)
            for it in range(md.c_iter):
                ch = joint_pass(md, sc, e, q, dt, idt) + ns.contact_pass(md, sc, e, q, idt)
                if ch == 0:
                    break
        else:
            for it in range(md.iterations):
                if joint_pass(md, sc, e, q, dt, idt) == 0:
                    break
        if wp.static(ns.contacts):      # first: it adds the contacts' impulses to the rows' sum
            ns.contact_finish(md, sc, e)
        joint_rows_finish(md, sc, e)

    @wp.func
    def coupling_impulses(md: MD, sc: SC, e: int, u_out: A2, rel_imp: A2, dt: T):
        """Hard relations' impulses from the residual r = M u+ + (armature, damping) u+ - f - (row,
        loop, compliant and contact impulses) = G^T mu (M u+ from the pairs or the composite
        inertias; only the part S v of u+, as f already holds the u0 terms), peeling the forest
        of active relations leaf by leaf."""
        ws = sc.ws
        n = md.n_u
        nres = n
        if md.n_elim == 0:          # only compliant relations: their impulses need no residual
            nres = 0
        for i in range(nres):
            ws[e, md.o_tk + i] = md.dof_gain[i] * ws[e, md.o_v + md.dof_col[i]]     # S v (tk: n >= k)
            ws[e, md.o_res + i] = -ws[e, md.o_f + i]
        if nres == 0:
            pass
        elif md.tree_mass != 0:
            f_tree(md, sc, e, md.o_tk, md.o_res, T(1.0))
        else:
            f_pairs(md, ws, e, md.o_tk, md.o_res)
        for i in range(nres):
            acc = ws[e, md.o_res + i]
            if i < md.n1:
                jd = md.joints[i]
                acc = acc + (jd.armature + dt * jd.damping) * ws[e, md.o_tk + i]
                if md.has_rows != 0:
                    acc = acc - ws[e, md.o_lam + i]
                if (jd.flags & F_DRIVE) != 0:
                    od = md.o_drv + 3 * i
                    if ws[e, od + 2] == T(0.0):        # a folded drive's impulse P - gamma u+
                        acc = acc - (ws[e, od] - ws[e, od + 1] * u_out[e, i])
            for r in range(md.m):
                acc = acc - ws[e, md.o_JL + r * n + i] * ws[e, md.o_lamL + r]
            if wp.static(ns.contacts):
                acc = acc - ws[e, md.o_cimp + i]         # the contacts' generalized impulse
            ws[e, md.o_res + i] = acc
        if md.n_soft > 0:
            for g in range(md.n_rel):
                rd = md.rels[g]
                if rd.kind == SOFT_ROW:
                    lam_s = ws[e, md.o_soft + 2 * g + 1] - ws[e, md.o_soft + 2 * g] * (u_out[e, rd.f] - rd.m * u_out[e, rd.l])
                    rel_imp[e, g] = lam_s
                    ws[e, md.o_res + rd.f] = ws[e, md.o_res + rd.f] - lam_s
                    ws[e, md.o_res + rd.l] = ws[e, md.o_res + rd.l] + rd.m * lam_s
        for s in range(md.n_elim):
            st = md.elims[s]
            acc = ws[e, md.o_res + st.node]
            for ti in range(st.start, st.end):
                tm = md.terms[ti]
                acc = acc + tm.coef * rel_imp[e, tm.rel]
            rel_imp[e, st.rel] = acc / st.coef

    ns.loop_rows, ns.loop_schur, ns.loop_correct, ns.loop_project = loop_rows, loop_schur, loop_correct, loop_project
    ns.soft_coefficients, ns.soft_rows, ns.soft_fold, ns.loop_solve = soft_coefficients, soft_rows, soft_fold, loop_solve
    ns.joint_rows, ns.coupling_impulses = joint_rows, coupling_impulses
    ns.joint_rows_setup, ns.joint_pass, ns.joint_rows_finish = joint_rows_setup, joint_pass, joint_rows_finish
    ns.row_to_solve_space, ns.constrained_response = row_to_solve_space, constrained_response
    ns.chain_add, ns.column_response, ns.limit_speed, ns.joint_impulse = chain_add, column_response, limit_speed, joint_impulse
