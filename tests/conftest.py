"""Shared fixtures: the real public assets (read in place, never copied) and data/."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_assets() -> Path:
    """../shared/assets beside the project; tests that need it skip when it is absent."""
    path = ROOT.parent / "shared" / "assets"
    if not path.is_dir():
        pytest.skip(f"shared assets not present at {path}")
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The project's committed sample stages (data/, data/invalid/)."""
    return ROOT / "data"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The importer cases of ``importer_cases.py`` written into a temporary folder (a module's
    tests share them)."""
    from importer_cases import write_cases

    cases = write_cases(tmp_path_factory.mktemp("built"))
    if cases is None:
        pytest.skip("trimesh or Pillow absent (the mesh extra builds these cases' meshes)")
    return cases
