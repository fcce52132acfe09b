"""The documents the code cites live in this repository (docs/...), never beside it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITED = re.compile(r"\bdocs/([\w.-]+\.md)\b")


def test_every_doc_the_package_cites_is_in_the_repo():
    cited = {}
    for py in (ROOT / "mimic_ext").rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        assert "shared/docs" not in text and "SOLVER_NOTES" not in text, f"{py}: cites a document outside the repo"
        for name in CITED.findall(text):
            cited.setdefault(name, py)
    assert "solver_design.md" in cited                      # the projection's maths, cited by section
    missing = {name: str(py.relative_to(ROOT)) for name, py in cited.items() if not (ROOT / "docs" / name).is_file()}
    assert not missing, f"cited but absent under docs/: {missing}"
