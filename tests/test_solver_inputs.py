"""Bad inputs reach the user, not a NaN state: step arguments, non-finite states, stage values."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import StageBuilder, gripper, independent_pair, spinning_wheel

wp = pytest.importorskip("warp")
wp.config.quiet = True
from pxr import Gf, Sdf, UsdGeom, UsdPhysics  # noqa: E402

from mimic_ext.errors import MimicInputError  # noqa: E402
from mimic_ext.solver import NonFiniteStateError, Solver, StageValueError, StepInputError, build_model  # noqa: E402
from mimic_ext.solver.solver import min_time_step  # noqa: E402


@pytest.mark.parametrize("dt", [0.0, -1.0 / 60, math.nan, math.inf, "1/60", None])
def test_step_refuses_a_time_step_that_is_not_finite_and_positive(dt):
    b, lead, fol = independent_pair()
    model = build_model(b.stage)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    with pytest.raises(StepInputError, match="dt"):
        solver.step(s0, s1, c, dt)
    assert isinstance(StepInputError("x"), MimicInputError)
    assert np.isfinite(s1.joint_q.numpy()).all()  # nothing was stepped


def _compliant_driven_pair(precision: str):
    """A compliant pair (w 50 rad/s, zeta 0.3) 0.1 rad off its relation, its leader driven."""
    b, lead, fol = independent_pair(multiplier=None)
    b.mimic(fol, lead, 2.0, 0.1, natural_frequency=50.0, damping_ratio=0.3)
    b.drive(lead, stiffness=0.5, damping=0.05, target=20.0)
    return build_model(b.stage, precision=precision)


def test_step_refuses_a_time_step_below_what_the_precision_carries():
    model = _compliant_driven_pair("float32")
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    with pytest.raises(StepInputError, match="float32") as err:
        solver.step(s0, s1, c, 1e-30)  # issue 29: accepted before, and it gave NaN
    assert "1.08e-19" in str(err.value) and "float64" in str(err.value)  # the bound, and the way out
    with pytest.raises(StepInputError, match="float32"):
        solver.step_many(s0, {}, 1e-30, steps=2)
    assert min_time_step("float32") == pytest.approx(1.0842e-19, rel=1e-4)
    assert min_time_step("float64") == pytest.approx(1.4917e-154, rel=1e-4)


@pytest.mark.parametrize(
    "precision, dt", [("float32", 1.2e-19), ("float32", 1e-12), ("float64", 1e-30), ("float64", 1e-150)]
)
def test_tiny_time_steps_the_guard_lets_through_stay_finite(precision, dt):
    """Down to the guard's bound the step is finite: the compliant row's coefficients no longer
    cancel to 0/0 (they did below w dt ~ 1e-8, in both precisions: NaN at dt 1e-12)."""
    model = _compliant_driven_pair(precision)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    q0 = s0.joint_q.numpy().copy()
    for _ in range(3):
        solver.step(s0, s1, c, dt)
        s0, s1 = s1, s0
    assert solver.nonfinite_envs() == []
    # nothing moves in 3 steps of 1e-12 s or less: within float32 round-off of the start (1e-6 rad)
    np.testing.assert_allclose(s0.joint_q.numpy(), q0, atol=1e-6)


def _four_envs():
    b, jl, jr = gripper(floating=True, gravity=9.81)
    b.drive(jl, stiffness=0.05, damping=0.002, target=10.0)
    model = build_model(b.stage, num_envs=4)
    return model, model.dof_index(jl)


def test_nonfinite_environments_are_flagged_and_the_others_untouched():
    model, j = _four_envs()
    clean = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    for _ in range(5):
        clean.step(s0, s1, c, 1.0 / 240)
        s0, s1 = s1, s0
    ref_q = s0.joint_q.numpy()
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    tp = c.joint_target_q.numpy()
    tp[2, j] = math.nan  # NaN in one environment's control ...
    c.joint_target_q.assign(tp)
    q = s0.joint_q.numpy()
    q[3, j] = math.inf  # ... inf in another's state
    s0.joint_q.assign(q)
    for _ in range(5):
        solver.step(s0, s1, c, 1.0 / 240)
        s0, s1 = s1, s0
    assert solver.nonfinite_envs() == [2, 3]
    out = s0.joint_q.numpy()
    np.testing.assert_array_equal(out[:2], ref_q[:2])  # bitwise: environments are independent
    assert not np.isfinite(out[2:]).all(axis=1).any()
    assert clean.nonfinite_envs() == []


def test_solver_can_raise_on_a_nonfinite_state():
    model, j = _four_envs()
    solver = Solver(model, raise_on_nonfinite=True)
    s0, s1, c = model.state(), model.state(), model.control()
    solver.step(s0, s1, c, 1.0 / 240)  # finite: no error
    ef = c.joint_f.numpy()
    ef[1, j] = math.nan
    c.joint_f.assign(ef)
    with pytest.raises(NonFiniteStateError, match="1 environment") as err:
        solver.step(s1, s0, c, 1.0 / 240)
    assert err.value.envs == [1]
    assert isinstance(err.value, MimicInputError)


def test_a_runaway_is_flagged_the_step_it_leaves_the_physical_range():
    """Issue 40: ``nonfinite_envs()`` stayed silent while speeds reached 1e9 to 1e65 rad/s. A
    leader driven by 1e4 N m (2 kg m^2 and its x2 follower's 0.5: 4 kg m^2 reflected) speeds the
    follower up by 20.8 rad/s a step at 240 Hz, past a bound of 100 rad/s at step 5 and past the
    default (1e4) at step 481; each is flagged in that very step (the issue asks within 10), the
    environment beside it never, and no state is non-finite."""
    b, lead, fol = independent_pair(multiplier=2.0)
    model = build_model(b.stage, num_envs=2)
    i = model.dof_index(lead)
    for bound in (100.0, None):
        solver = Solver(model) if bound is None else Solver(model, max_speed=bound)
        limit = bound or 1.0e4
        s0, s1, c = model.state(), model.state(), model.control()
        f = c.joint_f.numpy()
        f[1, i] = 1.0e4
        c.joint_f.assign(f)
        first = None
        for step in range(1, 2000):
            solver.step(s0, s1, c, 1.0 / 240)
            s0, s1 = s1, s0
            fastest = np.abs(s0.joint_qd.numpy()[1]).max()
            if solver.runaway_envs():
                first = step
                assert fastest > limit and solver.runaway_envs() == [1]
                break
            assert fastest <= limit  # nothing flagged before the speed left the range
        assert first is not None and solver.nonfinite_envs() == []
    with pytest.raises(NonFiniteStateError, match="ran away"):
        solver = Solver(model, max_speed=100.0, raise_on_nonfinite=True)
        s0, s1 = model.state(), model.state()
        for _ in range(10):
            solver.step(s0, s1, c, 1.0 / 240)
            s0, s1 = s1, s0
    quiet = Solver(model, max_speed=math.inf)
    for _ in range(10):
        quiet.step(s0, s1, c, 1.0 / 240)
        s0, s1 = s1, s0
    assert quiet.runaway_envs() == []
    for bad in (0.0, -1.0, math.nan, "fast", True):
        with pytest.raises(StepInputError, match="max_speed"):
            Solver(model, max_speed=bad)


def _pendulum():
    b = StageBuilder(gravity=9.81)
    arm = b.body("arm", mass=1.0, inertia=(0.1, 0.1, 0.1), com=(0.1, 0, 0))
    j = b.revolute("hinge", None, arm, "Y", limits_deg=(-90, 90))
    b.drive(j, stiffness=1.0, damping=0.1, target=10.0, max_force=5.0)
    return b, arm, j


def _set(prim, name, value, type_name=Sdf.ValueTypeNames.Float):
    if name.startswith("physxJoint:"):
        prim.AddAppliedSchema("PhysxJointAPI")  # PhysX (and the reader) read them only with it
    if name.startswith("state:angular:"):
        prim.AddAppliedSchema("PhysicsJointStateAPI:angular")  # likewise the initial joint state
    attr = prim.GetAttribute(name)
    if not attr:
        attr = prim.CreateAttribute(name, type_name)
    attr.Set(value)


BAD = {
    "NaN mass": lambda b, arm, j: UsdPhysics.MassAPI(b.stage.GetPrimAtPath(arm)).GetMassAttr().Set(math.nan),
    "inf mass": lambda b, arm, j: UsdPhysics.MassAPI(b.stage.GetPrimAtPath(arm)).GetMassAttr().Set(math.inf),
    "negative mass": lambda b, arm, j: UsdPhysics.MassAPI(b.stage.GetPrimAtPath(arm)).GetMassAttr().Set(-1.0),
    "NaN inertia": lambda b, arm, j: (
        UsdPhysics.MassAPI(b.stage.GetPrimAtPath(arm)).GetDiagonalInertiaAttr().Set(Gf.Vec3f(0.1, math.nan, 0.1))
    ),
    "negative inertia": lambda b, arm, j: (
        UsdPhysics.MassAPI(b.stage.GetPrimAtPath(arm)).GetDiagonalInertiaAttr().Set(Gf.Vec3f(0.1, -0.1, 0.1))
    ),
    "NaN centre of mass": lambda b, arm, j: (
        UsdPhysics.MassAPI(b.stage.GetPrimAtPath(arm)).GetCenterOfMassAttr().Set(Gf.Vec3f(math.nan, 0, 0))
    ),
    "lower > upper": lambda b, arm, j: UsdPhysics.RevoluteJoint(b.stage.GetPrimAtPath(j)).GetLowerLimitAttr().Set(95.0),
    "NaN limit": lambda b, arm, j: UsdPhysics.RevoluteJoint(b.stage.GetPrimAtPath(j)).GetUpperLimitAttr().Set(math.nan),
    "NaN drive stiffness": lambda b, arm, j: (
        UsdPhysics.DriveAPI(b.stage.GetPrimAtPath(j), "angular").GetStiffnessAttr().Set(math.nan)
    ),
    "negative drive damping": lambda b, arm, j: (
        UsdPhysics.DriveAPI(b.stage.GetPrimAtPath(j), "angular").GetDampingAttr().Set(-0.1)
    ),
    "NaN max force": lambda b, arm, j: (
        UsdPhysics.DriveAPI(b.stage.GetPrimAtPath(j), "angular").GetMaxForceAttr().Set(math.nan)
    ),
    "NaN target": lambda b, arm, j: (
        UsdPhysics.DriveAPI(b.stage.GetPrimAtPath(j), "angular").GetTargetPositionAttr().Set(math.nan)
    ),
    "NaN armature": lambda b, arm, j: _set(b.stage.GetPrimAtPath(j), "physxJoint:armature", math.nan),
    "negative friction": lambda b, arm, j: _set(b.stage.GetPrimAtPath(j), "physxJoint:jointFriction", -1.0),
    "NaN max velocity": lambda b, arm, j: _set(b.stage.GetPrimAtPath(j), "physxJoint:maxJointVelocity", math.nan),
    "NaN joint frame": lambda b, arm, j: (
        UsdPhysics.Joint(b.stage.GetPrimAtPath(j)).GetLocalPos0Attr().Set(Gf.Vec3f(0, math.nan, 0))
    ),
    "NaN body position": lambda b, arm, j: (
        UsdGeom.Xformable(b.stage.GetPrimAtPath(arm)).GetOrderedXformOps()[0].Set(Gf.Vec3d(math.nan, 0, 0))
    ),
    "NaN joint state": lambda b, arm, j: _set(b.stage.GetPrimAtPath(j), "state:angular:physics:position", math.nan),
}


@pytest.mark.parametrize("what", sorted(BAD))
def test_build_model_refuses_unusable_values_naming_the_prim(what):
    b, arm, j = _pendulum()
    build_model(b.stage)  # the good stage builds
    BAD[what](b, arm, j)
    with pytest.raises(StageValueError) as err:
        build_model(b.stage)
    message = str(err.value)
    assert arm in message or j in message  # names the prim
    assert "\n" not in message  # one line


@pytest.mark.parametrize("unit", ["metersPerUnit", "kilogramsPerUnit"])
def test_build_model_refuses_a_zero_unit(unit):
    b, arm, j = _pendulum()
    b.stage.SetMetadata(unit, 0.0)
    with pytest.raises(StageValueError, match=unit):
        build_model(b.stage)


def test_a_zero_mass_still_gets_the_documented_default():
    b, arm, j = _pendulum()
    UsdPhysics.MassAPI(b.stage.GetPrimAtPath(arm)).GetMassAttr().Set(0.0)
    with pytest.warns(UserWarning, match="no mass properties"):
        model = build_model(b.stage)
    assert model.links[0].mass == pytest.approx(0.1)


def test_set_drive_refuses_nan():
    b, arm, j = _pendulum()
    model = build_model(b.stage)
    with pytest.raises(MimicInputError, match="stiffness"):
        model.set_drive(j, math.nan, 0.1)


def test_floating_base_velocity_is_that_of_the_base_frame_origin():
    """joint_qd's base linear velocity is the base frame origin's (as model.py, the kernel and
    docs say): a body spinning about its centre of mass, 10 cm from its frame origin, with the
    origin moving at omega x (origin - com), keeps its centre of mass in place."""
    b = StageBuilder()
    origin = np.array([1.0, 2.0, 0.0])  # away from the world origin: the two readings differ
    ball = b.body("ball", mass=1.0, inertia=(0.01, 0.01, 0.01), com=(0.1, 0, 0), pos=tuple(origin), root=True)
    wheel = b.body("wheel", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), com=(0.1, 0, 0), pos=tuple(origin))
    b.revolute("axle", ball, wheel, "Z", pos0=(0.1, 0, 0), pos1=(0.1, 0, 0))
    model = build_model(b.stage)
    n1 = len(model.joints)
    omega = np.array([0.0, 0.0, 2.0])
    u = np.zeros(model.dof_count)
    u[n1 : n1 + 3] = omega
    u[n1 + 3 : n1 + 6] = np.cross(omega, origin - (origin + np.array([0.1, 0, 0])))
    s0, s1, c = model.state(), model.state(), model.control()
    s0.joint_qd.assign(u[None])
    solver = Solver(model)
    for _ in range(120):
        solver.step(s0, s1, c, 1.0 / 240)
        s0, s1 = s1, s0
    q = s0.joint_q.numpy()[0].astype(float)
    from mimic_ext.solver.inspect import body_poses

    com = body_poses(model, q)[ball] @ np.array([0.1, 0, 0, 1.0])
    # 1 mm: the COM stays where it was while the body turns 1 rad (semi-implicit Euler moves the
    # origin along tangents: measured 0.4 mm); read as the velocity of the body point at the world
    # origin, the same numbers would carry the COM off at 4.5 m/s
    assert com[:3] == pytest.approx(origin + [0.1, 0.0, 0.0], abs=1e-3)


@pytest.mark.parametrize("what", ["NaN inertia", "NaN drive stiffness", "NaN body position"])
def test_fet022_reports_an_unusable_value_as_an_error_with_the_reason(what):
    """The values that used to PASS the FET022 sweep now stop it: the follower is an error and
    the reason names the prim."""
    from mimic_ext import fet022
    from mimic_ext.fet022.result import ERROR

    b = StageBuilder(fixed_base=True)
    arm = b.body("arm", mass=1.0, inertia=(0.1, 0.1, 0.1), com=(0.1, 0, 0))
    j = b.revolute("hinge", b.base, arm, "Y", limits_deg=(-90, 90))
    b.drive(j, stiffness=1.0, damping=0.1, target=10.0, max_force=50.0)
    other = b.body("other", mass=1.0, inertia=(0.1, 0.1, 0.1), com=(0.1, 0, 0), pos=(0, 1, 0))
    jo = b.revolute("other_hinge", b.base, other, "Y", limits_deg=(-90, 90), pos0=(0, 1, 0))
    b.mimic(jo, j, 1.0, 0.0)
    assert fet022.run(b.stage).status == "pass"  # the good stage sweeps and passes
    BAD[what](b, arm, j)
    result = fet022.run(b.stage)
    assert result.status == ERROR
    assert [f.status for f in result.followers] == [ERROR]
    assert arm in result.reason or j in result.reason


@pytest.mark.parametrize("applied", [True, False])
def test_initial_joint_state_is_read_only_where_physics_joint_state_api_is_applied(applied):
    """omni.physx takes a joint's initial state from PhysicsJointStateAPI:<dof> only where that API
    is applied (NVIDIA-Omniverse/PhysX, usdLoad/Joint.cpp, fillPhysicsJointStateDesc); an authored
    value without it is ignored there (the engines started 0.1 rad apart), and here, with a note."""
    b, arm, j = _pendulum()
    prim = b.stage.GetPrimAtPath(j)
    if applied:
        prim.AddAppliedSchema("PhysicsJointStateAPI:angular")
    prim.CreateAttribute("state:angular:physics:position", Sdf.ValueTypeNames.Float).Set(10.0)  # degrees
    prim.CreateAttribute("state:angular:physics:velocity", Sdf.ValueTypeNames.Float).Set(30.0)  # deg/s
    model = build_model(b.stage)
    i = model.dof_index(j)
    s = model.state()
    notes = [w for w in model.warnings if "state:angular:physics:" in w]
    if applied:
        assert s.joint_q.numpy()[0, i] == pytest.approx(math.radians(10.0), rel=1e-6)  # float32
        assert s.joint_qd.numpy()[0, i] == pytest.approx(math.radians(30.0), rel=1e-6)
        assert notes == []
    else:
        assert s.joint_q.numpy()[0, i] == 0.0 and s.joint_qd.numpy()[0, i] == 0.0
        assert len(notes) == 2 and all(j in w and "PhysicsJointStateAPI:angular" in w for w in notes)


def test_a_negative_velocity_cap_is_refused_and_one_without_its_api_is_noted():
    """A negative physxRigidBody:maxAngularVelocity is refused naming the prim and the attribute;
    one authored without PhysxRigidBodyAPI applied counts as none (PhysX ignores it), with a note."""
    b, wheel, _ = spinning_wheel(20.0, max_angular=-1.0)
    with pytest.raises(StageValueError, match="maxAngularVelocity") as err:
        build_model(b.stage)
    assert wheel in str(err.value)
    b, wheel, _ = spinning_wheel(20.0, max_angular=5.0)
    prim = b.stage.GetPrimAtPath(wheel)
    prim.RemoveAppliedSchema("PhysxRigidBodyAPI")
    model = build_model(b.stage)
    assert any("maxAngularVelocity" in n and "not applied" in n for n in model.warnings)
