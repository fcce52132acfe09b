"""Grasp throughput: the Menagerie 2F-85 holding a lifted box (``grasp_scene.py``), ours
against MuJoCo on the same MJCF and real PhysX (ovphysx, CPU) on the stage our importer writes
from it, env-steps per second at N = 1, 64, 1024, with each one's box slip and relation
residual.

Each engine first runs the schedule up to the start of the lift untimed (the fingers close
on the box: every environment is then in its grasp), then all are timed in interleaved
rounds (A B C A B C, medians, wall and CPU time) through the lift and into the hold, ``--steps``
steps a round. Ours runs its Warp CPU kernel on slices of the environments, one per core once
the solver has timed its first steps (each slice carrying ``MIN_SLICE_S`` of work or more);
MuJoCo runs ``mujoco.rollout`` over the environments on a persistent pool of every core
(``--threads``, default all), and ``mj_step`` on the calling thread at N = 1. PhysX steps N
clones of the gripper and its box in one scene (``grasp_scene.PhysxGrasp``: TGS, the position
iterations the USD gives, i.e. PhysX's defaults; the slide's targets written through a DOF
tensor binding each step, then ``step_sync``), its tasks on the calling thread at N = 1 and on
``--threads`` workers above, as MuJoCo (``--physx-threads`` sets them: at N = 1024 two workers
ran 4,750 env-steps/s against 3,190 on the calling thread); every clone closes on its own box in
the warm-up. TGS with the USD's iterations is the setting that held the box: with 4 position
iterations (``--physx-iterations 4``) or PGS (``--physx-solver PGS``) PhysX dropped it during the
lift (59 and 245 mm of slip over 300 steps from the lift's start, N = 1, ``--steps 100``). The slip is each engine's largest box displacement relative to the
gripper over the timed rounds (largest over environments; over a tenth of the box's edge the
row says the box was not held); the residual is the driver relation's ``q_f - q_l``, exact in
ours, a soft equality in MuJoCo, PhysX's mimic joint.

    python benchmarks/grasp_throughput.py [--sizes 1 64 1024] [--rounds 5] [--steps 20] [--peers mujoco,physx]
        [--physx-threads N] [--physx-solver TGS|PGS] [--physx-iterations K] [--cold] [--phases]

``--peers`` names the engines timed beside ours (default both); one whose package is absent
gets a row saying so.

``--cold`` first prints the cold compile of the contact kernels (a fresh ``WARP_CACHE_PATH``,
a new process: Warp's start-up, then the first step of a box on a plane, which compiles
``mimic_contact_float32`` with detection and the rows in it), wall and CPU time.

``--phases`` prints where our step's time goes, from variants timed in interleaved rounds on
the same grasp state (N = the largest size): the same mechanism in a model without contacts,
the contact step with no passes (detection, the rows, the warm-started contacts' responses
through ``C``), detection alone on the step's own frames with its margins
(``CollisionModel.collide``), and the contact step with the model's passes (a contact's
responses are computed when it first pushes, so most come with the passes).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import grasp_scene as G  # noqa: E402


def _tile_envs(src, dst, n: int) -> None:
    """Every per-environment array of the step's scratch struct ``src`` (one environment; the
    nested contact and collision structs too) into ``dst`` (``n``): whatever a step carries to
    the next (contact warm starts, the friction rows' last impulses, the broad phase's cache)."""
    import warp as wp

    for name in src._cls.vars:
        a, b = getattr(src, name), getattr(dst, name)
        if isinstance(a, wp.array):
            if n > 1 and a.shape[0] == 1 and b.shape[0] == n and a.shape[1:] == b.shape[1:]:
                v = a.numpy()
                b.assign(np.tile(v, (n,) + (1,) * (v.ndim - 1)))
        elif hasattr(a, "_cls"):
            _tile_envs(a, b, n)


class Ours:
    def __init__(self, xml: Path, n: int, device: str = "cpu"):
        self.device = device
        self.g = G.OursGrasp(xml, num_envs=n, device=device)
        self.k = 0
        self.track, self.worst = [], 0.0

    @property
    def name(self) -> str:
        """Named by the slices a step runs as now (the solver slices by the cost it timed)."""
        if not self.g.model.device.is_cpu:
            return f"ours ({self.g.model.device})"
        used = min(len(self.g.solver.launch_slices()), self.g.solver.threads)
        return f"ours (CPU kernel, {used} thread{'s' if used > 1 else ''})"

    def to_lift(self, xml: Path) -> None:
        """Close one environment on the box, then start every environment from its state
        (positions, velocities and all the scratch a step carries to the next): all N go on
        bitwise as that one environment would."""
        one = Ours(xml, 1, self.device)
        one.advance(G.lift_start())
        n = self.g.model.num_envs
        for src, dst in ((one.g.a, self.g.a), (one.g.b, self.g.b)):
            for name in ("joint_q", "joint_qd", "joint_turns"):
                getattr(dst, name).assign(np.tile(getattr(src, name).numpy(), (n, 1)))
        _tile_envs(one.g.solver._scratch, self.g.solver._scratch, n)
        self.k = G.lift_start()

    def advance(self, steps: int) -> None:
        """``steps`` steps in one ``Solver.step_many`` run per slice, the lift's targets of each step in
        its schedule (as MuJoCo's rollout gets its controls): bitwise ``steps`` calls of ``step``."""
        g = self.g
        sched = np.repeat(g.targets[None], steps, axis=0)
        sched[:, :, g.lift] = np.array([G.lift_target(self.k + i) for i in range(steps)])[:, None]
        g.solver.step_many(g.a, sched, G.DT, control=g.control)
        self.k += steps

    def observe(self) -> None:
        q = self.g.q()
        self.track.append(self.g.box_in_gripper(q))
        self.worst = max(self.worst, float(np.abs(self.g.residual(q)).max()))


class Mujoco:
    def __init__(self, xml: Path, n: int, threads: int):
        import mujoco
        from mujoco import rollout

        self.mj, self.n = mujoco, n
        self.s = G.MujocoGrasp(xml)
        self.k = 0
        self.track, self.worst = [], 0.0
        self.single = n == 1
        self.name = "MuJoCo mj_step (1 core)" if self.single else f"MuJoCo rollout ({threads} threads)"
        if not self.single:
            self.pool = rollout.Rollout(nthread=threads)
            self.datas = [mujoco.MjData(self.s.m) for _ in range(threads)]
            self.spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
            self.models = [self.s.m] * n

    def to_lift(self) -> None:
        for i in range(G.lift_start()):
            self.s.step(i)
        self.k = G.lift_start()
        if not self.single:
            size = self.mj.mj_stateSize(self.s.m, self.spec)
            st = np.zeros(size)
            self.mj.mj_getState(self.s.m, self.s.d, st, self.spec)
            self.state = np.tile(st, (self.n, 1))

    def advance(self, steps: int) -> None:
        if self.single:
            for _ in range(steps):
                self.s.step(self.k)
                self.k += 1
            return
        ctrl = np.zeros((self.n, steps, self.s.m.nu))
        ctrl[:, :, self.s.a_grip] = 255.0
        ctrl[:, :, self.s.a_lift] = [G.lift_target(self.k + i) for i in range(steps)]
        out = np.empty((self.n, steps, self.state.shape[1]))
        self.pool.rollout(
            self.models,
            self.datas,
            self.state,
            ctrl,
            control_spec=self.mj.mjtState.mjSTATE_CTRL.value,
            nstep=steps,
            state=out,
            skip_checks=True,
        )
        self.state = np.ascontiguousarray(out[:, -1, :])
        self.k += steps

    def observe(self) -> None:
        s = self.s
        qpos = s.d.qpos[None, :] if self.single else self.state[:, 1 : 1 + s.m.nq]
        p = qpos[:, s.box_q : s.box_q + 3].copy()
        p[:, 2] -= qpos[:, s.lift]
        self.track.append(p)
        self.worst = max(self.worst, float(np.abs(qpos[:, s.follower] - qpos[:, s.leader]).max()))


class Physx:
    """Real PhysX (ovphysx, CPU, TGS) on the importer's stage of the same scene (``G.PhysxGrasp``):
    every environment a clone of the gripper and its box, all stepped together, one
    ``step_sync`` per step after the step's slide targets are written."""

    def __init__(self, xml: Path, n: int, threads: int, result=None, solver="TGS", iterations=None):
        self.g = G.PhysxGrasp(xml, n, threads=threads, result=result, solver=solver, position_iterations=iterations)
        self.k = 0
        self.track, self.worst = [], 0.0
        where = "the calling thread" if threads == 0 else f"{threads} worker threads"
        its = "" if iterations is None else f", {iterations} its"
        self.name = f"PhysX CPU {solver}{its} ({where})"

    def to_lift(self) -> None:
        """Every clone closes on its own box (PhysX has no one-environment state to tile from)."""
        for i in range(G.lift_start()):
            self.g.step(i)
        self.k = G.lift_start()

    def advance(self, steps: int) -> None:
        for _ in range(steps):
            self.g.step(self.k)
            self.k += 1

    def observe(self) -> None:
        self.track.append(self.g.box_in_gripper())
        self.worst = max(self.worst, float(np.abs(self.g.residual()).max()))

    def close(self) -> None:
        self.g.close()


PEERS = ("mujoco", "physx")
LABELS = {"mujoco": "MuJoCo", "physx": "PhysX"}
_noted: set[str] = set()  # PhysX's stage edits, printed once a run
#: A box that moved more than this relative to the gripper over the timed rounds was not held
#: (a tenth of its edge: the grasps that hold move it by micrometres).
HELD = 0.1 * G.BOX


def slip(track) -> float:
    t = np.array(track)  # (rounds + 1, N, 3)
    return float(np.linalg.norm(t - t[0], axis=-1).max())


def grasp_verdict(track) -> str:
    """The slip figure with what it means: held, or the box slipped out / the step diverged."""
    d = slip(track)
    if not np.isfinite(d):
        return "slip NaN: diverged (non-finite box pose)"
    if d > HELD:
        return f"slip {d * 1e3:.1f} mm: NOT HELD (the box moved > {HELD * 1e3:.0f} mm in the gripper)"
    return f"slip {d * 1e3:.3f} mm"


def unavailable(peer: str) -> str | None:
    """Why ``peer`` cannot run here (its package absent), or None."""
    if peer == "physx":
        from mimic_ext.errors import MimicInputError
        from mimic_ext.fet022.engines.physx_session import import_ovphysx

        try:
            import_ovphysx()
        except MimicInputError as exc:
            return str(exc)
    elif peer == "mujoco":
        try:
            import mujoco  # noqa: F401
        except ImportError as exc:
            return f"MuJoCo is not installed ({exc})"
    return None


def measure(
    xml: Path,
    n: int,
    rounds: int,
    steps: int,
    threads: int,
    peers=PEERS,
    physx_threads: int | None = None,
    physx_solver: str = "TGS",
    physx_iterations: int | None = None,
) -> None:
    ours = Ours(xml, n)
    engines: list = [ours]
    missing = {}
    for peer in peers:
        why = unavailable(peer)
        if why:
            missing[peer] = why
        elif peer == "mujoco":
            engines.append(Mujoco(xml, n, threads))
        else:
            workers = physx_threads if physx_threads is not None else (0 if n == 1 else threads)
            engines.append(Physx(xml, n, workers, ours.g.result, physx_solver, physx_iterations))
            for note in engines[-1].g.notes[1:]:  # after the flattening every engine's copy gets
                if note not in _noted:
                    _noted.add(note)
                    print(f"  PhysX's copy of the stage: {note}")
    try:
        ours.to_lift(xml)
        for eng in engines[1:]:
            eng.to_lift()
        for eng in engines:
            eng.observe()
        times = {id(e): [] for e in engines}
        for _ in range(rounds):
            for eng in engines:
                w, c = time.perf_counter(), time.process_time()
                eng.advance(steps)
                times[id(eng)].append((time.perf_counter() - w, time.process_time() - c))
                eng.observe()
    finally:
        for eng in engines:
            if hasattr(eng, "close"):
                eng.close()
    rate = {}
    for eng in engines:
        wall, cpu = np.median(np.array(times[id(eng)]), axis=0)
        rate[id(eng)] = n * steps / wall
        print(
            f"  N={n:5d}  {eng.name:42s} {n * steps / wall:10.0f} env-steps/s (wall)  "
            f"{cpu / (n * steps) * 1e6:8.1f} us CPU/env-step  {grasp_verdict(eng.track)}  "
            f"relation residual {eng.worst:.1e}"
        )
    for peer, why in missing.items():
        print(f"  N={n:5d}  {LABELS[peer]:42s} not run: {why}")
    window = f"over {steps * rounds} steps, t = {G.T_CLOSE:.1f} .. {G.T_CLOSE + steps * rounds * G.DT:.2f} s"
    for eng in engines[1:]:
        label = LABELS["mujoco" if isinstance(eng, Mujoco) else "physx"]
        print(f"  N={n:5d}  ours / {label} wall-time throughput: {rate[id(ours)] / rate[id(eng)]:.2f}x  ({window})")


def phases(xml: Path, n: int, rounds: int, steps: int) -> None:
    import warp as wp

    from mimic_ext.solver import Solver, build_model
    from mimic_ext.solver.kernels.contact_rows import SPECULATIVE_SPEED

    ours = Ours(xml, n)
    ours.to_lift(xml)
    g, m = ours.g, ours.g.model
    state = {k: getattr(g.a, k).numpy().copy() for k in ("joint_q", "joint_qd", "joint_turns")}
    warm = {
        k: getattr(g.solver._scratch.cx, k).numpy().copy() for k in ("prev_shapes", "prev_point", "prev_imp", "prev_n")
    }
    passes = g.solver.contact_iterations
    plain = build_model(g.result.stage, num_envs=n, contacts=False)
    ps, pa, pb, pc = Solver(plain), plain.state(), plain.state(), plain.control()
    frames = {}

    def contact_step(iters: int):
        def run() -> None:
            g.solver.set_options(contact_iterations=iters)  # a fresh scratch, restored below
            for k, v in state.items():
                getattr(g.a, k).assign(v)
            for k, v in warm.items():
                getattr(g.solver._scratch.cx, k).assign(v)
            ours.k = G.lift_start()
            c = time.process_time()
            ours.advance(steps)
            return time.process_time() - c

        return run

    def plain_step() -> float:
        c = time.process_time()
        for _ in range(steps):
            ps.step(pa, pb, pc, G.DT)
        wp.synchronize()
        return time.process_time() - c

    def detection() -> float:
        if not frames:  # the frames (and their motion bounds) the full step detected on last
            frames.update({k: wp.clone(getattr(g.solver._scratch.cx, k)) for k in ("frame_R", "frame_p", "frame_move")})
        c = time.process_time()
        for _ in range(steps):
            m.collision.collide(frames["frame_R"], frames["frame_p"], frames["frame_move"], G.DT * SPECULATIVE_SPEED)
        wp.synchronize()
        return time.process_time() - c

    variants = {
        "the step without contacts (contacts=False)": plain_step,
        "contact step, 0 passes (detection, rows, warm starts)": contact_step(0),
        "contact step, 1 pass (the active block's)": contact_step(1),
        f"contact step, up to {passes} passes (the default)": contact_step(passes),
        # after the full steps: on the frames of the grasp they hold (0 passes let it sink)
        "detection alone (16 colliders, as the step detects)": detection,
    }
    for run in variants.values():
        run()  # compiled, caches warm
    times = {k: [] for k in variants}
    for _ in range(rounds):
        for k, run in variants.items():
            times[k].append(run() / (n * steps) * 1e6)
    med = {k: float(np.median(v)) for k, v in times.items()}
    g.solver.set_options(contact_iterations=passes)
    print(f"phases at N={n} (us CPU per env-step, medians of {rounds} interleaved rounds of {steps} steps):")
    for k, v in med.items():
        print(f"  {k:55s} {v:8.1f}")
    plain_us, zero_us, one_us, full_us, det_us = med.values()
    # the passes stop at the first that changes nothing: here the second (two passes left the
    # trajectory of sixteen bit for bit, 20 steps from the lift's start at N = 256; one pass
    # 9e-8 off it), so the first pass is nearly all of their time
    print(
        f"  => rows, warm starts and the box's 6 DOFs ~{zero_us - plain_us - det_us:.1f}; the passes (with the "
        f"responses through C they ask for) {full_us - zero_us:.1f}, of which the first (the active block's) "
        f"{one_us - zero_us:.1f} and the rest (a solve stops at a pass that changes nothing) {full_us - one_us:.1f}"
    )


_COLD = """
import time, warnings
t0, c0 = time.perf_counter(), time.process_time()
import warp as wp
wp.init()
t1, c1 = time.perf_counter(), time.process_time()
from pxr import Gf, Usd, UsdGeom, UsdPhysics
from mimic_ext.solver import Solver, build_model
st = Usd.Stage.CreateInMemory()
UsdGeom.SetStageUpAxis(st, UsdGeom.Tokens.z)
UsdPhysics.Scene.Define(st, "/physicsScene")
box = UsdGeom.Cube.Define(st, "/box")
box.GetSizeAttr().Set(0.1)
box.AddTranslateOp().Set(Gf.Vec3d(0, 0, 0.05))
for api in (UsdPhysics.RigidBodyAPI, UsdPhysics.CollisionAPI):
    api.Apply(box.GetPrim())
UsdPhysics.MassAPI.Apply(box.GetPrim()).CreateMassAttr(1.0)
model = build_model(st, ground_plane=0.0)
solver = Solver(model)
a, b = model.state(), model.state()
solver.step(a, b, model.control(), 1.0 / 60.0)
wp.synchronize()
t2, c2 = time.perf_counter(), time.process_time()
print(f"{t1 - t0:.2f} {c1 - c0:.2f} {t2 - t1:.2f} {c2 - c1:.2f}")
"""


def cold_compile() -> None:
    import subprocess

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, WARP_CACHE_PATH=cache)
        out = subprocess.run([sys.executable, "-c", _COLD], env=env, capture_output=True, text=True, check=True)
    w0, c0, w1, c1 = (float(x) for x in out.stdout.split()[-4:])
    print(
        f"cold compile (empty WARP_CACHE_PATH): Warp start-up {w0:.1f} s wall ({c0:.1f} s CPU), then the "
        f"contact kernels {w1:.1f} s wall ({c1:.1f} s CPU); load {os.getloadavg()[0]:.1f}"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cold", action="store_true", help="print the contact kernels' cold compile first")
    ap.add_argument("--phases", action="store_true", help="print where our step's time goes (N = the largest size)")
    ap.add_argument(
        "--peers", default=",".join(PEERS), help=f"comma-separated engines to time beside ours ({', '.join(PEERS)})"
    )
    ap.add_argument(
        "--physx-threads",
        type=int,
        default=None,
        help="PhysX CPU worker threads (0: the calling thread; default: 0 at N = 1, --threads above, as MuJoCo)",
    )
    ap.add_argument("--physx-solver", choices=("TGS", "PGS"), default="TGS", help="physxScene:solverType")
    ap.add_argument(
        "--physx-iterations",
        type=int,
        default=None,
        help="position iterations on the gripper and the box (default: as the USD says, i.e. PhysX's defaults)",
    )
    a = ap.parse_args(argv)
    peers = [p.strip().lower() for p in a.peers.split(",") if p.strip()]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        ap.error(f"--peers: unknown {', '.join(unknown)} (choose from {', '.join(PEERS)})")
    if a.cold:
        cold_compile()
    if not (G.MENAGERIE / "2f85.xml").exists():
        sys.exit(f"{G.MENAGERIE} not found (the shared assets)")
    print(
        f"grasp scene: Menagerie 2F-85 on a slide, a {G.BOX * 100:.0f} cm box, dt = {G.DT} s; "
        f"{a.rounds} interleaved rounds of {a.steps} steps, medians"
    )
    with tempfile.TemporaryDirectory() as tmp:
        xml = G.scene_xml(Path(tmp))
        for n in a.sizes:
            measure(xml, n, a.rounds, a.steps, a.threads, peers, a.physx_threads, a.physx_solver, a.physx_iterations)
        if a.phases:
            phases(xml, max(a.sizes), a.rounds, a.steps)


if __name__ == "__main__":
    main()
