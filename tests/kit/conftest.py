"""Kit tests: the stand-ins of ``omni``/``carb`` (tests/kit_stubs) on sys.path for these modules only.

Each test module gets fresh stand-ins (a new app, Property window, command registry) and
leaves nothing behind: the stand-ins and ``mimic_ext.kit`` are dropped from ``sys.modules``
and the path is removed at the end of the module, so the rest of the suite never sees an
``omni`` package. Test modules therefore import ``omni``/``mimic_ext.kit`` inside tests or
through the fixtures below.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

STUBS = Path(__file__).resolve().parents[1] / "kit_stubs"
PROJECT = Path(__file__).resolve().parents[2]
DATA = PROJECT / "data"
ROBOTIQ_SAMPLE = DATA / "robotiq_style_linkage.usda"
EXT_ID = "mimic_ext-0.1.0"


def _purge() -> None:
    for name in list(sys.modules):
        if name in ("omni", "carb") or name.startswith(("omni.", "carb.", "mimic_ext.kit")):
            del sys.modules[name]
    mimic = sys.modules.get("mimic_ext")
    if mimic is not None and hasattr(mimic, "kit"):
        delattr(mimic, "kit")


@pytest.fixture(scope="module", autouse=True)
def kit_stubs():
    """Fresh stand-ins for one test module."""
    sys.path.insert(0, str(STUBS))
    _purge()
    import omni.kit.app

    yield
    omni.kit.app.get_app()._stub_close()
    sys.path.remove(str(STUBS))
    _purge()


class Kit:
    """What a test does to Kit: run frames, open stages, select, find widgets, click."""

    def __init__(self):
        import omni.kit.app
        import omni.kit.undo
        import omni.kit.window.property
        import omni.ui
        import omni.usd

        self.app = omni.kit.app.get_app()
        self.ui = omni.ui
        self.usd = omni.usd
        self.undo = omni.kit.undo
        self.property = omni.kit.window.property
        self.context = omni.usd.get_context()

    # frames
    def frames(self, n: int = 4) -> None:
        for _ in range(n):
            self.app.update()

    def run_until(self, predicate, max_frames: int = 2000) -> int:
        return self.app._stub_run_until(predicate, max_frames)

    # stage and selection
    def open(self, path) -> object:
        assert self.context.open_stage(str(path)), f"cannot open {path}"
        self.frames(2)
        return self.context.get_stage()

    def select(self, *paths: str) -> None:
        self.context.get_selection().set_selected_prim_paths([str(p) for p in paths])
        self.frames(4)

    # widgets
    def windows(self):
        return [w for w in self.ui.Workspace.get_windows() if w.visible]

    def walk(self, root=None):
        roots = [root] if root is not None else [w.frame for w in self.windows()]
        stack = list(reversed(roots))
        while stack:
            widget = stack.pop()
            yield widget
            stack.extend(reversed(self.ui.Inspector.get_children(widget)))

    def find(self, identifier: str, root=None):
        found = [w for w in self.walk(root) if w.identifier == identifier]
        assert len(found) <= 1, f"{len(found)} widgets with identifier {identifier}"
        return found[0] if found else None

    def find_prefix(self, prefix: str, root=None) -> list:
        return [w for w in self.walk(root) if w.identifier.startswith(prefix)]

    def property_root(self):
        return self.property.get_window()._stub_frame()

    def type_into(self, widget, value) -> None:
        """What a user's edit does to a field's model: begin edit, new value, end edit (Enter)."""
        widget.model.begin_edit()
        widget.model.set_value(value)
        widget.model.end_edit()
        self.frames(4)

    def click(self, widget) -> None:
        assert widget is not None, "no such button"
        widget.call_clicked_fn()
        self.frames(4)


@pytest.fixture
def kit():
    """A clean Kit: no stage, empty undo stack, nothing selected."""
    k = Kit()
    k.context.close_stage()
    k.undo.clear_stack()
    k.frames(2)
    yield k
    k.context.close_stage()
    k.undo.clear_stack()
    k.frames(2)


@pytest.fixture
def extension(kit):
    """The mimic_ext extension, started as Kit starts it, shut down afterwards."""
    from mimic_ext.kit import MimicExtension

    ext = MimicExtension()
    ext.on_startup(EXT_ID)
    kit.frames(2)
    yield ext
    ext.on_shutdown()
    kit.frames(2)


def sample_copy(name: str, tmp_path: Path) -> Path:
    """A private copy of ``data/<name>``: tests edit stages, and USD shares an open layer process-wide."""
    src = DATA / name
    if not src.is_file():
        pytest.skip(f"{src} is not there (written by data/make_samples.py)")
    dst = tmp_path / Path(name).name
    shutil.copyfile(src, dst)
    return dst


@pytest.fixture
def data_copy(tmp_path):
    """``data_copy("invalid/X.usda")`` -> a private copy of a file under data/ (skips when absent)."""
    return lambda name: sample_copy(name, tmp_path)


@pytest.fixture
def robotiq_sample(tmp_path) -> Path:
    return sample_copy(ROBOTIQ_SAMPLE.name, tmp_path)


@pytest.fixture
def stage(kit, extension, robotiq_sample):
    """The Robotiq-style sample open in the stand-in Kit, with the extension running."""
    return kit.open(robotiq_sample)


@pytest.fixture
def physx_stand_in():
    """The omni.physx stand-in, fresh: nothing attached or playing, counters at zero, the default physics
    (real PhysX through ovphysx where installed); the same again afterwards."""
    import omni.physx

    omni.physx._stub_reset()
    omni.physx._stub_use_backend(None)
    yield omni.physx
    omni.physx._stub_reset()
    omni.physx._stub_use_backend(None)
