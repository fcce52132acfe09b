"""The garbage collector held off while a ``mimic-ext sweep`` starts (issue 43, ``startup_gc``):
off in the CLI process until the sweep's first unit of work has reported, on again after it; on at
once for any other command; a Python caller's collector never touched."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from mimic_ext import startup_gc

ROOT = Path(__file__).resolve().parents[1]
STAGE = str(ROOT / "data" / "geared_pair.usda")

#: runs the CLI as ``python -m mimic_ext`` does, recording whether the collector was on while the
#: sweep's unit ran and when the process ended; prints the record as the last line of stderr
PROBE = """
import gc, json, sys
import mimic_ext.fet022.batch as batch
import mimic_ext.process_exit as process_exit
seen = {}
unit = batch.sweep_one
def sweep_one(*a, **k):
    seen["in_unit"] = gc.isenabled()
    return unit(*a, **k)
batch.sweep_one = sweep_one
end = process_exit.exit_now
def exit_now(code):
    seen["at_exit"] = gc.isenabled()
    print(json.dumps(seen), file=sys.stderr, flush=True)
    end(code)
process_exit.exit_now = exit_now
from mimic_ext import cli
cli.run()
"""


def _probe(*argv: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stderr.strip().splitlines()[-1])


def test_a_cli_sweep_runs_its_first_unit_with_the_collector_off_and_ends_with_it_on():
    assert _probe("sweep", STAGE, "--engine", "warp", "--no-simready") == {"in_unit": False, "at_exit": True}


def test_any_other_cli_command_has_the_collector_on():
    assert _probe("list", STAGE) == {"at_exit": True}


def test_a_python_caller_keeps_its_collector(capsys):
    from mimic_ext import cli

    assert gc.isenabled()
    assert cli.main(["sweep", STAGE, "--engine", "warp", "--no-simready"]) == 0
    assert gc.isenabled()
    startup_gc.resume()  # nothing paused here: nothing to resume
    assert gc.isenabled()


def test_pause_leaves_a_collector_someone_else_turned_off_off():
    gc.disable()
    try:
        startup_gc.pause()
        startup_gc.resume()
        assert not gc.isenabled()
    finally:
        gc.enable()
    startup_gc.pause()
    assert not gc.isenabled()
    startup_gc.resume()
    assert gc.isenabled()
