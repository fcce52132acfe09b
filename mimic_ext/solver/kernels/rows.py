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
- Cone limits of spherical joints: one inequality row each, along the swing's rotation axis
  (``cone_setup``, ``cone_block``), solved in the same Gauss-Seidel passes as the joints' rows.
- The coupling impulses of the hard relations, read back from the residual.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import warp as wp

from .dynamics import F_DEXACT, F_DRIVE, F_DSAT, F_FRICTION, F_LOWER, F_ROWS, F_UPPER, F_VMAX, FREE

SOFT_ROW = wp.constant(2)
#: A cone limit's entries in the work space (``workspace`` field ``cone``, 5 per cone): its
#: impulse, its swing angle at the step's start (an elliptical cone's shifted by ``limit`` less the
#: step's bound, ``cone_setup``), its row direction (3).
CONE_LAM, CONE_THETA, CONE_N = wp.constant(0), wp.constant(1), wp.constant(2)


def build(ns) -> None:
    T, V3, Q = ns.T, ns.vec3, ns.quat
    A2 = wp.array2d(dtype=T)
    I2 = wp.array2d(dtype=wp.int32)
    MD, SC = ns.ModelData, ns.Scratch
    sv = ns.sv
    force_cross = ns.force_cross
    factor, solve, dot_run = ns.factor, ns.solve, ns.dot_run
    sparse_factor, sparse_solve = ns.sparse_factor, ns.sparse_solve
    unwrapped, poses, displace = ns.unwrapped, ns.poses, ns.displace
    soft_coefficients = ns.soft_coefficients
    f_tree, f_pairs = ns.mass_times_tree, ns.mass_times_pairs

    # Arrays, not the model and scratch structs: Warp passes structs by value (some 5 KB a call of
    # a function it does not inline); one function for the loop rows and the contact rows.
    @wp.func(inline=False)
    def chain_add(
        links: wp.array(dtype=ns.LinkData),
        S: wp.array2d(dtype=ns.spatial),
        ws: A2,
        e: int,
        l: int,
        wr: ns.spatial,
        oj: int,
        sign: T,
    ):
        """J[j] += sign S_j . wr for every DOF j on the path from link l to its root (a row of
        a wrench ``wr`` acting on link l)."""
        while l >= 0:
            ld = links[l]
            for d2 in range(ld.nd):
                j = ld.us + d2
                ws[e, oj + j] = ws[e, oj + j] + sign * wp.dot(S[e, j], wr)
            l = ld.parent

    @wp.func(inline=False)
    def chain_rate(
        links: wp.array(dtype=ns.LinkData),
        S: wp.array2d(dtype=ns.spatial),
        V: wp.array2d(dtype=ns.spatial),
        pos: wp.array2d(dtype=V3),
        ws: A2,
        e: int,
        l: int,
        wr: ns.spatial,
        wrd: ns.spatial,
        oj: int,
        sign: T,
        o: V3,
    ):
        """``chain_add``'s row rate ``dJ/dt`` at the forward pass's velocities into the row at ``oj``
        (``wrd`` the rate of ``wr``; a joint axis S_j fixed in its link turns at ``dS_j/dt = V_l x
        S_j``, a floating base's world-fixed angular axes through its moving origin at
        ``(0, v_origin x e_d)``)."""
        while l >= 0:
            ld = links[l]
            if ld.jtype == FREE:
                Vl = V[e, l]
                om = V3(Vl[0], Vl[1], Vl[2])
                vp = V3(Vl[3], Vl[4], Vl[5]) - wp.cross(pos[e, l] - o, om)  # V is about o
                for d2 in range(6):
                    j = ld.us + d2
                    val = wp.dot(S[e, j], wrd)
                    if d2 < 3:
                        ed = V3(T(0.0))
                        ed[d2] = T(1.0)
                        val = val + wp.dot(sv(V3(T(0.0)), wp.cross(vp, ed)), wr)
                    ws[e, oj + j] = ws[e, oj + j] + sign * val
            else:
                c = wrd - force_cross(V[e, l], wr)
                for d2 in range(ld.nd):
                    j = ld.us + d2
                    ws[e, oj + j] = ws[e, oj + j] + sign * wp.dot(S[e, j], c)
            l = ld.parent

    @wp.func
    def loop_rate_targets(md: MD, ws: A2, e: int, u: A2, from_solve: int, dt: T):
        """``t_L = t_L0 - (dt / 2) (dJ_L/dt) u`` (``loop_rows``) with u the step's start velocity,
        or (``from_solve`` 1) the velocity the solve just formed, ``S v + u0``, or (2) the mid-step
        velocity at ``um`` (``midpoint_bias``), each with the rate ``dJ_L/dt`` taken at u (taken at
        the mid-step velocity too, the Isaac 2F-85 on a turning base diverged within 3 steps)."""
        n = md.n_u
        for rr in range(md.m):
            oj = md.o_JLd + rr * n
            acc = T(0.0)
            for j in range(n):
                uj = T(0.0)
                if from_solve == 1:
                    uj = md.dof_gain[j] * ws[e, md.o_v + md.dof_col[j]] + ws[e, md.o_u0 + j]
                elif from_solve == 2:
                    uj = ws[e, md.o_um + j]
                else:
                    uj = u[e, j]
                acc = acc + ws[e, oj + j] * uj
            ws[e, md.o_tL + rr] = ws[e, md.o_tL0 + rr] - T(0.5) * dt * acc

    @wp.func
    def loop_retarget(md: MD, ws: A2, e: int, u: A2, dt: T):
        """After a solve in which a joint row (limit, cap, friction, drive bound) acted: when the
        loops' rate term at the velocity that solve formed moves a target by more than the loops'
        closure tolerance per step (``loop_closed / dt``: a limit that stopped the mechanism), the
        targets take it (``loop_rate_targets``) and 1 is returned (the step solves once more)."""
        acted = int(0)
        for j in range(md.n1):
            if ws[e, md.o_lam + j] != T(0.0):
                acted = int(1)
        if wp.static(ns.balls):  # cone rows exist in kernels(balls=True) only
            for c in range(md.n_cones):
                if ws[e, md.o_cone + CONE_LAM + 5 * c] != T(0.0):
                    acted = int(1)
        if acted == 0:
            return int(0)
        n = md.n_u
        worst = T(0.0)
        for rr in range(md.m):
            oj = md.o_JLd + rr * n
            acc = T(0.0)
            for j in range(n):
                acc = acc + ws[e, oj + j] * (
                    md.dof_gain[j] * ws[e, md.o_v + md.dof_col[j]] + ws[e, md.o_u0 + j] - u[e, j]
                )
            worst = wp.max(worst, wp.abs(acc))
        if T(0.5) * dt * dt * worst <= T(wp.static(ns.loop_closed)):
            return int(0)
        loop_rate_targets(md, ws, e, u, 1, dt)
        return int(1)

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
    def side_frame(sc: SC, e: int, l: int, R: ns.mat33, p: V3):
        """A loop closure's side frame (R, p in link ``l``'s frame) in the world (l < 0: it is)."""
        Rw = R
        pw = p
        if l >= 0:
            Rw = sc.R[e, l] * R
            pw = sc.pos[e, l] + sc.R[e, l] * p
        return Rw, pw

    @wp.func
    def closure_frames(md: MD, sc: SC, e: int, cl: int):
        """A loop closure's side-a frame (world), side-b anchor, the gap b - a and the rotation
        error of b relative to a (the free axes' misalignment when x turns freely)."""
        lp = md.loops[cl]
        Ra, pa = side_frame(sc, e, lp.la, lp.Ra, lp.pa)
        Rb, pb = side_frame(sc, e, lp.lb, lp.Rb, lp.pb)
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
    def side_velocity(sc: SC, e: int, l: int, p: V3, o: V3):
        """(angular velocity, velocity of its material point at p) of link ``l`` (zero for the
        world, l < 0), from the forward pass's velocities."""
        w = V3(T(0.0))
        vp = V3(T(0.0))
        if l >= 0:
            V = sc.V[e, l]
            w = V3(V[0], V[1], V[2])
            vp = V3(V[3], V[4], V[5]) + wp.cross(w, p - o)
        return w, vp

    @wp.func(inline=False)
    def loop_rows(md: MD, sc: SC, e: int, o: V3, dt: T, bias: int):
        """Each loop row's error e_L, full Jacobian J_L (m x n), reduced J_L S and target
        ``t_L = -(erp / dt) e_L - J_L u0`` (so that ``(J_L S) v = t_L``).

        A translation row measures both sides' velocities at side b's anchor, the exact rate
        of its error also where side a's frame slides (a prismatic closure); a rotation row
        the relative angular velocity about side a's axis.

        ``bias`` (the step's call, after the forward pass): also the rows' rate ``dJ_L/dt`` at the
        step's start velocity (``chain_rate``, at ``JLd``), from which ``loop_rate_targets`` takes
        half a step of ``(dJ_L/dt) u`` off the targets, so that u+ is tangent to the loops half-way
        through the step. Without it u+ was tangent where the step
        starts, and the next step's solve, tangent where this one ends, removed a normal part
        ``c = dt (dJ_L/dt) u`` each step: a plastic impact whose energy loss ``c^T S^-1 c / 2``
        drained a coasting linkage in proportion to dt (a four-bar kept 44% of its energy over
        3.5 s at 60 Hz). Half-way, the normal part coming in and the one going out cancel to
        O(dt^2), so the loop impulse does no work to that order (the impulse stays along J_L: a
        row ``J_L + (dt/2) dJ_L/dt`` instead would be as lossy as none). Where a joint row acted
        in the solve (a limit stopping the mechanism), the step solves once more with the rate
        taken at the velocity that solve formed, so that the projection after the integration
        does not carry a stopped mechanism past its limit.
        """
        ws = sc.ws
        n = md.n_u
        k = md.k
        for cl in range(md.n_loops):
            lp = md.loops[cl]
            Ta, pb, gap, rot = closure_frames(md, sc, e, cl)
            wa = V3(T(0.0))
            vb = V3(T(0.0))
            if bias != 0:
                wa, va = side_velocity(sc, e, lp.la, pb, o)
                wb, vb = side_velocity(sc, e, lp.lb, pb, o)
            for rr in range(lp.row0, lp.row1):
                d = md.loop_dir[rr]
                ax = Ta[d % 3]
                err = row_error(d, Ta, gap, rot)
                wr = sv(ax, V3(T(0.0)))
                if d < 3:
                    wr = sv(wp.cross(pb - o, ax), ax)
                oj = md.o_JL + rr * n
                for j in range(n):
                    ws[e, oj + j] = T(0.0)
                chain_add(md.links, sc.S, ws, e, lp.lb, wr, oj, T(1.0))
                chain_add(md.links, sc.S, ws, e, lp.la, wr, oj, T(-1.0))
                if bias != 0:  # the row's rate: side a's axis turns with it, side b's anchor moves
                    od = md.o_JLd + rr * n
                    for j in range(n):
                        ws[e, od + j] = T(0.0)
                    axd = wp.cross(wa, ax)
                    wrd = sv(axd, V3(T(0.0)))
                    if d < 3:
                        wrd = sv(wp.cross(vb, ax) + wp.cross(pb - o, axd), axd)
                    chain_rate(md.links, sc.S, sc.V, sc.pos, ws, e, lp.lb, wr, wrd, od, T(1.0), o)
                    chain_rate(md.links, sc.S, sc.V, sc.pos, ws, e, lp.la, wr, wrd, od, T(-1.0), o)
                ju0 = row_to_solve_space(md, ws, e, oj, md.o_JLr + rr * k)
                ws[e, md.o_eL + rr] = err
                ws[e, md.o_tL + rr] = -(md.erp / dt) * err - ju0
                ws[e, md.o_tL0 + rr] = ws[e, md.o_tL + rr]

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
        # a rotation row's joint-space entries are cosines between unit axes (dimensionless): one
        # with all of them within rank_tol of 0 turns with no joint (a planar loop's in-plane
        # rotations), is rounding noise (~1e-18, set by absolute coordinates) and no row: it is
        # dropped and sets no floor. Left in, a kind made only of such rows floored itself at
        # rank_tol times its own noise and kept a pivot of 1e-33 (lambda ~1e14 on a noise target)
        n = md.n_u
        big_lin = T(0.0)
        big_ang = T(0.0)
        for r in range(m):
            ws[e, okeep + r] = T(0.0)
            d = ws[e, oS + r * m + r]
            if md.loop_dir[r] < 3:
                big_lin = wp.max(big_lin, d)
            else:
                turns = T(0.0)
                for j in range(n):
                    turns = wp.max(turns, wp.abs(ws[e, md.o_JL + r * n + j]))
                if turns > md.rank_tol:
                    big_ang = wp.max(big_ang, d)
                else:
                    ws[e, okeep + r] = T(-1.0)
        for r in range(m):
            floor = md.rank_tol * big_ang
            if md.loop_dir[r] < 3:
                floor = md.rank_tol * big_lin
            if ws[e, okeep + r] < T(0.0):  # no row: its own diagonal (no pivot exceeds it)
                floor = ws[e, oS + r * m + r]
            ws[e, okeep + r] = floor
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
    def mass_factor(md: MD, ws: A2, e: int):
        """H_M = S^T (M + armature) S (at o_HM) factored, with the loops' Schur complement on it."""
        sparse_factor(md.lp, ws, e, md.o_HM, md.o_kHM)
        if md.m > 0:
            loop_schur(md, ws, e, md.o_HM, md.o_kHM, md.o_YM, md.o_SLM, md.o_keepM)

    @wp.func
    def mass_response(md: MD, ws: A2, e: int, j: int):
        """``C_M g^T`` of joint j's unit impulse into ``tk`` (its group's columns; C_M the mass-only
        constrained inverse: loops kept closed); returns the columns it spans and ``g C_M g^T``."""
        jd = md.joints[j]
        c = jd.col
        for i in range(md.k):
            ws[e, md.o_tk + i] = T(0.0)
        ws[e, md.o_tk + c] = jd.gain
        c0 = md.grp_lo[c]
        c1 = md.grp_hi[c]
        sparse_solve(md.lp, ws, e, md.o_HM, md.o_kHM, md.o_tk, c0, c1)
        if md.m > 0:
            loop_correct(md, ws, e, md.o_YM, md.o_SLM, md.o_keepM, md.o_tk, c0, c1)
        return c0, c1, jd.gain * ws[e, md.o_tk + c]

    @wp.func(inline=False)
    def drive_inertias(md: MD, ws: A2, e: int):
        """Exact drives (``Solver(drive_discretisation='exact')``): H_M factored, and each spring drive's
        effective inertia ``1 / (g C_M g^T)`` (``dpos``; its position-term coefficients cleared),
        what ``exact_drive`` discretises the drive for."""
        mass_factor(md, ws, e)
        for j in range(md.n1):
            jd = md.joints[j]
            meff = T(0.0)
            if (jd.flags & F_DRIVE) != 0 and jd.kp > T(0.0):
                c0, c1, r = mass_response(md, ws, e, j)
                if r > T(0.0):
                    meff = T(1.0) / r
            ws[e, md.o_dpos + 3 * j] = meff
            ws[e, md.o_dpos + 3 * j + 1] = T(0.0)
            ws[e, md.o_dpos + 3 * j + 2] = T(0.0)

    @wp.func(inline=False)
    def drive_positions(md: MD, ws: A2, e: int, u_in: A2, u_out: A2, q_out: A2, t_out: I2, dt: T):
        """The exact drives' position term (``exact_drive``) after the integration: each drive
        alone in its column moves the mechanism by ``delta = c2 u + c3 u+`` at its joint (folded,
        or a bounded row within its bound: the same PD law), or by ``(dt / 2) (u - u+)`` where its
        bound acted (a force held over the step: the position of constant acceleration, which the
        semi-implicit step overshoots by ``dt^2 / 2`` of it), along the response of an impulse
        there (``C_M g^T``, scaled by ``delta m_eff``: the other joints move as that impulse would
        move them, relations and loops kept to first order)."""
        k = md.k
        any_ = int(0)
        for c in range(k):
            ws[e, md.o_rtmp + c] = T(0.0)
        for j in range(md.n1):
            c2 = ws[e, md.o_dpos + 3 * j + 1]
            c3 = ws[e, md.o_dpos + 3 * j + 2]
            od = md.o_drv + 3 * j
            mode = ws[e, od + 2]
            if mode == T(1.0) and (md.joints[j].flags & F_DEXACT) != 0:
                if wp.abs(ws[e, od] - ws[e, od + 1] * u_out[e, j]) >= dt * md.joints[j].fmax:  # at its bound
                    c2 = T(0.5) * dt
                    c3 = T(-0.5) * dt
            if mode >= T(0.0) and (c2 != T(0.0) or c3 != T(0.0)):
                delta = (c2 * u_in[e, j] + c3 * u_out[e, j]) * ws[e, md.o_dpos + 3 * j]
                c0, c1, r = mass_response(md, ws, e, j)
                for c in range(c0, c1):
                    ws[e, md.o_rtmp + c] = ws[e, md.o_rtmp + c] + ws[e, md.o_tk + c] * delta
                any_ = int(1)
        if any_ != 0:
            for i in range(md.n_u):
                ws[e, md.o_res + i] = md.dof_gain[i] * ws[e, md.o_rtmp + md.dof_col[i]]
            displace(md, ws, e, md.o_res, T(1.0), q_out, t_out, q_out, t_out)

    @wp.func
    def soft_rows(md: MD, sc: SC, e: int, q: A2, u: A2, t: I2, dt: T):
        """Each compliant relation's ``gamma`` and constant part ``c2`` (``soft``), from its effective
        mass in H_M = S^T (M + armature) S (at o_HM, factored here) with the loops.

        A row's reduced form has at most two entries, ``gx`` at the follower's column and ``gy``
        at the leader's (one entry when both share a column)."""
        ws = sc.ws
        k = md.k
        if md.drive_exact == 0:  # else ``drive_inertias`` factored it
            mass_factor(md, ws, e)
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
            ws[e, md.o_u0 + j] = T(0.0)  # u0 is spent; loop_rows folds it into its targets
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
    def loop_lambda(md: MD, ws: A2, e: int):
        """``loop_solve`` on the Schur complement already factored for this H."""
        k = md.k
        m = md.m
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
    def loop_solve(md: MD, ws: A2, e: int):
        """v <- v + Y lambda_L with S lambda_L = t_L - J_L v: the loop rows hold exactly."""
        loop_schur(md, ws, e, md.o_H, md.o_kH, md.o_YT, md.o_SL, md.o_keep)
        loop_lambda(md, ws, e)

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
        ws[e, md.o_tk + c] = ws[e, oR + c]  # the response were there no loops
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
        if ws[e, md.o_W + 2 * j] < T(0.0):  # response not computed yet, no impulse yet
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
                if wp.static(ns.contacts):  # the contact passes' test: a velocity change above V_TOL
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
    def ellipse_shift(cd: ns.ConeData, u: V3):
        """An elliptical cone's ``limit`` less its bound along the swing axis ``u`` (parent frame):
        ``4 atan(1 / sqrt(w0 (u.e0)^2 + w1 (u.e1)^2))`` (``cone_setup``)."""
        s0 = wp.dot(u, cd.e0)
        s1 = wp.dot(u, cd.e1)
        return cd.limit - T(4.0) * wp.atan(T(1.0) / wp.sqrt(cd.w0 * s0 * s0 + cd.w1 * s1 * s1))

    @wp.func
    def ellipse_normal(cd: ns.ConeData, R: ns.mat33, u: V3, cot: T):
        """The row of ``g = theta - bound(phi)`` (phi the swing axis's azimuth about the cone's) over
        the child-frame angular velocity: ``dg/dt = u.w_p - bound'(phi) phi'``, ``phi' =
        w_p.(cot(theta) (a x u) + a)``, the ellipse's normal, so that its edge pushes the swing
        along it as a frictionless wall."""
        s0 = wp.dot(u, cd.e0)
        s1 = wp.dot(u, cd.e1)
        S = cd.w0 * s0 * s0 + cd.w1 * s1 * s1
        db = T(-4.0) * s0 * s1 * (cd.w1 - cd.w0) / ((S + T(1.0)) * wp.sqrt(S))
        return wp.transpose(R) * (u - db * (cot * wp.cross(cd.axis, u) + cd.axis))

    @wp.func
    def cone_swing(cd: ns.ConeData, R: ns.mat33):
        """Cone ``cd``'s swing angle theta at R, the rotation of the child's joint frame in the
        parent's (``cos theta = a . R^T a``), and its row direction n over the child-frame angular
        velocity (``cone_setup``); an elliptical cone's theta shifted by ``limit`` less its bound
        and n along the ellipse's normal."""
        b = wp.transpose(R) * cd.axis
        ax = wp.cross(b, cd.axis)
        sn = wp.length(ax)
        th = wp.atan2(sn, wp.dot(b, cd.axis))
        n = V3(T(0.0))
        if sn > T(1.0e-6):
            n = ax / sn
            if cd.limit1 != cd.limit:  # elliptical: g = theta - bound(phi), phi the swing's azimuth
                th = th + ellipse_shift(cd, R * n)
                n = ellipse_normal(cd, R, R * n, wp.dot(b, cd.axis) / sn)
        return th, n

    @wp.func
    def loop_cone_at(md: MD, cd: ns.ConeData):
        """Where a loop-closing cone's general row lies in the work space (field ``coneJ``): J over
        the DOFs, J S over the columns, then J u0."""
        return md.o_coneJ + cd.row * (md.n_u + md.k + 1)

    @wp.func(inline=False)
    def loop_cone_row(md: MD, sc: SC, e: int, cd: ns.ConeData, nw: V3):
        """A loop-closing cone's general row (``cone_setup``): ``nw`` (world) the swing rate's
        direction over the relative angular velocity ``w_b - w_a``, so its Jacobian over the DOFs
        is ``+nw`` on side b's path to its root and ``-nw`` on side a's (``chain_add``, as a loop
        rotation row; the world adds nothing), then ``J S`` over the columns and ``J u0`` after it
        (``row_to_solve_space``): the swing rate is ``(J S) v + J u0``."""
        ws = sc.ws
        n = md.n_u
        oj = loop_cone_at(md, cd)
        for j in range(n):
            ws[e, oj + j] = T(0.0)
        lp = md.loops[cd.loop]
        wr = sv(nw, V3(T(0.0)))
        chain_add(md.links, sc.S, ws, e, lp.lb, wr, oj, T(1.0))
        chain_add(md.links, sc.S, ws, e, lp.la, wr, oj, T(-1.0))
        ws[e, oj + n + md.k] = row_to_solve_space(md, ws, e, oj, oj + n)

    @wp.func
    def cone_setup(md: MD, sc: SC, e: int, q: A2):
        """Each cone limit's row at the step's start: the swing angle theta between the child's cone
        axis ``a`` and the parent's (``cos theta = a . R^T a``, R the joint's rotation), and the unit
        direction ``n = (R^T a x a) / sin theta`` over the joint's three DOFs (the angular velocity w
        in the child's joint frame), along which ``d theta / dt = n . w``; no impulse yet. At theta
        near 0 (or pi) the swing has no direction: n = 0, no row (a cone that small is not limited).
        An elliptical cone (PhysX's ``PxJointLimitCone``: ``(t0 / tan(L0 / 4))^2 + (t1 / tan(L1 / 4))^2
        <= 1``, t the tangent-quarter-angles of the swing quaternion's parts about the axes e0, e1
        after the cone's, L0 and L1 coneAngle0Limit and coneAngle1Limit) bounds the swing along its axis u at ``4 atan(1 / sqrt(w0 (u.e0)^2 + w1 (u.e1)^2))``;
        its row holds ``g = theta - bound(phi)`` (phi the swing axis's azimuth about the cone's axis):
        its direction ``dg / dw``, the ellipse's normal, and its angle shifted by ``limit`` less the
        bound, so that ``cone_block`` holds it unchanged (a circular cone: the row as before).
        A loop-closing joint's cone (``cd.loop``) is the same angle with R the rotation of side b's
        frame in side a's (side a the parent, as PhysX's body0), its n turned to the world and
        spread over both sides' paths (``loop_cone_row``; ``loop_cone_block`` solves it)."""
        ws = sc.ws
        for c in range(md.n_cones):
            cd = md.cones[c]
            Rb = ns.mat33(T(0.0))
            R = ns.mat33(T(0.0))
            if cd.loop < 0:
                qs = md.links[cd.link].qs
                R = wp.quat_to_matrix(wp.normalize(Q(q[e, qs], q[e, qs + 1], q[e, qs + 2], q[e, qs + 3])))
            else:
                lp = md.loops[cd.loop]
                Ra, pa = side_frame(sc, e, lp.la, lp.Ra, lp.pa)
                Rb, pb = side_frame(sc, e, lp.lb, lp.Rb, lp.pb)
                R = wp.transpose(Ra) * Rb
            th, n = cone_swing(cd, R)
            oc = md.o_cone + 5 * c
            ws[e, oc + CONE_LAM] = T(0.0)
            ws[e, oc + CONE_THETA] = th
            for d in range(3):
                ws[e, oc + CONE_N + d] = n[d]
            if cd.loop >= 0:
                loop_cone_row(md, sc, e, cd, Rb * n)

    @wp.func
    def cone_impulse(md: MD, ws: A2, e: int, oc: int, w0: T, W: T, tgt: T):
        """A cone row's impulse moved so that its swing rate, ``w0`` now with response ``W`` (its
        ``C (J S)^T`` in ``rtmp``), is at most ``tgt``, its impulse <= 0 (it only pushes back): the
        solve-space velocity moved along the response. Returns the impulse's change."""
        old = ws[e, oc + CONE_LAM]
        wf = w0 - W * old
        dl = (wp.min(wf, tgt) - wf) / W - old
        if dl != T(0.0):
            ws[e, oc + CONE_LAM] = old + dl
            for i in range(md.k):
                ws[e, md.o_v + i] = ws[e, md.o_v + i] + ws[e, md.o_rtmp + i] * dl
        return dl

    @wp.func
    def cone_changed(dl: T, W: T):
        """1 when a cone row's impulse change ``dl`` counts as a change of the pass (with contacts:
        a velocity change above their V_TOL)."""
        changed = int(1)
        if wp.static(ns.contacts):  # the contact passes' test: a velocity change above V_TOL
            changed = int(wp.abs(dl) * W > T(wp.static(ns.contact_v_tol)))
        return changed

    @wp.func
    def cone_target(md: MD, ws: A2, cd: ns.ConeData, e: int, oc: int, idt: T):
        """A cone row's largest swing rate (``limit_speed``): what reaches the limit within the
        step, or, once past it, what comes back at ``erp``."""
        th = ws[e, oc + CONE_THETA]
        return limit_speed(cd.limit, th, idt, md.erp, th > cd.limit)

    @wp.func
    def cone_block(md: MD, ws: A2, e: int, c: int, idt: T):
        """Cone limit c's row solved exactly along its response, as a 1-DOF joint's upper limit
        (``joint_block``, ``limit_speed``): the swing rate ``n . w`` at most what reaches the limit
        within the step, or, once past it, what comes back at ``erp``; its impulse <= 0 (it only
        pushes back), no restitution. The response ``C (n S)^T`` is computed when the row acts (in
        ``rtmp``). Returns 1 when its impulse changed."""
        oc = md.o_cone + 5 * c
        n = V3(ws[e, oc + CONE_N], ws[e, oc + CONE_N + 1], ws[e, oc + CONE_N + 2])
        if wp.length_sq(n) == T(0.0):
            return int(0)
        cd = md.cones[c]
        us = md.links[cd.link].us
        w0 = T(0.0)
        for d in range(3):
            j = us + d
            w0 = w0 + n[d] * (md.dof_gain[j] * ws[e, md.o_v + md.dof_col[j]] + ws[e, md.o_u0 + j])
        tgt = cone_target(md, ws, cd, e, oc, idt)
        if ws[e, oc + CONE_LAM] == T(0.0) and w0 <= tgt:
            return int(0)
        oR = md.o_rtmp
        for i in range(md.k):
            ws[e, oR + i] = T(0.0)
        for d in range(3):
            j = us + d
            ws[e, oR + md.dof_col[j]] = ws[e, oR + md.dof_col[j]] + md.dof_gain[j] * n[d]
        constrained_response(md, ws, e, oR)
        W = T(0.0)
        for d in range(3):
            j = us + d
            W = W + md.dof_gain[j] * n[d] * ws[e, oR + md.dof_col[j]]
        if W <= T(0.0):  # the loops lock the swing: no row
            return int(0)
        dl = cone_impulse(md, ws, e, oc, w0, W, tgt)
        if dl == T(0.0):
            return int(0)
        for d in range(3):
            j = us + d
            ws[e, md.o_gsum + md.dof_col[j]] = ws[e, md.o_gsum + md.dof_col[j]] + md.dof_gain[j] * n[d] * dl
        return cone_changed(dl, W)

    @wp.func(inline=False)
    def loop_cone_block(md: MD, ws: A2, e: int, c: int, idt: T):
        """A loop-closing cone's row (``loop_cone_row``) solved as ``cone_block`` solves a tree
        cone's, along its general row ``J S``: its swing rate ``(J S) v + J u0``, its response
        ``C (J S)^T``. A row the loops lock (``W`` within ``rank_tol`` of its response were there no
        loops, rounding left by their correction) is no row. Returns 1 when its impulse changed.
        Not inlined into ``joint_pass``, a row few models have: the float32 cold compile measured
        2.5 % shorter than with it inlined (float64 the same; ``benchmarks/cold_compile.py``)."""
        oc = md.o_cone + 5 * c
        if ws[e, oc + CONE_N] == T(0.0) and ws[e, oc + CONE_N + 1] == T(0.0) and ws[e, oc + CONE_N + 2] == T(0.0):
            return int(0)
        cd = md.cones[c]
        k = md.k
        ox = loop_cone_at(md, cd) + md.n_u
        w0 = dot_run(ws, e, ox, md.o_v, k) + ws[e, ox + k]
        tgt = cone_target(md, ws, cd, e, oc, idt)
        if ws[e, oc + CONE_LAM] == T(0.0) and w0 <= tgt:
            return int(0)
        oR = md.o_rtmp
        for i in range(k):
            ws[e, oR + i] = ws[e, ox + i]
        sparse_solve(md.lp, ws, e, md.o_H, md.o_kH, oR, 0, k)
        Wfree = dot_run(ws, e, ox, oR, k)
        if md.m > 0:
            loop_correct(md, ws, e, md.o_YT, md.o_SL, md.o_keep, oR, 0, k)
        W = dot_run(ws, e, ox, oR, k)
        if W <= md.rank_tol * Wfree:  # the loops lock the swing: no row
            return int(0)
        dl = cone_impulse(md, ws, e, oc, w0, W, tgt)
        if dl == T(0.0):
            return int(0)
        for i in range(k):
            ws[e, md.o_gsum + i] = ws[e, md.o_gsum + i] + ws[e, ox + i] * dl
        return cone_changed(dl, W)

    @wp.func
    def loop_cone_impulse(md: MD, ws: A2, e: int, i: int):
        """The loop-closing cones' generalized impulse at DOF i (``J^T lambda``, for the coupling
        impulses' residual; a tree cone's acts on its spherical DOFs only, where no relation is)."""
        acc = T(0.0)
        for c in range(md.n_cones):
            cd = md.cones[c]
            if cd.loop >= 0:
                acc = acc + ws[e, loop_cone_at(md, cd) + i] * ws[e, md.o_cone + 5 * c + CONE_LAM]
        return acc

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
        if wp.static(ns.balls):  # cone rows exist in kernels(balls=True) only
            for c in range(md.n_cones):
                if md.cones[c].loop < 0:
                    changed = changed + cone_block(md, sc.ws, e, c, idt)
                else:
                    changed = changed + loop_cone_block(md, sc.ws, e, c, idt)
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
        if wp.static(ns.balls):
            if md.n_cones > 0:
                cone_setup(md, sc, e, q)
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
        if wp.static(ns.contacts):  # first: it adds the contacts' impulses to the rows' sum
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
        if md.n_elim == 0:  # only compliant relations: their impulses need no residual
            nres = 0
        for i in range(nres):
            ws[e, md.o_tk + i] = md.dof_gain[i] * ws[e, md.o_v + md.dof_col[i]]  # S v (tk: n >= k)
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
                    if ws[e, od + 2] == T(0.0):  # a folded drive's impulse P - gamma u+
                        acc = acc - (ws[e, od] - ws[e, od + 1] * u_out[e, i])
            for r in range(md.m):
                acc = acc - ws[e, md.o_JL + r * n + i] * ws[e, md.o_lamL + r]
            if wp.static(ns.balls):  # a loop-closing cone's row spans the loop's joints
                if md.n_cones > 0 and md.m > 0:
                    acc = acc - loop_cone_impulse(md, ws, e, i)
            if wp.static(ns.contacts):
                acc = acc - ws[e, md.o_cimp + i]  # the contacts' generalized impulse
            ws[e, md.o_res + i] = acc
        if md.n_soft > 0:
            for g in range(md.n_rel):
                rd = md.rels[g]
                if rd.kind == SOFT_ROW:
                    lam_s = ws[e, md.o_soft + 2 * g + 1] - ws[e, md.o_soft + 2 * g] * (
                        u_out[e, rd.f] - rd.m * u_out[e, rd.l]
                    )
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
    ns.soft_rows, ns.soft_fold, ns.loop_solve, ns.loop_lambda = soft_rows, soft_fold, loop_solve, loop_lambda
    ns.drive_inertias, ns.drive_positions = drive_inertias, drive_positions
    ns.loop_rate_targets, ns.loop_retarget = loop_rate_targets, loop_retarget
    ns.joint_rows, ns.coupling_impulses = joint_rows, coupling_impulses
    ns.joint_rows_setup, ns.joint_pass, ns.joint_rows_finish = joint_rows_setup, joint_pass, joint_rows_finish
    ns.row_to_solve_space, ns.constrained_response = row_to_solve_space, constrained_response
    ns.chain_add, ns.column_response, ns.limit_speed, ns.joint_impulse = (
        chain_add,
        column_response,
        limit_speed,
        joint_impulse,
    )
