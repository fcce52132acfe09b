"""NVIDIA's phase on Newton: the robot as Newton's own ``add_usd`` reads it, Featherstone sub-stepped.

The model is the one our sweep's Newton engine builds (``fet022.engines.newton``: Newton's
``ModelBuilder.add_usd`` on a flattened private copy, our default mass where Newton would give
NaN, relations stored only as legacy MuJoCo equalities set as joint mimics), with the asset's own
drives and targets and no test drive; a gripper's floating base is welded to the world.

Solver: Featherstone, sub-stepped. Newton users drive stiff joints with ``SolverMuJoCo``
(implicit actuators), which needs ``mujoco_warp`` even on MuJoCo's C library; it is not
installed here (Newton 1.8 pins mujoco and mujoco-warp ~= 3.17; this environment has mujoco
3.16). Featherstone applies a drive as an explicit PD force, stable only while
``ke h^2 / H_jj`` stays small (``h`` the step, ``H`` Newton's joint-space inertia); at 240 Hz
the Isaac 2F-85's ``finger_joint`` drive (172 N m/rad on 2.8e-4 kg m^2) is 10.8, and the
gripper rings. So each 1/240 s phase step is ``n`` Featherstone sub-steps, as Isaac Lab runs
its physics at a finer dt than its control (decimation), with ``n`` the fewest that make every
drive's ``ke h^2 / H`` at most ``STABLE_STIFFNESS`` and ``kd h / H`` at most ``STABLE_DAMPING``
(the sweep's Newton engine's bounds). The drives are as authored, never capped. Newton's
joint-limit springs are Newton's defaults (1e4), not the asset's (PhysX's limits are hard): they
are capped to the same bound at ``h``, with a note. Featherstone applies neither effort nor
velocity limits (Newton's documentation): a note says so.

Units at the handle are Kit's: Newton's joint coordinates are radians, and stage units for a
prismatic joint, as PhysX's tensor API gives them.

A PhysX-authored relation is run as Newton reads it: ``add_usd`` takes PhysX's offset number
unconverted (a revolute follower's degrees as radians; ``newton_reading`` notes it). That is what
a Newton user gets from this asset, so it is Newton's finding, not the adapter's to correct.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import MimicInputError
from ..schema import joints
from .backends import DEFAULT_DT, Backend, _authored_limits

#: explicit-spring bounds per sub-step (the sweep's Newton engine's ``STABLE_STIFFNESS`` and
#: ``STABLE_DAMPING``: a quarter and a quarter of the semi-implicit Euler limits 4 and 2)
STABLE_STIFFNESS = 0.25
STABLE_DAMPING = 0.5
#: the most sub-steps per phase step; a drive that needs more runs at this many, with a note
MAX_SUBSTEPS = 64


def substeps(dt: float, ke: np.ndarray, kd: np.ndarray, inertia: np.ndarray) -> int:
    """The fewest sub-steps of ``dt`` that keep every explicit PD gain (``ke``, ``kd``) stable on
    its DOF's joint-space inertia (``inertia``, ``H_jj``); at least 1."""
    n = 1
    for k, d, m in zip(ke, kd, inertia):
        if not (m > 0 and math.isfinite(m)):
            continue
        if k > 0:
            n = max(n, math.ceil(dt * math.sqrt(k / (STABLE_STIFFNESS * m)) - 1e-9))
        if d > 0:
            n = max(n, math.ceil(dt * d / (STABLE_DAMPING * m) - 1e-9))
    return n


class NewtonBackend(Backend):
    """Newton's Featherstone on the model its ``add_usd`` reads, ``n_sub`` sub-steps per step."""

    name = "newton"

    def __init__(self, stage, fix_base: bool, dt: float = DEFAULT_DT, device: str = "cpu"):
        from ..fet022.engines import prepared
        from ..fet022.engines.base import EngineNotApplicable
        from ..fet022.engines.newton import NewtonEngine
        from ..schema import read_relations
        from ..warp_runtime import init_warp

        init_warp()
        engine = NewtonEngine(device=device)
        newton = self.newton = engine.newton
        prep = prepared.private_copy(stage)
        prepared.ensure_scene(prep)
        prepared.default_masses(prep, "Newton would give NaN")
        if fix_base:
            try:
                for body in prepared.floating_roots(prep.stage):
                    prepared.weld(prep, body, prepared.robot_root(prep.stage))
            except MimicInputError as exc:
                prep.notes.append(f"floating roots not looked for ({exc}); none welded")
        try:
            builder, newton_notes = engine._builder(prep)
        except EngineNotApplicable as exc:
            raise MimicInputError(str(exc)) from None
        self.notes = list(prep.notes) + newton_notes
        for read in engine._read(builder, prep.stage):
            if read.note:
                self.notes.append(f"Newton reads {read.follower}: {read.note}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model = builder.finalize(device=engine.device)
            except ValueError as exc:
                raise MimicInputError(f"Newton cannot build the model: {' '.join(str(exc).split())}") from None
        self.model = model
        labels = list(builder.joint_label)
        q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
        # Kit's DOFs: the 1-DOF revolute and prismatic joints of the stage, named by their prims
        dofs = []
        for j, label in enumerate(labels):
            prim = prep.stage.GetPrimAtPath(label) if label.startswith("/") else None
            kind = joints.joint_kind(prim) if prim else None
            if kind in (joints.REVOLUTE, joints.PRISMATIC) and qd_start[j + 1] - qd_start[j] == 1:
                dofs.append((label, int(q_start[j]), int(qd_start[j])))
        self.paths = [p for p, _, _ in dofs]
        self.dof_names = [p.rsplit("/", 1)[-1] for p in self.paths]
        self.q_index = np.array([q for _, q, _ in dofs], dtype=int)
        self._lower, self._upper = _authored_limits(prep.stage, dict(zip(self.dof_names, self.paths)), self.dof_names)

        self.dt = float(dt)
        self.state, self._next = model.state(), model.state()
        newton.eval_fk(model, self.state.joint_q, self.state.joint_qd, self.state)
        inertia = self._joint_inertia()
        ke, kd = model.joint_target_ke.numpy(), model.joint_target_kd.numpy()
        needed = substeps(self.dt, ke, kd, inertia)
        self.n_sub = min(needed, MAX_SUBSTEPS)
        h = self.dt / self.n_sub
        self.notes.append(
            f"Newton {newton.__version__} Featherstone, {self.n_sub} sub-step(s) of {h:.4g} s per {self.dt:.4g} s "
            f"phase step (the asset's drives as authored, explicit PD: ke h^2/H_jj <= {STABLE_STIFFNESS}, "
            f"kd h/H_jj <= {STABLE_DAMPING}); no contacts"
        )
        if needed > MAX_SUBSTEPS:
            self.notes.append(f"a drive needs {needed} sub-steps to be stable: run at {MAX_SUBSTEPS}, it may ring")
        self._cap_limit_springs(inertia, h)
        self.notes.append(
            "Newton's Featherstone applies no joint effort or velocity limits (physxJoint:maxJointVelocity and "
            "drive maxForce are not enforced)"
        )
        relations = [r for r in read_relations(stage) if r.enabled and r.invalid is None]
        if any(r.compliant for r in relations):
            self.notes.append("compliant relations run hard: Newton reads no naturalFrequency/dampingRatio")
        self.solver = newton.solvers.SolverFeatherstone(model)
        self.control = model.control()  # the asset's own targets, as add_usd read them
        self._targets = self.control.joint_target_q.numpy()
        #: Kit DOFs with a drive, for the past-a-limit check (Featherstone then switches the drive off)
        dof_ke = ke[[d for _, _, d in dofs]] if dofs else np.zeros(0)
        self._driven = [i for i in range(len(dofs)) if dof_ke[i] > 0]
        lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
        self._newton_limits = {i: (float(lower[dofs[i][2]]), float(upper[dofs[i][2]])) for i in self._driven}
        self._said_off: set[int] = set()

    def _joint_inertia(self) -> np.ndarray:
        """``H_jj`` per DOF of Newton's joint-space inertia at the start pose (inf: outside every
        articulation, never limiting a step)."""
        model = self.model
        H = self.newton.eval_mass_matrix(model, self.state).numpy()
        art_start = model.articulation_start.numpy()
        qd_start = model.joint_qd_start.numpy()
        diag = np.full(model.joint_dof_count, np.inf)
        for a in range(model.articulation_count):
            d0 = qd_start[art_start[a]]
            n = min(qd_start[art_start[a + 1]] - d0, H.shape[1])
            diag[d0 : d0 + n] = np.diagonal(H[a])[:n]
        return diag

    def _cap_limit_springs(self, inertia: np.ndarray, h: float) -> None:
        model = self.model
        lke, lkd = model.joint_limit_ke.numpy(), model.joint_limit_kd.numpy()
        k_max, d_max = STABLE_STIFFNESS * inertia / h**2, STABLE_DAMPING * inertia / h
        capped = int(np.count_nonzero((lke > k_max) | (lkd > d_max)))
        if capped:
            model.joint_limit_ke.assign(np.minimum(lke, k_max))
            model.joint_limit_kd.assign(np.minimum(lkd, d_max))
            self.notes.append(
                f"Newton's joint-limit springs (its defaults, not authored) capped at {STABLE_STIFFNESS} H_jj/h^2 "
                f"on {capped} DOF(s): stiffer ones diverge at the sub-step"
            )

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self._lower.copy(), self._upper.copy()

    def positions(self) -> np.ndarray:
        return np.asarray(self.state.joint_q.numpy()[self.q_index], dtype=np.float64)

    def set_targets(self, targets: np.ndarray) -> None:
        t = np.asarray(targets, dtype=np.float64).reshape(-1)
        if t.size != len(self.dof_names):
            raise ValueError(f"{t.size} targets for {len(self.dof_names)} DOFs")
        self._targets[self.q_index] = t  # Newton indexes targets as joint_q (joint_target_q_start)
        self.control.joint_target_q.assign(self._targets)

    def step(self, dt: float) -> None:
        if abs(dt - self.dt) > 1e-12 * self.dt:
            raise ValueError(f"the newton backend was built for {self.dt:g} s steps, asked for {dt:g} s")
        h = self.dt / self.n_sub
        for _ in range(self.n_sub):
            self.solver.step(self.state, self._next, self.control, None, h)
            self.state, self._next = self._next, self.state
        if len(self._said_off) < len(self._driven):
            self._note_drive_off()

    def _note_drive_off(self) -> None:
        """Newton's Featherstone (``joint_force``, shared with SolverSemiImplicit) applies no drive
        force to a joint past a limit, only the limit spring: a driven joint resting on its limit
        under gravity sags past it and its drive stays off. Said once per DOF."""
        q = self.positions()
        for i in self._driven:
            lo, hi = self._newton_limits[i]
            target = float(self._targets[self.q_index[i]])
            if i not in self._said_off and (q[i] < lo or q[i] > hi) and lo <= target <= hi:
                self._said_off.add(i)
                self.notes.append(
                    f"{self.dof_names[i]}: past its limit ({q[i]:.3g}, limits {lo:.4g}..{hi:.4g}) with its target "
                    f"{target:.4g} inside: Newton's Featherstone switches a joint's drive off past a limit (only the "
                    f"limit spring acts), so the drive cannot move it back"
                )

    def version(self) -> str:
        return f"newton {self.newton.__version__} (featherstone, {self.n_sub} sub-steps)"
