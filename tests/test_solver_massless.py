"""Massless links: a link with mass somewhere below it (the ``jointChainLink`` bodies our MJCF
importer writes between the joints of a multi-joint body) stays massless; only a link with no
mass anywhere in its subtree gets the documented default, with a warning naming it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import StageBuilder

from mimic_ext.solver import Solver, build_model
from mimic_ext.solver.stage_reader import DEFAULT_MASS


def _stage():
    """palm (fixed) -hinge X-> chain link (massless) -hinge Y-> phalanx (50 g) -hinge-> marker (massless leaf)."""
    bld = StageBuilder(gravity=9.81)
    palm = bld.body("palm", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), root=True)
    bld.fixed("fix", None, palm)
    chain = bld.body("virtual1", mass=None)
    bld.stage.GetPrimAtPath(chain).SetCustomDataByKey("mimicExtGenerated", "jointChainLink")
    phal = bld.body("phalanx", mass=0.05, inertia=(2e-5, 2e-5, 1e-5), com=(0.0, 0.0, -0.03))
    marker = bld.body("marker", mass=None)
    j1 = bld.revolute("palm_to_virtual1", palm, chain, "X", pos0=(0, 0, -0.02))
    j2 = bld.revolute("virtual1_to_phalanx", chain, phal, "Y")
    j3 = bld.revolute("phalanx_to_marker", phal, marker, "Z", pos0=(0, 0, -0.06))
    return bld, (chain, phal, marker), (j1, j2, j3)


def test_chain_link_with_mass_below_stays_massless_leaf_gets_default():
    bld, (chain, phal, marker), joints = _stage()
    with pytest.warns(UserWarning, match="no mass properties") as rec:
        model = build_model(bld.stage)
    mass = {lk.body: lk.mass for lk in model.links}
    assert mass[chain] == 0.0  # its joint moves the phalanx: no invented mass
    assert mass[phal] == pytest.approx(0.05)
    assert mass[marker] == DEFAULT_MASS  # nothing below it: the default
    text = " ".join(str(w.message) for w in rec)
    assert marker in text and chain not in text  # the warning names only the defaulted body
    # the massless link's joint still has inertia (the phalanx's): the step is well posed
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    for _ in range(60):
        solver.step(s0, s1, c, 1.0 / 240.0)
        s0, s1 = s1, s0
    assert not solver.nonfinite_envs()
    q = s0.joint_q.numpy()[0]
    assert np.isfinite(q).all()
