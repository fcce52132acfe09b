"""Which stages FET022 refuses to judge for want of mass: an asset that authors mass 0 on every
body, never one that authors no mass (the engines' documented defaults apply: USD Physics
computes one from the colliders; Isaac Sim's compliant 2F-85 configuration authors none)."""

import re
from pathlib import Path

import pytest
from solver_schedules import COMPLIANT

from mimic_ext.fet022.stage_checks import massless_stage
from mimic_ext.schema import open_stage

ROOT = Path(__file__).resolve().parents[1]


def _geared(tmp_path, edit):
    path = tmp_path / "g.usda"
    path.write_text(edit((ROOT / "data" / "geared_pair.usda").read_text()))
    return open_stage(path).stage


def test_every_mass_authored_zero_cannot_be_judged(tmp_path):
    stage = _geared(tmp_path, lambda t: re.sub(r"float physics:mass = [0-9.]+", "float physics:mass = 0", t))
    assert "every rigid body has mass 0" in massless_stage(stage)


def test_no_mass_authored_is_judged(tmp_path):
    """USD Physics: no mass and no density authored, the mass comes from the colliders' volume
    at the default density, as PhysX computes it."""
    stage = _geared(tmp_path, lambda t: re.sub(r"\n\s*float physics:mass = [0-9.]+", "", t))
    assert "physics:mass" not in stage.GetRootLayer().ExportToString()
    assert massless_stage(stage) is None


def test_isaac_sims_compliant_2f85_is_judged():
    if not COMPLIANT.exists():
        pytest.skip(f"shared asset missing: {COMPLIANT}")
    assert massless_stage(open_stage(COMPLIANT).stage) is None
