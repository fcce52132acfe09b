"""Target hosts (issue 39): ``import --target`` writes the schema that host reads and says on every
import which hosts couple it; ``validate --target`` reports what that host would not couple; the
validator warns on a leader's ``newton:velocityLimit`` for Isaac Sim 6's PhysX."""

from __future__ import annotations

from pathlib import Path

import pytest
from pxr import Sdf

from mimic_ext.cli import HOST_TARGETS, main
from mimic_ext.errors import MimicInputError
from mimic_ext.importers import import_robot
from mimic_ext.importers.commands import TARGETS
from mimic_ext.schema import open_stage, read_relations
from mimic_ext.schema.hosts import DEFAULT_NOTE, HOSTS
from mimic_ext.schema.validation import validate

LINK = (
    '  <link name="{}"><inertial><mass value="1"/>'
    '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
)


def urdf(tmp_path: Path) -> Path:
    joint = (
        '  <joint name="{}" type="revolute"><parent link="{}"/><child link="{}"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="5" velocity="2"/>{}</joint>\n'
    )
    path = tmp_path / "robot.urdf"
    path.write_text(
        '<?xml version="1.0"?>\n<robot name="bot">\n'
        + "".join(LINK.format(n) for n in ("l0", "l1", "l2"))
        + joint.format("j1", "l0", "l1", "")
        + joint.format("j2", "l1", "l2", '<mimic joint="j1" multiplier="2" offset="0.1"/>')
        + "</robot>\n"
    )
    return path


def test_the_three_spellings_of_the_targets_agree():
    """The CLI modules spell the targets with the standard library only; the table is schema.hosts."""
    assert TARGETS == HOST_TARGETS == tuple(HOSTS)


def test_default_import_states_the_hosts_that_couple_it_in_one_line(tmp_path, capsys):
    assert main(["import", str(urdf(tmp_path)), "-o", str(tmp_path / "r.usda")]) == 0
    err = capsys.readouterr().err
    (note,) = [line for line in err.splitlines() if line.startswith("mimic-ext: note: ")]
    assert note == f"mimic-ext: note: {DEFAULT_NOTE}"
    assert "Isaac Sim >= 6, Newton, ovphysx; use --target isaacsim-5 for Isaac Sim 4.5-5.1" in note


@pytest.mark.parametrize(
    "target, api",
    [("isaacsim-5", "PhysxMimicJointAPI:rotX"), ("isaacsim-6", "NewtonMimicAPI"), ("newton", "NewtonMimicAPI")],
)
def test_import_target_picks_the_schema_that_host_reads(tmp_path, capsys, target, api):
    out = tmp_path / "r.usda"
    assert main(["import", str(urdf(tmp_path)), "-o", str(out), "--target", target]) == 0
    captured = capsys.readouterr()
    assert "validation: 0 error(s)" in captured.out and "mimic-ext: note: " in captured.err
    (rel,) = read_relations(open_stage(out).stage)
    assert (f"PhysxMimicJointAPI:{rel.instance}" if rel.schema == "physx" else "NewtonMimicAPI") == api
    # the same relation whatever the schema: 2 x j1 + 0.1 rad (float32 in USD: 1e-6)
    assert rel.multiplier == pytest.approx(2.0, abs=1e-6) and rel.offset == pytest.approx(0.1, abs=1e-6)


def test_a_schema_the_target_does_not_read_is_refused(tmp_path, capsys):
    out = tmp_path / "r.usda"
    assert main(["import", str(urdf(tmp_path)), "-o", str(out), "--target", "isaacsim-5", "--schema", "newton"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--schema newton is not read by --target isaacsim-5" in err and not out.exists()
    with pytest.raises(MimicInputError, match="not read by --target isaacsim-5"):
        import_robot(urdf(tmp_path), schema="newton", target="isaacsim-5")


def test_validate_target_reports_a_follower_that_host_would_not_couple(tmp_path, capsys):
    """Isaac Sim 4.5-5.1 parse only PhysxMimicJointAPI: our default output is uncoupled there."""
    out = tmp_path / "r.usda"
    assert main(["import", str(urdf(tmp_path)), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["validate", str(out)]) == 0
    assert main(["validate", str(out), "--target", "isaacsim-6"]) == 0
    capsys.readouterr()
    assert main(["validate", str(out), "--target", "isaacsim-5"]) == 1
    text = capsys.readouterr().out
    assert "MIMIC_HOST_NOT_COUPLED" in text and "mimic-ext convert STAGE --to physx" in text


def _with_mjc_equality(tmp_path):
    """Our import of the pair plus MjcEqualityJointAPI on the follower, as mujoco-usd-converter writes it."""
    result = import_robot(urdf(tmp_path))
    (rel,) = read_relations(result.stage)
    result.stage.GetPrimAtPath(rel.follower).AddAppliedSchema("MjcEqualityJointAPI")
    return result.stage, rel


def test_newton_target_reports_a_relation_only_mujocos_solver_applies(tmp_path):
    stage, rel = _with_mjc_equality(tmp_path)
    (f,) = [f for f in validate(stage, target="newton") if f.code == "MIMIC_HOST_NOT_COUPLED"]
    assert f.path == rel.follower and "only SolverMuJoCo applies" in f.message
    assert not [f for f in validate(stage, target="mujoco") if f.severity == "error"]
    assert not [f for f in validate(stage) if f.severity == "error"]


def test_leader_velocity_limit_warns_for_isaac_sim_6_physx_only(tmp_path):
    result = import_robot(urdf(tmp_path))
    stage = result.stage
    (rel,) = read_relations(stage)
    leader = stage.GetPrimAtPath(rel.leader)
    assert not leader.GetAttribute("newton:velocityLimit").HasAuthoredValue()  # the importer never writes it
    assert all(f.code != "MIMIC_LEADER_VELOCITY_LIMIT" for f in validate(stage))
    leader.CreateAttribute("newton:velocityLimit", Sdf.ValueTypeNames.Float).Set(114.6)
    for target in (None, "isaacsim-6"):
        (f,) = [f for f in validate(stage, target=target) if f.code == "MIMIC_LEADER_VELOCITY_LIMIT"]
        assert f.severity == "warning" and f.path == rel.leader and "114.6" in f.message
    for target in ("isaacsim-5", "newton", "mujoco"):
        assert all(f.code != "MIMIC_LEADER_VELOCITY_LIMIT" for f in validate(stage, target=target))


def _convert(tool: str, source: Path, out: Path, *flags: str) -> Path:
    """NVIDIA's converter ``tool`` (a pip package, run as its command) on ``source``; the stage written."""
    import subprocess
    import sys

    pytest.importorskip(tool)
    done = subprocess.run([sys.executable, "-m", tool, str(source), str(out), *flags], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    (stage,) = [p for p in out.iterdir() if p.suffix in (".usda", ".usdc")]
    return stage


@pytest.mark.slow
def test_real_converter_outputs_per_target(tmp_path, shared_assets, capsys):
    """mujoco-usd-converter's Franka hand (NewtonMimicAPI + MjcEqualityJointAPI) is not coupled by
    Newton's Featherstone solver; urdf-usd-converter's Inspire hand (NewtonMimicAPI) not by Isaac Sim
    5.1, and its leaders carry newton:velocityLimit. Both carry their source's relations (diff: 0)."""
    hand = shared_assets / "menagerie_franka_hand/hand.xml"
    franka = _convert("mujoco_usd_converter", hand, tmp_path / "franka", "--no-layer-structure")
    assert main(["validate", str(franka), "--target", "mujoco"]) == 0
    assert main(["validate", str(franka), "--target", "newton"]) == 1
    assert "only SolverMuJoCo applies" in capsys.readouterr().out
    assert main(["diff", str(franka), str(hand)]) == 0

    source = shared_assets / "dexurdf_inspire_hand_right/inspire_hand_right.urdf"
    inspire = _convert("urdf_usd_converter", source, tmp_path / "inspire")
    capsys.readouterr()
    assert main(["validate", str(inspire), "--target", "isaacsim-5", "--json"]) == 1
    import json

    findings = json.loads(capsys.readouterr().out)["findings"]
    assert sum(f["code"] == "MIMIC_HOST_NOT_COUPLED" for f in findings) == 6  # every follower
    # its five leaders carry newton:velocityLimit (as the Ability hand's, which diverges on ovphysx)
    assert main(["validate", str(inspire), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert sum(f["code"] == "MIMIC_LEADER_VELOCITY_LIMIT" for f in findings) == 5
    assert main(["diff", str(inspire), str(source)]) == 0


def test_newton_target_reports_a_physx_offset_newton_reads_as_radians(tmp_path):
    """Newton 1.8 passes PhysxMimicJointAPI's offset (degrees) on unconverted, as radians."""
    stage = import_robot(urdf(tmp_path), schema="physx").stage
    (f,) = [f for f in validate(stage, target="newton") if f.code == "MIMIC_HOST_NOT_COUPLED"]
    assert "as radians" in f.message and "-5.72958" in f.message  # the authored offset: -0.1 rad in degrees
    assert not [f for f in validate(stage, target="isaacsim-5") if f.severity == "error"]
    no_offset = tmp_path / "no_offset"
    no_offset.mkdir()
    source = urdf(no_offset)
    source.write_text(source.read_text().replace(' offset="0.1"', ""))
    assert not [
        f for f in validate(import_robot(source, schema="physx").stage, target="newton") if f.severity == "error"
    ]
