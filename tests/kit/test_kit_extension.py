"""Extension lifecycle: startup registers commands, the Property section and the menu entry; shutdown removes them."""

from __future__ import annotations

import logging

EXT_ID = "mimic_ext-0.1.0"  # Kit passes "<name>-<version>"

COMMAND_NAMES = (
    "AddMimicJoint",
    "RemoveMimicJoint",
    "SetMimicGearing",
    "SetMimicOffset",
    "SetMimicReferenceJoint",
    "SetMimicCompliance",
)


def _registered(kit):
    import omni.kit.actions.core
    import omni.kit.commands
    import omni.kit.context_menu
    import omni.kit.menu.utils

    from mimic_ext.kit.extension import (
        ACTION_EXT,
        ACTION_ID,
        ACTION_NAME,
        MENU_NAME,
        SUBMENU,
    )

    commands = {name: len(omni.kit.commands.get_commands().get(name, {})) for name in COMMAND_NAMES}
    widgets = [name for name in kit.property.get_window()._stub_registered("prim") if name == "mimic_joint"]
    menu = [
        sub
        for i in omni.kit.menu.utils.get_merged_menus().get(MENU_NAME, [])
        if i.name == SUBMENU
        for sub in i.sub_menu
        if sub.name == ACTION_NAME and sub.onclick_action == (ACTION_EXT, ACTION_ID)
    ]
    actions = omni.kit.actions.core.get_action_registry().get_all_actions_for_extension(ACTION_EXT)
    stage_menu = omni.kit.context_menu.get_menu_dict("MENU", "omni.kit.widget.stage")
    return commands, widgets, menu + actions + stage_menu


def test_startup_shutdown_startup_leaves_exactly_one_of_each(kit):
    from pxr import Plug

    from mimic_ext.kit import MimicExtension
    from mimic_ext.schema.registration import declaring_plugin

    ext = MimicExtension()
    ext.on_startup(EXT_ID)
    commands, widgets, menu = _registered(kit)
    assert commands == dict.fromkeys(COMMAND_NAMES, 1)
    assert widgets == ["mimic_joint"] and len(menu) == 3  # menu item, action, Stage context entry
    assert declaring_plugin("PhysxMimicJointAPI") is not None
    assert Plug.Registry().GetPluginWithName("mimicExtSchema") is None  # we declare none

    ext.on_shutdown()
    commands, widgets, menu = _registered(kit)
    assert commands == dict.fromkeys(COMMAND_NAMES, 0)
    assert widgets == [] and menu == []

    ext.on_startup(EXT_ID)  # the same instance started again
    ext.on_shutdown()
    ext = MimicExtension()  # and a new instance, as after a module reload
    ext.on_startup(EXT_ID)
    commands, widgets, menu = _registered(kit)
    assert commands == dict.fromkeys(COMMAND_NAMES, 1)
    assert widgets == ["mimic_joint"] and len(menu) == 3  # menu item, action, Stage context entry
    ext.on_shutdown()
    assert _registered(kit) == (dict.fromkeys(COMMAND_NAMES, 0), [], [])


def test_startup_without_a_property_window_warns_and_still_registers_the_rest(kit, caplog, monkeypatch):
    import omni.kit.window.property

    from mimic_ext.kit import MimicExtension

    monkeypatch.setattr(omni.kit.window.property, "get_window", lambda: None)
    ext = MimicExtension()
    with caplog.at_level(logging.WARNING, logger="carb"):
        ext.on_startup(EXT_ID)
    assert any("Property window is not running" in r.getMessage() for r in caplog.records)
    import omni.kit.commands

    assert omni.kit.commands.get_command_class("SetMimicGearing") is not None
    ext.on_shutdown()
    assert omni.kit.commands.get_command_class("SetMimicGearing") is None


def test_enable_says_when_the_apps_warp_is_older_than_the_solver_needs(kit, monkeypatch, caplog):
    """In Kit, the app's omni.warp.core provides ``warp`` and pipapi never checks its version."""
    import sys
    import types

    from mimic_ext.kit import MimicExtension

    monkeypatch.setitem(sys.modules, "warp", types.SimpleNamespace(__version__="1.17.0", __file__="/app/warp"))
    ext = MimicExtension()
    with caplog.at_level(logging.ERROR, logger="carb"):
        ext.on_startup(EXT_ID)
    ext.on_shutdown()
    (line,) = [r.getMessage() for r in caplog.records if "Warp >= 1.18" in r.getMessage()]
    assert "Warp 1.17.0 from /app/warp" in line and line.startswith("mimic_ext: ")


def test_the_declared_warp_minimum_is_the_one_the_code_checks():
    """pyproject.toml and extension.toml's pipapi requirement name the minimum warp_runtime checks."""
    import tomllib
    from pathlib import Path

    from mimic_ext.warp_runtime import WARP_MIN_VERSION

    root = Path(__file__).resolve().parents[2]
    need = "warp-lang>=" + ".".join(map(str, WARP_MIN_VERSION))
    assert need in tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    assert need in tomllib.loads((root / "extension.toml").read_text())["python"]["pipapi"]["requirements"]
