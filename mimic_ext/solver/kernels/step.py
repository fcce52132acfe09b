"""The step: one thread per environment does the whole articulation step in one launch.

Order: position-error corrections u0, forward kinematics and bias forces (then, in a contact
model, collision detection and the contact rows: ``contact_rows``), loop rows, the
composite pass (the reduced system's slots, f), joint terms (armature, damping, implicit
drives), the compliant rows, the sparse LDL^T factorisation, the exact loop solve (in a loop
model, once more with the bias and the loops' rate at the mid-step velocity), the joint rows
(limits, caps, friction, drive bounds; contacts in the same Gauss-Seidel), u+ = S v + u0, the
coupling impulses (where the step must: else ``coupling_kernel`` on demand), integration,
a floating tree's momentum restoration, and a flag for an environment whose state is no
longer finite.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import warp as wp

from .dynamics import F_CONT, FREE, TURNS_MAX

RUNAWAY = wp.constant(2)  # the finiteness flag's bit for a speed past ``ModelData.max_speed``


def build(ns) -> None:
    T, V3 = ns.T, ns.vec3
    A2 = wp.array2d(dtype=T)
    I2 = wp.array2d(dtype=wp.int32)
    A3 = wp.array3d(dtype=T)
    I1 = wp.array(dtype=wp.int32)
    MD, SC = ns.ModelData, ns.Scratch
    f = ns

    @wp.func
    def origin(md: MD, e: int, q: A2):
        """The point spatial quantities are taken about: the first root's joint or base frame."""
        root = md.links[0]
        o = root.pp
        if root.jtype == FREE:
            o = V3(q[e, root.qs], q[e, root.qs + 1], q[e, root.qs + 2])
        return o

    @wp.func
    def step_env(
        md: MD,
        sc: SC,
        e: int,
        ce: int,
        q_in: A2,
        u_in: A2,
        t_in: I2,
        target_pos: A2,
        target_vel: A2,
        effort: A2,
        dt: T,
        q_out: A2,
        u_out: A2,
        t_out: I2,
    ):
        """One environment ``e`` through one step, its control read from row ``ce`` of the
        control arrays (a schedule of many steps keeps one row per step and environment)."""
        ws = sc.ws
        rel_imp = sc.rel_imp
        rel_err = sc.rel_err
        n = md.n_u
        k = md.k
        o = origin(md, e, q_in)
        f.corrections(md, sc, e, q_in, t_in, dt)
        f.forward(md, e, q_in, u_in, sc, o, dt)
        if wp.static(ns.contacts):  # contact models: detect on these frames, build the contact rows
            f.contact_detect(md, sc, e, o, dt)
        od = wp.vec3d(o)
        # free trees' momentum restoration (kernels(momentum=True): float_bases is FLOAT_RESTORED;
        # contact models restore no momentum: no bookkeeping)
        if wp.static(ns.momentum):
            f.momentum64(md, e, q_in, u_in, sc, od)
            f.momentum_targets(md, sc, e, ce, effort, dt)
        if md.m > 0:
            f.loop_rows(md, sc, e, o, dt, 1)
            f.loop_rate_targets(md, ws, e, u_in, 0, dt)
        f.composite_pass(md, sc, e, ce, u_in, effort, dt)
        if k < n and md.tree_mass != 0:  # f -= M u0 (a shallow tree's is in the pass)
            f.mass_times_tree(md, sc, e, md.o_u0, md.o_f, T(-1.0))
        if md.n_soft > 0 or md.drive_exact != 0:  # the mass-only reduced matrix, for the relations'
            for i in range(md.nnz):  # and the exact drives' effective mass
                ws[e, md.o_HM + i] = ws[e, md.o_HB + i]
            for j in range(md.n1):
                jd = md.joints[j]
                cc = md.o_HM + jd.col
                ws[e, cc] = ws[e, cc] + jd.gain * jd.gain * jd.armature
            if md.drive_exact != 0:
                f.drive_inertias(md, ws, e)
        f.joint_terms(md, sc, e, ce, q_in, u_in, t_in, target_pos, target_vel, dt)
        for c in range(k):
            ws[e, md.o_bhB + c] = T(0.0)
        for i in range(n):
            cc = md.o_bhB + md.dof_col[i]
            ws[e, cc] = ws[e, cc] + md.dof_gain[i] * ws[e, md.o_f + i]
        for g in range(md.n_rel):
            rd = md.rels[g]
            rel_err[e, g] = T(
                f.unwrapped(q_in, t_in, e, rd.f, rd.cont) - rd.m64 * f.unwrapped(q_in, t_in, e, rd.l, rd.cont) - rd.c64
            )
            rel_imp[e, g] = T(0.0)
        if md.n_soft > 0:
            f.soft_rows(md, sc, e, q_in, u_in, t_in, dt)
        # the velocity-level solve; repeated once when a folded drive ends past its max force
        for solve_pass in range(2):
            f.fold_drives(md, ws, e)
            if md.n_soft > 0:
                f.soft_fold(md, ws, e)
            f.sparse_factor(md.lp, ws, e, md.o_H, md.o_kH)
            for c in range(k):
                ws[e, md.o_v + c] = ws[e, md.o_bh + c]
            f.sparse_solve(md.lp, ws, e, md.o_H, md.o_kH, md.o_v, 0, k)
            if md.m > 0:
                f.loop_solve(md, ws, e)
                # a loop model: the bias and the rate again at (u + u+) / 2, one re-solve (``midpoint_bias``;
                # u+ of this first solve, before the rows)
                if solve_pass == 0:
                    f.midpoint_bias(md, sc, e, u_in, o, dt)
                    f.loop_rate_targets(md, ws, e, u_in, 2, dt)
                    for c in range(md.loop_c0, md.loop_c1):  # the loops' group alone moved
                        ws[e, md.o_v + c] = ws[e, md.o_bh + c]
                    f.sparse_solve(md.lp, ws, e, md.o_H, md.o_kH, md.o_v, md.loop_c0, md.loop_c1)
                    f.loop_lambda(md, ws, e)
            if md.has_rows != 0:
                f.joint_rows(md, sc, e, q_in, dt)
            if solve_pass == 1:
                break
            again = f.drives_past_bound(md, ws, e, dt)
            if md.m > 0 and md.has_rows != 0:  # a row stopped the loops: their rate at that velocity
                if f.loop_retarget(md, ws, e, u_in, dt) != 0:
                    again = int(1)
            if again == 0:
                break
        for i in range(n):
            u_out[e, i] = md.dof_gain[i] * ws[e, md.o_v + md.dof_col[i]] + ws[e, md.o_u0 + i]
        if wp.static(ns.caps):  # authored PhysX velocity caps (kernels(caps=True)), before the positions move
            f.velocity_caps(md, sc, e, u_out, o)
        if md.n_rel > 0 and md.coupling_in_step != 0:  # else on demand: coupling_kernel
            f.coupling_impulses(md, sc, e, u_out, rel_imp, dt)
        if wp.static(ns.momentum):  # a free tree's base moves at the implicit midpoint's velocity
            f.base_midpoint(md, sc, e, q_in, t_in, u_in, u_out, q_out, t_out, od, dt)
        for i in range(n):  # q+ = q (+) dt u+
            ws[e, md.o_res + i] = u_out[e, i]
        f.displace(md, ws, e, md.o_res, dt, q_in, t_in, q_out, t_out)
        if wp.static(ns.momentum):
            f.turn_bases_about_com(md, sc, e, md.o_res, dt, q_in, q_out)
        if md.drive_exact != 0:
            f.drive_positions(md, ws, e, u_in, u_out, q_out, t_out, dt)
        if md.m > 0:  # two Gauss-Newton projections onto the closed loops, fewer if closed
            for proj in range(2):
                if f.loop_project(md, sc, e, q_out, t_out, o, dt) == 0:
                    break
        if wp.static(ns.momentum):
            f.restore_momentum(md, sc, e, q_out, u_out, od)
        # one sum of the new state: a NaN or inf anywhere makes it non-finite
        acc = T(0.0)
        fastest = T(0.0)
        for i in range(n):
            acc = acc + u_out[e, i]
            fastest = wp.max(fastest, wp.abs(u_out[e, i]))
        for i in range(q_out.shape[1]):
            acc = acc + q_out[e, i]
        bad = int(0)
        if not wp.isfinite(acc):
            bad = int(1)
        if md.has_cont != 0:  # a turn count no motion leaves (a user's reset that kept it) counts too
            for j in range(md.n1):
                tj = t_out[e, j]  # not abs: |INT_MIN| is INT_MIN
                if (md.joints[j].flags & F_CONT) != 0 and (tj > TURNS_MAX or tj < -TURNS_MAX):
                    bad = int(1)
        if fastest > md.max_speed:  # a runaway, flagged when it happens, long before any overflow
            bad = bad | RUNAWAY
        sc.nonfinite[e] = bad

    @wp.func
    def record(src: A2, history: A3, k: int, e: int):
        for i in range(src.shape[1]):
            history[k, e, i] = src[e, i]

    @wp.func(inline=False)
    def run_env(
        md: MD,
        sc: SC,
        e: int,
        n_env: int,
        steps: int,
        q_a: A2,
        u_a: A2,
        t_a: I2,
        q_b: A2,
        u_b: A2,
        t_b: I2,
        target_pos: A2,
        target_vel: A2,
        effort: A2,
        dt: T,
        slot: I1,
        history: A3,
    ):
        """Environment ``e`` through ``steps`` steps from state ``a``, alternating between ``a``
        and ``b`` (step ``s`` reads control row ``s * n_env + e``; positions after it go to
        ``history[slot[s], e]`` when ``slot[s] >= 0``; the health flags are the OR over the
        steps). Both kernels call it, so the step is one call site. ``step_env`` stays a call
        of its own (clang does not inline it, and forcing it inline measured 4-11 % slower on
        the Robotiq): it is handed the model and scratch structs (some 2.8 KB) by value each
        step, about 3 % of a Robotiq step's samples."""
        bad = int(0)
        for s in range(steps):
            q_i = q_a
            u_i = u_a
            t_i = t_a
            q_o = q_b
            u_o = u_b
            t_o = t_b
            if s % 2 == 1:
                q_i = q_b
                u_i = u_b
                t_i = t_b
                q_o = q_a
                u_o = u_a
                t_o = t_a
            step_env(md, sc, e, s * n_env + e, q_i, u_i, t_i, target_pos, target_vel, effort, dt, q_o, u_o, t_o)
            bad = bad | sc.nonfinite[e]
            k = slot[s]
            if k >= 0:
                record(q_o, history, k, e)
        sc.nonfinite[e] = bad

    @wp.kernel(module=ns.module)
    def step_kernel(
        md: MD,
        sc: SC,
        e0: int,
        q_in: A2,
        u_in: A2,
        t_in: I2,
        target_pos: A2,
        target_vel: A2,
        effort: A2,
        dt: T,
        q_out: A2,
        u_out: A2,
        t_out: I2,
        no_slot: I1,
        no_history: A3,
    ):
        """Environments ``e0 .. e0 + dim - 1`` (a launch per thread takes one slice) through one step.

        Model in: ``md`` (the model's ``ModelData`` with this solver's options).
        State in: ``q_in``, ``u_in``, ``t_in`` (positions, velocities, whole turns), per environment.
        Control in: ``target_pos``, ``target_vel``, ``effort`` (drive targets, efforts), ``dt``.
        Out: ``q_out``, ``u_out``, ``t_out`` (may alias the inputs); ``sc`` (the work space, the
        coupling impulses, the finiteness flags). ``no_slot`` is ``[-1]`` (nothing recorded) and
        ``no_history`` any array."""
        e = wp.tid() + e0
        run_env(
            md,
            sc,
            e,
            0,
            1,
            q_in,
            u_in,
            t_in,
            q_out,
            u_out,
            t_out,
            target_pos,
            target_vel,
            effort,
            dt,
            no_slot,
            no_history,
        )

    @wp.kernel(module=ns.module)
    def loop_eval_kernel(md: MD, sc: SC, q: A2, J_out: A2, err_out: A2):
        """The loop rows' errors and full Jacobian at q (for the model's build-time analysis).

        Model in: ``md``. State in: ``q``. Out: ``err_out`` (per loop row), ``J_out`` (rows x DOFs,
        row-major); ``sc`` as scratch."""
        e = wp.tid()
        n = md.n_u
        o = origin(md, e, q)
        for j in range(n):
            sc.ws[e, md.o_u0 + j] = T(0.0)
        f.poses(md, sc, e, q, o)
        f.loop_rows(md, sc, e, o, T(1.0), 0)
        for r in range(md.m):
            err_out[e, r] = sc.ws[e, md.o_eL + r]
            for j in range(n):
                J_out[e, r * n + j] = sc.ws[e, md.o_JL + r * n + j]

    @wp.kernel(module=ns.module)
    def coupling_kernel(md: MD, sc: SC, u_plus: A2, dt: T):
        """The last step's coupling impulses from what it left in the work space (a model whose
        step does not compute them: ``ModelData.coupling_in_step`` 0).

        Model in: ``md``. State in: ``sc`` (the work space the last step left), ``dt`` (its step).
        Out: ``sc.rel_imp`` (per relation: the impulse on the follower); ``u_plus`` receives u+ as
        the step formed it, the same arithmetic, so the impulses are bitwise the step's own."""
        e = wp.tid()
        ws = sc.ws
        for i in range(md.n_u):
            u_plus[e, i] = md.dof_gain[i] * ws[e, md.o_v + md.dof_col[i]] + ws[e, md.o_u0 + i]
        f.coupling_impulses(md, sc, e, u_plus, sc.rel_imp, dt)

    ns.step_env, ns.run_env, ns.step_kernel, ns.loop_eval_kernel = step_env, run_env, step_kernel, loop_eval_kernel
    ns.coupling_kernel = coupling_kernel


def build_many(ns) -> None:
    """``step_many_kernel``: many steps of a slice of environments in one launch.

    Environment ``e`` takes step ``s`` with control row ``s * n_env + e`` of the schedule
    arrays, alternating between the two states ``a`` and ``b`` exactly as a caller of one
    step at a time swaps them; after an odd number of steps its final state is copied back
    into ``a``. Positions after step ``s`` go to ``history[slot[s], e]`` when ``slot[s] >= 0``.
    The finiteness flag is the OR over the steps.
    """
    T = ns.T
    A2 = wp.array2d(dtype=T)
    I2 = wp.array2d(dtype=wp.int32)
    A3 = wp.array3d(dtype=T)
    I1 = wp.array(dtype=wp.int32)
    MD, SC = ns.ModelData, ns.Scratch
    run_env = ns.run_env

    @wp.func
    def copy_row(src: A2, dst: A2, e: int, row: int):
        for i in range(src.shape[1]):
            dst[row, i] = src[e, i]

    @wp.func
    def copy_turns(src: I2, dst: I2, e: int):
        for i in range(src.shape[1]):
            dst[e, i] = src[e, i]

    @wp.kernel(module=ns.module)
    def step_many_kernel(
        md: MD,
        sc: SC,
        e0: int,
        n_env: int,
        steps: int,
        q_a: A2,
        u_a: A2,
        t_a: I2,
        q_b: A2,
        u_b: A2,
        t_b: I2,
        target_pos: A2,
        target_vel: A2,
        effort: A2,
        dt: T,
        slot: I1,
        history: A3,
    ):
        """Environments ``e0 .. e0 + dim - 1`` through ``steps`` steps (see ``build_many``).

        Model in: ``md``. State in: ``q_a``, ``u_a``, ``t_a`` (and ``q_b``.. as the other buffer).
        Control in: ``target_pos``, ``target_vel``, ``effort``: row ``s * n_env + e`` for step ``s``;
        ``dt``. Out: the final state in ``q_a``, ``u_a``, ``t_a``; ``history[slot[s], e]``: the
        positions after step ``s`` where ``slot[s] >= 0``; ``sc`` as in ``step_kernel``."""
        e = wp.tid() + e0
        run_env(
            md, sc, e, n_env, steps, q_a, u_a, t_a, q_b, u_b, t_b, target_pos, target_vel, effort, dt, slot, history
        )
        if steps % 2 == 1:
            copy_row(q_b, q_a, e, e)
            copy_row(u_b, u_a, e, e)
            copy_turns(t_b, t_a, e)

    ns.step_many_kernel = step_many_kernel
