"""``mimic-ext`` ends without the interpreter's teardown (``process_exit.exit_now``), losing nothing:
Python's and C's buffered output, the atexit handlers, the exit code; a thread still running is
waited for, as a normal exit does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_buffered_output_atexit_handlers_and_the_code_survive():
    out = _run(
        """
        import atexit, ctypes, sys
        from mimic_ext.process_exit import exit_now
        atexit.register(lambda: print("atexit ran", flush=False))
        sys.stdout.write("python, unflushed|")
        sys.stderr.write("stderr, unflushed")
        libc = ctypes.CDLL(None)
        libc.printf(b"C stdio, buffered|")
        exit_now(3)
        """
    )
    assert out.returncode == 3
    assert "python, unflushed|" in out.stdout and "C stdio, buffered|" in out.stdout, out.stdout
    assert "atexit ran" in out.stdout and out.stderr == "stderr, unflushed"


def test_a_running_thread_is_waited_for():
    out = _run(
        """
        import threading, time
        from mimic_ext.process_exit import exit_now
        threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished"))).start()
        exit_now(0)
        """
    )
    assert out.returncode == 0 and "thread finished" in out.stdout, out


def test_the_command_keeps_its_exit_code_and_its_last_line():
    """``python -m mimic_ext`` goes through ``exit_now``: the one error line and exit 2 of a missing input."""
    out = subprocess.run(
        [sys.executable, "-m", "mimic_ext", "list", "no_such_stage.usda"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 2 and out.stderr == "mimic-ext: error: no_such_stage.usda: no such file\n"
