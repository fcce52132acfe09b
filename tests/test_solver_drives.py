"""Drives with a max force: implicit PD whose force bound is a row of the same solve.

A bounded drive stays an exact implicit PD while its force is within the bound, and is
otherwise solved together with its joint's other rows (limits, caps, friction): it never
exceeds its bound, never adds energy, and a bound above the drive's peak changes nothing.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import DEG, StageBuilder, independent_pair, states_at

wp = pytest.importorskip("warp")
wp.config.quiet = True
from pxr import Sdf  # noqa: E402

from mimic_ext.schema.stage_io import open_stage  # noqa: E402
from mimic_ext.solver import Solver, build_model  # noqa: E402

ASSETS = Path(__file__).resolve().parents[1].parent / "shared" / "assets"
ISAAC = ASSETS / "robotiq_isaacsim_usd_2f85/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_parallel_grip.usda"
# the Isaac Robotiq 2F-85's finger drive (3 N m/deg, 2e-4 N m s/deg) on a rotor of its inertia
KP, KD, INERTIA, TARGET = 172.0, 0.0115, 6.7e-4, 0.4


def rotor(max_force: float):
    b = StageBuilder()
    body = b.body("rotor", mass=1.0, inertia=(1.0, 1.0, INERTIA))
    j = b.revolute("hinge", None, body, "Z")
    b.drive(
        j,
        stiffness=KP * DEG,
        damping=KD * DEG,
        target=TARGET / DEG,
        max_force=None if math.isinf(max_force) else max_force,
    )
    return build_model(b.stage)


def rotor_trajectory(max_force: float, fps: int, seconds: float = 1.0) -> np.ndarray:
    """(q, u) after each step, float64, from rest at 0 toward the 0.4 rad target."""
    model = rotor(max_force)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    out = []
    for _ in range(int(seconds * fps)):
        solver.step(s0, s1, c, 1.0 / fps)
        s0, s1 = s1, s0
        out.append((float(s0.joint_q.numpy()[0, 0]), float(s0.joint_qd.numpy()[0, 0])))
    return np.array(out)


def huber_energy(q: np.ndarray, u: np.ndarray, max_force: float) -> np.ndarray:
    """Kinetic energy plus the potential of a spring whose force saturates at max_force: the
    energy a clamped PD drive can only dissipate (its force is clamp(-kp e - kd u), so
    dE/dt = u (clamp(-kp e - kd u) - clamp(-kp e)) <= 0)."""
    e = np.abs(q - TARGET)
    knee = max_force / KP
    pot = np.where(e <= knee, 0.5 * KP * e * e, max_force * (e - knee) + 0.5 * KP * knee * knee)
    return 0.5 * INERTIA * u * u + pot


@pytest.mark.parametrize("fps", [60, 240])
@pytest.mark.parametrize("max_force", [math.inf, 62.0, 26.0, 5.0])
def test_rotor_with_the_isaac_drive_settles_at_its_target(max_force, fps):
    tr = rotor_trajectory(max_force, fps)
    q, u = tr[:, 0], tr[:, 1]
    assert q[-1] == pytest.approx(TARGET, abs=1e-6)  # rad: settled, float32 of 0.4
    late = q[fps // 4 :]  # from 0.25 s on it stays settled (no limit cycle)
    assert np.abs(late - TARGET).max() < 1e-4
    # the drive's force, I du / dt, never exceeds its bound (float32 round-off of the impulse)
    force = INERTIA * np.diff(np.r_[0.0, u]) * fps
    assert np.abs(force).max() <= max_force * (1 + 1e-5)
    # a clamped drive never adds energy: the saturating-spring energy never grows, step to step
    if not math.isinf(max_force):
        E = huber_energy(q, u, max_force)
        assert (np.diff(E) <= 1e-7 * E[0]).all()


@pytest.mark.parametrize("fps", [60, 240])
def test_bound_above_the_drive_peak_changes_nothing(fps):
    free = rotor_trajectory(math.inf, fps)
    peak = np.abs(INERTIA * np.diff(np.r_[0.0, free[:, 1]]) * fps).max()
    assert peak < 26.0  # the implicit drive's peak force (12.4 N m at 240 Hz)
    for bound in (62.0, 26.0):
        np.testing.assert_array_equal(rotor_trajectory(bound, fps), free)  # bitwise


def test_bound_below_the_peak_is_slower_but_settles():
    free, held = rotor_trajectory(math.inf, 240), rotor_trajectory(5.0, 240)
    assert held[0, 0] < 0.5 * free[0, 0]  # 5 N m of the 12 N m the drive wants: a slower start
    # it reaches the target later than the unclamped drive, then settles as above
    first = lambda tr: int(np.argmax(tr[:, 0] >= TARGET))  # noqa: E731
    assert first(held) > first(free)


def test_bounded_drive_pushing_into_a_limit_rests_on_it():
    b = StageBuilder()
    body = b.body("arm", mass=1.0, inertia=(1.0, 1.0, 0.01))
    j = b.revolute("hinge", None, body, "Z", limits_deg=(-30.0, 30.0))
    b.drive(j, stiffness=50.0 * DEG, damping=1.0 * DEG, target=80.0, max_force=2.0)
    b.stage.GetPrimAtPath(j).AddAppliedSchema("PhysxJointAPI")
    b.stage.GetPrimAtPath(j).CreateAttribute("physxJoint:jointFriction", Sdf.ValueTypeNames.Float).Set(0.1)
    model = build_model(b.stage)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    for _ in range(240):
        solver.step(s0, s1, c, 1.0 / 240)
        s0, s1 = s1, s0
    # the limit, the drive at its 2 N m bound and friction are one exact block: it rests on the limit
    assert s0.joint_q.numpy()[0, 0] == pytest.approx(30 * DEG, abs=1e-6)
    assert abs(s0.joint_qd.numpy()[0, 0]) < 1e-6


def test_bounded_drive_on_the_leader_moves_the_pair_with_its_bound():
    """One step from rest: the pair accelerates at max_force over the reflected inertia."""
    b, lead, fol = independent_pair(I_l=1e-3, I_f=2e-3, multiplier=-2.0)
    b.drive(lead, stiffness=500.0, damping=1.0, target=30.0, max_force=0.02)
    model = build_model(b.stage)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    solver.step(s0, s1, c, 1.0 / 240)
    qdd = s1.joint_qd.numpy()[0, model.dof_index(lead)] * 240
    assert qdd == pytest.approx(0.02 / (1e-3 + 4 * 2e-3), rel=1e-4)  # float32 on O(1) values


@pytest.mark.parametrize("fps", [60, 240])
def test_isaac_2f85_without_its_velocity_cap_settles(fps):
    if not ISAAC.exists():
        pytest.skip(f"{ISAAC} not present")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(open_stage(ISAAC).stage, fix_base=True)
    j = model.dof_index("/Robotiq_2F_85/Robotiq_2F_85/Joints/finger_joint")
    assert model.drive(model.joint_paths[j])["max_force"] == pytest.approx(26.0)
    model.max_velocity[:] = np.inf  # the cap that hid the limit cycle
    model.sync()
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    tp = c.joint_target_q.numpy()
    tp[:, j] = 0.4
    c.joint_target_q.assign(tp)
    q = []
    for _ in range(2 * fps):
        solver.step(s0, s1, c, 1.0 / fps)
        s0, s1 = s1, s0
        q.append(float(s0.joint_q.numpy()[0, j]))
    q = np.array(q)
    assert np.ptp(q[-fps:]) < 1e-6  # rad: at rest during the last second
    assert q[-1] == pytest.approx(0.4, abs=1e-3)  # the fingers' weight sags it by 2e-4 rad
    for rel in solver.mimic_rows():  # and the five followers hold their relations
        assert abs(rel.position_error[0]) < 1e-5


def test_velocity_cap_bounds_the_position_error_correction():
    cap = 0.25  # rad/s on the follower
    b, lead, fol = independent_pair(I_l=1.0, I_f=0.5, multiplier=1.0)
    b.stage.GetPrimAtPath(fol).AddAppliedSchema("PhysxJointAPI")
    b.stage.GetPrimAtPath(fol).CreateAttribute("physxJoint:maxJointVelocity", Sdf.ValueTypeNames.Float).Set(cap / DEG)
    model = build_model(b.stage)
    solver = Solver(model)
    s0, s1 = states_at(model, {fol: 0.1})  # 0.1 rad of error to correct
    c = model.control()
    il, jf = model.dof_index(lead), model.dof_index(fol)
    for _ in range(180):
        solver.step(s0, s1, c, 1.0 / 60)
        s0, s1 = s1, s0
        u = s0.joint_qd.numpy()[0]
        # 1e-6 rad/s: float32 slack; the cap bounds the follower and, through the relation,
        # the leader (the old correction drove the leader at 1.55 rad/s)
        assert abs(u[jf]) <= cap + 1e-6
        assert abs(u[il]) <= cap + 1e-6
    q = s0.joint_q.numpy()[0]
    assert abs(q[jf] - q[il]) < 1e-5  # and the error is still removed (0.1 rad at <= 0.25 rad/s)
