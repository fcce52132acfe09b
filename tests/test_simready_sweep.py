"""`mimic-ext sweep` with NVIDIA's verdict as its headline: "SimReady mimic_joint 1.1.0: <status>"
first, NVIDIA's verdict deciding the exit code, our port's findings beside it (``--strict`` makes
them count), and ``--report DIR`` a run folder that simready-benchmark's reporter reads."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("simready_benchmark_kit_suite.articulation_phases.mimic_joint")
pytest.importorskip("simready_benchmark.reporter.reporter")

from test_simready_adapter import soft_stage

from mimic_ext import cli


def test_headline_first_and_nvidia_decides(data_dir, capsys):
    """MIMIC_INSTANCE_NAME: its PhysxMimicJointAPI instance names another axis than the joint's.
    NVIDIA's phase reads the relation anyway and passes it; our port fails it (the instance-name
    check, docs/fet022.md difference 13): exit 0 by default, 1 with --strict."""
    stage = str(data_dir / "invalid" / "MIMIC_INSTANCE_NAME.usda")
    assert cli.main(["sweep", stage]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "SimReady mimic_joint 1.1.0: pass"
    assert "do not decide the exit code" in out[1]
    assert any("FAIL" in line for line in out[2:])  # our finding is still shown
    assert cli.main(["sweep", stage, "--strict"]) == 1
    assert capsys.readouterr().out.splitlines()[1].startswith("Our port's findings below fail the run too")
    assert cli.main(["sweep", stage, "--no-simready"]) == 1
    assert not capsys.readouterr().out.startswith("SimReady")


@pytest.mark.slow
def test_report_is_a_simready_run_folder(data_dir, tmp_path, capsys):
    """--report DIR: our reports plus simready-benchmark's layout; its CLI (--report-only) ingests
    it without a warning and lists, per asset, NVIDIA's feature, test, version, status and message."""
    soft = soft_stage(tmp_path)
    good = data_dir / "geared_pair.usda"
    rep = tmp_path / "rep"
    assert cli.main(["sweep", str(good), str(soft), "--report", str(rep), "-q"]) == 1
    assert capsys.readouterr().out.startswith("SimReady mimic_joint 1.1.0: fail (warp: 1 pass, 1 fail)")
    data = json.loads((rep / "fet022_report.json").read_text())
    assert data["simready"]["headline"] == ["SimReady mimic_joint 1.1.0: fail (warp: 1 pass, 1 fail)"]
    assert data["exit_code"] == 1 and data["simready"]["port_exit_code"] == 1
    jsonschema = pytest.importorskip("jsonschema")
    from mimic_ext.fet022.reports import load_schema

    jsonschema.validate(data, load_schema())
    proc = subprocess.run(
        [sys.executable, "-c", "from simready_benchmark.cli.main import main; raise SystemExit(main())"]
        + ["--report-only", "--output-dir", str(rep)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"SIMREADY_QUIET_ENGINES_TOML": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning" not in proc.stderr.lower(), proc.stderr
    index = json.loads((rep / "report" / "test_results_index.json").read_text())
    rows = {}
    for key, asset in index["assets"].items():
        for prof in asset["profiles"]:
            for feat in prof["features"]:
                for t in feat["tests"]:
                    rows[key.rsplit("/", 1)[-1]] = (feat["id"], t["name"], t["version"], t["status"], t["message"])
    assert rows["geared_pair.usda"] == ("FET_022_PHYSX", "mimic_joint", "1.1.0", "pass", "")
    feat, name, version, status, message = rows[soft.name]
    assert (feat, name, version, status) == ("FET_022_PHYSX", "mimic_joint", "1.1.0", "fail")
    assert message.startswith("MIM: 1 of 1 mimic pair(s) failed the motion-magnitude check")


def test_mujoco_sweep_has_nvidias_headline(data_dir, tmp_path, capsys):
    """``--engine mujoco``: NVIDIA's phase runs on MuJoCo too (the adapter's mujoco backend), so
    the headline is its verdict there, not "not run"."""
    pytest.importorskip("mujoco")
    stage = str(data_dir / "geared_pair.usda")
    out = tmp_path / "r.json"
    assert cli.main(["sweep", stage, "--engine", "mujoco", "-q", "--json", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "SimReady mimic_joint 1.1.0: pass"
    (verdict,) = json.loads(out.read_text())["simready"]["verdicts"]
    assert (verdict["engine"], verdict["status"]) == ("mujoco", "pass")
    assert verdict["engine_version"].startswith("mujoco ")
    assert verdict["metrics"]["mim_pairs_passed"] == 1
