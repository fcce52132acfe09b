"""What the per-engine sweep tests share: the stages they run and a recorder of what an engine read.

The shared assets are read in place; URDF/MJCF ones are imported into the test's own
temporary folder with mimic_ext.importers (never into the project).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pxr import Sdf, Usd

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
DATA = ROOT / "data"
ROBOTIQ = (
    SHARED
    / "robotiq_isaacsim_usd_2f85"
    / "Gripper_2F85"
    / "configuration"
    / "Robotiq_2F_85_config_physics_parallel_grip.usda"
)
INSPIRE = SHARED / "dexurdf_inspire_hand_right" / "inspire_hand_right.urdf"
FRANKA = SHARED / "menagerie_franka_hand" / "hand.xml"
DATA_STAGES = sorted(p.name for p in DATA.glob("*.usda"))


def shared(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"shared asset not present at {path}")
    return path


class Recording:
    """An engine that keeps the ``Trace`` of its last run (what it read, its notes)."""

    def __init__(self, engine):
        self.engine = engine
        self.name = engine.name
        self.supported_kinds = engine.supported_kinds
        self.trace = None

    def versions(self):
        return self.engine.versions()

    def simulate(self, *args, **kwargs):
        self.trace = self.engine.simulate(*args, **kwargs)
        return self.trace


def verdicts(result) -> dict[str, str]:
    """Stage status and every follower's status, by follower name."""
    return {"<stage>": result.status, **{f.name: f.status for f in result.followers}}


def import_to(tmp: Path, source: Path, schema: str = "physx", self_collisions: bool | None = None) -> Path:
    """``source`` imported to ``tmp/<name>.usda``; ``self_collisions`` authors
    ``physxArticulation:enabledSelfCollisions`` on the articulation root when given."""
    from mimic_ext.importers import import_robot

    out = tmp / f"{source.stem}_{schema}.usda"
    result = import_robot(shared(source), out=out, schema=schema)
    if self_collisions is not None:
        stage = Usd.Stage.Open(str(out))
        root = stage.GetPrimAtPath(result.robot_path)
        root.AddAppliedSchema("PhysxArticulationAPI")
        root.CreateAttribute("physxArticulation:enabledSelfCollisions", Sdf.ValueTypeNames.Bool).Set(self_collisions)
        stage.GetRootLayer().Save()
    return out
