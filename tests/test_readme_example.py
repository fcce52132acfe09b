"""The README's Python example, run as a new user would (issue 43, first hour): in a fresh
process, quiet (no Warp banner, no "CUDA driver not found"), printing what it simulated with
the units it promises, and importing nothing it does not use."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_python() -> str:
    text = (ROOT / "README.md").read_text()
    block = text[text.index("```python\n") + len("```python\n") :]
    return block[: block.index("```")]


def test_readme_example_imports_only_what_it_uses():
    tree = ast.parse(_readme_python())
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert imported and imported <= used, f"imported, never used: {sorted(imported - used)}"


@pytest.mark.slow
def test_readme_example_is_quiet_and_says_what_it_simulated():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run(
        [sys.executable, "-c", _readme_python()], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr
    # nothing but the cold-compile note (a first run on a fresh machine) may reach stderr
    assert [ln for ln in r.stderr.splitlines() if not ln.startswith("mimic-ext: compiling")] == [], r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and "Warp" not in r.stdout, r.stdout
    assert lines[0] == "/Gears/Joints/gear_follower q = 2 x q_ref + 0.1 (rad)"
    leader, follower = map(
        float, re.fullmatch(r"after 1 s, 1024 envs: leader (\S+) rad, follower (\S+) rad", lines[1]).groups()
    )
    assert leader == pytest.approx(0.5, abs=1e-3)  # the 5 N m/rad drive has settled after 1 s (printed to 1e-4)
    assert follower == pytest.approx(2 * leader + 0.1, abs=2e-4)  # exact coupling; 2e-4: two 4-decimal roundings
    gap = float(re.fullmatch(r"largest \|follower - \(2 x leader \+ 0\.1\)\| over the envs: (\S+) rad", lines[2])[1])
    assert gap < 1e-5  # float32 at about 1 rad resolves 1.2e-7; the projection holds the relation to that
