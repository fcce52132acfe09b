"""The GPU check's plumbing: the solver's default device, the tests' ``--device`` option, and
``benchmarks/device_check.sh`` on a machine without CUDA (it says so and exits 0)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import gripper

wp = pytest.importorskip("warp")
from mimic_ext.solver import build_model, default_device, set_default_device  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_models_are_built_on_the_sessions_device(solver_device):
    """Without a device named, a model is on the session's (``--device``, "cpu" without it);
    a caller that names one gets that one."""
    b, *_ = gripper()
    assert default_device() == str(wp.get_device(solver_device))
    assert str(build_model(b.stage).device) == str(wp.get_device(solver_device))
    assert str(build_model(b.stage, device="cpu").device) == "cpu"


def test_set_default_device_returns_the_previous_and_refuses_a_missing_device():
    previous = set_default_device("cpu")
    try:
        assert default_device() == "cpu"
        with pytest.raises((ValueError, RuntimeError)):
            set_default_device("cuda:99")
        assert default_device() == "cpu"  # a refused device leaves the default as it was
    finally:
        set_default_device(previous)
    assert default_device() == previous


def test_the_device_option_refuses_a_device_warp_lacks_in_one_line():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--device", "cuda:99", "tests/test_math3d.py"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 4, out.stdout + out.stderr  # pytest's usage error
    assert "--device cuda:99: no such Warp device (this machine has: cpu" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.skipif(wp.get_cuda_device_count() > 0, reason="this machine has CUDA: the check would run on it")
def test_device_check_without_cuda_says_so_and_exits_0():
    out = subprocess.run(
        ["bash", "benchmarks/device_check.sh"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines() == [
        "device_check: no CUDA device here (Warp sees none): the GPU check did not run"
    ]


def test_device_check_refuses_an_unknown_argument():
    out = subprocess.run(
        ["bash", "benchmarks/device_check.sh", "--sizes", "4"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2 and "unknown argument --sizes" in out.stdout
