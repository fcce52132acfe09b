"""The physics behind the ``omni.physx`` stand-in: real NVIDIA PhysX through ``ovphysx`` where it is
installed, mimic_ext's Warp solver otherwise (stand-in only; the tests choose with
``omni.physx._stub_use_backend``).

Both read what real omni.physx reads on ``attach_stage``: the composed stage (its session layer and
sublayers included), as one flattened layer. Both answer per articulation root, the way
``omni.physics.tensors`` asks (DOF and link paths, DOF positions and position targets in radians or
stage units, link world poses ``(px, py, pz, qx, qy, qz, qw)`` in stage units).

* ``OvphysxBackend`` reuses ``mimic_ext.fet022.engines.physx_session.PhysxSession`` (one PhysX
  instance, CPU pipeline, tensor bindings per articulation); ovphysx names DOFs and links by prim
  name, so a DOF whose joint name is used twice on the stage has no path here ("") while real
  omni.physics.tensors gives every DOF's path. PhysxSession warms PhysX up with one internal step
  after the scene is built (ovphysx needs it before its tensor bindings answer); real omni.physx
  does not, the CLI's physx engine does the same as this stand-in.
* ``WarpBackend`` builds mimic_ext's solver model from the same flattened layer (``fix_base=False``:
  it reads the welds a caller authored, as PhysX does). A joint belongs to the articulation root
  that is its prim's or one of its bodies' ancestor (all joints when there is one root): PhysX
  groups by connectivity, which gives the same grouping on these stages.
"""

from __future__ import annotations

import warnings

import numpy as np
from pxr import Usd, UsdPhysics

from mimic_ext.fet022.engines import prepared
from mimic_ext.native_stderr import quiet_native_stderr
from mimic_ext.schema import joints

OVPHYSX, WARP = "ovphysx", "warp"


def ovphysx_version() -> str | None:
    try:
        import ovphysx
    except ImportError:
        return None
    return str(ovphysx.__version__)


def _flattened(stage: Usd.Stage) -> Usd.Stage:
    with quiet_native_stderr():
        return Usd.Stage.Open(stage.Flatten())


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class OvphysxBackend:
    name = OVPHYSX

    def __init__(self, stage: Usd.Stage):
        from mimic_ext.fet022.engines import physx_session as ps

        flat = _flattened(stage)
        self.roots = [str(p.GetPath()) for p in prepared.articulation_roots(flat)]
        self.mpu = joints.meters_per_unit(flat)
        by_name, _, prismatic = ps.joint_names(flat)
        self._bodies = ps.body_names(flat)
        self._joints = by_name
        self.session = ps.PhysxSession(
            flat.GetRootLayer().ExportToString(),
            self.roots,
            by_name,
            device="cpu",
            meters_per_unit=self.mpu,
            prismatic=prismatic,
            name="omni_physx_stub",
            bodies_by_name=self._bodies,
        )
        self.log: list[str] = []

    def dof_paths(self, a: int) -> list[str]:
        return [self._joints.get(n, "") for n in self.session.dof_names(a)]

    def link_paths(self, a: int) -> list[str]:
        return [self._bodies.get(n, "") for n in self.session.link_names(a)]

    def dof_rows(self, a: int) -> np.ndarray:
        return self.session.dof_rows(a)

    def target_rows(self, a: int) -> np.ndarray:
        return self.session.dof_rows(a, targets=True)

    def write_target_rows(self, a: int, rows: np.ndarray) -> None:
        self.session.write_target_rows(a, rows)

    def link_rows(self, a: int) -> np.ndarray:
        return self.session.link_rows(a)

    def step(self, dt: float) -> None:
        self.session.step(dt)

    def close(self) -> None:
        self.session.close()
        self.log = list(self.session.log)


class WarpBackend:
    name = WARP

    def __init__(self, stage: Usd.Stage):
        import warp as wp

        from mimic_ext.solver import Solver, build_model
        from mimic_ext.warp_runtime import init_warp

        init_warp()
        flat = _flattened(stage)
        self._wp = wp
        self.roots = [str(p.GetPath()) for p in prepared.articulation_roots(flat)]
        self.mpu = joints.meters_per_unit(flat)
        with warnings.catch_warnings(record=True) as caught:  # what PhysX would log, kept in ``log``
            warnings.simplefilter("always")
            self.model = build_model(flat, num_envs=1, device="cpu", fix_base=False)
        self.state, self._next = self.model.state(), self.model.state()
        self.control = self.model.control()
        self.solver = Solver(self.model)
        self._dofs: list[list[int]] = [[] for _ in self.roots]
        self._bodies: list[list[str]] = [[] for _ in self.roots]
        for i, j in enumerate(self.model.joints):
            prim = flat.GetPrimAtPath(j.path)
            near = [j.path, *(b for b in joints.joint_bodies(prim) if b)]
            owner = next((a for a, r in enumerate(self.roots) if any(_under(p, r) for p in near)), 0)
            self._dofs[owner].append(i)
        for lk in self.model.links:
            for body, _ in lk.bodies:
                owner = next((a for a, r in enumerate(self.roots) if _under(body, r)), 0)
                self._bodies[owner].append(body)
        self._scale = np.array([self.mpu if k == joints.PRISMATIC else 1.0 for k in self.model.joint_kind])
        self.log: list[str] = [str(w.message) for w in caught]

    def dof_paths(self, a: int) -> list[str]:
        return [self.model.joint_paths[i] for i in self._dofs[a]]

    def link_paths(self, a: int) -> list[str]:
        return list(self._bodies[a])

    def dof_rows(self, a: int) -> np.ndarray:
        idx = self._dofs[a]
        return (self.state.joint_q.numpy()[:, idx] / self._scale[idx]).astype(float)

    def target_rows(self, a: int) -> np.ndarray:
        idx = self._dofs[a]
        return (self.control.joint_target_q.numpy()[:, idx] / self._scale[idx]).astype(float)

    def write_target_rows(self, a: int, rows: np.ndarray) -> None:
        idx = self._dofs[a]
        table = self.control.joint_target_q.numpy()
        table[:, idx] = np.asarray(rows, float) * self._scale[idx]
        self._wp.copy(
            self.control.joint_target_q,
            self._wp.array(table, dtype=self.control.joint_target_q.dtype, device=self.model.device),
        )

    def link_rows(self, a: int) -> np.ndarray:
        from mimic_ext.solver.inspect import body_poses
        from mimic_ext.solver.stage_reader import mat_to_quat_xyzw

        poses = body_poses(self.model, self.state.joint_q.numpy()[0])
        out = np.zeros((1, len(self._bodies[a]), 7))
        for col, body in enumerate(self._bodies[a]):
            t = poses[body]
            out[0, col, :3] = t[:3, 3] / self.mpu
            out[0, col, 3:] = mat_to_quat_xyzw(t[:3, :3])
        return out

    def step(self, dt: float) -> None:
        self.solver.step(self.state, self._next, self.control, dt)
        self.state, self._next = self._next, self.state

    def close(self) -> None:
        pass


def make_backend(name: str, stage: Usd.Stage):
    return OvphysxBackend(stage) if name == OVPHYSX else WarpBackend(stage)


def joint_state_attr(prim: Usd.Prim) -> str | None:
    """The PhysxSchema joint state position attribute PhysX writes for this joint, when its
    ``PhysicsJointStateAPI:angular|linear`` is applied."""
    kind = "linear" if prim.IsA(UsdPhysics.PrismaticJoint) else "angular"
    if f"PhysicsJointStateAPI:{kind}" not in prim.GetAppliedSchemas():
        return None
    return f"state:{kind}:physics:position"
