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


def test_after_a_disable_and_one_frame_no_command_is_registered_or_executable(kit, robotiq_sample, tmp_path, caplog):
    """Kit's CommandExt (omni/kit/commands/__init__.py, CommandExt.on_startup's on_change) registers every class
    Command.__subclasses__() reaches on each EXTENSION_EVENT_SCRIPT_CHANGED, and a disable sends one (the
    stand-ins do both, as the real sources and kernel do). Here the command classes outlive the disable the way they
    do in Kit: their module stays imported (the extension folder was on sys.path already) and a command executed
    before the disable stays on Kit's undo stack. Neither may bring a command back one frame later."""
    from pathlib import Path

    import omni.kit.commands
    from robotiq_sample_paths import FOLLOWER

    project = Path(__file__).resolve().parents[2]
    manager = kit.app.get_extension_manager()
    assert manager.is_extension_enabled("omni.kit.commands")  # CommandExt runs, as in any full app
    folder = tmp_path / "exts"
    folder.mkdir()
    (folder / "mimic_ext").symlink_to(project, target_is_directory=True)  # the folder name is the extension name
    manager.add_path(str(folder))
    stage = kit.open(robotiq_sample)
    gearing = stage.GetPrimAtPath(FOLLOWER).GetAttribute("physxMimicJoint:rotX:gearing")

    def registered():
        from mimic_ext.kit.commands import COMMANDS

        return [c.__name__ for c in COMMANDS if omni.kit.commands.get_command_class(c.__name__) is not None]

    for _ in range(2):  # enable, disable, and the same again: a re-enable brings them back, a disable takes them
        assert manager.set_extension_enabled_immediate("mimic_ext", True) is True
        kit.frames(2)
        assert len(registered()) == 8
        assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=3.0)[0]
        assert gearing.Get() == 3.0
        assert manager.set_extension_enabled_immediate("mimic_ext", False) is True
        assert registered() == []
        kit.frames(1)  # the disable's script-changed event reaches CommandExt
        assert registered() == []
        kit.frames(3)
        assert registered() == []
        with caplog.at_level(logging.ERROR, logger="carb"):
            assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=4.0) == (False, None)
        assert gearing.Get() == 3.0
        assert any("Can't execute command" in r.getMessage() for r in caplog.records)
        # what the user did before the disable can still be undone (Kit's history keeps the command)
        assert kit.undo.undo() is True and gearing.Get() == -1.0
    manager.remove_path(str(folder))


def test_a_disable_leaves_no_section_behind(kit, robotiq_sample):
    """After shutdown nothing of the extension's may stay reachable from Kit: Kit's SimplePropertyWidget subscribes
    every section to the Property window's shared search model (build_impl) and never unsubscribes (clean), so that
    model kept the section, and through it mimic_ext's modules, alive after a disable."""
    import gc
    import weakref

    from robotiq_sample_paths import FOLLOWER

    from mimic_ext.kit import MimicExtension

    ext = MimicExtension()
    ext.on_startup(EXT_ID)
    kit.open(robotiq_sample)
    kit.select(FOLLOWER)
    section = weakref.ref(ext.widget)
    assert section().build_count >= 1
    ext.on_shutdown()
    kit.frames(2)
    del ext
    gc.collect()
    assert section() is None
