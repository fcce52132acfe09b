"""Issue 29's physics-fidelity figures quoted in docs/solver.md, measured, not asserted.

    python benchmarks/fidelity.py [--loops] [--drives] [--drift] [--spin] [--tumble] [--no-physx]

With no section named, all of them. ``--loops``: the coasting four-bar's kinetic energy kept
after 3.5 s at 60 / 240 / 1000 Hz in float32 and float64, its loop gap, and where the energy
goes at 60 Hz (velocity solve, moving the positions, the loop projection), the open chain
beside it. ``--drives``: the implicit and exact drive discretisations against the continuous
PD response (w 10, zeta 0.1, 60 Hz), a driven leader's shift of a compliant relation's damping,
the compliant Isaac 2F-85's leader step against the same model at 32 sub-steps, and (with
ovphysx) its FET022 sweep against PhysX's. ``--drift``: issue 40's light geared pair (float32
and float64, its second rotor 0.2, 0.05 and 0 m from the first) and the force-free geared pair
with its second rotor off-axis, speed change over 100,000 steps. ``--spin``: the Isaac 2F-85 with
its root floating and an effort held on every DOF, on the joints alone, or on the base's
rotation alone, and fixed: the step it turns non-finite and the base's spin per step ten steps
before, or the spin per step at the end (since issue 40 every case stays finite). ``--tumble``: the
floating parallel-grip 2F-85 tumbling force-free at 50 / 75 / 100 rad/s, its energy and momentum. It reuses the test modules'
helpers (tests/), which build the same stages the tests check.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def loops() -> None:
    import test_solver_loops as L
    from pxr import UsdPhysics
    from solver_stages import four_bar

    from mimic_ext.solver import Solver, build_model
    from mimic_ext.solver.inspect import kinetic_energy

    print("Coasting four-bar (no gravity, crank started at 4 rad/s), kinetic energy kept after 3.5 s:")
    for precision in ("float32", "float64"):
        for fps in (60, 240, 1000):
            kept, gap = L.coast_four_bar(fps, precision)
            print(f"  {precision} {fps:4d} Hz: {100 * kept:.1f} %, loop gap at most {gap:.1e} m")
    for closed in (True, False):
        fps, dt = 60, 1.0 / 60
        bld, J, _ = four_bar(theta0=L.THETA0, **L.BARS)
        if not closed:
            UsdPhysics.Joint(bld.stage.GetPrimAtPath(J["C"])).CreateJointEnabledAttr(False)
        model = build_model(bld.stage, precision="float64")
        solver = Solver(model)
        s0, s1, c = model.state(), model.state(), model.control()
        u = s0.joint_qd.numpy()
        u[:, model.dof_index(J["A"])] = 4.0
        s0.joint_qd.assign(u)
        solver.step(s0, s1, c, dt)
        s0, s1 = s1, s0
        ke0 = kinetic_energy(model, model.unwrapped_q(s0)[0], s0.joint_qd.numpy()[0])
        split = np.zeros(3)
        for _ in range(int(3.5 * fps)):
            qn, un = model.unwrapped_q(s0)[0], s0.joint_qd.numpy()[0].copy()
            solver.step(s0, s1, c, dt)
            s0, s1 = s1, s0
            q1, up = model.unwrapped_q(s0)[0], s0.joint_qd.numpy()[0].copy()
            a, b = kinetic_energy(model, qn, un), kinetic_energy(model, qn, up)
            moved = kinetic_energy(model, qn + dt * up, up)
            split += [b - a, moved - b, kinetic_energy(model, q1, up) - moved]
        name = "four-bar" if closed else "open chain (closure disabled)"
        print(
            f"  {name}, 60 Hz, float64, summed over the steps as % of the start energy: velocity solve "
            f"{100 * split[0] / ke0:+.1f}, moving the positions {100 * split[1] / ke0:+.1f}, loop projection "
            f"{100 * split[2] / ke0:+.2f}; net {100 * split.sum() / ke0:+.1f}"
        )


def drives(physx: bool) -> None:
    import test_solver_compliant as C
    import test_solver_drive_discretisation as D

    from mimic_ext.solver import build_model

    fps, seconds = 60, 3.0
    t = np.arange(1, int(seconds * fps) + 1) / fps
    cont = 1.0 + D.pd_response(10.0, 0.1, -1.0, 0.0, t)
    print("PD drive w 10 rad/s, zeta 0.1, 1 rad step at 60 Hz, largest distance from the continuous response (3 s):")
    for scheme in ("implicit", "exact"):
        print(f"  {scheme}: {np.abs(D.rotor_run(scheme, 10.0, 0.1, fps, seconds) - cont).max():.2e} rad")
    print(
        "Compliant relation w 50, zeta 0.1 (240 Hz, 1 kg m^2 leader) with a driven leader: relation mode's "
        "damping ratio against the continuous system's:"
    )
    for kp in (50.0, 500.0, 2000.0):
        b, lead, fol = C.pair(50.0, 0.1, I_l=1.0, drive=(kp, 0.0))
        wc, zc = C.frequency_and_damping(C.continuous_mode(50.0, 0.1, 1.0, kp, 0.0))
        row = []
        for scheme in ("implicit", "exact"):
            model = build_model(b.stage, num_envs=4)
            z = C.relation_mode(C.one_step_map(b.stage, lead, fol, 1.0 / 240, model=model, drive_discretisation=scheme))
            zm = C.frequency_and_damping(np.log(z.astype(complex)) * 240)[1]
            row.append(f"{scheme} {100 * (zm / zc - 1):+.2f} %")
        print(f"  kp {kp:6.0f}: " + ", ".join(row))
    if not D.COMPLIANT.exists():
        print(f"  ({D.COMPLIANT} absent: the Isaac 2F-85 figures skipped)")
        return
    from test_solver_physx import prepared_stage

    stage = prepared_stage(D.COMPLIANT)
    ref = D._leader_step(stage, "implicit", 32)
    print(
        f"Compliant Isaac 2F-85, leader stepped 0.1 rad at 240 Hz (0.5 s), against 32 sub-steps (peak {ref.max():.4f}):"
    )
    for scheme in ("implicit", "exact"):
        q = D._leader_step(stage, scheme, 1)
        print(f"  {scheme}: largest distance {np.abs(q - ref).max():.4f} rad, peak {q.max():.4f} rad")
    if physx:
        from fet022_engines_common import Recording

        from mimic_ext.fet022 import get_engine, run
        from mimic_ext.fet022.engines.physx_session import run_physx
        from mimic_ext.fet022.engines.warp import WarpEngine

        steps = len(ref)
        qp = np.asarray(
            run_physx(stage, steps, 1.0 / 240, {D.LEADER: np.full(steps, 0.1)}, record=[D.LEADER]).positions[D.LEADER][
                0
            ],
            float,
        )
        print(
            f"  PhysX (ovphysx, its defaults): largest distance {np.abs(qp - ref).max():.4f} rad, peak {qp.max():.4f} rad"
        )
        rec = Recording(get_engine("physx"))
        run(D.COMPLIANT, engine=rec)
        theirs = rec.trace.positions
        for scheme in ("implicit", "exact"):
            ours = Recording(WarpEngine(drive_discretisation=scheme))
            run(D.COMPLIANT, engine=ours)
            worst = max(
                float(np.abs(np.asarray(ours.trace.positions[p], float) - np.asarray(theirs[p], float)).max())
                for p in theirs
                if p in ours.trace.positions
            )
            print(f"  FET022 sweep, {scheme} against PhysX: every joint within {worst:.4f} rad over the whole sweep")


def drift() -> None:
    import test_solver_precision as P

    print(
        "Issue 40's light geared pair (rotor 2, 0.2 kg, 5e-4 kg m^2, d m from rotor 1), 100,000 steps, |speed change|:"
    )
    for d in (0.2, 0.05, 0.0):
        for precision in ("float32", "float64"):
            print(f"  d = {d} m, {precision}: {abs(P.light_pair(precision, 100_000, d=d)):.2e}")

    print("Force-free geared pair (multiplier 2, offset 0.1 rad), float32, 100,000 steps at 240 Hz, |speed change|:")
    for off_axis in (0.0, 0.2):
        residual, dl, df = P.spin("float32", 2.0, off_axis=off_axis)
        print(
            f"  second rotor {off_axis} m off its axis: leader {dl:.2e}, follower {df:.2e}, relation residual "
            f"{residual:.1e} rad"
        )


def tumble() -> None:
    import test_solver_floating as F

    print("Isaac 2F-85 (parallel grip) tumbling force-free about (1,1,1)/sqrt(3), 240 Hz, 2 s (issue 40):")
    for about_com in (False, True):
        for spin in (50.0, 75.0, 100.0):
            for precision in ("float32", "float64"):
                bad, ke, mom = F._tumble(spin, precision, about_com=about_com)
                where = "centre of mass at rest" if about_com else "base origin at rest"
                state = f"non-finite at step {bad}" if bad is not None else "finite"
                print(
                    f"  {where}, {spin:5.1f} rad/s, {precision}: {state}, kinetic energy within {ke:.2%}, "
                    f"angular momentum within {mom:.1e}"
                )


def spin() -> None:
    from solver_schedules import COMPLIANT

    from mimic_ext.schema.stage_io import open_stage
    from mimic_ext.solver import Solver, build_model

    print("Isaac 2F-85, an effort held (0.3 N m or N) for 960 steps: the first non-finite step, spin per step then:")
    for name in ("compliant", "parallel_grip"):
        path = COMPLIANT.parent / f"Robotiq_2F_85_config_physics_{name}.usda"
        for where in ("every DOF", "joints alone", "base rotation alone", "every joint, base fixed"):
            for precision, fps in (("float32", 240), ("float64", 240), ("float32", 1000)):
                model = build_model(open_stage(str(path)).stage, fix_base=where.endswith("fixed"), precision=precision)
                solver = Solver(model)
                a, b, c = model.state(), model.state(), model.control()
                n1 = len(model.joint_paths)
                f = np.zeros(c.joint_f.shape)
                if where == "base rotation alone":
                    f[:, n1 : n1 + 3] = 0.3
                elif where == "joints alone":
                    f[:, :n1] = 0.3
                else:
                    f[:] = 0.3
                c.joint_f.assign(f)
                bad, spins = None, []
                for i in range(960):
                    solver.step(a, b, c, 1.0 / fps)
                    a, b = b, a
                    if len(solver.nonfinite_envs()):
                        bad = i
                        break
                    u = a.joint_qd.numpy()[0]
                    spins.append(float(np.linalg.norm(u[n1 : n1 + 3])) / fps if u.size > n1 else 0.0)
                when = spins[-10] if bad is not None and len(spins) >= 10 else (spins[-1] if spins else 0.0)
                print(
                    f"  {name:13s} {where:24s} {precision} {fps:4d} Hz: "
                    + (
                        f"non-finite at step {bad}, base spin 10 steps before"
                        if bad is not None
                        else "finite, base spin at the end"
                    )
                    + f" {when:.3f} rad per step"
                )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loops", action="store_true")
    ap.add_argument("--drives", action="store_true")
    ap.add_argument("--drift", action="store_true")
    ap.add_argument("--spin", action="store_true")
    ap.add_argument("--tumble", action="store_true")
    ap.add_argument("--no-physx", action="store_true", help="skip the ovphysx comparisons")
    args = ap.parse_args(argv)
    every = not (args.loops or args.drives or args.drift or args.spin or args.tumble)
    import warp as wp

    wp.config.quiet = True
    physx = not args.no_physx
    if physx:
        try:
            import ovphysx  # noqa: F401
        except ImportError:
            physx = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if every or args.loops:
            loops()
        if every or args.drives:
            drives(physx)
        if every or args.drift:
            drift()
        if every or args.spin:
            spin()
        if every or args.tumble:
            tumble()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
