"""GPU throughput: our solver against MuJoCo Warp and Newton on one Warp device, env-steps/s.

Two scenes, each at every ``--sizes`` N:

- ``grasp``: the Menagerie 2F-85 holding a lifted box (``grasp_scene.py``). Ours runs the
  schedule to the lift's start in one environment on the device and tiles that state (and the
  contact warm starts) into all N (``grasp_throughput.Ours.to_lift``); MuJoCo Warp gets MuJoCo's
  own state at the lift's start (``mj_step`` on the CPU, then ``put_data`` into N worlds). Each
  engine's box slip relative to the gripper over the timed steps and its driver relation
  residual are printed beside its rate: a number from a grasp that dropped its box is no number.
- ``robotiq``: the Robotiq 2F-85 URDF of ``mechanisms.py`` (six joints, five mimic followers)
  under its PD drives' sinusoid (``peers.schedule``), ours (``Solver.step_many``), MuJoCo Warp
  (the same URDF through MuJoCo's compiler, ``mechanisms.mujoco_model``) and Newton
  Featherstone. Printed beside each rate: the largest joint-position gap to ours at the end
  (rad) and our relation residual.

Timing: each engine first runs one block untimed (Warp compiles its kernels, CUDA graphs are
captured; its wall time is printed as "first block"), then ``--rounds`` interleaved rounds of
``--steps`` steps (A B C A B C), each ended by ``wp.synchronize()``; the rate is N * steps over
the median round's wall time. Every step's controls are uploaded before its round (untimed):
ours takes them as a device schedule in one ``step_many`` call per round (one launch), MuJoCo
Warp and Newton copy each step's row on the device and launch that step's captured CUDA graph
(``wp.ScopedCapture``; plain launches on the CPU or where capture fails, said in the name).

Time boxes: an engine whose setup and rounds at one N took longer than ``--budget`` seconds is
not run at a larger N (said so); nothing starts once ``--deadline`` seconds have passed. A peer
that cannot be imported is skipped with the reason.

    python benchmarks/gpu_throughput.py [--device cuda:0] [--sizes 1024 4096 16384] [--steps 50]
        [--rounds 3] [--scenes grasp robotiq] [--budget 40] [--deadline 150]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import grasp_scene as G  # noqa: E402
from benchmarks import grasp_throughput as GT  # noqa: E402
from benchmarks import mechanisms as M  # noqa: E402
from benchmarks import peers as P  # noqa: E402


def mujoco_warp_missing() -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mujoco  # noqa: F401
            import mujoco_warp  # noqa: F401
    except ImportError as exc:
        return f"mujoco_warp not importable ({exc})"
    return None


class Graph:
    """``fn()`` as a captured CUDA graph on ``device`` (replayed by ``launch``), or plain calls
    where the device is the CPU or the capture fails (``self.captured`` says which).

    ``fn`` runs once first, outside any capture (Warp compiles and loads every kernel it
    launches); the arrays in ``restore`` are put back as they were before that run, so it is
    no step of the schedule."""

    def __init__(self, wp, device, fn, restore=()):
        self.wp, self.fn, self.graph = wp, fn, None
        saved = [(a, wp.clone(a)) for a in restore]
        fn()
        for a, copy in saved:
            wp.copy(a, copy)
        wp.synchronize()
        if device.is_cuda:
            try:
                with wp.ScopedCapture(device=device) as cap:
                    fn()
                self.graph = cap.graph
            except Exception as exc:
                self.error = f"{type(exc).__name__}: {exc}"
        self.captured = self.graph is not None

    def launch(self) -> None:
        if self.graph is not None:
            self.wp.capture_launch(self.graph)
        else:
            self.fn()


# ---------------------------------------------------------------------------------- grasp


class OursGrasp(GT.Ours):
    """Ours on the grasp: a round's targets uploaded untimed, then one ``step_many`` call."""

    def __init__(self, xml: Path, n: int, device: str):
        super().__init__(xml, n, device)
        self.to_lift(xml)
        self._sched = None

    def prepare(self, steps: int) -> None:
        import warp as wp

        g = self.g
        sched = np.repeat(g.targets[None], steps, axis=0)
        sched[:, :, g.lift] = np.array([G.lift_target(self.k + i) for i in range(steps)])[:, None]
        self._sched = wp.array(sched.astype(np.float32), device=g.model.device)

    def advance(self, steps: int) -> None:
        import warp as wp

        if self._sched is None or self._sched.shape[0] != steps:
            self.prepare(steps)
        self.g.solver.step_many(self.g.a, self._sched, G.DT, control=self.g.control)
        wp.synchronize()
        self._sched = None
        self.k += steps


class MjwGrasp:
    """MuJoCo Warp on the grasp MJCF: N worlds from MuJoCo's state at the lift's start."""

    def __init__(self, xml: Path, n: int, device: str):
        import mujoco_warp as mjw
        import warp as wp

        self.wp, self.mjw, self.n = wp, mjw, n
        self.s = G.MujocoGrasp(xml)
        for i in range(G.lift_start()):
            self.s.step(i)
        self.k = G.lift_start()
        self.dev = wp.get_device(device)
        m, d = self.s.m, self.s.d
        with wp.ScopedDevice(self.dev):
            self.m = mjw.put_model(m)
            # room for 4x the contacts and constraint rows MuJoCo has in the grasp (overflow is counted)
            self.d = mjw.put_data(m, d, nworld=n, nconmax=max(64, 4 * d.ncon), njmax=max(256, 4 * d.nefc))
            self.graph = Graph(wp, self.dev, lambda: mjw.step(self.m, self.d), mjw_state(self.d))
        self.name = "MuJoCo Warp" + ("" if self.graph.captured else " (no graph)")
        self.track, self.worst = [], 0.0
        self._rows = None

    def prepare(self, steps: int) -> None:
        ctrl = np.zeros((steps, self.n, self.s.m.nu), np.float32)
        ctrl[:, :, self.s.a_grip] = 255.0
        ctrl[:, :, self.s.a_lift] = np.array([G.lift_target(self.k + i) for i in range(steps)])[:, None]
        self._rows = self.wp.array(ctrl, device=self.dev)

    def advance(self, steps: int) -> None:
        if self._rows is None or self._rows.shape[0] != steps:
            self.prepare(steps)
        wp, rows, ctrl, graph = self.wp, self._rows, self.d.ctrl, self.graph
        for i in range(steps):
            wp.copy(ctrl, rows[i])
            graph.launch()
        wp.synchronize()
        self._rows = None
        self.k += steps

    def observe(self) -> None:
        s, qpos = self.s, self.d.qpos.numpy().astype(np.float64)
        p = qpos[:, s.box_q : s.box_q + 3].copy()
        p[:, 2] -= qpos[:, s.lift]
        self.track.append(p)
        self.worst = max(self.worst, float(np.abs(qpos[:, s.follower] - qpos[:, s.leader]).max()))

    def note(self) -> str:
        over = int(np.count_nonzero(self.d.overflow.numpy())) if hasattr(self.d, "overflow") else 0
        return f"  overflowing worlds {over}" if over else ""


def mjw_state(d) -> list:
    """The arrays of a MuJoCo Warp ``Data`` a step starts from (the rest it recomputes)."""
    return [
        getattr(d, k)
        for k in ("time", "qpos", "qvel", "act", "qacc_warmstart", "ctrl")
        if getattr(d, k, None) is not None
    ]


def grasp_engines(device: str):
    def ours(xml, n):
        return OursGrasp(xml, n, device)

    def mjw(xml, n):
        return MjwGrasp(xml, n, device)

    return [("ours", ours, None), ("MuJoCo Warp", mjw, mujoco_warp_missing())]


def grasp_line(eng) -> str:
    extra = eng.note() if hasattr(eng, "note") else ""
    return f"slip {GT.slip(eng.track) * 1e3:.3f} mm  relation residual {eng.worst:.1e}{extra}"


# -------------------------------------------------------------------------------- robotiq


class OursRobotiq(P.OursStepMany):
    """``peers.OursStepMany`` on the default device (``set_default_device``), its schedule
    uploaded before the round."""

    def __init__(self, mech, n):
        super().__init__(mech, n, threads=1)
        self.name = f"ours step_many ({self.model.device})"

    def prepare(self, n):
        import warp as wp

        super().prepare(n)
        self._schedule = wp.array(self._schedule, device=self.model.device)

    def residual(self) -> float:
        q = self.positions()
        cols = {j: c for c, j in enumerate(self.mech.joints)}
        return max(
            (
                float(np.abs(q[:, cols[m.follower]] - m.multiplier * q[:, cols[m.leader]] - m.offset).max())
                for m in self.mech.mimics
            ),
            default=0.0,
        )


class MjwRobotiq(P.Runner):
    """MuJoCo Warp on the Robotiq URDF (MuJoCo's compiler: mimics become joint equalities)."""

    def __init__(self, mech, n, device: str):
        super().__init__(mech, n)
        import mujoco
        import mujoco_warp as mjw
        import warp as wp

        self.wp, self.dev = wp, wp.get_device(device)
        m, self.adr, act = M.mujoco_model(mech)
        d = mujoco.MjData(m)
        for a, q in zip(self.adr, mech.q0().values(), strict=True):
            d.qpos[a] = q
        mujoco.mj_forward(m, d)
        ctrl = np.zeros((P.TABLE_STEPS, n, m.nu), np.float32)
        ctrl[:, :, act] = self.table
        with wp.ScopedDevice(self.dev):
            self.m = mjw.put_model(m)
            self.d = mjw.put_data(m, d, nworld=n)
            self.rows = wp.array(ctrl, device=self.dev)
            wp.copy(self.d.ctrl, self.rows[0])
            self.graph = Graph(wp, self.dev, lambda: mjw.step(self.m, self.d), mjw_state(self.d))
        self.name = "MuJoCo Warp" + ("" if self.graph.captured else " (no graph)")

    def advance(self, n):
        wp, rows, ctrl, graph, k = self.wp, self.rows, self.d.ctrl, self.graph, self.k
        for _ in range(n):
            wp.copy(ctrl, rows[P.schedule_index(k)])
            graph.launch()
            k += 1
        wp.synchronize()
        self.k = k

    def positions(self):
        return self.d.qpos.numpy()[:, self.adr].astype(float)


class NewtonRobotiq(P.Newton):
    """Newton Featherstone on the device (``peers.Newton``), two captured graphs (state 0 -> 1,
    1 -> 0) replayed in turn, each step's targets copied on the device first."""

    def __init__(self, mech, n, device: str):
        super().__init__(mech, n, "featherstone", device=device)
        wp, dev = self.wp, self.model.device
        s0, s1, ctl, step = self.s0, self.s1, self.ctl, self.solver.step
        start = [s0.joint_q, s0.joint_qd, s0.body_q, s0.body_qd]
        self.graphs = [
            Graph(wp, dev, lambda: step(s0, s1, ctl, None, M.DT), start),
            Graph(wp, dev, lambda: step(s1, s0, ctl, None, M.DT), start),
        ]
        self.name = "Newton featherstone" + ("" if all(g.captured for g in self.graphs) else " (no graph)")

    def advance(self, n):
        graphs, k = self.graphs, self.k
        for _ in range(n):
            self.set_targets(k)
            graphs[k % 2].launch()
            k += 1
        self.wp.synchronize()
        self.k = k

    def positions(self):
        state = self.s0 if self.k % 2 == 0 else self.s1  # the graphs swap no Python names
        return state.joint_q.numpy()[self.qcols].astype(float)


def robotiq_engines(device: str):
    return [
        ("ours", OursRobotiq, None),
        ("MuJoCo Warp", lambda mech, n: MjwRobotiq(mech, n, device), mujoco_warp_missing()),
        ("Newton", lambda mech, n: NewtonRobotiq(mech, n, device), P.missing("newton")),
    ]


# ----------------------------------------------------------------------------------- runs


class Clock:
    def __init__(self, deadline: float):
        self.t0, self.deadline = time.perf_counter(), deadline

    def left(self) -> float:
        return self.deadline - (time.perf_counter() - self.t0)


def run_scene(
    scene: str, build, engines, sizes, steps: int, rounds: int, budget: float, clock: Clock, describe
) -> None:
    """``engines``: (label, factory(n) -> engine, reason it cannot run or None)."""
    over = {}
    for label, _, why in engines:
        if why:
            print(f"  {label}: skipped ({why})")
    live = [(label, f) for label, f, why in engines if not why]
    for n in sizes:
        if clock.left() <= 0:
            print(f"  N={n:6d}  not run: the --deadline passed")
            continue
        built = []
        for label, factory in live:
            if label in over:
                print(f"  N={n:6d}  {label}: not run ({over[label]})")
                continue
            t0 = time.perf_counter()
            try:
                eng = build(factory, n)
                first = time.perf_counter() - t0
                eng.advance(steps)  # the first block: compiles, captures, warms
                first = time.perf_counter() - t0
            except Exception as exc:
                print(f"  N={n:6d}  {label}: failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
                over[label] = "it failed at a smaller N"
                continue
            built.append((label, eng, t0, first))
        if not built:
            continue
        for _, eng, _, _ in built:
            if hasattr(eng, "observe"):
                eng.observe()
        times = {label: [] for label, *_ in built}
        for _ in range(rounds):
            for label, eng, _, _ in built:
                if hasattr(eng, "prepare"):
                    eng.prepare(steps)
                w = time.perf_counter()
                eng.advance(steps)
                times[label].append(time.perf_counter() - w)
                if hasattr(eng, "observe"):
                    eng.observe()
        rates = {}
        for label, eng, t0, first in built:
            rates[label] = n * steps / float(np.median(times[label]))
            print(
                f"  N={n:6d}  {eng.name:34s} {rates[label]:12.0f} env-steps/s  (first block {first:5.1f} s)  "
                f"{describe(eng, built)}"
            )
            spent = time.perf_counter() - t0
            if spent > budget:
                over[label] = f"N={n} took {spent:.0f} s, over the --budget of {budget:.0f} s"
        if "ours" in rates:
            ratios = "  ".join(
                f"ours / {label} {rates['ours'] / r:.2f}x" for label, r in rates.items() if label != "ours"
            )
            if ratios:
                print(f"  N={n:6d}  {ratios}  ({rounds} rounds of {steps} steps, medians)")
        for _, eng, _, _ in built:
            if hasattr(eng, "close"):
                eng.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 16384])
    ap.add_argument("--steps", type=int, default=50, help="steps per round (and in the untimed first block)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenes", nargs="+", default=["grasp", "robotiq"], choices=["grasp", "robotiq"])
    ap.add_argument("--budget", type=float, default=40.0, help="s: an engine over it at one N skips larger N")
    ap.add_argument("--deadline", type=float, default=150.0, help="s: nothing starts after it")
    a = ap.parse_args(argv)

    from mimic_ext.errors import MimicInputError
    from mimic_ext.solver import set_default_device
    from mimic_ext.warp_runtime import check_device, init_warp

    wp = init_warp()
    try:
        check_device(a.device)
    except MimicInputError as exc:
        print(exc)
        return 2
    set_default_device(a.device)  # peers.OursStepMany builds its model on the default
    clock = Clock(a.deadline)
    dev = wp.get_device(a.device)
    print(
        f"device {dev} ({dev.name}); Warp {wp.config.version}; {a.rounds} interleaved rounds of {a.steps} steps, "
        f"medians; budget {a.budget:.0f} s per engine and N, deadline {a.deadline:.0f} s"
    )

    if "grasp" in a.scenes:
        print(
            f"grasp: Menagerie 2F-85 on a slide lifting a {G.BOX * 100:.0f} cm box, dt = {G.DT} s, "
            f"from the lift's start (t = {G.T_CLOSE} s)"
        )
        if not (G.MENAGERIE / "2f85.xml").exists():
            print(f"  skipped: {G.MENAGERIE} not found (the shared assets)")
        else:
            with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                xml = G.scene_xml(Path(tmp))
                run_scene(
                    "grasp",
                    lambda f, n: f(xml, n),
                    grasp_engines(a.device),
                    a.sizes,
                    a.steps,
                    a.rounds,
                    a.budget,
                    clock,
                    lambda eng, built: grasp_line(eng),
                )
    if "robotiq" in a.scenes:
        print(
            f"robotiq: {M.ROBOTIQ_URDF.name} (6 joints, 5 mimic followers), PD drives on a 1 Hz sinusoid, "
            f"dt = {M.DT:.5f} s"
        )
        try:
            mech = M.robotiq()
        except FileNotFoundError as exc:
            print(f"  skipped: {exc}")
        else:

            def gap(eng, built):
                ours = next((e for label, e, *_ in built if label == "ours"), None)
                if eng is ours:
                    return f"relation residual {eng.residual():.1e}"
                if ours is None or ours.k != eng.k:
                    return ""
                return f"largest gap to ours {np.abs(eng.positions() - ours.positions()).max():.1e} rad"

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run_scene(
                    "robotiq",
                    lambda f, n: f(mech, n),
                    robotiq_engines(a.device),
                    a.sizes,
                    a.steps,
                    a.rounds,
                    a.budget,
                    clock,
                    gap,
                )
    print(f"done in {time.perf_counter() - clock.t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
