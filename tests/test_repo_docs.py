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
    assert "solver_design.md" in cited  # the projection's maths, cited by section
    missing = {name: str(py.relative_to(ROOT)) for name, py in cited.items() if not (ROOT / "docs" / name).is_file()}
    assert not missing, f"cited but absent under docs/: {missing}"


MANUAL = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
#: a repository path as the manual writes it (not a Kit setting such as /exts/mimic_ext/fet022/engine)
REPO_PATH = re.compile(r"(?<![\w/.])((?:docs|benchmarks|tests|mimic_ext|data)/[\w./-]*\w)(\*[\w.]*)?")
#: a benchmark or figures command, inside one code span (which may wrap a line)
COMMAND = re.compile(r"`python ((?:benchmarks|tests)/\w+\.py)([^`]*)`")


def test_every_repository_path_the_manual_and_results_cite_exists():
    missing = []
    for doc in MANUAL + [RESULTS]:
        for path, glob in REPO_PATH.findall(doc.read_text(encoding="utf-8")):
            found = list(ROOT.glob(path + glob)) if glob else [ROOT / path] if (ROOT / path).exists() else []
            if not found:
                missing.append(f"{doc.relative_to(ROOT)}: {path}{glob}")
    assert not missing, missing


def test_every_command_the_manual_and_results_quote_names_a_real_script_and_its_flags():
    bad, seen = [], 0
    for doc in MANUAL + [RESULTS]:
        for script, args in COMMAND.findall(doc.read_text(encoding="utf-8")):
            seen += 1
            where = f"{doc.relative_to(ROOT)}: python {script}"
            if not (ROOT / script).is_file():
                bad.append(where)
                continue
            source = (ROOT / script).read_text(encoding="utf-8")
            bad += [f"{where} {flag}" for flag in re.findall(r"--[a-z][\w-]*", args) if f'"{flag}"' not in source]
    assert seen > 20, f"only {seen} commands found: the pattern no longer matches how the docs quote them"
    assert not bad, f"commands whose script or flag does not exist: {bad}"


def test_the_manual_is_not_a_lab_notebook():
    """Loads and per-round history belong in benchmarks/RESULTS.md (dated, with the command)."""
    notebook = re.compile(
        r"\bload (?:average )?(?:about )?\d|\b(?:this|last) round\b|\bthe round before\b", re.IGNORECASE
    )
    found = [
        f"{doc.relative_to(ROOT)}: {m.group(0)!r}"
        for doc in MANUAL
        for m in notebook.finditer(doc.read_text(encoding="utf-8").replace("\n", " "))
    ]
    assert not found, found
    assert "benchmarks/RESULTS.md" in (ROOT / "docs" / "solver.md").read_text(encoding="utf-8")
