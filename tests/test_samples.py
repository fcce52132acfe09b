"""data/: the generator is reproducible and every valid sample is a complete, simulation-ready stage."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
from pxr import Gf, Usd, UsdGeom, UsdPhysics

from mimic_ext.schema import joints, open_stage, read_relations

ROOT = Path(__file__).resolve().parents[1]
DEG = math.pi / 180

#: file -> {follower: (leader, multiplier, offset SI, schema)}, as data/README.md documents them
DOCUMENTED = {
    "gripper_prismatic.usda": {"/Gripper/Joints/finger2_joint": ("/Gripper/Joints/finger1_joint", -1.0, 0.0, "physx")},
    "gripper_prismatic_newton.usda": {
        "/Gripper/Joints/finger2_joint": ("/Gripper/Joints/finger1_joint", -1.0, 0.0, "newton")
    },
    "geared_pair.usda": {"/Gears/Joints/gear_follower": ("/Gears/Joints/gear_leader", 2.0, 0.1, "physx")},
    "chain3.usda": {
        "/Chain/Joints/joint_b": ("/Chain/Joints/joint_a", 0.5, 0.0, "physx"),
        "/Chain/Joints/joint_c": ("/Chain/Joints/joint_b", -1.5, 0.05, "physx"),
    },
    "robotiq_style_linkage.usda": {
        f"/Robotiq/Joints/{name}": ("/Robotiq/Joints/finger_joint", -gearing, 0.0, "physx")
        for name, gearing in (
            ("right_outer_knuckle_joint", -1),
            ("right_inner_finger_joint", -1),
            ("right_inner_finger_knuckle_joint", 1),
            ("left_inner_finger_knuckle_joint", 1),
            ("left_inner_finger_joint", 1),
        )
    },
    "rack_and_pinion.usda": {"/RackPinion/Joints/rack_joint": ("/RackPinion/Joints/pinion_joint", 0.02, 0.0, "physx")},
}
# USD stores these values as float32: ~6e-8 relative per value, so 1e-6 is a safe bound
TOL = 1e-6


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.usda")) if not p.name.startswith(".")
    }


def test_generator_reproduces_the_committed_files_byte_for_byte(data_dir, tmp_path):
    run = subprocess.run(
        [sys.executable, str(data_dir / "make_samples.py"), str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    committed, fresh = _files(data_dir), _files(tmp_path)
    assert sorted(fresh) == sorted(committed)
    changed = [name for name in committed if committed[name] != fresh[name]]
    assert changed == [], f"re-run `python data/make_samples.py`: {changed} differ"
    assert not list(tmp_path.rglob(".*"))  # no temporary left behind


def test_readme_lists_every_sample(data_dir):
    readme = (data_dir / "README.md").read_text()
    for name in _files(data_dir):
        assert Path(name).name in readme, name


def test_documented_valid_samples_exist(data_dir):
    present = {p.name for p in data_dir.glob("*.usda") if not p.name.startswith(".")}
    assert present == set(DOCUMENTED)


def _world(prim: Usd.Prim) -> Gf.Matrix4d:
    return UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default())


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_valid_sample_is_physically_complete(name, data_dir):
    stage = open_stage(data_dir / name).stage
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0 and UsdGeom.GetStageUpAxis(stage) == "Z"
    scenes = [p for p in stage.Traverse() if p.IsA(UsdPhysics.Scene)]
    assert len(scenes) == 1
    scene = UsdPhysics.Scene(scenes[0])
    assert tuple(scene.GetGravityDirectionAttr().Get()) == (0, 0, -1)
    assert scene.GetGravityMagnitudeAttr().Get() == pytest.approx(9.81, rel=TOL)  # float32 storage
    roots = [p for p in stage.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
    assert len(roots) == 1 and stage.GetDefaultPrim() == roots[0]

    bodies = [p for p in stage.Traverse() if p.HasAPI(UsdPhysics.RigidBodyAPI)]
    assert len(bodies) >= 3
    for body in bodies:
        mass = UsdPhysics.MassAPI(body)
        assert body.HasAPI(UsdPhysics.MassAPI), body.GetPath()
        assert mass.GetMassAttr().Get() > 0
        assert min(mass.GetDiagonalInertiaAttr().Get()) > 0
        assert mass.GetCenterOfMassAttr().Get() is not None and mass.GetPrincipalAxesAttr().Get() is not None
        shapes = [c for c in body.GetChildren() if c.HasAPI(UsdPhysics.CollisionAPI) and c.IsA(UsdGeom.Gprim)]
        assert shapes, f"{body.GetPath()} has no collision shape"

    relations = {r.follower: r for r in read_relations(stage)}
    leaders = {r.leader for r in relations.values()} - set(relations)  # driven joints (a chain's middle is not)
    world_fixed = 0
    for prim in stage.Traverse():
        kind = joints.joint_kind(prim)
        if kind is None:
            continue
        b0, b1 = joints.joint_bodies(prim)
        assert b1 and stage.GetPrimAtPath(b1).HasAPI(UsdPhysics.RigidBodyAPI)
        joint = UsdPhysics.Joint(prim)
        if b0 is None:
            assert kind == joints.FIXED
            world_fixed += 1
            anchor0 = Gf.Vec3d(joint.GetLocalPos0Attr().Get())
        else:
            anchor0 = _world(stage.GetPrimAtPath(b0)).Transform(Gf.Vec3d(joint.GetLocalPos0Attr().Get()))
        anchor1 = _world(stage.GetPrimAtPath(b1)).Transform(Gf.Vec3d(joint.GetLocalPos1Attr().Get()))
        # both bodies agree where the joint is: float32 positions of a few cm, so 1e-6 m
        assert (anchor0 - anchor1).GetLength() < TOL, prim.GetPath()
        assert joint.GetLocalRot0Attr().Get() == joint.GetLocalRot1Attr().Get()  # un-rotated bodies
        if kind in (joints.REVOLUTE, joints.PRISMATIC):
            limits = joints.limits_si(prim)
            assert limits is not None and limits[0] < limits[1], prim.GetPath()
            path = str(prim.GetPath())
            drive = "angular" if kind == joints.REVOLUTE else "linear"
            if path in leaders:
                api = UsdPhysics.DriveAPI(prim, drive)
                assert prim.HasAPI(UsdPhysics.DriveAPI, drive), f"leader {path} has no drive"
                assert api.GetStiffnessAttr().Get() > 0 and api.GetDampingAttr().Get() > 0
                assert api.GetMaxForceAttr().Get() > 0
            if path in relations:
                assert not prim.HasAPI(UsdPhysics.DriveAPI, drive), f"follower {path} has a drive"
    assert world_fixed == 1  # fixed base


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_relations_read_back_as_documented(name, data_dir):
    stage = open_stage(data_dir / name).stage
    got = {r.follower: r for r in read_relations(stage)}
    assert set(got) == set(DOCUMENTED[name])
    for follower, (leader, multiplier, offset, schema) in DOCUMENTED[name].items():
        rel = got[follower]
        assert (rel.leader, rel.schema, rel.compliant, rel.enabled) == (leader, schema, False, True)
        assert rel.multiplier == pytest.approx(multiplier, rel=TOL)
        assert rel.offset == pytest.approx(offset, rel=TOL, abs=TOL)
        if schema == "physx":
            assert rel.instance == "rotX"


def test_authored_values_follow_the_physx_convention(data_dir):
    geared = open_stage(data_dir / "geared_pair.usda").stage
    (rel,) = read_relations(geared)
    # q_f + gearing q_l + offset = 0 with the offset in degrees: -2 and -0.1 rad in degrees
    assert rel.authored["gearing"] == -2.0
    assert rel.authored["offset"] == pytest.approx(-0.1 / DEG, rel=TOL)
    rack = open_stage(data_dir / "rack_and_pinion.usda").stage
    (rel,) = read_relations(rack)
    assert rel.authored["gearing"] == pytest.approx(-0.02 * DEG, rel=TOL)  # metres per degree
    robotiq = open_stage(data_dir / "robotiq_style_linkage.usda").stage
    gearings = sorted(r.authored["gearing"] for r in read_relations(robotiq))
    assert gearings == [-1.0, -1.0, 1.0, 1.0, 1.0]
    for r in read_relations(robotiq):  # instance rotX on Z-axis joints, like the real asset
        assert r.instance == "rotX" and UsdPhysics.RevoluteJoint.Get(robotiq, r.follower).GetAxisAttr().Get() == "Z"


def test_leader_drive_gains_are_per_degree(data_dir):
    stage = open_stage(data_dir / "geared_pair.usda").stage
    drive = UsdPhysics.DriveAPI(stage.GetPrimAtPath("/Gears/Joints/gear_leader"), "angular")
    # 5 N.m/rad and 0.5 N.m.s/rad written per degree
    assert drive.GetStiffnessAttr().Get() == pytest.approx(5.0 * DEG, rel=TOL)
    assert drive.GetDampingAttr().Get() == pytest.approx(0.5 * DEG, rel=TOL)
