"""PrimEditUndo takes back exactly what one edit changed (the basis of every command's undo).

Follows Kit's omni.kit.usd_undo (layer_undo.py, UsdLayerUndo.reserve / undo): per property,
a property that was new is removed, one that existed is copied back. Values below are exact
floats (1.0, 2.0, 500.0, 0.25), so equality is exact.
"""

from __future__ import annotations

import gc
import weakref

from pxr import Sdf, Usd, UsdPhysics


def _stage():
    stage = Usd.Stage.CreateInMemory()
    UsdPhysics.RevoluteJoint.Define(stage, "/R/Joints/leader")
    joint = UsdPhysics.RevoluteJoint.Define(stage, "/R/Joints/follower")
    joint.CreateLowerLimitAttr(-10.0)
    stage.DefinePrim("/R/Joints/follower/child")
    return stage


def _write_joint_state_and_drive(prim):
    """What PhysX and another panel write on the follower while the user works."""
    drive = UsdPhysics.DriveAPI.Apply(prim, "angular")
    drive.CreateStiffnessAttr(500.0)
    prim.AddAppliedSchema("PhysicsJointStateAPI:angular")
    prim.CreateAttribute("state:angular:physics:position", Sdf.ValueTypeNames.Float).Set(0.25)


def test_undo_of_an_added_relation_keeps_what_was_written_after_it():
    import mimic_ext.schema as schema
    from mimic_ext.kit.edit_undo import PrimEditUndo

    stage = _stage()
    prim = stage.GetPrimAtPath("/R/Joints/follower")
    record = PrimEditUndo(stage, prim.GetPath())
    schema.set_relation(stage, schema.MimicRelation("/R/Joints/follower", "/R/Joints/leader", 2.0, 0.1))
    record.commit()
    assert record.touched_anything and all(n.startswith("physxMimicJoint:rotX:") for n in record.changed)
    _write_joint_state_and_drive(prim)
    record.undo()
    assert prim.GetAppliedSchemas() == ["PhysicsDriveAPI:angular", "PhysicsJointStateAPI:angular"]
    assert not [p for p in prim.GetPropertyNames() if p.startswith("physxMimicJoint")]
    assert prim.GetAttribute("drive:angular:physics:stiffness").Get() == 500.0
    assert prim.GetAttribute("state:angular:physics:position").Get() == 0.25
    assert prim.GetAttribute("physics:lowerLimit").Get() == -10.0


def test_undo_restores_a_changed_value_and_leaves_an_unauthored_one_unauthored():
    import mimic_ext.schema as schema
    from mimic_ext.kit.edit_undo import PrimEditUndo

    stage = _stage()
    schema.set_relation(stage, schema.MimicRelation("/R/Joints/follower", "/R/Joints/leader", 1.0, 0.0))
    prim = stage.GetPrimAtPath("/R/Joints/follower")
    prim.GetAttribute("physxMimicJoint:rotX:offset").Clear()  # unauthored: reads the fallback 0
    gearing = prim.GetAttribute("physxMimicJoint:rotX:gearing").Get()
    before = stage.GetRootLayer().ExportToString()
    record = PrimEditUndo(stage, prim.GetPath())
    prim.GetAttribute("physxMimicJoint:rotX:gearing").Set(2.0)
    prim.CreateAttribute("physxMimicJoint:rotX:offset", Sdf.ValueTypeNames.Float).Set(0.0)
    record.commit()
    assert record.changed == ["physxMimicJoint:rotX:gearing", "physxMimicJoint:rotX:offset"]
    record.undo()
    assert prim.GetAttribute("physxMimicJoint:rotX:gearing").Get() == gearing
    assert not prim.GetAttribute("physxMimicJoint:rotX:offset").HasAuthoredValue()
    assert stage.GetRootLayer().ExportToString() == before


def test_undo_removes_the_specs_the_edit_created_on_a_session_layer():
    import mimic_ext.schema as schema
    from mimic_ext.kit.edit_undo import PrimEditUndo

    stage = _stage()
    session = stage.GetSessionLayer()
    stage.SetEditTarget(Usd.EditTarget(session))
    before = session.ExportToString()
    record = PrimEditUndo(stage, "/R/Joints/follower")
    schema.set_relation(stage, schema.MimicRelation("/R/Joints/follower", "/R/Joints/leader", 1.0, 0.0))
    record.commit()
    assert session.GetPrimAtPath("/R/Joints/follower")
    record.undo()
    assert session.ExportToString() == before and not session.GetPrimAtPath("/R")
    assert stage.GetRootLayer().GetPrimAtPath("/R/Joints/follower")  # the root layer was never touched


def test_a_record_does_not_keep_a_closed_stage_or_its_layer_alive():
    from mimic_ext.kit.edit_undo import PrimEditUndo

    stage = _stage()
    identifier = stage.GetRootLayer().identifier
    record = PrimEditUndo(stage, "/R/Joints/follower")
    stage.GetPrimAtPath("/R/Joints/follower").CreateAttribute("x", Sdf.ValueTypeNames.Float).Set(1.0)
    record.commit()
    gone = weakref.ref(stage)
    del stage
    gc.collect()
    assert gone() is None and Sdf.Layer.Find(identifier) is None
    try:
        record.undo()
    except RuntimeError as exc:
        assert "is closed" in str(exc)
    else:
        raise AssertionError("undo on a closed layer must say so")
