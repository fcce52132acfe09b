"""Engines isolated: an engine whose worker is killed by a signal mid-run is that engine's error,
naming the signal, the engine and the asset; the other engines' verdicts and reports stand."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from mimic_ext.fet022.batch import CRASH_ENV
from mimic_ext.fet022.isolation import isolated_engines, signal_name

ROOT = Path(__file__).resolve().parents[1]
STAGES = [ROOT / "data" / "geared_pair.usda", ROOT / "data" / "chain3.usda"]


def test_signal_names():
    assert signal_name(-signal.SIGBUS) == f"SIGBUS ({int(signal.SIGBUS)})"
    assert signal_name(3) == "exit code 3"


def test_which_engines_run_apart():
    """Several engines: every built-in one apart; alone (``mimic-ext sweep``), our warp engine stays
    in-process (cheap) and the engines on third-party native code go apart; an engine registered at
    run time (Kit's) never."""
    assert isolated_engines(["warp", "physx", "kitphysx"]) == {"warp", "physx"}
    assert isolated_engines(["warp"], alone=True) == set()
    assert isolated_engines(["warp:cuda:0"], alone=True) == set()
    assert isolated_engines(["mujoco"], alone=True) == {"mujoco"}
    # from Python a single engine stays here unless asked (an unguarded script keeps working)
    assert isolated_engines(["mujoco"]) == set()


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_engine_killed_mid_run_leaves_the_others(tmp_path, jobs):
    """The warp engine passes both stages; the second engine's worker kills itself with SIGBUS (the
    signal PhysX died of on the Inspire hand) on every stage: here (-j 1, one worker per engine) and
    in the pool (-j 2, the pool breaks and its units are retried each in a worker of its own)."""
    pytest.importorskip("mujoco")
    rep = tmp_path / "rep"
    env = {**os.environ, "PYTHONPATH": str(ROOT), CRASH_ENV: "mujoco:SIGBUS"}
    cmd = [sys.executable, "-m", "mimic_ext", "sweep", *map(str, STAGES)]
    cmd += ["--engine", "warp,mujoco", "--report", str(rep), "-j", jobs]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr  # a stage could not be swept
    assert "[mujoco]" in proc.stderr and "SIGBUS" in proc.stderr
    data = json.loads((rep / "fet022_report.json").read_text())
    by = {(Path(s["asset"]).name, s["engine"]): s for s in data["stages"]}
    for stage in STAGES:
        assert by[(stage.name, "warp")]["status"] == "pass"
        crashed = by[(stage.name, "mujoco")]
        assert crashed["status"] == "error"
        assert "the mujoco engine crashed" in crashed["reason"] and "SIGBUS (7)" in crashed["reason"]
        assert stage.name in crashed["reason"]
        for engine in ("warp", "mujoco"):
            assert (rep / "result" / stage.stem / engine / "result.json").is_file()
    assert not list(tmp_path.glob("core*"))  # the staged crash leaves no core file


@pytest.mark.slow
def test_one_engine_alone_crashing_still_writes_its_report(tmp_path):
    """``mimic-ext sweep X --engine mujoco`` whose engine dies (the issue: PhysX's SIGBUS on the
    Inspire hand, exit 135, no message, no JSON): exit 2, the signal named, the JSON written."""
    pytest.importorskip("mujoco")
    env = {**os.environ, "PYTHONPATH": str(ROOT), CRASH_ENV: "mujoco:SIGSEGV"}
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "mimic_ext", "sweep", str(STAGES[0]), "--engine", "mujoco", "--json", str(out)]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    (stage,) = json.loads(out.read_text())["stages"]
    assert stage["status"] == "error" and "SIGSEGV" in stage["reason"] and "mujoco engine crashed" in stage["reason"]
