"""Issue 43 (first hour): the README's short tour writes beside the project (``out/``), never to
a shared ``/tmp`` where users of one machine overwrite each other's files."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_tour_writes_under_out_not_tmp():
    text = (ROOT / "README.md").read_text()
    tour = text[text.index("## A short tour") : text.index("In Python:")].replace("\\\n", " ")
    commands = [ln for ln in tour.splitlines() if ln.startswith("mimic-ext ")]
    outputs = [o for c in commands for o in re.findall(r"(?:-o|--html|--json|--report) (\S+)", c)]
    assert outputs and all(o.startswith("out/") for o in outputs), outputs
    assert "/tmp/" not in tour
    assert "mkdir -p out" in tour
    assert "/out/" in (ROOT / ".gitignore").read_text().split()
