"""What a Kit articulation gives NVIDIA's phase, from each of our engines: one robot's DOFs.

A backend holds one simulated robot (the articulation NVIDIA's ``get_articulation_root_path``
names, on the scene ``scene.build_scene`` prepared) and answers in Kit's articulation
convention (``robot_handle.py``): DOFs named by joint prim name, positions and limits in
radians or stage units (PhysX's tensor API), a dense position-target vector for every DOF
(a DOF without a drive ignores its target, as on PhysX), one physics step of ``dt`` seconds.

* ``warp``: mimic_ext's solver (``solver.build_model`` / ``Solver.step``), one environment.
* ``physx``: real PhysX through ovphysx (``fet022.engines.physx_session.PhysxSession``) on a
  flattened private copy of the stage; PhysX reads the authored velocity limits itself.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import MimicInputError
from ..schema import joints

ENGINES = ("warp", "physx")


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

    def limits(self) -> tuple[np.ndarray, np.ndarray]:
        return self.model.lower * self.scale, self.model.upper * self.scale

    def positions(self) -> np.ndarray:
        return np.asarray(self.state.joint_q.numpy()[0, : self.n], dtype=np.float64) * self.scale

    def set_targets(self, targets: np.ndarray) -> None:
        t = np.asarray(targets, dtype=np.float64).reshape(-1)
        if t.size != self.n:
            raise ValueError(f"{t.size} targets for {self.n} DOFs")
        self._targets[0, : self.n] = t / self.scale
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
            try:
                for body in prepared.floating_roots(prep.stage):
                    prepared.weld(prep, body, prepared.robot_root(prep.stage))
            except MimicInputError as exc:
                prep.notes.append(f"floating roots not looked for ({exc}); none welded")
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


def open_backend(engine: str, stage, fix_base: bool, root: str, device: str = "cpu") -> Backend:
    if engine == "warp":
        return WarpBackend(stage, fix_base, device)
    if engine == "physx":
        return PhysxBackend(stage, fix_base, root, device)
    raise MimicInputError(f"engine '{engine}': NVIDIA's phase runs on {', '.join(ENGINES)}")
