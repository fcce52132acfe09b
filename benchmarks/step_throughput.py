"""Environment-steps per second of the mimic solver on the Robotiq 2F-85 tree, next to peers.

    python benchmarks/step_throughput.py [--steps 200] [--sizes 1 64 1024 4096] [--quick]

Builds the 2F-85 (six revolute joints, five mimic relations) from the shared
``pybullet_ur5_robotiq/urdf/robotiq_85.urdf`` through ``mimic_ext.importers.import_robot``
(or, without it, the shared Robotiq PhysX USD with its base welded), steps it on the CPU for
N = 1, 64, 1024, 4096 environments, and prints env-steps/s next to MuJoCo (``mj_step`` on
the same mechanism, joint equalities, one thread) and, when installed, Newton's
``SolverFeatherstone`` (same URDF through ``ModelBuilder.add_urdf``, which turns ``<mimic>``
into joint-owned mimics that Featherstone reduces exactly; same N worlds replicated, same
link masses as ours), once with its defaults and once with ``use_tile_gemm=True``. Also prints
Warp's first-compile and cached-load times of our solver module and Newton's first-run time
(measured in fresh subprocesses, the first with an empty kernel cache; float32 and float64
modules both, with their CPU time, which varies less than wall time on a busy machine).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
import xml.etree.ElementTree as ET
from functools import lru_cache
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


#: Newton's Featherstone applies joint limits as explicit penalty springs; its defaults
#: (ke 1e4 N m/rad, kd 10 N m s/rad) blow up (|q| ~ 1e3 rad after 3 steps, then NaN) at
#: dt = 1/240 on these 0.1 kg, 1e-4 kg m^2 links, and so does ke 50, kd 0.05. With these the
#: gripper rests 1.2 mrad past its limits (ours holds it at 0); gains do not change the work per step.
NEWTON_LIMIT_KE, NEWTON_LIMIT_KD = 10.0, 0.01


def newton_missing() -> str | None:
    """Why the Newton peer is not measured here, or None when it is."""
    try:
        import newton
    except ImportError:
        return "not installed"
    if not hasattr(newton.ModelBuilder, "set_joint_mimic"):
        return f"{newton.__version__} has no joint-owned mimics (needs >= 1.8): not measured"
    return None


@lru_cache(maxsize=1)
def newton_gripper():
    """One 2F-85 in a Newton ModelBuilder, the same mechanism as ours, or None without newton.

    The URDF goes through Newton's own importer (frames, axes, limits, ``<mimic>`` ->
    ``set_joint_mimic``) with visuals and collisions stripped: our solver has no contacts, so
    Newton gets no shapes (no contact kernels, no mesh loading). The URDF's inertials are
    commented out, so each body gets our model's mass, COM and inertia for the link of the
    same name (the 0.1 kg / 5 cm sphere default); fixed joints are collapsed as ours are.
    """
    if newton_missing():
        return None
    import newton
    import warp as wp
    model, _ = build(1)
    root = ET.parse(URDF).getroot()
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    b = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=tuple(float(g) for g in model.gravity))
    b.add_urdf(ET.tostring(root, encoding="unicode"), floating=False, collapse_fixed_joints=True)
    links = {lk.body.split("/")[-1]: lk for lk in model.links}
    names = [p.split("/")[-1] for p in model.joint_paths]
    nw_names = [lab.split("/")[-1] for lab in b.joint_label]
    if sorted(links) != sorted(lab.split("/")[-1] for lab in b.body_label) or sorted(names) != sorted(nw_names):
        raise RuntimeError("Newton's import of the URDF does not have our links/joints: not the same mechanism")
    for i, lab in enumerate(b.body_label):
        lk = links[lab.split("/")[-1]]
        b.body_mass[i], b.body_inv_mass[i] = float(lk.mass), 1.0 / float(lk.mass)
        b.body_com[i] = wp.vec3(*lk.com)
        b.body_inertia[i] = wp.mat33(*lk.inertia.flatten())
        b.body_inv_inertia[i] = wp.mat33(*np.linalg.inv(lk.inertia).flatten())
    perm = [nw_names.index(n) for n in names]          # our joint i -> Newton joint perm[i]
    for i, j in enumerate(perm):
        d = b.joint_qd_start[j]
        b.joint_armature[d] = float(model.armature[i])
        b.joint_target_ke[d], b.joint_target_kd[d] = float(model.stiffness[i]), float(model.drive_damping[i])
        b.joint_limit_ke[d], b.joint_limit_kd[d] = NEWTON_LIMIT_KE, NEWTON_LIMIT_KD
    mimics = {(nw_names[f], nw_names[r], round(float(b.joint_mimic_coeffs[f][1]), 6),
               round(float(b.joint_mimic_coeffs[f][0]), 6)) for f, r in enumerate(b.joint_mimic_joint) if r >= 0}
    ours = {(r.follower.split("/")[-1], r.leader.split("/")[-1], round(float(r.multiplier), 6),
             round(float(r.offset), 6)) for r in model.projection.rows}
    return b, perm, mimics == ours, len(mimics)


def newton_solver(num_envs: int, tile_gemm: bool):
    """N replicated grippers (one world each, as ours has one environment each) and their solver."""
    import newton
    single, perm, _, _ = newton_gripper()
    mb = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=tuple(float(g) for g in single.gravity))
    mb.replicate(single, num_envs)
    m = mb.finalize(device="cpu")
    # angular_damping 0: ours has no such artificial damping (it costs the same either way)
    solver = newton.solvers.SolverFeatherstone(m, angular_damping=0.0, use_tile_gemm=tile_gemm)
    s0, s1, ctl = m.state(), m.state(), m.control()
    newton.eval_fk(m, s0.joint_q, s0.joint_qd, s0)
    return m, solver, s0, s1, ctl, perm


def newton_rate(num_envs: int, steps: int, tile_gemm: bool = False) -> tuple[float, float] | None:
    """(env-steps/s, seconds per step) for the same sweep as ``warp_rate``; None without newton.

    Newton's step is ~20 kernel launches from Python; on the CPU there is no CUDA graph to
    replay them, so each step pays that launch overhead (ours replays one recorded launch).
    """
    gripper = newton_gripper()
    if gripper is None:
        return None
    import warp as wp
    single, perm = gripper[:2]
    lo, hi = single.joint_limit_lower[perm[0]], single.joint_limit_upper[perm[0]]   # the URDF's, as ours
    _, solver, s0, s1, ctl, _ = newton_solver(num_envs, tile_gemm)
    tq = ctl.joint_target_q.numpy().reshape(num_envs, -1)
    tq[:, perm[0]] = np.linspace(lo, hi, num_envs)
    ctl.joint_target_q.assign(tq.reshape(-1))
    for _ in range(5):                                  # the first step compiles the kernels
        solver.step(s0, s1, ctl, None, DT)
        s0, s1 = s1, s0
    wp.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        solver.step(s0, s1, ctl, None, DT)
        s0, s1 = s1, s0
    wp.synchronize()
    el = time.perf_counter() - t
    assert np.isfinite(s0.joint_q.numpy()).all()
    return num_envs * steps / el, el / steps


def newton_agreement(steps: int = 8) -> float:
    """Max |q_newton - q_ours| (rad) after ``steps`` steps from rest at finger_joint = 0.4 rad.

    Mid-range, so no limit is active, and short enough that no joint reaches the URDF's
    2 rad/s velocity limit (ours enforces it, Newton's Featherstone does not): a check that
    both simulate the same masses, frames, gravity and relations, not a timing.
    """
    from mimic_ext.solver import Solver
    model, _ = build(1)
    mult = np.ones(len(model.joint_paths))
    for r in model.projection.rows:
        mult[model.joint_paths.index(r.follower)] = r.multiplier
    q0 = 0.4 * mult
    for r in model.projection.rows:
        q0[model.joint_paths.index(r.follower)] += r.offset
    _, solver, n0, n1, nctl, perm = newton_solver(1, False)
    qn = n0.joint_q.numpy()
    qn[perm] = q0
    n0.joint_q.assign(qn)
    ours = Solver(model)
    o0, o1, octl = model.state(), model.state(), model.control()
    qo = o0.joint_q.numpy()
    qo[0, :len(q0)] = q0
    o0.joint_q.assign(qo)
    for _ in range(steps):
        solver.step(n0, n1, nctl, None, DT)
        n0, n1 = n1, n0
        ours.step(o0, o1, octl, DT)
        o0, o1 = o1, o0
    return float(np.abs(n0.joint_q.numpy()[perm] - o0.joint_q.numpy()[0]).max())


def newton_first_run() -> tuple[float, float]:
    """(seconds to the end of the first default step, extra seconds for the tile-GEMM first step).

    Starts after the import and the URDF parse (``newton_gripper``, which also builds our model
    for the masses): replicate + finalize + solver + one step at N = 1, mostly Warp compiling
    Newton's kernel modules into an empty cache, or loading them from it.
    """
    import warp as wp
    newton_gripper()
    t = time.perf_counter()
    _, solver, s0, s1, ctl, _ = newton_solver(1, False)
    solver.step(s0, s1, ctl, None, DT)
    wp.synchronize()
    first = time.perf_counter() - t
    t = time.perf_counter()
    _, solver, s0, s1, ctl, _ = newton_solver(1, True)
    solver.step(s0, s1, ctl, None, DT)
    wp.synchronize()
    return first, time.perf_counter() - t


def newton_compile_times() -> tuple[tuple[float, float], tuple[float, float]]:
    """newton_first_run() into an empty kernel cache, then again from that cache (fresh processes)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--newton-first-run"]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, WARP_CACHE_PATH=tmp)
        for _ in range(2):
            words = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.split()
            out.append((float(words[-2]), float(words[-1])))
    return out[0], out[1]


_COMPILE = """
import resource, time, warnings
warnings.simplefilter('ignore')
import warp as wp
wp.config.quiet = True
wp.init()
from mimic_ext.solver.kernels import PRECISIONS, kernels
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
for p in PRECISIONS:
    module = wp.get_module(kernels(p).module)
    c, t = cpu(), time.perf_counter()
    module.load(wp.get_device('cpu'))
    print(p, time.perf_counter() - t, cpu() - c)
"""


def compile_times() -> dict[str, tuple[float, float, float]]:
    """Per precision (float32 first, then float64 in the same process, as a user of both would):
    (wall s, CPU s) of compiling its solver module into an empty kernel cache, and wall s of
    loading it from the cache. The first compile of a process also pays for Warp's precompiled
    header (about 3 s of CPU here)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, WARP_CACHE_PATH=tmp)
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", _COMPILE], env=env, capture_output=True, text=True, check=True)
            runs.append({ln.split()[0]: [float(x) for x in ln.split()[1:]] for ln in out.stdout.splitlines()
                         if ln.split() and ln.split()[0].startswith("float")})
    first, cached = runs
    return {p: (first[p][0], first[p][1], cached[p][0]) for p in first}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1, 64, 1024, 4096])
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time subprocesses")
    ap.add_argument("--quick", action="store_true",
                    help="N = 1, 64, 1024 only, 100 steps, no compile-time subprocesses (about 10 s)")
    ap.add_argument("--newton-first-run", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    import warp as wp
    wp.config.quiet = True                      # older Warp; newer ones read log_level
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)
    if args.newton_first_run:                   # the subprocess of newton_compile_times()
        warnings.simplefilter("ignore")
        print(*newton_first_run())
        return 0
    if args.quick:
        args.sizes, args.steps, args.no_compile = [n for n in args.sizes if n <= 1024], 100, True
    model, src = build(1)
    print(f"mechanism: {src}: {len(model.joint_paths)} joints, {len(model.projection.rows)} relations, "
          f"{model.dof_count} DOFs, reduced to {model.projection.columns()[4]}")
    if not args.no_compile:
        times = compile_times()
        for p, (wall, cpu, cached) in times.items():
            print(f"warp solver module {p}: first compile {wall:.2f} s ({cpu:.2f} s CPU), cached load {cached * 1e3:.1f} ms")
        print(f"warp solver modules, both: first compile {sum(t[0] for t in times.values()):.2f} s "
              f"({sum(t[1] for t in times.values()):.2f} s CPU); machine load {os.getloadavg()[0]:.1f}")
    mj = mujoco_rate(args.steps)
    print("mujoco mj_step (1 thread): " + (f"{mj:,.0f} env-steps/s ({1e6 / mj:.1f} us/step)" if mj else "not installed"))
    gripper = newton_gripper()
    if gripper is None:
        print(f"newton featherstone: {newton_missing()}")
    else:
        import newton
        _, _, same, count = gripper
        print(f"newton {newton.__version__} SolverFeatherstone (cpu, no CUDA graph): {count} joint-owned mimics from "
              f"<mimic>, {'the same as ours' if same else 'NOT the same as ours'}, reduced exactly by the solver; "
              f"limits as penalty springs ke {NEWTON_LIMIT_KE:g}, kd {NEWTON_LIMIT_KD:g}; no velocity limits")
        print(f"newton vs ours, 8 steps from rest at finger_joint 0.4 rad: max |dq| {newton_agreement():.1e} rad")
        if not args.no_compile:
            (f_def, f_tile), (c_def, c_tile) = newton_compile_times()
            print(f"newton first run (replicate + finalize + solver + first step, N = 1): empty kernel cache "
                  f"{f_def:.1f} s (+{f_tile:.1f} s for use_tile_gemm), cached {c_def:.2f} s (+{c_tile:.2f} s)")
    print(f"{'N':>6} {'env-steps/s':>12} {'us/step':>9} {'x mujoco':>9} {'newton':>9} {'x newton':>9} "
          f"{'newton tile':>12} {'x tile':>7}")
    for n in args.sizes:
        steps = max(20, args.steps if n <= 64 else args.steps // 4)
        rate, per = warp_rate(n, steps)
        ratio = f"{rate / mj:9.2f}" if mj else "      n/a"
        row = f"{n:>6} {rate:>12,.0f} {per * 1e6:>9.1f} {ratio}"
        nw = newton_rate(n, steps, tile_gemm=False)
        nt = newton_rate(n, steps, tile_gemm=True)
        if nw is None:
            row += f" {'-':>9} {'-':>9} {'-':>12} {'-':>7}"
        else:
            row += f" {nw[0]:>9,.0f} {rate / nw[0]:>9.1f} {nt[0]:>12,.0f} {rate / nt[0]:>7.1f}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
