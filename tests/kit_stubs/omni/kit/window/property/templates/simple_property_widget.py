"""``SimplePropertyWidget`` (behaviour of Kit's ``templates/simple_property_widget.py``).

``build_impl`` subscribes once to the filter's ``name_model`` (``_on_filter_changed`` -> ``request_rebuild``),
creates a ``CollapsableFrame(title, collapsed=...)`` (or a plain ``Frame``) and calls ``request_rebuild``,
which schedules ``_delayed_rebuild`` as a coroutine: on a later frame it runs ``_build_frame`` in that frame.
``_build_frame`` resets ``self._any_item_visible = False``, builds ``build_items()`` inside
``VStack(height=0, spacing=5, name="frame_v_stack")``, then, while the Property window's search text
(``self._filter.name``) is not empty, sets the frame's ``visible`` to ``self._any_item_visible``: a
widget whose ``build_items`` does not set it vanishes during a search (``add_item`` sets it for each
row whose label ``self._filter.matches``). ``on_new_payload`` stores the payload and returns False only
for a large selection. ``clean`` cancels a pending rebuild. All read from Kit's
``omni/kit/window/property/templates/simple_property_widget.py`` (``SimplePropertyWidget.build_impl``,
``_build_frame``, ``_on_filter_changed``, ``add_item``). ``_build_frame`` also times itself and logs
``carb.log_warn(f"{cls}.build_items took {took} seconds")`` when it took more than 0.2 s (``time.monotonic``), and
``build_impl`` hooks ``on_collapsed_changed`` (which keeps ``self._collapsed``) to the frame's collapsed changes.
"""

from __future__ import annotations

import asyncio
import time

import carb
import omni.ui as ui
from omni.kit.async_engine import run_coroutine
from omni.kit.window.property.property_widget import PropertyWidget

LABEL_WIDTH = 160
LABEL_WIDTH_LIGHT = 235
LABEL_HEIGHT = 18
HORIZONTAL_SPACING = 4
#: ``_build_frame`` warns when ``build_items`` took longer than this (seconds)
SLOW_BUILD_S = 0.2


def build_frame_header(collapsed, text: str, group_id: str | None = None):
    with ui.HStack(spacing=8):
        ui.Label(text)


class SimplePropertyWidget(PropertyWidget):
    def __init__(self, title: str, collapsed: bool = False, collapsable: bool = True):
        super().__init__(title)
        self._collapsed_default = collapsed
        self._collapsed = collapsed
        self._collapsable = collapsable
        self._collapsable_frame = None
        self._payload = None
        self._pending_rebuild_task = None
        self._filter_changed_sub = None
        self._any_item_visible = False

    def clean(self):
        self.reset()
        if self._pending_rebuild_task is not None:
            self._pending_rebuild_task.cancel()
        self._pending_rebuild_task = None
        if self._collapsable_frame is not None:
            self._collapsable_frame.set_build_fn(None)
            if self._collapsable:
                self._collapsable_frame.set_collapsed_changed_fn(None)
            self._collapsable_frame = None

    def reset(self):
        pass

    def request_rebuild(self):
        if self._pending_rebuild_task:
            return
        self._pending_rebuild_task = run_coroutine(self._delayed_rebuild())

    def add_label(self, label: str):
        ui.Label(label, name="label", width=LABEL_WIDTH, height=LABEL_HEIGHT)

    def add_item(self, label: str, value):
        if not self._filter.matches(label):
            return
        with ui.HStack(spacing=HORIZONTAL_SPACING):
            self.add_label(label)
            ui.StringField(name="models").model.set_value(str(value))
        self._any_item_visible = True

    def add_item_with_model(self, label: str, model, editable: bool = False, identifier: str | None = None):
        if not self._filter.matches(label):
            return
        with ui.HStack(spacing=HORIZONTAL_SPACING):
            self.add_label(label)
            sf = ui.StringField(name="models", model=model, enabled=editable)
            if identifier and sf:
                sf.identifier = identifier
        self._any_item_visible = True

    def on_new_payload(self, payload, ignore_large_selection=False) -> bool:
        self._payload = payload
        if (
            not ignore_large_selection
            and payload
            and hasattr(payload, "is_large_selection")
            and payload.is_large_selection()
        ):
            return False
        return True

    def build_items(self):
        self.add_item("Hello", "World")

    def on_collapsed_changed(self, collapsed):
        self._collapsed = collapsed

    def build_impl(self):
        if self._filter_changed_sub is None:
            self._filter_changed_sub = self._filter.name_model.add_value_changed_fn(self._on_filter_changed)
        if self._collapsable:
            self._collapsable_frame = ui.CollapsableFrame(
                self._title, build_header_fn=self._build_frame_header, collapsed=self._collapsed_default
            )
            self._collapsable_frame.set_collapsed_changed_fn(self.on_collapsed_changed)
        else:
            self._collapsable_frame = ui.Frame(height=0, style={"Frame": {"padding": 0}})
        self.request_rebuild()

    def _build_frame_header(self, collapsed, text: str, group_id: str | None = None):
        build_frame_header(collapsed, text, group_id)

    def _build_frame(self):
        start = time.monotonic()
        with ui.VStack(height=0, spacing=5, name="frame_v_stack"):
            self._any_item_visible = False
            self.build_items()
            if self._filter.name:
                self._collapsable_frame.visible = self._any_item_visible
            else:
                self._collapsable_frame.visible = True
            ui.Spacer(height=0)
        took = time.monotonic() - start
        if took > SLOW_BUILD_S:
            carb.log_warn(f"{self.__class__.__name__}.build_items took {took} seconds")

    def _on_filter_changed(self, model):
        self.request_rebuild()

    async def _delayed_rebuild(self):
        try:
            if self._pending_rebuild_task is not None:
                try:
                    if self._collapsable_frame:
                        with self._collapsable_frame:
                            self._build_frame()
                        self._collapsable_frame.rebuild()
                finally:
                    self._pending_rebuild_task = None
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            import traceback

            carb.log_error(f"Exception when async '{self._delayed_rebuild}'")
            carb.log_error(f"{exc}")
            carb.log_error(traceback.format_exc())
