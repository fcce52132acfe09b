"""The sweep on the stage's own PhysX in Kit: ``omni.physx`` steps the open stage and an
``omni.physics.tensors`` articulation view sets DOF position targets and reads DOF positions.

Why not the headless ``physx`` engine (ovphysx) inside Kit: Kit already runs PhysX on the open
stage, with the user's PhysX settings and version; a certifier wants what *that* PhysX does.
So this engine (registered as ``kit-physx`` by the extension) drives it the way NVIDIA's own
code does, read in isaacsim-extscache-physics 6.2.0.0 (omni.physx 110.4.4):

* stepping, ``omni/physx/scripts/ifaces.py`` ``get_physx_simulation_interface()`` (IPhysxSimulation,
  ``bindings/_physx.pyi``): ``attach_stage(stage_id)`` parses the stage into PhysX (the id from
  ``UsdUtils.StageCache``), ``simulate(elapsed_time, current_time)`` then the blocking
  ``fetch_results()`` per step, ``detach_stage()`` removes every PhysX object;
  ``get_physx_interface().is_running()`` says whether play (or another tool) is stepping it.
* a temporary change of the open stage, ``omni/physx/scripts/physicsUtils.py``
  ``get_initial_collider_pairs``: an anonymous sublayer of the session layer as the edit
  target, ``SETTING_UPDATE_TO_USD`` and ``/physics/fabricEnabled`` off while PhysX steps (so
  it writes nothing to USD or Fabric), everything put back afterwards. We also switch off
  ``SETTING_UPDATE_VELOCITIES_TO_USD`` and force the CPU pipeline
  (``overwrite_gpu_setting(0)``, restored), because the numpy frontend below is CPU only.
* DOF targets and positions, ``omni/physics/tensors/api.py``: ``create_simulation_view("numpy",
  stage_id)`` (as ``omni/physxdemos/utils/franka_helpers.py`` ``on_tensor_start``),
  ``create_articulation_view(root path)``; ``get_dof_position_targets`` /
  ``set_dof_position_targets(data, indices)`` take the full ``(count, max_dofs)`` array
  (setting only some DOFs is not supported: read, modify, write back); ``get_dof_positions``
  is in radians, stage units for prismatic DOFs; ``dof_paths`` / ``link_paths`` give each
  articulation's DOF (joint) and link prim paths (NVIDIA-Omniverse/PhysX
  ``omni.physics.tensors/bindings/python/PhysicsTensorsBindingsPython.cpp``); a view is invalid
  once PhysX's objects are released (``omni.physx.tensors/plugins/base/BaseSimulationView.cpp``
  ``onAllPhysXObjectDeletedCallback``), so each run makes its own.
* the SimReady harness's MIM phase (``simready_benchmark_kit_suite/articulation_phases/
  mimic_joint.py``, ``run_mimic_joint``) drives the one robot of the stage pair after pair with
  the full target vector each physics step; here each environment of the plan is one run of
  the robot from the stage's state (attach, steps, detach).

The open stage is only touched on Kit's thread: the runner's job thread posts each piece here
through ``KitThreadCalls`` (a frame's worth of steps at a time), so Kit keeps drawing. Called on
Kit's thread without the runner (a script), it runs to the end at once.
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
import time
from collections.abc import Sequence

import numpy as np
from pxr import Sdf, Usd, UsdUtils

from ..errors import MimicInputError
from ..fet022.engines import ReadRelation, Trace, hide_relations, prepared
from ..fet022.engines.physx import physx_reading, self_collision_notes
from ..fet022.engines.warp import body_sample_indices
from ..fet022.plan import SweepPlan
from ..schema import joints, read_relations
from ..schema.relation import MimicRelation
from .kit_thread import KitThreadCalls

ENGINE_NAME = "kit-physx"
#: Seconds of stepping per Kit frame when the runner's job thread drives the sweep.
FRAME_BUDGET_S = 0.02
#: Steps of plan targets taken at a time.
BLOCK = 1024
#: What PhysX does to a body without mass (for the default-mass note, as the physx engine says).
INSTEAD = "PhysX would give each 1 kg"
SETTING_FABRIC = "/physics/fabricEnabled"
#: ``overwrite_gpu_setting``: 0 forces the CPU pipeline, -1 takes the scene's own setting.
FORCE_CPU = 0
_MODULES = ("omni.physx", "omni.physics.tensors")
_EXTENSIONS = ("omni.physx", "omni.physx.tensors")


def check_available() -> None:
    """MimicInputError (one line) when this Kit app has no omni.physx or omni.physics.tensors."""
    for module in _MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise MimicInputError(
                f"the {ENGINE_NAME} engine needs {module}, which this Kit app does not load: "
                f"enable the omni.physx and omni.physx.tensors extensions, or sweep with warp"
            )


def _extension(name: str) -> tuple[str, dict]:
    """(enabled extension id or "", its package dict) from Kit's extension manager."""
    import omni.kit.app

    manager = omni.kit.app.get_app().get_extension_manager()
    ext_id = manager.get_enabled_extension_id(name) or ""
    package = {}
    if ext_id:
        # a carb.dictionary.Item: its get() needs a default and returns child Items, so read it as plain Python
        package = manager.get_extension_dict(ext_id).get_dict().get("package") or {}
    return ext_id, package


def physx_label() -> str:
    """``kit-physx (omni.physx <version>: <its title>)``: which PhysX steps the stage, as Kit's
    extension manager describes the omni.physx extension that is enabled."""
    ext_id, package = _extension("omni.physx")
    if not ext_id:
        return f"{ENGINE_NAME} (omni.physx)"
    version = str(package.get("version") or ext_id.partition("-")[2])
    title = str(package.get("title") or "")
    return f"{ENGINE_NAME} (omni.physx {version}{': ' + title if title else ''})"


class KitPhysxEngine:
    """A ``SweepEngine`` that steps the open stage with Kit's PhysX (see the module doc).

    ``live_stage``: the stage PhysX steps (Kit's open stage) when the runner hands ``simulate``
    a flattened private copy for the analysis (same prim paths); default: the stage given to
    ``simulate``. ``calls``: Kit's-thread queue of the runner; without it ``simulate`` must be
    called on Kit's (the main) thread.
    """

    name = ENGINE_NAME
    supported_kinds = (joints.REVOLUTE, joints.PRISMATIC)

    def __init__(
        self,
        live_stage: Usd.Stage | None = None,
        calls: KitThreadCalls | None = None,
        default_masses: bool = True,
        frame_budget_s: float = FRAME_BUDGET_S,
    ):
        check_available()
        import omni.physics.tensors
        import omni.physx  # noqa: F401

        self._live = live_stage
        self._calls = calls
        self.default_masses = bool(default_masses)
        self.frame_budget_s = float(frame_budget_s)
        self.label = physx_label()
        self._run: _OpenStageRun | None = None

    def versions(self) -> dict[str, str]:
        return {ext: _extension(ext)[0] or "not enabled" for ext in _EXTENSIONS}

    def _on_kit(self, fn, *args):
        if self._calls is not None:
            return self._calls.call(fn, *args)
        if threading.current_thread() is not threading.main_thread():
            raise MimicInputError(
                f"the {ENGINE_NAME} engine steps the open stage on Kit's thread: call it there, "
                f"or through the extension's runner"
            )
        return fn(*args)

    def simulate(
        self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation], fix_base: bool = True
    ) -> Trace:
        target = self._live if self._live is not None else stage
        budget = self.frame_budget_s if self._calls is not None and not self._calls.on_kit_thread() else None
        try:
            run = self._on_kit(self._open, target, plan, watch, relations, fix_base)
            for env in range(plan.num_envs):
                self._on_kit(run.start_env, env)
                while not self._on_kit(run.advance, budget):
                    pass
                self._on_kit(run.end_env)
            return run.trace()
        finally:
            self._on_kit(self.close)

    def _open(self, stage, plan, watch, relations, fix_base) -> _OpenStageRun:
        # kept on Kit's thread together with its creation, so that close() always finds it
        self._run = _OpenStageRun(stage, plan, watch, relations, fix_base, self.default_masses)
        return self._run

    def close(self) -> None:
        """Put the open stage and PhysX back as they were (on Kit's thread; any number of times)."""
        run, self._run = self._run, None
        if run is not None:
            run.close()


class _OpenStageRun:
    """One ``simulate`` on the open stage: its temporary edits, PhysX attached per environment."""

    def __init__(
        self,
        stage: Usd.Stage,
        plan: SweepPlan,
        watch: Sequence[str],
        relations: Sequence[MimicRelation],
        fix_base: bool,
        masses: bool,
    ):
        import carb.settings
        import omni.physx
        from omni.physx.bindings._physx import SETTING_UPDATE_TO_USD, SETTING_UPDATE_VELOCITIES_TO_USD

        t0 = time.perf_counter()
        self.stage, self.plan = stage, plan
        self._physx = omni.physx.get_physx_interface()
        self._sim = omni.physx.get_physx_simulation_interface()
        self._closed = False
        self._layer = None
        self._view = None
        self._arts: list = []
        self._attached = False
        self._settings = carb.settings.get_settings()
        self._saved: dict[str, object] = {}
        self._gpu_setting = None
        name = stage.GetRootLayer().realPath or stage.GetRootLayer().identifier
        if self._physx.is_running():
            raise MimicInputError(
                f"PhysX is already simulating {name} (the timeline is playing, or another tool "
                f"attached it): stop it and run the sweep again"
            )
        # Kit's open stage is in UsdUtils.StageCache already; another stage is put there (and left there:
        # erasing a stage from the cache expires it, also for its other holders), as NVIDIA's asset
        # validator does before it attaches PhysX (isaacsim.asset.validator PhysicsRules)
        cache = UsdUtils.StageCache.Get()
        sid = cache.GetId(stage)
        self.stage_id = (sid if sid.IsValid() else cache.Insert(stage)).ToLongInt()
        self._prev_attached = int(self._sim.get_attached_stage() or 0)
        try:
            self._edit(relations, fix_base, masses)
            for key in (SETTING_UPDATE_TO_USD, SETTING_UPDATE_VELOCITIES_TO_USD, SETTING_FABRIC):
                self._saved[key] = self._settings.get(key)  # None: not set (put back as not set)
                self._settings.set(key, False)
            self._gpu_setting = self._physx.get_overwrite_gpu_setting()
            self._physx.overwrite_gpu_setting(FORCE_CPU)
        except BaseException:
            self.close()
            raise
        self.notes.insert(
            0,
            f"stepped by the stage's own PhysX ({physx_label()}) on the open stage {name}; the "
            f"sweep's edits below were made in a temporary anonymous sublayer of its session layer and "
            f"removed afterwards; while PhysX stepped, /physics/updateToUsd, "
            f"/physics/updateVelocitiesToUsd and /physics/fabricEnabled were off (nothing written to "
            f"USD or Fabric) and the CPU pipeline was forced; PhysX was detached after each run, "
            f"discarding its simulation state",
        )
        mpu = joints.meters_per_unit(stage)
        self._scale = {}
        for path in dict.fromkeys([pj.path for pj in plan.joints] + list(watch)):
            kind = joints.joint_kind(stage.GetPrimAtPath(path))
            self._scale[path] = mpu if kind == joints.PRISMATIC else 1.0
        self._mpu = mpu
        self.roots = [str(p.GetPath()) for p in prepared.articulation_roots(stage)]
        if not self.roots:
            self.close()
            raise MimicInputError(
                f"{name}: no PhysicsArticulationRootAPI: PhysX simulates mimic joints only inside an articulation"
            )
        self.watch = list(self._scale)
        self.samples = [int(s) for s in plan.sample_steps]
        self.body_samples = body_sample_indices(len(self.samples))
        self.positions = {p: np.full((plan.num_envs, len(self.samples)), np.nan) for p in self.watch}
        self.body_positions: dict[str, np.ndarray] = {}
        self.missing: dict[str, str] = {}
        self.timings = {"build_s": time.perf_counter() - t0, "simulate_s": 0.0, "steps": float(plan.total_steps)}

    # -- the temporary edits ----------------------------------------------------------------
    def _edit(self, relations: Sequence[MimicRelation], fix_base: bool, masses: bool) -> None:
        stage = self.stage
        self._layer = Sdf.Layer.CreateAnonymous("mimic_ext_fet022_sweep")
        self._session = stage.GetSessionLayer()
        self._old_target = stage.GetEditTarget()
        self._session.subLayerPaths.insert(0, self._layer.identifier)
        stage.SetEditTarget(Usd.EditTarget(self._layer))
        prep = prepared.PreparedStage(stage=stage, source=stage.GetRootLayer().identifier)
        hidden = prepared.hidden_relations(stage, relations)
        hide_relations(stage, hidden)
        prepared.note_hidden(prep, hidden, "the sweep's temporary session sublayer")
        prepared.prepare(prep, self.plan, INSTEAD, masses, fix_base)
        self.notes = list(prep.notes) + self_collision_notes(stage)
        self.relations: list[ReadRelation] = [physx_reading(r) for r in read_relations(stage)]

    # -- one environment: attach, step, detach ----------------------------------------------
    def start_env(self, env: int) -> None:
        import omni.physics.tensors as tensors

        t0 = time.perf_counter()
        self.env, self._step, self._k, self._time = env, 0, 0, 0.0
        self._block, self._block_start = None, 0
        if not self._sim.attach_stage(self.stage_id):
            raise MimicInputError(
                f"omni.physx could not attach the stage {self.stage.GetRootLayer().identifier} "
                f"(PhysX's messages in the console say why)"
            )
        self._attached = True
        self._view = tensors.create_simulation_view("numpy", self.stage_id)
        self._arts = []
        self._cols: dict[str, tuple[int, int]] = {}
        self._links: dict[str, tuple[int, int]] = {}
        for a, root in enumerate(self.roots):
            art = self._view.create_articulation_view(root)
            if art.count != 1:
                raise MimicInputError(
                    f"PhysX built {art.count} articulation(s) at {root}: it did not take the stage's articulation there"
                )
            self._arts.append(art)
            for col, path in enumerate(art.dof_paths[0]):
                self._cols.setdefault(str(path), (a, col))
            for col, path in enumerate(art.link_paths[0]):
                self._links.setdefault(str(path), (a, col))
        self._indices = np.arange(1, dtype=np.int32)
        self._targets = [np.array(art.get_dof_position_targets(), dtype=np.float32) for art in self._arts]
        if env == 0:
            for path in self.watch:
                if path not in self._cols:
                    self.missing[path] = "not a degree of freedom of any PhysX articulation (not simulated by PhysX)"
            absent = [pj.path for pj in self.plan.joints if pj.path not in self._cols]
            if absent:
                raise MimicInputError(
                    f"cannot drive {', '.join(absent)} on PhysX: not a degree of freedom of any PhysX articulation"
                )
            n_body = len(self.body_samples)
            self.body_positions = {p: np.full((self.plan.num_envs, n_body, 3), np.nan) for p in self._links}
        self._live = [p for p in self.watch if p in self._cols]
        self.timings["build_s"] += time.perf_counter() - t0
        if self.samples and self.samples[0] == 0:
            self._sample()

    def advance(self, budget_s: float | None) -> bool:
        """Step until ``budget_s`` is spent (None: to the end); True when this environment is done."""
        t0 = time.perf_counter()
        plan, total = self.plan, self.plan.total_steps
        while self._step < total:
            if self._block is None or self._step >= self._block_start + len(self._block):
                self._block_start = self._step
                self._block = plan.target_block(self._step, min(total, self._step + BLOCK))[:, self.env, :]
            row = self._block[self._step - self._block_start]
            touched = set()
            for j, pj in enumerate(plan.joints):
                a, col = self._cols[pj.path]
                self._targets[a][0, col] = row[j] / self._scale[pj.path]
                touched.add(a)
            for a in sorted(touched):
                self._arts[a].set_dof_position_targets(self._targets[a], self._indices)
            self._sim.simulate(plan.dt, self._time)
            self._sim.fetch_results()
            self._time += plan.dt
            self._step += 1
            if self._k < len(self.samples) and self.samples[self._k] == self._step:
                self._sample()
            if budget_s is not None and time.perf_counter() - t0 >= budget_s:
                break
        self.timings["simulate_s"] += time.perf_counter() - t0
        return self._step >= total

    def _sample(self) -> None:
        k = self._k
        q = [np.asarray(art.get_dof_positions()) for art in self._arts]
        for path in self._live:
            a, col = self._cols[path]
            self.positions[path][self.env, k] = float(q[a][0, col]) * self._scale[path]
        if k in self.body_samples and self._links:
            b = self.body_samples.index(k)
            poses = [np.asarray(art.get_link_transforms()) for art in self._arts]
            for path, (a, col) in self._links.items():
                self.body_positions[path][self.env, b] = poses[a][0, col, :3] * self._mpu
        self._k += 1

    def end_env(self) -> None:
        self._release()

    def _release(self) -> None:
        if self._view is not None:
            with contextlib.suppress(Exception):
                self._view.invalidate()
        self._view, self._arts = None, []
        if self._attached:
            self._attached = False
            self._sim.detach_stage()

    # -- results and clean-up -------------------------------------------------------------
    def trace(self) -> Trace:
        return Trace(
            positions={p: v for p, v in self.positions.items() if p not in self.missing},
            missing=dict(self.missing),
            relations=list(self.relations),
            timings=dict(self.timings),
            notes=list(self.notes),
            body_positions=self.body_positions,
            body_samples=list(self.body_samples) if self.body_positions else [],
        )

    def close(self) -> None:
        """Detach PhysX, restore the settings, the edit target and the session layer (idempotent)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self._release()
        for key, value in self._saved.items():
            if value is None:
                self._settings.destroy_item(key)
            else:
                self._settings.set(key, value)
        if self._gpu_setting is not None:
            with contextlib.suppress(Exception):
                self._physx.overwrite_gpu_setting(self._gpu_setting)
        if self._layer is not None:
            self.stage.SetEditTarget(self._old_target)
            paths = self._session.subLayerPaths
            if self._layer.identifier in paths:
                paths.remove(self._layer.identifier)
            self._layer = None
        if self._prev_attached:
            with contextlib.suppress(Exception):
                self._sim.attach_stage(self._prev_attached)
