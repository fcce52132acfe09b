"""The ``mimic-ext`` command runs numpy's OpenBLAS on one thread unless the user set a number
(issue 43: its idle workers' spinning was about 0.1 s of a one-stage sweep's CPU)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the command's entry point with ``main`` replaced by a probe: the variable as the CLI leaves it,
#: and the threads of the process once numpy is loaded (Linux's /proc; -1 elsewhere)
PROBE = (
    "import os\nimport mimic_ext.cli as cli\n"
    "def probe():\n"
    "    import numpy\n"
    "    task = '/proc/self/task'\n"
    "    print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir(task)) if os.path.isdir(task) else -1)\n"
    "    return 0\n"
    "cli.main = probe\ncli.run()\n"
)


def _probe(**env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_command_asks_for_one_blas_thread_before_numpy_loads():
    value, threads = _probe()
    assert value == "1"
    assert int(threads) in (1, -1)  # numpy started no OpenBLAS worker


def test_a_users_blas_thread_count_is_kept():
    assert _probe(OPENBLAS_NUM_THREADS="2")[0] == "2"


def test_a_python_caller_of_main_keeps_its_setting():
    code = "import os, mimic_ext.cli\nprint(os.environ.get('OPENBLAS_NUM_THREADS'))"
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=base, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["None"]
