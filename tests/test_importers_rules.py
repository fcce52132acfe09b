"""Importer rules on small hand-written files: conversion pitfalls, strict numbers, MJCF
semantics, safe XML, atomic output and the CLI.

Tolerances: 1e-9 on relations computed in float64 from the file text; 1e-6 on values
read back from USD, which stores them as float32 (relative precision 6e-8).
"""

from __future__ import annotations

import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, UsdGeom, UsdPhysics
from usd_frames import joint_world_frames

from mimic_ext.errors import MimicInputError
from mimic_ext.importers import export_urdf, import_robot
from mimic_ext.importers.usd_writer import PASSIVE_DAMPING_KEY
from mimic_ext.schema import read_relations, remove_relation, set_relation

F32 = 1e-6
EXACT = 1e-9


def urdf(tmp_path: Path, joints: str, name: str = "robot.urdf") -> Path:
    """A URDF with the given joint elements and a 1 kg link l0, l1.. for each one they name."""
    import re

    names = sorted(set(re.findall(r'link="(l\d)"', joints)) | {"l0"})
    body = "\n".join(
        f'  <link name="{n}"><inertial><mass value="1"/>'
        f'<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        for n in names
    )
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<robot name="bot">\n{body}\n{joints}\n</robot>\n')
    return path


def rev(name, parent, child, extra="", jtype="revolute", axis="0 0 1"):
    return (
        f'  <joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
        f'<axis xyz="{axis}"/><limit lower="-1" upper="1" effort="5" velocity="2"/>{extra}</joint>'
    )


def physx_attr(result, joint, name):
    prim = result.stage.GetPrimAtPath(result.joint_paths[joint])
    return prim.GetAttribute(f"physxMimicJoint:rotX:{name}").Get()


# ---------------------------------------------------------------- documented pitfalls


def test_urdf_offset_becomes_negated_degrees_in_physx(tmp_path):
    """A converter that copies the URDF offset into PhysX gets sign and unit wrong."""
    path = urdf(
        tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="2" offset="0.1"/>')
    )
    result = import_robot(path, schema="physx")
    assert physx_attr(result, "j2", "offset") == pytest.approx(-5.729578, abs=1e-5)  # -0.1 rad in degrees; float32
    assert physx_attr(result, "j2", "gearing") == pytest.approx(-2.0, abs=F32)
    rel = result.relations[0]
    assert (rel.multiplier, rel.offset) == (2.0, 0.1)


def test_prismatic_offset_stays_in_metres(tmp_path):
    path = urdf(
        tmp_path,
        rev("j1", "l0", "l1", jtype="prismatic")
        + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="-1" offset="0.01"/>', jtype="prismatic"),
    )
    result = import_robot(path, schema="physx")
    assert physx_attr(result, "j2", "offset") == pytest.approx(-0.01, abs=F32)
    assert physx_attr(result, "j2", "gearing") == pytest.approx(1.0, abs=F32)


def test_mixed_revolute_prismatic_multiplier_carries_degrees(tmp_path):
    """Follower prismatic (m), leader revolute: gearing is metres per degree."""
    path = urdf(
        tmp_path,
        rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="0.5"/>', jtype="prismatic"),
    )
    result = import_robot(path)
    assert physx_attr(result, "j2", "gearing") == pytest.approx(-0.5 * math.pi / 180, rel=F32)
    back = read_relations(result.stage)[0]
    assert back.multiplier == pytest.approx(0.5, rel=F32)


def test_urdf_defaults_multiplier_1_offset_0_and_newton(tmp_path):
    path = urdf(tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1"/>'))
    result = import_robot(path, schema="newton")
    rel = result.relations[0]
    assert (rel.schema, rel.multiplier, rel.offset) == ("newton", 1.0, 0.0)
    prim = result.stage.GetPrimAtPath(result.joint_paths["j2"])
    assert prim.GetAttribute("newton:mimicCoef1").Get() == 1.0


MJCF_REF = """<mujoco model="refs">
  <compiler angle="degree"/>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 1 0" range="-30 60" ref="10"/>
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="b" pos="0 0 1">
        <joint name="j2" type="hinge" axis="1 0 0" range="-45 45" ref="20"/>
        <geom type="sphere" size="0.1"/>
        <body name="c" pos="0 0 1">
          <joint name="j3" type="slide" axis="0 0 1" range="-0.1 0.2" ref="0.05"/>
          <geom type="capsule" size="0.05 0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="j1" joint2="j2" polycoef="0.1 2 0 0 0"/>
    <joint joint1="j3" joint2="j2" polycoef="0.02 0.5"/>
  </equality>
</mujoco>
"""


def _relations(result):
    name_of = {p: n for n, p in result.joint_paths.items()}
    return {name_of[r.follower]: (name_of[r.leader], r.multiplier, r.offset) for r in result.relations}


def test_mjcf_ref_shifts_the_offset_and_polycoef_is_not_converted(tmp_path):
    """q1 - ref1 = a0 + a1 (q2 - ref2): canonical offset a0 + ref1 - a1 ref2 (SI).

    compiler angle="degree" converts ref and range, never polycoef (MuJoCo reads a0 in
    radians whatever the angle unit; checked against mujoco in test_importers_mujoco).
    """
    path = tmp_path / "refs.xml"
    path.write_text(MJCF_REF)
    result = import_robot(path)
    rels = _relations(result)
    r10, r20 = math.radians(10), math.radians(20)
    assert rels["j1"][0] == "j2"
    assert rels["j1"][1] == pytest.approx(2.0, abs=EXACT)
    assert rels["j1"][2] == pytest.approx(0.1 + r10 - 2 * r20, abs=EXACT)
    assert rels["j3"][1] == pytest.approx(0.5, abs=EXACT)  # metres per radian
    assert rels["j3"][2] == pytest.approx(0.02 + 0.05 - 0.5 * r20, abs=EXACT)
    # limits are MuJoCo's range, in degrees, unshifted: USD's joint coordinate is MuJoCo's q
    j1 = UsdPhysics.RevoluteJoint(result.stage.GetPrimAtPath(result.joint_paths["j1"]))
    assert (j1.GetLowerLimitAttr().Get(), j1.GetUpperLimitAttr().Get()) == (-30.0, 60.0)


def _joint_coordinate(stage, path):
    """The joint's USD coordinate in the authored pose, from body poses and joint frames."""
    from mimic_ext.importers.transforms import AXES

    joint = UsdPhysics.Joint(stage.GetPrimAtPath(path))
    f0, f1 = joint_world_frames(stage, joint.GetPrim())
    rel = np.linalg.inv(f0) @ f1
    axis = AXES[joint.GetPrim().GetAttribute("physics:axis").Get()]
    if joint.GetPrim().IsA(UsdPhysics.PrismaticJoint):
        return float(rel[:3, 3] @ axis)
    R = rel[:3, :3]
    return math.atan2(
        float(axis @ np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])) / 2, (np.trace(R) - 1) / 2
    )


def test_mjcf_file_pose_is_at_q_equal_ref(tmp_path):
    """The bodies are placed as written, where MuJoCo's q = ref: USD reads q = ref there."""
    path = tmp_path / "refs.xml"
    path.write_text(MJCF_REF)
    result = import_robot(path)
    for name, ref in (("j1", math.radians(10)), ("j2", math.radians(20)), ("j3", 0.05)):
        assert _joint_coordinate(result.stage, result.joint_paths[name]) == pytest.approx(ref, abs=F32)
    from test_importers import _assert_frames_agree  # off-DOF consistency of the frames

    for path in result.joint_paths.values():
        _assert_frames_agree(result.stage, result.stage.GetPrimAtPath(path))


# ---------------------------------------------------------------- strict numbers and URDF errors


@pytest.mark.parametrize(
    "attrs",
    [
        'multiplier="2junk"',
        'offset=""',
        'multiplier="nan"',
        'offset="inf"',
        'multiplier="1e999"',
        'offset="0.1 0.2"',
        'multiplier="1_0"',
    ],
)
def test_mimic_value_must_be_one_finite_number(tmp_path, attrs):
    joints = rev("j1", "l0", "l1") + "\n" + rev("j2", "l1", "l2", f'\n    <mimic joint="j1" {attrs}/>')
    path = urdf(tmp_path, joints)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "<mimic" in t)
    with pytest.raises(MimicInputError) as err:
        import_robot(path)
    msg = str(err.value)
    assert f"{path}:{line}:" in msg and "'j2'" in msg and "finite number" in msg
    assert "\n" not in msg


def test_mimic_of_missing_joint_names_it(tmp_path):
    path = urdf(tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="nope"/>'))
    with pytest.raises(MimicInputError, match=r"robot.urdf:\d+: .*'nope', which does not exist"):
        import_robot(path)


def test_contradicting_cycle_is_an_error_consistent_one_a_warning(tmp_path):
    bad = urdf(
        tmp_path,
        rev("j1", "l0", "l1", '<mimic joint="j2" offset="0.1"/>')
        + rev("j2", "l1", "l2", '<mimic joint="j1" offset="0.1"/>'),
        name="bad.urdf",
    )
    with pytest.raises(MimicInputError, match="contradict"):
        import_robot(bad)
    ok = urdf(
        tmp_path,
        rev("j1", "l0", "l1", '<mimic joint="j2" multiplier="0.5" offset="0.05"/>')
        + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="2" offset="-0.1"/>'),
        name="ok.urdf",
    )
    result = import_robot(ok, schema="physx")
    assert len(result.relations) == 1
    assert any("redundant" in w for w in result.warnings)


def test_chain_stays_a_chain(tmp_path):
    path = urdf(
        tmp_path,
        rev("j1", "l0", "l1")
        + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="2"/>')
        + rev("j3", "l2", "l3", '<mimic joint="j2" multiplier="-1" offset="0.2"/>'),
    )
    result = import_robot(path, schema="physx")
    rels = _relations(result)
    assert rels == {"j2": ("j1", 2.0, 0.0), "j3": ("j2", -1.0, 0.2)}  # not flattened to j1
    validation = pytest.importorskip("mimic_ext.schema.validation")
    codes = {f.code for f in validation.validate(result.stage)}
    assert "MIMIC_CHAIN" in codes


def test_newton_relations_are_flattened_to_the_chain_root(tmp_path):
    """Newton refuses a leader that is itself a follower ("Reference joint .. is already a
    mimic joint"), so NewtonMimicAPI names the chain's root with the composed relation,
    while PhysxMimicJointAPI keeps the chain: j3 = -(2 j1) + 0.2 = -2 j1 + 0.2."""
    path = urdf(
        tmp_path,
        rev("j1", "l0", "l1")
        + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="2"/>')
        + rev("j3", "l2", "l3", '<mimic joint="j2" multiplier="-1" offset="0.2"/>'),
    )
    by_schema = {}
    for schema in ("newton", "physx"):
        result = import_robot(path, schema=schema)  # newton: the default
        name_of = {p: n for n, p in result.joint_paths.items()}
        by_schema.update(
            {(r.schema, name_of[r.follower]): (name_of[r.leader], r.multiplier, r.offset) for r in result.relations}
        )
    assert by_schema[("physx", "j3")] == ("j2", -1.0, 0.2)
    assert by_schema[("newton", "j3")] == ("j1", -2.0, 0.2)  # exact: float64 products of the file's numbers
    assert by_schema[("newton", "j2")] == by_schema[("physx", "j2")] == ("j1", 2.0, 0.0)
    newton = pytest.importorskip("newton", reason="the newton extra checks Newton reads the flattened relations")
    out = tmp_path / "chain.usda"
    import_robot(path, out=out)
    builder = newton.ModelBuilder()
    builder.add_usd(str(out))  # raises "already a mimic joint" on a chain
    coeffs = {
        builder.joint_label[f].rsplit("/", 1)[-1]: (builder.joint_label[l].rsplit("/", 1)[-1], tuple(c))
        for f, (l, c) in enumerate(zip(builder.joint_mimic_joint, builder.joint_mimic_coeffs))
        if l != -1
    }
    assert coeffs["j3"][0] == "j1"
    assert coeffs["j3"][1] == pytest.approx((0.2, -2.0), abs=F32)  # float32 in USD


@pytest.mark.parametrize(
    "joints, pattern",
    [
        (rev("j1", "l0", "l1", '<mimic joint="j1"/>'), "cannot follow itself"),
        (
            '<joint name="j1" type="fixed"><parent link="l0"/><child link="l1"/></joint>'
            + rev("j2", "l1", "l2", '<mimic joint="j1"/>'),
            "fixed joint",
        ),
        (rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="0"/>'), "multiplier 0"),
        (rev("j1", "l0", "l1", jtype="planar"), "planar joints are not supported"),
        (rev("j1", "l0", "l1") + rev("j2", "l0", "l1"), "child of two joints"),
        (rev("j1", "l0", "l1") + rev("j2", "l1", "missing"), "'missing', which does not exist"),
        (rev("j1", "l0", "l1", axis="0 0 0"), "zero <axis>"),
        (rev("j1", "l0", "l1", axis="0 0 x"), "finite numbers"),
    ],
)
def test_urdf_errors(tmp_path, joints, pattern):
    with pytest.raises(MimicInputError, match=pattern):
        import_robot(urdf(tmp_path, joints))


def test_spread_out_xml_parses_and_lines_point_at_the_element(tmp_path):
    text = """<?xml version="1.0"?>
<robot
    name="spread">
  <link
      name="a"/>
  <link name="b"/>
  <link name="c"/>
  <joint
      name="j1"
      type="continuous">
    <parent
        link="a"/>
    <child link="b"/>
    <axis
        xyz="0 1 0"/>
  </joint>
  <joint name="j2" type="continuous">
    <parent link="b"/>
    <child link="c"/>
    <mimic
        joint="j1"
        multiplier="-1"
        offset="0.5"/>
  </joint>
</robot>
"""
    path = tmp_path / "spread.urdf"
    path.write_text(text)
    result = import_robot(path)
    assert _relations(result) == {"j2": ("j1", -1.0, 0.5)}
    j1 = UsdPhysics.RevoluteJoint(result.stage.GetPrimAtPath(result.joint_paths["j1"]))
    assert j1.GetAxisAttr().Get() == "Y"
    assert not j1.GetLowerLimitAttr().HasAuthoredValue()  # continuous: unlimited (fallback -inf)
    path.write_text(text.replace('offset="0.5"', 'offset="0.5x"'))
    with pytest.raises(MimicInputError, match=r"spread.urdf:20:"):  # the line of '<mimic'
        import_robot(path)


# ---------------------------------------------------------------- safe XML and bad files


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("<robot name='x'><link name='a'></robot>", r"bad.urdf:1: malformed XML"),
        (
            '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n<robot name="&b;"/>',
            r"bad.urdf:2: entity declaration 'a' refused",
        ),
        (
            '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<robot name="&x;"/>',
            r"bad.urdf:2: entity declaration 'x' refused",
        ),
        ("<robot name='x'><link name='a'/>&undefined;</robot>", r"bad.urdf:1: malformed XML: undefined entity"),
        ("<sdf version='1.6'/>", r"neither a URDF <robot> nor an MJCF <mujoco>"),
        ("", r"bad.urdf:1: malformed XML"),
    ],
)
def test_bad_xml_is_one_clear_error(tmp_path, text, pattern):
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    with pytest.raises(MimicInputError, match=pattern) as err:
        import_robot(path)
    assert "\n" not in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(MimicInputError, match="no such file"):
        import_robot(tmp_path / "nope.urdf")


def test_failed_import_leaves_existing_output_untouched(tmp_path):
    out = tmp_path / "out.usda"
    out.write_text("keep me")
    bad = urdf(tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1" offset="x"/>'))
    with pytest.raises(MimicInputError):
        import_robot(bad, out=out)
    assert out.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.usda", "robot.urdf"]  # no temporaries left


# ---------------------------------------------------------------- MJCF semantics


def mjcf(tmp_path: Path, equality: str, defaults: str = "", name: str = "m.xml", extra: str = "") -> Path:
    path = tmp_path / name
    path.write_text(f"""<mujoco model="m">
  <compiler angle="radian"/>
  <default>{defaults}</default>
  <worldbody>
    <body name="a"><joint name="j1" range="-1 1"/><geom size="0.1"/>
      <body name="b" pos="0 0 1"><joint name="j2" range="-1 1"/><geom size="0.1"/>{extra}</body>
    </body>
  </worldbody>
  <equality>
    {equality}
  </equality>
</mujoco>
""")
    return path


@pytest.mark.parametrize(
    "equality, defaults",
    [
        ('<joint joint1="j2" joint2="j1" active="false"/>', ""),
        ('<joint class="off" joint1="j2" joint2="j1"/>', '<default class="off"><equality active="false"/></default>'),
        ('<joint joint1="j2" joint2="j1"/>', '<equality active="false"/>'),
    ],
)
def test_inactive_equality_is_not_loaded_with_a_warning(tmp_path, equality, defaults):
    result = import_robot(mjcf(tmp_path, equality, defaults))
    assert result.relations == []
    assert read_relations(result.stage) == []
    warned = [w for w in result.warnings if 'active="false"' in w]
    assert len(warned) == 1 and "not loaded" in warned[0] and "m.xml:" in warned[0]


@pytest.mark.parametrize(
    "equality, pattern",
    [
        ('<joint joint1="j2" joint2="j1" polycoef="0 1 0.5 0 0"/>', r"m.xml:\d+: equality joint .*higher-order"),
        ('<joint name="pin" joint1="j2"/>', r"m.xml:\d+: equality joint 'pin' .*no joint2"),
        ('<joint joint1="j2" joint2="nope"/>', r"'nope', which does not exist"),
        ('<joint joint1="j2" joint2="j1" polycoef="0 1 junk"/>', r"polycoef=\"0 1 junk\""),
    ],
)
def test_mjcf_equality_errors_name_the_equality(tmp_path, equality, pattern):
    with pytest.raises(MimicInputError, match=pattern):
        import_robot(mjcf(tmp_path, equality))


def test_tendons_are_listed_in_one_warning_connect_and_weld_become_closures(tmp_path):
    path = mjcf(
        tmp_path,
        '<joint joint1="j2" joint2="j1"/><connect name="loop" body1="a" body2="b" anchor="0 0 0"/>'
        '<weld body1="a" body2="b"/>',
    )
    text = path.read_text().replace(
        "</mujoco>", '<tendon><fixed name="split"><joint joint="j1" coef="1"/></fixed></tendon></mujoco>'
    )
    path.write_text(text)
    result = import_robot(path, schema="physx")
    listed = [w for w in result.warnings if "not imported (not mimic relations)" in w]
    assert len(listed) == 1
    assert "tendon fixed 'split'" in listed[0] and "connect" not in listed[0] and "weld" not in listed[0]
    assert len(result.relations) == 1
    closures = {
        p.GetName(): p
        for p in result.stage.Traverse()
        if p.IsA(UsdPhysics.Joint) and UsdPhysics.Joint(p).GetExcludeFromArticulationAttr().Get()
    }
    assert closures["loop"].IsA(UsdPhysics.SphericalJoint)
    assert [n for n in closures if n != "loop"] and all(
        closures[n].IsA(UsdPhysics.FixedJoint) for n in closures if n != "loop"
    )


def test_unsupported_element_is_an_error_with_its_line(tmp_path):
    path = mjcf(tmp_path, '<joint joint1="j2" joint2="j1"/>', extra='\n<composite type="grid" count="2 2 1"/>')
    with pytest.raises(MimicInputError, match=r"m.xml:7: <composite> is not supported"):
        import_robot(path)


def test_include_and_default_classes_resolve(tmp_path):
    (tmp_path / "parts.xml").write_text("""<mujoco>
  <default>
    <default class="finger"><joint type="slide" axis="0 1 0" range="0 0.04" damping="2"/></default>
  </default>
</mujoco>
""")
    (tmp_path / "main.xml").write_text("""<mujoco model="incl">
  <include file="parts.xml"/>
  <worldbody>
    <body name="hand"><inertial mass="1" pos="0 0 0" diaginertia="0.1 0.1 0.1"/>
      <body name="f1" childclass="finger"><joint name="s1"/><geom type="box" size="0.01 0.01 0.01"/></body>
      <body name="f2" childclass="finger"><joint name="s2" axis="0 -1 0"/><geom type="box" size="0.01 0.01 0.01"/></body>
    </body>
  </worldbody>
  <equality><joint joint1="s2" joint2="s1"/></equality>
</mujoco>
""")
    result = import_robot(tmp_path / "main.xml")
    stage = result.stage
    s1 = UsdPhysics.PrismaticJoint(stage.GetPrimAtPath(result.joint_paths["s1"]))
    assert s1.GetAxisAttr().Get() == "Y"
    assert s1.GetUpperLimitAttr().Get() == pytest.approx(0.04, abs=F32)
    drive = UsdPhysics.DriveAPI(s1.GetPrim(), "linear")
    # its own damping 2, follower s2's 2 carried through the 1:1 relation (1^2 * 2), and the default
    # gains' 2 z f m = 2 * 0.005 * 25 * 0.008 kg (a 2 cm box of density 1000): s1 leads, with no gains
    assert drive.GetDampingAttr().Get() == pytest.approx(2.0 + 2.0 + 0.25 * 0.008, abs=F32)
    assert s1.GetPrim().GetCustomDataByKey(PASSIVE_DAMPING_KEY) == 2.0  # what export writes back
    assert _relations(result) == {"s2": ("s1", 1.0, 0.0)}
    # box geom: mass from density 1000 (no <inertial>)
    mass = UsdPhysics.MassAPI(stage.GetPrimAtPath(result.body_paths["f1"])).GetMassAttr().Get()
    assert mass == pytest.approx(1000 * 0.02**3, rel=F32)


def test_free_joint_makes_a_floating_base(tmp_path):
    path = tmp_path / "float.xml"
    path.write_text("""<mujoco><worldbody><body name="base"><freejoint/><geom size="0.1"/>
      <body name="arm"><joint name="h"/><geom size="0.05" pos="0 0 0.2"/></body></body></worldbody></mujoco>""")
    result = import_robot(path)
    joints = [p for p in result.stage.Traverse() if p.IsA(UsdPhysics.Joint)]
    assert [p.GetName() for p in joints] == ["h"]  # no joint pins the base


# ---------------------------------------------------------------- meshes


def test_meshes_convert_when_a_mesh_library_is_present(tmp_path, monkeypatch):
    """The trimesh path, with a stand-in module (trimesh is an optional extra, absent here)."""
    calls = []

    def load(path, force=None):
        calls.append(Path(path).name)
        return types.SimpleNamespace(
            vertices=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]),
            faces=np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]),
        )

    monkeypatch.setitem(sys.modules, "trimesh", types.SimpleNamespace(load=load))
    (tmp_path / "part.stl").write_text("solid x\nendsolid x\n")
    path = tmp_path / "m.xml"
    path.write_text("""<mujoco><asset><mesh file="part.stl" scale="0.5 0.5 0.5"/></asset>
      <worldbody><body name="b"><inertial mass="1" pos="0 0 0" diaginertia="1 1 1"/>
      <geom type="mesh" mesh="part"/></body></worldbody></mujoco>""")
    result = import_robot(path)
    assert calls == ["part.stl"]
    meshes = [p for p in result.stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    assert len(meshes) == 1 and meshes[0].HasAPI(UsdPhysics.CollisionAPI)
    points = UsdGeom.Mesh(meshes[0]).GetPointsAttr().Get()
    assert points[1] == Gf.Vec3f(0.5, 0, 0)  # mesh scale applied
    assert not any("left out" in w for w in result.warnings)


def test_meshes_left_out_are_named_once(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "trimesh", None)  # import fails as when not installed
    (tmp_path / "a.stl").write_text("solid x\nendsolid x\n")
    (tmp_path / "b.stl").write_text("solid x\nendsolid x\n")
    path = tmp_path / "m.urdf"
    path.write_text("""<robot name="r"><link name="a"><visual><geometry><mesh filename="a.stl"/></geometry></visual>
      <collision><geometry><mesh filename="b.stl"/></geometry></collision></link></robot>""")
    result = import_robot(path)
    left = [w for w in result.warnings if "left out" in w]
    assert len(left) == 1 and "a.stl" in left[0] and "b.stl" in left[0]


# ---------------------------------------------------------------- export details


def test_export_reversed_joint_and_world_link(tmp_path):
    """A USD joint whose body0 is the child in the tree flips the axis, limits and relation."""
    path = urdf(
        tmp_path,
        '<link name="world"/>'
        '<joint name="fix" type="fixed"><parent link="world"/><child link="l0"/></joint>'
        + rev("j1", "l0", "l1")
        + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="2" offset="0.1"/>'),
    )
    result = import_robot(path)
    stage = result.stage
    j2 = UsdPhysics.Joint(stage.GetPrimAtPath(result.joint_paths["j2"]))
    b0, b1 = j2.GetBody0Rel().GetTargets(), j2.GetBody1Rel().GetTargets()
    j2.GetBody0Rel().SetTargets(b1)
    j2.GetBody1Rel().SetTargets(b0)
    p0, r0 = j2.GetLocalPos0Attr().Get(), j2.GetLocalRot0Attr().Get()
    j2.GetLocalPos0Attr().Set(j2.GetLocalPos1Attr().Get())
    j2.GetLocalRot0Attr().Set(j2.GetLocalRot1Attr().Get())
    j2.GetLocalPos1Attr().Set(p0)
    j2.GetLocalRot1Attr().Set(r0)
    out = tmp_path / "back.urdf"
    export_urdf(stage, out)
    from mimic_ext.importers.urdf import read_urdf

    back = read_urdf(out)
    j = back.joint("j2")
    assert (j.parent, j.child) == ("l1", "l2")
    assert (j.lower, j.upper) == (pytest.approx(-1, abs=F32), pytest.approx(1, abs=F32))
    from mimic_ext.importers.transforms import AXES

    assert np.allclose(j.frame1.R @ AXES[j.axis], [0, 0, -1], atol=F32)  # axis flipped with the joint
    m = back.mimics[0]
    assert (m.multiplier, m.offset) == (pytest.approx(-2, abs=F32), pytest.approx(-0.1, abs=F32))
    assert back.joint("fix").parent is None  # the world link came back


# ---------------------------------------------------------------- command line


def test_cli_import_and_export(tmp_path, capsys):
    from mimic_ext.cli import main

    src = urdf(tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="-1"/>'))
    out = tmp_path / "r.usda"
    assert main(["import", str(src), "-o", str(out)]) == 0
    assert out.exists() and "1 mimic relation(s) (newton)" in capsys.readouterr().out
    back = tmp_path / "r.urdf"
    assert main(["export", str(out), "-o", str(back)]) == 0
    assert '<mimic joint="j1" multiplier="-1" offset="0"/>' in back.read_text()


def test_cli_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys):
    from mimic_ext.cli import main

    src = urdf(tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="2junk"/>'))
    out = tmp_path / "r.usda"
    assert main(["import", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mimic-ext: error: ") and "robot.urdf:" in err[0]
    assert not out.exists()
    assert main(["export", str(tmp_path / "missing.usda"), "-o", str(tmp_path / "x.urdf")]) == 2
    assert not (tmp_path / "x.urdf").exists()


def test_names_that_are_not_prim_names_survive_the_round_trip(tmp_path):
    path = tmp_path / "names.urdf"
    path.write_text("""<robot name="my robot"><link name="base-link"/><link name="1st"/><link name="2nd"/>
      <joint name="joint-1" type="continuous"><parent link="base-link"/><child link="1st"/></joint>
      <joint name="joint 2" type="continuous"><parent link="1st"/><child link="2nd"/>
        <mimic joint="joint-1" multiplier="3"/></joint></robot>""")
    result = import_robot(path)
    assert result.joint_paths["joint-1"] == f"{result.robot_path}/Joints/joint_1"
    text = export_urdf(result.stage).text
    assert '<robot name="my robot">' in text and '<link name="base-link"/>' in text
    assert '<mimic joint="joint-1" multiplier="3" offset="0"/>' in text and 'name="joint 2"' in text


def test_a_link_named_joints_does_not_swallow_the_joints(tmp_path):
    path = tmp_path / "j.urdf"
    path.write_text("""<robot name="r"><link name="Joints"/><link name="b"/>
      <joint name="j" type="continuous"><parent link="Joints"/><child link="b"/></joint></robot>""")
    result = import_robot(path)
    assert result.body_paths["Joints"] == f"{result.robot_path}/Joints_1"
    assert result.joint_paths["j"] == f"{result.robot_path}/Joints/j"
    assert result.stage.GetPrimAtPath(f"{result.robot_path}/Joints").GetTypeName() == "Scope"


# ---------------------------------------------------------------- hardening (issue 15): one line, file and line


def _one_line(exc_info, file_name: str, line: int | None = None) -> str:
    message = str(exc_info.value)
    assert "\n" not in message
    where = f"{file_name}:{line}:" if line is not None else f"{file_name}"
    assert where in message, message
    return message


def test_second_mimic_on_one_joint_is_refused_with_its_line(tmp_path):
    path = urdf(
        tmp_path,
        rev("j1", "l0", "l1")
        + rev("j2", "l1", "l2")
        + rev("j3", "l2", "l3", '\n<mimic joint="j1"/>\n<mimic joint="j2"/>'),
    )
    with pytest.raises(MimicInputError, match="second <mimic>") as exc:
        import_robot(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if 'joint="j2"/>' in text)
    _one_line(exc, "robot.urdf", line)


@pytest.mark.parametrize("value", ["\u0661", "1\u0660", "\uff11", "1e39", "-1e39", "1e-50"])
def test_numbers_must_be_ascii_and_fit_float32(tmp_path, value):
    """An Arabic-Indic or full-width digit is not read as a number, and float32 (what USD
    stores) cannot hold 1e39 (inf) or 1e-50 (0): refused, not written as something else."""
    path = urdf(tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", f'<mimic joint="j1" multiplier="{value}"/>'))
    with pytest.raises(MimicInputError, match="not one complete finite number") as exc:
        import_robot(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "<mimic" in text)
    _one_line(exc, "robot.urdf", line)


def test_unknown_xml_encoding_is_one_line(tmp_path):
    path = tmp_path / "enc.urdf"
    path.write_bytes(b'<?xml version="1.0" encoding="no-such-codec"?>\n<robot name="r"><link name="a"/></robot>\n')
    with pytest.raises(MimicInputError, match="unknown XML encoding") as exc:
        import_robot(path)
    _one_line(exc, "enc.urdf", 1)


def test_nesting_deeper_than_mujoco_allows_is_refused(tmp_path):
    """MuJoCo's XML reader stops at 500 nested elements; so do we (a RecursionError before)."""
    depth = 600
    bodies = "".join(f'<body name="b{i}"><joint/><geom size="0.01"/>' for i in range(depth)) + "</body>" * depth
    path = tmp_path / "deep.xml"
    path.write_text(f"<mujoco>\n<worldbody>\n{bodies}\n</worldbody></mujoco>\n")
    with pytest.raises(MimicInputError, match="nested deeper than 500") as exc:
        import_robot(path)
    _one_line(exc, "deep.xml", 3)
    ok = "".join(f'<body name="b{i}"><joint name="j{i}"/><geom size="0.01"/>' for i in range(400)) + "</body>" * 400
    path.write_text(f"<mujoco><worldbody>{ok}</worldbody></mujoco>")
    assert len(import_robot(path).joint_paths) == 400  # deep but allowed: no recursion limit hit


@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("role", ["urdf", "mjcf", "include"])
def test_fifo_and_devices_are_refused_not_read(tmp_path, kind, role):
    """A FIFO would block the reader forever and /dev/zero never ends: refused before reading."""
    import os

    special = tmp_path / "special.xml"
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(special)
    else:
        if not Path("/dev/zero").exists():
            pytest.skip("no /dev/zero here")
        special = Path("/dev/zero")
    if role == "include":
        path = tmp_path / "main.xml"
        path.write_text(
            f'<mujoco><include file="{special}"/><worldbody><body><geom size="1"/></body></worldbody></mujoco>'
        )
    else:
        path = special
    with pytest.raises(MimicInputError, match="not a regular file") as exc:
        import_robot(path)
    _one_line(exc, special.name)


def test_dampratio_on_a_massless_tree_is_refused_with_the_actuator_line(tmp_path):
    """dampratio needs the mass the joint moves; a massless moving body makes M singular
    (LinAlgError before) and MuJoCo refuses such a model too."""
    path = tmp_path / "light.xml"
    path.write_text("""<mujoco>
  <worldbody><body name="a"><joint name="j"/><body name="b"><joint name="k"/><geom size="0.1"/></body></body></worldbody>
  <actuator>
    <position joint="j" kp="1" dampratio="1"/>
  </actuator>
</mujoco>""")
    with pytest.raises(MimicInputError, match="dampratio") as exc:
        import_robot(path)
    _one_line(exc, "light.xml", 4)


@pytest.mark.parametrize("gains", ['kp="-1"', 'kp="1" kv="-2"', 'kp="1" dampratio="-1"'])
def test_negative_servo_gains_are_refused(tmp_path, gains):
    path = tmp_path / "neg.xml"
    path.write_text(f"""<mujoco>
  <worldbody><body name="a"><joint name="j"/><geom size="0.1"/></body></worldbody>
  <actuator>
    <position joint="j" {gains}/>
  </actuator>
</mujoco>""")
    with pytest.raises(MimicInputError, match="< 0") as exc:
        import_robot(path)
    _one_line(exc, "neg.xml", 4)


def test_export_refuses_non_finite_values_naming_the_prim(tmp_path):
    """export wrote multiplier="nan", ixx="nan", mass="inf", which no URDF reader takes."""
    path = urdf(tmp_path, rev("j1", "l0", "l1") + rev("j2", "l1", "l2", '<mimic joint="j1" multiplier="2"/>'))
    for edit, pattern in [
        (
            lambda r: (
                r.stage.GetPrimAtPath(r.joint_paths["j2"])
                .GetAttribute("physxMimicJoint:rotX:gearing")
                .Set(float("nan"))
            ),
            "mimic multiplier",
        ),
        (
            lambda r: UsdPhysics.MassAPI(r.stage.GetPrimAtPath(r.body_paths["l1"])).GetMassAttr().Set(float("inf")),
            "physics:mass",
        ),
        (
            lambda r: (
                UsdPhysics.MassAPI(r.stage.GetPrimAtPath(r.body_paths["l2"]))
                .GetDiagonalInertiaAttr()
                .Set(Gf.Vec3f(float("nan"), 1, 1))
            ),
            "physics:diagonalInertia",
        ),
    ]:
        result = import_robot(path, schema="physx")
        edit(result)
        out = tmp_path / "out.urdf"
        with pytest.raises(MimicInputError, match=pattern) as exc:
            export_urdf(result.stage, out)
        assert "\n" not in str(exc.value) and "/bot/" in str(exc.value)
        assert not out.exists()  # nothing written


def test_every_invalid_sample_exports_to_a_urdf_import_accepts_or_is_refused():
    """data/invalid: 6 of the (then) 24 samples exported to URDF that import refused (nan, inf,
    multiplier 0, a fixed leader). Now each is refused with one line naming the prim, or
    written without what URDF cannot hold (and said in a warning)."""
    samples = sorted((Path(__file__).resolve().parents[1] / "data" / "invalid").glob("*.usda"))
    assert len(samples) >= 20
    refused = []
    for sample in samples:
        try:
            result = export_urdf(sample)
        except MimicInputError as exc:
            assert "\n" not in str(exc) and "/" in str(exc), sample.name
            refused.append(sample.name)
            continue
        text = result.text.lower()
        assert '"nan"' not in text and '"inf"' not in text and '"-inf"' not in text, sample.name
        out = Path(pytest.importorskip("tempfile").mkdtemp()) / "back.urdf"
        out.write_text(result.text)
        import_robot(out)  # raises if our own importer refuses what we wrote
    # nan gearing; a spherical joint; an infinite link mass
    assert set(refused) == {"MIMIC_NONFINITE.usda", "MIMIC_FOLLOWER_TYPE.usda", "MIMIC_BODY_MASS_NONFINITE.usda"}


def test_newton_joint_attributes_are_written_for_newton(tmp_path):
    """Newton ignores physxJoint:*; armature, friction and velocity limits are also written as
    NewtonJointAPI's newton:armature (SI), newton:friction (SI) and newton:velocityLimit
    (deg/s), the names newton-usd-schemas declares, and Newton reads them back."""
    path = urdf(tmp_path, rev("j1", "l0", "l1", '<dynamics damping="0.1" friction="0.3"/>'))
    text = path.read_text().replace('velocity="2"', 'velocity="2.5"')
    path.write_text(text)
    result = import_robot(path)
    prim = result.stage.GetPrimAtPath(result.joint_paths["j1"])
    assert "NewtonJointAPI" in prim.GetAppliedSchemas()
    assert prim.GetAttribute("newton:friction").Get() == pytest.approx(0.3, rel=F32)
    assert prim.GetAttribute("newton:velocityLimit").Get() == pytest.approx(math.degrees(2.5), rel=F32)
    # written whatever the mimic schema: ovphysx applies newton:armature where it ignores physxJoint:armature
    physx_only = import_robot(path, schema="physx")  # kept alive while its prim is read
    j1 = physx_only.stage.GetPrimAtPath(physx_only.joint_paths["j1"])
    assert "NewtonJointAPI" in j1.GetAppliedSchemas() and j1.GetAttribute("newton:friction").Get() == pytest.approx(
        0.3, rel=F32
    )
    assert not any(
        p.HasAPI("NewtonMimicAPI") or "NewtonMimicAPI" in p.GetAppliedSchemas() for p in physx_only.stage.Traverse()
    )
    mjcf_path = tmp_path / "arm.xml"
    mjcf_path.write_text(
        '<mujoco><worldbody><body><joint name="h" armature="0.02" frictionloss="0.4"/>'
        '<geom size="0.1"/></body></worldbody></mujoco>'
    )
    mj = import_robot(mjcf_path)
    h = mj.stage.GetPrimAtPath(mj.joint_paths["h"])
    assert h.GetAttribute("newton:armature").Get() == pytest.approx(0.02, rel=F32)
    newton = pytest.importorskip("newton", reason="the newton extra")
    out = tmp_path / "arm.usda"
    import_robot(mjcf_path, out=out)
    builder = newton.ModelBuilder()
    builder.add_usd(str(out))
    dof = builder.joint_qd_start[builder.joint_label.index(mj.joint_paths["h"])]
    assert builder.joint_armature[dof] == pytest.approx(0.02, rel=F32)
    assert builder.joint_friction[dof] == pytest.approx(0.4, rel=F32)
    out = tmp_path / "arm2.usda"
    import_robot(path, out=out)
    builder = newton.ModelBuilder()
    builder.add_usd(str(out))
    dof = builder.joint_qd_start[builder.joint_label.index(result.joint_paths["j1"])]
    assert builder.joint_velocity_limit[dof] == pytest.approx(2.5, rel=F32)  # rad/s from deg/s


TWO_JOINT_BODY = """<mujoco model="two_joint_body">
  <compiler angle="radian"/>
  <worldbody>
    <body name="base">
      <geom type="box" size="0.05 0.05 0.02"/>
      <body name="link" pos="0 0 0.1">
        <joint name="roll" axis="0 0 1" pos="-0.02 0 0" range="-0.5 0.5"/>
        <inertial pos="0.05 0 0" mass="0.1" diaginertia="1e-4 1e-4 1e-4"/>
        <joint name="pitch" axis="0 0 1" range="-1 1"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01"/>
      </body>
    </body>
  </worldbody>
  <equality><joint joint1="roll" joint2="pitch" polycoef="0 0.5"/></equality>
</mujoco>
"""


def test_mjcf_body_with_two_joints_and_a_same_body_relation_imports_and_sweeps(tmp_path):
    """Refused before ("bodies with several joints are not supported"): now each joint is its
    own prim on a massless chain link, and the FET022 sweep of the stage passes, measuring
    the relation's 0.5 in each schema (ratio tolerance: the sweep's configured 10%; the
    solver keeps relations exact, so the measured ratio is 0.5 to round-off)."""
    from mimic_ext import fet022

    path = tmp_path / "two.xml"
    path.write_text(TWO_JOINT_BODY)
    for schema in ("newton", "physx"):
        result = import_robot(path, schema=schema)
        assert set(result.joint_paths) == {"roll", "pitch"}
        sweep = fet022.run(result.stage)
        assert sweep.status == "pass", (sweep.reason, sweep.details)
        assert {f.schema for f in sweep.followers} == {schema}
        for follower in sweep.followers:
            assert follower.status == "pass"
            assert follower.measured_ratio == pytest.approx(0.5, abs=1e-6)


def test_hinge_following_a_slide_is_dimensionless_for_newton_and_imported_for_physx(tmp_path):
    """polycoef 10 between a hinge follower and a slide leader (the Stretch gripper): PhysX's
    gearing is -10 rad/m in degrees per metre; Newton's coef1 is dimensionless between its
    joint coordinates, so 10 (Newton read 572.96 when it was written in degrees), and the
    sweep's harness compares both as 572.958 deg/m (discovery converts Newton's). PhysX reads a
    NewtonMimicAPI coef1 per degree like its own gearing (measured: test_fet022_engines_physx),
    so no Newton value is right for both engines: the import writes such a relation as
    PhysxMimicJointAPI, with a warning, in its default (newton) schema too."""
    path = tmp_path / "pinch.xml"
    path.write_text("""<mujoco model="pinch">
  <worldbody><body name="base"><geom type="box" size="0.05 0.05 0.02"/>
    <body name="slider" pos="0 0 0.1"><joint name="slide" type="slide" axis="1 0 0" range="-0.005 0.04"/>
      <geom type="box" size="0.02 0.005 0.005"/>
      <body name="finger" pos="0 0.01 0"><joint name="open" axis="0 0 1" range="-0.6 0.6"/>
        <geom type="capsule" fromto="0 0 0 0.05 0 0" size="0.005"/></body></body></body></worldbody>
  <equality><joint joint1="open" joint2="slide" polycoef="0 10"/></equality>
</mujoco>""")
    result = import_robot(path)
    assert any("written as PhysxMimicJointAPI instead: open" in w for w in result.warnings), result.warnings
    prim = result.stage.GetPrimAtPath(result.joint_paths["open"])
    assert prim.GetAttribute("physxMimicJoint:rotX:gearing").Get() == pytest.approx(-10 * 180 / math.pi, rel=F32)
    assert not prim.GetAttribute("newton:mimicCoef1")
    (physx,) = read_relations(result.stage)
    # authored for Newton by hand (the library still writes what it is asked), coef1 is 10
    set_relation(result.stage, physx.replace(schema="newton", instance=None))
    assert prim.GetAttribute("newton:mimicCoef1").Get() == pytest.approx(10.0, rel=F32)
    assert {r.schema: r.multiplier for r in read_relations(result.stage)} == pytest.approx(
        {"physx": 10.0, "newton": 10.0}, rel=F32
    )
    from mimic_ext.fet022.discovery import discover

    cases = {c.relation.schema: c for c in discover(result.stage, read_relations(result.stage)).cases}
    assert abs(cases["newton"].gearing) == pytest.approx(abs(cases["physx"].gearing), rel=F32)
    newton = pytest.importorskip("newton", reason="the newton extra")
    remove_relation(result.stage, physx.follower, schema="physx")
    out = tmp_path / "pinch.usda"
    result.stage.GetRootLayer().Export(str(out))
    builder = newton.ModelBuilder()
    builder.add_usd(str(out))
    follower = builder.joint_label.index(result.joint_paths["open"])
    assert builder.joint_mimic_coeffs[follower][1] == pytest.approx(10.0, rel=F32)


def test_velocity_limits_never_make_a_relation_infeasible(tmp_path):
    """A mimic follower keeps no velocity limit (Isaac Sim's URDF importer ignores it too: the follower
    moves at multiplier times its leader, so its own cap can make the relation infeasible); a leader
    keeps its cap as physxJoint:maxJointVelocity only (ovphysx reads newton:velocityLimit as a cap
    that diverges with the relation: tests/test_fet022_agreement.py shows the Inspire hand)."""
    path = urdf(
        tmp_path,
        rev("lead", "l0", "l1")
        + "\n"
        + rev("fol", "l1", "l2", '<mimic joint="lead" multiplier="1.5"/>')
        + "\n"
        + rev("free", "l0", "l3"),
    )
    for schema in ("newton", "physx"):
        result = import_robot(path, schema=schema)
        prim = {n: result.stage.GetPrimAtPath(result.joint_paths[n]) for n in ("lead", "fol", "free")}
        assert not prim["fol"].GetAttribute("physxJoint:maxJointVelocity")
        assert not prim["fol"].GetAttribute("newton:velocityLimit")
        assert prim["lead"].GetAttribute("physxJoint:maxJointVelocity").Get() == pytest.approx(math.degrees(2), rel=F32)
        assert not prim["lead"].GetAttribute("newton:velocityLimit")
        # a joint outside any relation keeps both, whatever the mimic schema
        assert prim["free"].GetAttribute("newton:velocityLimit").Get() == pytest.approx(math.degrees(2), rel=F32)
        said = " ".join(result.warnings)
        assert "1 mimic follower(s) keep no velocity limit" in said and "fol" in said
        assert "mimic leader(s) keep their velocity limit as physxJoint:maxJointVelocity only" in said
