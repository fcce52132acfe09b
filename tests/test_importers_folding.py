"""URDF links without mass on fixed joints are folded into their parent's body (frames), as
Isaac Sim's URDF importer merges fixed joints, and ``export`` writes them back as links.

Written as bodies of their own, each simulator gave them its default mass: PhysX 1 kg on each
of the Inspire hand's 9 g fingertips, and NVIDIA's FET022 mimic phase on the physx engine
failed 5 of its 6 pairs (docs/importers.md).

Tolerance: 1e-6 (absolute, metres; USD stores poses and joint frames as float32 where the
positions here are below 1 m).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from pxr import Usd, UsdGeom, UsdPhysics
from usd_frames import joint_world_frames

from mimic_ext.importers import export_urdf, import_robot

F32 = 1e-6

INERTIAL = '<inertial><mass value="0.5"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>'
ROBOT = f"""<?xml version="1.0"?>
<robot name="folding">
  <link name="base">{INERTIAL}</link>
  <link name="mount">
    <collision><origin xyz="0 0 0.02"/><geometry><box size="0.02 0.02 0.02"/></geometry></collision>
  </link>
  <link name="arm">{INERTIAL}</link>
  <link name="tip"/>
  <link name="weight">{INERTIAL}</link>
  <joint name="mount_joint" type="fixed">
    <parent link="base"/><child link="mount"/><origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/>
  </joint>
  <joint name="arm_joint" type="revolute">
    <parent link="mount"/><child link="arm"/><origin xyz="0 0.05 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="tip_joint" type="fixed">
    <parent link="arm"/><child link="tip"/><origin xyz="0.2 0 0"/>
  </joint>
  <joint name="weight_joint" type="fixed">
    <parent link="arm"/><child link="weight"/><origin xyz="0 0.3 0"/>
  </joint>
</robot>
"""


@pytest.fixture
def imported(tmp_path):
    path = tmp_path / "folding.urdf"
    path.write_text(ROBOT)
    return path, import_robot(path)


def _world(stage, path) -> np.ndarray:
    return np.array(UsdGeom.XformCache().GetLocalToWorldTransform(stage.GetPrimAtPath(path))).T


def test_massless_fixed_links_become_frames_of_their_parents_body(imported):
    _, result = imported
    stage = result.stage
    assert set(result.frame_paths) == {"mount", "tip"}
    assert result.frame_paths["mount"] == f"{result.body_paths['base']}/mount"
    assert result.frame_paths["tip"] == f"{result.body_paths['arm']}/tip"
    for path in result.frame_paths.values():
        assert not stage.GetPrimAtPath(path).HasAPI(UsdPhysics.RigidBodyAPI), path
    # the fixed joints to them are gone; a fixed joint to a link with mass stays
    assert {"mount_joint", "tip_joint"}.isdisjoint(result.joint_paths) and "weight_joint" in result.joint_paths
    assert "mount" not in result.massless_bodies
    (said,) = [w for w in result.warnings if "folded" in w]
    assert "2 link(s) without mass on a fixed joint" in said and "mount, tip" in said

    # the frames stand where the source puts the links: mount at (0.1, 0, 0) turned 90 deg about z,
    # tip 0.2 m along the arm's x, which is the world's y
    assert np.allclose(_world(stage, result.frame_paths["mount"])[:3, 3], [0.1, 0, 0], atol=F32)
    assert np.allclose(_world(stage, result.frame_paths["tip"])[:3, 3], [0.05, 0.2, 0], atol=F32)
    # the arm's joint hangs from the base's body, at the same world frame
    joint = stage.GetPrimAtPath(result.joint_paths["arm_joint"])
    assert [str(t) for t in UsdPhysics.Joint(joint).GetBody0Rel().GetTargets()] == [result.body_paths["base"]]
    f0, f1 = joint_world_frames(stage, joint)
    assert np.allclose(f0[:3, 3], [0.05, 0, 0], atol=F32) and np.allclose(f0, f1, atol=F32)
    # the mount's collider is the base body's shape now (under its prim, no body of its own between)
    colliders = [
        p for p in Usd.PrimRange(stage.GetPrimAtPath(result.frame_paths["mount"])) if p.HasAPI(UsdPhysics.CollisionAPI)
    ]
    assert len(colliders) == 1
    assert np.allclose(_world(stage, colliders[0].GetPath())[:3, 3], [0.1, 0, 0.02], atol=F32)


def test_export_writes_the_folded_links_back_on_their_fixed_joints(imported, tmp_path):
    source, result = imported
    text = export_urdf(result.stage, tmp_path / "back.urdf").text
    back = ET.fromstring(text)
    links = {el.get("name"): el for el in back.findall("link")}
    joints = {el.get("name"): el for el in back.findall("joint")}
    src = ET.fromstring(source.read_text())
    assert {el.get("name") for el in src.findall("link")} <= set(links)
    for name in ("mount_joint", "tip_joint"):
        el, want = joints[name], next(j for j in src.findall("joint") if j.get("name") == name)
        assert el.get("type") == "fixed"
        for end in ("parent", "child"):
            assert el.find(end).get("link") == want.find(end).get("link"), (name, end)
    # mount: the link frame is its own, so its origin is the source's; tip hangs from the arm link
    # (whose frame export may place on the joint axis: the revolute joint's origin in the arm)
    mount = joints["mount_joint"].find("origin")
    assert np.allclose([float(x) for x in mount.get("xyz").split()], [0.1, 0, 0], atol=F32)
    assert np.allclose([float(x) for x in mount.get("rpy").split()], [0, 0, np.pi / 2], atol=F32)
    tip = joints["tip_joint"].find("origin")
    assert np.allclose([float(x) for x in tip.get("xyz").split()], [0.2, 0, 0], atol=F32)
    # the mount's collision is written with its link, not with the base's
    assert links["mount"].find("collision") is not None and links["base"].find("collision") is None
    assert links["tip"].find("inertial") is None and links["mount"].find("inertial") is None
