"""The URDF export keeps the source's leaders (issue 39): a controller keyed on the source's joint
names drives the same joints after a round trip. Only a leader that lies below a joint it drives,
which Pinocchio cannot build ("The parent joint of the mimic joint is not in the kinematic tree"),
is inverted, and the export names it and says why; ``--keep-leaders`` keeps even those.

Tolerance: 1e-6 on relations read back (float32 in the USD, then the shortest decimal).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mimic_ext.importers import export_urdf, import_robot

COEF = 1e-6
LINK = (
    '  <link name="{}"><inertial><mass value="1"/>'
    '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
)
JOINT = (
    '  <joint name="{}" type="revolute"><parent link="{}"/><child link="{}"/><axis xyz="0 0 1"/>'
    '<limit lower="-1" upper="1" effort="5" velocity="2"/>{}</joint>\n'
)


def robot(tmp_path: Path, joints: list[tuple[str, str, str, str]], name: str) -> Path:
    links = sorted({link for _, p, c, _ in joints for link in (p, c)})
    path = tmp_path / name
    path.write_text(
        '<?xml version="1.0"?>\n<robot name="bot">\n'
        + "".join(LINK.format(n) for n in links)
        + "".join(JOINT.format(*j) for j in joints)
        + "</robot>\n"
    )
    return path


def mimics(text: str) -> dict[str, tuple[str, float, float]]:
    """follower -> (leader, multiplier, offset) as the URDF says."""
    out = {}
    for joint in re.findall(r'<joint name="([^"]+)"[^>]*>(.*?)</joint>', text, re.S):
        m = re.search(r'<mimic joint="([^"]+)" multiplier="([^"]+)" offset="([^"]+)"/>', joint[1])
        if m:
            out[joint[0]] = (m.group(1), float(m.group(2)), float(m.group(3)))
    return out


#: like the Schunk SVH's spread: the actuated leader sits deeper, on another branch, than a follower
#: whose name sorts first (urdfdom visits it first unless the export orders the branches)
BRANCHES = [
    ("a_spread", "palm", "f1", '<mimic joint="z_spread" multiplier="0.5" offset="0.1"/>'),
    ("m_base", "palm", "f2", ""),
    ("z_spread", "f2", "f3", ""),
]
#: a leader right below its follower (iit_softfoot's rolling joints, the Aero hand)
BELOW = [
    ("j_top", "palm", "f1", '<mimic joint="j_low" multiplier="2" offset="0.2"/>'),
    ("j_low", "f1", "f2", ""),
]


def test_a_leader_on_another_branch_stays_the_leader(tmp_path):
    """On today's main the deeper leader became the follower: z_spread = 2 a_spread - 0.2."""
    result = import_robot(robot(tmp_path, BRANCHES, "branches.urdf"))
    export = export_urdf(result.stage, tmp_path / "out.urdf")
    (leader, m, c) = mimics(export.text)["a_spread"]
    assert leader == "z_spread" and m == pytest.approx(0.5, abs=COEF) and c == pytest.approx(0.1, abs=COEF)
    assert "z_spread" not in mimics(export.text) and export.inverted == []
    assert not [w for w in export.warnings if "invert" in w]


def test_pinocchio_builds_the_kept_leader(tmp_path):
    pin = pytest.importorskip("pinocchio", reason="the pin extra (pip install 'mimic-ext[pin]')")
    result = import_robot(robot(tmp_path, BRANCHES, "branches.urdf"))
    out = tmp_path / "out.urdf"
    export_urdf(result.stage, out)
    model = pin.buildModelFromUrdf(str(out), mimic=True)  # refused if the follower came first
    names = list(model.names)
    assert "a_spread" in names and "z_spread" in names


def test_a_leader_below_its_follower_is_inverted_and_said(tmp_path):
    result = import_robot(robot(tmp_path, BELOW, "below.urdf"))
    export = export_urdf(result.stage, tmp_path / "out.urdf")
    (leader, m, c) = mimics(export.text)["j_low"]  # j_top = 2 j_low + 0.2  <=>  j_low = 0.5 j_top - 0.1
    assert leader == "j_top" and m == pytest.approx(0.5, abs=COEF) and c == pytest.approx(-0.1, abs=COEF)
    assert export.inverted == [result.joint_paths["j_low"]]
    (warning,) = [w for w in export.warnings if "inverted" in w]
    assert "j_top now leads j_low (which lies below j_top, a joint it drives)" in warning
    assert "Pinocchio" in warning


def test_keep_leaders_keeps_even_those(tmp_path, capsys):
    from mimic_ext.cli import main

    result = import_robot(robot(tmp_path, BELOW, "below.urdf"))
    stage = tmp_path / "below.usda"
    result.stage.GetRootLayer().Export(str(stage))
    out = tmp_path / "out.urdf"
    assert main(["export", str(stage), "-o", str(out), "--keep-leaders"]) == 0
    (leader, m, c) = mimics(out.read_text())["j_top"]
    assert leader == "j_low" and m == pytest.approx(2.0, abs=COEF) and c == pytest.approx(0.2, abs=COEF)
    assert "cannot take that relation" in capsys.readouterr().err  # Pinocchio's limit, said
