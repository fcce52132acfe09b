"""Dynamics passes of one environment: forward kinematics with the RNEA bias, the composite
pass (CRBA straight into the reduced columns ``A S``), joint terms (armature, damping,
implicit drives), integration, and the float64 momentum bookkeeping of floating bases.

The step works in the reduced space of the relations (``u = S v + u0``, k columns) as
early as it can: nothing per step is quadratic in the DOF count; the reduced system is kept
in the slots its tree allows (``sparsity.py``).
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import math

import warp as wp

from ... import joint_types as JT
from .structs import NO_FLOAT

#: the tree joints' codes (``LinkSpec.jtype``), from the one vocabulary
REVOLUTE = wp.constant(JT.JOINT_CODES[JT.REVOLUTE])
PRISMATIC = wp.constant(JT.JOINT_CODES[JT.PRISMATIC])
FREE = wp.constant(JT.JOINT_CODES[JT.FREE])
SPHERICAL = wp.constant(JT.JOINT_CODES[JT.SPHERICAL])

F_LOWER = wp.constant(1)
F_UPPER = wp.constant(2)
F_VMAX = wp.constant(4)
F_FRICTION = wp.constant(8)
F_DRIVE = wp.constant(16)
F_DSAT = wp.constant(32)  # a drive whose max force is finite: a bounded row of the solve
F_CONT = wp.constant(64)  # a continuous joint: its angle wraps into [-pi, pi), turns kept apart
F_DEXACT = wp.constant(128)  # a spring drive alone in its column: the exact discretisation's position term applies
F_ROWS = wp.constant(1 | 2 | 4 | 8 | 32)

TWO_PI = wp.constant(wp.float64(2.0 * math.pi))
#: The most whole turns one step's displacement may add before the angle counts as run away (its
#: int32 cast would overflow or read a NaN as INT_MIN): a step of 1e6 turns is no motion any more.
TURN_STEP_MAX = wp.constant(wp.float64(1.0e6))
#: A turn count past this is no count a real motion leaves (2^30 turns at 10 rad/s take 21 years):
#: the finiteness check flags it, as it would poison the unwrapped angle of every later step.
TURNS_MAX = wp.constant(1 << 30)
PI64 = wp.constant(wp.float64(math.pi))
#: ``ModelData.link_cap`` of a link without an authored velocity cap (model.py stores
#: min(cap, 3e38)): a cap below it acts (``velocity_caps``).
NO_CAP = wp.constant(3.0e38)
#: The most fixed-point passes ``base_midpoint`` takes (it stops earlier once converged). A numpy
#: model of a rigid body with the 2F-85's principal inertias (1.3e-4, 6.6e-4, 7.8e-4 kg m^2)
#: tumbling at 0.42 rad per step (100 rad/s, 240 Hz) kept its energy within 1.5 % with 4 passes a
#: step, 0.47 % with 6 and 0.45 % with 10.
MIDPOINT_ITERS = wp.constant(12)


def build(ns) -> None:
    T, V3, M33, SV, Q = ns.T, ns.vec3, ns.mat33, ns.spatial, ns.quat
    A2 = wp.array2d(dtype=T)
    I2 = wp.array2d(dtype=wp.int32)
    MD, SC = ns.ModelData, ns.Scratch
    sv, inertia_mul, motion_cross, force_cross = ns.sv, ns.inertia_mul, ns.motion_cross, ns.force_cross
    turn_about_x = ns.turn_about_x
    MID_TOL = wp.float64(1.0e-7 if T == wp.float32 else 1.0e-13)  # rad: base_midpoint's convergence

    @wp.func
    def unwrapped(q: A2, t: I2, e: int, j: int, cont: int):
        """The joint position in float64 with, for a continuous joint (``cont``), its whole turns
        added back: continuous joints keep q in [-pi, pi) and the turns apart, so relations and
        drives act on the true angle."""
        x = wp.float64(q[e, j])
        if cont != 0:
            x = x + TWO_PI * wp.float64(t[e, j])
        return x

    @wp.func
    def corrections(md: MD, sc: SC, e: int, q: A2, t: I2, dt: T):
        """u0: every eliminated DOF's position-error correction (Baumgarte at erp) of its error
        ``q_j - (a q_root + beta)``, bounded by the velocity cap its relation tree implies, so a
        correction never outruns a cap. The error is taken in float64 on the relation's float64
        gain and offset: in float32 a gain's rounding times a joint angle of thousands of
        radians would otherwise read as an error."""
        for j in range(md.n_u):
            sc.ws[e, md.o_u0 + j] = T(0.0)
        rate = -md.erp / dt
        for i in range(md.n_cor):
            cr = md.cors[i]
            err = unwrapped(q, t, e, cr.j, cr.cont) - cr.gain64 * unwrapped(q, t, e, cr.root, cr.cont) - cr.beta64
            sc.ws[e, md.o_u0 + cr.j] = wp.clamp(rate * T(err), -cr.ucap, cr.ucap)

    @wp.func
    def link_pose(ld: ns.LinkData, sc: SC, e: int, q: A2):
        """(joint frame before its motion, link frame after it) of link ``ld``, world, from its
        parent's frame in ``sc.R``/``sc.pos``; a floating base's are both its pose in q."""
        Rj = ld.Rp
        pj = ld.pp
        if ld.jtype == FREE:
            qs = ld.qs
            Rj = wp.quat_to_matrix(wp.normalize(Q(q[e, qs + 3], q[e, qs + 4], q[e, qs + 5], q[e, qs + 6])))
            pj = V3(q[e, qs], q[e, qs + 1], q[e, qs + 2])
        elif ld.parent >= 0:
            Rpar = sc.R[e, ld.parent]
            Rj = Rpar * ld.Rp
            pj = sc.pos[e, ld.parent] + Rpar * ld.pp
        Rl = Rj
        pl = pj
        if ld.jtype == REVOLUTE:
            qj = q[e, ld.qs]
            Rl = turn_about_x(Rj, wp.cos(qj), wp.sin(qj))
        elif ld.jtype == PRISMATIC:
            pl = pj + V3(Rj[0, 0], Rj[1, 0], Rj[2, 0]) * q[e, ld.qs]
        elif wp.static(ns.balls):  # compiled in for spherical joints only (kernels(balls=True))
            if ld.jtype == SPHERICAL:  # the child's joint frame turned by its quaternion in the parent's
                qs = ld.qs
                Rl = Rj * wp.quat_to_matrix(wp.normalize(Q(q[e, qs], q[e, qs + 1], q[e, qs + 2], q[e, qs + 3])))
        return Rj, pj, Rl, pl

    @wp.func
    def motion_axes(ld: ns.LinkData, sc: SC, e: int, Rj: M33, pj: V3, Rl: M33, o: V3):
        """Link ``ld``'s joint motion axes (``sc.S``, spatial, about o) from its joint frame (a
        spherical joint's: the child's joint-frame axes ``Rl``, through the joint centre, so that
        they turn with the link as a revolute axis does: ``dS/dt = V_l x S``)."""
        us = ld.us
        if ld.jtype == FREE:
            for d in range(3):
                ed = V3(T(0.0))
                ed[d] = T(1.0)
                sc.S[e, us + d] = sv(ed, wp.cross(pj - o, ed))
                sc.S[e, us + 3 + d] = sv(V3(T(0.0)), ed)
        elif ld.nd == 1:  # revolute or prismatic
            aw = V3(Rj[0, 0], Rj[1, 0], Rj[2, 0])  # the joint axis is the frame's x axis
            s = sv(V3(T(0.0)), aw)
            if ld.jtype == REVOLUTE:
                s = sv(aw, wp.cross(pj - o, aw))
            sc.S[e, us] = s
        elif wp.static(ns.balls):  # the rest are spherical (compiled in by kernels(balls=True))
            for d in range(3):
                ed = V3(Rl[0, d], Rl[1, d], Rl[2, d])
                sc.S[e, us + d] = sv(ed, wp.cross(pj - o, ed))

    @wp.func(inline=False)
    def poses(md: MD, sc: SC, e: int, q: A2, o: V3):
        """Every link's frame (``sc.R``, ``sc.pos``) and motion axes (``sc.S``) at q, nothing else."""
        for l in range(md.n_links):
            ld = md.links[l]
            Rj, pj, Rl, pl = link_pose(ld, sc, e, q)
            motion_axes(ld, sc, e, Rj, pj, Rl, o)
            sc.R[e, l] = Rl
            sc.pos[e, l] = pl

    @wp.func
    def forward(md: MD, e: int, q: A2, u: A2, sc: SC, o: V3, dt: T):
        """FK, joint motion axes, body velocities, bias accelerations, own inertias, and each
        link's RNEA force F (gravity, Coriolis) folded into ``G = I v - dt F``.

        Frames are rotation matrices (``sc.R``, ``sc.pos``: each link's joint frame after the
        joint motion). Spatial quantities are about the point ``o`` near the system: about the
        world origin, a body far away would lose float32 precision to cancellation.
        """
        a_world = sv(V3(T(0.0)), -md.gravity)
        keep = T(0.0)  # a deep tree's M u from the links' momenta I v (a shallow one's: composite_pass);
        if md.tree_mass != 0:  # as a factor, not a branch in the loop: measured faster (issue 40), same bits
            keep = T(1.0)
        for l in range(md.n_links):
            ld = md.links[l]
            us = ld.us
            Rj, pj, Rl, pl = link_pose(ld, sc, e, q)
            vl = SV()
            al = a_world
            motion_axes(ld, sc, e, Rj, pj, Rl, o)
            if ld.jtype == FREE:
                # u = (angular velocity, velocity of the base frame origin), world axes
                om = V3(u[e, us], u[e, us + 1], u[e, us + 2])
                vp = V3(u[e, us + 3], u[e, us + 4], u[e, us + 5])
                vl = sv(om, vp + wp.cross(pl - o, om))
                al = al + sv(V3(T(0.0)), wp.cross(vp, om))
            else:
                vpar = SV()
                if ld.parent >= 0:
                    vpar = sc.V[e, ld.parent]
                    al = sc.Acc[e, ld.parent]
                vj = sc.S[e, us] * u[e, us]
                for d in range(1, ld.nd):  # a spherical joint's other two axes
                    vj = vj + sc.S[e, us + d] * u[e, us + d]
                vl = vpar + vj
                al = al + motion_cross(vl, vj)
            sc.R[e, l] = Rl
            sc.pos[e, l] = pl
            sc.V[e, l] = vl
            sc.Acc[e, l] = al
            m = ld.mass
            c = Rl * ld.com + pl - o
            Ib = Rl * ld.I * wp.transpose(Rl) + m * (wp.dot(c, c) * wp.identity(n=3, dtype=T) - wp.outer(c, c))
            h = m * c
            sc.Ic_m[e, l] = m
            sc.Ic_h[e, l] = h
            sc.Ic_I[e, l] = Ib
            Iv = inertia_mul(m, h, Ib, vl)
            sc.G[e, l] = keep * Iv - dt * (inertia_mul(m, h, Ib, al) + force_cross(vl, Iv))

    @wp.func
    def own_inertia(ld: ns.LinkData, sc: SC, e: int, l: int, o: V3):
        """Link l's own spatial inertia about o (mass, first moment, rotational part), as
        ``forward`` forms it from the frames it left."""
        Rl = sc.R[e, l]
        m = ld.mass
        c = Rl * ld.com + sc.pos[e, l] - o
        Ib = Rl * ld.I * wp.transpose(Rl) + m * (wp.dot(c, c) * wp.identity(n=3, dtype=T) - wp.outer(c, c))
        return m, m * c, Ib

    @wp.func
    def ws_spatial(ws: A2, e: int, o: int):
        return SV(ws[e, o], ws[e, o + 1], ws[e, o + 2], ws[e, o + 3], ws[e, o + 4], ws[e, o + 5])

    @wp.func(inline=False)
    def midpoint_bias(md: MD, sc: SC, e: int, u: A2, o: V3, dt: T):
        """A loop model's velocity-product forces moved from the step's start velocity u to the
        mid-step velocity ``u_m = (u + u+) / 2`` (u+ the first solve's, at ``um``): ``f``, ``bhB``
        and ``bh`` take ``-dt S^T (c(q, u_m) - c(q, u))``; ``sc.V`` and ``sc.Acc`` are left at u_m.

        Why: with the bias at u a coasting linkage's tree velocity update and its moving positions
        exchange several times its energy over a run, and the remainder drained a four-bar to 75 %
        over 3.5 s at 60 Hz; at the mid-step velocity the exchange balances (91 % there, 99 % at
        240 Hz: ``benchmarks/loop_energy_schemes.py``). Two passes over the links with the
        frames the step has, over the links of the loops' group of columns alone (a tree outside
        it keeps the first solve's velocity: ``step`` re-solves only that group); the factor and
        the loops' Schur complement are kept."""
        ws = sc.ws
        c0 = md.loop_c0
        c1 = md.loop_c1
        for j in range(md.n_u):
            ws[e, md.o_um + j] = T(0.5) * (
                u[e, j] + md.dof_gain[j] * ws[e, md.o_v + md.dof_col[j]] + ws[e, md.o_u0 + j]
            )
        L = md.n_links
        for l in range(L):  # parents first: c(q, u_m) - c(q, u) per link into G, V left at u_m
            ld = md.links[l]
            if md.dof_col[ld.us] < c0 or md.dof_col[ld.us] >= c1:
                continue
            us = ld.us
            va = sc.V[e, l]  # the forward pass's, at u (a child reads its own before its parent's is moved)
            aa = SV()
            vb = SV()
            ab = SV()
            if ld.jtype == FREE:
                om = V3(u[e, us], u[e, us + 1], u[e, us + 2])
                vp = V3(u[e, us + 3], u[e, us + 4], u[e, us + 5])
                aa = sv(V3(T(0.0)), wp.cross(vp, om))
                om = V3(ws[e, md.o_um + us], ws[e, md.o_um + us + 1], ws[e, md.o_um + us + 2])
                vp = V3(ws[e, md.o_um + us + 3], ws[e, md.o_um + us + 4], ws[e, md.o_um + us + 5])
                vb = sv(om, vp + wp.cross(sc.pos[e, l] - o, om))
                ab = sv(V3(T(0.0)), wp.cross(vp, om))
            else:
                p = ld.parent
                if p >= 0:
                    aa = ws_spatial(ws, e, md.o_aA + 6 * p)
                    vb = sc.V[e, p]
                    ab = sc.Acc[e, p]
                vu = sc.S[e, us] * u[e, us]
                vj = sc.S[e, us] * ws[e, md.o_um + us]
                for d in range(1, ld.nd):  # a spherical joint's other two axes
                    vu = vu + sc.S[e, us + d] * u[e, us + d]
                    vj = vj + sc.S[e, us + d] * ws[e, md.o_um + us + d]
                aa = aa + motion_cross(va, vu)
                vb = vb + vj
                ab = ab + motion_cross(vb, vj)
            for d in range(6):
                ws[e, md.o_aA + 6 * l + d] = aa[d]
            sc.V[e, l] = vb
            sc.Acc[e, l] = ab
            m, h, Ib = own_inertia(ld, sc, e, l, o)
            sc.G[e, l] = (
                inertia_mul(m, h, Ib, ab - aa)
                + force_cross(vb, inertia_mul(m, h, Ib, vb))
                - force_cross(va, inertia_mul(m, h, Ib, va))
            )
        for ll in range(L):  # from the leaves up: -dt S^T of the composite difference
            l = L - 1 - ll
            ld = md.links[l]
            if md.dof_col[ld.us] < c0 or md.dof_col[ld.us] >= c1:
                continue
            Gl = sc.G[e, l]
            for d in range(ld.nd):
                i = ld.us + d
                df = -dt * wp.dot(sc.S[e, i], Gl)
                ws[e, md.o_f + i] = ws[e, md.o_f + i] + df
                c = md.dof_col[i]
                ws[e, md.o_bhB + c] = ws[e, md.o_bhB + c] + md.dof_gain[i] * df
                ws[e, md.o_bh + c] = ws[e, md.o_bh + c] + md.dof_gain[i] * df
            if ld.parent >= 0:
                sc.G[e, ld.parent] = sc.G[e, ld.parent] + Gl

    @wp.func(inline=False)
    def momentum64(md: MD, e: int, q: A2, u: A2, sc: SC, o: wp.vec3d):
        """Per tree (at its root link): spatial momentum about ``o`` and composite inertia, float64.

        Restoring a floating system's momentum compares this at the end of the step with its
        value at the start; in float64 the two telescope, where a float32 sum of the links'
        momenta would carry rounding noise that random-walks from step to step.
        """
        for l in range(md.n_links):
            ld = md.links[l]
            us = ld.us
            Rl = wp.identity(n=3, dtype=wp.float64)
            pl = wp.vec3d()
            vl = wp.spatial_vectord()
            if ld.jtype == FREE:
                qs = ld.qs
                Rl = wp.quat_to_matrix(
                    wp.normalize(
                        wp.quatd(
                            wp.float64(q[e, qs + 3]),
                            wp.float64(q[e, qs + 4]),
                            wp.float64(q[e, qs + 5]),
                            wp.float64(q[e, qs + 6]),
                        )
                    )
                )
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
                elif ld.jtype == PRISMATIC:
                    pl = pj + aw * qj
                    vl = vpar + uj * wp.spatial_vectord(
                        wp.float64(0.0), wp.float64(0.0), wp.float64(0.0), aw[0], aw[1], aw[2]
                    )
                elif wp.static(ns.balls):  # the rest are spherical: angular velocity in the child's joint frame
                    qs = ld.qs
                    Rl = Rj * wp.quat_to_matrix(
                        wp.normalize(
                            wp.quatd(
                                wp.float64(q[e, qs]),
                                wp.float64(q[e, qs + 1]),
                                wp.float64(q[e, qs + 2]),
                                wp.float64(q[e, qs + 3]),
                            )
                        )
                    )
                    om = Rl * wp.vec3d(wp.float64(u[e, us]), wp.float64(u[e, us + 1]), wp.float64(u[e, us + 2]))
                    lin = wp.cross(pj - o, om)
                    vl = vpar + wp.spatial_vectord(om[0], om[1], om[2], lin[0], lin[1], lin[2])
            sc.Rd[e, l] = Rl
            sc.pd[e, l] = pl
            sc.Vd[e, l] = vl
            m = wp.float64(ld.mass)
            c = Rl * wp.vec3d(ld.com) + pl - o
            Ib = Rl * wp.mat33d(ld.I) * wp.transpose(Rl) + m * (
                wp.dot(c, c) * wp.identity(n=3, dtype=wp.float64) - wp.outer(c, c)
            )
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
    def momentum_targets(md: MD, sc: SC, e: int, ce: int, effort: A2, dt: T):
        """Each restored floating tree's momentum at the end of the step: its start momentum
        plus the gravity and base-effort impulses (``sc.Td``)."""
        gd = wp.vec3d(md.gravity)
        dtd = wp.float64(dt)
        for l in range(md.n_links):
            ld = md.links[l]
            if ld.jtype == FREE:
                us = ld.us
                ang = wp.cross(sc.Ihd[e, l], gd)
                lmo = sc.Imd[e, l] * gd
                tau = wp.spatial_vectord()
                for d in range(6):
                    tau[d] = wp.float64(effort[ce, us + d])
                grav = wp.spatial_vectord(ang[0], ang[1], ang[2], lmo[0], lmo[1], lmo[2])
                sc.Td[e, l] = sc.Pd[e, l] + dtd * (grav + tau)

    @wp.func
    def composite_pass(md: MD, sc: SC, e: int, ce: int, u: A2, effort: A2, dt: T):
        """From the leaves up: composite inertias and G; f = S^T G + dt tau = M u + dt (tau - h);
        with each link's composite inertia complete, the CRBA pairs M_ij = s_j . Ic_i s_i (j on
        i's link or an ancestor) added straight into the reduced system's slots (``HB``:
        H = S^T M S, no n x n or n x k matrix; on a deep tree a run of ancestors in one column is
        one product with their summed axes ``Q``). On a shallow tree (``tree_mass`` 0) the pairs
        are also kept (``Mp``, for ``M x`` later) and give f += M (u - u0) here, from the same
        products as H; on a deep one ``G`` carries the links' momenta ``I v`` (``forward``) and
        f -= M u0 is ``mass_times_tree``'s, O(n).

        Why M u from H's own products on a shallow tree: in float32 a link far from the reference
        point carries its momentum as the difference of two terms ``m d^2 / I`` times its own, and
        the momenta ``I v`` rounded that difference otherwise than H's ``s . I s``; with the speed
        nearly constant the same rounding came back every step, and a light geared pair (a 0.2 kg,
        5e-4 kg m^2 rotor 0.2 m off the reference point) lost 3.9 % of its speed per 100k steps.
        From one set of products ``v = H^-1 S^T M u`` returns the speed to the last bit or so."""
        ws = sc.ws
        n = md.n_u
        o_f = md.o_f
        o_HB = md.o_HB
        o_Mp = md.o_Mp
        rel = int(0)
        if md.tree_mass == 0:
            rel = int(1)
        for i in range(md.nnz):
            ws[e, o_HB + i] = T(0.0)
        o_u0 = md.o_u0  # a shallow tree's pairs take M (u0 - u) off f, u0 - u formed where read: measured
        # faster on the Robotiq (paired A/B, issue 40) than u0 - u written once by ``corrections``
        for i in range(n):
            ws[e, o_f + i] = T(0.0)
        if md.tree_mass != 0:  # a deep tree's pairs merge runs: Q_j = g_j s_j + Q_up(j)
            for j in range(n):
                qv = md.dof_gain[j] * sc.S[e, j]
                up = md.dof_up[j]
                if up >= 0:
                    qv = qv + sc.Q[e, up]
                sc.Q[e, j] = qv
        pc = int(0)
        n_pairs = md.n_pairs
        L = md.n_links
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
                u0i = ws[e, o_u0 + i] - u[e, i]  # f -= M (u0 - u)
                Fd = inertia_mul(m, h, Ib, Si)
                fu0 = T(0.0)
                # the pairs with the DOFs of this link, then of each ancestor, as the build listed
                # them (``pairs``: i, j, own); an own-link pair is met in both orders, an ancestor's
                # once, so only the ancestor's also gives its DOF the symmetric term of f -= M u0
                while pc < n_pairs:
                    pr = md.pairs[pc]
                    if pr[0] != i:
                        break
                    jj = pr[1]
                    val = T(0.0)
                    if pr[2] == 2:  # a run of ancestors in one column, from jj up
                        val = wp.dot(sc.Q[e, jj], Fd)
                    else:
                        val = wp.dot(sc.S[e, jj], Fd)
                    sl = o_HB + md.pair_slot[pc]
                    ws[e, sl] = ws[e, sl] + md.pair_coef[pc] * val
                    if rel != 0:
                        ws[e, o_Mp + pc] = val
                        fu0 = fu0 + val * (ws[e, o_u0 + jj] - u[e, jj])
                        if pr[2] == 0:
                            ws[e, o_f + jj] = ws[e, o_f + jj] - val * u0i
                    pc = pc + 1
                ws[e, o_f + i] = ws[e, o_f + i] + wp.dot(Si, Gl) + dt * effort[ce, i] - fu0
            if p >= 0:
                sc.G[e, p] = sc.G[e, p] + Gl
                sc.Ic_m[e, p] = sc.Ic_m[e, p] + m
                sc.Ic_h[e, p] = sc.Ic_h[e, p] + h
                sc.Ic_I[e, p] = sc.Ic_I[e, p] + Ib

    @wp.func
    def mass_times_pairs(md: MD, ws: A2, e: int, ox: int, oy: int):
        """y += M x over the composite pass's pairs (``Mp``, a shallow tree's), for DOF vectors at
        ``ox``, ``oy``."""
        for p in range(md.n_pairs):
            pr = md.pairs[p]
            val = ws[e, md.o_Mp + p]
            ws[e, oy + pr[0]] = ws[e, oy + pr[0]] + val * ws[e, ox + pr[1]]
            if pr[2] == 0:
                ws[e, oy + pr[1]] = ws[e, oy + pr[1]] + val * ws[e, ox + pr[0]]

    @wp.func
    def mass_times_tree(md: MD, sc: SC, e: int, ox: int, oy: int, sgn: T):
        """y += sgn M x for DOF vectors at ``ox``, ``oy``, in O(n) from the composite inertias
        (after ``composite_pass``; a deep tree's, where the pairs are O(n d)): ``(M x)_i = s_i . (Ic_l V_l + B_l)``, l the link of DOF i,
        V_l the motion ``x`` gives it, B_l the sum of ``Ic_c s_j x_j`` over the DOFs j of links
        below l (c the link of j). Uses ``sc.G`` (V) and ``sc.Acc`` (B), spent by then."""
        ws = sc.ws
        L = md.n_links
        for l in range(L):
            p = md.link_parent[l]
            v = SV()
            if p >= 0:
                v = sc.G[e, p]
            us = md.link_us[l]
            for d in range(md.link_nd[l]):
                v = v + sc.S[e, us + d] * ws[e, ox + us + d]
            sc.G[e, l] = v
            sc.Acc[e, l] = SV()
        for ll in range(L):
            l = L - 1 - ll
            m = sc.Ic_m[e, l]
            h = sc.Ic_h[e, l]
            Ib = sc.Ic_I[e, l]
            P = inertia_mul(m, h, Ib, sc.G[e, l]) + sc.Acc[e, l]
            us = md.link_us[l]
            own = SV()
            for d in range(md.link_nd[l]):
                Si = sc.S[e, us + d]
                ws[e, oy + us + d] = ws[e, oy + us + d] + sgn * wp.dot(Si, P)
                own = own + Si * ws[e, ox + us + d]
            p = md.link_parent[l]
            if p >= 0:
                sc.Acc[e, p] = sc.Acc[e, p] + inertia_mul(m, h, Ib, own) + sc.Acc[e, l]

    @wp.func
    def one_minus_exp(y: wp.float64):
        """1 - exp(-y) for y >= 0 without cancellation at small y (its series below 0.01: the
        dropped y^7/5040 is 2e-16 of it there)."""
        r = wp.float64(1.0) - wp.exp(-y)
        if y < wp.float64(0.01):
            r = y * (
                wp.float64(1.0)
                - y
                / wp.float64(2.0)
                * (
                    wp.float64(1.0)
                    - y
                    / wp.float64(3.0)
                    * (
                        wp.float64(1.0)
                        - y
                        / wp.float64(4.0)
                        * (wp.float64(1.0) - y / wp.float64(5.0) * (wp.float64(1.0) - y / wp.float64(6.0)))
                    )
                )
            )
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
            p1 = one_minus_exp(x / (zd + sq)) * one_minus_exp((zd + sq) * x)  # z - sq = 1 / (z + sq)
        dm = x * x / p1  # D / m_eff, with D = m_eff + gamma
        return (
            T(dm - wp.float64(1.0)),
            T(wp.float64(1.0) - rho2 * dm),
            T(wp.float64(w) * wp.float64(w) * wp.float64(dt)),
        )

    @wp.func
    def exact_drive(kp: T, kd: T, meff: T, u: T, dt: T, flags: int):
        """A PD drive discretised for its effective inertia ``meff`` (``1 / (g C_M g^T)``: mass,
        armature and loops, as a compliant relation's): (gamma, the start-velocity term of P, and
        the position term's c2, c3).

        The drive's impulse stays ``P - gamma u+`` with ``P`` the implicit drive's spring part
        (``-dt kp e + dt kd u_target``: the static stiffness is kp) plus ``-meff eta u``. With the
        continuous PD response's flow ``Phi = exp(A dt)`` of ``(e, u)`` (``A = [[0, 1], [-w^2,
        -2 z w]]``, ``w^2 = kp / meff``, ``2 z w = kd / meff``), ``1 + gamma = dt / Phi12`` and
        ``1 - eta = Phi22 dt / Phi12`` make u+ the flow's velocity under any force held over the
        step, and the position term ``q+ += c2 u + c3 u+`` (``F_DEXACT``: the drive alone in its
        column) its position: for a joint that is its column's only inertia the step is the
        continuous response sampled, from rest or not (the implicit drive's ``dt (kd + dt kp)``
        over-damps it by about kp dt). Elsewhere (a drive not ``F_DEXACT``: loops, compliant
        relations or another drive in its group) and past a quarter period per step (``w_d dt >
        pi / 2``, where Phi12 heads for its zero) it matches the one-step map's eigenvalues to the
        response's alone (``soft_coefficients``: frequency and damping exact, the transient's
        amplitude not), without the position term."""
        wd = wp.float64(kp) / wp.float64(meff)
        w = wp.sqrt(wd)
        h = wp.float64(dt)
        z = wp.float64(kd) / (wp.float64(2.0) * wp.sqrt(wp.float64(kp) * wp.float64(meff)))
        sig = z * w
        exC = wp.float64(0.0)
        exS = wp.float64(0.0)
        ok = int(1)
        if z < wp.float64(1.0):
            om = w * wp.sqrt(wp.float64(1.0) - z * z)
            if om * h > wp.float64(0.5 * math.pi):
                ok = int(0)
            ex = wp.exp(-sig * h)
            exC = ex * wp.cos(om * h)
            exS = ex * wp.sin(om * h) / om
        else:
            wa = w * wp.sqrt(z * z - wp.float64(1.0))
            y = wa * h
            if y < wp.float64(0.01):  # near critical: the series, not a difference of exponentials
                ex = wp.exp(-sig * h)
                y2 = y * y
                exC = ex * (wp.float64(1.0) + y2 / wp.float64(2.0) * (wp.float64(1.0) + y2 / wp.float64(12.0)))
                exS = ex * h * (wp.float64(1.0) + y2 / wp.float64(6.0) * (wp.float64(1.0) + y2 / wp.float64(20.0)))
            else:
                r1 = wp.exp(-(sig - wa) * h)
                r2 = wp.exp(-(sig + wa) * h)
                exC = wp.float64(0.5) * (r1 + r2)
                exS = wp.float64(0.5) * (r1 - r2) / wa
        if ok == 0 or (flags & F_DEXACT) == 0:
            g, et, kap = soft_coefficients(T(w), T(z), dt)
            return meff * g, -meff * et * u, T(0.0), T(0.0)
        p11 = exC + sig * exS
        p12 = exS
        p22 = exC - sig * exS
        gam = h / p12 - wp.float64(1.0)
        eta = wp.float64(1.0) - p22 * h / p12
        r = (wp.float64(1.0) - p11) / (wd * p12)  # psi1 / psi2 of a force held over the step
        c2 = T(p12 - r * p22)
        c3 = T(r - h)
        return meff * T(gam), -meff * T(eta) * u, c2, c3

    @wp.func
    def joint_terms(md: MD, sc: SC, e: int, ce: int, q: A2, u: A2, t: I2, target_pos: A2, target_vel: A2, dt: T):
        """Armature and damping into H and f' = f - A u0 (f += armature u); each drive's
        impulse at the end of the step, ``P - gamma u+`` (implicit PD), kept apart (``drv``).

        Every drive starts folded into the reduced system (exact implicit PD, ``drv`` mode 0); one
        with a max force that the solve finds past it becomes a bounded row of its joint (mode
        1) and the solve is repeated once (``drives_past_bound``): a drive within its bound is
        solved exactly as one without.
        """
        ws = sc.ws
        exact = md.drive_exact != 0
        for j in range(md.n1):
            jd = md.joints[j]
            uj = u[e, j]
            diag = jd.armature + dt * jd.damping
            od = md.o_drv + 3 * j
            # a contact model: a drive that ended the last step past its bound starts as its bounded
            # row (a grasp's saturated drive; the contact solve is then not repeated)
            was_row = ws[e, od + 2] == T(1.0) and wp.abs(ws[e, od] - ws[e, od + 1] * uj) > dt * jd.fmax
            ws[e, od] = T(0.0)
            ws[e, od + 1] = T(0.0)
            ws[e, od + 2] = T(-1.0)  # -1: no drive, 0: folded, 1: a bounded row
            if (jd.flags & F_DRIVE) != 0:
                gam = dt * (jd.kd + dt * jd.kp)
                P = dt * (
                    jd.kp * T(wp.float64(target_pos[ce, j]) - unwrapped(q, t, e, j, jd.flags & F_CONT))
                    + jd.kd * target_vel[ce, j]
                )
                if exact:  # its effective inertia from ``drive_inertias`` (0: none, stays implicit)
                    meff = ws[e, md.o_dpos + 3 * j]
                    if jd.kp > T(0.0) and meff > T(0.0):
                        gam, dP, c2, c3 = exact_drive(jd.kp, jd.kd, meff, uj, dt, jd.flags)
                        P = P + dP
                        ws[e, md.o_dpos + 3 * j + 1] = c2
                        ws[e, md.o_dpos + 3 * j + 2] = c3
                ws[e, od] = P
                ws[e, od + 1] = gam
                ws[e, od + 2] = T(0.0)
                if wp.static(ns.contacts):
                    if was_row and (jd.flags & F_DSAT) != 0:
                        ws[e, od + 2] = T(1.0)
            ws[e, md.o_f + j] = ws[e, md.o_f + j] + jd.armature * uj - diag * ws[e, md.o_u0 + j]
            cj = md.o_HB + jd.col
            ws[e, cj] = ws[e, cj] + jd.gain * jd.gain * diag

    @wp.func
    def fold_drives(md: MD, ws: A2, e: int):
        """H = H_base + the folded drives; bh likewise (``gamma`` on the diagonal, ``P - gamma u0``)."""
        for i in range(md.nnz):
            ws[e, md.o_H + i] = ws[e, md.o_HB + i]
        for c in range(md.k):
            ws[e, md.o_bh + c] = ws[e, md.o_bhB + c]
        for j in range(md.n1):
            od = md.o_drv + 3 * j
            if ws[e, od + 2] == T(0.0):
                jd = md.joints[j]
                gam = ws[e, od + 1]
                cc = jd.col
                ws[e, md.o_H + cc] = ws[e, md.o_H + cc] + jd.gain * jd.gain * gam
                ws[e, md.o_bh + cc] = ws[e, md.o_bh + cc] + jd.gain * (ws[e, od] - gam * ws[e, md.o_u0 + j])

    @wp.func
    def drives_past_bound(md: MD, ws: A2, e: int, dt: T):
        """Turn every folded drive whose end-of-step impulse exceeds its max force into a bounded
        row; returns 1 when one did (the solve is then repeated)."""
        again = int(0)
        for j in range(md.n1):
            jd = md.joints[j]
            od = md.o_drv + 3 * j
            if (jd.flags & F_DSAT) != 0 and ws[e, od + 2] == T(0.0):
                w = jd.gain * ws[e, md.o_v + jd.col] + ws[e, md.o_u0 + j]
                if wp.abs(ws[e, od] - ws[e, od + 1] * w) > dt * jd.fmax * T(1.000001):
                    ws[e, od + 2] = T(1.0)
                    again = int(1)
        return again

    @wp.func
    def displace(md: MD, ws: A2, e: int, od: int, h: T, q_in: A2, t_in: I2, q_out: A2, t_out: I2):
        """q_out = q_in (+) h du, du the DOF vector at ``ws[e, od:]``: 1-DOF joints add, continuous
        ones wrap into [-pi, pi) in float64 and count the turn, floating bases move their origin and
        turn by the rotation vector (world axes), spherical joints turn their quaternion by the
        child frame's. (q_out may be q_in: the step's integration and its loop projection share
        this.)"""
        for j in range(md.n1):
            t_out[e, j] = t_in[e, j]
            d = h * ws[e, od + j]
            if (md.joints[j].flags & F_CONT) != 0:
                x = wp.float64(q_in[e, j]) + wp.float64(d)
                turns = wp.floor((x + PI64) / TWO_PI)
                if wp.abs(turns) <= TURN_STEP_MAX:  # false for NaN: never cast a non-finite count
                    q_out[e, j] = T(x - turns * TWO_PI)
                    t_out[e, j] = t_in[e, j] + wp.int32(turns)
                else:  # a NaN or runaway angle: kept as it is (flagged), the turns untouched
                    q_out[e, j] = T(x)
            else:
                q_out[e, j] = q_in[e, j] + d
        turned = md.float_bases != NO_FLOAT  # a link whose coordinates hold a quaternion
        if wp.static(ns.balls):  # spherical joints' code compiled in: the model has one
            turned = True
        if turned:
            for l in range(md.n_links):
                ld = md.links[l]
                if ld.nd > 1:  # a floating base or a spherical joint: a quaternion turned on the sphere
                    qs = ld.qs
                    us = ld.us
                    r0 = qs  # a spherical joint's quaternion; a base's after its position
                    if ld.jtype == FREE:
                        r0 = qs + 3
                        vo = h * V3(ws[e, od + us + 3], ws[e, od + us + 4], ws[e, od + us + 5])
                        pos = V3(q_in[e, qs], q_in[e, qs + 1], q_in[e, qs + 2]) + vo
                        for c in range(3):
                            q_out[e, qs + c] = pos[c]
                    om = h * V3(ws[e, od + us], ws[e, od + us + 1], ws[e, od + us + 2])
                    rot = Q(q_in[e, r0], q_in[e, r0 + 1], q_in[e, r0 + 2], q_in[e, r0 + 3])
                    ang = wp.length(om)
                    if ang > T(0.0):
                        turn = wp.quat_from_axis_angle(om / ang, ang)
                        if ld.jtype == FREE:  # world-axes angular velocity: turned in the world
                            rot = turn * rot
                        else:  # the child frame's: turned in the child frame
                            rot = rot * turn
                    rot = wp.normalize(rot)
                    for c in range(4):
                        q_out[e, r0 + c] = rot[c]

    @wp.func
    def rotate64(th: wp.vec3d, v: wp.vec3d):
        """``v`` turned by the rotation vector ``th`` (Rodrigues), float64."""
        a2 = wp.dot(th, th)
        tv = wp.cross(th, v)
        r = v + tv
        if a2 > wp.float64(0.0):
            a = wp.sqrt(a2)
            sh = wp.sin(wp.float64(0.5) * a)
            r = v + (wp.sin(a) / a) * tv + (wp.float64(2.0) * sh * sh / a2) * wp.cross(th, tv)
        return r

    @wp.func
    def base_correction(md: MD, sc: SC, e: int, u_out: A2, od: wp.vec3d, half: int):
        """Move each restored free tree's base velocity in ``u_out`` so that the tree's momentum
        (``sc.Pd``, from ``momentum64`` at those velocities) becomes its end-of-step target
        ``sc.Td`` (``half`` 0) or the mid-step one ``(Pm + Td) / 2`` (``half`` 1). Returns the
        largest change of a base's angular velocity (rad/s)."""
        change = wp.float64(0.0)
        for l in range(md.n_links):
            ld = md.links[l]
            if ld.jtype == FREE and ld.restore != 0:
                us = ld.us
                dP = sc.Td[e, l] - sc.Pd[e, l]
                if half != 0:
                    dP = wp.float64(0.5) * (sc.Pm[e, l] + sc.Td[e, l]) - sc.Pd[e, l]
                mt = sc.Imd[e, l]
                ht = sc.Ihd[e, l]
                Icom = sc.IId[e, l] - (wp.dot(ht, ht) * wp.identity(n=3, dtype=wp.float64) - wp.outer(ht, ht)) / mt
                dPa = wp.vec3d(dP[0], dP[1], dP[2])
                dPl = wp.vec3d(dP[3], dP[4], dP[5])
                dw = wp.inverse(Icom) * (dPa - wp.cross(ht, dPl) / mt)
                dv = (dPl + wp.cross(ht, dw)) / mt
                dvp = dv + wp.cross(dw, sc.pd[e, l] - od)
                change = wp.max(change, wp.length(dw))
                for d in range(3):
                    u_out[e, us + d] = T(wp.float64(u_out[e, us + d]) + dw[d])
                    u_out[e, us + 3 + d] = T(wp.float64(u_out[e, us + 3 + d]) + dvp[d])
        return change

    @wp.func(inline=False)
    def base_midpoint(
        md: MD, sc: SC, e: int, q_in: A2, t_in: I2, u_in: A2, u_out: A2, q_out: A2, t_out: I2, od: wp.vec3d, dt: T
    ):
        """The velocity that moves each restored free tree's base over the step: the implicit
        midpoint's, ``u_b`` such that at ``q_m = q (+) (dt / 2) (u_b, u+ of the joints)`` the
        tree's momentum with the joints at ``(u + u+) / 2`` is the mid-step momentum; left in
        ``ws[o_res:]`` and ``u_out`` (the joints' u+ beside it), its linear part as the velocity of
        the base's point at the tree's start centre of mass (``turn_bases_about_com``). Found by fixed-point iteration from ``(u + u+) / 2`` (``MIDPOINT_ITERS``
        at most, until a base's rotation over the step moves by less than ``MID_TOL``: about the
        rounding of a rotation in the model's precision).

        Why: with the momentum restored exactly, a free tree's velocity at the end of the step
        follows from its configuration, and what the step gets wrong is the displacement. Moved
        with u+ of the semi-implicit step (its velocity-product forces explicit), a tumbling body
        drifts towards its axis of least or largest inertia (the floating Isaac 2F-85 at 50 rad/s,
        240 Hz: kinetic energy x1.30 in 2 s; non-finite at 75 rad/s); the midpoint rotation is
        symmetric in time and keeps it within 0.16 % at 100 rad/s (``tests/test_solver_floating.py``)."""
        ws = sc.ws
        n = md.n_u
        for i in range(n):
            ws[e, md.o_res + i] = u_out[e, i]
            u_out[e, i] = T(0.5) * (u_in[e, i] + u_out[e, i])
        for l in range(md.n_links):
            ld = md.links[l]
            if ld.jtype == FREE and ld.restore != 0 and sc.Imd[e, l] > wp.float64(0.0):
                us = ld.us
                qs = ld.qs
                sc.Pm[e, l] = sc.Pd[e, l]
                c = od + sc.Ihd[e, l] / sc.Imd[e, l]
                sc.cm[e, l] = c
                p = wp.vec3d(wp.float64(q_in[e, qs]), wp.float64(q_in[e, qs + 1]), wp.float64(q_in[e, qs + 2]))
                om = wp.vec3d(
                    wp.float64(ws[e, md.o_res + us]),
                    wp.float64(ws[e, md.o_res + us + 1]),
                    wp.float64(ws[e, md.o_res + us + 2]),
                )
                vx = wp.cross(om, c - p)  # the base's point at c: its velocity
                for d in range(3):
                    ws[e, md.o_res + us + 3 + d] = T(wp.float64(ws[e, md.o_res + us + 3 + d]) + vx[d])
        h = T(0.5) * dt
        for it in range(MIDPOINT_ITERS):
            displace(md, ws, e, md.o_res, h, q_in, t_in, q_out, t_out)
            turn_bases_about_com(md, sc, e, md.o_res, h, q_in, q_out)
            momentum64(md, e, q_out, u_out, sc, od)
            change = base_correction(md, sc, e, u_out, od, 1)
            for l in range(md.n_links):
                ld = md.links[l]
                if ld.jtype == FREE and ld.restore != 0 and sc.Imd[e, l] > wp.float64(0.0):
                    us = ld.us
                    qs = ld.qs
                    # where the base's point that started at c is at q_m, from the base origin there
                    x = sc.cm[e, l]
                    for d in range(3):
                        x[d] = x[d] + wp.float64(h) * wp.float64(ws[e, md.o_res + us + 3 + d])
                    pm = wp.vec3d(wp.float64(q_out[e, qs]), wp.float64(q_out[e, qs + 1]), wp.float64(q_out[e, qs + 2]))
                    om = wp.vec3d(wp.float64(u_out[e, us]), wp.float64(u_out[e, us + 1]), wp.float64(u_out[e, us + 2]))
                    vx = wp.cross(om, x - pm)
                    for d in range(3):
                        ws[e, md.o_res + us + d] = u_out[e, us + d]
                        ws[e, md.o_res + us + 3 + d] = T(wp.float64(u_out[e, us + 3 + d]) + vx[d])
            if change * wp.float64(dt) <= MID_TOL:
                break
        for i in range(n):
            u_out[e, i] = ws[e, md.o_res + i]

    @wp.func
    def turn_bases_about_com(md: MD, sc: SC, e: int, od: int, h: T, q_in: A2, q_out: A2):
        """After ``displace`` with a restored free tree's base entries at ``ws[od:]`` holding
        (angular velocity, velocity of the base's point at the tree's start centre of mass
        ``sc.cm``), not of its origin: the base origin moved as a point of a body that turns by
        ``h w`` about that point while the point moves in a straight line (``displace`` moved the
        origin along the chord; this adds ``R r - r``, ``r`` the origin from that point). Exact
        for a rigid body, whose centre of mass moves in a straight line; the chord of the origin
        put a tumbling gripper's centre of mass off its line by ``(h w)^2 / 2`` of its offset each
        step, and its spin about it followed."""
        ws = sc.ws
        for l in range(md.n_links):
            ld = md.links[l]
            if ld.jtype == FREE and ld.restore != 0 and sc.Imd[e, l] > wp.float64(0.0):
                qs = ld.qs
                us = ld.us
                th = wp.float64(h) * wp.vec3d(
                    wp.float64(ws[e, od + us]), wp.float64(ws[e, od + us + 1]), wp.float64(ws[e, od + us + 2])
                )
                p = wp.vec3d(wp.float64(q_in[e, qs]), wp.float64(q_in[e, qs + 1]), wp.float64(q_in[e, qs + 2]))
                r = p - sc.cm[e, l]
                dp = rotate64(th, r) - r
                for c in range(3):
                    q_out[e, qs + c] = T(wp.float64(q_out[e, qs + c]) + dp[c])

    @wp.func(inline=False)
    def velocity_caps(md: MD, sc: SC, e: int, u: A2, o: V3):
        """PhysX's ``physxRigidBody:maxAngularVelocity`` / ``maxLinearVelocity`` where authored
        (``ModelData.link_cap``, angular and linear per link; else ``NO_CAP``): a link whose new angular speed, or its
        centre of mass's speed, is past its cap has every joint velocity on its path from the root
        scaled by the one factor that brings it to the cap, with every DOF that shares a column
        with one of them (a relation's follower), so relations hold at the velocity level. The
        link's velocities are linear in its path's joint velocities, so the factor is exact (PhysX,
        ``bodyCoreComputeUnconstrainedVelocity``, scales the angular and the linear vector each by
        its own factor: the same where one joint's speed makes both, as on a jointed link; a free
        body past one cap here slows in both).
        Links are taken root first, each from the velocities its ancestors' caps left. Skipped:
        free trees whose momentum is restored (docs/solver.md, "Velocity caps")."""
        for l in range(md.n_links):
            wmax = md.link_cap[2 * l]
            vmax = md.link_cap[2 * l + 1]
            ld = md.links[l]
            rt = md.links[ld.root]
            if (wmax < T(NO_CAP) or vmax < T(NO_CAP)) and not (rt.jtype == FREE and rt.restore != 0):
                V = SV()
                a = l
                while a >= 0:
                    la = md.links[a]
                    for d in range(la.nd):
                        V = V + sc.S[e, la.us + d] * u[e, la.us + d]
                    a = la.parent
                w = V3(V[0], V[1], V[2])
                c = sc.R[e, l] * ld.com + sc.pos[e, l] - o
                vc = V3(V[3], V[4], V[5]) + wp.cross(w, c)
                s = T(1.0)
                wn = wp.length(w)
                vn = wp.length(vc)
                if wn > wmax:
                    s = wmax / wn
                if vn * s > vmax:
                    s = vmax / vn
                if s < T(1.0):
                    for i in range(md.n_u):
                        ci = md.dof_col[i]
                        on = int(0)
                        a = l
                        while a >= 0:
                            la = md.links[a]
                            for d in range(la.nd):
                                j = la.us + d
                                if j == i or (ci >= 0 and md.dof_col[j] == ci):
                                    on = int(1)
                            a = la.parent
                        if on != 0:
                            u[e, i] = s * u[e, i]

    @wp.func
    def restore_momentum(md: MD, sc: SC, e: int, q_out: A2, u_out: A2, od: wp.vec3d):
        """The semi-implicit step conserves momentum only to O(dt^2): restore each free tree's
        exactly with a base-velocity correction (internal joint velocities, hence relations and
        loops inside the tree, untouched). Trees closed to the world or another tree are skipped."""
        momentum64(md, e, q_out, u_out, sc, od)
        base_correction(md, sc, e, u_out, od, 0)

    ns.unwrapped, ns.corrections = unwrapped, corrections
    ns.forward, ns.poses, ns.momentum64, ns.momentum_targets = forward, poses, momentum64, momentum_targets
    ns.composite_pass, ns.joint_terms = composite_pass, joint_terms
    ns.midpoint_bias = midpoint_bias
    ns.soft_coefficients, ns.exact_drive = soft_coefficients, exact_drive
    ns.mass_times_pairs, ns.mass_times_tree = mass_times_pairs, mass_times_tree
    ns.fold_drives, ns.drives_past_bound = fold_drives, drives_past_bound
    ns.displace, ns.restore_momentum, ns.base_midpoint = displace, restore_momentum, base_midpoint
    ns.turn_bases_about_com, ns.velocity_caps = turn_bases_about_com, velocity_caps
