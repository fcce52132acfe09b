"""Physics of the mimic coupling: gear-reflected inertia, error decay, impulses, limits, drives."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from pxr import Sdf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import DEG, gripper, independent_pair, spinning_wheel, states_at

wp = pytest.importorskip("warp")
wp.config.quiet = True
from mimic_ext.solver import Solver, build_model  # noqa: E402
from mimic_ext.solver.inspect import momentum  # noqa: E402


def _run(model, solver, steps, dt, effort=None, q=None, u=None, control=None):
    s0, s1 = model.state(), model.state()
    if q is not None:
        s0.joint_q.assign(np.atleast_2d(q))
    if u is not None:
        s0.joint_qd.assign(np.atleast_2d(u))
    c = control or model.control()
    if effort is not None:
        c.joint_f.assign(np.atleast_2d(effort))
    for _ in range(steps):
        solver.step(s0, s1, c, dt)
        s0, s1 = s1, s0
    return s0


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
@pytest.mark.parametrize("m", [1.0, -1.0, 2.0, -0.5])
def test_gear_reflected_inertia_and_coupling_torque(kind, m):
    I_l, I_f, tau_l, tau_f = 2.0, 0.5, 1.5, 0.3
    b, lead, fol = independent_pair(kind, kind, I_l=I_l, I_f=I_f, multiplier=m)
    model = build_model(b.stage)
    solver = Solver(model)
    dt = 1.0 / 60.0
    s = _run(model, solver, 1, dt, effort=[tau_l, tau_f])
    il, jf = model.dof_index(lead), model.dof_index(fol)
    qdd = s.joint_qd.numpy()[0, il] / dt
    expected = (tau_l + m * tau_f) / (I_l + m * m * I_f)
    # 1e-4 relative (the bound); float32 round-off on these O(1) numbers is ~1e-7
    assert qdd == pytest.approx(expected, rel=1e-4)
    torque = solver.mimic_rows()[0].impulse[0] / dt
    assert torque == pytest.approx(I_f * m * expected - tau_f, rel=1e-4)
    # velocity relation exact at the end of the step (float32: a few ulps of |u| ~ 0.03)
    u = s.joint_qd.numpy()[0]
    assert abs(u[jf] - m * u[il]) <= 1e-7


def test_mixed_revolute_prismatic_pair():
    I_l, I_f, m = 0.8, 3.0, 0.25  # m in metres per radian
    b, lead, fol = independent_pair("revolute", "prismatic", I_l=I_l, I_f=I_f, multiplier=m)
    model = build_model(b.stage)
    solver = Solver(model)
    dt = 1.0 / 120.0
    s = _run(model, solver, 1, dt, effort=[0.7, -0.2])
    qdd = s.joint_qd.numpy()[0, model.dof_index(lead)] / dt
    assert qdd == pytest.approx((0.7 + m * -0.2) / (I_l + m * m * I_f), rel=1e-4)  # as above


def test_position_error_decays_at_erp():
    m, c = -2.0, 0.05
    b, lead, fol = independent_pair(multiplier=m, offset=c)
    model = build_model(b.stage)
    solver = Solver(model, erp=0.3)
    e0 = 0.1
    s0, s1 = states_at(model, {lead: 0.2, fol: m * 0.2 + c + e0})
    ctl = model.control()
    errors = []
    for _ in range(21):
        solver.step(s0, s1, ctl, 1.0 / 60.0)
        s0, s1 = s1, s0
        errors.append(solver.mimic_rows()[0].position_error[0])  # error at the start of each step
    for k, e in enumerate(errors):
        # 1% of the expected value (the bound); float32 keeps ~1e-7 absolute on q ~ 0.5
        assert e == pytest.approx(e0 * 0.7**k, rel=1e-2, abs=1e-7)
    assert abs(errors[20]) < 1e-3 * e0


def test_violating_velocity_matched_by_momentum_conserving_impulse_pair():
    I_l, I_f, m = 2.0, 0.5, 2.0
    b, lead, fol = independent_pair(I_l=I_l, I_f=I_f, multiplier=m)
    model = build_model(b.stage)
    solver = Solver(model)
    il, jf = model.dof_index(lead), model.dof_index(fol)
    u = np.zeros(2)
    u[il], u[jf] = 1.0, -0.4
    s = _run(model, solver, 1, 1.0 / 60.0, u=u)
    out = s.joint_qd.numpy()[0]
    # the gear-space momentum I_l u_l + m I_f u_f is what an ideal gear train conserves
    p0 = I_l * 1.0 + m * I_f * -0.4
    assert out[il] == pytest.approx(p0 / (I_l + m * m * I_f), rel=1e-6)  # float32, O(1) values
    assert out[jf] == pytest.approx(m * out[il], rel=1e-6)
    mu = solver.mimic_rows()[0].impulse[0]
    # follower got mu, leader -m mu: each joint's momentum change is its impulse
    assert I_f * (out[jf] + 0.4) == pytest.approx(mu, rel=1e-5)
    assert I_l * (out[il] - 1.0) == pytest.approx(-m * mu, rel=1e-5)


def test_floating_system_conserves_momentum_and_coupling_does_no_work():
    b, jl, jr = gripper(floating=True, gravity=0.0, multiplier=-1.0)
    b.drive(jl, stiffness=0.05, damping=0.001, target=20.0)  # USD: per degree, degrees
    model = build_model(b.stage)
    solver = Solver(model)
    n1 = len(model.joints)
    q = model.state().joint_q.numpy()[0]
    u = np.zeros(model.dof_count)
    u[model.dof_index(jl)] = 0.5  # violates the relation: the gears engage in step 1
    u[n1 : n1 + 3] = (0.3, -0.2, 0.1)  # spinning ...
    u[n1 + 3 : n1 + 6] = (0.05, 0.02, -0.01)  # ... and drifting base
    lin0, ang0 = momentum(model, q, u)
    s0, s1 = model.state(), model.state()
    s0.joint_qd.assign(u[None])
    ctl = model.control()
    worst_lin = worst_ang = worst_work = 0.0
    for step in range(2000):
        solver.step(s0, s1, ctl, 1.0 / 240.0)
        s0, s1 = s1, s0
        if step % 50 == 49 or step < 3:
            lin, ang = momentum(model, s0.joint_q.numpy()[0], s0.joint_qd.numpy()[0])
            worst_lin = max(worst_lin, np.linalg.norm(lin - lin0) / np.linalg.norm(lin0))
            worst_ang = max(worst_ang, np.linalg.norm(ang - ang0) / np.linalg.norm(ang0))
            row = solver.mimic_rows()[0]
            uu = s0.joint_qd.numpy()[0]
            power = row.impulse[0] * (uu[model.dof_index(jr)] - row.multiplier * uu[model.dof_index(jl)])
            worst_work = max(worst_work, abs(power))
    # 1e-5 relative (the bound) over 2,000 steps
    assert worst_lin < 1e-5
    assert worst_ang < 1e-5
    # the coupling's power is zero: u_f - m u_l is exact up to float32 round-off (~1e-8 here)
    assert worst_work < 1e-9


def _limited_pair(where: str, m: float = 2.0):
    lim = (-30.0, 30.0)  # degrees
    kw = {"limits_f": lim} if where == "follower" else {"limits_l": lim}
    b, lead, fol = independent_pair(I_l=1.0, I_f=0.5, multiplier=m, **kw)
    return b, lead, fol


@pytest.mark.parametrize("push", ["leader", "follower"])
def test_follower_limit_stops_leader(push):
    m = 2.0
    b, lead, fol = _limited_pair("follower", m)
    model = build_model(b.stage)
    solver = Solver(model)
    eff = np.zeros(2)
    eff[model.dof_index(lead if push == "leader" else fol)] = 2.0
    s = _run(model, solver, 240, 1.0 / 60.0, effort=eff)
    q = s.joint_q.numpy()[0]
    # the follower rests on its limit (30 deg), the leader at the corresponding 15 deg;
    # 1e-5 rad: speculative limit rows stop exactly at the bound up to float32 round-off
    assert q[model.dof_index(fol)] == pytest.approx(30 * DEG, abs=1e-5)
    assert q[model.dof_index(lead)] == pytest.approx(15 * DEG, abs=1e-5)


def test_leader_limit_stops_follower_and_velocity_limit_and_friction_act_on_both():
    m = -0.5
    b, lead, fol = _limited_pair("leader", m)
    fprim = b.stage.GetPrimAtPath(fol)
    from pxr import Sdf

    fprim.AddAppliedSchema("PhysxJointAPI")  # PhysX reads physxJoint:* only with it
    fprim.CreateAttribute("physxJoint:maxJointVelocity", Sdf.ValueTypeNames.Float).Set(30.0)  # deg/s
    model = build_model(b.stage)
    solver = Solver(model)
    il, jf = model.dof_index(lead), model.dof_index(fol)
    eff = np.zeros(2)
    eff[il] = -3.0
    s0, s1 = model.state(), model.state()
    ctl = model.control()
    ctl.joint_f.assign(eff[None])
    for _ in range(200):
        solver.step(s0, s1, ctl, 1.0 / 60.0)
        s0, s1 = s1, s0
        u = s0.joint_qd.numpy()[0]
        # the follower's velocity cap (30 deg/s) also caps the leader at 60 deg/s; 1e-5 rad/s slack
        assert abs(u[jf]) <= 30 * DEG + 1e-5
        assert abs(u[il]) <= 60 * DEG + 1e-5
    q = s0.joint_q.numpy()[0]
    assert q[il] == pytest.approx(-30 * DEG, abs=1e-5)  # as in the test above
    assert q[jf] == pytest.approx(m * -30 * DEG, abs=1e-5)
    # friction on the follower (0.4 N m) holds the leader against 0.15 N m (< |m| 0.4 = 0.2) ...
    fprim.CreateAttribute("physxJoint:jointFriction", Sdf.ValueTypeNames.Float).Set(0.4)
    model = build_model(b.stage)
    solver = Solver(model)
    eff[il] = 0.15
    s = _run(model, solver, 30, 1.0 / 60.0, effort=eff)
    assert np.abs(s.joint_qd.numpy()[0]).max() < 1e-6  # exactly stuck up to round-off
    # ... and reduces its acceleration above that: (tau - |m| F) / (I_l + m^2 I_f)
    eff[il] = 1.0
    s = _run(model, solver, 1, 1.0 / 60.0, effort=eff)
    qdd = s.joint_qd.numpy()[0, il] * 60.0
    assert qdd == pytest.approx((1.0 - 0.5 * 0.4) / (1.0 + 0.25 * 0.5), rel=1e-4)  # float32 as above


def test_drive_only_the_leader_follower_drive_loses():
    m = 2.0
    b, lead, fol = independent_pair(I_l=0.01, I_f=0.01, multiplier=m)
    # USD gains are per degree: 1 N m/deg = 57.3 N m/rad
    b.drive(lead, stiffness=1.0, damping=0.05, target=30.0)
    b.drive(fol, stiffness=0.5, damping=0.05, target=0.0)
    model = build_model(b.stage)
    solver = Solver(model)
    s = _run(model, solver, 600, 1.0 / 60.0)
    q = s.joint_q.numpy()[0]
    kl, kf = 1.0 / DEG, 0.5 / DEG
    q_l = 30 * DEG * kl / (kl + m * m * kf)  # the follower's spring acts through the gear
    assert q[model.dof_index(lead)] == pytest.approx(q_l, abs=1e-5)  # converged; float32
    assert q[model.dof_index(fol)] == pytest.approx(m * q_l, abs=1e-5)
    # the coupling carries the follower drive's torque to the leader: mu/dt = -(follower drive force)
    tau = solver.mimic_rows()[0].impulse[0] * 60.0
    assert tau == pytest.approx(kf * m * q_l, rel=1e-3)  # static equilibrium after 10 s; drive damping residue


def test_implicit_pd_is_stable_with_stiff_gains_and_max_force_clamps():
    b, lead, fol = independent_pair(I_l=1e-4, I_f=1e-4, multiplier=-1.0)
    b.drive(lead, stiffness=200.0, damping=0.5, target=20.0)  # omega*dt ~ 180 at dt = 1/60
    model = build_model(b.stage)
    solver = Solver(model)
    s = _run(model, solver, 120, 1.0 / 60.0)
    q = s.joint_q.numpy()[0]
    assert np.isfinite(q).all()
    assert q[model.dof_index(lead)] == pytest.approx(20 * DEG, abs=1e-4)  # settled (overdamped, implicit)
    # max force: one step from rest accelerates at max_force / reflected inertia
    b.drive(lead, stiffness=200.0, damping=0.5, target=20.0, max_force=0.01)
    model = build_model(b.stage)
    solver = Solver(model)
    s = _run(model, solver, 1, 1.0 / 60.0)
    qdd = s.joint_qd.numpy()[0, model.dof_index(lead)] * 60.0
    assert qdd == pytest.approx(0.01 / 2e-4, rel=1e-4)  # float32 as above


def test_sleeping_system_wakes_on_runtime_relation():
    b, lead, fol = independent_pair(multiplier=None)
    model = build_model(b.stage)
    solver = Solver(model)
    s0, s1 = states_at(model, {fol: 0.3})
    ctl = model.control()
    for _ in range(10):  # at rest: nothing moves
        solver.step(s0, s1, ctl, 1.0 / 60.0)
        s0, s1 = s1, s0
    assert np.abs(s0.joint_qd.numpy()).max() == 0.0
    assert solver.add_mimic(fol, lead, 1.0, 0.0) == "active"
    for _ in range(40):
        solver.step(s0, s1, ctl, 1.0 / 60.0)
        s0, s1 = s1, s0
    q = s0.joint_q.numpy()[0]
    # 0.3 * 0.7^40 ~ 2e-7: the error is gone, the joints met in between (momentum conserved)
    assert abs(q[model.dof_index(fol)] - q[model.dof_index(lead)]) < 1e-6


def wheel_speeds(stage, joint: str, steps: int = 6, precision: str = "float32") -> np.ndarray:
    """The joint's speed over each step (rad/s), from its positions."""
    model = build_model(stage, precision=precision)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    j = model.dof_index(joint)
    q = [float(s0.joint_q.numpy()[0, j])]
    for _ in range(steps):
        solver.step(s0, s1, c, 1.0 / 240.0)
        s0, s1 = s1, s0
        q.append(float(s0.joint_q.numpy()[0, j]))
    return np.diff(np.unwrap(q)) * 240.0  # a joint without limits reads within +-pi


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_authored_velocity_caps_clamp_the_link_and_unauthored_ones_do_not(precision):
    """physxRigidBody:maxAngularVelocity / maxLinearVelocity, where authored, hold a spinning
    link at its cap as PhysX does (tests/test_solver_physx.py compares the same stages); PhysX's
    unauthored default (100 rad/s) is not applied: 150 rad/s spins on (docs/solver.md, "Velocity
    caps"). Bound 1e-5 relative: the speed is the cap scaled once, float32 rounding of a few
    products (the wheel is free of any force, so nothing else moves it)."""
    cases = [
        (dict(speed=20.0, max_angular=5.0), 5.0),
        (dict(speed=20.0), 20.0),
        (dict(speed=150.0), 150.0),
        (dict(speed=20.0, max_linear=2.0, offset=0.5), 4.0),  # its centre of mass at 2 m/s
        (dict(speed=-20.0, max_angular=5.0, max_linear=2.0, offset=0.5), -4.0),  # the tighter cap
    ]
    for kw, expected in cases:
        b, _, joint = spinning_wheel(**kw)
        speeds = wheel_speeds(b.stage, joint, precision=precision)
        assert speeds == pytest.approx(np.full_like(speeds, expected), rel=1e-5), kw


def test_a_capped_follower_slows_its_leader_so_the_relation_holds():
    """A cap on a relation's follower link scales the leader's velocity with it (they share a
    column): the follower at its 5 rad/s cap, the leader at half of it (q_f = 2 q_l), and the
    relation's residual stays at float32 rounding (bound 1e-5 rad after 24 steps)."""
    b, lead, fol = independent_pair(I_l=0.5, I_f=0.5, multiplier=2.0)
    for path, speed in ((lead, 4.0), (fol, 8.0)):
        prim = b.stage.GetPrimAtPath(path)
        prim.AddAppliedSchema("PhysicsJointStateAPI:angular")
        prim.CreateAttribute("state:angular:physics:velocity", Sdf.ValueTypeNames.Float).Set(speed / DEG)
    body = b.stage.GetPrimAtPath("/World/follower")
    body.AddAppliedSchema("PhysxRigidBodyAPI")
    body.CreateAttribute("physxRigidBody:maxAngularVelocity", Sdf.ValueTypeNames.Float).Set(5.0 / DEG)
    model = build_model(b.stage)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    il, jf = model.dof_index(lead), model.dof_index(fol)
    for _ in range(24):
        solver.step(s0, s1, c, 1.0 / 240.0)
        s0, s1 = s1, s0
    u, q = s0.joint_qd.numpy()[0], s0.joint_q.numpy()[0]
    assert u[jf] == pytest.approx(5.0, rel=1e-5) and u[il] == pytest.approx(2.5, rel=1e-5)
    assert abs(q[jf] - 2.0 * q[il]) < 1e-5
