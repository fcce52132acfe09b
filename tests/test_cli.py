"""`mimic-ext` end to end in subprocesses: output, exit codes, atomic edits."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pxr import Usd, UsdGeom, UsdPhysics

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
ROBOTIQ = SHARED / "robotiq_isaacsim_usd_2f85/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_parallel_grip.usda"


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mimic_ext.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def _pair_stage(path: Path) -> Path:
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    for name in ("leader", "follower"):
        j = UsdPhysics.RevoluteJoint.Define(stage, f"/R/{name}")
        j.CreateLowerLimitAttr(-90.0)
        j.CreateUpperLimitAttr(90.0)
    UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath("/R"))
    stage.Save()
    return path


@pytest.fixture
def pair(tmp_path):
    return _pair_stage(tmp_path / "pair.usda")


def test_list_json_on_the_real_robotiq_usd():
    if not ROBOTIQ.exists():
        pytest.skip("shared assets not present")
    expected = json.loads((SHARED / "mimic_relations.json").read_text())[
        str(ROBOTIQ.relative_to(SHARED))]["relations"]
    out = cli("list", "--json", ROBOTIQ)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("composition error") == 1  # one summary line, not twelve USD warnings
    got = {r["follower"]: r for r in json.loads(out.stdout)["relations"]}
    assert len(got) == 5
    for exp in expected:
        rel = got[exp["follower"]]
        assert rel["leader"] == exp["leader"][0]
        assert rel["authored"]["gearing"] == exp["gearing"]
        # gearing -1 -> +1, gearing +1 -> -1 exactly (no arithmetic beyond a sign change)
        assert rel["multiplier"] == exp["equivalent_multiplier"] == -exp["gearing"]
        assert rel["offset"] == 0.0
    assert sorted(r["multiplier"] for r in got.values()) == [-1, -1, -1, 1, 1]


def test_set_then_list_round_trip(pair, tmp_path):
    out_file = tmp_path / "edited.usda"
    r = cli("set", pair, "/R/follower", "--leader", "/R/leader", "--multiplier", "2", "--offset", "0.1", "-o", out_file)
    assert r.returncode == 0, r.stderr
    listed = json.loads(cli("list", "--json", out_file).stdout)["relations"]
    assert len(listed) == 1
    # float32 storage in USD: 1e-6 relative
    assert listed[0]["authored"]["gearing"] == pytest.approx(-2.0, rel=1e-6)
    assert listed[0]["authored"]["offset"] == pytest.approx(-5.729578, rel=1e-6)
    assert json.loads(cli("list", "--json", pair).stdout)["relations"] == []  # -o left the input alone

    r = cli("set", pair, "/R/follower", "--leader", "/R/leader", "--gearing", "1", "--offset", "10",
            "--schema", "newton")
    assert r.returncode == 0, r.stderr
    (rel,) = json.loads(cli("list", "--json", pair).stdout)["relations"]
    assert rel["schema"] == "newton"
    assert rel["multiplier"] == pytest.approx(-1.0, rel=1e-6)
    assert rel["offset"] == pytest.approx(-10 * 3.141592653589793 / 180, rel=1e-6)

    r = cli("remove", pair, "/R/follower")
    assert r.returncode == 0, r.stderr
    assert json.loads(cli("list", "--json", pair).stdout)["relations"] == []


@pytest.mark.parametrize("case", ["missing", "not_usd", "syntax", "unknown_prim", "nonfinite", "zero"])
def test_bad_input_is_one_line_exit_2(case, pair, tmp_path):
    if case == "missing":
        args, expect = ["list", tmp_path / "nope.usda"], "no such file"
    elif case == "not_usd":
        (tmp_path / "robot.txt").write_text("hello")
        args, expect = ["list", tmp_path / "robot.txt"], "not a USD file"
    elif case == "syntax":
        bad = tmp_path / "bad.usda"
        bad.write_text('#usda 1.0\n\ndef Xform "A"\n{\n    float y = ]]\n}\n')
        args, expect = ["validate", bad], "bad.usda:5"
    elif case == "unknown_prim":
        args, expect = ["set", pair, "/R/ghost", "--leader", "/R/leader", "--multiplier", "1"], "/R/ghost"
    elif case == "nonfinite":
        args, expect = ["set", pair, "/R/follower", "--leader", "/R/leader", "--multiplier", "nan"], "finite"
    else:
        args, expect = ["set", pair, "/R/follower", "--leader", "/R/leader", "--gearing", "0"], "0"
    before = pair.read_bytes()
    r = cli(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mimic-ext: error:") and expect in lines[0]
    assert pair.read_bytes() == before


def _make_unwritable(folder: Path) -> bool:
    """chmod 555; as root that is not enough, so also the immutable flag where the filesystem has it."""
    folder.chmod(0o555)
    if os.geteuid() == 0 and shutil.which("chattr"):
        subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
    probe = folder / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return True
    probe.unlink()
    return False


def _make_writable(folder: Path) -> None:
    if shutil.which("chattr"):
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    folder.chmod(0o755)


def test_edit_in_read_only_folder_fails_with_original_intact(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    stage_file = _pair_stage(folder / "pair.usda")
    before = stage_file.read_bytes()
    if not _make_unwritable(folder):
        _make_writable(folder)
        pytest.skip("cannot make a folder read-only here (root without chattr)")
    try:
        r = cli("set", stage_file, "/R/follower", "--leader", "/R/leader", "--multiplier", "1")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr and "cannot write" in r.stderr
        assert stage_file.read_bytes() == before
        assert sorted(p.name for p in folder.iterdir()) == ["pair.usda"]  # no temporary left behind
    finally:
        _make_writable(folder)


def test_new_file_gets_ordinary_permissions(pair, tmp_path):
    out_file = tmp_path / "new.usda"
    assert cli("set", pair, "/R/follower", "--leader", "/R/leader", "--multiplier", "1", "-o", out_file).returncode == 0
    mask = os.umask(0)
    os.umask(mask)
    assert out_file.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's private 0600


def test_edit_into_vanished_folder_fails_with_original_intact(pair, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    gone.rmdir()
    before = pair.read_bytes()
    r = cli("set", pair, "/R/follower", "--leader", "/R/leader", "--multiplier", "1", "-o", gone / "out.usda")
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    assert pair.read_bytes() == before and not gone.exists()


def test_validate_exit_codes_and_json(pair, tmp_path):
    r = cli("set", pair, "/R/follower", "--leader", "/R/leader", "--multiplier", "1")
    assert r.returncode == 0, r.stderr
    clean = cli("validate", "--json", pair)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert [f for f in json.loads(clean.stdout)["findings"] if f["severity"] == "error"] == []

    stage = Usd.Stage.Open(str(pair))
    stage.GetPrimAtPath("/R/follower").GetAttribute("physxMimicJoint:rotX:gearing").Set(0.0)
    stage.Save()
    bad = cli("validate", "--json", pair)
    assert bad.returncode == 1
    codes = {f["code"] for f in json.loads(bad.stdout)["findings"]}
    assert "MIMIC_ZERO_GEARING" in codes


def test_strict_makes_warnings_fail(pair):
    cli("set", pair, "/R/follower", "--leader", "/R/leader", "--multiplier", "1", "--instance", "transX")
    plain = cli("validate", "--json", pair)
    findings = json.loads(plain.stdout)["findings"]
    assert {f["code"] for f in findings if f["severity"] == "warning"} >= {"MIMIC_INSTANCE_NAME"}
    errors = [f for f in findings if f["severity"] == "error"]
    assert plain.returncode == (1 if errors else 0)
    assert cli("validate", "--strict", pair).returncode == 1


def test_every_command_help_states_the_conventions():
    for command in ("list", "validate", "set", "remove"):
        r = cli(command, "--help")
        assert r.returncode == 0
        text = " ".join(r.stdout.split())
        assert "multiplier = -gearing" in text and "degrees" in text
