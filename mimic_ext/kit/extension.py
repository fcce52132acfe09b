"""The Kit extension: registers everything the Kit layer adds on startup and removes it on shutdown.

Startup registers the mimic schemas (``mimic_ext.schema.register_schemas``, idempotent), the
six commands, the "Mimic Joint" Property window section (scheme "prim") and the menu entry
"Mimic Joints > Run FET022 sweep on stage". Shutdown removes the commands, the section and
the menu entry and stops a running sweep. The schema plugin stays registered: USD cannot
unload a plugin, and registering again is a no-op, so a restart leaves exactly one of each.
"""

from __future__ import annotations

import carb
import omni.ext
import omni.kit.menu.utils
import omni.kit.window.property
from omni.kit.menu.utils import MenuItemDescription

from ..schema import register_schemas
from .commands import register_commands, unregister_commands
from .property_widget import SCHEME, WIDGET_NAME, MimicPropertiesWidget
from .stage_sweep import MENU_ITEM, MENU_NAME, StageSweepRunner

_instance: "MimicExtension | None" = None


def get_extension() -> "MimicExtension | None":
    """The running extension (None when disabled): tests and scripts reach the runner through it."""
    return _instance


class MimicExtension(omni.ext.IExt):
    def on_startup(self, ext_id: str) -> None:
        global _instance
        self._ext_id = ext_id
        register_schemas()
        register_commands()
        self.widget: MimicPropertiesWidget | None = None
        window = omni.kit.window.property.get_window()
        if window is not None:
            self.widget = MimicPropertiesWidget()
            window.register_widget(SCHEME, WIDGET_NAME, self.widget)
        else:
            carb.log_warn("mimic_ext: the Property window is not running; the Mimic Joint section is not available")
        self.runner = StageSweepRunner()
        self.menu_items = [MenuItemDescription(name=MENU_ITEM, onclick_fn=self.runner.on_menu_click)]
        omni.kit.menu.utils.add_menu_items(self.menu_items, MENU_NAME)
        _instance = self

    def on_shutdown(self) -> None:
        global _instance
        omni.kit.menu.utils.remove_menu_items(self.menu_items, MENU_NAME)
        self.menu_items = []
        window = omni.kit.window.property.get_window()
        if self.widget is not None:
            if window is not None:
                window.unregister_widget(SCHEME, WIDGET_NAME)
            else:
                self.widget.clean()
            self.widget = None
        unregister_commands()
        self.runner.destroy()
        if _instance is self:
            _instance = None
