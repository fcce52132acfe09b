"""Spherical joints (``PhysicsSphericalJoint``, MJCF ``ball``) in the solver's trees and loops.

A tree spherical joint is a link with a quaternion (x, y, z, w: the child's joint frame in the
parent's) and three angular-velocity DOFs in the child's joint frame, integrated on the sphere
(MuJoCo's ``ball`` convention: its ``qpos`` quaternion w-first, ``qvel`` in the child frame).
Checked against MuJoCo (trajectory), against mechanics (energy over 10 s at 240 Hz, the
small-oscillation period's closed form) and against the all-revolute four-bar (a spherical
closure, a spherical tree joint inside a loop). Energy is ``T + V`` with the potential measured
from the pivot's height (MuJoCo's ``data.energy`` with the pivot at the origin).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, UsdGeom, UsdPhysics
from solver_stages import StageBuilder, four_bar, gripper, spinning_wheel

from mimic_ext.math3d import axis_angle, mat_to_quat, quat_to_mat, quat_wxyz, quat_xyzw
from mimic_ext.schema import MimicRelation, set_relation, validate
from mimic_ext.solver import MimicParticipantError, Solver, StageValueError, UnsupportedStageError, build_model
from mimic_ext.solver.inspect import body_poses, kinetic_energy, link_kinematics
from mimic_ext.solver.stage_reader import SPHERICAL

G = 9.81
DT = 1.0 / 240.0
#: the pendulum: a 1 kg bob, its centre of mass D below the pivot, principal inertias I (kg m^2)
M, D, I = 1.0, 0.5, (0.02, 0.03, 0.01)


def _quat(axis, angle) -> Gf.Quatf:
    r = Gf.Rotation(Gf.Vec3d(*axis), math.degrees(angle)).GetQuat()
    return Gf.Quatf(r)


def pendulum(tilt=((1.0, 0.3, 0.0), 0.36), gravity=G):
    """The bob hung from the world by a spherical joint at the origin, turned by ``tilt``
    (axis, angle) at the stage's initial pose."""
    b = StageBuilder(gravity=gravity)
    bob = b.body("bob", mass=M, inertia=I, com=(0, 0, -D))
    joint = b.spherical("ball", None, bob)
    UsdGeom.Xformable(b.stage.GetPrimAtPath(bob)).AddOrientOp().Set(_quat(*tilt))
    return b, joint, bob


def energy(model, q, u) -> float:
    """T + V (J), V from the world origin's height (the pivots here)."""
    poses, _, _ = link_kinematics(model, q, u)
    pe = -sum(lk.mass * float(model.gravity @ (t[:3, :3] @ lk.com + t[:3, 3])) for lk, t in zip(model.links, poses))
    return kinetic_energy(model, q, u) + pe


def run(model, q0, u0, steps, every=1):
    """(q, u) rows every ``every`` steps of ``Solver.step`` at 240 Hz from (q0, u0)."""
    solver = Solver(model)
    a, b, c = model.state(), model.state(), model.control()
    a.joint_q.assign(np.asarray(q0, float)[None])
    a.joint_qd.assign(np.asarray(u0, float)[None])
    qs, us = [], []
    for i in range(steps):
        solver.step(a, b, c, DT)
        a, b = b, a
        if (i + 1) % every == 0:
            qs.append(a.joint_q.numpy()[0].astype(float))
            us.append(a.joint_qd.numpy()[0].astype(float))
    return np.array(qs), np.array(us)


def crossings_period(t: np.ndarray, x: np.ndarray) -> float:
    """The mean period of ``x(t)`` from its upward zero crossings (linear interpolation)."""
    up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    times = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
    assert len(times) >= 3, "too few periods"
    return float((times[-1] - times[0]) / (len(times) - 1))


def test_spherical_joint_is_a_tree_link_with_a_quaternion():
    b, joint, bob = pendulum()
    model = build_model(b.stage)
    (link,) = model.links
    assert link.jtype == SPHERICAL and link.path == joint and link.joint is None
    assert (model.coord_count, model.dof_count, model.joints) == (4, 3, [])
    # the quaternion starts at the body's authored orientation (x, y, z, w); 1e-6: float32 state
    want = quat_xyzw(mat_to_quat(axis_angle(np.array([1.0, 0.3, 0.0]), 0.36)))
    q0 = model.state().joint_q.numpy()[0]
    assert np.allclose(q0, want, atol=1e-6) or np.allclose(q0, -want, atol=1e-6)
    # and the bodies are where the stage has them (1e-6 m: float32 quaternion)
    pose = body_poses(model, q0)[bob]
    stage_pose = np.array(UsdGeom.Xformable(b.stage.GetPrimAtPath(bob)).ComputeLocalToWorldTransform(0)).T
    assert np.allclose(pose, stage_pose, atol=1e-6)


def test_a_model_compiles_the_spherical_cap_and_momentum_code_only_when_it_has_them():
    """The spherical joints' code, the velocity caps and the free trees' momentum restoration are
    compile-time switches of the kernels (``kernels(balls=, caps=, momentum=)``, a Warp module
    each), so the common model, with none, compiles none (benchmarks/cold_compile.py); each model
    picks the variant it needs."""
    plain = build_model(spinning_wheel(20.0)[0].stage)
    assert (plain.kernels.balls, plain.kernels.caps, plain.kernels.momentum) == (False, False, False)
    assert plain.kernels.module == "mimic_solver_float32"
    floating = build_model(gripper(floating=True)[0].stage)
    assert (floating.kernels.balls, floating.kernels.caps, floating.kernels.momentum) == (False, False, True)
    assert floating.kernels.module == "mimic_solver_momentum_float32"
    capped = build_model(spinning_wheel(20.0, max_angular=5.0)[0].stage)
    assert (capped.kernels.balls, capped.kernels.caps) == (False, True)
    assert capped.kernels.module == "mimic_solver_caps_float32"
    ball = build_model(pendulum()[0].stage, precision="float64")
    assert (ball.kernels.balls, ball.kernels.caps, ball.kernels.module) == (True, False, "mimic_solver_balls_float64")


def coned(limit0, limit1=None, tilt=0.15, outward=True, axis="Z", towards=(1.0, 0.3, 0.0)):
    """The pendulum with a cone limit (degrees) about its joint's ``axis``, tilted by ``tilt`` about
    ``towards``; with ``outward`` gravity points up (+Z), so the bob, below the pivot, falls away
    from the cone's axis onto its edge and rests pressed against it: the row carries the weight,
    not just a passing swing."""
    b, joint, bob = pendulum(tilt=(towards, tilt))
    if outward:
        UsdPhysics.Scene(b.stage.GetPrimAtPath("/World/physicsScene")).GetGravityDirectionAttr().Set(Gf.Vec3f(0, 0, 1))
    sj = UsdPhysics.SphericalJoint(b.stage.GetPrimAtPath(joint))
    sj.CreateAxisAttr(axis)
    sj.CreateConeAngle0LimitAttr(limit0)
    sj.CreateConeAngle1LimitAttr(limit0 if limit1 is None else limit1)
    return b, joint, bob


def swing_deg(qs) -> np.ndarray:
    """The swing (degrees) of each (x, y, z, w) row: the angle between the child's joint-frame z
    axis and the parent's (the cone's axis in ``coned``)."""
    return np.degrees([math.acos(min(1.0, max(-1.0, quat_to_mat(quat_wxyz(q))[2, 2]))) for q in qs])


def test_cone_limit_is_read_circular_and_elliptical_or_nan_refused():
    b, joint, _ = pendulum()
    sj = UsdPhysics.SphericalJoint(b.stage.GetPrimAtPath(joint))
    sj.CreateConeAngle0LimitAttr(-1.0)  # UsdPhysics: negative = not limited
    sj.CreateConeAngle1LimitAttr(float("inf"))
    assert build_model(b.stage).links[0].cone == math.inf
    sj.GetConeAngle0LimitAttr().Set(30.0)
    sj.GetConeAngle1LimitAttr().Set(30.0)
    sj.CreateAxisAttr("Y")
    (link,) = build_model(b.stage).links
    assert link.cone == pytest.approx(math.radians(30.0), abs=1e-12)  # exact conversion of a double
    assert np.array_equal(link.cone_axis, [0.0, 1.0, 0.0])
    assert link.cone1 == link.cone
    sj.GetConeAngle1LimitAttr().Set(20.0)  # elliptical: read, both half-angles
    (link,) = build_model(b.stage).links
    assert (link.cone, link.cone1) == (math.radians(30.0), math.radians(20.0))
    sj.GetConeAngle1LimitAttr().Set(-1.0)  # limited on one angle only: refused
    with pytest.raises(UnsupportedStageError, match=r"/World/joints/ball: physics:coneAngle0Limit = 30.0.* deg and"):
        build_model(b.stage)
    sj.GetConeAngle1LimitAttr().Set(float("nan"))
    with pytest.raises(StageValueError, match=r"/World/joints/ball: physics:coneAngle1Limit is nan"):
        build_model(b.stage)


#: Within the cone: swing <= limit + 0.01 deg. Measured at most 1.0e-4 deg past it pressed
#: against it, spinning (float32; ``python benchmarks/spherical_checks.py --cone``): the row's
#: speculative target stops the swing at the limit within the step, leaving the float32 state's
#: rounding and the row direction's turn within a step; a row with the wrong sign or axis lets
#: the bob fall to 180 deg.
CONE_TOL_DEG = 0.01


@pytest.mark.parametrize("tilt_deg", [8.6, 20.0, 28.6], ids=["inside", "at-edge", "outside"])
def test_pendulum_stays_within_its_cone(tilt_deg):
    """The pendulum pushed outward onto a 20 deg cone, spinning about the cone's axis at 2 rad/s,
    2 s at 240 Hz: released inside, at the edge or outside (8.6 deg past it; back within 0.1 s:
    erp 0.3 per step, measured 3 steps), its swing stays within the cone and ends against it."""
    b, _, _ = coned(20.0, tilt=math.radians(tilt_deg))
    model = build_model(b.stage)
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.array([0.0, 0.0, 2.0]), 480)
    sw = swing_deg(qs)
    held = sw[24:] if tilt_deg > 20.0 else sw
    assert held.max() <= 20.0 + CONE_TOL_DEG
    assert sw[-1] >= 20.0 - CONE_TOL_DEG  # resting on the cone's edge (unlimited: it falls to 180)


def ellipse_excess_deg(qs, limit0: float, limit1: float) -> np.ndarray:
    """Each (x, y, z, w) row's swing past an elliptical cone about z (degrees; <= 0 inside), as
    PhysX's ``PxJointLimitCone`` bounds it: the swing quaternion's tangent-quarter-angle parts
    about x and y (the axes after z) within ``tan(limit0 / 4)`` and ``tan(limit1 / 4)``
    (coneAngle0Limit about x, coneAngle1Limit about y): along the swing axis u the bound is
    ``4 atan(1 / sqrt((u_x / tan(L0 / 4))^2 + (u_y / tan(L1 / 4))^2))``."""
    t0, t1 = math.tan(math.radians(limit0) / 4.0), math.tan(math.radians(limit1) / 4.0)
    out = []
    for q in qs:
        c = quat_to_mat(quat_wxyz(q))[:, 2]  # the child's cone axis in the parent's frame
        theta = math.acos(min(1.0, max(-1.0, c[2])))
        u = np.array([-c[1], c[0]]) / max(math.hypot(c[0], c[1]), 1e-300)  # z x c, normalised
        bound = 4.0 * math.atan(1.0 / math.hypot(u[0] / t0, u[1] / t1))
        out.append(math.degrees(theta - bound))
    return np.array(out)


@pytest.mark.parametrize(
    ("towards", "bound"), [((1.0, 0.0, 0.0), 30.0), ((0.0, 1.0, 0.0), 15.0)], ids=["about-x", "about-y"]
)
def test_pendulum_stays_within_each_principal_angle_of_an_elliptical_cone(towards, bound):
    """A 30 x 15 deg elliptical cone about z (coneAngle0Limit 30, coneAngle1Limit 15), the
    pendulum pushed outward, released 8.6 deg off about x or y, 2 s at 240 Hz (float32): it falls
    onto the cone and rests at that direction's angle (PhysX's mapping, measured on ovphysx:
    coneAngle0 bounds the swing about the axis after the cone's, x here; the physx test below),
    never past it by more than ``CONE_TOL_DEG`` (measured: never past, at rest 5e-6 deg inside,
    float32); with coneAngle0/1 swapped (or their axes) it rests at the other bound."""
    b, _, _ = coned(30.0, 15.0, tilt=0.15, towards=towards)
    model = build_model(b.stage)
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(3), 480)
    sw = swing_deg(qs)
    assert sw.max() <= bound + CONE_TOL_DEG
    assert sw[-1] >= bound - CONE_TOL_DEG
    assert ellipse_excess_deg(qs, 30.0, 15.0).max() <= CONE_TOL_DEG


#: An oblique swing slides along the elliptical cone's edge (its row along the ellipse's normal):
#: within 0.1 deg of the ellipse (measured 0.04 deg past it, float32: the row's normal and bound
#: are taken at the step's start and the swing turns along the edge within the step).
ELLIPSE_SLIDE_TOL_DEG = 0.1


def test_elliptical_cone_edge_slides_an_oblique_swing_to_its_wide_axis():
    """The pendulum released 8.6 deg off about (1, 1, 0) onto a 30 x 15 deg cone: pressed
    outward, it slides along the edge towards the wide (30 deg, about x) direction, as on a
    frictionless wall (PhysX's also reaches 30 deg), staying within ``ELLIPSE_SLIDE_TOL_DEG`` of
    the ellipse; a row along the swing (not the ellipse's normal) holds it where it lands, about
    19 deg, as friction would."""
    b, _, _ = coned(30.0, 15.0, tilt=0.15, towards=(1.0, 1.0, 0.0))
    model = build_model(b.stage)
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(3), 480)
    assert ellipse_excess_deg(qs, 30.0, 15.0).max() <= ELLIPSE_SLIDE_TOL_DEG
    assert swing_deg(qs).max() >= 29.0


def test_cone_limit_inside_a_loop_holds_and_keeps_it_closed():
    """The four-bar under gravity with joint B (a tree joint of the loop) spherical, 1 s at 240 Hz
    (float64): its coupler folds back to 179.9 deg from the crank about Z (its x axes' angle, the
    swing about B's default axis X); a 170 deg cone stops it there (within ``CONE_TOL_DEG``,
    measured 0.004 deg; its response without the loops' correction let it pass by 1.07 deg)
    while the loop stays closed (gap under 1e-9 m, measured 1.1e-12 m in float64 with and
    without the cone)."""
    from solver_stages import closure_gaps

    bld, joints = _four_bar_with("spherical")
    swings = []
    for limit in (-1.0, 170.0):
        sj = UsdPhysics.SphericalJoint(bld.stage.GetPrimAtPath(joints["B"]))
        sj.CreateConeAngle0LimitAttr(limit)
        sj.CreateConeAngle1LimitAttr(limit)
        model = build_model(bld.stage, precision="float64")
        q0 = model.state().joint_q.numpy()[0]
        qs, _ = run(model, q0, np.zeros(model.dof_count), 240)
        (b,) = [i for i, lk in enumerate(model.links) if lk.jtype == SPHERICAL]
        qb = model.layout.q_slice(b)
        swings.append(np.degrees([math.acos(min(1.0, quat_to_mat(quat_wxyz(q[qb]))[0, 0])) for q in qs]))
        assert max(closure_gaps(model, bld.stage, q) for q in qs[::24]) < 1e-9
    assert swings[0].max() > 175.0  # unlimited, it folds past the cone
    assert swings[1].max() <= 170.0 + CONE_TOL_DEG


def test_mimic_relation_naming_a_spherical_joint_is_refused():
    """By the validator (the follower's type, the reference's type) and by the solver, with its reason."""
    b, joint, _ = pendulum()
    arm = b.body("arm", mass=0.1, inertia=(1e-4, 1e-4, 1e-4))
    hinge = b.revolute("hinge", "/World/bob", arm, "X")
    model = build_model(b.stage)
    solver = Solver(model)
    for fol, lead in ((joint, hinge), (hinge, joint)):
        with pytest.raises(MimicParticipantError, match=r"ball is a spherical joint; only revolute and prismatic"):
            solver.add_mimic(fol, lead, 1.0)
    set_relation(b.stage, MimicRelation(follower=hinge, leader=joint, multiplier=1.0, offset=0.0, instance="rotX"))
    codes = {f.code for f in validate(b.stage)}
    assert "MIMIC_REFERENCE_TYPE" in codes
    with pytest.raises(MimicParticipantError, match="spherical"):
        build_model(b.stage)


def mujoco_pendulum(mujoco, q0, u0, option: str, flags: str = ""):
    """The same pendulum in MuJoCo (a ball joint at the pivot, the bob's inertia at -D), started
    from our (q0: x, y, z, w; u0: angular velocity in the child frame, as MuJoCo's ball)."""
    xml = f"""<mujoco><option {option} gravity="0 0 {-G}">{flags}</option>
    <worldbody><body name="bob"><joint name="ball" type="ball"/>
    <inertial pos="0 0 {-D}" mass="{M}" diaginertia="{I[0]} {I[1]} {I[2]}"/></body></worldbody></mujoco>"""
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    md.qpos[:] = [q0[3], q0[0], q0[1], q0[2]]
    md.qvel[:] = u0
    return mm, md


@pytest.mark.slow
def test_spherical_pendulum_follows_mujoco():
    """Same pendulum, tilted and spinning, in MuJoCo (RK4 at 2400 Hz: the reference) and here
    (float64, 240 Hz): the quaternions agree within 5e-3 over 1 s. Tolerance: the step is
    first order, its error at 240 Hz over 1 s measured 1.5e-3; a transposed axis or a
    world-frame angular velocity puts it off by 0.1 or more."""
    mujoco = pytest.importorskip("mujoco")
    b, _, _ = pendulum()
    model = build_model(b.stage, precision="float64")
    q0 = model.state().joint_q.numpy()[0]
    u0 = np.array([0.4, -0.2, 1.0])
    qs, _ = run(model, q0, u0, 240)
    mm, md = mujoco_pendulum(mujoco, q0, u0, f'timestep="{DT / 10}" integrator="RK4"')
    worst = 0.0
    for q in qs:
        mujoco.mj_step(mm, md, 10)
        qm = np.array([md.qpos[1], md.qpos[2], md.qpos[3], md.qpos[0]])
        worst = max(worst, float(np.abs(q - np.sign(q @ qm) * qm).max()))
    assert worst < 5e-3, worst


def mujoco_pendulum_energy(mujoco, q0, u0, steps: int) -> np.ndarray:
    """MuJoCo's ``data.energy`` sum after each of ``steps`` steps of its default (semi-implicit
    Euler) integrator at 240 Hz, from our (q0, u0)."""
    mm, md = mujoco_pendulum(mujoco, q0, u0, f'timestep="{DT}"', '<flag energy="enable"/>')
    out = []
    for _ in range(steps):
        mujoco.mj_step(mm, md)
        out.append(md.energy.sum())
    return np.array(out)


@pytest.mark.slow
def test_spherical_pendulum_energy_and_period():
    """10 s at 240 Hz, float64: energy within 0.5 % of |E0| (a 0.36 rad swing, 1 rad/s spin
    about the bob's axis: measured 0.30 %); and the same energy history as MuJoCo's own step at
    240 Hz (semi-implicit Euler) within 2 % of its largest excursion, on a swing with a
    sideways push (both gain 0.49 % of |E0| over the 10 s, 0.57 % at most: the step's explicit
    velocity products, which only a smaller step or MuJoCo's RK4 (2e-7) takes off). The small
    swing's period (0.05 rad about x) within 0.5 % of 2 pi sqrt(I_pivot / (m g d)) (the
    amplitude adds theta^2 / 16 = 1.6e-4)."""
    b, _, _ = pendulum()
    model = build_model(b.stage, precision="float64")
    q0 = model.state().joint_q.numpy()[0]
    for u0, check_bound in ((np.array([0.0, 0.0, 1.0]), True), (np.array([0.4, -0.2, 1.0]), False)):
        qs, us = run(model, q0, u0, 2400)
        e0 = energy(model, q0, u0)
        dev = np.array([energy(model, q, u) for q, u in zip(qs, us)]) - e0
        if check_bound:
            assert np.abs(dev).max() / abs(e0) < 5e-3, np.abs(dev).max() / abs(e0)
        mujoco = pytest.importorskip("mujoco")
        dev_mj = mujoco_pendulum_energy(mujoco, q0, u0, 2400) - e0
        assert np.abs(dev - dev_mj).max() < 0.02 * np.abs(dev_mj).max(), (
            np.abs(dev - dev_mj).max(),
            np.abs(dev_mj).max(),
        )

    b, _, _ = pendulum(tilt=((1.0, 0.0, 0.0), 0.05))
    model = build_model(b.stage, precision="float64")
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(3), 2400)
    t = DT * np.arange(1, len(qs) + 1)
    period = crossings_period(t, qs[:, 0])  # the quaternion's x: sin(theta / 2)
    closed = 2 * math.pi * math.sqrt((I[0] + M * D * D) / (M * G * D))
    assert abs(period / closed - 1) < 5e-3, (period, closed)


CHAIN = {
    "m": (1.0, 0.6),
    "c": (0.25, 0.2),
    "l1": 0.5,
    "Ixx": (0.02, 0.01),
    "Iyy": (0.025, 0.012),
    "Izz": (0.005, 0.003),
}


def chain_mjcf(path: Path) -> Path:
    """Two links hung by ball joints, the second at l1 below the first's pivot."""
    m, c, l1 = CHAIN["m"], CHAIN["c"], CHAIN["l1"]
    inert = [f"{CHAIN['Ixx'][i]} {CHAIN['Iyy'][i]} {CHAIN['Izz'][i]}" for i in range(2)]
    path.write_text(
        f"""<mujoco model="ball_chain"><option timestep="{DT}" gravity="0 0 {-G}"/>
<worldbody>
  <body name="upper"><joint name="shoulder" type="ball"/>
    <inertial pos="0 0 {-c[0]}" mass="{m[0]}" diaginertia="{inert[0]}"/>
    <body name="lower" pos="0 0 {-l1}"><joint name="elbow" type="ball"/>
      <inertial pos="0 0 {-c[1]}" mass="{m[1]}" diaginertia="{inert[1]}"/>
    </body>
  </body>
</worldbody></mujoco>"""
    )
    return path


def chain_slow_mode() -> tuple[float, np.ndarray]:
    """The chain's slow swing about x, linearised (absolute angles): (period, mode shape)."""
    m, c, l1, ixx = CHAIN["m"], CHAIN["c"], CHAIN["l1"], CHAIN["Ixx"]
    mass = np.array(
        [
            [ixx[0] + m[0] * c[0] ** 2 + m[1] * l1**2, m[1] * l1 * c[1]],
            [m[1] * l1 * c[1], ixx[1] + m[1] * c[1] ** 2],
        ]
    )
    stiff = G * np.diag([m[0] * c[0] + m[1] * l1, m[1] * c[1]])
    w2, vecs = np.linalg.eig(np.linalg.solve(mass, stiff))
    i = int(np.argmin(w2.real))
    return 2 * math.pi / math.sqrt(w2.real[i]), vecs[:, i].real / vecs[0, i].real


def chain_state(model, rotations):
    """joint_q with each spherical joint (parents first) at the quaternion of its 3x3 rotation."""
    q = model.state().joint_q.numpy()[0].astype(float)
    balls = [i for i, lk in enumerate(model.links) if lk.jtype == SPHERICAL]
    for i, r in zip(balls, rotations):
        q[model.layout.q_slice(i)] = quat_xyzw(mat_to_quat(r))
    return q


@pytest.mark.slow
def test_ball_chain_from_mjcf_energy_period_and_mujoco(tmp_path):
    """An MJCF ball chain imported (``ball`` -> PhysicsSphericalJoint), float64 at 240 Hz:
    energy within 0.5 % of |E0| over 10 s (0.4 rad swing, 1.5 rad/s spin of the lower link;
    measured 0.46 %: the issue's bound, the step's explicit velocity products as on the
    pendulum); the slow mode's period (0.04 rad) within 0.5 % of the linearised closed form
    (measured +0.011 %); the quaternions within 1e-2 of MuJoCo's RK4 at 2400 Hz on the same file
    over the first second (first-order step: measured 3.0e-3). Figures:
    ``python benchmarks/spherical_checks.py``."""
    mujoco = pytest.importorskip("mujoco")
    from mimic_ext.importers import import_robot

    src = chain_mjcf(tmp_path / "ball_chain.xml")
    stage = import_robot(src).stage
    kinds = {str(p.GetPath()).rsplit("/", 1)[-1]: p.GetTypeName() for p in stage.Traverse() if p.IsA(UsdPhysics.Joint)}
    assert kinds["shoulder"] == kinds["elbow"] == "PhysicsSphericalJoint", kinds
    model = build_model(stage, precision="float64")
    assert [lk.jtype for lk in model.links] == [SPHERICAL, SPHERICAL] and model.dof_count == 6

    r1, r2 = axis_angle(np.array([1.0, 0.2, 0.0]), 0.4), axis_angle(np.array([0.0, 1.0, 0.0]), -0.3)
    q0 = chain_state(model, [r1, r2])
    u0 = np.array([0.0, 0.3, 0.0, 0.2, 0.0, 1.5])
    qs, us = run(model, q0, u0, 2400, every=4)
    e0 = energy(model, q0, u0)
    drift = max(abs(energy(model, q, u) - e0) for q, u in zip(qs, us)) / abs(e0)
    assert drift < 5e-3, drift

    mm = mujoco.MjModel.from_xml_path(str(src))
    mm.opt.timestep, mm.opt.integrator = DT / 10, mujoco.mjtIntegrator.mjINT_RK4
    md = mujoco.MjData(mm)
    md.qpos[:] = np.concatenate([np.roll(q0[0:4], 1), np.roll(q0[4:8], 1)])
    md.qvel[:] = u0
    worst = 0.0
    for q in qs[:60]:  # every 4th step: the first second
        mujoco.mj_step(mm, md, 40)
        for k in (0, 4):
            qm = np.roll(md.qpos[k : k + 4], -1)
            worst = max(worst, float(np.abs(q[k : k + 4] - np.sign(q[k : k + 4] @ qm) * qm).max()))
    assert worst < 1e-2, worst

    period, shape = chain_slow_mode()
    eps = 0.04
    q0 = chain_state(
        model, [axis_angle(np.array([1.0, 0, 0]), eps), axis_angle(np.array([1.0, 0, 0]), eps * (shape[1] - 1))]
    )
    qs, _ = run(model, q0, np.zeros(6), 2400)
    t = DT * np.arange(1, len(qs) + 1)
    measured = crossings_period(t, qs[:, 0])
    assert abs(measured / period - 1) < 5e-3, (measured, period)


def _four_bar_with(kind_b: str | None = None, kind_c: str | None = None, gravity=G):
    """``solver_stages.four_bar`` with joint B (crank-coupler, a tree joint) or C (the closure)
    replaced by a spherical joint at the same points."""
    bld, joints, _ = four_bar(gravity=gravity)
    stage = bld.stage
    UsdPhysics.Scene(stage.GetPrimAtPath("/World/physicsScene")).GetGravityDirectionAttr().Set(Gf.Vec3f(0, -1, 0))
    for name, kind in (("B", kind_b), ("C", kind_c)):
        if kind != "spherical":
            continue
        old = UsdPhysics.RevoluteJoint(stage.GetPrimAtPath(joints[name]))
        b0, b1 = old.GetBody0Rel().GetTargets(), old.GetBody1Rel().GetTargets()
        p0, p1 = old.GetLocalPos0Attr().Get(), old.GetLocalPos1Attr().Get()
        excluded = old.GetExcludeFromArticulationAttr().Get()
        stage.RemovePrim(joints[name])
        new = UsdPhysics.SphericalJoint.Define(stage, joints[name])
        new.CreateBody0Rel().SetTargets(b0)
        new.CreateBody1Rel().SetTargets(b1)
        new.CreateLocalPos0Attr(p0)
        new.CreateLocalPos1Attr(p1)
        if excluded:
            new.CreateExcludeFromArticulationAttr(True)
    return bld, joints


@pytest.mark.slow
def test_spherical_joints_in_a_loop_move_the_four_bar_as_revolute_ones():
    """The planar four-bar under gravity in its plane, 1 s at 240 Hz (float64): its crank angle with the
    closing joint C spherical (3 loop rows), and with the tree joint B spherical (a quaternion
    inside a loop model), follows the all-revolute four-bar's within 1e-3 rad. Tolerance: the
    motion stays planar in exact arithmetic; the loops' projection and rank tolerance
    (1e-10) leave rounding, where a wrong axis or bias term moves it by 0.01 rad or more."""
    out = {}
    for label, kinds in (("revolute", (None, None)), ("closure", (None, "spherical")), ("tree", ("spherical", None))):
        bld, joints = _four_bar_with(*kinds)
        model = build_model(bld.stage, precision="float64")
        if label == "closure":
            assert [c.rows for c in model.closures] == [3]
        if label == "tree":
            assert SPHERICAL in [lk.jtype for lk in model.links]
        a = model.dof_index(joints["A"])
        qs, _ = run(model, model.state().joint_q.numpy()[0], model.state().joint_qd.numpy()[0], 240)
        out[label] = qs[:, a]
    assert np.ptp(out["revolute"]) > 0.1  # it moves
    for label in ("closure", "tree"):
        assert np.abs(out[label] - out["revolute"]).max() < 1e-3, label


def physx_pendulum_paths(articulation: bool, built=None, steps: int = 240) -> tuple[np.ndarray, np.ndarray]:
    """(ours, PhysX's) paths of the bob's centre of mass (m, one row a step): the pendulum
    (``built``: a ``pendulum()``-like (builder, joint, bob), the tilted one by default) released
    at rest, at 240 Hz, ours in float64, PhysX through ovphysx (CPU) as an articulation
    (ArticulationRootAPI on the bob) or a rigid body and a joint."""
    from pxr import Sdf

    from mimic_ext.fet022.engines.physx_session import PhysxSession

    b, _, bob = built or pendulum()
    prim = b.stage.GetPrimAtPath(bob)
    prim.AddAppliedSchema("PhysxRigidBodyAPI")  # PhysX's default angular damping 0.05 off: none here
    for name in ("physxRigidBody:angularDamping", "physxRigidBody:linearDamping"):
        prim.CreateAttribute(name, Sdf.ValueTypeNames.Float).Set(0.0)
    if articulation:
        UsdPhysics.ArticulationRootAPI.Apply(prim)
    model = build_model(b.stage, precision="float64")
    com = np.array([0.0, 0.0, -D, 1.0])
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(3), steps)
    ours = np.array([(body_poses(model, q)[bob] @ com)[:3] for q in qs])
    session = PhysxSession(b.stage.Flatten().ExportToString(), [], {}, rigid_bodies=[bob])
    theirs = []
    try:
        for _ in range(steps):
            session.step(DT)
            p = session.rigid_poses()[bob][0]
            theirs.append(quat_to_mat(quat_wxyz(p[3:7])) @ com[:3] + p[:3])
    finally:
        session.close()
    return ours, np.array(theirs)


def physx_pendulum_gap(articulation: bool) -> tuple[float, float]:
    """(largest distance of the bob's centre of mass from real PhysX's, its travel), m: the
    tilted pendulum released at rest, 1 s at 240 Hz (``physx_pendulum_paths``)."""
    ours, theirs = physx_pendulum_paths(articulation)
    return float(np.abs(theirs - ours).max()), float(np.ptp(ours, axis=0).max())


@pytest.mark.slow
@pytest.mark.parametrize("articulation", [True, False], ids=["articulation", "maximal"])
def test_spherical_pendulum_swings_as_on_physx(articulation):
    """The tilted pendulum released at rest, 1 s at 240 Hz, in real PhysX (ovphysx, CPU; as an
    articulation and as a rigid body with a joint constraint) and here (float64): the bob's
    centre of mass within 1 cm of PhysX's all along (it travels 0.34 m; measured 3.2 mm as an
    articulation, 1.4 mm maximal: PhysX's TGS iterations and its own step; a wrong joint frame
    or axis convention puts it off by a tenth of the travel)."""
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    gap, travel = physx_pendulum_gap(articulation)
    assert travel > 0.3  # it swings
    assert gap < 1e-2


def bob_swing_deg(path: np.ndarray) -> np.ndarray:
    """The swing (deg) along a bob's path relative to its pivot: the bob hangs -D along the
    child's z, so its swing is the angle of -path from the cone's axis."""
    return np.degrees(np.arccos(np.clip(-path[:, 2] / np.linalg.norm(path, axis=1), -1.0, 1.0)))


def assert_rests_on_cone_as_physx(ours: np.ndarray, theirs: np.ndarray, bound: float, gap: float) -> None:
    """The bob's paths (ours, PhysX's): within ``gap`` metres of each other all along, ours never
    past the cone's edge at ``bound`` (deg) by more than ``CONE_TOL_DEG``, both at rest on it at
    the end within 0.1 deg."""
    so, st = bob_swing_deg(ours), bob_swing_deg(theirs)
    assert float(np.abs(theirs - ours).max()) < gap
    assert so.max() <= bound + CONE_TOL_DEG
    assert abs(so[-1] - bound) < 0.1 and abs(st[-1] - bound) < 0.1


@pytest.mark.slow
@pytest.mark.parametrize("articulation", [True, False], ids=["articulation", "maximal"])
def test_pendulum_rests_on_its_cone_as_on_physx(articulation):
    """The pendulum pushed outward (``coned``), released at rest 8.6 deg from a 20 deg cone's
    axis, 2 s at 240 Hz, in real PhysX (ovphysx, CPU; articulation and maximal) and here
    (float64): the bob's centre of mass within 1 cm of PhysX's all along (measured 5.9 mm as an
    articulation, 5.3 mm maximal, mostly the fall before the cone, as in the free swing above; it
    travels 0.09 m), both at rest on the cone's edge at the end, within 0.1 deg of it (measured
    0.007 deg off, PhysX), and ours never past it by more than ``CONE_TOL_DEG`` (measured 4e-7 deg;
    PhysX's passes it by 0.005 deg as an articulation, 0.06 deg maximal, on landing)."""
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    ours, theirs = physx_pendulum_paths(articulation, coned(20.0, tilt=0.15), steps=480)

    assert_rests_on_cone_as_physx(ours, theirs, 20.0, gap=1e-2)


@pytest.mark.slow
@pytest.mark.parametrize("articulation", [True, False], ids=["articulation", "maximal"])
@pytest.mark.parametrize(
    ("towards", "bound"), [((1.0, 0.0, 0.0), 30.0), ((0.0, 1.0, 0.0), 15.0)], ids=["about-x", "about-y"]
)
def test_pendulum_rests_on_its_elliptical_cone_as_on_physx(towards, bound, articulation):
    """The 30 x 15 deg elliptical cone (coneAngle0Limit 30, coneAngle1Limit 15, about z), the
    pendulum released 8.6 deg off about x or y, 2 s at 240 Hz in real PhysX (ovphysx, CPU) and
    here (float64): both at rest on the same angle of the ellipse, within 0.1 deg of it (PhysX
    measured 0.002 deg off), the bob's centre of mass within 2 cm of PhysX's all along (measured
    0.9 to 12 mm, the larger falling 30 deg, 0.175 m of travel; the fall's gap as in the circular
    test), ours never past by more than ``CONE_TOL_DEG``. With coneAngle0/1 swapped against
    PhysX's reading the two rest at 15 and 30 deg, 0.12 m apart."""
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    ours, theirs = physx_pendulum_paths(articulation, coned(30.0, 15.0, tilt=0.15, towards=towards), steps=480)

    assert_rests_on_cone_as_physx(ours, theirs, bound, gap=2e-2)


def test_floating_tree_with_a_spherical_joint_keeps_its_momentum():
    """A free base with a spherical-jointed arm, no gravity, tumbling (float64, 1 s at 240 Hz):
    the step restores the tree's momentum from its own float64 sums (``momentum64``), so the
    independent numpy sums (``inspect.momentum``) stay at their start values within 1e-9
    (relative); a wrong spherical term in the kernel's sums would restore the wrong momentum."""
    from mimic_ext.solver.inspect import momentum

    b = StageBuilder(gravity=0.0)
    base = b.body("base", mass=2.0, inertia=(0.02, 0.03, 0.04), root=True)
    arm = b.body("arm", mass=0.5, inertia=(0.004, 0.001, 0.004), com=(0.0, 0.2, 0.0), pos=(0.1, 0.0, 0.0))
    b._joint(UsdPhysics.SphericalJoint, "ball", base, arm, pos0=(0.1, 0.0, 0.0))
    model = build_model(b.stage, precision="float64")
    assert [lk.jtype for lk in model.links][1] == SPHERICAL and model.dof_count == 9
    q0 = model.state().joint_q.numpy()[0]
    u0 = np.zeros(9)
    base_link = 0
    u0[model.layout.qd_slice(base_link)] = [0.3, -0.5, 0.8, 0.1, 0.0, -0.2]
    u0[model.layout.qd_slice(1)] = [2.0, -1.0, 3.0]
    lin0, ang0 = momentum(model, q0, u0)
    qs, us = run(model, q0, u0, 240)
    lin1, ang1 = momentum(model, qs[-1], us[-1])
    assert np.abs(lin1 - lin0).max() < 1e-9 * np.abs(lin0).max()
    assert np.abs(ang1 - ang0).max() < 1e-9 * np.abs(ang0).max()
    assert np.abs(qs[-1] - q0).max() > 0.1  # it moved


@pytest.mark.slow
def test_a_spherical_links_collider_rests_on_the_ground():
    """The pendulum swung 1.2 rad out with a 5 cm sphere at its bob, the ground 0.45 m below the
    pivot (2 s at 240 Hz, float32 contact model): the sphere comes down onto the plane and
    stays on it, its centre never more than 1e-4 m below 0.05 m above it (the contact rows'
    compliance; measured 2.3e-6 m), so the contact pass reads the spherical link's frame."""
    b, _, bob = pendulum(tilt=((1.0, 0.0, 0.0), 1.2))
    sphere = UsdGeom.Sphere.Define(b.stage, bob + "/geom")
    sphere.CreateRadiusAttr(0.05)
    sphere.AddTranslateOp().Set(Gf.Vec3d(0, 0, -D))
    UsdPhysics.CollisionAPI.Apply(sphere.GetPrim())
    model = build_model(b.stage, ground_plane=-0.45)
    assert model.collision is not None
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(3), 480)
    z = np.array([(body_poses(model, q)[bob] @ np.array([0.0, 0.0, -D, 1.0]))[2] for q in qs])
    assert z.min() > -0.40 - 1e-4, z.min()
    assert abs(z[-1] + 0.40) < 1e-3  # resting on the plane at the end (it would hang at -0.5)
