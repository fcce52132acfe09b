"""Every engine stepping a ``mechanisms.Mechanism`` the same way, behind one small interface.

A runner is built for one mechanism and N environments, starts from the mechanism's initial
pose (``Mechanism.q0``, at rest), and follows the same target schedule (``schedule``):
``prepare(n)`` readies the inputs of the next ``n`` steps (untimed: a rollout's control
block), ``advance(n)`` steps them (timed), ``positions()`` gives the joint positions
(N, DOFs) in ``mech.joints`` order. Each engine writes its targets every step the cheapest
way its API offers (a NumPy view of a CPU Warp array, ``MjData.ctrl``, PhysX's DOF target
tensor); MuJoCo's rollout takes them as its control array.

Engines: ours (``mimic_ext.solver``), MuJoCo ``mj_step`` and ``mujoco.rollout`` (1 thread
or a persistent pool), Newton ``SolverFeatherstone`` and ``SolverXPBD`` (CPU), and real
PhysX on the CPU through ``mimic_ext.fet022.engines.physx_session.PhysxSession`` (the
robot cloned for N > 1). ``make(kind, mech, num_envs)`` builds one; ``missing(kind)`` says
why a peer cannot run here (not installed), or None.
"""

from __future__ import annotations

import inspect
import multiprocessing
import os
import time
import warnings

import numpy as np

from . import mechanisms as M

#: After the fade-in the schedule repeats every 1 / f seconds: targets are tabled for the
#: fade-in plus one period and indexed modulo the period.
FADE_STEPS = int(round(M.RAMP_S / M.DT)) - 1  # first step whose end time is past the fade
PERIOD_STEPS = int(round(1.0 / (M.FREQUENCY_HZ * M.DT)))
TABLE_STEPS = FADE_STEPS + PERIOD_STEPS


def schedule_index(k: int) -> int:
    return k if k < TABLE_STEPS else FADE_STEPS + (k - FADE_STEPS) % PERIOD_STEPS


def schedule(mech: M.Mechanism, num_envs: int) -> np.ndarray:
    """Targets (TABLE_STEPS, num_envs, len(driven)) SI; step k uses row ``schedule_index(k)``."""
    return mech.targets(np.arange(TABLE_STEPS), num_envs)


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def solver_has_threads() -> bool:
    from mimic_ext.solver import Solver

    return "threads" in inspect.signature(Solver.__init__).parameters


def solver_has_step_many() -> bool:
    from mimic_ext.solver import Solver

    return hasattr(Solver, "step_many")


class Runner:
    name = "?"
    threads = 1

    def __init__(self, mech: M.Mechanism, num_envs: int):
        self.mech, self.num_envs, self.k = mech, int(num_envs), 0
        self.table = schedule(mech, num_envs)

    def prepare(self, n: int) -> None:
        pass

    def advance(self, n: int) -> None:
        raise NotImplementedError

    def timed(self, n: int) -> tuple[float, float]:
        """(wall s, CPU s of this process's threads) of ``advance(n)`` after ``prepare(n)``."""
        self.prepare(n)
        c0, t0 = time.process_time(), time.perf_counter()
        self.advance(n)
        t1, c1 = time.perf_counter(), time.process_time()
        return t1 - t0, c1 - c0

    def positions(self) -> np.ndarray:
        raise NotImplementedError

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------------- ours


class Ours(Runner):
    """``Solver.step`` per step; ``threads`` only where the solver takes it (issue 13 phase 2)."""

    def __init__(self, mech, num_envs, threads: int | None = None):
        super().__init__(mech, num_envs)
        import warp as wp

        from mimic_ext.solver import Solver, build_model

        stage, paths = M.usd_stage(mech)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = build_model(stage, num_envs=num_envs, fix_base=True)
        kwargs = {}
        if threads is not None:
            if not solver_has_threads():
                raise RuntimeError("Solver(model, threads=...) is not available yet")
            kwargs["threads"] = threads
        self.threads = threads or 1
        self.solver = Solver(self.model, **kwargs)
        self.cols = [self.model.dof_index(paths[j]) for j in mech.joints]
        driven = [self.model.dof_index(paths[j]) for j in mech.driven]
        self.s0, self.s1, self.ctl = self.model.state(), self.model.state(), self.model.control()
        base = self.ctl.joint_target_q.numpy()
        full = np.repeat(base[None], TABLE_STEPS, axis=0)
        full[:, :, driven] = self.table
        self.full = full.astype(np.float32)
        self.view = self.ctl.joint_target_q.numpy()  # CPU: a view of the Warp array
        self._wp = wp

    def advance(self, n):
        s0, s1, ctl, step, view, full, k = self.s0, self.s1, self.ctl, self.solver.step, self.view, self.full, self.k
        for _ in range(n):
            np.copyto(view, full[schedule_index(k)])
            step(s0, s1, ctl, M.DT)
            s0, s1 = s1, s0
            k += 1
        self._wp.synchronize()
        self.s0, self.s1, self.k = s0, s1, k

    def positions(self):
        return self.s0.joint_q.numpy()[:, self.cols].astype(float)


class OursStepMany(Ours):
    """``Solver.step_many``: the ``n`` steps of a block in one call per slice of environments
    (``threads``), their position targets a NumPy schedule (prepared untimed, as a rollout's
    control block; the call copies it into the solver's buffer, timed), one sample at the end."""

    def __init__(self, mech, num_envs, threads: int = 1):
        super().__init__(mech, num_envs, threads=threads)
        self.name = "ours step_many" + (f" {threads}T" if num_envs > 1 else "")
        self._schedule = None

    def prepare(self, n):
        idx = [schedule_index(self.k + i) for i in range(n)]
        self._schedule = self.full[idx]

    def advance(self, n):
        if self._schedule is None or self._schedule.shape[0] != n:
            self.prepare(n)
        self.solver.step_many(self.s0, self._schedule, M.DT, sample_every=n)
        self._wp.synchronize()
        self._schedule = None
        self.k += n

    def call_cost(self, calls: int = 200) -> tuple[float, float]:
        """Medians of the wall and CPU seconds (this thread's: at N = 1 the call runs on it) of
        a call of one step (the per-call cost, and one step)."""
        wall, cpu = [], []
        for _ in range(calls):
            row = self.full[[schedule_index(self.k)]]
            c0, t0 = time.thread_time(), time.perf_counter()
            self.solver.step_many(self.s0, row, M.DT)
            self._wp.synchronize()
            wall.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)
            self.k += 1
        return float(np.median(wall)), float(np.median(cpu))


# ------------------------------------------------------------------------------- MuJoCo

#: MuJoCo's warnings (an unstable step), collected instead of a MUJOCO_LOG.TXT in the cwd.
MUJOCO_WARNINGS: list[str] = []


class _Mujoco(Runner):
    def __init__(self, mech, num_envs):
        super().__init__(mech, num_envs)
        import mujoco

        self.mj = mujoco
        mujoco.set_mju_user_warning(lambda msg: MUJOCO_WARNINGS.append(" ".join(str(msg).split())))
        self.m, self.adr, self.act = M.mujoco_model(mech)
        d = mujoco.MjData(self.m)
        for a, q in zip(self.adr, mech.q0().values()):
            d.qpos[a] = q
        mujoco.mj_forward(self.m, d)
        self.start = d
        self.ctrl = np.zeros((TABLE_STEPS, num_envs, self.m.nu))
        self.ctrl[:, :, self.act] = self.table


class MjStep(_Mujoco):
    """``mj_step`` on one thread, one ``MjData`` per environment, ``ctrl`` written each step."""

    name = "mujoco mj_step"

    def __init__(self, mech, num_envs):
        super().__init__(mech, num_envs)
        self.datas = []
        for _ in range(num_envs):
            d = self.mj.MjData(self.m)
            d.qpos[:] = self.start.qpos
            self.mj.mj_forward(self.m, d)
            self.datas.append(d)

    def advance(self, n):
        m, step, datas, ctrl, k = self.m, self.mj.mj_step, self.datas, self.ctrl, self.k
        for _ in range(n):
            row = ctrl[schedule_index(k)]
            for e, d in enumerate(datas):
                d.ctrl[:] = row[e]
                step(m, d)
            k += 1
        self.k = k

    def positions(self):
        return np.array([[d.qpos[a] for a in self.adr] for d in self.datas])


class MjRollout(_Mujoco):
    """``mujoco.rollout`` over all environments: ``nthread`` 0 runs on the calling thread,
    more uses a persistent pool (``Rollout(nthread=...)``, one ``MjData`` per thread)."""

    def __init__(self, mech, num_envs, nthread: int = 0):
        super().__init__(mech, num_envs)
        from mujoco import rollout

        self.nthread = int(nthread)
        self.threads = max(1, self.nthread)
        self.name = f"mujoco rollout {self.threads}T"
        self.pool = rollout.Rollout(nthread=self.nthread)  # 0: no pool, the calling thread
        self.models = [self.m] * num_envs  # skip_checks takes one model per rollout
        self.ctrl_spec = self.mj.mjtState.mjSTATE_CTRL.value
        self.datas = [self.mj.MjData(self.m) for _ in range(max(1, self.nthread))]
        self.spec = self.mj.mjtState.mjSTATE_FULLPHYSICS
        size = self.mj.mj_stateSize(self.m, self.spec)
        s = np.zeros(size)
        self.mj.mj_getState(self.m, self.start, s, self.spec)
        self.state = np.tile(s, (num_envs, 1))
        self.qpos0 = 1  # FULLPHYSICS: time, then qpos
        self._block = None

    def prepare(self, n):
        idx = [schedule_index(self.k + i) for i in range(n)]
        control = np.ascontiguousarray(self.ctrl[idx].transpose(1, 0, 2))  # (N, n, nu)
        out = np.empty((self.num_envs, n, self.state.shape[1]))
        self._block = (n, control, out)

    def advance(self, n):
        if self._block is None or self._block[0] != n:
            self.prepare(n)
        _, control, out = self._block
        self.pool.rollout(
            self.models,
            self.datas,
            self.state,
            control,
            control_spec=self.ctrl_spec,
            nstep=n,
            state=out,
            skip_checks=True,
        )
        self.state = np.ascontiguousarray(out[:, -1, :])  # skip_checks: rollout reads it as C-contiguous
        self.k += n
        self._block = None

    def positions(self):
        return np.asarray(self.state)[:, [self.qpos0 + a for a in self.adr]]

    def close(self):
        if self.pool is not None:
            self.pool.close()
            self.pool = None


# ------------------------------------------------------------------------------- Newton

#: XPBD's constraint iterations. Its default (2) leaves the driven Robotiq's leader 0.2 rad
#: behind ours, MuJoCo's and PhysX's after 0.2 s (the drive and the mimic constraints do not
#: converge); 8 brings it within 0.02 rad, 32 within 0.014: 16 is what it takes to simulate
#: the same motion, and it is timed with them.
XPBD_ITERATIONS = 16


class Newton(Runner):
    """Newton 1.8 on the CPU: ``featherstone`` (reduced coordinates, mimics eliminated) or
    ``xpbd`` (maximal coordinates; joint positions recovered with ``eval_ik`` when read).
    ``device`` another Warp device (``gpu_throughput.py``): the targets' table is then uploaded
    once and each step's row copied on the device (a NumPy view exists only of CPU arrays)."""

    def __init__(self, mech, num_envs, solver: str = "featherstone", device: str = "cpu"):
        super().__init__(mech, num_envs)
        import newton
        import warp as wp

        from mimic_ext.warp_runtime import init_warp

        init_warp()
        self.newton, self.wp = newton, wp
        self.name = f"newton {solver}" + (f" {XPBD_ITERATIONS} it" if solver == "xpbd" else "")
        single, index = M.newton_builder(mech)
        mb = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=tuple(float(g) for g in mech.gravity))
        mb.replicate(single, num_envs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = mb.finalize(device=device)
        cls = newton.solvers.SolverFeatherstone if solver == "featherstone" else newton.solvers.SolverXPBD
        self.solver = (
            cls(self.model, angular_damping=0.0)
            if solver == "featherstone"
            else cls(self.model, iterations=XPBD_ITERATIONS)
        )
        self.maximal = solver == "xpbd"
        self.s0, self.s1, self.ctl = self.model.state(), self.model.state(), self.model.control()
        newton.eval_fk(self.model, self.s0.joint_q, self.s0.joint_qd, self.s0)
        q_start = self.model.joint_q_start.numpy()
        nj = single.joint_count
        self.qcols = np.array([[q_start[e * nj + ji] for ji in index] for e in range(num_envs)])
        driven = [index[mech.joints.index(j)] for j in mech.driven]
        dcols = np.array([[q_start[e * nj + ji] for ji in driven] for e in range(num_envs)])
        base = self.ctl.joint_target_q.numpy()
        full = np.repeat(base[None], TABLE_STEPS, axis=0)
        for e in range(num_envs):
            full[:, dcols[e]] = self.table[:, e, :]
        self.full = full.astype(base.dtype)
        self.view = self.ctl.joint_target_q.numpy()
        self.rows = None if self.model.device.is_cpu else wp.array(self.full, device=self.model.device)

    def set_targets(self, k: int) -> None:
        """Step ``k``'s targets into the control (a view's copy, or a copy on the device)."""
        if self.rows is None:
            np.copyto(self.view, self.full[schedule_index(k)])
        else:
            self.wp.copy(self.ctl.joint_target_q, self.rows[schedule_index(k)])

    def advance(self, n):
        s0, s1, ctl, step, view, full, k = self.s0, self.s1, self.ctl, self.solver.step, self.view, self.full, self.k
        for _ in range(n):
            np.copyto(view, full[schedule_index(k)])
            step(s0, s1, ctl, None, M.DT)
            s0, s1 = s1, s0
            k += 1
        self.wp.synchronize()
        self.s0, self.s1, self.k = s0, s1, k

    def positions(self):
        if self.maximal:
            self.newton.eval_ik(self.model, self.s0, self.s0.joint_q, self.s0.joint_qd)
        return self.s0.joint_q.numpy()[self.qcols].astype(float)


# -------------------------------------------------------------------------------- PhysX


class Physx(Runner):
    """Real PhysX on the CPU (ovphysx), the robot cloned N times in one scene.

    ``threads``: PhysX worker threads (0: PhysX's tasks run on the calling thread)."""

    def __init__(self, mech, num_envs, threads: int = 0):
        super().__init__(mech, num_envs)
        from mimic_ext.fet022.engines import prepared
        from mimic_ext.fet022.engines.physx_layout import layout
        from mimic_ext.fet022.engines.physx_session import PhysxSession, joint_names
        from mimic_ext.native_stderr import quiet_native_stderr

        stage, paths = M.usd_stage(mech)
        self.threads = max(1, threads)
        self.name = f"physx {threads}T" if threads else "physx caller"
        source = prepared.robot_root(stage)
        with quiet_native_stderr():
            usda = stage.Flatten().ExportToString()
        roots = [str(p.GetPath()) for p in prepared.articulation_roots(stage)]
        by_name, _, prismatic = joint_names(stage, source)
        self.session = PhysxSession(
            usda,
            roots,
            by_name,
            layout(stage, source, num_envs, 1.0),
            device="cpu",
            prismatic=prismatic,
            threads=threads,
        )
        self.paths = [paths[j] for j in mech.joints]
        self.driven = [paths[j] for j in mech.driven]
        self.rows = [{p: self.table[i, :, c] for c, p in enumerate(self.driven)} for i in range(TABLE_STEPS)]

    def advance(self, n):
        session, rows, k = self.session, self.rows, self.k
        for _ in range(n):
            session.set_targets(rows[schedule_index(k)])
            session.step(M.DT)
            k += 1
        self.k = k

    def positions(self):
        pos = self.session.positions(self.paths)
        return np.stack([pos[p] for p in self.paths], axis=1)

    def close(self):
        self.session.close()


# ------------------------------------------------------------------- in another process


def _serve(conn, kind: str, mech_name: str, num_envs: int) -> None:
    """The child of ``Remote``: build the runner, then answer (method, n) requests."""
    from mimic_ext.warp_runtime import init_warp

    init_warp()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = make(kind, M.MECHANISMS[mech_name](), num_envs)
        conn.send(("ready", (r.name, r.threads)))
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        method, n = conn.recv()
        if method == "close":
            r.close()
            conn.send(("ok", None))
            return
        value = getattr(r, method)(*([] if n is None else [n]))
        conn.send(("ok", value))


class Remote(Runner):
    """A runner in a process of its own (spawned), driven over a pipe; ``timed`` is measured
    there. For PhysX: its process-wide settings (CPU mode, worker threads) are fixed at its
    first instance, so two thread settings need two processes, and its worker threads would
    otherwise charge their CPU time to whatever this process times next."""

    def __init__(self, kind: str, mech: M.Mechanism, num_envs: int):
        self.mech, self.num_envs, self.k = mech, int(num_envs), 0
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, kind, _registered_name(mech), num_envs), daemon=True)
        self.proc.start()
        child.close()
        status, value = self.conn.recv()
        if status != "ready":
            self.proc.join(5)
            raise RuntimeError(value)
        self.name, self.threads = value

    def _call(self, method: str, n=None):
        self.conn.send((method, n))
        status, value = self.conn.recv()
        return value

    def prepare(self, n):
        self._call("prepare", n)

    def advance(self, n):
        self._call("advance", n)
        self.k += n

    def timed(self, n):
        self.k += n
        return self._call("timed", n)

    def positions(self):
        return self._call("positions")

    def close(self):
        if self.proc.is_alive():
            try:
                self._call("close")
            except (EOFError, BrokenPipeError):
                pass
            self.proc.join(10)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(5)


def _registered_name(mech: M.Mechanism) -> str:
    for name, factory in M.MECHANISMS.items():
        if factory().name == mech.name:
            return name
    raise ValueError(f"{mech.name} is not in mechanisms.MECHANISMS: it cannot be rebuilt in another process")


# ----------------------------------------------------------------------------- registry


def missing(kind: str) -> str | None:
    """Why the peer ``kind`` cannot run here, or None."""
    mod = {"mujoco": "mujoco", "newton": "newton", "physx": "ovphysx"}.get(
        kind.split(maxsplit=1)[0].split(":", maxsplit=1)[0]
    )
    if mod is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib = __import__(mod)
    except ImportError:
        return f"{mod} not installed"
    if mod == "newton" and not hasattr(lib.ModelBuilder, "set_joint_mimic"):
        return f"newton {lib.__version__} has no joint mimics (needs >= 1.8)"
    return None


def make(kind: str, mech: M.Mechanism, num_envs: int) -> Runner:
    """Kinds: ``ours``, ``ours:T`` (threads=T), ``step_many``, ``step_many:T`` (threads=T),
    ``mj_step``, ``rollout:T`` (0: calling thread), ``featherstone``, ``xpbd``, ``physx:T`` (0:
    calling thread); ``remote:<kind>`` runs one in a spawned process."""
    name, _, arg = kind.partition(":")
    if name == "ours":
        # plain "ours" is one thread (the solver's default is every core): "ours:T" is the threaded row
        r = Ours(mech, num_envs, threads=int(arg) if arg else (1 if solver_has_threads() else None))
        r.name = f"ours {arg}T" if arg else "ours"
        return r
    if name == "step_many":
        if not solver_has_step_many():
            raise RuntimeError("Solver.step_many is not available yet")
        return OursStepMany(mech, num_envs, threads=int(arg) if arg else 1)
    if name == "mj_step":
        return MjStep(mech, num_envs)
    if name == "rollout":
        return MjRollout(mech, num_envs, int(arg or 0))
    if name in ("featherstone", "xpbd"):
        return Newton(mech, num_envs, name)
    if name == "physx":
        return Physx(mech, num_envs, int(arg or 0))
    if name == "remote":  # "remote:<kind>": that runner in a process of its own
        return Remote(arg, mech, num_envs)
    raise ValueError(f"unknown engine kind {kind!r}")


ENGINE_OF = {
    "ours": "ours",
    "step_many": "ours",
    "mj_step": "mujoco",
    "rollout": "mujoco",
    "featherstone": "newton",
    "xpbd": "newton",
    "physx": "physx",
}


def peer_missing(kind: str) -> str | None:
    if kind.startswith("remote:"):
        kind = kind[len("remote:") :]
    eng = ENGINE_OF.get(kind.partition(":")[0])
    return None if eng in (None, "ours") else missing(eng)
