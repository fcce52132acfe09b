"""Stand-in for ``omni.kit.property.usd``.

Besides the classes, the extension wires the selection to the Property window: on the USD context's
SELECTION_CHANGED (and CLOSED) stage event it calls ``get_window().notify("prim", PrimSelectionPayload(...))``
with the selected paths.
"""

from __future__ import annotations

import weakref

import carb.settings
import omni.kit.window.property
import omni.usd
from pxr import Sdf

from .prim_selection_payload import PrimSelectionPayload
from .usd_property_widget import UsdPropertiesWidget, UsdPropertyUiEntry  # noqa: F401

_LARGE_SELECTION_SETTING = "/persistent/exts/omni.kit.property.usd/large_selection"
carb.settings.get_settings().set_default(_LARGE_SELECTION_SETTING, 100)


def get_large_selection_count() -> int:
    return carb.settings.get_settings().get_as_int(_LARGE_SELECTION_SETTING)


def _on_stage_event(event) -> None:
    if event.type not in (int(omni.usd.StageEventType.SELECTION_CHANGED), int(omni.usd.StageEventType.CLOSED)):
        return
    window = omni.kit.window.property.get_window()
    context = omni.usd.get_context()
    stage = context.get_stage()
    if window is None:
        return
    paths = [Sdf.Path(p) for p in context.get_selection().get_selected_prim_paths()] if stage else []
    ref = weakref.ref(stage) if stage is not None else None
    window.notify("prim", PrimSelectionPayload(ref, paths))


_stage_event_sub = (
    omni.usd.get_context()
    .get_stage_event_stream()
    .create_subscription_to_pop(_on_stage_event, name="omni.kit.property.usd selection")
)
