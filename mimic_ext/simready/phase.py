"""``run_nvidia_mimic``: NVIDIA's MIM phase, unmodified, on one of our engines.

What Kit's ``test_mimic_joint`` does is ``setup_robot_test_scene(ctx)`` then
``run_mimic_joint(ctx, robot, scene_info, ctx.config)``. Here the phase
(``simready_benchmark_kit_suite.articulation_phases.mimic_joint.run_mimic_joint``, from the
installed tier-core) is imported and awaited as it is; the scene is built the way
``robot_scene.setup_robot_test_scene`` builds it, with NVIDIA's own USD-only helpers where they
exist (asset prim, articulation root, robot type and gripper signals, their warnings): gravity
9.81 m/s^2 at ``physics_fps``, the base of a gripper pinned to the world, the asset's drives,
targets and velocity limits. Not reproduced, and said so in ``notes``: the room, lights and
camera (nothing renders), the ground plane (a pinned gripper does not reach Kit's floor),
frame capture and video, and the bounding-box canary (it reads USD poses, which no headless
engine writes back, so it sees the authored pose and never fires).

The status follows Kit's runner: fail when the phase called ``ctx.fail`` (or raised: then
``failure_details`` holds the traceback), skipped when it called ``ctx.skip``, else pass.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from ..errors import MimicInputError
from ..fet022 import identity as _identity
from ..fet022 import run_folder
from .backends import Backend

SCENE_NOTES = (
    "scene: no room, lights or camera (nothing renders headless)",
    "scene: no ground plane (Kit adds one for a gripper at its room's floor, which a pinned gripper does not reach)",
    "bbox canary: reads the USD stage's poses, which a headless engine does not write back: it sees the "
    "authored pose and cannot fire (mimic_ext's own sweep checks body positions instead)",
)


@dataclass
class PhaseResult:
    """NVIDIA's verdict on one asset and engine, as Kit's runner would record it."""

    asset: str
    engine: str
    status: str  # pass | fail | skipped
    message: str = ""
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    failure_details: str = ""
    duration: float = 0.0
    engine_version: str = ""
    test_name: str = ""
    test_version: str = ""
    feature: str = run_folder.FEATURE_PHYSX
    #: what the adapter did or could not do (scene, bridge, engine notes): ours, not NVIDIA's
    notes: list[str] = field(default_factory=list)

    def metric(self, name: str) -> Any:
        m = self.metrics.get(name)
        return None if m is None else m.get("value")

    @property
    def headline(self) -> str:
        return f"SimReady {self.test_name} {self.test_version}: {self.status}"

    def kit_result(self, key: str | None = None) -> dict[str, Any]:
        """This verdict as Kit's result.json (``run_folder.kit_result``)."""
        return run_folder.kit_result(
            status=self.status,
            asset=key if key is not None else self.asset,
            engine=self.engine,
            message=self.message,
            metrics=self.metrics,
            warnings=[{"level": "warning", "message": w, "source": self.test_name} for w in self.warnings],
            feature=self.feature,
            engine_version=self.engine_version,
            duration=self.duration,
            failure_details=self.failure_details,
            test_name=self.test_name,
            test_version=self.test_version,
            logs=self.logs,
            extra={"mimic_ext": {"verdict_by": "nvidia_phase", "adapter_notes": list(self.notes)}},
        )

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _asset_prim(stage):
    prim = stage.GetDefaultPrim()
    if prim and prim.IsValid():
        return prim
    for child in stage.GetPseudoRoot().GetChildren():
        return child
    return None


def _feature(stage, asset_prim) -> str:
    """FET_022_NEWTON for a stage whose relations are all NewtonMimicAPI, else FET_022_PHYSX."""
    from pxr import Usd

    physx = newton = False
    for prim in Usd.PrimRange(asset_prim) if asset_prim else ():
        names = [str(s) for s in prim.GetPrimTypeInfo().GetAppliedAPISchemas()]
        physx = physx or any(s.startswith("PhysxMimicJointAPI") for s in names)
        newton = newton or "NewtonMimicAPI" in names
    return run_folder.FEATURE_NEWTON if newton and not physx else run_folder.FEATURE_PHYSX


class _Robot:
    """Kit's RobotHandle as the MIM phase uses it (``robot_handle.py``): dof_names, prim_path,
    get_joint_position_limits, get_joint_positions, set_joint_position_targets."""

    def __init__(self, backend, prim_path: str):
        self._b = backend
        self.prim_path = prim_path
        self.dof_names = list(backend.dof_names)
        self.dof_count = len(self.dof_names)

    def get_joint_position_limits(self):
        return self._b.limits()

    def get_joint_positions(self):
        return self._b.positions()

    def set_joint_position_targets(self, targets) -> None:
        self._b.set_targets(targets)


def run_nvidia_mimic(
    stage_path: str | os.PathLike | Any,
    engine: str = "warp",
    *,
    config: dict[str, Any] | None = None,
    device: str = "cpu",
    asset_key: str | None = None,
    output_dir: str | None = None,
) -> PhaseResult:
    """Run NVIDIA's installed MIM phase on ``stage_path`` (a file, or an open ``Usd.Stage``: it is
    only read) with ``engine`` ("warp", "physx", "mujoco" or "newton").

    ``config`` overrides the phase's defaults (``get_defaults()``: physics_fps 240, settle 1 s,
    sweep 2 s, gear_ratio_tolerance 0.10, ...). Raises ``MimicInputError`` (one line) when the
    simready packages are missing or the path is no regular file; anything else (a file USD cannot open: Kit's load-failure
    skip; a stage the phase cannot judge, a failing pair, an engine that raises) is in the result.
    """
    try:
        from simready_benchmark.runner.test_context import PrecheckAborted
        from simready_benchmark_kit_suite.articulation_phases import mimic_joint as mim_phase
        from simready_benchmark_kit_suite.articulation_phases import robot_scene, robot_type
        from simready_benchmark_kit_suite.articulation_phases.joint_utils import get_articulation_root_path
    except ImportError as exc:
        raise MimicInputError(
            f"NVIDIA's phase is not installed ({exc}): pip install 'mimic-ext[simready]' (see docs/fet022.md)"
        ) from None
    from pxr import Usd

    from ..native_stderr import quiet_native_stderr
    from .backends import open_backend
    from .context import EngineSession, make_context
    from .pxr_bridge import bridged

    ident = _identity.identity()
    cfg = dict(mim_phase.get_defaults())
    cfg.update(config or {})
    t0 = time.perf_counter()
    if isinstance(stage_path, Usd.Stage):
        stage = stage_path
        layer = stage.GetRootLayer()
        path = layer.realPath or layer.identifier
    else:
        from ..input_files import check_regular_file

        path = os.fspath(stage_path)
        check_regular_file(path, "stage")  # a FIFO or a device would block USD's reader
        try:
            with quiet_native_stderr():
                stage = Usd.Stage.Open(path)
        except Exception:  # pxr's Tf.ErrorException: a file USD cannot read
            stage = None
        if stage is None:
            # Kit's scene set-up: precheck_failure(asset load failed), a skip for an asset that
            # does not claim the test's features
            return PhaseResult(
                asset=path,
                engine=engine,
                status="skipped",
                message=robot_scene._fix_message_asset_load_failed(path),
                test_name=ident.name,
                test_version=ident.version,
                duration=time.perf_counter() - t0,
            )
    asset_prim = _asset_prim(stage)
    key = asset_key if asset_key is not None else os.path.basename(path)
    result = PhaseResult(asset=path, engine=engine, status="pass", test_name=ident.name, test_version=ident.version)
    result.feature = _feature(stage, asset_prim)
    result.notes.extend(SCENE_NOTES)

    session = EngineSession(_NoBackend(), 1.0 / float(cfg.get("physics_fps", 240.0)))
    ctx = make_context(
        asset_path=path,
        asset_key=key,
        output_dir=output_dir or "",
        identity=ident,
        feature=result.feature,
        engine=engine,
        engine_version="",
        session=session,
        config=cfg,
    )
    backend = None
    try:
        with bridged() as bridge:
            if bridge:
                result.notes.append("pxr.PhysxSchema: bridged for the phase (reads PhysxMimicJointAPI by name)")
            root = get_articulation_root_path(stage, asset_prim)
            if not root:
                ctx.precheck_failure(robot_scene._fix_message_no_articulation_root(asset_prim.GetPath()))
            kind = robot_type.determine_robot_type(stage, asset_prim)
            if not robot_type.has_authored_robot_type(stage, asset_prim) and kind == robot_type.RobotType.ARM:
                if robot_scene._has_gripper_signals(stage, asset_prim):
                    ctx.warn(robot_scene._fix_message_robot_type_unauthored_gripper_signals())
                    kind = robot_type.RobotType.GRIPPER
                else:
                    ctx.warn(robot_scene._fix_message_robot_type_unauthored_default_arm())
            pin = kind == robot_type.RobotType.GRIPPER
            ctx.step(f"setup (mimic_ext {engine}): gravity 9.81, {cfg.get('physics_fps')} Hz, gripper pinned: {pin}")
            backend = open_backend(engine, stage, pin, str(root), device, dt=session.dt)
            session.backend = backend
            result.engine_version = ctx.engine_version = backend.version()
            robot = _Robot(backend, str(root))
            if robot.dof_count == 0:
                ctx.precheck_failure(robot_scene._fix_message_zero_dofs(str(root)))
            scene_info = {
                "stage": stage,
                "asset_prim": asset_prim,
                "robot_root_prim": stage.GetPrimAtPath(str(root)),
                "robot_type": kind,
                "active_physics_engine": "newton" if result.feature == run_folder.FEATURE_NEWTON else "physx",
            }
            asyncio.run(mim_phase.run_mimic_joint(ctx, robot, scene_info, cfg))
    except PrecheckAborted:
        pass
    except MimicInputError as exc:
        ctx.fail(f"MIM: the {engine} engine could not run this stage: {exc}")
        result.failure_details = str(exc)
    except Exception as exc:  # the phase or an engine raised: Kit records the test as failed
        ctx.fail(f"MIM: {type(exc).__name__}: {exc}")
        result.failure_details = traceback.format_exc()
    finally:
        if backend is not None:
            backend.close()
            result.notes.extend(backend.notes)
    result.status = "fail" if ctx.failed else ("skipped" if ctx.skipped else "pass")
    result.message = (ctx.failure_message if ctx.failed else ctx.skip_reason if ctx.skipped else "") or ""
    result.metrics = ctx.metrics
    result.warnings = ctx.warnings
    result.logs = ctx.log_messages
    result.steps = [s.get("message", "") for s in ctx.steps]
    result.duration = time.perf_counter() - t0
    return result


class _NoBackend(Backend):
    """Stands in until the engine is open (a step before then is a bug, said so)."""

    def step(self, dt: float) -> None:
        raise RuntimeError("physics stepped before the engine was opened")
