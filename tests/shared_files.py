"""The files several test modules read: the shared robot assets and data/'s sample builder.

Each of those modules listed the shared robots and loaded ``data/make_samples.py`` with its own
copy of the same lines.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT.parent / "shared" / "assets"


def robot_files() -> list[str]:
    """The shared URDF files, then the MJCF files, each sorted, relative to ``ASSETS`` (none
    when the shared folder is absent: their tests then have no cases)."""
    if not ASSETS.is_dir():
        return []
    files = sorted(ASSETS.rglob("*.urdf")) + sorted(ASSETS.rglob("*.xml"))
    return [str(p.relative_to(ASSETS)) for p in files]


def load_samples() -> ModuleType:
    """``data/make_samples.py`` as a module (it is a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "data" / "make_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
