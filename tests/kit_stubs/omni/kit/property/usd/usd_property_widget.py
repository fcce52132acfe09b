"""``UsdPropertiesWidget`` (behaviour of Kit's ``usd_property_widget.py``, property builders simplified).

``__init__(title, collapsed, multi_edit=True, enable_adapter=False, maintain_property_order=False)``: ``collapsed``
has no default. ``on_new_payload`` calls ``payload.get_stage()`` then the parent's. ``build_items`` resets,
returns on an empty payload, registers a ``Tf.Notice`` listener for ``Usd.Notice.ObjectsChanged`` on the stage,
collects the properties shared by the selected prims (``_filter_props_to_build`` on each prim's
``GetProperties()``, then ``_customize_props_layout``) and builds one row per property (a label and a value
field). On a notice that resyncs a selected prim it requests a rebuild. ``reset`` revokes the listener.

A value change of a built property (a changed-info-only path) does not rebuild: the path is added to
``_pending_dirty_paths`` and ``_delayed_dirty_handler`` is scheduled once (``_pending_dirty_task_or_future``);
it first waits, a frame at a time (``next_update_async``), while the section is collapsed (``self._collapsed``),
at most 100 frames ("Do not refresh UI until visible/uncollapsed"), then clears the pending task and refreshes
the models of the dirty paths. ``request_rebuild`` cancels a pending dirty task and forgets its paths (the
rebuild reads everything). All from Kit's ``usd_property_widget.py``: ``UsdPropertiesWidget.__init__``,
``reset_models``, ``request_rebuild``, ``_delayed_dirty_handler`` (the models' ``_set_dirty`` here re-reads the
attribute into the field).
"""

from __future__ import annotations

import omni.ui as ui
from omni.kit.window.property.templates import HORIZONTAL_SPACING, SimplePropertyWidget
from pxr import Sdf, Tf, Usd


class UsdPropertyUiEntry:
    def __init__(
        self,
        prop_name: str,
        display_group: str,
        metadata: dict,
        property_type,
        build_fn=None,
        display_group_collapsed: bool = False,
        prim_paths: list[Sdf.Path] | None = None,
    ):
        self.prop_name = prop_name
        self.display_group = display_group
        self.metadata = metadata
        self.property_type = property_type
        self.build_fn = build_fn
        self.display_group_collapsed = display_group_collapsed
        self.prim_paths = prim_paths

    def __getitem__(self, key):
        return (self.prop_name, self.display_group, self.metadata)[key]

    def override_display_name(self, name: str):
        self.metadata = {**(self.metadata or {}), "displayName": name}

    def override_display_group(self, group: str):
        self.display_group = group


class UsdPropertiesWidget(SimplePropertyWidget):
    def __init__(
        self,
        title: str,
        collapsed: bool,
        multi_edit: bool = True,
        enable_adapter: bool = False,
        maintain_property_order: bool = False,
    ):
        super().__init__(title=title, collapsed=collapsed)
        self._multi_edit = multi_edit
        self._listener = None
        self._models: dict = {}
        self._maintain_property_order = maintain_property_order
        self._pending_dirty_task_or_future = None
        self._pending_dirty_paths: set = set()

    def clean(self):
        self.reset_models()
        super().clean()

    def reset(self):
        self.reset_models()
        super().reset()

    def reset_models(self):
        self._models = {}
        if self._listener:
            self._listener.Revoke()
        self._listener = None
        if self._pending_dirty_task_or_future is not None:
            self._pending_dirty_task_or_future.cancel()
            self._pending_dirty_task_or_future = None
        self._pending_dirty_paths.clear()

    def request_rebuild(self):
        if self._pending_dirty_task_or_future is not None:
            self._pending_dirty_task_or_future.cancel()
        self._pending_dirty_task_or_future = None
        self._pending_dirty_paths.clear()
        super().request_rebuild()

    async def _delayed_dirty_handler(self):
        import omni.kit.app

        loops = 100
        while loops > 0:
            if not self._collapsed:  # do not refresh the UI until visible / uncollapsed
                break
            await omni.kit.app.get_app().next_update_async()
            loops -= 1
        self._pending_dirty_task_or_future = None
        if self._pending_dirty_paths:
            paths, self._pending_dirty_paths = set(self._pending_dirty_paths), set()
            stage = self._payload.get_stage() if self._payload is not None else None
            for path in paths:
                for model in self._models.get(path, []):
                    attr = stage.GetAttributeAtPath(path) if stage else None
                    value = attr.Get() if attr else None
                    model.set_value("" if value is None else str(value))

    def on_new_payload(self, payload):  # pylint: disable=arguments-differ
        payload.get_stage()
        return super().on_new_payload(payload)

    def _get_prim(self, prim_path):
        if prim_path:
            stage = self._payload.get_stage()
            if stage:
                return stage.GetPrimAtPath(prim_path)
        return None

    def _filter_props_to_build(self, props):
        return [prop for prop in props if not prop.IsHidden()]

    def _customize_props_layout(self, props):
        return props

    def _get_shared_properties_from_selected_prims(self, anchor_prim):
        paths = self._payload.get_paths() if self._multi_edit else self._payload[-1:]
        stage = self._payload.get_stage()
        shared = None
        for path in paths:
            prim = stage.GetPrimAtPath(path)
            if not prim:
                continue
            names = {p.GetName(): p for p in self._filter_props_to_build(prim.GetProperties())}
            entries = {
                n: UsdPropertyUiEntry(n, p.GetDisplayGroup(), p.GetAllMetadata(), type(p)) for n, p in names.items()
            }
            shared = entries if shared is None else {n: e for n, e in shared.items() if n in entries}
        return list((shared or {}).values())

    def build_property_item(self, stage, ui_prop: UsdPropertyUiEntry, prim_paths: list[Sdf.Path]):
        with ui.HStack(spacing=HORIZONTAL_SPACING):
            ui.Label(ui_prop.prop_name, name="label")
            attr = stage.GetPrimAtPath(prim_paths[-1]).GetAttribute(ui_prop.prop_name)
            value = attr.Get() if attr else None
            field = ui.StringField(read_only=True)
            field.model.set_value("" if value is None else str(value))
        for path in prim_paths:
            self._models.setdefault(path.AppendProperty(ui_prop.prop_name), []).append(field.model)

    def build_items(self):
        self.reset()
        if not self._payload or len(self._payload) == 0:
            return
        last_prim = self._get_prim(self._payload[-1])
        stage = last_prim.GetStage() if last_prim else None
        if not stage:
            return
        self._listener = Tf.Notice.Register(Usd.Notice.ObjectsChanged, self._on_usd_changed, stage)
        shared_props = self._get_shared_properties_from_selected_prims(last_prim)
        if not shared_props:
            return
        shared_props = self._customize_props_layout(shared_props)
        paths = self._payload.get_paths() if self._multi_edit else self._payload[-1:]
        for prop in shared_props:
            self.build_property_item(stage, prop, paths)

    def _on_usd_changed(self, notice, stage):
        if stage != self._payload.get_stage() or not self._collapsable_frame or len(self._payload) == 0:
            return
        if self._pending_rebuild_task is not None:
            return
        for path in notice.GetResyncedPaths():
            if path in self._payload or path.GetPrimPath() in self._payload:
                self.request_rebuild()
                return
        dirty = {p for p in notice.GetChangedInfoOnlyPaths() if p in self._models}
        if dirty:
            self._pending_dirty_paths |= dirty
            if self._pending_dirty_task_or_future is None:
                from omni.kit.async_engine import run_coroutine

                self._pending_dirty_task_or_future = run_coroutine(self._delayed_dirty_handler())
