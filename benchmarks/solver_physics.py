"""The solver's physics figures quoted in docs/solver.md, measured, not asserted.

    python benchmarks/solver_physics.py [--no-physx] [--no-spin]

Prints: the Isaac Robotiq drive on a rotor (settling per max force, ours and, with ovphysx,
real PhysX), compliant relations' frequency and damping errors (ours; PhysX TGS with no
velocity iteration), the loop gap of the compliant Robotiq USD while its leader sweeps, and
float32 / float64 residual and speed drift of a force-free geared pair over 100,000 steps.
It reuses the test modules' helpers (tests/), which build the same stages the tests check.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def settle_step(q: np.ndarray, target: float, tol: float = 1e-3) -> int:
    """1-based step from which |q - target| stays under tol."""
    return next(i for i in range(len(q)) if np.all(np.abs(q[i:] - target) < tol)) + 1


def rotor(physx: bool) -> None:
    import test_solver_drives as D

    print("Isaac Robotiq drive (172 N m/rad, 0.0115 N m s/rad) on a 6.7e-4 kg m^2 rotor, target 0.4 rad:")
    for fps in (240, 60):
        for f in (math.inf, 62.0, 26.0, 5.0):
            q = D.rotor_trajectory(f, fps)[:, 0]
            s = settle_step(q, D.TARGET)
            line = (
                f"  {fps:3d} Hz, max force {f:>4}: ours settled within 1 mrad after {s} steps ({s / fps * 1e3:.0f} ms), "
                f"peak {q.max():.3f} rad"
            )
            if physx:
                from solver_stages import DEG, StageBuilder

                from mimic_ext.fet022.engines.physx_session import run_physx

                b = StageBuilder(fixed_base=True)
                j = b.revolute("hinge", b.base, b.body("rotor", mass=1.0, inertia=(1.0, 1.0, D.INERTIA)), "Z")
                b.drive(
                    j,
                    stiffness=D.KP * DEG,
                    damping=D.KD * DEG,
                    target=D.TARGET / DEG,
                    max_force=None if math.isinf(f) else f,
                )
                qp = run_physx(b.stage, fps, 1.0 / fps, {j: np.full(fps, D.TARGET)}, record=[j]).positions[j][0]
                sp = settle_step(qp, D.TARGET)
                line += f"; PhysX {sp} steps ({sp / fps * 1e3:.0f} ms), peak {qp.max():.3f} rad"
            print(line)


def compliant(physx: bool) -> None:
    import test_solver_compliant as C

    print("Compliant relation (I_l 1, I_f 0.5 kg m^2): frequency and damping of the relation mode, error vs authored:")
    worst_w = worst_z = 0.0
    for w, z, fps in C.CASES:
        b, lead, fol = C.pair(w, z, I_l=1.0)
        s = np.log(C.relation_mode(C.one_step_map(b.stage, lead, fol, 1.0 / fps)).astype(complex)) * fps
        wm, zm = C.frequency_and_damping(s)
        worst_w, worst_z = max(worst_w, abs(wm / w - 1)), max(worst_z, abs(zm / z - 1))
    print(
        f"  ours, w in (10, 50, 100), zeta in (0.1, 0.5, 1), 240 and 60 Hz: worst |dw/w| {worst_w:.1e}, "
        f"|dzeta/zeta| {worst_z:.1e}"
    )
    if physx:
        import test_solver_physx as P

        for fps in (240, 60):
            for w in (10.0, 50.0, 100.0):
                row = []
                for z in (0.1, 0.5, 1.0):
                    e, _ = P.relation_errors(w, z, fps)
                    wp_, zp = P.ar2_mode(e, 1.0 / fps)
                    row.append(f"zeta {z}: w {wp_ / w - 1:+.1%} zeta {zp / z - 1:+.1%}")
                print(f"  PhysX TGS (32 position, 0 velocity iterations) {fps} Hz, w {w:g}: " + "; ".join(row))


def loop_gap() -> None:
    import test_solver_loops as L
    from solver_stages import closure_gaps

    from mimic_ext.schema.stage_io import open_stage
    from mimic_ext.solver import Solver, build_model

    if not L.COMPLIANT.exists():
        return
    for fps in (240, 60):
        stage = open_stage(L.COMPLIANT).stage
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = build_model(stage, fix_base=True)
        j = model.dof_index("/Robotiq_2F_85/Robotiq_2F_85/Joints/finger_joint")
        solver = Solver(model)
        s0, s1, c = model.state(), model.state(), model.control()
        tp = c.joint_target_q.numpy()
        lo, hi = model.lower[j], model.upper[j]
        worst = 0.0
        for i in range(2 * fps):
            tp[:, j] = lo + (hi - lo) * (0.1 + 0.8 * math.sin(math.pi * i / (2 * fps)) ** 2)
            c.joint_target_q.assign(tp)
            solver.step(s0, s1, c, 1.0 / fps)
            s0, s1 = s1, s0
            worst = max(worst, closure_gaps(model, stage, s0.joint_q.numpy()[0].astype(float)))
        print(
            f"Compliant Robotiq USD, leader swept 0.1-0.9 of its range in 2 s at {fps} Hz: worst loop gap {worst:.1e} m"
        )


def spin() -> None:
    import test_solver_precision as S

    for p in ("float32", "float64"):
        for m in (2.0, -0.3):
            t = time.perf_counter()
            r, dl, df = S.spin(p, m)
            print(
                f"Geared pair (x{m:g}) spinning force-free, 100,000 steps at 240 Hz, {p}: worst residual {r:.1e} rad, "
                f"speed change {max(dl, df):.1e} ({time.perf_counter() - t:.1f} s)"
            )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-physx", action="store_true", help="skip the real-PhysX columns")
    ap.add_argument("--no-spin", action="store_true", help="skip the 100,000-step precision runs")
    args = ap.parse_args(argv)
    import warp as wp

    wp.config.quiet = True
    physx = not args.no_physx
    if physx:
        try:
            import ovphysx  # noqa: F401
        except ImportError:
            print("ovphysx not installed: PhysX columns left out")
            physx = False
    rotor(physx)
    compliant(physx)
    loop_gap()
    if not args.no_spin:
        spin()
    return 0


if __name__ == "__main__":
    sys.exit(main())
