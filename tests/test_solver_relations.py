"""Relation structure: chains, redundancy, conflicts, rejected participants, runtime additions, compliance."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import StageBuilder, chain3, gripper, independent_pair, states_at

wp = pytest.importorskip("warp")
wp.config.quiet = True
from mimic_ext.errors import MimicInputError  # noqa: E402
from mimic_ext.solver import (  # noqa: E402
    MimicConflictError,
    MimicParticipantError,
    Solver,
    StepInProgressError,
    UnsupportedStageError,
    build_model,
)


def _trajectory(model, steps=60, dt=1.0 / 60.0, effort=None, q0=None):
    solver = Solver(model)
    s0, s1 = model.state(), model.state()
    if q0 is not None:
        s0.joint_q.assign(np.atleast_2d(q0))
    c = model.control()
    if effort is not None:
        c.joint_f.assign(np.atleast_2d(effort))
    out = []
    for _ in range(steps):
        solver.step(s0, s1, c, dt)
        s0, s1 = s1, s0
        out.append(s0.joint_q.numpy()[0].copy())
    return np.array(out), solver


def test_chain_composes_gains_and_offsets():
    b, (a, bb, c) = chain3(m1=2.0, m2=-0.5, c1=0.1, c2=0.02)
    model = build_model(b.stage)
    assert [r["status"] for r in model.relations()] == ["active", "active"]
    q0 = np.array([0.0, 0.1, 0.02 - 0.05])  # consistent: B = 2A + 0.1, C = -0.5 B + 0.02
    traj, solver = _trajectory(model, effort=[0.3, -0.1, 0.2], q0=q0)
    q = traj[-1]
    ia, ib, ic = (model.dof_index(p) for p in (a, bb, c))
    # float32 positions of order 1: residuals stay within 1e-6
    assert q[ib] == pytest.approx(2.0 * q[ia] + 0.1, abs=1e-6)
    assert q[ic] == pytest.approx(-0.5 * q[ib] + 0.02, abs=1e-6)
    # reflected inertia of the chain: I_A + 2^2 I_B + (2 * -0.5)^2 I_C, torque 0.3 + 2(-0.1) + (-1)(0.2)
    qdd = (0.3 - 0.2 - 0.2) / (0.5 + 4 * 1.5 + 1 * 2.5)
    assert q[ia] == pytest.approx(0.5 * qdd * (60 / 60) ** 2 * (1 + 1 / 60), rel=1e-3)  # semi-implicit Euler sum
    rows = solver.mimic_rows()
    assert len(rows) == 2 and all(r.status == "active" for r in rows)


@pytest.mark.parametrize("extra", ["duplicate", "reciprocal", "cycle"])
def test_redundant_relations_leave_motion_unchanged(extra):
    b, (a, bb, c) = chain3(m1=2.0, m2=-0.5, c1=0.1, c2=0.0)
    ref, _ = _trajectory(build_model(b.stage), effort=[0.3, -0.1, 0.2], q0=[0.0, 0.1, -0.05])
    if extra == "duplicate":
        b.mimic(bb, a, 2.0, 0.1, instance="rotZ")
    elif extra == "reciprocal":
        b.mimic(a, bb, 0.5, -0.05, instance="rotZ")
    else:  # A = (C + 0.05) / (-1)  closes A -> B -> C -> A consistently
        b.mimic(a, c, -1.0, -0.05, instance="rotZ")
    model = build_model(b.stage)
    assert sorted(r["status"] for r in model.relations()) == ["active", "active", "redundant"]
    traj, solver = _trajectory(model, effort=[0.3, -0.1, 0.2], q0=[0.0, 0.1, -0.05])
    # same maths, same float32 operations up to the order of additions: 1e-6 on O(0.1) angles
    np.testing.assert_allclose(traj, ref, atol=1e-6)
    red = [r for r in solver.mimic_rows() if r.status == "redundant"]
    assert red[0].impulse[0] == 0.0


def test_contradiction_and_gain_cycle_rejected_with_names():
    b, lead, fol = independent_pair(multiplier=1.0, offset=1.0)
    b.mimic(lead, fol, 1.0, 1.0, instance="rotZ")  # B = A + 1 and A = B + 1
    with pytest.raises(MimicConflictError) as err:
        build_model(b.stage)
    assert err.value.kind == MimicConflictError.CONTRADICTION
    assert "leader_joint" in str(err.value) and "follower_joint" in str(err.value)
    assert len(err.value.relations) == 2
    b, lead, fol = independent_pair(multiplier=2.0)
    b.mimic(lead, fol, 2.0, 0.0, instance="rotZ")  # gains multiply to 4, not 1
    with pytest.raises(MimicConflictError) as err:
        build_model(b.stage)
    assert err.value.kind == MimicConflictError.GAIN_CYCLE
    assert isinstance(err.value, MimicInputError)


def test_rejected_participants():
    b, lead, fol = independent_pair(multiplier=None)
    model = build_model(b.stage)
    solver = Solver(model)
    with pytest.raises(MimicParticipantError, match="cannot follow itself"):
        solver.add_mimic(fol, fol, 1.0)
    with pytest.raises(MimicParticipantError, match="/World/nothing"):
        solver.add_mimic("/World/nothing", lead, 1.0)
    with pytest.raises(MimicParticipantError, match="multiplier"):
        solver.add_mimic(fol, lead, 0.0)
    # spherical (left out of the tree) and fixed joints, and a floating base
    b, jl, jr = gripper(floating=True)
    sph_body = b.body("ball", mass=0.1, inertia=(1e-4, 1e-4, 1e-4))
    sph = b.spherical("ball_joint", "/World/palm", sph_body)
    from pxr import UsdPhysics

    UsdPhysics.Joint(b.stage.GetPrimAtPath(sph)).CreateExcludeFromArticulationAttr(True)
    fixed = b.fixed("weld", "/World/left", b.body("tip", mass=0.01, inertia=(1e-6, 1e-6, 1e-6)))
    model = build_model(b.stage)
    solver = Solver(model)
    with pytest.raises(MimicParticipantError, match=r"spherical|excluded"):
        solver.add_mimic(sph, jl, 1.0)
    with pytest.raises(MimicParticipantError, match="fixed"):
        solver.add_mimic(fixed, jl, 1.0)
    with pytest.raises(MimicParticipantError, match="floating base"):
        solver.add_mimic("/World/palm", jl, 1.0)
    # a spherical joint inside a tree moves its link, but takes part in no relation (three DOFs)
    b2, jl2, _ = gripper()
    sph2 = b2.spherical("ball_joint", "/World/palm", b2.body("ball", mass=0.1, inertia=(1e-4, 1e-4, 1e-4)))
    solver2 = Solver(build_model(b2.stage))
    for fol, lead in ((sph2, jl2), (jl2, sph2)):
        with pytest.raises(
            MimicParticipantError, match=r"ball_joint is a spherical joint; only revolute and prismatic"
        ):
            solver2.add_mimic(fol, lead, 1.0)


def test_add_mimic_refused_inside_a_step_and_conflict_leaves_model_unchanged():
    b, lead, fol = independent_pair(multiplier=1.0)
    model = build_model(b.stage)
    solver = Solver(model)
    seen = []

    def callback(s):
        try:
            s.add_mimic(lead, fol, 1.0)
        except StepInProgressError as exc:
            seen.append(exc)

    solver.callbacks.append(callback)
    s0, s1, c = model.state(), model.state(), model.control()
    solver.step(s0, s1, c, 1.0 / 60.0)
    assert len(seen) == 1 and "in progress" in str(seen[0])
    solver.callbacks.clear()
    with pytest.raises(MimicConflictError):
        solver.add_mimic(lead, fol, 1.0, 0.5)  # contradicts q_f = q_l
    assert len(model.relations()) == 1
    assert solver.add_mimic(lead, fol, 1.0, 0.0) == "redundant"  # the reciprocal of 1:1
    solver.step(s0, s1, c, 1.0 / 60.0)
    assert [r.status for r in solver.mimic_rows()] == ["active", "redundant"]


def _error_series(zeta: float, w: float, dt: float, steps: int):
    b, lead, fol = independent_pair(I_l=1.0, I_f=0.5, multiplier=None)
    b.mimic(fol, lead, 1.0, 0.0, natural_frequency=w, damping_ratio=zeta)
    model = build_model(b.stage)
    assert model.relations()[0]["status"] == "compliant"
    solver = Solver(model)
    s0, s1 = states_at(model, {fol: 0.1})
    c = model.control()
    errs = []
    for _ in range(steps):
        solver.step(s0, s1, c, dt)
        s0, s1 = s1, s0
        qq = s0.joint_q.numpy()[0]
        errs.append(qq[model.dof_index(fol)] - qq[model.dof_index(lead)])
    return np.array(errs)


def test_compliant_relation_oscillates_at_natural_frequency():
    w, dt = 20.0, 1e-3
    e = _error_series(0.1, w, dt, 2000)
    # zero crossings of the damped oscillation are half a damped period apart
    idx = np.where(np.sign(e[:-1]) != np.sign(e[1:]))[0]
    crossings = idx + e[idx] / (e[idx] - e[idx + 1])  # linear interpolation, in steps
    period = 2 * np.mean(np.diff(crossings)) * dt
    w_measured = 2 * math.pi / period / math.sqrt(1 - 0.1**2)
    assert w_measured == pytest.approx(w, rel=0.05)  # the 5%
    # and it decays at zeta w: amplitude ratio over one period exp(-2 pi zeta / sqrt(1 - zeta^2)) = 0.53
    peaks = [np.abs(e[int(a) : int(b2)]).max() for a, b2 in itertools.pairwise(crossings)]
    ratio = peaks[2] / peaks[0]
    assert ratio == pytest.approx(
        math.exp(-2 * math.pi * 0.1 / math.sqrt(0.99)), rel=0.1
    )  # implicit damping adds ~ w dt


def test_compliant_relation_critically_damped():
    w, dt = 10.0, 1e-3
    e = _error_series(1.0, w, dt, 1000)
    assert (e > 0).all()  # no overshoot
    t = np.arange(1, 1001) * dt
    analytic = 0.1 * (1 + w * t) * np.exp(-w * t)
    # implicit Euler at w dt = 0.01 shifts the decay by about 1%: 2e-3 of e0 = 0.1 absolute
    np.testing.assert_allclose(e, analytic, atol=2e-3)


def test_disabled_newton_relation_is_skipped():
    b, lead, fol = independent_pair(multiplier=None)
    from mimic_ext.schema import MimicRelation, set_relation

    set_relation(
        b.stage,
        MimicRelation(
            follower=fol, leader=lead, multiplier=1.0, offset=0.0, instance=None, schema="newton", enabled=False
        ),
    )
    model = build_model(b.stage)
    assert model.relations() == []
    assert any("disabled" in w for w in model.warnings)


def test_unsupported_joint_in_tree_names_it():
    from pxr import UsdPhysics

    b = StageBuilder()
    a = b.body("a")
    b._joint(UsdPhysics.DistanceJoint, "rope", None, a)
    with pytest.raises(UnsupportedStageError, match="/World/joints/rope"):
        build_model(b.stage)
