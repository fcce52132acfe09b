"""The robot description as the truth (issue 39): misspelled mimic attributes refused with
their line, and ``mimic-ext diff`` / ``sweep --source`` comparing a stage with its source.

Tolerances: 1e-9 on relations computed in float64 from the file text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mimic_ext.errors import MimicInputError
from mimic_ext.importers import import_robot

EXACT = 1e-9
LINK = (
    '  <link name="{}"><inertial><mass value="1"/>'
    '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
)


def urdf(tmp_path: Path, mimic: str, name: str = "robot.urdf") -> Path:
    """Two revolute joints, j2 carrying ``mimic`` (written on line 7)."""
    links = "".join(LINK.format(n) for n in ("l0", "l1", "l2"))
    joint = (
        '  <joint name="{}" type="revolute"><parent link="{}"/><child link="{}"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="5" velocity="2"/>{}</joint>\n'
    )
    text = (
        '<?xml version="1.0"?>\n<robot name="bot">\n'
        + links
        + joint.format("j1", "l0", "l1", "")
        + joint.format("j2", "l1", "l2", mimic)
        + "</robot>\n"
    )
    path = tmp_path / name
    path.write_text(text)
    return path


def mjcf(tmp_path: Path, equality: str, name: str = "m.xml") -> Path:
    """Two hinges j1, j2 and ``equality`` written on line 9."""
    path = tmp_path / name
    path.write_text(f"""<mujoco model="m">
  <compiler angle="radian"/>
  <worldbody>
    <body name="a"><joint name="j1" range="-1 1"/><geom size="0.1"/>
      <body name="b" pos="0 0 1"><joint name="j2" range="-1 1"/><geom size="0.1"/></body>
    </body>
  </worldbody>
  <equality>
    {equality}
  </equality>
</mujoco>
""")
    return path


# ---------------------------------------------------------------- misspelled source attributes


@pytest.mark.parametrize(
    "mimic, bad, meant",
    [
        ('<mimic joint="j1" multiplier="1.06" ofset="0.72"/>', 'ofset="0.72"', "offset"),
        ('<mimic joint="j1" multipler="1.06"/>', 'multipler="1.06"', "multiplier"),
        ('<mimic joint="j1" Offset="0.1"/>', 'Offset="0.1"', "offset"),
    ],
)
def test_misspelled_urdf_mimic_attribute_is_refused_with_file_line_and_name(tmp_path, mimic, bad, meant):
    """Today these import as offset 0 / multiplier 1 with no word: a different mechanism."""
    with pytest.raises(MimicInputError) as exc:
        import_robot(urdf(tmp_path, mimic))
    message = str(exc.value)
    assert "\n" not in message and "robot.urdf:7:" in message, message
    assert bad in message and f"did you mean {meant}?" in message, message


def test_namespaced_urdf_mimic_attribute_is_a_warning_not_a_refusal(tmp_path):
    """urdfdom ignores unknown attributes; a namespaced one cannot be a misspelled offset."""
    result = import_robot(urdf(tmp_path, '<mimic joint="j1" multiplier="2" offset="0.1" vendor:gain="3"/>'))
    rel = result.relations[0]
    assert rel.multiplier == pytest.approx(2.0, abs=EXACT) and rel.offset == pytest.approx(0.1, abs=EXACT)
    warned = [w for w in result.warnings if 'vendor:gain="3"' in w]
    assert len(warned) == 1 and "robot.urdf:7:" in warned[0]


@pytest.mark.parametrize(
    "equality, bad, meant",
    [
        ('<joint joint1="j2" joint2="j1" polycoeff="0.1 2 0 0 0"/>', 'polycoeff="0.1 2 0 0 0"', "polycoef"),
        ('<joint joint1="j2" joint_2="j1"/>', 'joint_2="j1"', "joint2"),
    ],
)
def test_misspelled_mjcf_equality_attribute_is_refused_as_mujoco_does(tmp_path, equality, bad, meant):
    with pytest.raises(MimicInputError) as exc:
        import_robot(mjcf(tmp_path, equality))
    message = str(exc.value)
    assert "\n" not in message and "m.xml:9:" in message, message
    assert bad in message and f"did you mean {meant}?" in message, message


def test_mujoco_refuses_the_same_misspelling(tmp_path):
    """The MJCF refusal is MuJoCo's own rule, not a stricter one of ours."""
    mujoco = pytest.importorskip("mujoco")
    path = mjcf(tmp_path, '<joint joint1="j2" joint2="j1" polycoeff="0.1 2 0 0 0"/>')
    with pytest.raises(ValueError, match=re.escape("unrecognized attribute: 'polycoeff'")):
        mujoco.MjModel.from_xml_path(str(path))


def test_every_known_attribute_still_imports(tmp_path):
    result = import_robot(
        mjcf(
            tmp_path,
            '<joint name="e" class="main" active="true" solref="0.02 1" solimp="0.9 0.95 0.001 0.5 2" '
            'joint1="j2" joint2="j1" polycoef="0.1 2 0 0 0"/>',
        )
    )
    rel = result.relations[0]
    assert rel.multiplier == pytest.approx(2.0, abs=EXACT) and rel.offset == pytest.approx(0.1, abs=EXACT)
