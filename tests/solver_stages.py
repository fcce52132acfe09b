"""Small UsdPhysics stages built in memory for the solver tests (no files).

Each builder returns a stage whose geometry is simple enough that the expected motion
can be written down by hand (inertias about the joint axes, torques, gear ratios).
"""

from __future__ import annotations

import math

import numpy as np
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

import mimic_ext.schema  # noqa: F401  (registers the mimic schemas)
from mimic_ext.schema import MimicRelation, set_relation


class StageBuilder:
    """Bodies and joints under /World, SI stage (metres, kilograms), Z up, gravity along -Z.

    With ``fixed_base`` the stage starts with an articulation root body ``base`` (1 kg,
    0.01 kg m^2) welded to the world by the fixed joint ``anchor``; its path is ``self.base``
    (None otherwise), for tests whose joints all hang on one immobile body.
    """

    def __init__(self, gravity: float = 0.0, fixed_base: bool = False):
        self.stage = Usd.Stage.CreateInMemory()
        UsdGeom.SetStageUpAxis(self.stage, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(self.stage, 1.0)
        UsdGeom.Xform.Define(self.stage, "/World")
        scene = UsdPhysics.Scene.Define(self.stage, "/World/physicsScene")
        scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
        scene.CreateGravityMagnitudeAttr(gravity)
        self.base: str | None = None
        if fixed_base:
            self.base = self.body("base", 1.0, (0.01, 0.01, 0.01), root=True)
            self.fixed("anchor", None, self.base)

    def body(
        self,
        name: str,
        mass: float | None = 1.0,
        inertia=(1.0, 1.0, 1.0),
        com=(0, 0, 0),
        pos=(0, 0, 0),
        root: bool = False,
    ) -> str:
        path = f"/World/{name}"
        xf = UsdGeom.Xform.Define(self.stage, path)
        xf.AddTranslateOp().Set(Gf.Vec3d(*pos))
        prim = xf.GetPrim()
        UsdPhysics.RigidBodyAPI.Apply(prim)
        if root:
            UsdPhysics.ArticulationRootAPI.Apply(prim)
        if mass is not None:
            m = UsdPhysics.MassAPI.Apply(prim)
            m.CreateMassAttr(mass)
            m.CreateDiagonalInertiaAttr(Gf.Vec3f(*inertia))
            m.CreateCenterOfMassAttr(Gf.Vec3f(*com))
        return path

    def _joint(self, schema, name: str, body0: str | None, body1: str, pos0=(0, 0, 0), pos1=(0, 0, 0)):
        path = f"/World/joints/{name}"
        j = schema.Define(self.stage, path)
        if body0:
            j.CreateBody0Rel().SetTargets([Sdf.Path(body0)])
        j.CreateBody1Rel().SetTargets([Sdf.Path(body1)])
        j.CreateLocalPos0Attr(Gf.Vec3f(*pos0))
        j.CreateLocalPos1Attr(Gf.Vec3f(*pos1))
        j.CreateLocalRot0Attr(Gf.Quatf(1, 0, 0, 0))
        j.CreateLocalRot1Attr(Gf.Quatf(1, 0, 0, 0))
        return j

    def _one_dof(self, schema, name, body0, body1, axis, limits, pos0, pos1) -> str:
        j = self._joint(schema, name, body0, body1, pos0, pos1)
        j.CreateAxisAttr(axis)
        if limits is not None:
            j.CreateLowerLimitAttr(limits[0])
            j.CreateUpperLimitAttr(limits[1])
        return str(j.GetPath())

    def revolute(
        self, name: str, body0: str | None, body1: str, axis: str = "Z", limits_deg=None, pos0=(0, 0, 0), pos1=(0, 0, 0)
    ) -> str:
        return self._one_dof(UsdPhysics.RevoluteJoint, name, body0, body1, axis, limits_deg, pos0, pos1)

    def prismatic(
        self, name: str, body0: str | None, body1: str, axis: str = "X", limits=None, pos0=(0, 0, 0), pos1=(0, 0, 0)
    ) -> str:
        return self._one_dof(UsdPhysics.PrismaticJoint, name, body0, body1, axis, limits, pos0, pos1)

    def fixed(self, name: str, body0: str | None, body1: str, pos0=(0, 0, 0), pos1=(0, 0, 0)) -> str:
        return str(self._joint(UsdPhysics.FixedJoint, name, body0, body1, pos0, pos1).GetPath())

    def spherical(self, name: str, body0: str | None, body1: str) -> str:
        return str(self._joint(UsdPhysics.SphericalJoint, name, body0, body1).GetPath())

    def drive(
        self,
        joint: str,
        stiffness: float,
        damping: float,
        target: float = 0.0,
        max_force: float | None = None,
        angular: bool = True,
    ) -> None:
        """USD units: per degree and degrees for angular drives."""
        prim = self.stage.GetPrimAtPath(joint)
        d = UsdPhysics.DriveAPI.Apply(prim, "angular" if angular else "linear")
        d.CreateStiffnessAttr(stiffness)
        d.CreateDampingAttr(damping)
        d.CreateTargetPositionAttr(target)
        if max_force is not None:
            d.CreateMaxForceAttr(max_force)

    def mimic(
        self,
        follower: str,
        leader: str,
        multiplier: float,
        offset: float = 0.0,
        natural_frequency: float = 0.0,
        damping_ratio: float = 0.0,
        instance: str = "rotX",
    ) -> None:
        """Canonical SI relation ``q_f = multiplier q_l + offset``, authored as PhysxMimicJointAPI."""
        set_relation(
            self.stage,
            MimicRelation(
                follower=follower,
                leader=leader,
                multiplier=multiplier,
                offset=offset,
                instance=instance,
                natural_frequency=natural_frequency,
                damping_ratio=damping_ratio,
            ),
        )


def independent_pair(
    kind_l: str = "revolute",
    kind_f: str = "revolute",
    I_l: float = 2.0,
    I_f: float = 0.5,
    multiplier: float | None = 1.0,
    offset: float = 0.0,
    limits_f=None,
    limits_l=None,
    com_f=(0.0, 0.0, 0.0),
):
    """Two 1-DOF joints from the world, each to its own body with inertia I about (mass I along) its axis.

    Revolute joints turn about Z through the body's centre of mass (the follower's off it by
    ``com_f``, body frame, m); prismatic ones slide along X.
    Returns (builder, leader path, follower path).
    """
    b = StageBuilder()
    paths = []
    for name, kind, inertia, y, lim in (
        ("leader", kind_l, I_l, 0.0, limits_l),
        ("follower", kind_f, I_f, 1.0, limits_f),
    ):
        com = com_f if name == "follower" else (0.0, 0.0, 0.0)
        if kind == "revolute":
            body = b.body(name, mass=1.0, inertia=(1.0, 1.0, inertia), pos=(0, y, 0), com=com)
            paths.append(b.revolute(f"{name}_joint", None, body, "Z", limits_deg=lim, pos0=(0, y, 0)))
        else:
            body = b.body(name, mass=inertia, inertia=(0.1, 0.1, 0.1), pos=(0, y, 0))
            paths.append(b.prismatic(f"{name}_joint", None, body, "X", limits=lim, pos0=(0, y, 0)))
    if multiplier is not None:
        b.mimic(paths[1], paths[0], multiplier, offset)
    return b, paths[0], paths[1]


def spinning_wheel(
    speed: float, max_angular: float | None = None, max_linear: float | None = None, offset: float = 0.0
):
    """A 1 kg wheel (0.01 kg m^2 about Z) on a revolute joint about Z from a fixed base, its
    centre of mass ``offset`` m off the axis, starting at ``speed`` rad/s (PhysicsJointStateAPI),
    gravity off; ``max_angular`` (rad/s) / ``max_linear`` (m/s) authored as PhysxRigidBodyAPI's
    caps on the wheel (USD: deg/s, stage units/s). Returns (builder, wheel body, joint path)."""
    b = StageBuilder(fixed_base=True)
    wheel = b.body("wheel", 1.0, (0.01, 0.01, 0.01), pos=(offset, 0, 0))
    joint = b.revolute("spin", b.base, wheel, "Z", pos1=(-offset, 0, 0))
    prim = b.stage.GetPrimAtPath(joint)
    prim.AddAppliedSchema("PhysicsJointStateAPI:angular")
    prim.CreateAttribute("state:angular:physics:velocity", Sdf.ValueTypeNames.Float).Set(speed / DEG)
    body = b.stage.GetPrimAtPath(wheel)
    if max_angular is not None or max_linear is not None:
        body.AddAppliedSchema("PhysxRigidBodyAPI")
    if max_angular is not None:
        body.CreateAttribute("physxRigidBody:maxAngularVelocity", Sdf.ValueTypeNames.Float).Set(max_angular / DEG)
    if max_linear is not None:
        body.CreateAttribute("physxRigidBody:maxLinearVelocity", Sdf.ValueTypeNames.Float).Set(max_linear)
    return b, wheel, joint


def gripper(floating: bool = False, gravity: float = 0.0, multiplier: float = -1.0):
    """A palm with two revolute fingers (follower mimics leader), optionally a floating palm.

    The fingers have offset centres of mass so that the palm feels their reaction.
    """
    b = StageBuilder(gravity=gravity)
    palm = b.body("palm", mass=1.0, inertia=(0.01, 0.02, 0.015), com=(0.0, 0.0, 0.02), root=True)
    left = b.body("left", mass=0.2, inertia=(1e-3, 2e-3, 1.5e-3), com=(0.0, 0.0, 0.05))
    right = b.body("right", mass=0.3, inertia=(1e-3, 1e-3, 2e-3), com=(0.0, 0.0, 0.06))
    jl = b.revolute("left_joint", palm, left, "X", pos0=(0, 0.05, 0.1), pos1=(0, 0, 0))
    jr = b.revolute("right_joint", palm, right, "X", pos0=(0, -0.05, 0.1), pos1=(0, 0, 0))
    if not floating:
        b.fixed("anchor", None, palm)
    b.mimic(jr, jl, multiplier, 0.0)
    return b, jl, jr


def chain3(m1: float = 2.0, m2: float = -0.5, c1: float = 0.1, c2: float = 0.0):
    """Three independent revolute joints: B = m1 A + c1, C = m2 B + c2."""
    b = StageBuilder()
    paths = []
    for i, name in enumerate("ABC"):
        body = b.body(name, mass=1.0, inertia=(1, 1, 0.5 + i), pos=(0, i, 0))
        paths.append(b.revolute(f"{name}_joint", None, body, "Z", pos0=(0, i, 0)))
    b.mimic(paths[1], paths[0], m1, c1)
    b.mimic(paths[2], paths[1], m2, c2, instance="rotY")
    return b, paths


def franka_hand_equivalent():
    """The shared Franka hand (menagerie hand.xml) built by hand: fixed palm, two slide fingers.

    Mirrors the MJCF: hand body rotated by quat (0 0 0 1) (180 deg about Z), fingers at
    z = 0.0584 sliding along their local Y, the right finger turned 180 deg about Z, and
    finger_joint1 = finger_joint2 (joint equality). Returns (builder, joint1, joint2).
    """
    b = StageBuilder(gravity=9.81)
    hand = b.body("hand", mass=0.73, inertia=(0.001, 0.0025, 0.0017), com=(-0.01, 0, 0.03))
    lf = b.body("left_finger", mass=0.015, inertia=(2.375e-6, 2.375e-6, 7.5e-7))
    rf = b.body("right_finger", mass=0.015, inertia=(2.375e-6, 2.375e-6, 7.5e-7))
    anchor = b._joint(UsdPhysics.FixedJoint, "anchor", None, hand)
    anchor.CreateLocalRot0Attr(Gf.Quatf(0, 0, 0, 1))
    j1 = b._joint(UsdPhysics.PrismaticJoint, "finger_joint1", hand, lf, pos0=(0, 0, 0.0584))
    j1.CreateAxisAttr("Y")
    j1.CreateLowerLimitAttr(0.0)
    j1.CreateUpperLimitAttr(0.04)
    j2 = b._joint(UsdPhysics.PrismaticJoint, "finger_joint2", hand, rf, pos0=(0, 0, 0.0584))
    j2.CreateLocalRot0Attr(Gf.Quatf(0, 0, 0, 1))
    j2.CreateAxisAttr("Y")
    j2.CreateLowerLimitAttr(0.0)
    j2.CreateUpperLimitAttr(0.04)
    for j in (j1, j2):
        j.GetPrim().AddAppliedSchema("PhysxJointAPI")  # PhysX reads physxJoint:* only with it
        j.GetPrim().CreateAttribute("physxJoint:armature", Sdf.ValueTypeNames.Float).Set(0.1)
    p1, p2 = str(j1.GetPath()), str(j2.GetPath())
    b.mimic(p1, p2, 1.0, 0.0)
    return b, p1, p2


DEG = math.pi / 180.0


def states_at(model, positions: dict[str, float]):
    """(start state with the given joint positions, SI, others 0; a second state to step into)."""
    q = np.zeros(model.dof_count)
    for path, value in positions.items():
        q[model.dof_index(path)] = value
    s0, s1 = model.state(), model.state()
    s0.joint_q.assign(q[None].repeat(model.num_envs, axis=0))
    return s0, s1


def four_bar(
    a: float = 0.1,
    b: float = 0.25,
    c: float = 0.2,
    d: float = 0.22,
    theta0: float = 1.0,
    excluded: bool = True,
    gravity: float = 0.0,
    mass: float = 0.2,
):
    """A planar four-bar in the XY plane, every joint about Z: ground pivots A = (0, 0) and
    D = (d, 0), crank AB (length a, at theta0 from +X), coupler BC (b), rocker DC (c).

    The tree is world -A-> crank -B-> coupler and world -D-> rocker; the joint at C closes the
    loop (``excluded``: marked physics:excludeFromArticulation; otherwise it reaches a body
    already in the tree). Every body frame sits at the world origin (the joints' local
    positions are their world points), each bar a thin rod of ``mass`` along its length.
    Returns (builder, {"A", "B", "D", "C"}: joint paths, points (B, C) at theta0).
    """
    B, C = _four_bar_points(theta0, a, b, c, d)
    Dp = np.array([d, 0.0])
    bld = StageBuilder(gravity=gravity)
    bodies = {}
    for name, p0, p1 in (("crank", np.zeros(2), B), ("coupler", B, C), ("rocker", Dp, C)):
        length = float(np.linalg.norm(p1 - p0))
        mid = (p0 + p1) / 2
        I = mass * length**2 / 12
        bodies[name] = bld.body(name, mass=mass, inertia=(I, I, I), com=(mid[0], mid[1], 0.0))
    pts = {"A": (0.0, 0.0, 0.0), "B": (B[0], B[1], 0.0), "D": (d, 0.0, 0.0), "C": (C[0], C[1], 0.0)}
    joints = {
        "A": bld.revolute("A", None, bodies["crank"], "Z", pos0=pts["A"], pos1=pts["A"]),
        "B": bld.revolute("B", bodies["crank"], bodies["coupler"], "Z", pos0=pts["B"], pos1=pts["B"]),
        "D": bld.revolute("D", None, bodies["rocker"], "Z", pos0=pts["D"], pos1=pts["D"]),
        "C": bld.revolute("C", bodies["coupler"], bodies["rocker"], "Z", pos0=pts["C"], pos1=pts["C"]),
    }
    if excluded:
        UsdPhysics.Joint(bld.stage.GetPrimAtPath(joints["C"])).CreateExcludeFromArticulationAttr(True)
    return bld, joints, (B, C)


def _four_bar_points(theta: float, a: float, b: float, c: float, d: float):
    """(B, C) of the four-bar at crank angle theta: C is where the circles |C - B| = b and
    |C - D| = c meet, on the upper branch."""
    B = np.array([a * math.cos(theta), a * math.sin(theta)])
    r = np.array([d, 0.0]) - B
    L = np.linalg.norm(r)
    x = (L * L + b * b - c * c) / (2 * L)
    h = math.sqrt(b * b - x * x)
    return B, B + x * r / L + h * np.array([-r[1], r[0]]) / L


def four_bar_follower_angle(theta: float, a: float, b: float, c: float, d: float) -> float:
    """The rocker's angle from +X (upper branch) for crank angle theta: the analytic solution."""
    _, C = _four_bar_points(theta, a, b, c, d)
    return math.atan2(C[1], C[0] - d)


def closure_gaps(model, stage, q) -> float:
    """Largest distance between the two anchors of every loop-closing joint of ``model`` at ``q``,
    from the stage's own joint frames and float64 forward kinematics (independent of the kernel)."""
    from mimic_ext.solver.inspect import body_poses

    poses = body_poses(model, np.asarray(q, float))
    mpu = UsdGeom.GetStageMetersPerUnit(stage)
    worst = 0.0
    for path in model.closure_paths:
        j = UsdPhysics.Joint(stage.GetPrimAtPath(path))
        ends = []
        for rel, pos in ((j.GetBody0Rel(), j.GetLocalPos0Attr()), (j.GetBody1Rel(), j.GetLocalPos1Attr())):
            targets = rel.GetTargets()
            pose = poses[str(targets[0])] if targets else np.eye(4)
            ends.append((pose @ np.r_[np.array(pos.Get(), float) * mpu, 1.0])[:3])
        worst = max(worst, float(np.linalg.norm(ends[0] - ends[1])))
    return worst
