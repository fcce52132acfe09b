"""mimic_ext as an engine of simready-benchmark (entry point ``simready_benchmark.engines``).

``simready-benchmark --assets X.usd --features FET_022_PHYSX`` with an engines.toml naming a
``[mimic_ext.<name>]`` block runs NVIDIA's mimic test headless on that engine::

    [mimic_ext.physx]
    engine = "physx"     # or "warp" (mimic_ext's own solver), "newton", "mujoco"
    device = "cpu"       # optional

The runner hands each engine session the shared work pool (``runner/work_pool.py``); like
simready-benchmark's own in-process session (``engines/nvcf_session.py``) ours claims assets and
tests from it in a thread, runs each test (``run_nvidia_mimic``: NVIDIA's phase, unmodified),
writes Kit's result.json where the reporter reads it (``fet022.run_folder``) and reports the
lifecycle events the runner watches. Only the test of ``benchmark_pack`` (tag ``mimic_ext``) is
routed here; see that module for why NVIDIA's Kit-tagged declaration cannot be.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import tomllib
import traceback
from datetime import UTC, datetime
from typing import Any

from simready_benchmark.engines.base import EngineConfig, EnginePlugin, EngineSession, ValidationResult

from .benchmark_pack.mimic_joint import ENGINE_TAG

SECTION = "mimic_ext"
#: one phase at a time per process: the engines (Warp, ovphysx) are not run from two threads at once
_RUN_LOCK = threading.Lock()


def _engines_toml() -> str | None:
    from simready_benchmark.engines.registry import find_engines_toml_path

    return find_engines_toml_path()


class MimicExtPlugin(EnginePlugin):
    """Configs from engines.toml ``[mimic_ext.<name>]`` blocks (``engine``: ``backends.ENGINES``)."""

    def __init__(self) -> None:
        self._settings: dict[str, dict[str, Any]] = {}
        self._counter = 0

    def name(self) -> str:
        return SECTION

    def tags(self) -> list[str]:
        return [ENGINE_TAG]

    def discover(self, engines_toml_path: str | None = None) -> list[EngineConfig]:
        from .. import __version__

        path = engines_toml_path or _engines_toml()
        if not path:
            return []
        with open(path, "rb") as f:
            data = tomllib.load(f)
        out = []
        for name, block in (data.get(SECTION) or {}).items():
            if not isinstance(block, dict):
                continue
            engine = str(block.get("engine", "warp"))
            self._settings[name] = {"engine": engine, "device": str(block.get("device", "cpu"))}
            out.append(
                EngineConfig(
                    name=name,
                    executable_path="",
                    version=f"mimic_ext {__version__} ({engine})",
                    tags=[ENGINE_TAG, f"{ENGINE_TAG}:{engine}"],
                )
            )
        return out

    def validate(self, engine_config: EngineConfig) -> ValidationResult:
        from .backends import ENGINES

        engine = self._settings.get(engine_config.name, {}).get("engine", "")
        if engine not in ENGINES:
            return ValidationResult(
                False, f"[{SECTION}.{engine_config.name}] engine = {engine!r}: use one of {ENGINES}"
            )
        from ..errors import MimicInputError
        from ..fet022.engines import check_engine

        device = self._settings[engine_config.name].get("device", "cpu")
        try:  # the sweep's own check: the engine's peer installed, the device present
            check_engine(engine if device in ("", "cpu") else f"{engine}:{device}")
        except MimicInputError as exc:
            return ValidationResult(False, f"[{SECTION}.{engine_config.name}] {exc}")
        return ValidationResult(True, "OK")

    async def start_session(self, engine_config, work_dir, log_file, session_env=None) -> EngineSession:
        self._counter += 1
        settings = self._settings.get(engine_config.name) or {"engine": "warp", "device": "cpu"}
        session = MimicExtSession(
            f"mimic_ext_{os.getpid()}_{self._counter}", engine_config, settings, dict(session_env or {})
        )
        await session.start()
        return session

    async def stop_session(self, session) -> None:
        await session.cleanup()


class MimicExtSession(EngineSession):
    """A thread that claims work from the pool and runs NVIDIA's phase on our engine."""

    def __init__(self, session_id: str, cfg: EngineConfig, settings: dict[str, Any], env: dict[str, str]):
        self._sid, self._cfg, self._settings, self._env = session_id, cfg, settings, env
        self._events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = time.monotonic()

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    async def cleanup(self) -> None:
        self._stop.set()
        if self._thread is not None:
            await asyncio.get_event_loop().run_in_executor(None, self._thread.join, 60.0)

    def get_session_id(self) -> str:
        return self._sid

    def drain_events(self) -> list[dict[str, Any]]:
        with self._lock:
            out, self._events = self._events, []
        return out

    def _emit(self, kind: str, **kw: Any) -> None:
        event = {"type": kind, "timestamp": datetime.now(UTC).isoformat(), "session_id": self._sid, **kw}
        with self._lock:
            self._events.append(event)
        self._last = time.monotonic()

    async def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"mimic-ext-{self._sid}", daemon=True)
        self._thread.start()
        while not any(e["type"] in ("engine_ready", "session_exit") for e in list(self._events)):
            await asyncio.sleep(0.02)

    def _run(self) -> None:
        from simready_benchmark.core.models import load_plan
        from simready_benchmark.runner.work_pool import WorkPool

        self._emit("engine_ready", engine=self._cfg.name, kit_version=self._cfg.version, gpu="", driver_version="")
        reason = "no_work"
        try:
            plan = load_plan(self._env["SIMREADY_PLAN_PATH"])
            pool = WorkPool(self._env["SIMREADY_WORK_POOL"])
            tests = {t.id: t for t in plan.tests}
            while not self._stop.is_set():
                item = pool.claim_asset(self._sid, list(self._cfg.tags), plan)
                if item is None:
                    break
                self._emit("asset_start", asset=item.asset)
                self._asset(pool, item, tests, plan)
            if self._stop.is_set():
                reason = "shutdown_signal"
        except Exception as exc:
            reason = "fatal_error"
            self._emit("engine_error", message=f"mimic_ext session crashed: {exc}", traceback=traceback.format_exc())
        self._emit("session_exit", reason=reason)

    def _asset(self, pool, item, tests, plan) -> None:
        from ..fet022 import run_folder
        from .phase import run_nvidia_mimic

        root = self._env.get("SIMREADY_CONTENT_ROOT", "") or plan.content_root or ""
        out_dir = self._env.get("SIMREADY_OUTPUT_DIR", "")
        key = run_folder.asset_key(item.asset, root)
        while not self._stop.is_set():
            te = pool.claim_test(item.id, self._sid)
            if te is None:
                break
            tdef = tests.get(te.test_id)
            self._emit("test_start", test=getattr(tdef, "name", "?"), asset=item.asset)
            if tdef is None or tdef.name != run_folder.TEST_NAME:
                result = {"status": "skipped", "message": f"mimic_ext runs only {run_folder.TEST_NAME}"}
            else:
                overrides = dict(item.config_overrides.get(te.test_id) or {})
                with _RUN_LOCK:
                    r = run_nvidia_mimic(
                        item.asset,
                        self._settings["engine"],
                        config=overrides,
                        device=self._settings.get("device", "cpu"),
                        asset_key=key,
                        output_dir=out_dir,
                    )
                result = r.kit_result(key)
                result["session_id"] = self._sid
                run_folder.write_json(run_folder.own_result_path(out_dir, key, r.engine), r.to_dict())
            result.setdefault("test_name", getattr(tdef, "name", ""))
            result["asset"] = key
            run_folder.write_json(run_folder.result_path(out_dir, key, result["test_name"] or "unknown"), result)
            done = pool.complete_test(
                item.id, te.test_id, {"status": result["status"], "duration": result.get("duration", 0)}
            )
            self._emit(
                "test_complete",
                test=result["test_name"],
                asset=item.asset,
                status=result["status"],
                duration=result.get("duration", 0),
            )
            if done:
                self._emit("asset_complete", asset=item.asset)
                break
        pool.release_asset(item.id, self._sid)
