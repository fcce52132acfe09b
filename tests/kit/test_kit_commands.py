"""Each mimic command: do, undo (the root layer's text is identical to before), redo; refused input changes nothing."""

from __future__ import annotations

import inspect
import logging
import math
import re

import pytest
from robotiq_sample_paths import BODY, FIXED, FOLLOWER, LEADER, OTHER


def _attr(stage, path, name):
    return stage.GetPrimAtPath(path).GetAttribute(f"physxMimicJoint:rotX:{name}").Get()


def _do_undo_redo(kit, stage, command, check_done, **kwargs):
    """Run ``command``; undo must restore the exact text, redo the exact edited text."""
    import omni.kit.commands

    layer = stage.GetRootLayer()
    before = layer.ExportToString()
    ok, _ = omni.kit.commands.execute(command, **kwargs)
    assert ok
    check_done()
    after = layer.ExportToString()
    assert after != before
    assert kit.undo.undo() is True
    assert layer.ExportToString() == before
    assert kit.undo.redo() is True
    assert layer.ExportToString() == after
    check_done()


def test_add_on_a_plain_joint_then_undo_restores_unauthored_state(kit, stage):
    import omni.kit.commands

    from mimic_ext.schema import read_joint_relations

    assert omni.kit.commands.execute("RemoveMimicJoint", prim_path=FOLLOWER)[0]
    kit.undo.clear_stack()

    def done():
        (rel,) = read_joint_relations(stage.GetPrimAtPath(FOLLOWER))
        assert (rel.leader, rel.instance, rel.authored["gearing"], rel.authored["offset"]) == (LEADER, "rotX", 2.0, 5.0)

    _do_undo_redo(
        kit, stage, "AddMimicJoint", done, prim_path=FOLLOWER, reference_joint_path=LEADER, gearing=2.0, offset=5.0
    )


def test_remove_then_undo_brings_back_the_authored_relation(kit, stage):
    def done():
        assert stage.GetPrimAtPath(FOLLOWER).GetAppliedSchemas() == []
        assert not stage.GetPrimAtPath(FOLLOWER).GetAttribute("physxMimicJoint:rotX:gearing")

    _do_undo_redo(kit, stage, "RemoveMimicJoint", done, prim_path=FOLLOWER, instance="rotX")


def test_set_gearing(kit, stage):
    _do_undo_redo(kit, stage, "SetMimicGearing", lambda: _check(stage, "gearing", 2.0), prim_path=FOLLOWER, gearing=2.0)


def test_set_offset(kit, stage):
    _do_undo_redo(kit, stage, "SetMimicOffset", lambda: _check(stage, "offset", 12.5), prim_path=FOLLOWER, offset=12.5)


def test_set_reference_joint(kit, stage):
    def done():
        rel = stage.GetPrimAtPath(FOLLOWER).GetRelationship("physxMimicJoint:rotX:referenceJoint")
        assert [str(t) for t in rel.GetTargets()] == [OTHER]

    _do_undo_redo(kit, stage, "SetMimicReferenceJoint", done, prim_path=FOLLOWER, reference_joint_path=OTHER)


def test_set_compliance(kit, stage):
    def done():
        _check(stage, "naturalFrequency", 30.0)
        _check(stage, "dampingRatio", 0.75)

    _do_undo_redo(
        kit, stage, "SetMimicCompliance", done, prim_path=FOLLOWER, natural_frequency=30.0, damping_ratio=0.75
    )


def test_undo_distinguishes_unauthored_from_authored_fallback(kit, robotiq_sample, extension, tmp_path):
    """A relation whose gearing is unauthored (fallback 1): undo must leave it unauthored, not = 1."""
    import omni.kit.commands
    from pxr import Usd

    stage = Usd.Stage.Open(str(robotiq_sample))
    stage.GetPrimAtPath(FOLLOWER).GetAttribute("physxMimicJoint:rotX:gearing").Clear()
    path = tmp_path / "fallback.usda"
    stage.GetRootLayer().Export(str(path))
    stage = kit.open(path)
    before = stage.GetRootLayer().ExportToString()
    assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=1.0)[0]
    assert stage.GetPrimAtPath(FOLLOWER).GetAttribute("physxMimicJoint:rotX:gearing").HasAuthoredValue()
    kit.undo.undo()
    assert not stage.GetPrimAtPath(FOLLOWER).GetAttribute("physxMimicJoint:rotX:gearing").HasAuthoredValue()
    assert stage.GetRootLayer().ExportToString() == before


def _check(stage, name, value):
    # float32 attributes: the typed values here are exactly representable, so equality is exact.
    assert _attr(stage, FOLLOWER, name) == value


REFUSED = [
    ("SetMimicGearing", {"prim_path": FOLLOWER, "gearing": 0.0}, "cannot be 0"),
    ("SetMimicGearing", {"prim_path": FOLLOWER, "gearing": math.inf}, "finite"),
    ("SetMimicGearing", {"prim_path": FOLLOWER, "gearing": math.nan}, "finite"),
    ("SetMimicOffset", {"prim_path": FOLLOWER, "offset": math.nan}, "finite"),
    ("SetMimicCompliance", {"prim_path": FOLLOWER, "natural_frequency": -1.0, "damping_ratio": 1.0}, ">= 0"),
    ("SetMimicCompliance", {"prim_path": FOLLOWER, "natural_frequency": 1.0, "damping_ratio": math.inf}, "finite"),
    ("SetMimicReferenceJoint", {"prim_path": FOLLOWER, "reference_joint_path": FOLLOWER}, "cannot follow itself"),
    ("SetMimicReferenceJoint", {"prim_path": FOLLOWER, "reference_joint_path": BODY}, "is not a joint"),
    ("SetMimicReferenceJoint", {"prim_path": FOLLOWER, "reference_joint_path": "/Nowhere"}, "no prim at"),
    ("SetMimicReferenceJoint", {"prim_path": FOLLOWER, "reference_joint_path": FIXED}, "cannot lead"),
    (
        "SetMimicReferenceJoint",
        {"prim_path": FOLLOWER, "reference_joint_path": LEADER, "reference_axis": "rotW"},
        "reference axis",
    ),
    ("SetMimicGearing", {"prim_path": FOLLOWER, "gearing": 2.0, "instance": "rotY"}, "no PhysxMimicJointAPI:rotY"),
    ("SetMimicGearing", {"prim_path": BODY, "gearing": 2.0}, "not a UsdPhysics joint"),
    ("AddMimicJoint", {"prim_path": FOLLOWER, "reference_joint_path": LEADER}, "already has"),
    ("AddMimicJoint", {"prim_path": LEADER, "reference_joint_path": LEADER}, "cannot follow itself"),
    ("AddMimicJoint", {"prim_path": LEADER, "reference_joint_path": OTHER, "gearing": 0}, "cannot be 0"),
    ("RemoveMimicJoint", {"prim_path": LEADER}, "no mimic relation"),
]


@pytest.mark.parametrize("command,kwargs,why", REFUSED, ids=[f"{c}-{w}" for c, _, w in REFUSED])
def test_refused_input_changes_nothing(kit, stage, caplog, command, kwargs, why):
    import omni.kit.commands

    layer = stage.GetRootLayer()
    before = layer.ExportToString()
    assert omni.kit.commands.execute("SetMimicOffset", prim_path=FOLLOWER, offset=1.0)[0]  # an earlier edit
    edited = layer.ExportToString()
    with caplog.at_level(logging.ERROR, logger="carb"):
        assert omni.kit.commands.execute(command, **kwargs) == (False, None)
    assert layer.ExportToString() == edited
    name = command
    assert any(r.getMessage().startswith(f"{name}: ") and why in r.getMessage() for r in caplog.records), [
        r.getMessage() for r in caplog.records
    ]
    # Nothing of the refused command stays on the undo stack: one undo undoes the earlier edit.
    assert [e.name for e in kit.undo.get_undo_stack()] == ["SetMimicOffset"]
    assert kit.undo.undo() is True
    assert layer.ExportToString() == before


def _physx_writes(prim, position=0.25):
    """What PhysX and the drive panel write on a joint while the user works on its mimic relation."""
    from pxr import Sdf, UsdPhysics

    UsdPhysics.DriveAPI.Apply(prim, "angular").CreateStiffnessAttr(500.0)
    prim.AddAppliedSchema("PhysicsJointStateAPI:angular")
    prim.CreateAttribute("state:angular:physics:position", Sdf.ValueTypeNames.Float).Set(position)


def test_undo_of_set_gearing_keeps_a_drive_stiffness_and_joint_state_written_after_it(kit, stage):
    import omni.kit.commands

    prim = stage.GetPrimAtPath(FOLLOWER)
    assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=2.0)[0]
    _physx_writes(prim)
    assert kit.undo.undo() is True
    assert _attr(stage, FOLLOWER, "gearing") == -1.0
    assert prim.GetAttribute("drive:angular:physics:stiffness").Get() == 500.0  # exact: authored as typed
    assert prim.GetAttribute("state:angular:physics:position").Get() == 0.25
    assert {"PhysicsDriveAPI:angular", "PhysicsJointStateAPI:angular", "PhysxMimicJointAPI:rotX"} <= set(
        prim.GetAppliedSchemas()
    )


def test_undo_of_add_takes_only_the_relation_away(kit, stage):
    import omni.kit.commands

    prim = stage.GetPrimAtPath(FOLLOWER)
    assert omni.kit.commands.execute("RemoveMimicJoint", prim_path=FOLLOWER)[0]
    kit.undo.clear_stack()
    assert omni.kit.commands.execute("AddMimicJoint", prim_path=FOLLOWER, reference_joint_path=LEADER)[0]
    _physx_writes(prim, position=3.0)
    assert kit.undo.undo() is True
    assert "PhysxMimicJointAPI:rotX" not in prim.GetAppliedSchemas()
    assert not [n for n in prim.GetPropertyNames() if n.startswith("physxMimicJoint")]
    assert prim.GetAttribute("state:angular:physics:position").Get() == 3.0
    assert {"PhysicsDriveAPI:angular", "PhysicsJointStateAPI:angular"} <= set(prim.GetAppliedSchemas())


def test_command_arguments_are_plain_values_with_args_help(kit, extension):
    import inspect

    from mimic_ext.kit.commands import COMMANDS

    plain = (str, int, float, type(None))
    for cls in COMMANDS:
        params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
        assert "stage" not in [p.name for p in params], cls
        assert params[0].name == "prim_path" and params[-1].name == "usd_context_name"
        for p in params:
            assert p.default is inspect.Parameter.empty or isinstance(p.default, plain), (cls, p)
        doc = inspect.getdoc(cls)
        assert "\nArgs:\n" in doc, cls  # the Commands window shows this section
        args = doc.split("\nArgs:\n", 1)[1]
        for p in params:
            assert f"    {p.name} (" in args, (cls, p.name)


def test_the_undo_stack_keeps_no_stage_alive(kit, extension, robotiq_sample):
    import gc
    import weakref

    import omni.kit.commands

    stage = kit.open(robotiq_sample)
    gone = weakref.ref(stage)
    identifier = stage.GetRootLayer().identifier
    del stage
    assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=2.0)[0]
    (entry,) = kit.undo.get_undo_stack()
    kwargs = kit.undo.get_history()[entry.history_key].kwargs  # Kit keeps a command's arguments in its history
    assert all(isinstance(v, (str, int, float, type(None))) for v in kwargs.values())
    kit.context.close_stage()
    kit.frames(2)
    gc.collect()
    from pxr import Sdf

    assert gone() is None and Sdf.Layer.Find(identifier) is None  # closed although its command is still on the stack
    assert kit.undo.get_undo_stack()[0] is entry


# ------------------------------------------------- one schema per follower (issue 31)


def _apis(stage, path):
    return [a for a in stage.GetPrimAtPath(path).GetAppliedSchemas() if "Mimic" in a]


def test_add_on_a_newton_follower_is_refused_and_adds_no_second_constraint(kit, extension, data_copy, caplog):
    """gripper_prismatic_newton.usda: finger2 follows finger1 through NewtonMimicAPI, which PhysX
    reads too. Add mimic joint used to put a PhysxMimicJointAPI beside it (two constraints, and the
    validator's MIMIC_CYCLE_GAIN); it is refused now, naming the relation there and the fix."""
    import omni.kit.commands

    from mimic_ext.schema import validate

    finger1, finger2 = "/Gripper/Joints/finger1_joint", "/Gripper/Joints/finger2_joint"
    stage = kit.open(data_copy("gripper_prismatic_newton.usda"))
    before = stage.GetRootLayer().ExportToString()
    with caplog.at_level(logging.ERROR):
        ok, _ = omni.kit.commands.execute(
            "AddMimicJoint", prim_path=finger2, reference_joint_path=finger1, gearing=-1.0
        )
    assert not ok
    assert stage.GetRootLayer().ExportToString() == before
    assert _apis(stage, finger2) == ["NewtonMimicAPI"]
    assert "already follows /Gripper/Joints/finger1_joint through NewtonMimicAPI" in caplog.text
    # inside Kit the fix is Kit's undoable command, not the CLI
    assert 'omni.kit.commands.execute("ConvertMimicSchema", prim_path="/Gripper/Joints/finger2_joint"' in caplog.text
    assert "mimic-ext" not in caplog.text
    assert validate(stage) == []


def test_convert_newton_to_physx_and_back_is_undoable(kit, extension, data_copy):
    from mimic_ext.schema import read_joint_relations

    finger2 = "/Gripper/Joints/finger2_joint"
    stage = kit.open(data_copy("gripper_prismatic_newton.usda"))

    def physx_only():
        (rel,) = read_joint_relations(stage.GetPrimAtPath(finger2))
        assert (rel.schema, rel.instance, rel.multiplier, rel.offset) == ("physx", "rotX", -1.0, 0.0)
        assert rel.authored["gearing"] == 1.0  # q_f + gearing q_ref = 0 with q_f = -q_ref
        assert not stage.GetPrimAtPath(finger2).GetAttribute("newton:mimicCoef1")

    _do_undo_redo(kit, stage, "ConvertMimicSchema", physx_only, prim_path=finger2, to_schema="physx")
    assert _apis(stage, finger2) == ["PhysxMimicJointAPI:rotX"]


def test_remove_duplicate_keeps_one_schema_and_undo_brings_the_other_back(kit, extension, data_copy):
    import omni.kit.commands

    follower = "/Robot/Joints/follower"
    stage = kit.open(data_copy("invalid/MIMIC_BOTH_SCHEMAS.usda"))

    def newton_only():
        assert _apis(stage, follower) == ["NewtonMimicAPI"]
        assert not stage.GetPrimAtPath(follower).GetAttribute("physxMimicJoint:rotX:gearing")

    _do_undo_redo(kit, stage, "RemoveMimicDuplicate", newton_only, prim_path=follower, keep="newton")
    assert kit.undo.undo() is True
    assert sorted(_apis(stage, follower)) == ["NewtonMimicAPI", "PhysxMimicJointAPI:rotX"]
    # without a duplicate there is nothing to remove: refused, nothing on the undo stack
    plain = kit.open(data_copy("gripper_prismatic_newton.usda"))
    text = plain.GetRootLayer().ExportToString()
    assert (
        omni.kit.commands.execute("RemoveMimicDuplicate", prim_path="/Gripper/Joints/finger2_joint", keep="physx")[0]
        is False
    )
    assert plain.GetRootLayer().ExportToString() == text


def _args_section_helps(cls) -> dict[str, str]:
    """Each parameter's whole help as written in the class docstring's ``Args:`` section: the text after
    the first "): " of its entry, continuation lines joined with one space."""
    doc = inspect.getdoc(cls)
    helps, current = {}, None
    for line in doc.split("\nArgs:\n", 1)[1].splitlines():
        entry = re.match(r"    (\w+) \([^)]*\): (.*)", line)
        if entry:
            current = entry.group(1)
            helps[current] = entry.group(2)
        elif line.startswith("        ") and current:
            helps[current] += " " + line.strip()
        else:
            current = None
    return helps


def test_kits_commands_window_shows_every_parameter_help_whole(kit, extension):
    """Kit's Commands window reads parameter help with ``_get_argument_doc`` (``omni/kit/commands/command.py``),
    whose greedy pattern keeps only the text after the last ": " of a line (the stand-in applies that pattern):
    every help must come through whole, so no help text may contain ": "."""
    import omni.kit.commands

    from mimic_ext.kit.commands import COMMANDS

    for cls in COMMANDS:
        written = _args_section_helps(cls)
        shown = {p.name: p.doc for p in omni.kit.commands.get_command_parameters(cls.__name__)}
        assert set(shown) == set(written), cls
        assert shown == written, cls.__name__


def test_only_the_commands_are_registered_and_shutdown_unregisters_every_one(kit):
    """Kit registers every Command subclass that ``dir()`` of a module finds (``register_all_commands_in_module``
    in ``omni/kit/commands/command.py``; the real Kit kernel also listed the private base that way): run it over
    every loaded module of ours, as any such scan would. Only the public commands (COMMANDS) may come of it, and none
    may stay registered once the extension is shut down."""
    import sys

    import omni.kit.commands

    from mimic_ext.kit import MimicExtension
    from mimic_ext.kit.commands import COMMANDS

    def ours():
        return {c for c in omni.kit.commands.get_commands_list() if c.__module__.startswith("mimic_ext")}

    ext = MimicExtension()
    ext.on_startup("mimic_ext-0.1.0")
    try:
        for name, module in list(sys.modules.items()):
            if name == "mimic_ext" or name.startswith("mimic_ext."):
                omni.kit.commands.register_all_commands_in_module(module)
        assert ours() == set(COMMANDS)
        assert all(issubclass(c, omni.kit.commands.Command) for c in COMMANDS)
    finally:
        ext.on_shutdown()
    assert ours() == set()


def test_a_usd_context_name_no_context_has_is_refused_in_one_line(kit, stage, caplog):
    """omni.usd.get_context(name) is None for a name no context has (typings5 omni/usd/_usd.pyi; NVIDIA's code
    calls create_context when it is): the command says so instead of failing on None; a created context works."""
    import omni.kit.commands
    import omni.usd

    assert omni.usd.get_context("no_such_context") is None
    with caplog.at_level(logging.ERROR, logger="carb"):
        ok = omni.kit.commands.execute(
            "SetMimicGearing", prim_path=FOLLOWER, gearing=2.0, usd_context_name="no_such_context"
        )
    assert ok == (False, None)
    assert _attr(stage, FOLLOWER, "gearing") == -1.0
    assert "SetMimicGearing: no USD context named 'no_such_context'" in caplog.text
    assert "AttributeError" not in caplog.text and not kit.undo.get_undo_stack()
    # a context that exists but has no stage open: the usual one-line refusal
    omni.usd.create_context("second")
    try:
        ok = omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=2.0, usd_context_name="second")
        assert ok == (False, None) and "no stage is open" in caplog.text
    finally:
        assert omni.usd.destroy_context("second") is True


def test_every_execution_is_in_kits_command_history_with_plain_arguments(kit, stage, caplog):
    """omni/kit/undo/history.py (add_history, change_history) via undo.py execute: every execution, a refused one
    included (error=True), is kept in the history with its arguments; redo re-runs with the history's arguments."""
    import omni.kit.commands

    kit.undo.clear_history()
    assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=2.0)[0]
    with caplog.at_level(logging.ERROR, logger="carb"):
        assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=0.0) == (False, None)
    entries = list(kit.undo.get_history().values())
    assert [(e.name, e.level, e.error) for e in entries] == [
        ("SetMimicGearing", 0, False),
        ("SetMimicGearing", 0, True),
    ]
    assert entries[0].kwargs == {"prim_path": FOLLOWER, "gearing": 2.0}
    for e in entries:
        assert all(isinstance(v, (str, int, float, type(None))) for v in e.kwargs.values())
    (undo_entry,) = kit.undo.get_undo_stack()
    assert kit.undo.get_history()[undo_entry.history_key].kwargs["gearing"] == 2.0
    assert kit.undo.undo() is True and _attr(stage, FOLLOWER, "gearing") == -1.0
    assert kit.undo.redo() is True and _attr(stage, FOLLOWER, "gearing") == 2.0
