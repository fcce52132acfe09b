"""The run context NVIDIA's phase talks to: NVIDIA's own ``RunContext`` over one of our engines.

``simready_benchmark.runner.test_context.RunContext`` (simready-benchmark) is the context Kit's
runner hands every test; its bookkeeping (``step``, ``add_metric`` as ``{value, unit}``, ``warn``,
``skip``, ``fail``, ``log``) is used unchanged. It delegates physics to an *engine session*:
``EngineSession`` steps our backend (``physics_step``, ``step_one``: one step of
``1 / physics_fps`` s). Rendering does not exist headless: ``capture_frame`` returns no frame
(overridden so that no "capture_frame returned None" warning is added per frame), and
``encode_video`` is never reached without frames; one log line says so. ``scene`` is a stand-in
whose camera-follow calls do nothing (Kit's base ``SceneHandle`` does nothing there either).
"""

from __future__ import annotations

from typing import Any

from .backends import Backend

NO_CAPTURE = "capture_frame/encode_video: headless engine, no frames or video rendered (no-op)"


class EngineSession:
    """What ``RunContext`` delegates to: our backend, stepped at ``dt`` seconds."""

    def __init__(self, backend: Backend, dt: float):
        self.backend = backend
        self.dt = float(dt)
        self.steps = 0

    async def physics_step(self) -> None:
        self.backend.step(self.dt)
        self.steps += 1

    async def physics_advance(self) -> None:
        return None

    async def step_one(self) -> None:
        await self.physics_step()

    async def settle(self, frames: int) -> None:
        return None  # rendered frames: none headless

    async def capture_frame(self, *args: Any, **kwargs: Any) -> None:
        return None

    def configure_physics(self, **kwargs: Any) -> None:
        return None


class HeadlessScene:
    """``ctx.scene`` for the phase: camera follow does nothing (no camera)."""

    def setup_camera_follow(self, config: Any = None) -> None:
        return None

    def update_camera_follow(self, config: Any = None, update_history: bool = True) -> None:
        return None


def make_context(
    *,
    asset_path: str,
    asset_key: str,
    output_dir: str,
    identity: Any,
    feature: str,
    engine: str,
    engine_version: str,
    session: EngineSession,
    config: dict[str, Any],
) -> Any:
    """NVIDIA's RunContext (its class, subclassed only for headless capture) for one run."""
    from simready_benchmark.runner.test_context import RunContext

    class HeadlessRunContext(RunContext):
        _said_no_capture = False

        async def capture_frame(self, camera=None, label=None, stabilize_frames=2, role="normal", allow_blank=False):
            if not self._said_no_capture:
                self._said_no_capture = True
                self.log(NO_CAPTURE)
            return None

        def encode_video(self, frames, fps=30, delete_frames=True, label=None, role="normal"):
            return None

    ctx = HeadlessRunContext(
        asset_path=asset_path,
        asset_rel_path=asset_key,
        output_dir=output_dir,
        test_name=identity.name,
        test_version=identity.version,
        feature_id=feature,
        engine_name=engine,
        engine_version=engine_version,
        session_id="",
        scene=HeadlessScene(),
        config=config,
        engine_session=session,
        test_feature_names=list(identity.features),
    )
    return ctx
