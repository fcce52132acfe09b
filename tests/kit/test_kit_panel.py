"""The Mimic Joint section of the Property window, driven as a user would through the stand-in UI.

Numbers are compared exactly on purpose: every value typed here (-1, 2, 10, 25, 0.5, -3, 30) is exactly
representable in float32, the type USD stores these attributes in, so any difference is a real error.
"""

from __future__ import annotations

import logging

from robotiq_sample_paths import BODY, FIXED, FOLLOWER, LEADER, OTHER


def _gearing(stage, path=FOLLOWER):
    return stage.GetPrimAtPath(path).GetAttribute("physxMimicJoint:rotX:gearing").Get()


def _words(kit):
    label = kit.find("mimic.rotX.words", kit.property_root())
    return label.text if label else None


def test_selecting_a_follower_shows_one_block_per_instance_with_authored_values(kit, stage):
    kit.select(FOLLOWER)
    root = kit.property_root()
    blocks = [w.identifier for w in kit.find_prefix("mimic.", root) if w.identifier.endswith(".frame")]
    assert blocks == ["mimic.rotX.frame"]
    assert kit.find("mimic.rotX.gearing", root).model.as_float == -1.0
    assert kit.find("mimic.rotX.offset", root).model.as_float == 0.0
    assert kit.find("mimic.rotX.naturalFrequency", root).model.as_float == 0.0
    assert kit.find("mimic.rotX.dampingRatio", root).model.as_float == 0.0
    assert kit.find("mimic.rotX.reference_joint", root).model.as_string == LEADER
    assert kit.find("mimic.rotX.reference_axis", root).model.get_item_value_model().as_int == 0  # rotX
    assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"
    assert any(getattr(w, "text", "") == "Offset (deg)" for w in kit.walk(root))
    assert kit.find("mimic.add", root) is None
    assert kit.find("mimic.findings.none", root).text == "No problems found"


def test_typing_a_gearing_authors_it_and_one_undo_restores_it(kit, stage):
    layer = stage.GetRootLayer()
    before = layer.ExportToString()
    kit.select(FOLLOWER)
    kit.type_into(kit.find("mimic.rotX.gearing", kit.property_root()), 2.0)
    assert _gearing(stage) == 2.0  # PhysX convention, as typed
    assert _words(kit) == "follows finger_joint: q = -2.0 x q_ref + 0 deg"
    assert kit.find("mimic.rotX.gearing", kit.property_root()).model.as_float == 2.0
    assert [e.name for e in kit.undo.get_undo_stack()] == ["SetMimicGearing"]
    assert kit.undo.undo() is True
    kit.frames(4)
    assert _gearing(stage) == -1.0
    assert layer.ExportToString() == before
    assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"


def test_offset_compliance_flip_and_reference_picker_go_through_commands(kit, stage):
    kit.select(FOLLOWER)
    root = kit.property_root
    kit.type_into(kit.find("mimic.rotX.offset", root()), 10.0)
    assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref - 10 deg"
    kit.type_into(kit.find("mimic.rotX.naturalFrequency", root()), 25.0)
    kit.type_into(kit.find("mimic.rotX.dampingRatio", root()), 0.5)
    attr = stage.GetPrimAtPath(FOLLOWER).GetAttribute
    assert (attr("physxMimicJoint:rotX:naturalFrequency").Get(), attr("physxMimicJoint:rotX:dampingRatio").Get()) == (
        25.0,
        0.5,
    )
    kit.click(kit.find("mimic.rotX.flip", root()))
    assert _gearing(stage) == 1.0
    assert _words(kit).startswith("follows finger_joint: q = -1.0 x q_ref - 10 deg (compliant")
    kit.click(kit.find("mimic.rotX.pick_reference", root()))
    picker = kit.ui.Workspace.get_window("Pick reference joint")
    assert picker is not None and picker.visible
    kit.click(kit.find(f"mimic.picker.{OTHER}", picker.frame))
    assert [
        str(t)
        for t in stage.GetPrimAtPath(FOLLOWER).GetRelationship("physxMimicJoint:rotX:referenceJoint").GetTargets()
    ] == [OTHER]
    assert _words(kit).startswith("follows left_inner_finger_joint:")
    names = [e.name for e in kit.undo.get_undo_stack()]
    assert names == [
        "SetMimicOffset",
        "SetMimicCompliance",
        "SetMimicCompliance",
        "SetMimicGearing",
        "SetMimicReferenceJoint",
    ]
    for _ in names:
        assert kit.undo.undo() is True
    kit.frames(4)
    assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"


def test_a_refused_value_is_logged_and_changes_nothing(kit, stage, caplog):
    kit.select(FOLLOWER)
    with caplog.at_level(logging.ERROR, logger="carb"):
        kit.type_into(kit.find("mimic.rotX.gearing", kit.property_root()), 0.0)
    assert _gearing(stage) == -1.0
    assert len(kit.undo.get_undo_stack()) == 0
    assert [r.getMessage() for r in caplog.records if "gearing cannot be 0" in r.getMessage()]
    assert kit.find("mimic.rotX.gearing", kit.property_root()).model.as_float == -1.0  # field shows the authored value


def test_add_on_a_plain_joint_creates_a_valid_relation_and_remove_takes_it_away(kit, stage):
    import omni.kit.commands

    from mimic_ext.schema import read_joint_relations
    from mimic_ext.schema.validation import validate

    assert omni.kit.commands.execute("RemoveMimicJoint", prim_path=FOLLOWER)[0]
    kit.undo.clear_stack()
    kit.select(FOLLOWER)
    assert kit.find("mimic.rotX.frame", kit.property_root()) is None
    kit.click(kit.find("mimic.add", kit.property_root()))
    (rel,) = read_joint_relations(stage.GetPrimAtPath(FOLLOWER))
    assert (rel.leader, rel.instance, rel.authored["gearing"]) == (LEADER, "rotX", -1.0)
    assert [f for f in validate(stage) if f.severity in ("error", "warning")] == []
    assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"
    kit.click(kit.find("mimic.rotX.remove", kit.property_root()))
    assert read_joint_relations(stage.GetPrimAtPath(FOLLOWER)) == []
    assert kit.find("mimic.add", kit.property_root()) is not None
    assert kit.undo.undo() is True  # undo the Remove
    kit.frames(4)
    assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"


def test_findings_of_an_invalid_stage_appear(kit, extension, data_copy):
    from mimic_ext.schema import read_relations

    stage = kit.open(data_copy("invalid/MIMIC_ZERO_GEARING.usda"))
    follower = next(r.follower for r in read_relations(stage) if r.authored.get("gearing") == 0.0)
    kit.select(follower)
    texts = [w.text for w in kit.find_prefix("mimic.finding.", kit.property_root())]
    assert any(t.startswith("error: MIMIC_ZERO_GEARING:") for t in texts), texts
    assert kit.find("mimic.findings.none", kit.property_root()) is None


def _widget(kit):
    return kit.property.get_window()._stub_registered("prim")["mimic_joint"]


def test_shown_only_for_revolute_and_prismatic_joints(kit, stage):
    kit.select(BODY)
    assert kit.find_prefix("mimic.", kit.property_root()) == []  # a rigid body
    kit.select(FIXED)
    assert kit.find_prefix("mimic.", kit.property_root()) == []  # a fixed joint cannot follow
    kit.select(LEADER)  # a revolute joint without a relation
    assert kit.find("mimic.add", kit.property_root()) is not None


def test_fields_refresh_in_place_and_keep_focus_while_physx_writes_joint_state(kit, stage):
    """Typing in Gearing while PhysX writes joint state and a script sets the offset: nothing is rebuilt."""
    import omni.kit.commands
    from pxr import Gf, Sdf, UsdGeom

    widget = _widget(kit)
    kit.select(FOLLOWER)
    builds = widget.build_count
    root = kit.property_root()
    gearing, offset = kit.find("mimic.rotX.gearing", root), kit.find("mimic.rotX.offset", root)
    words = kit.find("mimic.rotX.words", root)
    gearing.model.begin_edit()
    gearing.model.set_value(2.5)  # typed, not committed yet
    follower = stage.GetPrimAtPath(FOLLOWER)
    follower.AddAppliedSchema("PhysicsJointStateAPI:angular")  # what PhysX writes while playing
    for step in range(3):
        follower.CreateAttribute("state:angular:physics:position", _float()).Set(float(step))
        kit.frames(1)
    UsdGeom.Xformable(stage.GetPrimAtPath("/Robotiq")).AddTranslateOp().Set(Gf.Vec3d(0, 0, 1))  # an ancestor
    assert omni.kit.commands.execute("SetMimicOffset", prim_path=FOLLOWER, offset=7.0)[0]  # a script
    stage.GetPrimAtPath(LEADER).GetAttribute("physics:upperLimit").Set(30.0)  # its reference
    kit.frames(4)
    assert widget.build_count == builds  # never rebuilt
    assert kit.find("mimic.rotX.gearing", root) is gearing and not gearing.destroyed  # same field: focus kept
    assert gearing.model.as_float == 2.5  # what the user is typing survives
    assert kit.find("mimic.rotX.offset", root) is offset and offset.model.as_float == 7.0  # refreshed in place
    assert kit.find("mimic.rotX.words", root) is words and words.text == "follows finger_joint: q = 1.0 x q_ref - 7 deg"
    gearing.model.end_edit()  # Enter
    kit.frames(4)
    assert _gearing(stage) == 2.5 and widget.build_count == builds
    # A new reference is watched from then on: its limits change the sentence's units, in place.
    assert omni.kit.commands.execute("SetMimicReferenceJoint", prim_path=FOLLOWER, reference_joint_path=OTHER)[0]
    kit.frames(4)
    assert words.text.startswith("follows left_inner_finger_joint:") and widget.build_count == builds
    assert widget._leaders == {Sdf.Path(OTHER)}
    # Gaining or losing a relation changes the section's layout: that one is rebuilt.
    assert omni.kit.commands.execute("RemoveMimicJoint", prim_path=FOLLOWER)[0]
    kit.frames(4)
    assert widget.build_count == builds + 1 and kit.find("mimic.add", kit.property_root()) is not None


def _float():
    from pxr import Sdf

    return Sdf.ValueTypeNames.Float


def test_the_section_stays_visible_while_searching_and_shows_the_matching_rows(kit, stage):
    """Kit's SimplePropertyWidget hides a section during a search unless build_items sets _any_item_visible."""
    widget = _widget(kit)
    window = kit.property.get_window()
    kit.select(FOLLOWER)
    window._stub_search("gear")
    kit.frames(4)
    root = kit.property_root()
    assert widget._collapsable_frame.visible
    assert kit.find("mimic.rotX.gearing", root) is not None
    assert kit.find("mimic.rotX.offset", root) is None and kit.find("mimic.findings", root) is None
    window._stub_search("damping")
    kit.frames(4)
    assert widget._collapsable_frame.visible and kit.find("mimic.rotX.dampingRatio", kit.property_root())
    window._stub_search("mimic")  # the title: everything
    kit.frames(4)
    assert kit.find("mimic.rotX.offset", kit.property_root()) and kit.find("mimic.findings", kit.property_root())
    window._stub_search("no such row")
    kit.frames(4)
    assert not widget._collapsable_frame.visible
    window._stub_search("")
    kit.frames(4)
    assert widget._collapsable_frame.visible and kit.find("mimic.rotX.offset", kit.property_root())


def test_with_physx_ui_the_section_adds_words_checks_and_sweep_but_no_second_set_of_fields(kit, stage):
    from mimic_ext.kit.property_widget import TITLE_ALONE, TITLE_WITH_PHYSX_UI

    manager = kit.app.get_extension_manager()
    manager._stub_enable("omni.physics.physx.ui-110.4.4")  # Isaac Sim 6's PhysX property UI
    try:
        widget = _widget(kit)
        kit.select(FOLLOWER)
        root = kit.property_root()
        assert widget._collapsable_frame.title == TITLE_WITH_PHYSX_UI != "Mimic Joint"
        for field in ("gearing", "offset", "naturalFrequency", "dampingRatio", "reference_joint", "reference_axis"):
            assert kit.find(f"mimic.rotX.{field}", root) is None, field
        assert kit.find("mimic.add", root) is None
        assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"
        assert kit.find("mimic.findings.none", root).text == "No problems found"
        assert kit.find("mimic.fet022.result", root).text.startswith("not swept yet")
        assert kit.find("mimic.sweep", root) is not None
    finally:
        manager._stub_disable("omni.physics.physx.ui-110.4.4")
    kit.select(LEADER)
    kit.select(FOLLOWER)
    assert _widget(kit)._collapsable_frame.title == TITLE_ALONE
    assert kit.find("mimic.rotX.gearing", kit.property_root()) is not None


def test_sweep_this_joint_sweeps_only_it_and_shows_the_result(kit, stage, tmp_path):
    import pytest

    pytest.importorskip("mimic_ext.solver", reason="the Warp solver is not in this tree yet")
    from mimic_ext.kit.extension import get_extension
    from mimic_ext.kit.stage_sweep import DONE, FAILED

    kit.select(FOLLOWER)
    kit.click(kit.find("mimic.sweep", kit.property_root()))
    runner = get_extension().runner
    # The first sweep in a process compiles Warp kernels (tens of seconds on 2 cores): allow many frames.
    kit.run_until(lambda: runner.status in (DONE, FAILED), max_frames=2_000_000)
    kit.frames(4)
    assert runner.status == DONE, runner.message
    assert [f.follower for f in runner.result.followers] == [FOLLOWER]
    text = kit.find("mimic.fet022.result", kit.property_root()).text
    # the default engine is the stage's own PhysX, and the line says which engine produced the result
    assert runner.result.engine.startswith("kit-physx (omni.physx "), runner.result.engine
    assert text.startswith(f"pass on {runner.result.engine}: measured ratio 1 (expected 1)"), text  # 4 digits of ~1


def test_two_instances_give_two_blocks_and_removing_one_fixes_the_finding(kit, extension, data_copy):
    stage = kit.open(data_copy("invalid/MIMIC_MULTIPLE_INSTANCES.usda"))
    kit.select("/Robot/Joints/follower")
    root = kit.property_root
    blocks = [w.identifier for w in kit.find_prefix("mimic.", root()) if w.identifier.endswith(".frame")]
    assert blocks == ["mimic.rotX.frame", "mimic.rotY.frame"]
    assert kit.find("mimic.finding.0", root()).text.startswith("error: MIMIC_MULTIPLE_INSTANCES:")
    kit.click(kit.find("mimic.rotY.remove", root()))
    assert stage.GetPrimAtPath("/Robot/Joints/follower").GetAppliedSchemas() == ["PhysxMimicJointAPI:rotX"]
    assert [w.identifier for w in kit.find_prefix("mimic.", root()) if w.identifier.endswith(".frame")] == [
        "mimic.rotX.frame"
    ]
    assert kit.find("mimic.findings.none", root()).text == "No problems found"


def test_a_refused_edit_never_reaches_kit_so_the_redo_history_stays(kit, extension, data_copy, caplog):
    """Kit drops the redo history for every top-level command it executes, a refused one too
    (``omni/kit/undo/undo.py`` ``_create_entry``; the stand-in does the same). Flip on a gearing of 0
    would be refused by SetMimicGearing: the section must refuse it itself, before ``execute``."""
    from mimic_ext.schema import read_relations

    stage = kit.open(data_copy("invalid/MIMIC_ZERO_GEARING.usda"))
    follower = next(r.follower for r in read_relations(stage) if r.authored.get("gearing") == 0.0)
    kit.select(follower)
    kit.type_into(kit.find("mimic.rotX.offset", kit.property_root()), 10.0)
    assert kit.undo.undo() is True
    kit.frames(4)
    redo = [e.name for e in kit.undo.get_redo_stack()]
    assert redo == ["SetMimicOffset"]
    with caplog.at_level(logging.ERROR, logger="carb"):
        kit.click(kit.find("mimic.rotX.flip", kit.property_root()))  # -0 is still a zero gearing
        kit.type_into(kit.find("mimic.rotX.gearing", kit.property_root()), 0.0)  # unchanged: nothing to do
    assert [e.name for e in kit.undo.get_redo_stack()] == redo and len(kit.undo.get_undo_stack()) == 0
    assert [
        r.getMessage()
        for r in caplog.records
        if r.getMessage().startswith("Mimic Joint: ") and "gearing cannot be 0" in r.getMessage()
    ]
    assert not [r for r in caplog.records if "Failed to execute" in r.getMessage()]
    assert kit.undo.redo() is True  # the offset edit comes back
    assert stage.GetPrimAtPath(follower).GetAttribute("physxMimicJoint:rotX:offset").Get() == 10.0


def test_joint_state_written_on_the_leader_is_refreshed_once_on_the_next_frame(kit, stage, monkeypatch):
    """PhysX writes the leader's joint state every step while playing; the notice handler must not refresh
    inside each notice but once on the next frame, as Kit's UsdPropertiesWidget batches its dirty paths
    (``_on_usd_changed`` -> ``_delayed_dirty_handler``, usd_property_widget.py)."""
    from pxr import Sdf

    widget = _widget(kit)
    kit.select(FOLLOWER)
    calls = []
    real = widget._refresh_values
    monkeypatch.setattr(widget, "_refresh_values", lambda *a, **k: (calls.append(1), real(*a, **k)))
    leader = stage.GetPrimAtPath(LEADER)
    leader.AddAppliedSchema("PhysicsJointStateAPI:angular")
    attr = leader.CreateAttribute("state:angular:physics:position", Sdf.ValueTypeNames.Float)
    for step in range(20):  # twenty PhysX steps within one frame
        attr.Set(float(step))
    assert calls == []  # nothing done inside the notices
    kit.frames(1)
    assert len(calls) == 1  # one refresh for the whole frame
    kit.frames(3)
    assert len(calls) == 1 and _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"


def test_on_a_newton_only_joint_add_is_off_and_names_kits_convert_command(kit, extension, data_copy):
    """gripper_prismatic_newton.usda: finger2 follows finger1 through NewtonMimicAPI only. AddMimicJoint would be
    refused there (PhysX reads both schemas: two constraints), so the button is disabled and says why, naming Kit's
    ConvertMimicSchema, never the CLI; the leader, which carries no relation, keeps a working Add."""
    finger1, finger2 = "/Gripper/Joints/finger1_joint", "/Gripper/Joints/finger2_joint"
    stage = kit.open(data_copy("gripper_prismatic_newton.usda"))
    before = stage.GetRootLayer().ExportToString()
    kit.undo.clear_stack()
    kit.select(finger2)
    root = kit.property_root()
    add = kit.find("mimic.add", root)
    assert add is not None and add.enabled is False
    why = kit.find("mimic.add.why", root).text
    assert "already follows /Gripper/Joints/finger1_joint through NewtonMimicAPI" in why
    assert f'omni.kit.commands.execute("ConvertMimicSchema", prim_path="{finger2}", to_schema="physx")' in why
    assert "mimic-ext" not in why and "mimic-ext" not in add.tooltip
    kit.click(add)  # a disabled button does nothing
    assert stage.GetRootLayer().ExportToString() == before and not kit.undo.can_undo()
    kit.select(finger1)
    add = kit.find("mimic.add", kit.property_root())
    assert add.enabled is True and kit.find("mimic.add.why", kit.property_root()) is None


def test_findings_inside_kit_name_kits_commands_never_the_cli(kit, extension, data_copy):
    """The validator's fixes for a joint carrying both schemas, as the section's Checks show them inside Kit."""
    from mimic_ext.schema.schema_choice import carried_schemas

    for sample, command in (
        ("invalid/MIMIC_BOTH_SCHEMAS.usda", "RemoveMimicDuplicate"),
        ("invalid/MIMIC_SCHEMAS_DISAGREE.usda", "RemoveMimicJoint"),
    ):
        stage = kit.open(data_copy(sample))
        follower = next(str(p.GetPath()) for p in stage.Traverse() if len(carried_schemas(p)) == 2)
        kit.select(follower)
        texts = [w.text for w in kit.find_prefix("mimic.finding.", kit.property_root())]
        assert any(f'omni.kit.commands.execute("{command}", prim_path="{follower}"' in t for t in texts), texts
        assert not any("mimic-ext" in t for t in texts), texts


def test_a_collapsed_section_refreshes_only_once_expanded(kit, stage):
    """Kit's UsdPropertiesWidget._delayed_dirty_handler (usd_property_widget.py): no refresh while the section is
    collapsed (up to 100 frames); the section does the same, so a collapsed section costs nothing while PhysX
    writes joint state, and shows the new values as soon as it is expanded."""
    import omni.kit.commands

    widget = _widget(kit)
    kit.select(FOLLOWER)
    offset = kit.find("mimic.rotX.offset", kit.property_root())
    refreshes, builds = widget.refresh_count, widget.build_count
    widget._collapsable_frame.collapsed = True  # the user clicks the section's header
    assert widget._collapsed is True
    assert omni.kit.commands.execute("SetMimicOffset", prim_path=FOLLOWER, offset=7.0)[0]
    kit.frames(5)
    assert widget.refresh_count == refreshes and offset.model.as_float == 0.0  # not refreshed while collapsed
    widget._collapsable_frame.collapsed = False
    kit.frames(3)
    assert widget.refresh_count == refreshes + 1 and offset.model.as_float == 7.0  # in place, once expanded
    assert widget.build_count == builds
