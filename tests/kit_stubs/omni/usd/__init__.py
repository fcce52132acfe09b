"""Stand-in for ``omni.usd``: the USD context (one open stage), its selection and stage events.

Real behaviour (typings5 ``omni/usd/_usd.pyi``; omni.usd UsdContext docs): ``get_context(name='')``;
``get_stage()`` is None when no stage is open; synchronous ``open_stage/new_stage/close_stage`` return bool,
the ``*_async`` coroutines return ``(success, error)``; selection changes and stage open/close are reported on
the stage event stream (a carb.events stream pumped once per frame) with ``StageEventType`` ints.

Contexts by name (typings5 ``omni/usd/_usd.pyi``: ``get_context(name='')`` "Gets UsdContext instance",
``create_context(name='')``, ``destroy_context(name='') -> bool``): the default context ``""`` exists once omni.usd
runs; any other name gives None until ``create_context(name)`` made it, which is how NVIDIA's own code uses it
(the viewport samples' ``StagePreviewWindow.__init__``: ``get_context(usd_context_name)``, then
``create_context`` when that is None).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable

import carb
import carb.events
import omni.kit.app
from pxr import Usd, UsdUtils


class StageEventType(enum.IntEnum):
    SAVED = 0
    SAVE_FAILED = 1
    OPENING = 2
    OPENED = 3
    OPEN_FAILED = 4
    CLOSING = 5
    CLOSED = 6
    SELECTION_CHANGED = 7
    ASSETS_LOADED = 8
    ASSETS_LOAD_ABORTED = 9
    GIZMO_TRACKING_CHANGED = 10
    MDL_PARAM_LOADED = 11
    SETTINGS_LOADED = 12
    SETTINGS_SAVING = 13
    OMNIGRAPH_START_PLAY = 14
    OMNIGRAPH_STOP_PLAY = 15
    SIMULATION_START_PLAY = 16
    SIMULATION_STOP_PLAY = 17
    ANIMATION_START_PLAY = 18
    ANIMATION_STOP_PLAY = 19
    DIRTY_STATE_CHANGED = 20
    ASSETS_LOADING = 21
    ACTIVE_LIGHT_COUNTS_CHANGED = 22
    HIERARCHY_CHANGED = 23
    HYDRA_GEOSTREAMING_STARTED = 24
    HYDRA_GEOSTREAMING_STOPPED = 25
    HYDRA_GEOSTREAMING_STOPPED_NOT_ENOUGH_MEM = 26
    HYDRA_GEOSTREAMING_STOPPED_AT_LIMIT = 27
    SAVING = 28
    COUNT = 29


class Selection:
    def __init__(self, context: UsdContext):
        self._context = context
        self._paths: list[str] = []

    def get_selected_prim_paths(self, source=None) -> list[str]:
        return list(self._paths)

    def set_selected_prim_paths(self, paths: list[str], expandInStage: bool = True, source=None) -> bool:
        new = [str(p) for p in paths]
        if new != self._paths:
            self._paths = new
            self._context._push(StageEventType.SELECTION_CHANGED)
        return True

    def clear_selected_prim_paths(self, source=None) -> bool:
        return self.set_selected_prim_paths([])

    def is_prim_path_selected(self, path: str, source=None) -> bool:
        return str(path) in self._paths

    def set_prim_path_selected(
        self, path: str, selected: bool, forcePrim: bool, clearSelected: bool, expandInStage: bool = True, source=None
    ) -> bool:
        paths = [] if clearSelected else list(self._paths)
        path = str(path)
        if selected and path not in paths:
            paths.append(path)
        if not selected and path in paths:
            paths.remove(path)
        return self.set_selected_prim_paths(paths)


class UsdContext:
    def __init__(self, name: str = ""):
        self._name = name
        self._stage: Usd.Stage | None = None
        self._url = ""
        self._selection = Selection(self)
        self._events = carb.events.IEventStream(f"stage_events:{name}")
        # Kit pumps the stage event stream once per frame.
        self._update_sub = (
            omni.kit.app.get_app()
            .get_update_event_stream()
            .create_subscription_to_pop(lambda _e: self._events.pump(), order=-10, name=f"omni.usd pump {name}")
        )

    def _push(self, event_type: StageEventType) -> None:
        self._events.push(int(event_type), payload={})

    # -- stage ------------------------------------------------------------------------------
    def get_stage(self) -> Usd.Stage | None:
        return self._stage

    def get_stage_id(self) -> int:
        if self._stage is None:
            return 0
        return UsdUtils.StageCache.Get().Insert(self._stage).ToLongInt()

    def get_stage_url(self) -> str:
        return self._url

    def _attach(self, stage: Usd.Stage | None, url: str) -> None:
        if self._stage is not None:
            self._close()
        self._push(StageEventType.OPENING)
        self._stage, self._url = stage, url
        self._push(StageEventType.OPENED)

    def _close(self) -> None:
        self._push(StageEventType.CLOSING)
        self._selection._paths = []
        self._stage, self._url = None, ""
        self._push(StageEventType.CLOSED)

    def new_stage(self, load_set=None) -> bool:
        stage = Usd.Stage.CreateInMemory()
        self._attach(stage, stage.GetRootLayer().identifier)
        return True

    def open_stage(self, url: str, on_finish_fn: Callable[[bool, str], None] | None = None, load_set=None) -> bool:
        url = os.fspath(url)
        try:
            stage = Usd.Stage.Open(url)
        except Exception as exc:  # Tf errors for unreadable files
            stage, err = None, str(exc)
        else:
            err = "" if stage else f"Failed to open {url}"
        if stage is None:
            self._push(StageEventType.OPEN_FAILED)
            carb.log_error(err)
            if on_finish_fn:
                on_finish_fn(False, err)
            return False
        self._attach(stage, url)
        if on_finish_fn:
            on_finish_fn(True, "")
        return True

    def attach_stage_with_callback(self, stage_id: int, on_finish_fn=None) -> bool:
        stage = UsdUtils.StageCache.Get().Find(Usd.StageCache.Id.FromLongInt(stage_id))
        if not stage:
            return False
        self._attach(stage, stage.GetRootLayer().identifier)
        if on_finish_fn:
            on_finish_fn(True, "")
        return True

    def close_stage(self, on_finish_fn=None) -> bool:
        if self._stage is not None:
            self._close()
        if on_finish_fn:
            on_finish_fn(True, "")
        return True

    def save_stage(self) -> bool:
        if self._stage is None:
            return False
        ok = self._stage.GetRootLayer().Save()
        self._push(StageEventType.SAVED if ok else StageEventType.SAVE_FAILED)
        return ok

    async def new_stage_async(self, load_set=None):
        ok = self.new_stage()
        await omni.kit.app.get_app().next_update_async()
        return ok, ""

    async def open_stage_async(self, url: str, load_set=None, session_layer_url=None):
        result = {}
        self.open_stage(url, lambda ok, err: result.update(ok=ok, err=err))
        await omni.kit.app.get_app().next_update_async()
        return result.get("ok", False), result.get("err", "")

    async def close_stage_async(self):
        ok = self.close_stage()
        await omni.kit.app.get_app().next_update_async()
        return ok, ""

    async def save_stage_async(self):
        ok = self.save_stage()
        await omni.kit.app.get_app().next_update_async()
        return ok, "" if ok else "save failed"

    async def next_stage_event_async(self):
        fut = omni.kit.app.get_app()._loop.create_future()

        def on_event(event):
            if not fut.done():
                fut.set_result((StageEventType(event.type), event.payload))

        sub = self._events.create_subscription_to_pop(on_event)
        try:
            return await fut
        finally:
            sub.unsubscribe()

    # -- selection and events ---------------------------------------------------------------
    def get_selection(self) -> Selection:
        return self._selection

    def get_stage_event_stream(self) -> carb.events.IEventStream:
        return self._events

    def get_name(self) -> str:
        return self._name


def stage_event_name(event_type: StageEventType) -> str:
    return StageEventType(event_type).name


_CONTEXTS: dict[str, UsdContext] = {}


def get_context(name: str = "") -> UsdContext | None:
    if name == "" and name not in _CONTEXTS:  # the default context is there as soon as omni.usd is
        _CONTEXTS[name] = UsdContext(name)
    return _CONTEXTS.get(name)


def create_context(name: str = "") -> UsdContext:
    if name not in _CONTEXTS:
        _CONTEXTS[name] = UsdContext(name)
    return _CONTEXTS[name]


def destroy_context(name: str = "") -> bool:
    context = _CONTEXTS.pop(name, None)
    if context is None:
        return False
    context.close_stage()
    return True
