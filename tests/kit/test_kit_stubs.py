"""The stand-ins behave like the Kit APIs they replace (KIT_API.md), so Kit-layer tests mean something."""

from __future__ import annotations

import logging
import weakref

import pytest


def _command_classes():
    import omni.kit.commands

    class NoUndoCommand(omni.kit.commands.Command):
        def __init__(self, log):
            self.log = log

        def do(self):
            self.log.append("do")
            return 42

    class CountCommand(omni.kit.commands.Command):
        def __init__(self, box, step=1):
            self.box, self.step = box, step

        def do(self):
            self.box[0] += self.step
            return self.box[0]

        def undo(self):
            self.box[0] -= self.step

    class FailCommand(omni.kit.commands.Command):
        def __init__(self, box):
            self.box = box

        def do(self):
            self.box[0] += 100
            raise ValueError("refused")

        def undo(self):
            self.box[0] -= 100

    return NoUndoCommand, CountCommand, FailCommand


def test_commands_execute_register_and_undo_like_kit(kit, caplog):
    import omni.kit.commands
    import omni.kit.undo

    no_undo, count, fail = _command_classes()
    # The base class has no undo and no __init__; do is abstract.
    assert not hasattr(omni.kit.commands.Command, "undo")
    with pytest.raises(TypeError):
        omni.kit.commands.Command()
    for cls in (no_undo, count, fail):
        omni.kit.commands.register(cls)
    # Names are stored without the "Command" suffix and can be called either way.
    assert {"NoUndo", "Count", "Fail"} <= set(omni.kit.commands.get_commands())
    assert omni.kit.commands.get_command_class("CountCommand") is count

    log, box = [], [0]
    assert omni.kit.commands.execute("NoUndo", log=log) == (True, 42)
    assert len(omni.kit.undo.get_undo_stack()) == 0  # no undo(): not recorded
    assert omni.kit.commands.execute("Count", box=box, step=2) == (True, 2)
    assert omni.kit.commands.execute("Count", box=box, step=3) == (True, 5)
    assert omni.kit.undo.undo() is True and box == [2]
    assert omni.kit.undo.redo() is True and box == [5]

    with caplog.at_level(logging.ERROR, logger="carb"):
        assert omni.kit.commands.execute("Unknown") == (False, None)
        assert omni.kit.commands.execute("Fail", box=box) == (False, None)
    assert any("Unknown" in r.getMessage() for r in caplog.records)
    assert any("Failed to execute a command: Fail" in r.getMessage() for r in caplog.records)
    assert box == [5]  # the failing command was undone
    assert [e.name for e in omni.kit.undo.get_undo_stack()] == ["Count", "Count"]
    # A refused top-level command costs the redo history: Kit's _create_entry clears the redo stack before
    # do() runs, and _execute then puts the failed command itself there (omni/kit/undo/undo.py).
    assert omni.kit.undo.undo() is True and box == [2]
    assert [e.name for e in omni.kit.undo.get_redo_stack()] == ["Fail", "Count"]  # the first Fail's, then the undo's
    with caplog.at_level(logging.ERROR, logger="carb"):
        assert omni.kit.commands.execute("Fail", box=box) == (False, None)
        assert [e.name for e in omni.kit.undo.get_redo_stack()] == ["Fail"]
        assert omni.kit.undo.redo() is False and box == [2]  # redo re-runs the refused command, which fails again
    assert omni.kit.commands.execute("Count", box=box, step=3) == (True, 5)

    # A group is one undo step; an empty stack makes undo() return False.
    with omni.kit.undo.group():
        omni.kit.commands.execute("Count", box=box)
        omni.kit.commands.execute("Count", box=box)
    assert box == [7]
    assert omni.kit.undo.undo() is True and box == [5]
    assert omni.kit.undo.redo() is True and box == [7]
    omni.kit.undo.clear_stack()
    assert omni.kit.undo.undo() is False

    # Refusing a non-Command class logs an error.
    with caplog.at_level(logging.ERROR, logger="carb"):
        omni.kit.commands.register(int)
    assert any("not a subclass of a Command" in r.getMessage() for r in caplog.records)
    for cls in (no_undo, count, fail):
        omni.kit.commands.unregister(cls)
    assert omni.kit.commands.get_command_class("Count") is None


def test_selection_payload_and_property_window(kit, robotiq_sample):
    import omni.kit.window.property
    from omni.kit.property.usd import PrimSelectionPayload
    from omni.kit.window.property.templates import SimplePropertyWidget
    from pxr import Sdf, Usd

    stage = Usd.Stage.Open(str(robotiq_sample))
    payload = PrimSelectionPayload(weakref.ref(stage), [Sdf.Path("/Robotiq")])
    assert len(payload) == 1 and payload and payload.get_stage() is stage
    assert payload != PrimSelectionPayload(weakref.ref(stage), [Sdf.Path("/Robotiq")])  # identity only

    class Hello(SimplePropertyWidget):
        built = 0

        def build_items(self):
            Hello.built += 1
            super().build_items()

    window = omni.kit.window.property.get_window()
    widget = Hello("Hello")
    window.register_widget("prim", "hello", widget)  # top_stack defaults to True
    assert window._widgets_top["prim"]["hello"] is widget
    kit.open(robotiq_sample)
    kit.select("/Robotiq")
    assert window.get_scheme() == "prim"
    assert Hello.built == 1  # built one frame after the window frame
    assert [w.text for w in kit.walk(kit.property_root()) if hasattr(w, "text")][:1] == ["Hello"]
    window.unregister_widget("prim", "hello")
    assert "hello" not in window._stub_registered("prim")


def test_ui_models_frames_and_with_blocks(kit):
    import omni.ui as ui

    calls = []
    model = ui.SimpleFloatModel(1.0)
    model.add_value_changed_fn(lambda m: calls.append(("changed", m.as_float)))
    model.add_end_edit_fn(lambda m: calls.append(("end", m.as_float)))
    model.begin_edit()
    model.set_value(2.0)
    model.end_edit()
    assert calls == [("changed", 2.0), ("end", 2.0)]

    built = []
    window = ui.Window("stub test", width=100, height=100)

    def build():
        built.append(1)
        with ui.VStack():
            ui.Label("a", identifier="a")
            ui.FloatField(identifier="f")

    window.frame.set_build_fn(build)
    assert built == []  # lazy: built on the next draw
    kit.frames(1)
    assert built == [1] and kit.find("a", window.frame).text == "a"
    assert isinstance(kit.find("f", window.frame).model, ui.SimpleFloatModel)  # default model
    window.frame.rebuild()
    kit.frames(1)
    assert built == [1, 1]
    with pytest.raises(TypeError):
        ui.Label("x", colour=1)  # unknown keywords fail as in Kit
    combo = ui.ComboBox(1, "rotX", "rotY", "rotZ")
    seen = []
    combo.model.add_item_changed_fn(lambda m, item: seen.append(m.get_item_value_model().as_int))
    combo.model.get_item_value_model().set_value(2)
    assert seen == [2]
    assert [combo.model.get_item_value_model(i).as_string for i in combo.model.get_item_children()] == [
        "rotX",
        "rotY",
        "rotZ",
    ]
    window.destroy()


def test_signatures_the_kit_layer_relies_on(kit):
    import inspect

    import carb.settings
    import omni.kit.menu.utils
    import omni.kit.window.property
    from omni.kit.property.usd import UsdPropertiesWidget

    with pytest.raises(TypeError):
        UsdPropertiesWidget("no collapsed")  # `collapsed` has no default in Kit
    sig = inspect.signature(omni.kit.window.property.get_window().register_widget)
    assert sig.parameters["top_stack"].default is True
    sig = inspect.signature(omni.kit.menu.utils.add_menu_items)
    assert list(sig.parameters) == ["menu", "name", "menu_index", "can_rebuild_menus", "delegate"]
    settings = carb.settings.get_settings()
    assert settings.get("/exts/mimic_ext/missing") is None
    settings.set("/exts/mimic_ext/x", [1, 2])
    assert settings.get("/exts/mimic_ext/x") == [1, 2]
    assert settings.get_as_string("/exts/mimic_ext/missing") == ""


def test_a_section_that_does_not_mark_an_item_visible_vanishes_during_a_search(kit, robotiq_sample):
    """Kit's SimplePropertyWidget._build_frame: with search text, frame.visible = self._any_item_visible."""
    import omni.kit.window.property
    import omni.ui as ui
    from omni.kit.window.property.templates import SimplePropertyWidget

    class Plain(SimplePropertyWidget):
        def build_items(self):
            ui.Label("Gearing")  # built, but never says so

    class Listed(SimplePropertyWidget):
        def build_items(self):
            self.add_item("Gearing", -1)  # add_item filters by label and marks it visible

    window = omni.kit.window.property.get_window()
    plain, listed = Plain("Plain"), Listed("Listed")
    window.register_widget("prim", "plain", plain)
    window.register_widget("prim", "listed", listed)
    try:
        kit.open(robotiq_sample)
        kit.select("/Robotiq")
        assert plain._collapsable_frame.visible and listed._collapsable_frame.visible
        window._stub_search("gear")
        kit.frames(3)
        assert not plain._collapsable_frame.visible and listed._collapsable_frame.visible
        window._stub_search("offset")
        kit.frames(3)
        assert not listed._collapsable_frame.visible
        window._stub_search("")
        kit.frames(3)
        assert plain._collapsable_frame.visible and listed._collapsable_frame.visible
    finally:
        window.unregister_widget("prim", "plain")
        window.unregister_widget("prim", "listed")


def test_actions_menus_and_the_context_menu_run_like_kit(kit):
    import omni.kit.actions.core as ac
    import omni.kit.context_menu
    import omni.kit.menu.utils
    from omni.kit.menu.utils import MenuItemDescription

    calls = []
    action = ac.get_action_registry().register_action("my.ext", "go", lambda prim_list=None: calls.append(prim_list))
    item = MenuItemDescription(name="Go", onclick_action=("my.ext", "go"))
    omni.kit.menu.utils._stub_click(item)
    assert calls == [None]  # a menu passes nothing
    sub = omni.kit.context_menu.add_menu(
        {"name": "Go", "show_fn": [lambda p: bool(p.get("prim_list"))], "onclick_action": ("my.ext", "go")},
        "MENU",
        "omni.kit.widget.stage",
    )
    assert omni.kit.context_menu._stub_visible_entries("MENU", "omni.kit.widget.stage", {"prim_list": []}) == []
    objects = {"prim_list": ["p"], "stage": "s", "node_open": True}
    (entry,) = omni.kit.context_menu._stub_visible_entries("MENU", "omni.kit.widget.stage", objects)
    omni.kit.context_menu._stub_click(entry, objects)
    assert calls == [None]  # runs one frame later
    kit.frames(2)
    assert calls == [None, ["p"]]  # only the declared parameters are passed
    del sub
    assert omni.kit.context_menu.get_menu_dict("MENU", "omni.kit.widget.stage") == []
    ac.get_action_registry().deregister_action(action)
    assert ac.get_action_registry().get_action("my.ext", "go") is None


def _extension_folder(root):
    """Three extensions in one extension folder, laid out as Kit finds them (the folder name is the name)."""
    ok = root / "demo_ok"
    (ok / "config").mkdir(parents=True)
    (ok / "config" / "extension.toml").write_text(
        '[package]\nversion = "1.2.0"\n[dependencies]\n"omni.usd" = {}\n"omni.not.here" = { optional = true }\n'
        '[[python.module]]\nname = "demo_ok_mod"\n[settings]\nexts."demo_ok".answer = 3\n'
    )
    (ok / "demo_ok_mod").mkdir()
    (ok / "demo_ok_mod" / "__init__.py").write_text(
        "import omni.ext\nEVENTS = []\n"
        "class DemoExtension(omni.ext.IExt):\n"
        "    def on_startup(self, ext_id):\n        EVENTS.append(('startup', ext_id))\n"
        "    def on_shutdown(self):\n        EVENTS.append(('shutdown',))\n"
    )
    broken = root / "demo_broken"
    broken.mkdir()
    (broken / "extension.toml").write_text(
        '[package]\nversion = "0.3.0"\n[[python.module]]\nname = "demo_broken_mod"\n'
    )
    (broken / "demo_broken_mod.py").write_text("raise ImportError('no omni.kit.commands in this kernel')\n")
    needy = root / "demo_needy"
    needy.mkdir()
    (needy / "extension.toml").write_text('[package]\nversion = "1.0.0"\n[dependencies]\n"omni.not.a.kit.ext" = {}\n')


def test_set_extension_enabled_immediate_starts_and_stops_an_extension_as_kit_does(kit, tmp_path, caplog):
    """After the kernel's omni/ext/_impl/_internal.py (ExtensionModules.startup, _startup_ext, shutdown) and what
    tools/kit_kernel_check.py saw the real kernel do (settings applied; True even when a module fails to import)."""
    import sys

    import carb.settings

    manager = kit.app.get_extension_manager()
    _extension_folder(tmp_path)
    assert manager.set_extension_enabled_immediate("demo_ok", True) is False  # not in any extension folder yet
    manager.add_path(str(tmp_path))
    ids = {e["id"] for e in manager.get_extensions()}
    assert {"demo_ok-1.2.0", "demo_broken-0.3.0", "demo_needy-1.0.0"} <= ids
    assert manager.set_extension_enabled_immediate("demo_ok", True) is True
    mod = sys.modules["demo_ok_mod"]
    assert mod.EVENTS == [("startup", "demo_ok-1.2.0")]
    assert manager.get_enabled_extension_id("demo_ok") == "demo_ok-1.2.0"
    assert carb.settings.get_settings().get("/exts/demo_ok/answer") == 3
    assert manager.is_extension_enabled("omni.usd") and not manager.is_extension_enabled("omni.not.here")
    assert str(tmp_path / "demo_ok") in sys.path
    assert manager.set_extension_enabled_immediate("demo_ok", False) is True
    assert mod.EVENTS[-1] == ("shutdown",) and not manager.is_extension_enabled("demo_ok")
    assert "demo_ok_mod" not in sys.modules and str(tmp_path / "demo_ok") not in sys.path
    # a module that does not import: logged, nothing started, and Kit still says enabled
    with caplog.at_level(logging.ERROR, logger="carb"):
        assert manager.set_extension_enabled_immediate("demo_broken", True) is True
    assert manager.is_extension_enabled("demo_broken")
    assert any("Failed to import python module demo_broken_mod" in r.getMessage() for r in caplog.records)
    assert manager.set_extension_enabled_immediate("demo_broken", False) is True
    # a required dependency nothing provides fails the whole enable
    assert manager.set_extension_enabled_immediate("demo_needy", True) is False
    assert not manager.is_extension_enabled("demo_needy")
    manager.remove_path(str(tmp_path))


def test_post_quit_keeps_the_first_return_code(kit):
    app = kit.app
    code, app._stub_quit_code = app._stub_quit_code, None
    try:
        app.post_quit(2)
        app.post_quit(0)
        assert app._stub_quit_code == 2
    finally:
        app._stub_quit_code = code


def test_command_ext_registers_again_every_live_command_subclass_on_a_script_change(kit):
    """omni/kit/commands/__init__.py, CommandExt.on_startup's on_change: on each EXTENSION_EVENT_SCRIPT_CHANGED it
    registers Command and every subclass __subclasses__() reaches, with no other filter; the extension manager
    sends one when an extension starts or shuts down (seen with the real kernel 6.2), delivered on the next frame."""
    import omni.ext
    import omni.kit.commands

    manager = kit.app.get_extension_manager()
    assert manager.is_extension_enabled("omni.kit.commands")  # started by the (full) app, as in Isaac Sim

    class LingeringCommand(omni.kit.commands.Command):
        def do(self):
            return "still here"

    assert omni.kit.commands.get_command_class("Lingering") is None  # never registered by anyone
    manager.get_change_event_stream().push(omni.ext.EXTENSION_EVENT_FOLDER_CHANGED)
    kit.frames(1)
    assert omni.kit.commands.get_command_class("Lingering") is None  # another event type: nothing
    manager.get_change_event_stream().push(omni.ext.EXTENSION_EVENT_SCRIPT_CHANGED)
    assert omni.kit.commands.get_command_class("Lingering") is None  # pushed, not yet delivered
    kit.frames(1)
    assert omni.kit.commands.get_command_class("Lingering") is LingeringCommand
    assert omni.kit.commands.execute("Lingering") == (True, "still here")
    omni.kit.commands.unregister(LingeringCommand)


def test_an_empty_app_has_no_asyncio_loop_before_the_async_engine_starts_and_no_run_loop(tmp_path):
    """omni.kit.async_engine async_engine.py (_AsyncEngineDriver.on_startup sets the loop, run_coroutine needs it)
    and the real kernel 6.2's omni.app.empty.kit (no run loop unless --/app/runWithoutRunloop=true); run in a
    Kit of its own (tests/kit/kit_exec.py), as an app has one loop per process."""
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    script = tmp_path / "probe.py"
    script.write_text(
        "import asyncio, json, omni.kit.app\n"
        "app = omni.kit.app.get_app(); m = app.get_extension_manager()\n"
        "state = {'loop': app._loop is not None, 'engine': m.is_extension_enabled('omni.kit.async_engine'),\n"
        "         'run_loop': app._stub_has_run_loop()}\n"
        "m.set_extension_enabled_immediate('omni.kit.async_engine', True)\n"
        "from omni.kit.async_engine import run_coroutine\n"
        "async def later():\n"
        "    await app.next_update_async()\n"
        "    state.update(loop_after=app._loop is not None)\n"
        "    print('PROBE ' + json.dumps(state), flush=True); app.post_quit(5)\n"
        "run_coroutine(later())\n"
    )

    def run(*app_args):
        return subprocess.run(
            [sys.executable, str(here / "kit_exec.py"), "--stubs", str(here.parent / "kit_stubs"), *app_args]
            + ["--max-frames", "50", str(script)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    bare = run("--app", "empty")
    assert bare.returncode == 0 and "PROBE" not in bare.stdout  # the file ran, no frame followed: nothing printed
    assert "No run loop was found, quitting..." in bare.stderr
    proc = run("--app", "empty", "--/app/runWithoutRunloop=true")
    assert proc.returncode == 5, proc.stderr[-2000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE "))
    state = __import__("json").loads(line[6:])
    assert state == {"loop": False, "engine": False, "run_loop": True, "loop_after": True}


def test_undo_group_takes_no_argument_and_every_execution_is_in_the_history(kit, caplog):
    """omni/kit/undo/undo.py: ``group()`` (no parameters), ``begin_group`` adds a "Group" history entry; history.py:
    each execution (nested and failed ones included, error=True) is kept with its arguments, and an undo entry
    points at it by ``history_key``."""
    import inspect

    import omni.kit.commands
    import omni.kit.undo

    assert list(inspect.signature(omni.kit.undo.group).parameters) == []
    with pytest.raises(TypeError):
        with omni.kit.undo.group(remove_if_empty=True):
            pass
    _, count, fail = _command_classes()
    for cls in (count, fail):
        omni.kit.commands.register(cls)
    omni.kit.undo.clear_history()
    box = [0]
    with omni.kit.undo.group():
        omni.kit.commands.execute("Count", box=box, step=2)
    with caplog.at_level(logging.ERROR, logger="carb"):
        omni.kit.commands.execute("Fail", box=box)
    history = list(omni.kit.undo.get_history().values())
    assert [(h.name, h.level, h.error) for h in history] == [
        ("Group", 0, False),
        ("Count", 1, False),
        ("Fail", 0, True),
    ]
    assert history[1].kwargs == {"box": box, "step": 2}
    group_entry = omni.kit.undo.get_undo_stack()[0]
    assert omni.kit.undo.get_history()[group_entry.history_key].name == "Group"
    assert omni.kit.undo.undo() is True and box == [0]
    assert omni.kit.undo.redo() is True and box == [2]  # redone with the arguments the history kept
    for cls in (count, fail):
        omni.kit.commands.unregister(cls)
    omni.kit.undo.clear_stack()


def test_property_widgets_warn_on_a_slow_build_and_wait_while_collapsed(kit, robotiq_sample, caplog):
    """simple_property_widget.py ``_build_frame``: a ``build_items`` over 0.2 s logs "<class>.build_items took N
    seconds"; usd_property_widget.py ``_delayed_dirty_handler``: a value change refreshes the fields only once the
    section is expanded (up to 100 frames); omni.ui: changing ``collapsed`` calls the collapsed-changed fn."""
    import time

    import omni.kit.window.property
    from omni.kit.property.usd.usd_property_widget import UsdPropertiesWidget

    class Slow(UsdPropertiesWidget):
        def build_items(self):
            time.sleep(0.25)  # over the real widget's 0.2 s: the warning, whatever the machine
            super().build_items()

    window = omni.kit.window.property.get_window()
    widget = Slow("Slow", collapsed=False)
    window.register_widget("prim", "slow", widget)
    stage = kit.open(robotiq_sample)
    joint = "/Robotiq/Joints/finger_joint"
    with caplog.at_level(logging.WARNING, logger="carb"):
        kit.select(joint)
    assert any(r.getMessage().startswith("Slow.build_items took ") for r in caplog.records)
    widget._collapsable_frame.collapsed = True
    assert widget._collapsed is True
    field = widget._models[__import__("pxr").Sdf.Path(f"{joint}.physics:upperLimit")][0]
    stage.GetPrimAtPath(joint).GetAttribute("physics:upperLimit").Set(33.0)
    kit.frames(5)
    assert field.as_string != "33.0"  # collapsed: not refreshed
    widget._collapsable_frame.collapsed = False
    kit.frames(3)
    assert field.as_string == "33.0"
    window.unregister_widget("prim", "slow")
