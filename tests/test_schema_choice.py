"""One mimic schema per follower (issue 31): which schema edits write, conversion, duplicate removal.

PhysX applies PhysxMimicJointAPI and NewtonMimicAPI on one joint as two constraints (measured in
test_fet022_engines_physx.py), so the commands never leave a follower with both.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mimic_ext.cli import main
from mimic_ext.errors import MimicInputError
from mimic_ext.schema import (
    MimicRelation,
    convert_relation,
    convert_stage,
    open_stage,
    read_joint_relations,
    read_relations,
    remove_duplicate,
    schema_for_edit,
    set_relation,
    validate,
)

DATA = Path(__file__).resolve().parents[1] / "data"
#: USD stores the relation as float32 (~6e-8 relative per value); a round trip PhysX -> SI ->
#: Newton converts twice, so 1e-6 relative (and absolute, for offsets near 0)
F32 = 1e-6


def _copy(tmp_path, name):
    dst = tmp_path / Path(name).name
    shutil.copyfile(DATA / name, dst)
    return dst


def _stage(tmp_path, name):
    return open_stage(_copy(tmp_path, name)).stage


def test_convert_physx_to_newton_and_back_keeps_the_relation(tmp_path):
    stage = _stage(tmp_path, "geared_pair.usda")  # gear_follower = 2 gear_leader + 0.1 rad
    follower = "/Gears/Joints/gear_follower"
    done = convert_relation(stage, follower, "newton")
    assert done.converted and [r.schema for r in done.removed] == ["physx"]
    (rel,) = read_joint_relations(stage.GetPrimAtPath(follower))
    assert rel.schema == "newton" and rel.leader == "/Gears/Joints/gear_leader"
    assert (rel.multiplier, rel.offset) == (pytest.approx(2.0, rel=F32), pytest.approx(0.1, rel=F32))
    assert rel.authored["newton:mimicCoef0"] == pytest.approx(5.729578, rel=F32)  # degrees
    assert not [a for a in stage.GetPrimAtPath(follower).GetAppliedSchemas() if a.startswith("PhysxMimic")]
    back = convert_relation(stage, follower, "physx")
    assert back.converted and back.kept.authored["gearing"] == pytest.approx(-2.0, rel=F32)
    assert back.kept.authored["offset"] == pytest.approx(-5.729578, rel=F32)
    assert validate(stage) == []
    # already in the target schema: nothing changes
    assert not convert_relation(stage, follower, "physx").changed


def test_convert_to_newton_composes_a_chain_onto_its_root(tmp_path):
    """Newton refuses a leader that is itself a follower; the importer composes such chains, and so
    does the conversion: joint_c = -1.5 joint_b + 0.05, joint_b = 0.5 joint_a -> joint_c = -0.75 joint_a + 0.05."""
    stage = _stage(tmp_path, "chain3.usda")
    convert_stage(stage, "newton")
    rels = {r.follower.rsplit("/", 1)[1]: r for r in read_relations(stage)}
    assert {r.schema for r in rels.values()} == {"newton"}
    c = rels["joint_c"]
    assert c.leader == "/Chain/Joints/joint_a"
    assert (c.multiplier, c.offset) == (pytest.approx(-0.75, rel=F32), pytest.approx(0.05, rel=F32))
    assert [f for f in validate(stage) if f.severity != "info"] == []


def test_conversions_the_target_cannot_say_are_refused_before_anything_is_written(tmp_path):
    rack = _stage(tmp_path, "rack_and_pinion.usda")  # revolute pinion leads a prismatic rack
    text = rack.GetRootLayer().ExportToString()
    with pytest.raises(MimicInputError, match=r"revolute and a prismatic joint.*keep it in PhysxMimicJointAPI"):
        convert_stage(rack, "newton")
    assert rack.GetRootLayer().ExportToString() == text
    gears = _stage(tmp_path, "geared_pair.usda")
    (rel,) = read_relations(gears)
    set_relation(gears, rel.replace(natural_frequency=10.0, damping_ratio=1.0))
    with pytest.raises(MimicInputError, match=r"compliant .* NewtonMimicAPI is always hard"):
        convert_relation(gears, rel.follower, "newton")
    disabled = _stage(tmp_path, "invalid/MIMIC_DISABLED.usda")
    (rel,) = read_relations(disabled)
    with pytest.raises(MimicInputError, match=r"disabled .* PhysxMimicJointAPI has no switch"):
        convert_relation(disabled, rel.follower, "physx")


def test_remove_duplicate_keeps_the_named_schema(tmp_path):
    stage = _stage(tmp_path, "invalid/MIMIC_SCHEMAS_DISAGREE.usda")  # physx: q = q_ref, newton: q = -q_ref
    follower = "/Robot/Joints/follower"
    assert [f.code for f in validate(stage) if f.severity == "error"] == ["MIMIC_SCHEMAS_DISAGREE"]
    done = remove_duplicate(stage, follower, keep="physx")
    assert [r.schema for r in done.removed] == ["newton"] and not done.converted
    (rel,) = read_joint_relations(stage.GetPrimAtPath(follower))
    assert (rel.schema, rel.multiplier) == ("physx", 1.0)
    assert validate(stage) == []
    with pytest.raises(MimicInputError, match="only PhysxMimicJointAPI: there is no duplicate"):
        remove_duplicate(stage, follower, keep="newton")


def test_an_edit_writes_the_schema_the_follower_carries(tmp_path):
    stage = _stage(tmp_path, "gripper_prismatic_newton.usda")
    prim = stage.GetPrimAtPath("/Gripper/Joints/finger2_joint")
    assert schema_for_edit(prim, None) == "newton" and schema_for_edit(prim, "newton") == "newton"
    with pytest.raises(
        MimicInputError,
        match="already follows /Gripper/Joints/finger1_joint through "
        r"NewtonMimicAPI.*applies each as its own constraint",
    ):
        schema_for_edit(prim, "physx")
    free = stage.GetPrimAtPath("/Gripper/Joints/finger1_joint")
    assert schema_for_edit(free, None) == "physx"


# ------------------------------------------------------------------ the command line


def test_cli_set_keeps_the_carried_schema_and_refuses_the_other(tmp_path, capsys):
    path = _copy(tmp_path, "gripper_prismatic_newton.usda")
    follower, leader = "/Gripper/Joints/finger2_joint", "/Gripper/Joints/finger1_joint"
    before = path.read_bytes()
    assert main(["set", str(path), follower, "--leader", leader, "--multiplier", "-1", "--schema", "physx"]) == 2
    err = capsys.readouterr().err
    assert "already follows" in err and "mimic-ext convert" in err and "nothing written" in err
    assert path.read_bytes() == before
    assert main(["set", str(path), follower, "--leader", leader, "--multiplier", "-0.5"]) == 0
    assert "NewtonMimicAPI: before coef0=0 coef1=-1" in capsys.readouterr().out
    (rel,) = read_relations(open_stage(path).stage)
    assert (rel.schema, rel.multiplier) == ("newton", pytest.approx(-0.5, rel=F32))


def test_cli_convert_and_duplicates_only(tmp_path, capsys):
    both = _copy(tmp_path, "invalid/MIMIC_BOTH_SCHEMAS.usda")
    assert main(["convert", str(both), "--to", "newton", "--duplicates-only"]) == 0
    out = capsys.readouterr().out
    assert "removed the duplicate /Robot/Joints/follower PhysxMimicJointAPI:rotX" in out and "same relation" in out
    assert [r.schema for r in read_relations(open_stage(both).stage)] == ["newton"]
    assert main(["validate", str(both)]) == 0
    capsys.readouterr()
    # the whole stage to PhysX, written elsewhere; the source is untouched
    src = _copy(tmp_path, "gripper_prismatic_newton.usda")
    before = src.read_bytes()
    out_path = tmp_path / "physx.usda"
    assert main(["convert", str(src), "--to", "physx", "-o", str(out_path)]) == 0
    assert (
        "converted /Gripper/Joints/finger2_joint: NewtonMimicAPI coef0=0 coef1=-1 -> "
        "PhysxMimicJointAPI:rotX gearing=1 offset=0" in capsys.readouterr().out
    )
    assert src.read_bytes() == before
    assert [r.schema for r in read_relations(open_stage(out_path).stage)] == ["physx"]
    # a refused conversion writes nothing and says why in one line
    rack = _copy(tmp_path, "rack_and_pinion.usda")
    before = rack.read_bytes()
    assert main(["convert", str(rack), "--to", "newton"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "revolute and a prismatic joint" in err
    assert rack.read_bytes() == before


def test_import_writes_one_schema_and_refuses_both(tmp_path, capsys):
    urdf = tmp_path / "r.urdf"
    urdf.write_text("""<robot name="r">
  <link name="l0"/><link name="l1"/><link name="l2"/>
  <joint name="j1" type="revolute"><parent link="l0"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l0"/><child link="l2"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j1" multiplier="0.5"/></joint>
</robot>""")
    out = tmp_path / "r.usda"
    assert main(["import", str(urdf), "-o", str(out)]) == 0
    assert "(newton)" in capsys.readouterr().out
    assert [r.schema for r in read_relations(open_stage(out).stage)] == ["newton"]
    with pytest.raises(SystemExit) as exc:  # a usage error, as argparse reports one (exit 2)
        main(["import", str(urdf), "-o", str(tmp_path / "b.usda"), "--schema", "both"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "'both' is no longer offered" in err and "two constraints" in err
    assert not (tmp_path / "b.usda").exists()


def test_library_set_relation_still_writes_what_it_is_asked(tmp_path):
    """The primitive is not the policy: tests and converters author both on purpose, and the
    validator then says so (MIMIC_BOTH_SCHEMAS)."""
    stage = _stage(tmp_path, "geared_pair.usda")
    (rel,) = read_relations(stage)
    set_relation(
        stage, MimicRelation(rel.follower, rel.leader, rel.multiplier, rel.offset, schema="newton", instance=None)
    )
    assert [f.code for f in validate(stage)] == ["MIMIC_BOTH_SCHEMAS"]
