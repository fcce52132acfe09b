"""``PropertyWindow`` (behaviour of Kit's ``omni/kit/window/property/window.py``, scheme delegates left out).

The window's frame build function builds, for the current scheme, every registered widget (top stack in
registration order, then the bottom stack reversed) whose ``on_new_payload(payload)`` returns True, calling
``widget.build(filter)``; widgets built before and not now get ``reset()``. ``notify`` rebuilds when the
scheme changes (with a non-empty payload) or the payload object differs; ``register_widget`` replaces a widget
of the same name and rebuilds when the scheme is current; ``unregister_widget`` calls ``clean()``.
"""

from __future__ import annotations

import copy
from typing import Any

import omni.ui as ui

from .property_filter import PropertyFilter
from .property_widget import PropertyWidget


class PropertyWindow:
    def __init__(self, window_kwargs=None, properties_frame_kwargs=None):
        kwargs = {
            "title": "Property",
            "width": 600,
            "height": 800,
            "flags": ui.WINDOW_FLAGS_NO_SCROLLBAR,
            "dockPreference": ui.DockPreference.RIGHT_BOTTOM,
        }
        kwargs.update(window_kwargs or {})
        self._window = ui.Window(**kwargs)
        self._window.set_visibility_changed_fn(self._visibility_changed_fn)
        self._window.frame.set_build_fn(self._rebuild_window)
        self._scheme = ""
        self._payload = None
        self._widgets_top: dict[str, dict[str, PropertyWidget]] = {}
        self._widgets_bottom: dict[str, dict[str, PropertyWidget]] = {}
        self._built_widgets: set = set()
        self._notification_paused = False
        self._notifications_while_paused: list = []
        self._filter = PropertyFilter()
        self._window_frame = None

    def destroy(self) -> None:
        self._window = None

    def set_visible(self, visible: bool) -> None:
        if self._window:
            self._window.visible = visible

    def _rebuild_window(self) -> None:
        with ui.VStack():
            self._window_frame = ui.ScrollingFrame(name="canvas")
            with self._window_frame:
                with ui.VStack(height=0, name="main_v_stack", spacing=6):
                    if self._scheme == "":
                        return
                    widgets = {
                        **self._widgets_top.setdefault(self._scheme, {}),
                        **dict(reversed(list(self._widgets_bottom.setdefault(self._scheme, {}).items()))),
                    }
                    built = set()
                    for widget in widgets.values():
                        if widget and widget.on_new_payload(self._payload):
                            widget.build(self._filter)
                            built.add(widget)
                    for widget in self._built_widgets:
                        if widget not in built:
                            widget.reset()
                    self._built_widgets = built

    def _visibility_changed_fn(self, visible: bool) -> None:
        if not visible:
            for widget in self._built_widgets:
                widget.reset()
            self._built_widgets.clear()
            self._window.frame.rebuild()

    def register_widget(self, scheme: str, name: str, property_widget: PropertyWidget, top_stack: bool = True):
        if top_stack:
            self._widgets_top.setdefault(scheme, {})[name] = property_widget
            self._widgets_bottom.setdefault(scheme, {}).pop(name, None)
        else:
            self._widgets_bottom.setdefault(scheme, {})[name] = property_widget
            self._widgets_top.setdefault(scheme, {}).pop(name, None)
        if scheme == self._scheme:
            self._window.frame.rebuild()

    def unregister_widget(self, scheme: str, name: str, top_stack: bool = True):
        if top_stack:
            widget = self._widgets_top.setdefault(scheme, {}).pop(name, None)
        else:
            widget = self._widgets_bottom.setdefault(scheme, {}).pop(name, None)
        if widget:
            widget.clean()
        if scheme == self._scheme:
            self._window.frame.rebuild()

    def notify(self, scheme: str, payload: Any) -> None:
        if self._notification_paused:
            self._notifications_while_paused.append((scheme, copy.copy(payload)))
            return
        if self._scheme != scheme:
            if payload:
                self._scheme = scheme
                self._payload = payload
                self._window.frame.rebuild()
        elif self._payload != payload:
            self._payload = payload
            self._window.frame.rebuild()

    def get_scheme(self) -> str:
        return self._scheme

    def get_payload(self):
        return self._payload

    def request_rebuild(self) -> None:
        if self._window:
            self._window.frame.rebuild()

    @property
    def paused(self) -> bool:
        return self._notification_paused

    @paused.setter
    def paused(self, to_pause: bool) -> None:
        self._notification_paused = bool(to_pause)
        if not to_pause:
            for scheme, payload in self._notifications_while_paused:
                self.notify(scheme, payload)
            self._notifications_while_paused.clear()

    # stand-in helpers (tests only) --------------------------------------------------------
    def _stub_registered(self, scheme: str) -> dict:
        return {**self._widgets_top.get(scheme, {}), **self._widgets_bottom.get(scheme, {})}

    def _stub_search(self, text: str) -> None:
        """Type ``text`` into the window's search box: the filter every widget was built with changes."""
        self._filter.name = text

    def _stub_frame(self):
        return self._window.frame
