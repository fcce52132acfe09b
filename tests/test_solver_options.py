"""Solver options are each solver's own: solvers with different options share one Model and each
steps bitwise as it would alone (a second Solver once wrote its erp onto the shared Model)."""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import independent_pair, states_at

pytest.importorskip("warp")
from mimic_ext.solver import Solver, StepInputError, build_model

DT = 1.0 / 60.0
STEPS = 24


def _pair_model():
    """A geared pair started 0.2 rad off its relation, the follower against a limit: erp sets how
    fast the error goes, iterations how well the limit row and the relation settle together."""
    b, leader, follower = independent_pair(multiplier=2.0, offset=0.1, limits_f=(-20.0, 20.0))
    model = build_model(b.stage)
    return model, leader, follower


def _run(solver, s0, s1, control, steps):
    out = []
    for _ in range(steps):
        solver.step(s0, s1, control, DT)
        s0, s1 = s1, s0
        out.append(s0.joint_q.numpy().copy())
    return np.array(out)


def _alone(options: dict) -> np.ndarray:
    model, leader, follower = _pair_model()
    s0, s1 = states_at(model, {leader: 0.3, follower: 0.0})
    c = model.control()
    c.joint_f.fill_(0.5)
    return _run(Solver(model, **options), s0, s1, c, STEPS)


def test_two_solvers_with_different_options_on_one_model_step_as_each_alone():
    soft, stiff = {"erp": 0.3, "iterations": 8}, {"erp": 1.0, "iterations": 2}
    want_soft, want_stiff = _alone(soft), _alone(stiff)
    assert not np.array_equal(want_soft, want_stiff)  # the options matter here
    model, leader, follower = _pair_model()
    a0, a1 = states_at(model, {leader: 0.3, follower: 0.0})
    b0, b1 = states_at(model, {leader: 0.3, follower: 0.0})
    ca, cb = model.control(), model.control()
    ca.joint_f.fill_(0.5)
    cb.joint_f.fill_(0.5)
    first = Solver(model, **soft)
    got_soft = list(_run(first, a0, a1, ca, 3))  # steps before the second exists
    a0, a1 = (a1, a0) if len(got_soft) % 2 else (a0, a1)
    second = Solver(model, **stiff)  # built between the first's steps
    got_stiff = []
    for _ in range(STEPS):
        if len(got_soft) < STEPS:
            got_soft += list(_run(first, a0, a1, ca, 1))
            a0, a1 = a1, a0
        got_stiff += list(_run(second, b0, b1, cb, 1))
        b0, b1 = b1, b0
    assert np.array_equal(np.array(got_soft), want_soft)  # bitwise
    assert np.array_equal(np.array(got_stiff), want_stiff)
    assert (first.erp, first.iterations, second.erp, second.iterations) == (0.3, 8, 1.0, 2)


def test_set_options_changes_only_that_solver():
    model, leader, follower = _pair_model()
    one, two = Solver(model), Solver(model)
    one.set_options(erp=1.0, iterations=2)
    assert (one.erp, one.iterations, two.erp, two.iterations) == (1.0, 2, 0.3, 8)
    assert one._data.erp == 1.0 and two._data.erp == pytest.approx(0.3)


def test_contact_iterations_belong_to_the_solver():
    """A box dropped flat on its four corners: no pass over the contact rows (it sinks) against 16."""
    from test_contact_restitution import drop_stage

    def heights(model, solver, steps=90):
        a, b, c = model.state(), model.state(), model.control()
        out = []
        for _ in range(steps):
            solver.step(a, b, c, 1.0 / 600.0)
            a, b = b, a
            out.append(a.joint_q.numpy()[0].copy())
        return np.array(out)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lone, shared = build_model(drop_stage(0.01, box=True)), build_model(drop_stage(0.01, box=True))
        lone16 = build_model(drop_stage(0.01, box=True))
    want1 = heights(lone, Solver(lone, contact_iterations=0))
    want16 = heights(lone16, Solver(lone16))
    assert not np.array_equal(want1, want16)
    s1, s16 = Solver(shared, contact_iterations=0), Solver(shared)
    assert np.array_equal(heights(shared, s1), want1) and np.array_equal(heights(shared, s16), want16)


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"erp": 1.5}, "erp = 1.5"),
        ({"erp": math.nan}, "erp = nan"),
        ({"iterations": 0}, "iterations = 0"),
        ({"contact_iterations": -1}, "contact_iterations = -1"),
        ({"iterations": 2.5}, "iterations = 2.5"),
    ],
)
def test_bad_options_are_refused_naming_them(bad, words):
    model, _, _ = _pair_model()
    with pytest.raises(StepInputError, match=words.replace("(", r"\(")):
        Solver(model, **bad)
    with pytest.raises(StepInputError, match="unknown option"):
        Solver(model).set_options(erps=1.0)


def test_options_are_keyword_only():
    model, _, _ = _pair_model()
    with pytest.raises(TypeError):
        Solver(model, 0.3)


def test_the_mass_only_factor_is_kept_only_once_a_solver_asks_for_exact_drives():
    """Exact drives factor the mass-only matrix HM; a model whose solvers all use the implicit
    drive does not carry its work-space fields (their size is 0), the first exact solver adds them."""
    from solver_stages import StageBuilder

    b = StageBuilder()
    j = b.revolute("hinge", None, b.body("rotor", mass=1.0, inertia=(1.0, 1.0, 0.01)), "Z")
    b.drive(j, stiffness=1.0, damping=0.1, target=10.0)
    model = build_model(b.stage)
    Solver(model)
    assert model.workspace.fields["HM"][1] == 0 and not model.mass_factor_kept
    exact = Solver(model, drive_discretisation="exact")
    assert model.mass_factor_kept and model.workspace.fields["HM"][1] > 0
    assert exact._data.drive_exact == 1
