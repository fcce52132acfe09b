"""The stage reader's frames with general rotations: a transposed rotation or a flipped sign fails here.

A rotation of 90 degrees about a coordinate axis (the older tests' choice) hides a transpose:
``R D R^T`` and ``R^T D R`` agree for it. Every frame here is a rotation about a skew axis by an
angle that is no multiple of 90 degrees, on a stage in centimetres, and the expected values are
computed with USD's own ``Gf`` (row-vector matrices, transposed once here), not with the
package's math3d, so neither side can share a mistake with the other.

Tolerance: the stage stores float32 (``Gf.Quatf`` rotations, float positions and inertias):
about 1e-7 relative per value, a few of them composed, so 1e-5 relative (and 1e-5 of the
largest entry absolute) is far above rounding and far below any transpose or sign error here
(those change entries by 10 % or more).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom, UsdPhysics

from mimic_ext.solver.stage_reader import FREE, read_stage

MPU = 0.01  # centimetres: every length is scaled once at the boundary
RTOL = 1e-5


def rot(axis, deg: float) -> np.ndarray:
    """Column-vector rotation from Gf (its matrices are row-vector: transposed)."""
    return np.array(Gf.Matrix3d(Gf.Rotation(Gf.Vec3d(*axis), deg))).T


def gf_quat(axis, deg: float) -> Gf.Quatf:
    return Gf.Quatf(Gf.Rotation(Gf.Vec3d(*axis), deg).GetQuat())


def pose(R, t) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = R, t
    return out


def close(a, b, what: str) -> None:
    a, b = np.asarray(a, float), np.asarray(b, float)
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * max(1.0, float(np.abs(b).max())), err_msg=what)


#: body -> (world rotation (axis, deg), world position in cm, mass, diagonal inertia in kg cm^2,
#: principal axes (axis, deg), centre of mass in cm)
BODIES = {
    "a": (((1, 2, 3), 37.0), (10.0, -5.0, 20.0), 1.0, (300.0, 500.0, 700.0), ((3, -1, 2), 52.0), (2.0, 1.0, -3.0)),
    "b": (((-2, 1, 1), 71.0), (25.0, 4.0, 18.0), 2.0, (200.0, 900.0, 400.0), ((1, 1, -4), 23.0), (-1.0, 3.0, 0.5)),
    "c": (((0, 1, -3), 113.0), (31.0, 9.0, 12.0), 0.5, (50.0, 80.0, 120.0), ((2, 5, 1), 64.0), (0.5, -2.0, 1.0)),
}
WORLD_ROT, WORLD_POS = ((1, -1, 2), 29.0), (3.0, -2.0, 1.0)  # the bodies' parent Xform
#: ``build_anchored``'s extra body d and its static anchor (an Xform that is no rigid body)
EXTRA = {
    "d": (((1, -3, 1), 83.0), (36.0, 12.0, 8.0), 0.8, (90.0, 60.0, 150.0), ((-1, 2, 4), 31.0), (1.0, 0.5, -1.5)),
    "e": (((2, -1, -2), 54.0), (29.0, 14.0, 11.0), 0.3, (40.0, 70.0, 30.0), ((1, 4, -1), 19.0), (-0.5, 1.0, 0.5)),
}
STATIC = {"base": (((3, 1, -1), 33.0), (5.0, 5.0, -3.0))}


def world_of(name: str) -> np.ndarray:
    """A body's world pose in metres, composed from its authored ops and its parent's (Gf)."""
    (axis, deg), pos = ({**BODIES, **EXTRA, **STATIC})[name][:2]
    parent = pose(rot(*WORLD_ROT), np.array(WORLD_POS))
    return _metres(parent @ pose(rot(axis, deg), np.array(pos)))


def _metres(T: np.ndarray) -> np.ndarray:
    out = T.copy()
    out[:3, 3] *= MPU
    return out


def _xform(prim, R_axis_deg, pos) -> None:
    xf = UsdGeom.Xformable(prim)
    xf.AddTranslateOp().Set(Gf.Vec3d(*pos))
    xf.AddOrientOp().Set(gf_quat(*R_axis_deg))


def _joint_frames(joint: UsdPhysics.Joint, frame_world_m: np.ndarray, body0: str | None, body1: str | None):
    """Author the joint's two local frames so both sides meet at ``frame_world_m`` (metres)."""
    for side, body in ((0, body0), (1, body1)):
        local = frame_world_m if body is None else np.linalg.inv(world_of(body)) @ frame_world_m
        q = Gf.Matrix4d(local.T.tolist()).ExtractRotationQuat()  # Gf wants the row-vector form
        pos = Gf.Vec3f(*(local[:3, 3] / MPU))
        (joint.CreateLocalPos0Attr if side == 0 else joint.CreateLocalPos1Attr)().Set(pos)
        (joint.CreateLocalRot0Attr if side == 0 else joint.CreateLocalRot1Attr)().Set(Gf.Quatf(q))


#: joint world frames (rotation (axis, deg), position in cm)
F1 = (((2, -1, 1), 41.0), (12.0, -4.0, 19.0))
F2 = (((1, 3, -1), 58.0), (22.0, 1.0, 17.0))
F3 = (((-1, 2, 2), 17.0), (28.0, 6.0, 14.0))
F4 = (((4, 1, -2), 66.0), (30.0, 8.0, 13.0))
F6 = (((-3, 2, 1), 49.0), (33.0, 11.0, 10.0))
F7 = (((2, 2, -1), 76.0), (35.0, 13.0, 9.0))
F8 = (((1, 1, 3), 62.0), (30.0, 13.0, 12.0))


def frame_m(spec) -> np.ndarray:
    return _metres(pose(rot(*spec[0]), np.array(spec[1])))


def _bodies(stage: Usd.Stage, specs: dict) -> None:
    """Rigid bodies under /World, each posed and given its mass, inertia, principal axes and COM."""
    for name, (r, p, m, d, pa, c) in specs.items():
        prim = UsdGeom.Xform.Define(stage, f"/World/{name}").GetPrim()
        _xform(prim, r, p)
        UsdPhysics.RigidBodyAPI.Apply(prim)
        mass = UsdPhysics.MassAPI.Apply(prim)
        mass.CreateMassAttr(m)
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*d))
        mass.CreatePrincipalAxesAttr(gf_quat(*pa))
        mass.CreateCenterOfMassAttr(Gf.Vec3f(*c))


def build(root_joint: bool = True, closure: bool = False) -> Usd.Stage:
    """World -J1(revolute Y)- a -J2(revolute Z, authored from b to a: reversed)- b -J3(fixed)- c;
    ``closure``: J4, a prismatic from c to the world excluded from the articulation."""
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, MPU)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    world = UsdGeom.Xform.Define(stage, "/World").GetPrim()
    _xform(world, *(WORLD_ROT, WORLD_POS))
    _bodies(stage, BODIES)
    if root_joint:
        j1 = UsdPhysics.RevoluteJoint.Define(stage, "/World/J1")
        j1.CreateAxisAttr("Y")
        j1.CreateBody1Rel().SetTargets(["/World/a"])
        _joint_frames(j1, frame_m(F1), None, "a")
    j2 = UsdPhysics.RevoluteJoint.Define(stage, "/World/J2")
    j2.CreateAxisAttr("Z")
    j2.CreateBody0Rel().SetTargets(["/World/b"])
    j2.CreateBody1Rel().SetTargets(["/World/a"])
    _joint_frames(j2, frame_m(F2), "b", "a")
    j3 = UsdPhysics.FixedJoint.Define(stage, "/World/J3")
    j3.CreateBody0Rel().SetTargets(["/World/b"])
    j3.CreateBody1Rel().SetTargets(["/World/c"])
    _joint_frames(j3, frame_m(F3), "b", "c")
    if closure:
        j4 = UsdPhysics.PrismaticJoint.Define(stage, "/World/J4")
        j4.CreateAxisAttr("Y")
        j4.CreateBody0Rel().SetTargets(["/World/c"])
        j4.CreateExcludeFromArticulationAttr(True)
        _joint_frames(j4, frame_m(F4), "c", None)
    return stage


def build_anchored() -> Usd.Stage:
    """``build(closure=True)`` whose root joint J1 hangs from a static, posed prim (no rigid body),
    with a body d hinged (J6, axis X) to c, which is welded into link b, a body e welded (J8) to c,
    and a loop closure J7
    from d to the static prim: joint frames whose parent side is neither the world's identity nor
    the link's own body."""
    stage = build(root_joint=False, closure=True)
    base = UsdGeom.Xform.Define(stage, "/World/base").GetPrim()
    _xform(base, *STATIC["base"])
    j1 = UsdPhysics.RevoluteJoint.Define(stage, "/World/J1")
    j1.CreateAxisAttr("Y")
    j1.CreateBody0Rel().SetTargets(["/World/base"])
    j1.CreateBody1Rel().SetTargets(["/World/a"])
    _joint_frames(j1, frame_m(F1), "base", "a")
    _bodies(stage, EXTRA)
    j8 = UsdPhysics.FixedJoint.Define(stage, "/World/J8")  # e welded to c, itself welded into link b
    j8.CreateBody0Rel().SetTargets(["/World/c"])
    j8.CreateBody1Rel().SetTargets(["/World/e"])
    _joint_frames(j8, frame_m(F8), "c", "e")
    j6 = UsdPhysics.RevoluteJoint.Define(stage, "/World/J6")
    j6.CreateAxisAttr("X")
    j6.CreateBody0Rel().SetTargets(["/World/c"])
    j6.CreateBody1Rel().SetTargets(["/World/d"])
    _joint_frames(j6, frame_m(F6), "c", "d")
    j7 = UsdPhysics.SphericalJoint.Define(stage, "/World/J7")
    j7.CreateBody0Rel().SetTargets(["/World/d"])
    j7.CreateBody1Rel().SetTargets(["/World/base"])
    j7.CreateExcludeFromArticulationAttr(True)
    _joint_frames(j7, frame_m(F7), "d", "base")
    return stage


def links_world(spec) -> list[np.ndarray]:
    """Each link's world frame at q = 0, from the reader's joint frames alone (children follow parents)."""
    out: list[np.ndarray] = []
    for lk in spec.links:
        base = out[lk.parent] if lk.parent >= 0 else (lk.pose0 if lk.jtype == FREE else np.eye(4))
        out.append(base @ lk.X_p @ np.linalg.inv(lk.X_c))
    return out


def test_tree_frames_put_every_body_where_the_stage_has_it():
    """X_p, X_c and the welded bodies' poses compose back to each body's world pose, with a
    reversed joint (J2 authored from child to parent) and a fixed joint's weld among them."""
    spec = read_stage(build())
    assert [lk.body for lk in spec.links] == ["/World/a", "/World/b"]
    worlds = links_world(spec)
    placed = {body: W @ P for lk, W in zip(spec.links, worlds) for body, P in lk.bodies}
    assert set(placed) == {"/World/a", "/World/b", "/World/c"}
    for body, W in placed.items():
        close(W, world_of(body.rsplit("/", 1)[1]), body)


def test_joint_axes_point_along_the_authored_axis_in_the_world():
    """Each joint's axis (sign folded in) seen from both sides is the authored axis of its frame
    in the world; J2 is authored from the child b to its parent a, so its axis is negated."""
    spec = read_stage(build())
    worlds = links_world(spec)
    want = {
        "/World/a": rot(*F1[0]) @ [0.0, 1.0, 0.0],
        "/World/b": -(rot(*F2[0]) @ [0.0, 0.0, 1.0]),
    }
    for lk, W in zip(spec.links, worlds):
        parent = worlds[lk.parent] if lk.parent >= 0 else np.eye(4)
        close((parent @ lk.X_p)[:3, :3] @ lk.axis, want[lk.body], f"{lk.body} parent side")
        close((W @ lk.X_c)[:3, :3] @ lk.axis, want[lk.body], f"{lk.body} child side")


def _expected_mass(names) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, COM, inertia about the COM), world frame, SI, from Gf rotations and the parallel-axis rule."""
    ms, coms, inertias = [], [], []
    for name in names:
        _r, _p, m, d, pa, c = BODIES[name]
        W = world_of(name)
        R = W[:3, :3] @ rot(*pa)
        ms.append(m)
        coms.append(W[:3, :3] @ (np.array(c) * MPU) + W[:3, 3])
        inertias.append(R @ np.diag(np.array(d) * MPU * MPU) @ R.T)
    mt = sum(ms)
    com = sum(m * c for m, c in zip(ms, coms)) / mt
    inertia = sum(
        i + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com)) for m, c, i in zip(ms, coms, inertias)
    )
    return mt, com, inertia


def test_mass_properties_rotate_by_the_principal_axes_and_the_weld():
    """Link b holds b and the welded c: its COM and inertia (link frame) are the Gf-computed
    world values turned into the link frame; link a's are its principal inertia rotated once."""
    spec = read_stage(build())
    worlds = links_world(spec)
    for lk, W, names in zip(spec.links, worlds, (["a"], ["b", "c"])):
        m, com, inertia = _expected_mass(names)
        R = W[:3, :3]
        assert lk.mass == pytest.approx(m, rel=RTOL)
        close(lk.com, R.T @ (com - W[:3, 3]), f"{lk.body} com")
        close(lk.inertia, R.T @ inertia @ R, f"{lk.body} inertia")


def test_floating_root_starts_at_its_world_pose():
    spec = read_stage(build(root_joint=False))
    root = spec.links[0]
    assert root.jtype == FREE and root.body == "/World/b"  # the body that is never a body1
    close(root.pose0, world_of("b"), "pose0")
    placed = {body: W @ P for lk, W in zip(spec.links, links_world(spec)) for body, P in lk.bodies}
    for body, W in placed.items():
        close(W, world_of(body.rsplit("/", 1)[1]), body)


def test_loop_closure_frames_meet_and_turn_the_axis_onto_x():
    """A prismatic loop closure from c (welded into link b) to the world: both of its frames are
    the authored joint frame in the world at q = 0, turned so that the slide axis (Y) is x."""
    spec = read_stage(build(closure=True))
    (c,) = spec.closures
    assert c.kind == "prismatic" and c.link_b == -1
    worlds = links_world(spec)
    side_a = worlds[c.link_a] @ c.frame_a
    side_b = c.frame_b
    close(side_a, side_b, "the two sides at q = 0")
    close(side_a[:3, 3], frame_m(F4)[:3, 3], "origin")
    close(side_a[:3, 0], rot(*F4[0]) @ [0.0, 1.0, 0.0], "the slide axis is the frame's x")
    assert np.linalg.det(side_a[:3, :3]) == pytest.approx(1.0, rel=RTOL)


def test_free_body_velocity_is_of_the_body_origin():
    """A free body's authored COM velocity (cm/s) and angular velocity (deg/s), world frame,
    become the floating DOFs' (angular, body-origin) velocity: v_origin = v_com - w x (R com)."""
    stage = build(root_joint=False)
    prim = UsdGeom.Xform.Define(stage, "/World/lone").GetPrim()
    _xform(prim, ((2, 3, -1), 47.0), (40.0, 0.0, 5.0))
    UsdPhysics.RigidBodyAPI.Apply(prim)
    rb = UsdPhysics.RigidBodyAPI(prim)
    rb.CreateVelocityAttr(Gf.Vec3f(30.0, -10.0, 20.0))
    rb.CreateAngularVelocityAttr(Gf.Vec3f(90.0, -45.0, 30.0))
    mass = UsdPhysics.MassAPI.Apply(prim)
    mass.CreateMassAttr(1.0)
    mass.CreateCenterOfMassAttr(Gf.Vec3f(4.0, -2.0, 3.0))
    spec = read_stage(stage, free_bodies=True)
    (lone,) = [lk for lk in spec.links if lk.body == "/World/lone"]
    assert lone.parent == -1 and lone.jtype == FREE  # a link of its own, on the world
    close(
        lone.pose0,
        _metres(pose(rot(*WORLD_ROT), np.array(WORLD_POS)) @ pose(rot((2, 3, -1), 47.0), np.array((40.0, 0.0, 5.0)))),
        "pose0",
    )
    R = (pose(rot(*WORLD_ROT), np.zeros(3)) @ pose(rot((2, 3, -1), 47.0), np.zeros(3)))[:3, :3]
    w = np.radians([90.0, -45.0, 30.0])
    want = np.concatenate(
        [w, np.array([30.0, -10.0, 20.0]) * MPU - np.cross(w, R @ (np.array([4.0, -2.0, 3.0]) * MPU))]
    )
    close(lone.base_velocity, want, "base velocity")


@pytest.mark.parametrize(
    ("up", "direction", "magnitude", "want"),
    [
        ("Y", None, None, (0.0, -9.81, 0.0)),  # no scene: down the stage's up axis, Earth gravity
        ("Z", None, None, (0.0, 0.0, -9.81)),
        ("Z", (1.0, 2.0, 2.0), 500.0, (5.0 / 3.0, 10.0 / 3.0, 10.0 / 3.0)),  # 500 cm/s^2 along (1, 2, 2) / 3
        ("Y", None, 200.0, (0.0, -2.0, 0.0)),  # a scene with a magnitude only: down the up axis
    ],
)
def test_gravity_direction_and_units(up, direction, magnitude, want):
    stage = build()
    UsdGeom.SetStageUpAxis(stage, up)
    if direction is not None or magnitude is not None:
        scene = UsdPhysics.Scene.Define(stage, "/Scene")
        if direction is not None:
            scene.CreateGravityDirectionAttr(Gf.Vec3f(*direction))
        if magnitude is not None:
            scene.CreateGravityMagnitudeAttr(magnitude)
    close(read_stage(stage).gravity, want, "gravity")


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, -1, 0), (0, 0, 1), (0.3, -0.5, 0.8), (-0.95, 0.1, 0.2)])
def test_axis_frame_is_a_rotation_with_x_along_the_axis(axis):
    from mimic_ext.solver.stage_reader import axis_frame

    R = axis_frame(axis)
    close(R[:, 0], np.array(axis) / np.linalg.norm(axis), "x column")
    close(R.T @ R, np.eye(3), "orthonormal")
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-12)  # float64 of unit vectors: rounding only


def test_general_rotation_is_no_quarter_turn():
    """The frames above are general: no rotation here is its own transpose's conjugate by chance
    (R D R^T differs from R^T D R for a generic diagonal D by far more than the tolerance)."""
    D = np.diag([1.0, 2.0, 3.0])
    for spec in [b[0] for b in BODIES.values()] + [b[4] for b in BODIES.values()] + [F1[0], F2[0], F3[0], F4[0]]:
        R = rot(*spec)
        assert np.abs(R @ D @ R.T - R.T @ D @ R).max() > 0.05, spec
        assert not math.isclose(spec[1] % 90.0, 0.0)


def test_d6_loop_closure_turns_its_free_rotation_onto_x():
    """A generic (D6) loop closure locking all but the rotation about its frame's Y: its frames
    are turned (a permutation of the axes, a proper rotation) so that the free rotation is x, and
    it locks what a revolute closure locks."""
    stage = build()
    j5 = UsdPhysics.Joint.Define(stage, "/World/J5")
    j5.CreateBody0Rel().SetTargets(["/World/c"])
    j5.CreateExcludeFromArticulationAttr(True)
    _joint_frames(j5, frame_m(F4), "c", None)
    for dof in ("transX", "transY", "transZ", "rotX", "rotZ"):
        lim = UsdPhysics.LimitAPI.Apply(j5.GetPrim(), dof)
        lim.CreateLowAttr(1.0)
        lim.CreateHighAttr(-1.0)  # low > high: locked
    spec = read_stage(stage)
    (c,) = spec.closures
    assert c.kind == "d6" and (c.mask, c.angmode) == (0b110111, 1)
    side_a = links_world(spec)[c.link_a] @ c.frame_a
    close(side_a, c.frame_b, "the two sides at q = 0")
    close(side_a[:3, :3].T @ side_a[:3, :3], np.eye(3), "a rotation")
    assert np.linalg.det(side_a[:3, :3]) == pytest.approx(1.0, rel=RTOL)
    close(side_a[:3, 0], rot(*F4[0]) @ [0.0, 1.0, 0.0], "the free rotation's axis is x")


def test_frames_from_a_static_anchor_and_a_welded_parent():
    """J1 hangs from a posed static prim, J6's parent side is c (welded into link b, not b's own
    frame), J7 closes a loop from d to the static prim: bodies land where the stage has them, the
    joint axes point along their authored axes, and the closure's two sides meet."""
    spec = read_stage(build_anchored())
    assert [lk.body for lk in spec.links] == ["/World/a", "/World/b", "/World/d"]
    worlds = links_world(spec)
    placed = {body: W @ P for lk, W in zip(spec.links, worlds) for body, P in lk.bodies}
    assert set(placed) == {f"/World/{n}" for n in ("a", "b", "c", "d", "e")}
    for body, W in placed.items():
        close(W, world_of(body.rsplit("/", 1)[1]), body)
    want = {
        "/World/a": rot(*F1[0]) @ [0.0, 1.0, 0.0],
        "/World/b": -(rot(*F2[0]) @ [0.0, 0.0, 1.0]),
        "/World/d": rot(*F6[0]) @ [1.0, 0.0, 0.0],
    }
    for lk, W in zip(spec.links, worlds):
        parent = worlds[lk.parent] if lk.parent >= 0 else np.eye(4)
        close((parent @ lk.X_p)[:3, :3] @ lk.axis, want[lk.body], f"{lk.body} parent side")
        close((parent @ lk.X_p)[:3, 3], (W @ lk.X_c)[:3, 3], f"{lk.body} joint origin")
    (sph,) = [c for c in spec.closures if c.kind == "spherical"]
    assert sph.link_b == -1
    side_a = worlds[sph.link_a] @ sph.frame_a
    close(side_a, sph.frame_b, "the spherical closure's sides at q = 0")
    close(side_a, frame_m(F7), "at the authored frame")
