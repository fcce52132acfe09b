"""The Mimic Joint section of the Property window, driven as a user would through the stand-in UI.

Numbers are compared exactly on purpose: every value typed here (-1, 2, 10, 25, 0.5, -3, 30) is exactly
representable in float32, the type USD stores these attributes in, so any difference is a real error.
"""

from __future__ import annotations

import logging

from robotiq_sample_paths import BODY, FOLLOWER, LEADER, OTHER


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
    assert kit.find("mimic.rotX.reference_axis", root).model.get_item_value_model().as_int == 0   # rotX
    assert _words(kit) == "follows finger_joint: q = 1.0 x q_ref + 0 deg"
    assert any(getattr(w, "text", "") == "Offset (deg)" for w in kit.walk(root))
    assert kit.find("mimic.add", root) is None
    assert kit.find("mimic.findings.none", root).text == "No problems found"


def test_typing_a_gearing_authors_it_and_one_undo_restores_it(kit, stage):
    layer = stage.GetRootLayer()
    before = layer.ExportToString()
    kit.select(FOLLOWER)
    kit.type_into(kit.find("mimic.rotX.gearing", kit.property_root()), 2.0)
    assert _gearing(stage) == 2.0                                  # PhysX convention, as typed
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
    assert (attr("physxMimicJoint:rotX:naturalFrequency").Get(), attr("physxMimicJoint:rotX:dampingRatio").Get()) \
        == (25.0, 0.5)
    kit.click(kit.find("mimic.rotX.flip", root()))
    assert _gearing(stage) == 1.0
    assert _words(kit).startswith("follows finger_joint: q = -1.0 x q_ref - 10 deg (compliant")
    kit.click(kit.find("mimic.rotX.pick_reference", root()))
    picker = kit.ui.Workspace.get_window("Pick reference joint")
    assert picker is not None and picker.visible
    kit.click(kit.find(f"mimic.picker.{OTHER}", picker.frame))
    assert [str(t) for t in stage.GetPrimAtPath(FOLLOWER).GetRelationship(
        "physxMimicJoint:rotX:referenceJoint").GetTargets()] == [OTHER]
    assert _words(kit).startswith("follows left_inner_finger_joint:")
    names = [e.name for e in kit.undo.get_undo_stack()]
    assert names == ["SetMimicOffset", "SetMimicCompliance", "SetMimicCompliance", "SetMimicGearing",
                     "SetMimicReferenceJoint"]
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
    assert kit.find("mimic.rotX.gearing", kit.property_root()).model.as_float == -1.0   # field shows the authored value


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
    assert kit.undo.undo() is True                               # undo the Remove
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


def test_shown_only_for_joints_and_not_rebuilt_for_unrelated_prims(kit, stage):
    import omni.kit.commands

    widget = kit.property.get_window()._stub_registered("prim")["mimic_joint"]
    kit.select(BODY)
    assert kit.find_prefix("mimic.", kit.property_root()) == []       # a rigid body, not a joint
    kit.select(FOLLOWER)
    builds = widget.build_count
    stage.GetPrimAtPath(BODY).GetAttribute("physics:mass").Set(0.5)    # unrelated prim
    stage.GetPrimAtPath("/Robotiq/Joints/base_joint").CreateAttribute("userNote", _string()).Set("x")
    kit.frames(6)
    assert widget.build_count == builds
    # A change to the selected joint from elsewhere (a script, another panel) refreshes it.
    assert omni.kit.commands.execute("SetMimicGearing", prim_path=FOLLOWER, gearing=-3.0)[0]
    kit.frames(4)
    assert widget.build_count == builds + 1
    assert _words(kit) == "follows finger_joint: q = 3.0 x q_ref + 0 deg"
    # So does a change to its reference joint.
    stage.GetPrimAtPath(LEADER).GetAttribute("physics:upperLimit").Set(30.0)
    kit.frames(4)
    assert widget.build_count == builds + 2


def _string():
    from pxr import Sdf

    return Sdf.ValueTypeNames.String


def test_two_instances_give_two_blocks_and_removing_one_fixes_the_finding(kit, extension, data_copy):
    stage = kit.open(data_copy("invalid/MIMIC_MULTIPLE_INSTANCES.usda"))
    kit.select("/Robot/Joints/follower")
    root = kit.property_root
    blocks = [w.identifier for w in kit.find_prefix("mimic.", root()) if w.identifier.endswith(".frame")]
    assert blocks == ["mimic.rotX.frame", "mimic.rotY.frame"]
    assert kit.find("mimic.finding.0", root()).text.startswith("error: MIMIC_MULTIPLE_INSTANCES:")
    kit.click(kit.find("mimic.rotY.remove", root()))
    assert stage.GetPrimAtPath("/Robot/Joints/follower").GetAppliedSchemas() == ["PhysxMimicJointAPI:rotX"]
    assert [w.identifier for w in kit.find_prefix("mimic.", root()) if w.identifier.endswith(".frame")] == \
        ["mimic.rotX.frame"]
    assert kit.find("mimic.findings.none", root()).text == "No problems found"
