"""The cone limit of a loop-closing spherical joint (``rows.loop_cone_row``, ``loop_cone_block``).

Its semantics are the tree cone's (``test_solver_spherical``): side b's (body1's) joint-frame axis
kept within the limit of side a's (body0's), elliptical when coneAngle0Limit and coneAngle1Limit
differ, as PhysX reads them. Checked on the planar four-bar whose closing joint C is spherical
(a real closed chain: the cone stops the coupler folding against the rocker while the loop
stays closed), on the pendulum whose cone sits on a second, loop-closing spherical joint at its
pivot (it must move as the tree cone moves it), and against real PhysX (ovphysx) on both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from pxr import Gf, Sdf, UsdPhysics
from solver_stages import closure_gaps
from test_solver_spherical import (
    CONE_TOL_DEG,
    DT,
    _four_bar_with,
    assert_rests_on_cone_as_physx,
    coned,
    ellipse_excess_deg,
    physx_pendulum_paths,
    run,
    swing_deg,
)

from mimic_ext.math3d import quat_to_mat, quat_wxyz
from mimic_ext.solver import StageValueError, UnsupportedStageError, build_model, stage_reader
from mimic_ext.solver.inspect import body_poses

#: The four-bar's links (their frames are its joints' frames at C: no local rotations).
BARS = ("/World/crank", "/World/coupler", "/World/rocker")

#: Within the loop's cone: swing <= limit + 0.02 deg. Measured 0.0079 deg past it (float64 and
#: float32, the step it lands at 3 rad/s): the row holds the swing rate linearised at the
#: step's start, and the coupler's swing at C is a curved function of the loop's one DOF, so the
#: integrated step (with the loops' projection) goes on by its second order (the tree cone inside
#: the same loop, ``test_cone_limit_inside_a_loop_holds_and_keeps_it_closed``, 0.004 deg).
#: Without the row the four-bar folds to 42.7 deg at C.
LOOP_CONE_TOL_DEG = 0.02


def four_bar_coned(limit0: float, limit1: float | None = None, gravity=(0.0, -1.0, 0.0)):
    """The four-bar (``_four_bar_with``: C, coupler (body0) to rocker (body1), loop-closing and
    spherical) with a cone on C about its default axis X, gravity along ``gravity`` (9.81 m/s^2)
    in the plane: its coupler swings about Z against the rocker, the swing coneAngle1Limit bounds
    (Z is the axis after Y, after X)."""
    bld, joints = _four_bar_with(None, "spherical")
    stage = bld.stage
    UsdPhysics.Scene(stage.GetPrimAtPath("/World/physicsScene")).GetGravityDirectionAttr().Set(Gf.Vec3f(*gravity))
    sj = UsdPhysics.SphericalJoint(stage.GetPrimAtPath(joints["C"]))
    sj.CreateConeAngle0LimitAttr(limit0)
    sj.CreateConeAngle1LimitAttr(limit0 if limit1 is None else limit1)
    return bld, joints


def swing_at_c(frames) -> np.ndarray:
    """Per row of (crank, coupler, rocker) rotations: the angle (deg) between the coupler's and the
    rocker's x axes, C's swing about its cone's axis."""
    return np.degrees([math.acos(min(1.0, max(-1.0, float(f[1][:, 0] @ f[2][:, 0])))) for f in frames])


def crank_deg(frames) -> np.ndarray:
    """Per row: the crank's angle about Z (deg, unwrapped)."""
    return np.degrees(np.unwrap([math.atan2(f[0][1, 0], f[0][0, 0]) for f in frames]))


def four_bar_run(bld, steps: int = 480, precision: str = "float64"):
    """(model, q rows, (crank, coupler, rocker) world rotations per row) of ``steps`` at 240 Hz
    from rest, the rotations from the float64 forward kinematics of ``inspect`` (not the kernel)."""
    model = build_model(bld.stage, precision=precision)
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(model.dof_count), steps)
    frames = []
    for q in qs:
        poses = body_poses(model, q)
        frames.append([poses[b][:3, :3] for b in BARS])
    return model, qs, frames


def test_loop_cone_is_read_as_the_tree_cone(monkeypatch):
    """A loop-closing spherical joint's cone is read by the tree's reader (``_cone_limit``:
    degrees to rad, the joint's axis, the same refusals of a one-angle or NaN cone, naming the
    prim), with no 'not enforced' note; a tree spherical joint's cone is read once."""
    bld, joints = four_bar_coned(40.0, 25.0)
    sj = UsdPhysics.SphericalJoint(bld.stage.GetPrimAtPath(joints["C"]))
    sj.CreateAxisAttr("Y")
    model = build_model(bld.stage)
    (closure,) = model.closures
    assert (closure.cone, closure.cone1) == (math.radians(40.0), math.radians(25.0))
    assert np.array_equal(closure.cone_axis, [0.0, 1.0, 0.0])
    assert not [w for w in model.warnings if "cone" in w]
    sj.GetConeAngle1LimitAttr().Set(-1.0)
    with pytest.raises(UnsupportedStageError, match=r"/World/joints/C: physics:coneAngle0Limit = 40.0.* deg and"):
        build_model(bld.stage)
    sj.GetConeAngle1LimitAttr().Set(float("nan"))
    with pytest.raises(StageValueError, match=r"/World/joints/C: physics:coneAngle1Limit is nan"):
        build_model(bld.stage)

    reads = []
    real = stage_reader._cone_limit
    monkeypatch.setattr(stage_reader, "_cone_limit", lambda prim: reads.append(str(prim.GetPath())) or real(prim))
    b, joint, _ = coned(20.0)
    build_model(b.stage)
    assert reads == [joint]


@pytest.mark.parametrize(("limits", "held"), [((30.0, 30.0), True), ((170.0, 30.0), True), ((30.0, 170.0), False)])
def test_four_bar_stays_within_its_loop_closing_cone(limits, held):
    """The four-bar falling under gravity from rest, 2 s at 240 Hz (float64): unlimited, C's swing
    reaches 42.7 deg; a 30 deg cone on C (circular, or elliptical with coneAngle1Limit 30, the
    angle that bounds a swing about Z) stops it there, never past by more than
    ``LOOP_CONE_TOL_DEG``, while the loop stays closed (gap under 1e-9 m, measured 1.1e-12 m in
    float64 with and without the cone); with the angles swapped (coneAngle0Limit 30 bounds swings
    about Y, which this planar loop never makes) it folds as unlimited."""
    bld, _ = four_bar_coned(*limits)
    model, qs, frames = four_bar_run(bld)
    sw = swing_at_c(frames)
    assert max(closure_gaps(model, bld.stage, q) for q in qs[::12]) < 1e-9
    if held:
        assert sw.max() <= 30.0 + LOOP_CONE_TOL_DEG
        assert sw.max() >= 30.0 - LOOP_CONE_TOL_DEG  # it reaches the cone
    else:
        assert sw.max() > 42.0


def loop_coned(limit0: float, limit1: float | None = None, side_a: str = "world", **tilt):
    """``coned``'s pendulum (pushed outward onto its cone, ``tilt`` as there) with its tree joint
    unlimited and the cone, about Z, on a second spherical joint at the pivot that closes a loop
    (physics:excludeFromArticulation): its body0 (side a, the cone's parent) the world, or with
    ``side_a="bob"`` the bob (its body1 then the world)."""
    b, _, bob = coned(-1.0, **tilt)
    sj = UsdPhysics.SphericalJoint.Define(b.stage, "/World/joints/cone")
    (sj.CreateBody0Rel() if side_a == "bob" else sj.CreateBody1Rel()).SetTargets([Sdf.Path(bob)])
    sj.CreateExcludeFromArticulationAttr(True)
    sj.CreateAxisAttr("Z")
    sj.CreateConeAngle0LimitAttr(limit0)
    sj.CreateConeAngle1LimitAttr(limit0 if limit1 is None else limit1)
    return b, str(sj.GetPath()), bob


@pytest.mark.parametrize(
    ("limits", "tilt", "bound"),
    [
        ((20.0, 20.0), dict(tilt=math.radians(28.6)), 20.0),
        ((30.0, 15.0), dict(towards=(1.0, 0.0, 0.0)), 30.0),
        ((30.0, 15.0), dict(towards=(0.0, 1.0, 0.0)), 15.0),
    ],
    ids=["circular-from-outside", "about-x", "about-y"],
)
@pytest.mark.parametrize("side_a", ["world", "bob"])
def test_pendulum_held_by_a_loop_cone_as_by_its_tree_cone(limits, tilt, bound, side_a):
    """The pendulum pushed outward, 2 s at 240 Hz (float64), its cone on a loop-closing joint
    at the pivot (either side as body0) instead of on its tree joint: its swing stays within the
    cone (released 8.6 deg outside a 20 deg cone: back within 0.1 s, as the tree cone brings it)
    within ``CONE_TOL_DEG`` and rests on the edge where the tree cone rests, on each principal
    angle of the 30 x 15 deg ellipse (measured: past it by 2.3e-3 deg at most from outside, the
    tree cone 1.9e-3 deg; on the principal angles exact to 1e-14 deg; with coneAngle0/1 swapped it
    would rest at the other angle, 15 deg away)."""
    b, _, _ = loop_coned(*limits, side_a=side_a, **tilt)
    model = build_model(b.stage, precision="float64")
    assert [c.rows for c in model.closures] == [3]
    qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(model.dof_count), 480)
    sw = swing_deg(qs)
    assert sw[24:].max() <= bound + CONE_TOL_DEG
    assert ellipse_excess_deg(qs[24:], *limits).max() <= CONE_TOL_DEG
    assert abs(sw[-1] - bound) <= CONE_TOL_DEG


#: Where the oblique slide ends, loop cone against tree cone: within 0.01 deg (measured 4.4e-4
#: deg apart, float64: the loop model's own integration, its mid-step bias and projection, is not
#: the tree's). With the ellipse read in side b's frame instead of side a's it ends 5.5 deg away.
OBLIQUE_TOL_DEG = 0.01


def test_oblique_slide_on_a_loop_cone_ends_where_the_tree_cones_does():
    """The 30 x 15 deg ellipse, the pendulum released 8.6 deg off about (1, 1, 0) (float64, 2 s):
    with the world as body0 (the tree cone's parent) the loop cone's ellipse lies in the same frame
    as the tree cone's, so the bob slides along the same edge, within ``ELLIPSE_SLIDE_TOL_DEG`` of
    it, and ends within ``OBLIQUE_TOL_DEG`` of where the tree cone leaves it."""
    from test_solver_spherical import ELLIPSE_SLIDE_TOL_DEG

    ends = []
    for b, _, _ in (coned(30.0, 15.0, towards=(1.0, 1.0, 0.0)), loop_coned(30.0, 15.0, towards=(1.0, 1.0, 0.0))):
        model = build_model(b.stage, precision="float64")
        qs, _ = run(model, model.state().joint_q.numpy()[0], np.zeros(3), 480)
        assert ellipse_excess_deg(qs, 30.0, 15.0).max() <= ELLIPSE_SLIDE_TOL_DEG
        ends.append(swing_deg(qs)[-1])
    assert abs(ends[1] - ends[0]) <= OBLIQUE_TOL_DEG


def physx_four_bar_frames(bld, steps: int = 480) -> list:
    """Per step of real PhysX (ovphysx, CPU, rigid bodies and joints) on the four-bar, 240 Hz:
    the (crank, coupler, rocker) world rotations (damping off, as ``physx_pendulum_paths``)."""
    from mimic_ext.fet022.engines.physx_session import PhysxSession

    for path in BARS:
        prim = bld.stage.GetPrimAtPath(path)
        prim.AddAppliedSchema("PhysxRigidBodyAPI")
        for name in ("physxRigidBody:angularDamping", "physxRigidBody:linearDamping"):
            prim.CreateAttribute(name, Sdf.ValueTypeNames.Float).Set(0.0)
    session = PhysxSession(bld.stage.Flatten().ExportToString(), [], {}, rigid_bodies=list(BARS))
    frames = []
    try:
        for _ in range(steps):
            session.step(DT)
            poses = session.rigid_poses()
            frames.append([quat_to_mat(quat_wxyz(poses[b][0][3:7])) for b in BARS])
    finally:
        session.close()
    return frames


@pytest.mark.slow
@pytest.mark.parametrize(("limits", "held"), [((30.0, 30.0), True), ((170.0, 30.0), True), ((30.0, 170.0), False)])
def test_four_bar_rests_on_its_loop_closing_cone_as_on_physx(limits, held):
    """The four-bar with gravity along -X, 2 s at 240 Hz, here (float64) and in real PhysX
    (ovphysx, CPU; rigid bodies and joints, C a maximal joint as PhysX needs a loop's): with a
    30 deg cone on C (circular, or coneAngle1Limit 30) both come to rest on it, C's swing within
    0.1 deg of 30 (measured 0.0000 here, 0.036 PhysX) and the crank within 0.5 deg of PhysX's
    (measured 0.08 deg; unlimited it swings through 297 deg), ours never past the cone by more than
    ``LOOP_CONE_TOL_DEG`` (PhysX's passes it by 1.1 deg landing); with coneAngle0/1 swapped
    neither holds it (both fold to 42.7 deg: the same reading of the two angles)."""
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    bld, _ = four_bar_coned(*limits, gravity=(-1.0, 0.0, 0.0))
    _, _, ours = four_bar_run(bld)
    theirs = physx_four_bar_frames(bld)
    so, st = swing_at_c(ours), swing_at_c(theirs)
    if held:
        assert so.max() <= 30.0 + LOOP_CONE_TOL_DEG
        assert abs(so[-1] - 30.0) < 0.1 and abs(st[-1] - 30.0) < 0.1
        assert abs(crank_deg(ours)[-1] - crank_deg(theirs)[-1]) < 0.5
    else:
        assert so.max() > 42.0 and st.max() > 42.0


@pytest.mark.slow
@pytest.mark.parametrize("articulation", [True, False], ids=["articulation", "maximal"])
@pytest.mark.parametrize(
    ("limits", "towards", "bound"),
    [
        ((20.0, 20.0), (1.0, 0.3, 0.0), 20.0),
        ((30.0, 15.0), (1.0, 0.0, 0.0), 30.0),
        ((30.0, 15.0), (0.0, 1.0, 0.0), 15.0),
    ],
    ids=["circular", "about-x", "about-y"],
)
def test_pendulum_rests_on_its_loop_cone_as_on_physx(limits, towards, bound, articulation):
    """``loop_coned``'s pendulum (the cone on the loop-closing joint) released 8.6 deg off, 2 s at
    240 Hz here (float64) and in real PhysX (ovphysx, CPU; the bob an articulation or a rigid
    body): the bob's centre of mass within 2 cm of PhysX's all along (measured 0.9 to 12 mm, as
    with the tree cone: the fall before the cone), both at rest on the cone's edge at ``bound``
    within 0.1 deg (PhysX measured 0.006 deg off), ours never past it by more than
    ``CONE_TOL_DEG``."""
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    ours, theirs = physx_pendulum_paths(articulation, loop_coned(*limits, tilt=0.15, towards=towards), steps=480)

    assert_rests_on_cone_as_physx(ours, theirs, bound, gap=2e-2)


def test_coupling_impulse_of_a_relation_inside_a_coned_loop():
    """The four-bar resting on its 30 deg cone at C (gravity -X, float64, 1 s at 240 Hz) with its
    crank joint A following a wheel W (its own link, its centre of mass on its axis: ``Iz du_W =
    -mu``, mu the relation's impulse, is all that moves it). The impulse read back from the
    residual at A, which the cone's row spans, equals ``-Iz du_W`` within 1e-7 N m s (measured
    9e-10 of at most 0.04; float64 rounding of the residual); without the cone's ``J^T lambda``
    in the residual it was off by 0.14 once the mechanism rests on the cone."""
    from mimic_ext.solver import Solver

    iz = 0.01
    bld, joints = four_bar_coned(30.0, gravity=(-1.0, 0.0, 0.0))
    wheel = bld.body("wheel", mass=1.0, inertia=(iz, iz, iz), pos=(0.5, 0.5, 0.0))
    w = bld.revolute("W", None, wheel, "Z", pos0=(0.5, 0.5, 0.0))
    bld.mimic(joints["A"], w, 1.0)
    model = build_model(bld.stage, precision="float64")
    solver = Solver(model)
    a, b, c = model.state(), model.state(), model.control()
    iw = model.dof_index(w)
    gaps, rates = [], []
    for _ in range(240):
        u0 = a.joint_qd.numpy()[0][iw]
        solver.step(a, b, c, DT)
        a, b = b, a
        (row,) = solver.mimic_rows()
        want = -iz * (a.joint_qd.numpy()[0][iw] - u0)
        gaps.append(abs(row.impulse[0] - want))
        rates.append(abs(want))
    assert max(rates) > 0.01  # the cone stops the wheel through the relation
    assert max(gaps) < 1e-7


def test_parts_whose_cones_differ_are_not_copies():
    """The warp sweep engine runs a part once for all its translated copies (``parts.copy_key``):
    pendulums whose cones differ, on the loop-closing joint or on the tree joint, are not copies
    (the one would move as the other); the same cone is a copy."""
    from mimic_ext.solver.parts import copy_key
    from mimic_ext.solver.stage_reader import read_stage

    def key(built) -> tuple:
        return copy_key(read_stage(built[0].stage), [])[0]

    assert key(loop_coned(20.0)) == key(loop_coned(20.0))
    assert key(loop_coned(20.0)) != key(loop_coned(25.0))
    assert key(loop_coned(30.0, 15.0)) != key(loop_coned(15.0, 30.0))
    assert key(coned(20.0)) != key(coned(25.0))
