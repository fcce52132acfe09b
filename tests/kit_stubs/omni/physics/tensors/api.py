"""Stand-in for ``omni.physics.tensors.api``: simulation and articulation views over the attached PhysX scene.

Real sources (isaacsim-extscache-physics 6.2.0.0, omni.physics.tensors 110.4.4; NVIDIA-Omniverse/PhysX for the
native parts):

* ``api.py`` ``create_simulation_view(frontend_name, stage_id=-1, backend="physx")``: raises
  ``Exception("Failed to create simulation view with backend '...'")`` when the backend gives none, and
  ``Exception("The Numpy frontend cannot be used with GPU pipelines")`` for "numpy" on a GPU pipeline;
  ``SimulationView.invalidate/is_valid/set_subspace_roots/create_articulation_view/step/check``.
* ``ArticulationView``: ``count``, ``max_dofs``, ``max_links``, ``prim_paths``, ``dof_paths`` and ``link_paths``
  (lists per articulation, ``PhysicsTensorsBindingsPython.cpp``), ``get_dof_positions`` (radians, stage units
  for prismatic DOFs), ``get_dof_position_targets``, ``set_dof_position_targets(data, indices)`` (data
  ``(count, max_dofs)``, rows of ``indices`` written; sparse DOFs are not supported),
  ``get_link_transforms`` (``(count, max_links, 7)``: position, quaternion x y z w). A getter fills and
  returns the same array every call (``api.py``: ``self._dof_positions`` is created once); a failing backend
  call raises ``Exception("Failed to ... backend")``.
* ``omni.physx.tensors/plugins/base/BaseSimulationView.cpp``: ``findMatchingPaths`` takes an existing prim
  path as it is, else matches each ``/`` component with ``TfPatternMatcher`` globs; ``findMatchingArticulations``
  keeps the matches that are articulations, and a pattern matching none logs
  ``"Pattern '%s' did not match any rigid bodies"`` (sic); ``onAllPhysXObjectDeletedCallback`` invalidates every
  view when PhysX releases its objects (``detach_stage``).

Only the numpy frontend is provided (the Kit layer uses no other); another name raises.
"""

from __future__ import annotations

import fnmatch

import carb
import numpy as np
from omni.physx.bindings._physx import SCENE


def _backend_or_fail(generation: int):
    if SCENE.backend is None or SCENE.generation != generation:
        return None
    return SCENE.backend


def create_simulation_view(frontend_name, stage_id=-1, backend="physx"):
    """Creates an entry point to the physics simulation through physics tensors."""
    if backend != "physx" or SCENE.backend is None or (stage_id not in (-1, SCENE.stage_id)):
        raise Exception(f"Failed to create simulation view with backend '{backend}'")
    frontend = str(frontend_name).lower()
    if frontend in ("numpy", "np"):
        if SCENE.device_ordinal != -1:
            raise Exception("The Numpy frontend cannot be used with GPU pipelines")
        return SimulationView(SCENE.generation)
    raise Exception(f"stand-in: only the numpy frontend is provided, not '{frontend_name}'")


def reset(backend="physx"):
    pass


class SimulationView:
    def __init__(self, generation: int):
        self._generation = generation
        self._valid = True

    @property
    def device(self):
        return "cpu"

    @property
    def device_ordinal(self):
        return -1

    @property
    def is_valid(self):
        return self._valid and _backend_or_fail(self._generation) is not None

    def invalidate(self):
        self._valid = False

    def check(self):
        return self.is_valid

    def set_subspace_roots(self, pattern):
        if not str(pattern).startswith("/"):
            raise Exception("Failed to set subspace roots")

    def create_articulation_view(self, pattern):
        physics = _backend_or_fail(self._generation) if self._valid else None
        patterns = [pattern] if isinstance(pattern, str) else list(pattern)
        found: list[int] = []
        for pat in patterns:
            hits = [a for a, root in enumerate(physics.roots if physics else []) if _matches(pat, root)]
            if not hits:
                carb.log_error(f"Pattern '{pat}' did not match any rigid bodies")
            found += [a for a in hits if a not in found]
        return ArticulationView(self, found)

    def step(self, dt):
        from omni.physx import get_physx_simulation_interface

        sim = get_physx_simulation_interface()
        sim.simulate(dt, 0.0)
        sim.fetch_results()


def _matches(pattern: str, path: str) -> bool:
    if pattern == path:
        return True
    want, have = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(want) == len(have) and all(fnmatch.fnmatchcase(h, w) for w, h in zip(want, have))


class ArticulationView:
    def __init__(self, sim: SimulationView, articulations: list[int]):
        self._sim = sim
        self._articulations = articulations
        physics = self._physics(quiet=True)
        self._dof_paths = [physics.dof_paths(a) for a in articulations] if physics else []
        self._link_paths = [physics.link_paths(a) for a in articulations] if physics else []
        self._roots = [physics.roots[a] for a in articulations] if physics else []

    def _physics(self, quiet: bool = False):
        physics = _backend_or_fail(self._sim._generation) if self._sim._valid else None
        if physics is None and not quiet:
            carb.log_error("Simulation view object is invalidated and cannot be used again to call this function")
        return physics

    @property
    def count(self):
        return len(self._articulations)

    @property
    def max_dofs(self):
        return max((len(p) for p in self._dof_paths), default=0)

    @property
    def max_links(self):
        return max((len(p) for p in self._link_paths), default=0)

    @property
    def is_homogeneous(self):
        return len({len(p) for p in self._dof_paths}) <= 1

    @property
    def prim_paths(self):
        return list(self._roots)

    @property
    def dof_paths(self):
        return [list(p) for p in self._dof_paths]

    @property
    def link_paths(self):
        return [list(p) for p in self._link_paths]

    def check(self):
        return self._physics(quiet=True) is not None

    def _rows(self, read, attr: str, what: str, width: int, extra: tuple = ()):
        physics = self._physics()
        if physics is None:
            raise Exception(f"Failed to get {what} from backend")
        if not hasattr(self, attr):
            setattr(self, attr, np.zeros((self.count, width, *extra), np.float32))
        out = getattr(self, attr)
        for i, a in enumerate(self._articulations):
            row = read(physics, a)[0]
            out[i, : len(row)] = row
        return out

    def get_dof_positions(self):
        return self._rows(lambda p, a: p.dof_rows(a), "_dof_positions", "DOF positions", self.max_dofs)

    def get_dof_position_targets(self):
        return self._rows(lambda p, a: p.target_rows(a), "_dof_position_targets", "DOF position targets", self.max_dofs)

    def get_link_transforms(self):
        return self._rows(lambda p, a: p.link_rows(a), "_link_transforms", "link transforms", self.max_links, (7,))

    def set_dof_position_targets(self, data, indices):
        data = np.ascontiguousarray(data, dtype=np.float32)
        indices = np.ascontiguousarray(indices, dtype=np.uint32).reshape(-1)
        physics = self._physics()
        if physics is None or data.shape != (self.count, self.max_dofs) or (indices >= self.count).any():
            raise Exception("Failed to set DOF position targets in backend")
        for i in indices:
            a = self._articulations[int(i)]
            physics.write_target_rows(a, data[int(i) : int(i) + 1, : len(self._dof_paths[int(i)])])
