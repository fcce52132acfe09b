"""Where the coasting four-bar's energy goes, scheme by scheme (issue 29), measured, not asserted.

    python benchmarks/loop_energy_schemes.py [--kernel] [--mujoco] [--fps 60 240 1000]

The four-bar of tests/test_solver_loops.py (no gravity, crank started at 4 rad/s, 3.5 s) in
reduced tree coordinates (crank A, coupler B, rocker D; the closure at C two planar rows),
stepped in float64 numpy by the solver's own scheme and by variants of it, so a change to the
kernel's integrator can be judged before it is written. The kernel's scheme: a first solve
``M(q) u* = M(q) u - dt c(q, u) + J^T lambda`` with ``J(q) u* = -(dt/2) dJ/dt u`` (the half-step
rate target), then the same with the bias and the rate at ``u_m = (u + u*) / 2`` for ``u+``
(``dynamics.midpoint_bias``), ``q+ = q + dt u+``, two Gauss-Newton projections of ``q+`` onto
the loop in the metric of ``M(q)``, ``u+`` kept. ``M`` and ``c`` come from the kinetic energy by finite
differences (``c = dM/dt u - dT/dq``), so the model is independent of the kernel;
``--kernel`` prints the kernel's own figures beside it. The per-phase split of the kernel's
scheme sums, over the steps, the loop impulse's work ``lambda^T J (u + u+) / 2``, the tree's
velocity update ``-dt c^T (u + u+) / 2`` (c the bias the final solve used), moving the positions ``T(q + dt u+, u+) - T(q, u+)``
and the projection. ``--mujoco``: MuJoCo's Euler on the same linkage (a connect equality at
its default softness) and the loop gap it leaves.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

BARS = {"a": 0.1, "b": 0.25, "c": 0.2, "d": 0.22}  # tests/test_solver_loops.py's BARS, THETA0, rod mass
THETA0, MASS, CRANK, SECONDS = 1.0, 0.2, 4.0, 3.5
H = 1e-6  # finite-difference step (rad)


class FourBar:
    """The linkage's kinetic energy, loop error and loop Jacobian in tree coordinates."""

    def __init__(self):
        from solver_stages import _four_bar_points

        a, b, c, d = (BARS[k] for k in "abcd")
        B, C = _four_bar_points(THETA0, a, b, c, d)
        self.phi0 = (THETA0, math.atan2(*(C - B)[::-1]), math.atan2(*(C - np.array([d, 0.0]))[::-1]))

    def angles(self, q):
        return self.phi0[0] + q[0], self.phi0[1] + q[0] + q[1], self.phi0[2] + q[2]

    def energy(self, q, u):
        a, b, c = BARS["a"], BARS["b"], BARS["c"]
        p1, p2, _ = self.angles(q)
        w1, w2, w3 = u[0], u[0] + u[1], u[2]
        vc = a * w1 * _perp(p1) + 0.5 * b * w2 * _perp(p2)
        return 0.5 * MASS * (a * a / 3 * w1**2 + vc @ vc + b * b / 12 * w2**2 + c * c / 3 * w3**2)

    def mass(self, q):
        eye = np.eye(3)
        return np.array(
            [
                [self.energy(q, eye[i] + eye[j]) - self.energy(q, eye[i]) - self.energy(q, eye[j]) for j in range(3)]
                for i in range(3)
            ]
        )

    def error(self, q):
        p1, p2, p3 = self.angles(q)
        return BARS["a"] * _dir(p1) + BARS["b"] * _dir(p2) - np.array([BARS["d"], 0.0]) - BARS["c"] * _dir(p3)

    def jacobian(self, q):
        p1, p2, p3 = self.angles(q)
        b = BARS["b"] * _perp(p2)
        return np.stack([BARS["a"] * _perp(p1) + b, b, -BARS["c"] * _perp(p3)], axis=1)

    def dT_dq(self, q, u):
        return np.array([(self.energy(q + H * e, u) - self.energy(q - H * e, u)) / (2 * H) for e in np.eye(3)])

    def bias(self, q, u):
        """Velocity-product forces c(q, u) = dM/dt u - dT/dq (what the forward pass gives)."""
        return (self.mass(q + H * u) - self.mass(q - H * u)) / (2 * H) @ u - self.dT_dq(q, u)

    def rate(self, q, u):
        """dJ/dt u."""
        return (self.jacobian(q + H * u) - self.jacobian(q - H * u)) / (2 * H) @ u

    def project(self, q, metric=None):
        for _ in range(2):
            Mi = np.linalg.inv(self.mass(q) if metric is None else metric)
            J = self.jacobian(q)
            q = q - Mi @ J.T @ np.linalg.solve(J @ Mi @ J.T, self.error(q))
        return q


def _dir(p):
    return np.array([math.cos(p), math.sin(p)])


def _perp(p):
    return np.array([-math.sin(p), math.cos(p)])


def _solve(M, J, rhs, target):
    x = np.linalg.solve(np.block([[M, J.T], [J, np.zeros((2, 2))]]), np.r_[rhs, target])
    return x[:3]


SCHEMES = {
    "kernel": "the kernel's scheme: bias and the loops' rate at (u + u+)/2 (u+ from a first solve), one re-solve",
    "start": "bias and rate at the step's start u (the kernel before midpoint_bias)",
    "no-rate": "bias at u, without the half-step rate target (the kernel before a435005)",
    "vproj-H(q)": "start + velocity projection onto the loop at q+, in the metric of M(q) (the factor the step has)",
    "vproj-M(q+)": "start + velocity projection onto the loop at q+, in the metric of M(q+) (a second factor)",
    "bias-mid-2": "bias and rate at (u + u+)/2, two re-solves",
    "symplectic": "symplectic Euler in momentum (p+ = p + dt dT/dq(q, u+), 3 fixed-point passes; u = M(q+)^-1 p+)",
}


def step(fb: FourBar, q, u, dt, scheme, split=None):
    M, J = fb.mass(q), fb.jacobian(q)
    c = fb.bias(q, u)
    half = 0.0 if scheme == "no-rate" else 0.5
    up = _solve(M, J, M @ u - dt * c, -half * dt * fb.rate(q, u))
    mids = {"kernel": 1, "bias-mid-2": 2}.get(scheme, 0)
    for _ in range(mids):
        ub = 0.5 * (u + up)
        c = fb.bias(q, ub)
        up = _solve(M, J, M @ u - dt * c, -0.5 * dt * fb.rate(q, ub))
    if scheme == "symplectic":
        for _ in range(3):
            up = _solve(M, J, M @ u + dt * fb.dT_dq(q, up), -0.5 * dt * fb.rate(q, up))
    q1 = q + dt * up
    q2 = fb.project(q1, metric=M)
    u1 = up
    if scheme == "symplectic":
        u1 = np.linalg.solve(fb.mass(q2), M @ up)
    elif scheme.startswith("vproj"):
        W = M if scheme == "vproj-H(q)" else fb.mass(q2)
        Mi, J2 = np.linalg.inv(W), fb.jacobian(q2)
        u1 = up - Mi @ J2.T @ np.linalg.solve(J2 @ Mi @ J2.T, J2 @ up)
    if split is not None:
        impulse = M @ (up - u) + dt * c  # J^T lambda
        split += [
            impulse @ (up + u) / 2,
            -dt * c @ (up + u) / 2,
            fb.energy(q1, up) - fb.energy(q, up),
            fb.energy(q2, up) - fb.energy(q1, up),
        ]
    return q2, u1


def coast(fb: FourBar, fps: int, scheme: str, split=None):
    """(energy kept at the end, lowest, highest over the run: fractions of the energy after the
    first step), as tests/test_solver_loops.py's coast_four_bar measures it."""
    dt = 1.0 / fps
    q, u = step(fb, np.zeros(3), np.array([CRANK, 0.0, 0.0]), dt, scheme)
    e0 = fb.energy(q, u)
    kept = []
    for _ in range(int(round(SECONDS * fps)) - 1):
        q, u = step(fb, q, u, dt, scheme, split)
        kept.append(fb.energy(q, u) / e0)
    return kept[-1], min(kept), max(kept), e0


def mujoco_coast(fps: int):
    """MuJoCo's Euler on the same linkage (connect equality, default solref/solimp), from the
    same start made tangent to the loop: (energy kept, largest loop gap in m)."""
    import mujoco
    from solver_stages import _four_bar_points

    a, b, c, d = (BARS[k] for k in "abcd")
    B, C = _four_bar_points(THETA0, a, b, c, d)

    def rod(p0, p1):
        length = float(np.linalg.norm(p1 - p0))
        mid, inertia = (p0 + p1) / 2, MASS * length**2 / 12
        return f'<inertial pos="{mid[0]} {mid[1]} 0" mass="{MASS}" diaginertia="{inertia} {inertia} {inertia}"/>'

    xml = f"""<mujoco><option timestep="{1.0 / fps}" gravity="0 0 0" integrator="Euler"/><worldbody>
      <body name="crank">{rod(np.zeros(2), B)}<joint name="A" type="hinge" axis="0 0 1"/>
        <body name="coupler">{rod(B, C)}<joint name="B" type="hinge" axis="0 0 1" pos="{B[0]} {B[1]} 0"/></body></body>
      <body name="rocker">{rod(np.array([d, 0.0]), C)}<joint name="D" type="hinge" axis="0 0 1" pos="{d} 0 0"/></body>
      </worldbody><equality><connect body1="coupler" body2="rocker" anchor="{C[0]} {C[1]} 0"/></equality></mujoco>"""
    mdl = mujoco.MjModel.from_xml_string(xml)
    dat = mujoco.MjData(mdl)
    M = np.zeros((3, 3))

    def energy():
        mujoco.mj_forward(mdl, dat)
        mujoco.mj_fullM(mdl, dat, M)
        return 0.5 * dat.qvel @ M @ dat.qvel

    dat.qvel[:] = [CRANK, 0.0, 0.0]
    energy()
    J = dat.efc_J.reshape(-1, 3)[:3]
    Mi = np.linalg.inv(M)
    dat.qvel[:] -= Mi @ J.T @ np.linalg.lstsq(J @ Mi @ J.T, J @ dat.qvel, rcond=None)[0]
    mujoco.mj_step(mdl, dat)
    e0, gap = energy(), 0.0
    for _ in range(int(round(SECONDS * fps)) - 1):
        mujoco.mj_step(mdl, dat)
        gap = max(gap, float(np.abs(dat.efc_pos[:3]).max()))
    return energy() / e0, gap


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fps", type=int, nargs="*", default=[60, 240, 1000])
    ap.add_argument("--kernel", action="store_true", help="also the kernel's own figures (float64)")
    ap.add_argument("--mujoco", action="store_true")
    args = ap.parse_args(argv)
    fb = FourBar()
    print(f"Coasting four-bar, energy kept after {SECONDS} s (lowest .. highest over the run), float64 numpy:")
    for name, what in SCHEMES.items():
        cells = []
        for fps in args.fps:
            kept, lo, hi, _ = coast(fb, fps, name)
            cells.append(f"{fps} Hz {100 * kept:5.1f} % [{100 * lo:.1f} .. {100 * hi:.1f}]")
        print(f"  {name:12s} " + "  ".join(cells) + f"   ({what})", flush=True)
    for fps in args.fps:
        split = np.zeros(4)
        kept, _, _, e0 = coast(fb, fps, "kernel", split)
        print(
            f"  kernel scheme at {fps} Hz, summed over the steps as % of the start energy: loop impulse "
            f"{100 * split[0] / e0:+.2f}, tree velocity update {100 * split[1] / e0:+.1f}, moving the positions "
            f"{100 * split[2] / e0:+.1f}, projection {100 * split[3] / e0:+.3f}"
        )
    if args.kernel:
        import test_solver_loops as L
        import warp as wp

        wp.config.quiet = True
        print(
            "  the kernel itself (float64): "
            + "  ".join(f"{fps} Hz {100 * L.coast_four_bar(fps, 'float64')[0]:.1f} %" for fps in args.fps)
        )
    if args.mujoco:
        print(
            "MuJoCo (Euler, connect at its default solref/solimp): "
            + "  ".join(
                "{} Hz {:.1f} % (loop gap {:.1e} m)".format(fps, *np.multiply(mujoco_coast(fps), (100, 1)))
                for fps in args.fps
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
