"""PrimSpecSnapshot puts a layer back byte for byte (the basis of every command's undo)."""

from __future__ import annotations

from pxr import Sdf, Usd, UsdPhysics


def _stage():
    stage = Usd.Stage.CreateInMemory()
    UsdPhysics.RevoluteJoint.Define(stage, "/R/Joints/leader")
    joint = UsdPhysics.RevoluteJoint.Define(stage, "/R/Joints/follower")
    joint.CreateLowerLimitAttr(-10.0)
    stage.DefinePrim("/R/Joints/follower/child")
    return stage


def test_restore_gives_back_the_exact_layer_text():
    import mimic_ext.schema as schema
    from mimic_ext.kit.prim_snapshot import PrimSpecSnapshot

    stage = _stage()
    layer = stage.GetRootLayer()
    before = layer.ExportToString()
    snap = PrimSpecSnapshot.of_edit_target(stage, "/R/Joints/follower")
    schema.set_relation(stage, schema.MimicRelation("/R/Joints/follower", "/R/Joints/leader", 2.0, 0.1))
    stage.GetPrimAtPath("/R/Joints/follower").GetAttribute("physics:lowerLimit").Clear()
    assert layer.ExportToString() != before
    snap.restore()
    assert layer.ExportToString() == before
    assert stage.GetPrimAtPath("/R/Joints/follower").GetAppliedSchemas() == []


def test_restore_removes_specs_the_edit_created_on_another_layer():
    import mimic_ext.schema as schema
    from mimic_ext.kit.prim_snapshot import PrimSpecSnapshot

    stage = _stage()
    session = stage.GetSessionLayer()
    stage.SetEditTarget(Usd.EditTarget(session))
    before = session.ExportToString()
    snap = PrimSpecSnapshot.of_edit_target(stage, "/R/Joints/follower")
    schema.set_relation(stage, schema.MimicRelation("/R/Joints/follower", "/R/Joints/leader", 1.0, 0.0))
    assert session.GetPrimAtPath("/R/Joints/follower")
    snap.restore()
    assert session.ExportToString() == before
    assert not session.GetPrimAtPath("/R")
    assert stage.GetRootLayer().GetPrimAtPath("/R/Joints/follower")   # the root layer was never touched
    assert Sdf.Path("/R/Joints/follower") == snap.path
