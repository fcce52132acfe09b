"""The Kit extension: adds the Kit layer's pieces on startup and takes them away on shutdown.

Kit imports each ``[[python.module]]`` and starts every ``omni.ext.IExt`` subclass found by
``dir()`` of it (``omni/ext/_impl/_internal.py``, ``startup`` and ``_startup_ext``): here
``MimicExtension`` of ``mimic_ext.kit``.

Startup: the six commands; the mimic section of the Property window (scheme "prim"); the
action ``mimic_ext::run_fet022_sweep`` (``omni.kit.actions.core``), reached from
*Tools > Mimic Joints > Run FET022 sweep on stage* and from the Stage window's context menu
when a selected prim is an articulation root (then only its followers are swept); the sweep
engine ``kit-physx`` (the stage's own PhysX, ``physx_stage_engine``) in mimic_ext's engine
registry, so scripts can also ``fet022.run(stage, engine="kit-physx")`` on Kit's thread.
Shutdown removes all of it and stops a running sweep, its job thread included, putting the
stage and its PhysX back as they were.

Schemas: nothing is registered here. In Kit, PhysxMimicJointAPI and NewtonMimicAPI come from
Kit's own compiled schema extensions (``omni.usd.schema.physx``, ``omni.usd.schema.newton``,
optional dependencies in extension.toml so they load first when the app has them);
``mimic_ext.schema`` only loads a pip schema package for a schema no plugin declares.
"""

from __future__ import annotations

import carb
import omni.ext
import omni.kit.actions.core
import omni.kit.menu.utils
import omni.kit.window.property
from omni.kit.menu.utils import MenuItemDescription
from pxr import UsdPhysics

from ..fet022.engines import register_engine, unregister_engine
from ..schema import registration
from ..warp_runtime import warp_version_problem
from .commands import register_commands, unregister_commands
from .physx_stage_engine import ENGINE_NAME, KitPhysxEngine, check_available
from .property_widget import SCHEME, WIDGET_NAME, MimicPropertiesWidget
from .stage_sweep import StageSweepRunner

#: The action every entry point runs; ``ACTION_EXT`` is the extension name (Kit's ext id minus the version).
ACTION_EXT = "mimic_ext"
ACTION_ID = "run_fet022_sweep"
ACTION_NAME = "Run FET022 sweep on stage"
#: An existing menu of Kit apps and Isaac Sim; the item sits in its own "Mimic Joints" submenu.
MENU_NAME = "Tools"
SUBMENU = "Mimic Joints"
CONTEXT_MENU_ITEM = "Run FET022 mimic sweep"

_instance: MimicExtension | None = None


def get_extension() -> MimicExtension | None:
    """The running extension (None when disabled): tests and scripts reach the runner through it."""
    return _instance


def _articulation_selected(payload: dict) -> bool:
    """The Stage window's ``show_fn``: ``payload["prim_list"]`` holds the right-clicked selection."""
    return any(p and p.HasAPI(UsdPhysics.ArticulationRootAPI) for p in payload.get("prim_list", []) or [])


class MimicExtension(omni.ext.IExt):
    def on_startup(self, ext_id: str) -> None:
        global _instance
        self._ext_id = ext_id
        self._ext_name = omni.ext.get_extension_name(ext_id)
        carb.log_info(f"mimic_ext: mimic schemas declared by {registration.schema_sources()}")
        warp_problem = warp_version_problem()
        if warp_problem:  # the app's omni.warp.core may be older than pip's requirement says
            carb.log_error(f"mimic_ext: {warp_problem}")
        register_commands()
        register_engine(ENGINE_NAME, KitPhysxEngine, check=check_available)
        self.runner = StageSweepRunner()
        self.widget: MimicPropertiesWidget | None = None
        window = omni.kit.window.property.get_window()
        if window is not None:
            self.widget = MimicPropertiesWidget(runner=self.runner)
            window.register_widget(SCHEME, WIDGET_NAME, self.widget)
        else:
            carb.log_warn("mimic_ext: the Property window is not running; the mimic section is not available")
        registry = omni.kit.actions.core.get_action_registry()
        self._action = registry.register_action(
            ACTION_EXT,
            ACTION_ID,
            self.runner.run_action,
            display_name=f"Mimic Joints: {ACTION_NAME}",
            description="FET022 mimic_joint sweep of the open stage (or of the selected articulations)",
            tag="Mimic Joints",
        )
        self.menu_items = [
            MenuItemDescription(
                name=SUBMENU, sub_menu=[MenuItemDescription(name=ACTION_NAME, onclick_action=(ACTION_EXT, ACTION_ID))]
            )
        ]
        omni.kit.menu.utils.add_menu_items(self.menu_items, MENU_NAME)
        self._stage_menu = self._add_stage_context_menu()
        _instance = self

    def _add_stage_context_menu(self):
        try:
            import omni.kit.context_menu
        except ImportError:  # an app without the Stage window's context menus
            return None
        entry = {
            "name": CONTEXT_MENU_ITEM,
            "show_fn": [_articulation_selected],
            "onclick_action": (ACTION_EXT, ACTION_ID),
        }
        return omni.kit.context_menu.add_menu(entry, "MENU", "omni.kit.widget.stage")

    def on_shutdown(self) -> None:
        global _instance
        omni.kit.menu.utils.remove_menu_items(self.menu_items, MENU_NAME)
        self.menu_items = []
        self._stage_menu = None  # dropping the subscription removes the context menu entry
        omni.kit.actions.core.get_action_registry().deregister_action(self._action)
        self._action = None
        window = omni.kit.window.property.get_window()
        if self.widget is not None:
            if window is not None:
                window.unregister_widget(SCHEME, WIDGET_NAME)
            else:
                self.widget.clean()
            self.widget = None
        unregister_commands()
        self.runner.destroy()
        unregister_engine(ENGINE_NAME)
        if _instance is self:
            _instance = None
