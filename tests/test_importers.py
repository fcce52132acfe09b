"""Importers on the real shared assets: relations, stage layout, validation, URDF round trip.

Tolerances used throughout:
- 1e-9 for ``ImportResult.relations``: they are computed in float64 straight from the file's
  decimal text (the expected JSON was extracted the same way, or by MuJoCo in float64).
- 1e-6 for anything read back from USD: gearing, offset, limits, positions, quaternions
  and mass properties are stored as 32-bit floats (relative precision 6e-8); 1e-6 leaves
  room for the degree <-> radian conversion and for composing a few such values.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from pxr import Usd, UsdGeom, UsdPhysics
from relation_sets import as_constraints
from shared_files import ASSETS, robot_files
from usd_frames import joint_world_frames

from mimic_ext.importers import export_urdf, import_robot
from mimic_ext.importers.model import FIXED
from mimic_ext.importers.urdf import read_urdf
from mimic_ext.importers.urdf_export import BOUND_INERTIA
from mimic_ext.schema import open_stage, read_relations

F32 = 1e-6
EXACT = 1e-9

# Files that are not in mimic_relations.json hold the relations of the file they include
# (scene.xml) or the same equality (mjx_hand.xml is hand.xml written for MJX).
SAME_AS = {
    "menagerie_robotiq_2f85/scene.xml": "menagerie_robotiq_2f85/2f85.xml",
    "menagerie_trossen_wx250s/scene.xml": "menagerie_trossen_wx250s/wx250s.xml",
    "menagerie_franka_hand/mjx_hand.xml": "menagerie_franka_hand/hand.xml",
}


ROBOT_FILES = robot_files()
URDF_FILES = [f for f in ROBOT_FILES if f.endswith(".urdf")]


@pytest.fixture(scope="module")
def expected() -> dict:
    if not ASSETS.is_dir():
        pytest.skip(f"shared assets not present at {ASSETS}")
    return json.loads((ASSETS / "mimic_relations.json").read_text())


def _expected_relations(expected: dict, rel_path: str) -> dict:
    key = SAME_AS.get(rel_path, rel_path)
    assert key in expected, f"{rel_path}: no expected relations (add it to SAME_AS or the JSON)"
    return {(r["follower"], r["leader"]): (r["multiplier"], r["offset"]) for r in expected[key]["relations"]}


def _by_name(result, relations) -> dict:
    name_of = {path: name for name, path in result.joint_paths.items()}
    return {(name_of[r.follower], name_of[r.leader]): (r.multiplier, r.offset) for r in relations}


def test_assets_found():
    if not ASSETS.is_dir():
        pytest.skip(f"shared assets not present at {ASSETS}")
    assert len(URDF_FILES) >= 6 and len(ROBOT_FILES) >= 12


@pytest.mark.parametrize("rel_path", ROBOT_FILES)
def test_asset_imports_with_expected_relations(rel_path, expected, tmp_path):
    want = _expected_relations(expected, rel_path)
    for schema in ("newton", "physx"):  # one schema per follower (newton: the default)
        out = tmp_path / f"robot_{schema}.usda"
        result = import_robot(ASSETS / rel_path, out=out, schema=schema)
        assert {r.schema for r in result.relations} == {schema}
        got = _by_name(result, result.relations)
        assert set(got) == set(want), schema
        for pair, (m, c) in want.items():
            # float64 from the file text on both sides
            assert got[pair][0] == pytest.approx(m, abs=EXACT), pair
            assert got[pair][1] == pytest.approx(c, abs=EXACT), pair

        # what the written file holds: float32 gearing/offset, so 1e-6
        back = read_relations(open_stage(out).stage)
        assert {r.schema for r in back} == {schema}
        got = _by_name(result, back)
        assert set(got) == set(want)
        for pair, (m, c) in want.items():
            assert got[pair][0] == pytest.approx(m, abs=F32)
            assert got[pair][1] == pytest.approx(c, abs=F32)


@pytest.mark.parametrize("rel_path", ROBOT_FILES)
def test_asset_stage_validates_without_errors(rel_path):
    validation = pytest.importorskip(
        "mimic_ext.schema.validation", reason="the validator (another helper's part) is not in the tree yet"
    )
    if not ASSETS.is_dir():
        pytest.skip("shared assets absent")
    for schema in ("physx", "newton"):
        result = import_robot(ASSETS / rel_path, schema=schema)
        errors = [f for f in validation.validate(result.stage) if f.severity == "error"]
        assert errors == [], [f"{f.code} {f.path}: {f.message}" for f in errors]


@pytest.mark.parametrize("rel_path", ROBOT_FILES)
def test_asset_stage_layout(rel_path):
    if not ASSETS.is_dir():
        pytest.skip("shared assets absent")
    result = import_robot(ASSETS / rel_path)
    stage = result.stage
    robot = stage.GetDefaultPrim()
    assert str(robot.GetPath()) == result.robot_path
    assert robot.HasAPI(UsdPhysics.ArticulationRootAPI)
    scene = UsdPhysics.Scene(stage.GetPrimAtPath("/PhysicsScene"))
    assert scene.GetGravityMagnitudeAttr().Get() == pytest.approx(9.81, rel=F32)
    assert tuple(scene.GetGravityDirectionAttr().Get()) == (0, 0, -1)
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    for name, path in result.joint_paths.items():
        prim = stage.GetPrimAtPath(path)
        assert prim.IsA(UsdPhysics.Joint), path
        assert prim.GetName() == name  # asset joint names are already identifiers
        if not path.startswith(result.robot_path + "/"):
            continue
        assert path.startswith(f"{result.robot_path}/Joints/"), path
    for path in result.body_paths.values():
        assert stage.GetPrimAtPath(path).HasAPI(UsdPhysics.RigidBodyAPI)
    # the joint frames agree with the body poses: frame1 differs from frame0 only along the DOF
    for path in result.joint_paths.values():
        _assert_frames_agree(stage, stage.GetPrimAtPath(path))
    # a fixed base: exactly one joint to the world in the robot (body1 only)
    to_world = [
        p
        for p in Usd.PrimRange(robot)
        if p.IsA(UsdPhysics.Joint) and not UsdPhysics.Joint(p).GetBody0Rel().GetTargets()
    ]
    assert len(to_world) == 1
    assert UsdPhysics.Joint(to_world[0]).GetBody1Rel().GetTargets()


@pytest.mark.parametrize("rel_path", ROBOT_FILES)
def test_urdf_articulation_links_do_not_collide_with_each_other_mjcf_keeps_its_own_rule(rel_path):
    """A URDF has no self-collision rule and its meshes overlap at the joints: like Isaac
    Sim's URDF importer, self-collision is off for PhysX and Newton. MJCF keeps MuJoCo's
    rule (contype/conaffinity, parent-child exclusion) through filtered pairs instead."""
    if not ASSETS.is_dir():
        pytest.skip("shared assets absent")
    result = import_robot(ASSETS / rel_path)
    roots = [p for p in result.stage.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
    assert roots
    for root in roots:
        physx = root.GetAttribute("physxArticulation:enabledSelfCollisions")
        newton = root.GetAttribute("newton:selfCollisionEnabled")
        if rel_path.endswith(".urdf"):
            assert {"PhysxArticulationAPI", "NewtonArticulationRootAPI"} <= set(root.GetAppliedSchemas())
            assert physx.Get() is False and newton.Get() is False, root.GetPath()
        else:
            assert not physx and not newton, root.GetPath()


def _assert_frames_agree(stage, prim) -> None:
    """world(body0) localFrame0 * motion(q) == world(body1) localFrame1 for some q (1e-6:
    float32 local frames)."""
    from mimic_ext.importers.transforms import AXES

    f0, f1 = joint_world_frames(stage, prim)
    rel = np.linalg.inv(f0) @ f1
    R, p = rel[:3, :3], rel[:3, 3]
    if prim.IsA(UsdPhysics.RevoluteJoint):
        axis = AXES[prim.GetAttribute("physics:axis").Get()]
        assert np.allclose(p, 0, atol=F32) and np.allclose(R @ axis, axis, atol=F32), prim.GetPath()
    elif prim.IsA(UsdPhysics.PrismaticJoint):
        axis = AXES[prim.GetAttribute("physics:axis").Get()]
        assert np.allclose(R, np.eye(3), atol=F32), prim.GetPath()
        assert np.allclose(p - (p @ axis) * axis, 0, atol=F32), prim.GetPath()
    elif prim.IsA(UsdPhysics.SphericalJoint):
        assert np.allclose(p, 0, atol=F32), prim.GetPath()
    else:
        assert np.allclose(rel, np.eye(4), atol=F32), prim.GetPath()


def test_massless_links_get_no_invented_mass():
    """robotiq_85.urdf has its <inertial> blocks commented out: warn once, author no mass."""
    path = ASSETS / "pybullet_ur5_robotiq/urdf/robotiq_85.urdf"
    if not path.exists():
        pytest.skip("shared assets absent")
    result = import_robot(path)
    stage = result.stage
    knuckle = stage.GetPrimAtPath(result.body_paths["left_outer_knuckle"])
    assert knuckle.HasAPI(UsdPhysics.RigidBodyAPI)
    assert not knuckle.HasAPI(UsdPhysics.MassAPI)
    base = UsdPhysics.MassAPI(stage.GetPrimAtPath(result.body_paths["robotiq_arg2f_base_link"]))
    assert base.GetMassAttr().Get() == pytest.approx(0.22652, rel=F32)
    massless = [w for w in result.warnings if "no <inertial>" in w]
    assert len(massless) == 1 and "left_outer_knuckle" in massless[0]
    unresolved = [w for w in result.warnings if "package://" in w]
    assert len(unresolved) == 1  # said once for all the unresolvable package:// meshes


def test_urdf_limits_axes_and_drives_in_usd_units():
    path = ASSETS / "pybullet_ur5_robotiq/urdf/robotiq_85.urdf"
    if not path.exists():
        pytest.skip("shared assets absent")
    result = import_robot(path)
    prim = result.stage.GetPrimAtPath(result.joint_paths["finger_joint"])
    joint = UsdPhysics.RevoluteJoint(prim)
    assert joint.GetAxisAttr().Get() == "X"
    assert joint.GetLowerLimitAttr().Get() == 0.0
    assert joint.GetUpperLimitAttr().Get() == pytest.approx(math.degrees(0.8), rel=F32)  # degrees
    drive = UsdPhysics.DriveAPI(prim, "angular")
    assert drive.GetMaxForceAttr().Get() == pytest.approx(1000.0)  # URDF effort
    # velocity limit 2 rad/s as PhysX's deg/s
    assert prim.GetAttribute("physxJoint:maxJointVelocity").Get() == pytest.approx(math.degrees(2.0), rel=F32)


def _origin(joint):
    return joint.frame0 * joint.frame1.inverse()


def _axis(joint):
    from mimic_ext.importers.transforms import AXES

    return joint.frame1.R @ AXES[joint.axis]


@pytest.mark.parametrize("rel_path", URDF_FILES)
def test_urdf_round_trip_keeps_relations_limits_axes_inertia(rel_path, tmp_path):
    """URDF -> USD (file) -> URDF: the same joints, frames, axes, limits, inertia, relations.

    Tolerance 1e-6 (absolute, SI; relative for masses and inertia): the USD in between
    stores float32.
    """
    src = ASSETS / rel_path
    usd = tmp_path / "robot.usda"
    import_robot(src, out=usd)
    out = tmp_path / "back.urdf"
    exported = export_urdf(open_stage(usd).stage, out)
    assert out.read_text() == exported.text
    a, b = read_urdf(src), read_urdf(out)

    assert {j.name for j in a.joints} == {j.name for j in b.joints}
    for ja in a.joints:
        jb = b.joint(ja.name)
        assert (ja.kind, ja.parent, ja.child) == (jb.kind, jb.parent, jb.child), ja.name
        oa, ob = _origin(ja), _origin(jb)
        assert np.allclose(oa.p, ob.p, atol=F32) and np.allclose(oa.R, ob.R, atol=F32), ja.name
        if ja.kind == FIXED:
            continue
        assert np.allclose(_axis(ja), _axis(jb), atol=F32), ja.name
        followers = {m.follower for m in a.mimics}
        for field in ("lower", "upper", "effort_limit", "velocity_limit", "damping", "friction"):
            va, vb = getattr(ja, field), getattr(jb, field)
            if field == "velocity_limit" and ja.name in followers:
                va = None  # a follower's velocity limit is not imported (docs/importers.md)
            assert (va is None) == (vb is None), (ja.name, field)
            if va is not None:
                assert vb == pytest.approx(va, abs=F32, rel=F32), (ja.name, field)

    assert set(a.bodies) == set(b.bodies)
    for name, ba in a.bodies.items():
        bb = b.bodies[name]
        assert (ba.inertia is None) == (bb.inertia is None), name
        if ba.inertia is None:
            continue
        assert bb.inertia.mass == pytest.approx(ba.inertia.mass, rel=F32)
        assert np.allclose(ba.inertia.com, bb.inertia.com, atol=F32)
        want = ba.inertia.tensor
        if ba.inertia.moments.min() <= 1e-12 * max(ba.inertia.moments.max(), 1e-300):
            # not positive definite in the source (a zero moment): exported with the zero
            # moments raised to BOUND_INERTIA (docs/importers.md), which MuJoCo requires
            want = ba.inertia.axes @ np.diag(np.maximum(ba.inertia.moments, BOUND_INERTIA)) @ ba.inertia.axes.T
        scale = np.abs(want).max()
        assert np.allclose(want, bb.inertia.tensor, atol=F32 * scale), name
        assert np.allclose(ba.world.p, bb.world.p, atol=F32), name

    ma = {m.follower: (m.leader, m.multiplier, m.offset) for m in a.mimics}
    mb = {m.follower: (m.leader, m.multiplier, m.offset) for m in b.mimics}
    assert set(ma) == set(mb)
    for follower, (leader, m, c) in ma.items():
        assert mb[follower][0] == leader
        assert mb[follower][1] == pytest.approx(m, abs=F32)
        assert mb[follower][2] == pytest.approx(c, abs=F32)


def test_round_trip_writes_the_shortest_float32_decimals(tmp_path):
    """The exported numbers are the file's own decimals (1.334, -0.04545), not float32 noise."""
    src = ASSETS / "dexurdf_inspire_hand_right/inspire_hand_right.urdf"
    if not src.exists():
        pytest.skip("shared assets absent")
    text = export_urdf(import_robot(src).stage).text
    assert 'multiplier="1.334"' in text
    assert 'multiplier="1.06399" offset="-0.04545"' in text
    assert 'lower="-0.04545" upper="1.56"' in text


def _usd_sources() -> list[Path]:
    root = Path(__file__).resolve().parents[1]
    found = sorted((root / "data").glob("*.usda"))
    if ASSETS.is_dir():
        found += sorted((ASSETS / "robotiq_isaacsim_usd_2f85").rglob("configuration/*.usda"))
        found += sorted((ASSETS / "robotiq_isaacsim_usd_2f85").rglob("*newton.usda"))
    return found


@pytest.mark.parametrize("path", _usd_sources(), ids=lambda p: p.name)
def test_usd_to_urdf_keeps_every_relation(path, tmp_path):
    """Any articulation (the real Robotiq USD, the project's samples) -> URDF -> the same
    relations by joint name as constraints (a chain is written onto its root, which
    Pinocchio needs: relation_sets), within 1e-6 (float32 in the USD)."""
    stage = open_stage(path).stage
    exported = export_urdf(stage, tmp_path / "robot.urdf")
    rels = [r for r in read_relations(stage) if r.enabled]
    want = {}
    for r in rels:  # one relation per follower in URDF; PhysX first, as the exporter chooses
        key = Path(r.follower).name
        if key not in want or r.schema == "physx":
            want[key] = (Path(r.leader).name, r.multiplier, r.offset)
    back = read_urdf(tmp_path / "robot.urdf")
    got = as_constraints({m.follower: (m.leader, m.multiplier, m.offset) for m in back.mimics})
    want = as_constraints(want)
    assert set(got) == set(want), exported.warnings
    for joint, (ref, m, c) in want.items():
        assert got[joint][0] == ref
        assert got[joint][1] == pytest.approx(m, abs=F32)
        assert got[joint][2] == pytest.approx(c, abs=F32)
