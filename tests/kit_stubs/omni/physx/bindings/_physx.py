"""Stand-in for ``omni.physx.bindings._physx``: the PhysX and IPhysxSimulation interfaces, the setting names.

Real source: ``omni.physx`` 110.4.4 (isaacsim-extscache-physics 6.2.0.0) ``omni/physx/bindings/_physx.pyi``
(signatures and docstrings below are its), ``omni/physx/scripts/ifaces.py`` (the ``acquire_*`` functions).
The physics behind them is ``_stub_physics`` (real PhysX through ovphysx, else mimic_ext's Warp solver).

What the stand-in does, as the pyi says the real one does:

* ``IPhysxSimulation.attach_stage(stage_id)`` "will run the physics parser and will populate the PhysX
  SDK with the corresponding simulation objects. Note: previous stage will be detached"; the stage is
  found in ``UsdUtils.StageCache``; returns False (and logs the error) when it cannot be parsed.
  ``detach_stage()`` "will remove all objects from the PhysX SDK"; ``get_attached_stage()`` is 0 when
  none is attached.
* ``simulate(elapsed_time, current_time)`` steps; ``fetch_results()`` "Writing out simulation results
  based on physics settings": with ``SETTING_UPDATE_TO_USD`` on, the joint state positions of joints
  with ``PhysicsJointStateAPI`` are written to the stage (its current edit target: where real PhysX
  writes is its simulation layer, ``set_simulation_layer``, not modelled), and with
  ``/physics/fabricEnabled`` on the results go to Fabric (only counted: there is no Fabric here).
  ``_stub_outputs`` counts both, so a test can see that nothing was written.
* ``PhysX.is_running()`` "returns true if play was pressed or if IPhysxSimulation was attached";
  ``_stub_play`` / ``_stub_stop`` stand for the timeline's Play / Stop.
* ``overwrite_gpu_setting(gpuSetting)`` (-1 from the scene's schema, 0 CPU, 1 GPU) decides the device of
  the next attach; a scene asking for GPU dynamics (``physxScene:enableGPUDynamics``) or 1 gives device 0,
  which ``omni.physics.tensors``' numpy frontend refuses, as the real one does. The stand-in's physics runs
  on the CPU either way.
"""

from __future__ import annotations

import threading

import carb
import carb.settings
from pxr import Usd, UsdPhysics, UsdUtils

SETTING_UPDATE_TO_USD = "/physics/updateToUsd"
SETTING_UPDATE_TO_USD_DEFAULT = "/defaults/physics/updateToUsd"
SETTING_UPDATE_VELOCITIES_TO_USD = "/physics/updateVelocitiesToUsd"
SETTING_UPDATE_VELOCITIES_TO_USD_DEFAULT = "/defaults/physics/updateVelocitiesToUsd"
SETTING_NUM_THREADS = "/persistent/physics/numThreads"
SETTING_RESET_ON_STOP = "/physics/resetOnStop"
#: not a named constant in the bindings; omni/physx/scripts/physicsUtils.py uses the literal
SETTING_FABRIC_ENABLED = "/physics/fabricEnabled"


class _Scene:
    """What omni.physx holds: the attached stage and the PhysX objects built from it."""

    def __init__(self) -> None:
        self.stage_id = 0
        self.stage: Usd.Stage | None = None
        self.backend = None
        self.backend_name = ""
        self.device_ordinal = -1
        self.playing = False
        self.gpu_setting = -1
        self.generation = 0  # bumped whenever every PhysX object is released
        self.outputs = {"usd": 0, "fabric": 0}
        self.counts = {"attach": 0, "detach": 0, "simulate": 0}
        self.threads: set[int] = set()  # the threads that attached and stepped
        self.pending = False

    def release(self) -> None:
        if self.backend is not None:
            for line in self.backend_close():
                carb.log_warn(f"PhysX: {line}")
        self.backend, self.stage, self.stage_id = None, None, 0
        self.generation += 1

    def backend_close(self) -> list[str]:
        backend, self.backend = self.backend, None
        backend.close()
        return backend.log


SCENE = _Scene()


def _wants_gpu(stage: Usd.Stage, setting: int) -> bool:
    if setting in (0, 1):
        return setting == 1
    for prim in stage.Traverse():
        if prim.IsA(UsdPhysics.Scene):
            attr = prim.GetAttribute("physxScene:enableGPUDynamics")
            if attr and attr.Get():
                return True
    return False


class IPhysxSimulation:
    """This interface is the access point to the omni.physx simulation control."""

    def attach_stage(self, stage_id: int) -> bool:
        from omni.physx import _stub_backend_name
        from omni.physx._stub_physics import make_backend

        if SCENE.stage_id:
            self.detach_stage()
        stage = UsdUtils.StageCache.Get().Find(Usd.StageCache.Id.FromLongInt(int(stage_id)))
        if not stage:
            carb.log_error(f"PhysX: attach_stage: no stage with id {stage_id} in the stage cache")
            return False
        name = _stub_backend_name()
        try:
            backend = make_backend(name, stage)
        except Exception as exc:
            carb.log_error(f"PhysX: cannot parse the stage {stage.GetRootLayer().identifier}: {exc}")
            return False
        SCENE.stage_id, SCENE.stage, SCENE.backend, SCENE.backend_name = int(stage_id), stage, backend, name
        SCENE.device_ordinal = 0 if _wants_gpu(stage, SCENE.gpu_setting) else -1
        SCENE.counts["attach"] += 1
        SCENE.threads.add(threading.get_ident())
        return True

    def detach_stage(self) -> None:
        if SCENE.stage_id:
            SCENE.counts["detach"] += 1
        SCENE.release()

    def get_attached_stage(self) -> int:
        return SCENE.stage_id

    def simulate(self, elapsed_time: float, current_time: float) -> None:
        if SCENE.backend is None:
            carb.log_error("PhysX: simulate called with no stage attached")
            return
        SCENE.backend.step(float(elapsed_time))
        SCENE.counts["simulate"] += 1
        SCENE.threads.add(threading.get_ident())
        SCENE.pending = True

    def check_results(self) -> bool:
        return True

    def fetch_results(self) -> None:
        if not SCENE.pending or SCENE.backend is None:
            return
        SCENE.pending = False
        settings = carb.settings.get_settings()
        if settings.get_as_bool(SETTING_UPDATE_TO_USD):
            _write_joint_states()
        if settings.get_as_bool(SETTING_FABRIC_ENABLED):
            SCENE.outputs["fabric"] += 1

    def flush_changes(self) -> None:
        pass


def _write_joint_states() -> None:
    import math

    from omni.physx._stub_physics import joint_state_attr

    stage, backend, wrote = SCENE.stage, SCENE.backend, False
    for a in range(len(backend.roots)):
        values = backend.dof_rows(a)[0]
        for path, value in zip(backend.dof_paths(a), values):
            prim = stage.GetPrimAtPath(path) if path else None
            name = joint_state_attr(prim) if prim else None
            if name:
                deg = name.startswith("state:angular")
                prim.GetAttribute(name).Set(float(math.degrees(value)) if deg else float(value))
                wrote = True
    if wrote:
        SCENE.outputs["usd"] += 1


class PhysX:
    """The omni.physx interface (the subset the Kit layer uses)."""

    def is_running(self) -> bool:
        """Check if simulation loop is running, this function returns true if play was pressed or if
        IPhysxSimulation was attached."""
        return SCENE.playing or bool(SCENE.stage_id)

    def get_overwrite_gpu_setting(self) -> int:
        return SCENE.gpu_setting

    def overwrite_gpu_setting(self, gpuSetting: int) -> None:
        SCENE.gpu_setting = int(gpuSetting)

    def release_physics_objects(self) -> None:
        """Forces release of all physics objects from PhysX."""
        if SCENE.backend is not None:
            SCENE.backend_close()
            SCENE.generation += 1


_PHYSX = PhysX()
_SIMULATION = IPhysxSimulation()


def acquire_physx_interface() -> PhysX:
    return _PHYSX


def acquire_physx_simulation_interface() -> IPhysxSimulation:
    return _SIMULATION
