"""NVIDIA's phase on Newton: the robot as Newton's own ``add_usd`` reads it, on ``SolverSteel``.

The model is the one our sweep's Newton engine builds (``fet022.engines.newton``: Newton's
``ModelBuilder.add_usd`` on a flattened private copy, our default mass where Newton would give
NaN, relations stored only as legacy MuJoCo equalities set as joint mimics), with the asset's own
drives and targets and no test drive; a gripper's floating base is welded to the world.

Solver: ``SolverSteel``, Newton's reduced-coordinate articulation solver with a projected
Gauss-Seidel constraint solve (experimental in Newton 1.8), one solver step per phase step.
Why it, and not what Isaac Lab on Newton uses: that is ``SolverMuJoCo`` (MuJoCo Warp, implicit
actuators), which needs ``mujoco_warp`` even on MuJoCo's C library; Newton 1.8 pins mujoco and
mujoco-warp ~= 3.17, this environment has mujoco 3.16, and mujoco-warp 3.16.0 fails inside
``SolverMuJoCo`` (a ``vec11f`` equality-data dtype mismatch). Featherstone, tried first, applies a
drive as an explicit PD force (the Isaac 2F-85's ``finger_joint``, 172 N m/rad on 2.8e-4 kg m^2,
needs 7 sub-steps at 240 Hz) and switches a joint's drive off while the joint is past a limit
(``joint_force``): the finger rests on its lower limit under gravity, sags 1.7e-4 rad past it,
and the drive never moves it again (NVIDIA's phase: reference swept 0 rad, 5 of 5 pairs fail).
XPBD diverges on the gripper's light links. Steel solves as PhysX does: drives as PhysX's
articulation force drive (``drive_mode="rows"``, implicit, impulse clamped to the drive's
``maxForce``), joint limits and velocity limits as constraint rows, a mimic as a bilateral row
``q_f = coef0 + coef1 q_l``, loop-closing joints as rows; stiff drives need no sub-steps.

Units at the handle are Kit's: Newton's joint coordinates are radians, and stage units for a
prismatic joint, as PhysX's tensor API gives them.

A PhysX-authored relation runs as Newton reads it: ``add_usd`` takes PhysX's offset number
unconverted (a revolute follower's degrees as radians; ``newton_reading`` notes it) and reads no
``naturalFrequency``/``dampingRatio`` (a compliant relation is hard). That is what a Newton user
gets from this asset, and what Kit on Newton reads too (its scene calls the same
``ModelBuilder.add_usd``), so it is Newton's finding, not the adapter's to correct.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import MimicInputError
from ..schema import joints
from .backends import DEFAULT_DT, Backend, _authored_limits

#: Steel's options: PhysX's drive model, limits and velocity limits enforced (both off by default)
STEEL_OPTIONS = {"drive_mode": "rows", "enable_joint_limits": True, "enable_joint_velocity_limits": True}


class NewtonBackend(Backend):
    """Newton's ``SolverSteel`` on the model its ``add_usd`` reads, one step per phase step."""

    name = "newton"

    def __init__(self, stage, fix_base: bool, dt: float = DEFAULT_DT, device: str = "cpu"):
        from ..fet022.engines import prepared
        from ..fet022.engines.base import EngineNotApplicable
        from ..fet022.engines.newton import SOLVERS, NewtonEngine
        from ..warp_runtime import init_warp

        init_warp()
        # the sweep's "newton:xpbd" arrives as device "xpbd": the phase runs on Steel whatever
        # solver our port used, on the CPU unless a device is named
        engine = NewtonEngine(device=None if device in SOLVERS else device)
        newton = self.newton = engine.newton
        prep = prepared.private_copy(stage)
        prepared.ensure_scene(prep)
        prepared.default_masses(prep, "Newton would give NaN")
        if fix_base:
            prepared.weld_floating_roots(prep)
        try:
            builder, newton_notes = engine._builder(prep)
            reads = engine._read(builder, prep.stage)
        except EngineNotApplicable as exc:
            raise MimicInputError(str(exc)) from None
        self.notes = list(prep.notes) + newton_notes
        self.notes += [f"Newton reads {r.follower}: {r.note}" for r in reads if r.note]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model = builder.finalize(device=engine.device)
                # room for every row a step can ask for (Steel's default, 32, drops rows of a
                # gripper with a loop): two limit rows, a drive row and a velocity-limit row per
                # DOF, and up to six per joint (a loop closure; a mimic takes one)
                rows = 4 * model.joint_dof_count + 6 * model.joint_count + 8
                self.solver = newton.solvers.SolverSteel(model, articulation_constraint_max=rows, **STEEL_OPTIONS)
            except (ValueError, NotImplementedError) as exc:  # Newton's own one-line reason
                raise MimicInputError(f"Newton cannot build the model: {' '.join(str(exc).split())}") from None
        said = dict.fromkeys(
            " ".join(str(w.message).split()) for w in caught if not issubclass(w.category, DeprecationWarning)
        )
        self.notes += [f"Newton: {m}" for m in said]
        self.model = model
        labels = list(builder.joint_label)
        q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
        # Kit's DOFs: the 1-DOF revolute and prismatic joints of the stage, named by their prims
        self.paths: list[str] = []
        q_index = []
        for j, label in enumerate(labels):
            prim = prep.stage.GetPrimAtPath(label) if label.startswith("/") else None
            kind = joints.joint_kind(prim) if prim else None
            if kind in (joints.REVOLUTE, joints.PRISMATIC) and qd_start[j + 1] - qd_start[j] == 1:
                self.paths.append(label)
                q_index.append(int(q_start[j]))
        self.dof_names = [p.rsplit("/", 1)[-1] for p in self.paths]
        #: each DOF's joint coordinate; Newton indexes targets the same way (joint_target_q_start)
        self.q_index = np.array(q_index, dtype=int)
        self._lower, self._upper = _authored_limits(prep.stage, dict(zip(self.dof_names, self.paths)), self.dof_names)
        self.dt = float(dt)
        self.state, self._next = model.state(), model.state()
        newton.eval_fk(model, self.state.joint_q, self.state.joint_qd, self.state)
        self.control = model.control()  # the asset's own targets, as add_usd read them
        self._targets = self.control.joint_target_q.numpy()
        self.notes.append(
            f"Newton {newton.__version__} SolverSteel ({', '.join(f'{k}={v}' for k, v in STEEL_OPTIONS.items())}), "
            f"one step per {self.dt:.4g} s phase step; the asset's drives as authored; no contacts"
        )

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self._lower.copy(), self._upper.copy()

    def positions(self) -> np.ndarray:
        return np.asarray(self.state.joint_q.numpy()[self.q_index], dtype=np.float64)

    def set_targets(self, targets: np.ndarray) -> None:
        t = np.asarray(targets, dtype=np.float64).reshape(-1)
        if t.size != len(self.dof_names):
            raise ValueError(f"{t.size} targets for {len(self.dof_names)} DOFs")
        self._targets[self.q_index] = t
        self.control.joint_target_q.assign(self._targets)

    def step(self, dt: float) -> None:
        if abs(dt - self.dt) > 1e-12 * self.dt:
            raise ValueError(f"the newton backend was built for {self.dt:g} s steps, asked for {dt:g} s")
        self.solver.step(self.state, self._next, self.control, None, self.dt)
        self.state, self._next = self._next, self.state

    def version(self) -> str:
        return f"newton {self.newton.__version__} (SolverSteel)"
