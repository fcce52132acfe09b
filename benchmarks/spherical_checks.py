"""The spherical joint's figures (issue 41), measured, not asserted: what tests/test_solver_spherical.py bounds.

    python benchmarks/spherical_checks.py [--physx]

Prints, for the spherical pendulum and the MJCF ball chain of tests/test_solver_spherical.py
(float64, 240 Hz): the largest energy excursion over 10 s as a fraction of |E0| (potential from
the pivot's height) and of the swing energy (E0 minus the hanging rest's), MuJoCo's own step on
the same pendulum; the small-oscillation periods against their closed forms; the largest
quaternion difference from MuJoCo's RK4 over the first second; with ``--physx`` the bob's
largest distance from real PhysX's (ovphysx, CPU) over 1 s; with ``--cone`` the cone limit's:
the pendulum pushed onto a 20 deg cone (float32, 2 s), its largest swing past the cone released
inside, at the edge and outside, and (with ``--physx`` too) its path and final swing against PhysX's;
then the same for a 30 x 15 deg elliptical cone (coneAngle0Limit 30, coneAngle1Limit 15) released
about x, y and (1, 1, 0): its largest swing and its largest excess over PhysX's ellipse; with
``--loop-cone`` the cone of a loop-closing spherical joint's (tests/test_solver_loop_cone.py): the
four-bar's swing at C past its 30 deg cone and its loop's gap, the pendulum held by a loop cone
against its tree cone, and (with ``--physx``) both against PhysX.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--physx", action="store_true", help="also the PhysX (ovphysx) comparison")
    ap.add_argument("--cone", action="store_true", help="only the cone limit's figures")
    ap.add_argument("--loop-cone", action="store_true", help="only the loop-closing cone's figures")
    args = ap.parse_args(argv)
    if args.cone:
        return cone(args.physx)
    if args.loop_cone:
        return loop_cone(args.physx)
    import mujoco
    import test_solver_spherical as T

    from mimic_ext.importers import import_robot
    from mimic_ext.math3d import axis_angle
    from mimic_ext.solver import build_model

    b, _, _ = T.pendulum()
    model = build_model(b.stage, precision="float64")
    q0 = model.state().joint_q.numpy()[0]
    rest = -T.M * T.G * T.D
    for u0 in ((0.0, 0.0, 1.0), (0.4, -0.2, 1.0)):
        u0 = np.array(u0)
        qs, us = T.run(model, q0, u0, 2400)
        e0 = T.energy(model, q0, u0)
        dev = np.array([T.energy(model, q, u) for q, u in zip(qs, us)]) - e0
        dev_mj = T.mujoco_pendulum_energy(mujoco, q0, u0, 2400) - e0
        print(
            f"pendulum, 0.36 rad swing, u0 {u0.tolist()}: energy over 10 s at most {np.abs(dev).max() / abs(e0):.3%} "
            f"of |E0| ({np.abs(dev).max() / (e0 - rest):.2%} of the swing energy), {dev[-240:].mean() / abs(e0):+.3%} "
            f"in the last second; MuJoCo's Euler {np.abs(dev_mj).max() / abs(e0):.3%}; the two histories "
            f"differ by at most {np.abs(dev - dev_mj).max() / np.abs(dev_mj).max():.2%} of MuJoCo's excursion"
        )
    b, _, _ = T.pendulum(tilt=((1.0, 0.0, 0.0), 0.05))
    model = build_model(b.stage, precision="float64")
    qs, _ = T.run(model, model.state().joint_q.numpy()[0], np.zeros(3), 2400)
    period = T.crossings_period(T.DT * np.arange(1, len(qs) + 1), qs[:, 0])
    closed = 2 * math.pi * math.sqrt((T.I[0] + T.M * T.D * T.D) / (T.M * T.G * T.D))
    print(f"pendulum, 0.05 rad: period {period:.5f} s, closed form {closed:.5f} s ({period / closed - 1:+.3%})")

    with tempfile.TemporaryDirectory() as tmp:
        src = T.chain_mjcf(Path(tmp) / "ball_chain.xml")
        stage = import_robot(src).stage
        model = build_model(stage, precision="float64")
        r1, r2 = axis_angle(np.array([1.0, 0.2, 0.0]), 0.4), axis_angle(np.array([0.0, 1.0, 0.0]), -0.3)
        q0 = T.chain_state(model, [r1, r2])
        u0 = np.array([0.0, 0.3, 0.0, 0.2, 0.0, 1.5])
        qs, us = T.run(model, q0, u0, 2400, every=4)
        e0 = T.energy(model, q0, u0)
        dev = np.array([T.energy(model, q, u) for q, u in zip(qs, us)]) - e0
        print(f"ball chain (MJCF), 0.4 rad swing: energy over 10 s at most {np.abs(dev).max() / abs(e0):.3%} of |E0|")
        mm = mujoco.MjModel.from_xml_path(str(src))
        mm.opt.timestep, mm.opt.integrator = T.DT / 10, mujoco.mjtIntegrator.mjINT_RK4
        md = mujoco.MjData(mm)
        md.qpos[:] = np.concatenate([np.roll(q0[0:4], 1), np.roll(q0[4:8], 1)])
        md.qvel[:] = u0
        worst = 0.0
        for q in qs[:60]:
            mujoco.mj_step(mm, md, 40)
            for k in (0, 4):
                qm = np.roll(md.qpos[k : k + 4], -1)
                worst = max(worst, float(np.abs(q[k : k + 4] - np.sign(q[k : k + 4] @ qm) * qm).max()))
        print(f"ball chain: largest quaternion difference from MuJoCo's RK4 over 1 s {worst:.2e}")
        period, shape = T.chain_slow_mode()
        eps = 0.04
        q0 = T.chain_state(
            model,
            [axis_angle(np.array([1.0, 0, 0]), eps), axis_angle(np.array([1.0, 0, 0]), eps * (shape[1] - 1))],
        )
        qs, _ = T.run(model, q0, np.zeros(6), 2400)
        measured = T.crossings_period(T.DT * np.arange(1, len(qs) + 1), qs[:, 0])
        print(
            f"ball chain, slow mode 0.04 rad: period {measured:.5f} s, closed form {period:.5f} s ({measured / period - 1:+.3%})"
        )
    if args.physx:
        for articulation in (True, False):
            gap, travel = T.physx_pendulum_gap(articulation)
            kind = "an articulation" if articulation else "a rigid body and a joint"
            print(
                f"pendulum vs PhysX (ovphysx, {kind}): bob at most {gap * 1e3:.2f} mm off over 1 s (travel {travel:.3f} m)"
            )
    return 0


def cone(physx: bool) -> int:
    """The cone limit's figures (``tests/test_solver_spherical.py``: ``coned``)."""
    import test_solver_spherical as T

    from mimic_ext.solver import build_model

    for tilt in (8.6, 20.0, 28.6):
        b, _, _ = T.coned(20.0, tilt=math.radians(tilt))
        model = build_model(b.stage)
        qs, _ = T.run(model, model.state().joint_q.numpy()[0], np.array([0.0, 0.0, 2.0]), 480)
        sw = T.swing_deg(qs)
        back = int(np.argmax(sw <= 20.0 + T.CONE_TOL_DEG))
        print(
            f"cone 20 deg, released at {tilt} deg, spinning 2 rad/s (float32, 2 s): back within it after {back} steps, "
            f"then at most {sw[back:].max() - 20.0:+.2e} deg past it; at the end {sw[-1]:.5f} deg"
        )
    if physx:
        for articulation in (True, False):
            ours, theirs = T.physx_pendulum_paths(articulation, T.coned(20.0, tilt=0.15), steps=480)
            so, st = T.bob_swing_deg(ours), T.bob_swing_deg(theirs)
            kind = "an articulation" if articulation else "a rigid body and a joint"
            print(
                f"cone vs PhysX ({kind}), released at 8.6 deg: bob at most {np.abs(theirs - ours).max() * 1e3:.2f} mm off "
                f"over 2 s (travel {np.ptp(ours, axis=0).max():.3f} m); largest swing ours {so.max():.5f}, PhysX's "
                f"{st.max():.5f} deg; at the end {so[-1]:.5f} and {st[-1]:.5f} deg"
            )
    for towards in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 1.0, 0.0)):
        b, _, _ = T.coned(30.0, 15.0, tilt=0.15, towards=towards)
        model = build_model(b.stage)
        qs, _ = T.run(model, model.state().joint_q.numpy()[0], np.zeros(3), 480)
        sw = T.swing_deg(qs)
        print(
            f"elliptical cone 30 x 15 deg, released 8.6 deg about {towards} (float32, 2 s): largest swing "
            f"{sw.max():.5f} deg, at the end {sw[-1]:.5f}; at most {T.ellipse_excess_deg(qs, 30.0, 15.0).max():+.2e} "
            f"deg past the ellipse"
        )
        if physx and towards != (1.0, 1.0, 0.0):
            for articulation in (True, False):
                ours, theirs = T.physx_pendulum_paths(articulation, T.coned(30.0, 15.0, 0.15, towards=towards), 480)
                so, st = T.bob_swing_deg(ours), T.bob_swing_deg(theirs)
                kind = "an articulation" if articulation else "a rigid body and a joint"
                print(
                    f"  vs PhysX ({kind}): bob at most {np.abs(theirs - ours).max() * 1e3:.2f} mm off over 2 s "
                    f"(travel {np.ptp(ours, axis=0).max():.3f} m); at the end {so[-1]:.5f} and {st[-1]:.5f} deg"
                )
    return 0


def loop_cone(physx: bool) -> int:
    """The loop-closing cone's figures (``tests/test_solver_loop_cone.py``)."""
    import test_solver_loop_cone as L
    import test_solver_spherical as T
    from solver_stages import closure_gaps

    from mimic_ext.solver import build_model

    for limits in ((-1.0, -1.0), (30.0, 30.0), (170.0, 30.0), (30.0, 170.0)):
        for precision in ("float64", "float32"):
            bld, _ = L.four_bar_coned(*limits)
            model, qs, frames = L.four_bar_run(bld, precision=precision)
            sw = L.swing_at_c(frames)
            gap = max(closure_gaps(model, bld.stage, q) for q in qs[::12])
            print(
                f"four-bar, cone {limits} deg on C ({precision}, 2 s): largest swing at C {sw.max():.5f} deg "
                f"({sw.max() - 30.0:+.2e} past 30), loop gap at most {gap:.1e} m"
            )
    for limits, tilt, bound in (
        ((20.0, 20.0), dict(tilt=math.radians(28.6)), 20.0),
        ((30.0, 15.0), dict(towards=(1.0, 0.0, 0.0)), 30.0),
        ((30.0, 15.0), dict(towards=(0.0, 1.0, 0.0)), 15.0),
        ((30.0, 15.0), dict(towards=(1.0, 1.0, 0.0)), 30.0),
    ):
        tb, _, _ = T.coned(*limits, **tilt)
        tree = build_model(tb.stage, precision="float64")
        tq, _ = T.run(tree, tree.state().joint_q.numpy()[0], np.zeros(3), 480)
        for side_a in ("world", "bob"):
            b, _, _ = L.loop_coned(*limits, side_a=side_a, **tilt)
            model = build_model(b.stage, precision="float64")
            qs, _ = T.run(model, model.state().joint_q.numpy()[0], np.zeros(3), 480)
            sw = T.swing_deg(qs)
            print(
                f"pendulum, cone {limits} on a loop-closing joint (body0 the {side_a}), released {tilt} (float64, 2 s): "
                f"after 24 steps at most {sw[24:].max() - bound:+.2e} deg past {bound}, "
                f"{T.ellipse_excess_deg(qs[24:], *limits).max():+.2e} past the ellipse; at the end {sw[-1]:.6f} deg, "
                f"the tree cone's {T.swing_deg(tq)[-1]:.6f}"
            )
    if physx:
        for limits in ((30.0, 30.0), (170.0, 30.0), (30.0, 170.0)):
            bld, _ = L.four_bar_coned(*limits, gravity=(-1.0, 0.0, 0.0))
            _, _, ours = L.four_bar_run(bld)
            theirs = L.physx_four_bar_frames(bld)
            so, st = L.swing_at_c(ours), L.swing_at_c(theirs)
            co, ct = L.crank_deg(ours), L.crank_deg(theirs)
            print(
                f"four-bar, gravity -X, cone {limits} on C vs PhysX (rigid bodies and joints, 2 s): largest swing "
                f"ours {so.max():.4f}, PhysX's {st.max():.4f} deg; at the end {so[-1]:.4f} and {st[-1]:.4f} deg, "
                f"crank {co[-1]:.3f} and {ct[-1]:.3f} deg (travel {np.ptp(co):.1f} deg)"
            )
        for limits, towards in (
            ((20.0, 20.0), (1.0, 0.3, 0.0)),
            ((30.0, 15.0), (1.0, 0.0, 0.0)),
            ((30.0, 15.0), (0.0, 1.0, 0.0)),
        ):
            for articulation in (True, False):
                built = L.loop_coned(*limits, tilt=0.15, towards=towards)
                ours, theirs = T.physx_pendulum_paths(articulation, built, steps=480)
                so, st = T.bob_swing_deg(ours), T.bob_swing_deg(theirs)
                kind = "an articulation" if articulation else "a rigid body and a joint"
                print(
                    f"pendulum, loop cone {limits} released about {towards} vs PhysX ({kind}): bob at most "
                    f"{np.abs(theirs - ours).max() * 1e3:.2f} mm off over 2 s; largest swing ours {so.max():.5f}; at "
                    f"the end {so[-1]:.5f} and {st[-1]:.5f} deg"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
