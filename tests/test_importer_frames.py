"""The URDF and MJCF importers' frames with general rotations, against MuJoCo's own compiler.

MuJoCo reads both formats; its body poses, joint axes and anchors and its principal inertia
at the reference configuration are an oracle that shares no code with ours. Every orientation
here is a general one (no quarter turns, no coordinate axes), in every spelling MJCF has
(quat, axisangle, euler in three sequences, xyaxes, zaxis) and URDF's rpy, so a transposed
rotation, a swapped composition or a flipped sign in the frame code changes a compared value
by far more than the tolerance.

Tolerance 1e-9: both sides compute in float64 from the same decimal text (MuJoCo stores its
model in float64 too); a few operations of rounding on unit quantities and lengths of order 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from mimic_ext.importers.mjcf import read_mjcf
from mimic_ext.importers.transforms import AXES, Transform
from mimic_ext.importers.urdf import read_urdf

mujoco = pytest.importorskip("mujoco")

TOL = 1e-9


def axis_angle(axis, angle: float) -> np.ndarray:
    """Rotation about ``axis`` by ``angle`` (rad) from MuJoCo's own quaternion code."""
    q, out = np.empty(4), np.empty(9)
    mujoco.mju_axisAngle2Quat(q, np.asarray(axis, float), angle)
    mujoco.mju_quat2Mat(out, q)
    return out.reshape(3, 3)


def _mjcf(eulerseq: str) -> str:
    return f"""<mujoco model="frames">
  <compiler angle="radian" eulerseq="{eulerseq}" inertiafromgeom="false"/>
  <worldbody>
    <body name="a" pos="0.1 -0.2 0.3" quat="0.8 0.3 -0.4 0.2">
      <joint name="ja" type="hinge" pos="0.05 0.02 -0.03" axis="0.3 0.9 -0.2" ref="0.3"/>
      <inertial pos="0.02 -0.01 0.04" quat="0.6 -0.3 0.5 0.4" mass="1.5" diaginertia="0.01 0.02 0.03"/>
      <body name="b" pos="0.2 0.1 -0.05" axisangle="1 -2 0.5 0.7">
        <joint name="jb" type="slide" pos="-0.01 0.03 0.02" axis="-0.5 0.2 0.8" ref="0.02"/>
        <inertial pos="-0.03 0.02 0.01" mass="0.7" fullinertia="0.004 0.006 0.005 0.001 -0.0005 0.0007"/>
        <frame pos="0.03 -0.02 0.01" quat="0.7 0.2 -0.5 0.4">
        <body name="c" pos="0.1 0.05 0.07" euler="0.4 -0.9 1.3">
          <joint name="jc" type="hinge" axis="0.6 -0.6 0.5"/>
          <inertial pos="0.01 0.01 -0.02" quat="0.2 0.9 0.1 -0.3" mass="0.4" diaginertia="0.002 0.003 0.004"/>
          <frame pos="0.02 0.01 0" axisangle="0.3 -1 0.4 0.6">
            <geom name="rod" type="capsule" size="0.01" fromto="0.01 -0.02 0.03 0.05 0.04 -0.02"/>
            <geom name="plate" type="box" size="0.02 0.01 0.005" pos="0.01 0 0.02" euler="0.3 0.2 -0.7"/>
            <frame pos="-0.01 0.02 0.01" euler="0.5 -0.2 0.9">
              <site name="mark" pos="0.01 0.02 0.03" quat="0.9 0.1 0.3 -0.2"/>
            </frame>
          </frame>
          <body name="d" pos="-0.04 0.08 0.02" xyaxes="0.3 0.8 -0.1 -0.9 0.2 0.4">
            <joint name="jd" type="hinge" pos="0.01 0 0" axis="1 0.2 0.3"/>
            <inertial pos="0 0.02 0" mass="0.3" diaginertia="0.001 0.002 0.0015"/>
            <body name="e" pos="0.05 -0.02 0.03" zaxis="-0.4 0.5 0.7">
              <frame pos="0.01 -0.01 0.02" euler="-0.3 0.8 0.2">
                <joint name="je" type="slide" axis="0.1 0.2 -0.9"/>
              </frame>
              <inertial pos="0.01 0 0.01" mass="0.2" diaginertia="0.0005 0.0006 0.0007"/>
              <site name="tip" pos="0.02 0.01 -0.03" euler="0.2 0.5 -0.4"/>
              <body name="f" pos="0.03 0.02 -0.04" quat="0.5 -0.6 0.3 0.4">
                <joint name="jf" type="ball" pos="0.01 0.02 0.005"/>
                <inertial pos="0 0 0.01" mass="0.1" diaginertia="0.0002 0.0003 0.0004"/>
              </body>
            </body>
          </body>
        </body>
        </frame>
      </body>
    </body>
    <site name="fixed_point" pos="0.3 0.1 0.2" axisangle="0.2 1 -0.3 0.8"/>
  </worldbody>
  <equality>
    <connect name="loop_ball" body1="e" body2="b" anchor="0.01 0.02 -0.01"/>
    <weld name="loop_weld" body1="d" body2="a" anchor="0.02 -0.01 0.03"/>
    <connect name="loop_sites" site1="tip" site2="fixed_point"/>
    <connect name="loop_mark" site1="mark" site2="tip"/>
  </equality>
</mujoco>
"""


URDF = """<robot name="frames">
  <link name="base">
    <inertial><origin xyz="0.01 0.02 -0.01" rpy="0.3 -0.2 0.9"/><mass value="2"/>
      <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0.002" ixz="-0.001" iyz="0.003"/></inertial>
  </link>
  <link name="l1">
    <inertial><origin xyz="-0.02 0.05 0.01" rpy="-0.7 0.4 0.25"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.012" izz="0.008" ixy="0.001" ixz="0.0005" iyz="-0.002"/></inertial>
  </link>
  <link name="l2">
    <inertial><origin xyz="0.03 -0.01 0.02" rpy="1.1 0.3 -0.6"/><mass value="0.5"/>
      <inertia ixx="0.004" iyy="0.005" izz="0.006" ixy="-0.0004" ixz="0.0003" iyz="0.0002"/></inertial>
  </link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0.1 -0.05 0.2" rpy="0.5 -0.3 1.2"/><axis xyz="0.2 0.7 -0.4"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <joint name="j2" type="prismatic">
    <parent link="l1"/><child link="l2"/>
    <origin xyz="0.05 0.15 -0.1" rpy="-0.8 0.6 0.35"/><axis xyz="-0.3 0.1 0.9"/>
    <limit lower="-0.1" upper="0.1" effort="10" velocity="1"/>
  </joint>
</robot>
"""


def _oracle(path):
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    return m, d


def _compare(model, m, d) -> None:
    for name, body in model.bodies.items():
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        if i < 0:
            continue  # the world link of a URDF: MuJoCo's world
        np.testing.assert_allclose(body.world.p, d.xpos[i], atol=TOL, err_msg=f"{name} position")
        np.testing.assert_allclose(body.world.R, d.xmat[i].reshape(3, 3), atol=TOL, err_msg=f"{name} rotation")
        if body.inertia is not None and m.body_mass[i] > 0:
            iq = np.empty(9)
            mujoco.mju_quat2Mat(iq, m.body_iquat[i])
            R = iq.reshape(3, 3)
            want = R @ np.diag(m.body_inertia[i]) @ R.T
            np.testing.assert_allclose(body.inertia.com, m.body_ipos[i], atol=TOL, err_msg=f"{name} COM")
            np.testing.assert_allclose(body.inertia.tensor, want, atol=TOL, err_msg=f"{name} inertia")
            assert body.inertia.mass == pytest.approx(m.body_mass[i], rel=TOL)
    for name, body in model.bodies.items():
        for geom in body.geoms:
            g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, geom.name)
            R = np.empty(9)
            mujoco.mju_quat2Mat(R, m.geom_quat[g])
            np.testing.assert_allclose(geom.pose.p, m.geom_pos[g], atol=TOL, err_msg=f"{geom.name} position")
            R = R.reshape(3, 3)
            if geom.shape in ("capsule", "cylinder"):  # symmetric about its axis, and end to end: the axis alone
                assert abs(geom.pose.R[:, 2] @ R[:, 2]) == pytest.approx(1.0, abs=TOL), geom.name
            else:
                np.testing.assert_allclose(geom.pose.R, R, atol=TOL, err_msg=f"{geom.name} rotation")
    for joint in model.joints:
        k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, joint.name)
        assert k >= 0, joint.name
        parent = model.bodies[joint.parent].world if joint.parent else None
        frame0 = parent * joint.frame0 if parent is not None else joint.frame0
        frame1 = model.bodies[joint.child].world * joint.frame1
        axis = AXES[joint.axis]
        if m.jnt_type[k] == mujoco.mjtJoint.mjJNT_BALL:  # a point: the anchor, frames aligned
            np.testing.assert_allclose(frame0.p, d.xanchor[k], atol=TOL, err_msg=f"{joint.name} anchor (parent side)")
            np.testing.assert_allclose(frame1.p, d.xanchor[k], atol=TOL, err_msg=f"{joint.name} anchor (child side)")
            np.testing.assert_allclose(frame0.R, frame1.R, atol=TOL, err_msg=f"{joint.name} frames")
            continue
        np.testing.assert_allclose(frame0.R @ axis, d.xaxis[k], atol=TOL, err_msg=f"{joint.name} axis (parent side)")
        np.testing.assert_allclose(frame1.R @ axis, d.xaxis[k], atol=TOL, err_msg=f"{joint.name} axis (child side)")
        # the file's pose is q = ref (MuJoCo's qpos0): the child's frame is the parent's moved by ref
        ref = m.qpos0[m.jnt_qposadr[k]]
        np.testing.assert_allclose(frame0.p, d.xanchor[k], atol=TOL, err_msg=f"{joint.name} anchor (parent side)")
        if m.jnt_type[k] == mujoco.mjtJoint.mjJNT_SLIDE:
            moved = Transform.make(frame0.p + d.xaxis[k] * ref, frame0.R)
        else:
            moved = Transform.make(frame0.p, frame0.R @ axis_angle(axis, ref))
        np.testing.assert_allclose(frame1.p, moved.p, atol=TOL, err_msg=f"{joint.name} anchor (child side)")
        np.testing.assert_allclose(frame1.R, moved.R, atol=TOL, err_msg=f"{joint.name} frames at q = ref")
    for closure in getattr(model, "closures", []):
        w0 = model.bodies[closure.body0].world * closure.frame0
        w1 = (model.bodies[closure.body1].world if closure.body1 else Transform.identity()) * closure.frame1
        e = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_EQUALITY, closure.name)
        if m.eq_objtype[e] == mujoco.mjtObj.mjOBJ_SITE:  # each end at its site (apart at the file's pose)
            np.testing.assert_allclose(w0.p, d.site_xpos[m.eq_obj1id[e]], atol=TOL, err_msg=f"{closure.name} site1")
            np.testing.assert_allclose(w1.p, d.site_xpos[m.eq_obj2id[e]], atol=TOL, err_msg=f"{closure.name} site2")
            continue
        # between bodies the loop is closed at the file's pose: both frames are one (a weld: rotation too)
        np.testing.assert_allclose(w0.p, w1.p, atol=TOL, err_msg=f"{closure.name} point")
        np.testing.assert_allclose(w0.R, w1.R, atol=TOL, err_msg=f"{closure.name} rotation")
        i = m.eq_obj1id[e]  # the anchor is in body1's frame (MuJoCo's eq_data[0:3])
        point = d.xpos[i] + d.xmat[i].reshape(3, 3) @ m.eq_data[e][:3]
        if closure.kind == "spherical":
            np.testing.assert_allclose(w0.p, point, atol=TOL, err_msg=f"{closure.name} anchor")


@pytest.mark.parametrize("eulerseq", ["xyz", "ZYX", "zxz"])
def test_mjcf_frames_match_mujoco(tmp_path, eulerseq):
    path = tmp_path / "frames.xml"
    path.write_text(_mjcf(eulerseq))
    model = read_mjcf(path)
    assert len(model.joints) == 6 and len(model.closures) == 4
    _compare(model, *_oracle(path))


def test_urdf_frames_match_mujoco(tmp_path):
    path = tmp_path / "frames.urdf"
    path.write_text(URDF)
    model = read_urdf(path)
    assert len(model.joints) == 2
    _compare(model, *_oracle(path))


GEOM_INERTIA = """<mujoco model="geoms">
  <compiler angle="radian" inertiafromgeom="true"/>
  <worldbody>
    <body name="a" pos="0.1 0.2 -0.1" euler="0.3 -0.5 0.8">
      <joint name="ja" type="hinge" axis="0.2 -0.4 0.9"/>
      <geom name="box" type="box" size="0.03 0.02 0.01" pos="0.05 -0.02 0.01" euler="0.4 0.9 -0.3" density="900"/>
      <geom name="rod" type="capsule" size="0.01" fromto="-0.02 0.01 0.03 0.04 0.05 -0.02" density="2000"/>
      <geom name="ball" type="sphere" size="0.015" pos="0.01 0.04 -0.03" mass="0.05"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_inertia_from_geoms_matches_mujoco(tmp_path):
    """A body's mass properties summed from rotated, offset geoms (parallel-axis shifts about the
    combined COM) equal MuJoCo's."""
    path = tmp_path / "geoms.xml"
    path.write_text(GEOM_INERTIA)
    model = read_mjcf(path)
    _compare(model, *_oracle(path))


@pytest.mark.parametrize("pitch", [np.pi / 2, -np.pi / 2])
def test_rpy_round_trip_at_the_singularity(pitch):
    """At pitch +-pi/2 roll and yaw turn about one axis: rot_to_rpy folds them into yaw, and the
    angles it returns give the same rotation back (rpy_to_rot is checked against MuJoCo above)."""
    from mimic_ext.importers.transforms import rot_to_rpy, rpy_to_rot

    R = rpy_to_rot([0.3, pitch, 0.7])
    rpy = rot_to_rpy(R)
    assert rpy[0] == 0.0 and rpy[1] == pytest.approx(pitch, abs=TOL)
    np.testing.assert_allclose(rpy_to_rot(rpy), R, atol=TOL)
