"""Whole sweep runs from the command line and from Python: several engines, outputs that would
overwrite an input, stdout reports, bad stages that must be named (not passed), folder runs."""

import json
import math
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pxr import Gf, Sdf, UsdPhysics

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from solver_stages import StageBuilder

import mimic_ext.schema  # noqa: F401
from mimic_ext import cli
from mimic_ext.fet022 import run
from mimic_ext.fet022.batch import collect_stages
from mimic_ext.fet022.engines import base as engine_base

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
GEARED = DATA / "geared_pair.usda"


# ------------------------------------------------------------------ several engines
def test_two_engine_columns_in_every_report(tmp_path, capsys):
    """Two differently configured warp engines (the default label and an explicit device) as two
    columns: the plumbing the physx/newton/mujoco engines plug into."""
    rep = tmp_path / "rep"
    assert (
        cli.main(
            [
                "sweep",
                str(GEARED),
                str(DATA / "chain3.usda"),
                "--engine",
                "warp,warp:cpu",
                "--report",
                str(rep),
                "-q",
                "-j",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.strip().startswith("follower"))
    assert header.split()[-2:] == ["warp", "warp:cpu"]
    data = json.loads((rep / "fet022_report.json").read_text())
    assert data["engines"] == ["warp", "warp:cpu"] and len(data["stages"]) == 4
    for stage in data["conformance"]:
        for f in stage["followers"]:
            cells = f["engines"]
            assert set(cells) == {"warp", "warp:cpu"}
            # the same solver on the same device: the same numbers to the last bit
            assert cells["warp"]["motion_ratio"] == cells["warp:cpu"]["motion_ratio"]
            assert cells["warp"]["read_relation"]["multiplier"] == cells["warp:cpu"]["read_relation"]["multiplier"]
    names = [c.get("name") for c in ET.parse(rep / "fet022_junit.xml").getroot().iter("testcase")]
    assert len(names) == 2 * sum(len(s["followers"]) for s in data["stages"][::2])
    assert {n.rsplit(" ", 1)[1] for n in names} == {"[warp]", "[warp:cpu]"}
    html = (rep / "fet022_report.html").read_text()
    assert html.count('<table class="conformance">') == 2
    assert html.count('<g class="samples" data-engine="warp"') == html.count(
        '<g class="samples" data-engine="warp:cpu"'
    )
    for engine in ("warp", "warp:cpu"):
        assert (rep / "result" / "geared_pair" / engine.replace(":", "_") / "result.json").is_file()


def test_an_engine_whose_extra_is_missing_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    # registered the way the optional engines are: a module loaded on first use (here one that is not installed)
    monkeypatch.setitem(engine_base._FACTORIES, "absent", engine_base._module_factory("absent_engine", "Engine"))
    assert cli.main(["sweep", str(GEARED), "--engine", "warp,absent"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and "absent" in err and "pip install" in err
    assert captured.out == "", "nothing was swept"


# ------------------------------------------------------------------ outputs and streams
@pytest.mark.parametrize("flag", ["--json", "--html", "--junit"])
def test_an_output_that_is_the_input_is_refused(tmp_path, capsys, flag):
    stage = tmp_path / "g.usda"
    stage.write_bytes(GEARED.read_bytes())
    link = tmp_path / "link.usda"
    link.symlink_to(stage)
    before = stage.read_bytes()
    for target in (stage, link):
        assert cli.main(["sweep", str(stage), flag, str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert "refusing to overwrite" in err and "\n" not in err
    assert stage.read_bytes() == before and link.is_symlink()


def test_report_folder_over_an_input_is_refused(tmp_path, capsys):
    folder = tmp_path / "rep"
    folder.mkdir()
    stage = folder / "fet022_report.html"  # a stage that happens to sit where the HTML would go
    stage.write_bytes(GEARED.read_bytes())
    (tmp_path / "g.usda").symlink_to(stage)
    assert cli.main(["sweep", str(tmp_path / "g.usda"), "--report", str(folder)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert stage.read_bytes() == GEARED.read_bytes()


def test_json_dash_is_stdout_and_the_table_goes_to_stderr(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["sweep", str(GEARED), "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["stages"][0]["status"] == "pass"
    assert "FET022 mimic_joint: PASS" in captured.err
    assert not (tmp_path / "-").exists()


def test_nan_gearing_still_writes_json_and_fails(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cli.main(["sweep", str(DATA / "invalid" / "MIMIC_NONFINITE.usda"), "--json", str(out)]) == 1
    data = json.loads(out.read_text())
    f = data["stages"][0]["followers"][0]
    assert f["status"] == "fail" and f["gearing"] is None and "MIMIC_NONFINITE" in " ".join(f["messages"])


def test_a_stage_that_cannot_be_swept_is_one_line_on_stderr(tmp_path, capsys):
    bad = tmp_path / "broken.usda"
    bad.write_text("#usda 1.0\n(\n")
    assert cli.main(["sweep", str(bad), str(GEARED), "-q"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("mimic-ext: error:")]
    assert len(err) == 1 and str(bad) in err[0]


@pytest.mark.parametrize(
    "flag, value", [("--sweep-seconds", "1e6"), ("--settle-seconds", "1e7"), ("--physics-fps", "1e7")]
)
def test_long_runs_are_refused_at_once(tmp_path, capsys, flag, value):
    assert cli.main(["sweep", str(GEARED), flag, value]) == 2
    err = capsys.readouterr().err.strip()
    assert "at most 100,000" in err and "\n" not in err


def test_long_runs_under_the_bound_stream_their_targets():
    """A 60 s sweep (14,640 steps, 15 target blocks) gives the same ratio as the default one."""
    long = run(GEARED, {"sweep_seconds": 60.0})
    short = run(GEARED)
    assert long.status == short.status == "pass"
    for a, b in zip(long.followers, short.followers):
        # an exact relation: both ratios are |gearing| to float32 round-off (1e-4)
        assert a.motion_ratio == pytest.approx(b.motion_ratio, abs=1e-4)
        assert len(a.sample_t) == 60 * 240 // 10 + 1


# ------------------------------------------------------------------ bad stages named, not passed
def _pair():
    b = StageBuilder(gravity=9.81, fixed_base=True)
    lead = b.body("lead", 1.0, (0.01, 0.01, 0.01), pos=(0, 0.3, 0))
    fol = b.body("fol", 1.0, (0.01, 0.01, 0.01), pos=(0, -0.3, 0))
    jl = b.revolute("leader", b.base, lead, "Z", (-45, 45), (0, 0.3, 0))
    jf = b.revolute("follower", b.base, fol, "Z", (-45, 45), (0, -0.3, 0))
    b.drive(jl, 1.0, 0.05)
    b.mimic(jf, jl, 0.8)
    return b, jl, jf, fol


def _nan_inertia(b, jl, jf, fol):
    UsdPhysics.MassAPI(b.stage.GetPrimAtPath(fol)).GetDiagonalInertiaAttr().Set(Gf.Vec3f(math.nan, 1, 1))
    return f"{fol} physics:diagonalInertia"


def _nan_stiffness(b, jl, jf, fol):
    UsdPhysics.DriveAPI(b.stage.GetPrimAtPath(jl), "angular").GetStiffnessAttr().Set(math.nan)
    return f"{jl} drive:angular:physics:stiffness"


def _nan_position(b, jl, jf, fol):
    b.stage.GetPrimAtPath(fol).GetAttribute("xformOp:translate").Set(Gf.Vec3d(math.nan, 0, 0))
    return f"{fol} xformOp:translate"


@pytest.mark.parametrize("spoil", [_nan_inertia, _nan_stiffness, _nan_position])
def test_non_finite_physics_is_an_error_that_names_the_value(spoil):
    b, jl, jf, fol = _pair()
    assert run(b.stage).status == "pass"
    where = spoil(b, jl, jf, fol)
    result = run(b.stage)
    assert result.status == "error" and where in result.reason and "not finite" in result.reason
    assert result.follower(jf).status == "error"


def test_reversed_reference_limits_are_named_not_blamed_on_the_ratio():
    b, jl, jf, _ = _pair()
    joint = UsdPhysics.RevoluteJoint(b.stage.GetPrimAtPath(jl))
    joint.GetLowerLimitAttr().Set(45.0)
    joint.GetUpperLimitAttr().Set(-45.0)
    f = run(b.stage).follower(jf)
    assert f.status == "fail" and len(f.messages) == 1
    assert "lowerLimit 45 above physics:upperLimit -45" in f.messages[0] and "ratio" not in f.messages[0]


def test_a_relation_physx_ignores_fails():
    f = run(DATA / "invalid" / "MIMIC_INSTANCE_NAME.usda").followers[0]
    assert f.status == "fail"
    assert any(m.startswith("PhysX ignores PhysxMimicJointAPI:transX") for m in f.messages)


def test_a_joint_without_bodies_is_told_so():
    from mimic_ext.fet022.stage_checks import why_not_simulated

    b, jl, jf, _ = _pair()
    joint = UsdPhysics.RevoluteJoint(b.stage.GetPrimAtPath(jf))
    joint.GetBody0Rel().ClearTargets(True)
    joint.GetBody1Rel().ClearTargets(True)
    assert why_not_simulated(b.stage, jf).startswith(f"joint {jf} has no bodies")
    joint.GetBody1Rel().SetTargets([Sdf.Path("/World/nowhere")])
    assert (
        why_not_simulated(b.stage, jf) == f"joint {jf} physics:body1 targets /World/nowhere, which does not exist "
        f"on the stage"
    )


# ------------------------------------------------------------------ Python API and folders
@pytest.mark.slow
def test_the_documented_python_call_works_in_a_guarded_script(tmp_path):
    """docs/python_api.md: ``fet022.sweep_paths(["assets/"], jobs=2)`` with the __main__ guard."""
    assets = tmp_path / "assets"
    assets.mkdir()
    for name in ("geared_pair.usda", "chain3.usda"):
        (assets / name).write_bytes((DATA / name).read_bytes())
    script = tmp_path / "sweep_it.py"
    script.write_text(
        textwrap.dedent("""
        from mimic_ext import fet022

        print("script body runs")
        if __name__ == "__main__":
            run = fet022.sweep_paths(["assets/"], jobs=2)
            print("statuses", sorted(s.status for s in run.stages), "jobs", run.jobs)
    """)
    )
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "statuses ['pass', 'pass'] jobs 2" in proc.stdout
    # the forkserver imports the main module for its workers; the guard keeps the sweep out of them
    assert proc.stdout.count("statuses") == 1


def _converter_layout(folder: Path) -> Path:
    """The folder shape NVIDIA's URDF/MJCF converters write: a root stage whose payload is
    Payload/Contents.usda, which sublayers Payload/Physics.usda (joints, the mimic) and
    Payload/Geometry.usda. Built from data/geared_pair.usda's own layer."""
    payload = folder / "Payload"
    payload.mkdir(parents=True)
    src = Sdf.Layer.FindOrOpen(str(GEARED))
    physics = Sdf.Layer.CreateNew(str(payload / "Physics.usda"))
    physics.TransferContent(src)
    physics.Save()
    Sdf.Layer.CreateNew(str(payload / "Geometry.usda")).Save()
    contents = Sdf.Layer.CreateNew(str(payload / "Contents.usda"))
    contents.subLayerPaths.append("./Physics.usda")
    contents.subLayerPaths.append("./Geometry.usda")
    contents.Save()
    root = Sdf.Layer.CreateNew(str(folder / "geared.usda"))
    root.subLayerPaths.append("./Payload/Contents.usda")
    root.defaultPrim = src.defaultPrim
    root.Save()
    return folder / "geared.usda"


def test_folder_runs_sweep_stages_not_the_layers_they_compose(tmp_path, capsys):
    root = _converter_layout(tmp_path / "converted")
    assert collect_stages([tmp_path / "converted"], recursive=True) == [root]
    # named directly, a layer is still swept
    physics = tmp_path / "converted" / "Payload" / "Physics.usda"
    assert collect_stages([physics]) == [physics]
    assert cli.main(["sweep", str(tmp_path / "converted"), "--recursive", "-q"]) == 0
    out = capsys.readouterr().out
    assert "Physics.usda" not in out and "1 stage(s): 1 pass" in out


def test_a_folder_written_by_nvidias_converter_sweeps_its_stage(tmp_path):
    """The same with the real urdf-usd-converter on the shared Inspire hand, where it runs."""
    proc = subprocess.run([sys.executable, "-c", "import urdf_usd_converter"], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("urdf-usd-converter does not import here: " + proc.stderr.strip().splitlines()[-1])
    urdf = ROOT.parent / "shared" / "assets" / "dexurdf_inspire_hand_right" / "inspire_hand_right.urdf"
    if not urdf.is_file():
        pytest.skip(f"shared asset absent: {urdf}")
    out = tmp_path / "inspire"
    conv = subprocess.run(
        [sys.executable, "-m", "urdf_usd_converter", str(urdf), str(out)], capture_output=True, text=True, timeout=600
    )
    assert conv.returncode == 0, conv.stderr[-2000:]
    stages = collect_stages([out], recursive=True)
    assert len(stages) == 1 and "Payload" not in stages[0].parts
