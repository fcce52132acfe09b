"""`mimic-ext` end to end in subprocesses: output, exit codes, atomic edits."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pxr import Usd, UsdGeom, UsdPhysics

import mimic_ext

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
ROBOTIQ = (
    SHARED / "robotiq_isaacsim_usd_2f85/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_parallel_grip.usda"
)


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "mimic_ext.cli", *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd
    )


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
    expected = json.loads((SHARED / "mimic_relations.json").read_text())[str(ROBOTIQ.relative_to(SHARED))]["relations"]
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


@pytest.mark.slow
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

    r = cli(
        "set", pair, "/R/follower", "--leader", "/R/leader", "--gearing", "1", "--offset", "10", "--schema", "newton"
    )
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


def test_strict_makes_warnings_fail(tmp_path):
    stage_file = tmp_path / "drive.usda"
    stage_file.write_bytes((ROOT / "data" / "invalid" / "MIMIC_FOLLOWER_DRIVE.usda").read_bytes())
    plain = cli("validate", "--json", stage_file)
    findings = json.loads(plain.stdout)["findings"]
    assert {f["code"] for f in findings if f["severity"] == "warning"} >= {"MIMIC_FOLLOWER_DRIVE"}
    assert [f for f in findings if f["severity"] == "error"] == [] and plain.returncode == 0
    assert cli("validate", "--strict", stage_file).returncode == 1


def test_every_command_help_states_the_conventions_or_where_they_are():
    """The paragraph in ``mimic-ext --help`` and ``set`` (whose flags use it); the others point
    there (issue 43: said once, not in every help; tests/test_cli_help.py)."""
    for command in ("", "list", "validate", "set", "remove"):
        r = cli(*([command] if command else []), "--help")
        assert r.returncode == 0
        text = " ".join(r.stdout.split())
        if command in ("", "set"):
            assert "multiplier = -gearing" in text and "degrees" in text
        else:
            assert "Units and signs:" in text and "docs/conventions.md" in text  # (wrapped at a hyphen)


HEAVY = ("pxr", "numpy", "warp", "yaml")


def test_help_loads_neither_usd_nor_numpy_nor_warp():
    code = (
        "import json, sys\nfrom mimic_ext import cli\nfor argv in (['--help'], *([c, '--help'] for c in "
        "('list', 'validate', 'set', 'remove', 'import', 'export', 'sweep'))):\n"
        "    try:\n        cli.main(argv)\n    except SystemExit as exc:\n        assert exc.code == 0, argv\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1]) == []


def test_python_dash_m_mimic_ext_is_the_command():
    r = subprocess.run([sys.executable, "-m", "mimic_ext", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"mimic-ext {mimic_ext.__version__}"
    r = subprocess.run(
        [sys.executable, "-m", "mimic_ext", "list", ROOT / "data" / "geared_pair.usda"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "gear_follower" in r.stdout


def test_usage_errors_are_one_line_with_a_pointer_to_help():
    r = cli("set", "x.usda", "/A", "--multiplier", "2")
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "mimic-ext: error: set: the following arguments are required: --leader (see: mimic-ext set --help)"
    ]
    r = cli()
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "mimic-ext --help" in r.stderr


def _cuda_driver_loads() -> bool:
    import ctypes

    for name in ("libcuda.so", "libcuda.so.1"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


@pytest.mark.slow
@pytest.mark.skipif(_cuda_driver_loads(), reason="Warp warns about a missing CUDA driver only where none loads")
def test_a_cpu_sweep_prints_no_cuda_driver_warning(tmp_path):
    a, b = tmp_path / "a.usda", tmp_path / "b.usda"
    for p in (a, b):
        p.write_bytes((ROOT / "data" / "geared_pair.usda").read_bytes())
    for args in (["sweep", a], ["sweep", a, b, "-j", "2"]):  # in process, then in the preloaded pool
        r = cli(*args)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "CUDA" not in r.stderr, r.stderr


def test_the_sweep_pools_preload_loads_the_solver_module_and_no_other():
    """The forkserver's preload loads what its workers run (the float32 solver module) and not
    every registered Warp module: the collision module alone cost some 5 s of a cold main job."""
    probe = (
        "import mimic_ext.fet022.preload, warp as wp\n"
        "from mimic_ext.solver.kernels import kernels\n"
        "print(bool(wp.get_module(kernels('float32').module).execs),"
        " bool(wp.get_module('mimic_ext.solver.collision.kernels').execs))"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False"], r.stdout + r.stderr


def test_a_missing_device_is_one_line_naming_the_devices(tmp_path):
    from mimic_ext.errors import MimicInputError
    from mimic_ext.warp_runtime import check_device

    assert check_device("cpu") == "cpu"
    with pytest.raises(MimicInputError, match=r"--device cuda:99: no such Warp device \(this machine has: cpu"):
        check_device("cuda:99")


def test_a_cold_kernel_cache_is_detected_and_announced_once(tmp_path, monkeypatch, capsys):
    import warp as wp

    from mimic_ext import cli as cli_module
    from mimic_ext import warp_runtime

    assert cli_module.main(["sweep", str(ROOT / "data" / "geared_pair.usda")]) == 0  # compiles if it must
    assert warp_runtime.solver_kernels_cached("cpu")
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))  # an empty cache
    assert not warp_runtime.solver_kernels_cached("cpu")
    monkeypatch.setattr(warp_runtime, "_announced", set())
    capsys.readouterr()
    assert warp_runtime.announce_cold_compile("cpu") is True
    assert warp_runtime.announce_cold_compile("cpu") is False  # once per process
    assert capsys.readouterr().err.splitlines() == [warp_runtime.COLD_COMPILE_NOTE]


def test_the_cold_check_looks_at_the_solver_modules_themselves(tmp_path, monkeypatch, capsys):
    """A cache holding everything but the float32 step module (an upgraded solver: its hash is
    new) reads as cold for it, and a contact model's module is checked apart."""
    import warp as wp

    from mimic_ext import cli as cli_module
    from mimic_ext import warp_runtime
    from mimic_ext.solver.kernels import kernels

    assert cli_module.main(["sweep", str(ROOT / "data" / "geared_pair.usda")]) == 0  # compiles if it must
    real = Path(wp.config.kernel_cache_dir)
    own = wp.get_module(kernels("float32").module).get_module_identifier(1)
    assert (real / own).is_dir()
    for d in real.iterdir():  # the same cache without the step module
        if d.name != own:
            (tmp_path / d.name).symlink_to(d)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    assert not warp_runtime.solver_kernels_cached("cpu")
    monkeypatch.setattr(warp_runtime, "_announced", set())
    capsys.readouterr()
    assert warp_runtime.announce_cold_compile("cpu") is True
    (tmp_path / own).symlink_to(real / own)
    assert warp_runtime.solver_kernels_cached("cpu")
    contact = wp.get_module(kernels("float32", contacts=True).module).get_module_identifier(1)
    assert warp_runtime.solver_kernels_cached("cpu", contacts=True) == (tmp_path / contact).is_dir()
    if (tmp_path / contact).is_dir():
        (tmp_path / contact).unlink()
    assert warp_runtime.announce_cold_compile("cpu", contacts=True) is True  # its own note, once
    assert warp_runtime.announce_cold_compile("cpu", contacts=True) is False
    assert capsys.readouterr().err.splitlines() == [
        warp_runtime.COLD_COMPILE_NOTE,
        warp_runtime.COLD_COMPILE_NOTE_CONTACTS,
    ]


def test_the_warp_engine_announces_the_kernel_variant_its_stage_compiles(monkeypatch):
    """A stage's model compiles the kernels' variant with the optional code it has
    (``model.kernel_features``: here an authored velocity cap); the cold-compile note is checked
    for that variant's module, not the plain one's, and a note per variant is said once."""
    from pxr import Sdf

    from mimic_ext import fet022, warp_runtime

    stage = Usd.Stage.Open(str(ROOT / "data" / "geared_pair.usda"))
    body = stage.GetPrimAtPath("/Gears/gear2")
    body.AddAppliedSchema("PhysxRigidBodyAPI")
    body.CreateAttribute("physxRigidBody:maxAngularVelocity", Sdf.ValueTypeNames.Float).Set(1000.0)
    asked = []
    monkeypatch.setattr(warp_runtime, "announce_cold_compile", lambda *a, **kw: asked.append((a, kw)) or False)
    assert fet022.run(stage, engine="warp").status == "pass"  # the cap (1000 deg/s) never binds
    assert asked == [(("cpu", "float32"), dict(contacts=False, balls=False, caps=True, momentum=False))]
    monkeypatch.undo()
    monkeypatch.setattr(warp_runtime, "_announced", set())
    monkeypatch.setattr(warp_runtime, "solver_kernels_cached", lambda *a, **kw: False)
    assert warp_runtime.announce_cold_compile("cpu", caps=True) is True
    assert warp_runtime.announce_cold_compile("cpu", caps=True) is False  # once per variant
    assert warp_runtime.announce_cold_compile("cpu", caps=True, momentum=True) is True


def test_set_shows_before_and_after_and_leaves_an_unchanged_file_alone(tmp_path, capsys):
    from mimic_ext import cli as cli_module

    stage_file = tmp_path / "g.usda"
    stage_file.write_bytes((ROOT / "data" / "geared_pair.usda").read_bytes())
    args = ["set", str(stage_file), "/Gears/Joints/gear_follower", "--leader", "/Gears/Joints/gear_leader"]
    before = stage_file.read_bytes()
    assert cli_module.main([*args, "--multiplier", "2", "--offset", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "unchanged, gearing=-2 offset=-5.72958 (q = 2 x q_ref + 0.1)" in out and "not rewritten" in out
    assert stage_file.read_bytes() == before
    assert cli_module.main([*args, "--multiplier", "1.5", "--offset", "0.1"]) == 0
    captured = capsys.readouterr()
    assert (
        "gear_follower PhysxMimicJointAPI:rotX: before gearing=-2 offset=-5.72958 (q = 2 x q_ref + 0.1); "
        "after gearing=-1.5 offset=-5.72958 (q = 1.5 x q_ref + 0.1)"
    ) in captured.out
    assert captured.err == ""
    # x3 maps the leader's [-60, 60] deg to [-174, 186] deg, past the follower's [-120, 130]: written, with a warning
    assert cli_module.main([*args, "--multiplier", "3", "--offset", "0.1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("mimic-ext: warning: ") and "MIMIC_RANGE_OUTSIDE_LIMITS" in err[0]


def _readme_set_commands() -> list[list[str]]:
    import shlex

    text = (ROOT / "README.md").read_text().replace("\\\n", " ")
    return [shlex.split(line.strip())[1:] for line in text.splitlines() if line.strip().startswith("mimic-ext set ")]


def test_readme_set_examples_each_change_the_relation(tmp_path, capsys, monkeypatch):
    from mimic_ext import cli as cli_module

    commands = _readme_set_commands()
    assert len(commands) >= 2
    monkeypatch.chdir(ROOT)
    for argv in commands:
        out_file = tmp_path / Path(argv[argv.index("-o") + 1]).name
        argv[argv.index("-o") + 1] = str(out_file)
        assert cli_module.main(argv) == 0, argv
        out = capsys.readouterr().out
        assert "before " in out and "; after " in out and "unchanged" not in out, out
        assert out_file.exists()


def _python_block_after(doc: Path, heading: str) -> str:
    text = doc.read_text()
    start = text.index(heading)
    block = text[text.index("```python\n", start) + len("```python\n") :]
    return block[: block.index("```")]


@pytest.mark.slow
def test_python_api_authoring_example_runs_as_written(tmp_path, monkeypatch, capsys):
    """The doc's from-scratch example, extracted from docs/python_api.md and run unchanged."""
    code = _python_block_after(ROOT / "docs" / "python_api.md", "## Authoring a relation from scratch")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/python_api.md", "exec"), {"__name__": "__doc_example__"})
    out = capsys.readouterr().out
    assert "/Gripper/finger2 q = -1 x q_ref + 0" in out  # what the example says it prints
    f1, f2 = map(float, re.search(r"finger1 ([-+.\d]+) m, finger2 ([-+.\d]+) m", out).groups())
    assert f1 == pytest.approx(-0.03, abs=1e-3)  # the PD drive (2000 N/m, 100 N s/m) has settled after 2 s
    assert f2 == pytest.approx(-f1, abs=1e-4)  # mirrored exactly; 1e-4 is the printed 4-decimal rounding
    assert float(re.search(r"largest coupling force on finger2: ([\d.e+-]+) N", out).group(1)) > 0
    from mimic_ext.schema import open_stage, read_relations, validate

    stage = open_stage(tmp_path / "gripper.usda").stage
    (rel,) = read_relations(stage)
    assert rel.follower == "/Gripper/finger2" and rel.leader == "/Gripper/finger1"
    assert rel.multiplier == -1.0 and rel.offset == 0.0
    assert [f for f in validate(stage) if f.severity == "error"] == []


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_an_input_that_is_no_file_is_refused_before_usd_loads(kind, tmp_path):
    """Review of 43: the start-up pre-check asked only whether the input exists (its own copy of
    ``input_files.check_regular_file``'s first case), so a folder or a FIFO went on to import pxr
    before being refused. The check itself now runs there: one line, and no pxr in the process."""
    path = tmp_path / "stage.usda"
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    code = (
        "import sys\nfrom mimic_ext import cli\n"
        f"rc = cli.main(['list', {str(path)!r}])\n"
        "print(rc, 'pxr' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["2", "False"], r.stdout + r.stderr
    what = "a folder" if kind == "folder" else "a FIFO (named pipe)"
    assert r.stderr == f"mimic-ext: error: {path}: is {what}, not a regular file; give the stage as a file\n"
