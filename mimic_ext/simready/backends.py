"""What a Kit articulation gives NVIDIA's phase, from each of our engines: one robot's DOFs.

A backend holds one simulated robot (the articulation NVIDIA's ``get_articulation_root_path``
names, on the scene ``scene.build_scene`` prepared) and answers in Kit's articulation
convention (``robot_handle.py``): DOFs named by joint prim name, positions and limits in
radians or stage units (PhysX's tensor API), a dense position-target vector for every DOF
(a DOF without a drive ignores its target, as on PhysX), one physics step of ``dt`` seconds.

* ``warp``: mimic_ext's solver (``solver.build_model`` / ``Solver.step``), one environment.
* ``physx``: real PhysX through ovphysx (``fet022.engines.physx_session.PhysxSession``) on a
  flattened private copy of the stage; PhysX reads the authored velocity limits itself.
* ``mujoco``: MuJoCo built as our sweep's MuJoCo engine builds it (``MujocoEngine.build_model``:
  URDF export, position actuators on the asset's drives, ``discrete`` integrator, one MuJoCo step
  per phase step, hard relations as stiff joint equalities), without the sweep's test drives; a
  compliant relation becomes a spring-damper equality (``compliant_equality``).
* ``newton``: Newton's Featherstone on the model its own ``add_usd`` reads, sub-stepped for the
  asset's stiff drives (``newton_backend.NewtonBackend``).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import MimicInputError
from ..schema import joints

ENGINES = ("warp", "physx", "mujoco", "newton")
#: the time step a backend is built for when the phase does not say (its default physics_fps)
DEFAULT_DT = 1.0 / 240.0


class Backend:
    """One robot on one engine; subclasses fill ``dof_names`` and the four methods."""

    name = ""
    dof_names: list[str]
    notes: list[str]

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def positions(self) -> np.ndarray:
        raise NotImplementedError

    def set_targets(self, targets: np.ndarray) -> None:
        raise NotImplementedError

    def step(self, dt: float) -> None:
        raise NotImplementedError

    def version(self) -> str:
        return ""

    def close(self) -> None:
        pass


class WarpBackend(Backend):
    """mimic_ext's solver on the stage as it is (its own relations, drives and velocity limits);
    every articulation tree of the stage is in the model, ``dof_names`` are their joints."""

    name = "warp"

    def __init__(self, stage, fix_base: bool, device: str = "cpu"):
        from ..solver import Solver, build_model
        from ..warp_runtime import init_warp

        init_warp()
        self.notes: list[str] = []
        relations = None  # the stage's own, as the solver reads them
        for _ in range(64):
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    self.model = build_model(
                        stage, num_envs=1, device=device, fix_base=fix_base, contacts=False, relations=relations
                    )
                break
            except MimicInputError as exc:
                # PhysX ignores a mimic it cannot build (and the phase then finds the pair
                # unresolvable or untracked); the solver refuses the model: drop that relation
                relations = _without(stage, relations, str(exc))
                if relations is None:
                    raise
                self.notes.append(f"relation dropped, as PhysX would ignore it: {exc}")
        self.notes += [str(w.message) for w in caught] + list(self.model.warnings)
        self.solver = Solver(self.model)
        self.state = self.model.state()
        self.control = self.model.control()
        self.n = len(self.model.joint_paths)
        self.dof_names = [p.rsplit("/", 1)[-1] for p in self.model.joint_paths]
        mpu = joints.meters_per_unit(stage)
        #: SI -> Kit's units per DOF (prismatic: stage units)
        self.scale = np.array([1.0 / mpu if k == joints.PRISMATIC else 1.0 for k in self.model.joint_kind])
        self._targets = self.control.joint_target_q.numpy()
        #: on the CPU ``numpy()`` is a view of the Warp array itself: a target written to it is set,
        #: with no copy per step (480 of them in NVIDIA's phase); a device array is copied to
        self._aliased = np.shares_memory(self._targets, self.control.joint_target_q.numpy())

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self.model.lower * self.scale, self.model.upper * self.scale

    def positions(self) -> np.ndarray:
        return np.asarray(self.state.joint_q.numpy()[0, : self.n], dtype=np.float64) * self.scale

    def set_targets(self, targets: np.ndarray) -> None:
        t = np.asarray(targets, dtype=np.float64).reshape(-1)
        if t.size != self.n:
            raise ValueError(f"{t.size} targets for {self.n} DOFs")
        self._targets[0, : self.n] = t / self.scale
        if not self._aliased:
            self.control.joint_target_q.assign(self._targets)

    def step(self, dt: float) -> None:
        self.solver.step(self.state, self.state, self.control, dt)

    def version(self) -> str:
        import warp as wp

        from .. import __version__

        return f"mimic_ext {__version__} (warp {wp.config.version})"


class PhysxBackend(Backend):
    """Real PhysX (ovphysx) on a flattened private copy: the stage's own drives, masses and
    velocity limits as PhysX reads them; the robot's articulation only."""

    name = "physx"

    def __init__(self, stage, fix_base: bool, root: str, device: str = "cpu"):
        from ..fet022.engines import prepared
        from ..fet022.engines.physx_session import PhysxSession, joint_names, versions
        from ..native_stderr import quiet_native_stderr

        prep = prepared.private_copy(stage)
        prepared.ensure_scene(prep)
        if fix_base:
            prepared.weld_floating_roots(prep)
        roots = [str(p.GetPath()) for p in prepared.articulation_roots(prep.stage)]
        if root not in roots:
            raise MimicInputError(f"{root}: PhysX finds no articulation root there (roots: {', '.join(roots)})")
        self.articulation = roots.index(root)
        by_name, _twice, prismatic = joint_names(prep.stage)
        with quiet_native_stderr():
            usda = prep.stage.Flatten().ExportToString()
        self.session = PhysxSession(
            usda,
            roots,
            by_name,
            device=device,
            meters_per_unit=joints.meters_per_unit(prep.stage),
            prismatic=prismatic,
        )
        self.notes = list(prep.notes)
        self.dof_names = self.session.dof_names(self.articulation)
        self._versions = versions()
        limits = _authored_limits(prep.stage, by_name, self.dof_names)
        self._lower, self._upper = limits

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self._lower.copy(), self._upper.copy()

    def positions(self) -> np.ndarray:
        return self.session.dof_rows(self.articulation)[0].astype(np.float64)

    def set_targets(self, targets: np.ndarray) -> None:
        t = np.asarray(targets, dtype=np.float64).reshape(1, -1)
        self.session.write_target_rows(self.articulation, t)

    def step(self, dt: float) -> None:
        self.session.step(dt)

    def version(self) -> str:
        return "ovphysx " + self._versions.get("ovphysx", "?")

    def close(self) -> None:
        self.session.close()
        self.notes.extend(f"PhysX: {line}" for line in self.session.log)


class MujocoBackend(Backend):
    """MuJoCo on the model our sweep's MuJoCo engine builds from the stage (its joint names, signs
    and units), with the asset's own drives as position actuators and nothing added. MuJoCo's URDF
    compiler welds the root link to the world, so a gripper's base is pinned (and so is any other
    robot's root: a note says so)."""

    name = "mujoco"

    def __init__(self, stage, fix_base: bool, dt: float = DEFAULT_DT, device: str = "cpu"):
        from ..fet022.engines.mujoco import STIFF_SOLIMP, MujocoEngine, integrator_note, stiff_equalities
        from ..schema import read_relations

        self.engine = MujocoEngine(device=device)
        mujoco = self.mujoco = self.engine.mujoco
        self._said: list[str] = []
        self._previous = mujoco.get_mju_user_warning()
        mujoco.set_mju_user_warning(lambda msg: self._said.append(" ".join(str(msg).split())))
        try:
            relations = [r for r in read_relations(stage) if r.enabled and r.invalid is None]
            model, ids, actuator, drives, notes = self.engine.build_model(stage, dt, relations, fix_base=fix_base)
        except BaseException:
            mujoco.set_mju_user_warning(self._previous)
            raise
        self.notes = list(notes)
        self.n_sub = self.engine.substeps_for(model, ids, drives)
        self.dt = float(dt)
        model.opt.timestep = self.dt / self.n_sub
        stiff_equalities(mujoco, model)
        self.notes.append(
            f"hard mimic joint equalities at solref ({2 * model.opt.timestep:.3g} s, 1) and solimp "
            f"({', '.join(f'{v:g}' for v in STIFF_SOLIMP)})"
        )
        self.notes += compliant_equalities(mujoco, model, ids, relations)
        self.notes.append(integrator_note(mujoco, model))
        self.model = model
        self.data = mujoco.MjData(model)
        order = sorted(ids, key=lambda p: ids[p][0])  # MuJoCo's joint order
        self.paths = order
        self.dof_names = [p.rsplit("/", 1)[-1] for p in order]
        self.adr = np.array([int(model.jnt_qposadr[ids[p][0]]) for p in order])
        self.sign = np.array([ids[p][1] for p in order])
        mpu = joints.meters_per_unit(stage)
        kinds = [joints.joint_kind(stage.GetPrimAtPath(p)) for p in order]
        #: SI -> Kit's units per DOF (prismatic: stage units)
        self.scale = np.array([1.0 / mpu if k == joints.PRISMATIC else 1.0 for k in kinds])
        #: (DOF index, actuator index) of every driven DOF: an undriven DOF ignores its target
        self.driven = [(order.index(p), a) for p, a in actuator.items() if p in ids]
        for i, a in self.driven:
            self.data.ctrl[a] = self.sign[i] * drives[order[i]][3]  # the asset's own targets
        self._lower, self._upper = _authored_limits(stage, dict(zip(self.dof_names, order)), self.dof_names)

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self._lower.copy(), self._upper.copy()

    def positions(self) -> np.ndarray:
        return self.sign * self.data.qpos[self.adr] * self.scale

    def set_targets(self, targets: np.ndarray) -> None:
        t = np.asarray(targets, dtype=np.float64).reshape(-1)
        if t.size != len(self.dof_names):
            raise ValueError(f"{t.size} targets for {len(self.dof_names)} DOFs")
        for i, a in self.driven:
            self.data.ctrl[a] = self.sign[i] * t[i] / self.scale[i]

    def step(self, dt: float) -> None:
        if abs(dt - self.dt) > 1e-12 * self.dt:
            raise ValueError(f"the mujoco backend was built for {self.dt:g} s steps, asked for {dt:g} s")
        self.mujoco.mj_step(self.model, self.data, nstep=self.n_sub)

    def version(self) -> str:
        return "mujoco " + self.mujoco.__version__

    def close(self) -> None:
        self.mujoco.set_mju_user_warning(self._previous)
        self.notes.extend(f"MuJoCo: {m}" for m in dict.fromkeys(self._said))


def compliant_equalities(mujoco, model, ids, relations) -> list[str]:
    """A compliant relation (naturalFrequency w, dampingRatio zeta; PhysX's spring-damper on the
    relation's error) as its MuJoCo joint equality: ``solref`` in MuJoCo's direct form
    ``(-w^2, -2 zeta w)`` (reference acceleration ``-w^2 e - 2 zeta w e'``) and a constant impedance
    ``SOFT_IMPEDANCE``, MuJoCo's smallest. The equality's force is then ``m (w^2 e + 2 zeta w e')``
    (``m`` its effective mass) plus ``d m`` times what it would take to hold it: a spring-damper on
    the error, as PhysX's, and not a constraint that reaches its target along that response
    whatever the load (an impedance near 1 would keep a follower on its reference however soft
    the solref). Returns one note per relation so made."""
    by_joint = {jid: p for p, (jid, _s) in ids.items()}
    soft = {str(r.follower): r for r in relations if r.compliant}
    notes = []
    for e in range(model.neq):
        if model.eq_type[e] != mujoco.mjtEq.mjEQ_JOINT:
            continue
        r = soft.get(by_joint.get(int(model.eq_obj1id[e]), ""))
        if r is None:
            continue
        w, z = float(r.natural_frequency), float(r.damping_ratio)
        model.eq_solimp[e][:3] = (SOFT_IMPEDANCE, SOFT_IMPEDANCE, 0.001)
        scale = _mass_scale(mujoco, model, e)
        model.eq_solref[e] = (-w * w * scale, -2.0 * z * w * scale)
        notes.append(
            f"{r.follower}: compliant (naturalFrequency {w:g}, dampingRatio {z:g}) as a MuJoCo joint equality "
            f"with solref ({-w * w * scale:.4g}, {-2 * z * w * scale:.4g}) and impedance {SOFT_IMPEDANCE:g} "
            f"(stiffness and damping per unit of MuJoCo's estimate of its inverse mass, {scale:.4g} x the exact one)"
        )
    return notes


def _mass_scale(mujoco, model, e: int) -> float:
    """MuJoCo's estimate of equality ``e``'s inverse effective mass (its regulariser's
    ``diagApprox``: the two joints' ``dof_invweight0`` summed, the relation's coefficient left
    out) over the exact ``J M^-1 J^T`` at ``qpos0``: the factor that makes the equality's spring
    ``w^2`` per unit of the exact effective mass."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    f, l = int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
    df, dl = int(model.jnt_dofadr[f]), int(model.jnt_dofadr[l])
    jac = np.zeros(model.nv)
    jac[df] += 1.0
    jac[dl] -= float(model.eq_data[e][1])
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    exact = float(jac @ np.linalg.solve(full, jac))
    estimate = float(model.dof_invweight0[df] + model.dof_invweight0[dl])
    return estimate / exact if exact > 0 and estimate > 0 else 1.0


#: the impedance of a compliant relation's equality: MuJoCo's smallest (mjMINIMP)
SOFT_IMPEDANCE = 0.0001


def _without(stage, relations, error: str):
    """``relations`` (None: the stage's) less those the solver's error names, or None when it
    names none of them."""
    from ..schema import read_relations

    rels = list(read_relations(stage) if relations is None else relations)
    keep = [r for r in rels if str(r.follower) not in error and str(r.leader) not in error]
    return keep if len(keep) < len(rels) else None


def _authored_limits(stage, by_name: dict[str, str], names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The limits PhysX's DOF properties hold: the joints' authored limits in radians (revolute)
    or stage units (prismatic); unlimited or unauthored: -inf / +inf."""
    import math

    lo = np.full(len(names), -np.inf)
    hi = np.full(len(names), np.inf)
    for i, name in enumerate(names):
        path = by_name.get(name)
        prim = stage.GetPrimAtPath(path) if path else None
        if not prim:
            continue
        a, b = prim.GetAttribute("physics:lowerLimit"), prim.GetAttribute("physics:upperLimit")
        va = a.Get() if a and a.HasAuthoredValue() else None
        vb = b.Get() if b and b.HasAuthoredValue() else None
        conv = math.radians if joints.joint_kind(prim) == joints.REVOLUTE else float
        if va is not None and math.isfinite(float(va)):
            lo[i] = conv(float(va))
        if vb is not None and math.isfinite(float(vb)):
            hi[i] = conv(float(vb))
    return lo, hi


def open_backend(engine: str, stage, fix_base: bool, root: str, device: str = "cpu", dt: float = DEFAULT_DT) -> Backend:
    if engine == "mujoco":
        return MujocoBackend(stage, fix_base, dt, device)
    if engine == "warp":
        return WarpBackend(stage, fix_base, device)
    if engine == "physx":
        return PhysxBackend(stage, fix_base, root, device)
    if engine == "newton":
        from .newton_backend import NewtonBackend

        return NewtonBackend(stage, fix_base, dt, device)
    raise MimicInputError(f"engine '{engine}': NVIDIA's phase runs on {', '.join(ENGINES)}")
