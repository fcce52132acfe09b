"""USD stage -> articulation trees in SI units (pure Python/numpy, run once per model).

This is the only place where the solver reads USD, so unit conversions (degrees, stage
units, per-degree drive gains) happen here exactly once, and so are the checks that every
physics value read is usable (finite, non-negative where it must be, lower <= upper): a bad
one raises ``StageValueError`` naming the prim, never a NaN state later. Fixed joints are
merged into their parent link; joints excluded from the articulation, and joints that
reach a body already in a tree, close loops (``ClosureSpec``); a tree whose root has no
joint to the world gets a floating base.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from pxr import Gf, Usd, UsdGeom, UsdPhysics

from .. import joint_types as JT
from ..math3d import gf_wxyz, inverse, mat_to_quat, quat_to_mat, quat_xyzw, transform
from ..schema import joints as J
from ..schema.physics_values import inertia_rounding
from .errors import StageValueError, UnsupportedStageError

#: The tree links' joint codes (``LinkSpec.jtype``), the kernels' own (``joint_types``)
REVOLUTE, PRISMATIC, FREE, SPHERICAL = (JT.JOINT_CODES[k] for k in (JT.REVOLUTE, JT.PRISMATIC, JT.FREE, JT.SPHERICAL))

#: Default mass properties for a body without MassAPI (or with mass 0): PhysX would derive
#: them from collision shapes, which real assets sometimes lack (missing mesh payloads).
#: 0.1 kg with the inertia of a solid 5 cm-radius sphere: small next to a hand's links
#: but not so small that it makes the mass matrix ill-conditioned.
DEFAULT_MASS = 0.1
DEFAULT_RADIUS = 0.05
DEFAULT_GRAVITY = 9.81

_AXES = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]), "Z": np.array([0.0, 0.0, 1.0])}


def _gf_quat_mat(q) -> np.ndarray:
    return quat_to_mat(gf_wxyz(q))


def mat_to_quat_xyzw(r: np.ndarray) -> np.ndarray:
    """Rotation matrix -> unit quaternion (x, y, z, w), Warp's order (a floating base's joint_q)."""
    return quat_xyzw(mat_to_quat(r))


def _bad(prim, what: str, value, fix: str):
    return StageValueError(f"{prim.GetPath() if hasattr(prim, 'GetPath') else prim}: {what} is {value}; {fix}")


def _check_finite(prim, what: str, values) -> None:
    """Raise naming the prim when any of ``values`` (a number or a sequence) is NaN or infinite."""
    try:  # the common case, without numpy: plain numbers, all finite
        if all(map(math.isfinite, values if hasattr(values, "__iter__") else (values,))):
            return
    except TypeError:
        pass
    flat = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(flat).all():
        raise _bad(prim, what, tuple(flat.tolist()) if flat.size > 1 else float(flat[0]), "author finite values")


def _check_non_negative(prim, what: str, value, allow_inf: bool = False) -> float:
    """``value`` as a float, raising naming the prim when it is NaN, negative (or infinite)."""
    v = float(value)
    if math.isnan(v) or v < 0 or (math.isinf(v) and not allow_inf):
        raise _bad(prim, what, v, "author a finite value >= 0" if not allow_inf else "author a value >= 0")
    return v


def world_pose(prim: Usd.Prim, mpu: float, cache: UsdGeom.XformCache | None = None) -> np.ndarray:
    """The prim's world transform without scale, translation in metres. ``cache``: an
    ``XformCache`` shared by many calls on one stage (each ancestor's transform read once)."""
    if not prim.IsA(UsdGeom.Xformable):
        m = Gf.Matrix4d(1.0)
    elif cache is not None:
        m = cache.GetLocalToWorldTransform(prim)
    else:
        m = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    if not np.isfinite(np.asarray(m)).all():
        _check_finite(prim, "its world transform", [m[i][j] for i in range(4) for j in range(4)])
    t = Gf.Transform(m)
    return transform(_gf_quat_mat(t.GetRotation().GetQuat()), np.array(t.GetTranslation()) * mpu)


@dataclass
class JointSpec:
    """One revolute or prismatic joint of the tree, SI units."""

    path: str
    kind: str
    lower: float = -math.inf
    upper: float = math.inf
    max_velocity: float = math.inf
    friction: float = 0.0
    armature: float = 0.0
    stiffness: float = 0.0
    damping: float = 0.0
    max_force: float = math.inf
    has_drive: bool = False
    target_pos: float = 0.0
    target_vel: float = 0.0
    q0: float = 0.0
    u0: float = 0.0


@dataclass
class LinkSpec:
    """A rigid link (one body plus any bodies welded to it by fixed joints)."""

    body: str
    parent: int
    jtype: int
    joint: JointSpec | None
    X_p: np.ndarray  # joint frame in the parent link frame (world when parent == -1)
    X_c: np.ndarray  # joint frame in this link's frame
    axis: np.ndarray  # unit axis in the joint frame (sign folded in)
    pose0: np.ndarray  # initial world pose (floating bases); a spherical joint's initial rotation
    bodies: list = field(default_factory=list)  # (path, pose in link frame)
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    restore: bool = True  # a floating root whose tree's momentum the step restores exactly
    base_velocity: np.ndarray | None = None  # a free body's initial (angular, origin) velocity, world
    path: str | None = None  # a spherical joint's prim (a 1-DOF joint's is ``joint.path``)
    max_angular: float = math.inf  # rad/s: the least authored physxRigidBody:maxAngularVelocity of its bodies
    max_linear: float = math.inf  # m/s, of its centre of mass: the least authored maxLinearVelocity
    cone: float = math.inf  # rad: a spherical joint's coneAngle0Limit (its cone's half-angle), inf none
    cone1: float = math.inf  # rad: its coneAngle1Limit (== cone: circular; else elliptical, packing.pack_cones)
    cone_axis: np.ndarray | None = None  # the cone's axis in the joint frame (the joint's physics:axis)


#: Locked directions of a loop-closing joint in its frame turned so that a free rotation
#: axis is x: bit d locks translation along axis d (d < 3) or rotation about axis d - 3.
CLOSURE_MASKS = {J.REVOLUTE: 0b110111, J.PRISMATIC: 0b111110, J.SPHERICAL: 0b000111, J.FIXED: 0b111111}


@dataclass
class ClosureSpec:
    """A loop-closing joint: side a (body0) and side b (body1) as (link, frame in that link's
    frame; link -1: the world, frame in world), each frame turned so that a free rotation is
    about x; ``mask`` its locked directions (see CLOSURE_MASKS); ``angmode`` 1 when x turns freely."""

    path: str
    kind: str
    link_a: int
    frame_a: np.ndarray
    link_b: int
    frame_b: np.ndarray
    mask: int
    angmode: int
    cone: float = math.inf  # rad: a spherical closure's coneAngle0Limit (side b's axis within it of side a's)
    cone1: float = math.inf  # rad: its coneAngle1Limit (as ``LinkSpec.cone1``)
    cone_axis: np.ndarray | None = None  # the cone's axis in the joint frame (the joint's physics:axis)

    @property
    def rows(self) -> int:
        return bin(self.mask).count("1")


@dataclass
class StageSpec:
    links: list[LinkSpec]
    gravity: np.ndarray
    warnings: list[str]
    joint_kinds: dict[str, str]  # every joint prim on the stage -> kind (for error messages)
    excluded: list[str]  # joints that are not tree joints: loop closures, unsupported kinds
    source: str
    closures: list[ClosureSpec] = field(default_factory=list)
    world_bodies: dict[str, np.ndarray] = field(default_factory=dict)  # bodies welded to the world: pose
    unmoved: dict[str, str] = field(default_factory=dict)  # joints that move no body -> why


def _gravity(stage: Usd.Stage, mpu: float) -> np.ndarray:
    up = UsdGeom.GetStageUpAxis(stage)
    down = -_AXES[up if up in _AXES else "Z"]
    for prim in stage.Traverse():
        if prim.IsA(UsdPhysics.Scene):
            scene = UsdPhysics.Scene(prim)
            d = scene.GetGravityDirectionAttr().Get()
            mag = scene.GetGravityMagnitudeAttr().Get()
            if d is not None:
                _check_finite(prim, "physics:gravityDirection", d)
            if mag is not None and math.isnan(mag):
                raise _bad(prim, "physics:gravityMagnitude", mag, "author a magnitude (or -inf for Earth gravity)")
            direction = np.array(d, float) if d is not None and np.linalg.norm(np.array(d, float)) > 0 else down
            direction = direction / np.linalg.norm(direction)
            g = DEFAULT_GRAVITY if mag is None or not math.isfinite(mag) or mag < 0 else float(mag) * mpu
            return direction * g
    return down * DEFAULT_GRAVITY


def _attr(prim: Usd.Prim, name: str):
    a = prim.GetAttribute(name)
    return a.Get() if a and a.HasAuthoredValue() else None


def applied_attr(prim: Usd.Prim, api: str, name: str, instead: str, notes: list[str]):
    """Attribute ``name`` of PhysX's ``api`` on ``prim``, None when unauthored or when the API
    is not applied: PhysX reads its attributes only where the API is (``J.has_api``), and the
    reader says so in ``notes``, once per prim and attribute (``instead``: what counts then)."""
    v = _attr(prim, name)
    if v is not None and not J.has_api(prim, api):
        note = (
            f"{prim.GetPath()}: {name} = {v!r} is authored but {api} is not applied, so PhysX ignores it "
            f"({instead}), and so does this reader; apply {api} to the prim for it to count"
        )
        if note not in notes:
            notes.append(note)
        return None
    return v


def _physx_joint_terms(prim: Usd.Prim, notes: list[str]) -> tuple[str | None, str | None, str | None]:
    """The attributes PhysX takes the joint's velocity cap, Coulomb friction and armature from
    (None: none counts), as omni.physx picks them (NVIDIA-Omniverse/PhysX, ``usdLoad/Joint.cpp``):
    PhysxJointAxisAPI's per-axis attributes where it is applied (friction: its
    ``dynamicFrictionEffort``, a torque or force), else PhysxJointAPI's where that is applied
    (friction: ``physxJoint:jointFriction``); the notes say what is authored but does not count."""
    axis = J.physx_axis(prim)
    terms = (("maxJointVelocity", "no velocity cap"), ("friction", "no joint friction"), ("armature", "no armature"))
    for term, instead in terms:
        old = J.PHYSX_JOINT_TERMS[term][0]
        if axis is None:
            applied_attr(prim, J.PHYSX_JOINT_API, old, instead, notes)  # notes it where the API is missing
        elif _attr(prim, old) is not None:
            notes.append(
                f"{prim.GetPath()}: {old} is authored but {J.PHYSX_AXIS_API}:{axis} is applied, whose "
                f"physxJointAxis:{axis}:* PhysX reads instead, and so does this reader; author the value there"
            )
    if axis is not None:
        pre = f"physxJointAxis:{axis}:"
        static, dynamic = _attr(prim, pre + "staticFrictionEffort"), _attr(prim, pre + "dynamicFrictionEffort")
        if static is not None and static != (dynamic or 0.0):
            notes.append(
                f"{prim.GetPath()}: {pre}staticFrictionEffort = {static!r} differs from its "
                f"dynamicFrictionEffort ({dynamic!r}); this solver's Coulomb friction is one bound, the "
                f"dynamic effort"
            )
        if (_attr(prim, pre + "viscousFrictionCoefficient") or 0.0) != 0.0:
            notes.append(
                f"{prim.GetPath()}: {pre}viscousFrictionCoefficient is not modelled (ignored); author a "
                f"drive damping for a velocity-proportional torque"
            )
    v, f, a = (J.physx_joint_attr(prim, term) for term, _ in terms)
    return v, f, a


def _local_frame(joint: UsdPhysics.Joint, side: int, mpu: float) -> np.ndarray:
    pos = (joint.GetLocalPos0Attr() if side == 0 else joint.GetLocalPos1Attr()).Get()
    rot = (joint.GetLocalRot0Attr() if side == 0 else joint.GetLocalRot1Attr()).Get()
    if pos is not None:
        pos = tuple(pos)  # Gf's elements read once
        if not all(map(math.isfinite, pos)):
            _check_finite(joint.GetPrim(), f"physics:localPos{side}", pos)
    if rot is not None:
        rot = gf_wxyz(rot)
        if not all(map(math.isfinite, rot)):
            _check_finite(joint.GetPrim(), f"physics:localRot{side}", rot)
    p = np.array(pos, float) * mpu if pos is not None else np.zeros(3)
    r = quat_to_mat(rot) if rot is not None else np.eye(3)
    return transform(r, p)


def _joint_spec(prim: Usd.Prim, kind: str, mpu: float, kgpu: float, notes: list[str]) -> JointSpec:
    spec = JointSpec(path=str(prim.GetPath()), kind=kind)
    typed = UsdPhysics.RevoluteJoint(prim) if kind == J.REVOLUTE else UsdPhysics.PrismaticJoint(prim)
    lo, hi = typed.GetLowerLimitAttr().Get(), typed.GetUpperLimitAttr().Get()
    for name, value in (("physics:lowerLimit", lo), ("physics:upperLimit", hi)):
        if value is not None and math.isnan(value):
            raise _bad(prim, name, value, "author a number (+-inf for no limit)")
    lim = J.limits_si(prim)
    if lim is not None:
        if lim[0] > lim[1]:
            raise _bad(
                prim,
                "physics:lowerLimit > physics:upperLimit",
                f"{lo} > {hi}",
                "swap them (lower <= upper), or lock the joint with a fixed joint",
            )
        spec.lower, spec.upper = lim
    ang = kind == J.REVOLUTE
    s = J.DEG if ang else mpu  # SI per USD unit of the DOF
    force_scale = kgpu * mpu * mpu if ang else kgpu * mpu  # SI per USD torque / force
    v_name, f_name, a_name = _physx_joint_terms(prim, notes)
    raw_v = _attr(prim, v_name) if v_name else None
    if v_name and raw_v is not None and math.isnan(raw_v):
        raise _bad(prim, v_name, raw_v, "author a number (or remove it for no cap)")
    v = J.max_velocity_si(prim)
    if v is not None:
        spec.max_velocity = v
    f = _attr(prim, f_name) if f_name else None
    if f_name and f is not None:
        spec.friction = _check_non_negative(prim, f_name, f) * force_scale
    a = _attr(prim, a_name) if a_name else None
    if a_name and a is not None:
        spec.armature = _check_non_negative(prim, a_name, a) * (kgpu * mpu * mpu if ang else kgpu)
    dof = "angular" if ang else "linear"
    if prim.HasAPI(UsdPhysics.DriveAPI, dof):
        drive = UsdPhysics.DriveAPI(prim, dof)
        kp = _check_non_negative(prim, f"drive:{dof}:physics:stiffness", drive.GetStiffnessAttr().Get() or 0.0)
        kd = _check_non_negative(prim, f"drive:{dof}:physics:damping", drive.GetDampingAttr().Get() or 0.0)
        fmax = drive.GetMaxForceAttr().Get()
        if fmax is not None:
            fmax = _check_non_negative(prim, f"drive:{dof}:physics:maxForce", fmax, allow_inf=True)
        tp = drive.GetTargetPositionAttr().Get() or 0.0
        tv = drive.GetTargetVelocityAttr().Get() or 0.0
        _check_finite(prim, f"drive:{dof}:physics:targetPosition / targetVelocity", [tp, tv])
        spec.has_drive = True
        spec.stiffness = kp * force_scale / s  # per degree (or unit) -> per rad (or m)
        spec.damping = kd * force_scale / s
        spec.max_force = (
            math.inf if fmax is None or not math.isfinite(fmax) or fmax >= 3.4e38 else float(fmax) * force_scale
        )
        spec.target_pos = float(tp) * s
        spec.target_vel = float(tv) * s
    # the initial state only where PhysicsJointStateAPI:<dof> is applied, as omni.physx reads it
    # (NVIDIA-Omniverse/PhysX, usdLoad/Joint.cpp: fillPhysicsJointStateDesc, PhysxSchemaJointStateAPI::Get)
    state_api = f"PhysicsJointStateAPI:{dof}"
    pos = applied_attr(prim, state_api, f"state:{dof}:physics:position", "the joint starts at 0", notes)
    vel = applied_attr(prim, state_api, f"state:{dof}:physics:velocity", "the joint starts at rest", notes)
    if pos is not None or vel is not None:
        _check_finite(prim, f"state:{dof}:physics:position / velocity", [pos or 0.0, vel or 0.0])
    spec.q0 = float(pos) * s if pos is not None else 0.0
    spec.u0 = float(vel) * s if vel is not None else 0.0
    return spec


def _body_mass(prim: Usd.Prim, mpu: float, kgpu: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com in body frame, inertia about com in body frame); mass 0 when not authored."""
    mass, com, inertia = 0.0, np.zeros(3), None
    if prim.HasAPI(UsdPhysics.MassAPI):
        api = UsdPhysics.MassAPI(prim)
        m = api.GetMassAttr().Get()
        if m is not None:
            mass = _check_non_negative(prim, "physics:mass", m) * kgpu  # 0: not authored (default below)
        c = api.GetCenterOfMassAttr().Get()
        c = None if c is None else tuple(c)  # Gf's elements read once
        if c is not None and not all(abs(x) == math.inf and x < 0 for x in c):  # (-inf, -inf, -inf): not authored
            if not all(map(math.isfinite, c)):
                _check_finite(prim, "physics:centerOfMass", c)
            com = np.array(c, float) * mpu
        d = api.GetDiagonalInertiaAttr().Get()
        if d is not None:
            d = tuple(d)
            zero = inertia_rounding(d)  # a component within rounding of zero is zero, not negative
            d = tuple(0.0 if -zero <= x < 0 else x for x in d)
            for x in d:
                _check_non_negative(prim, "physics:diagonalInertia", x)
        if d is not None and sum(d) > 0:
            pa = api.GetPrincipalAxesAttr().Get()
            axes = None
            if pa is not None:
                axes = gf_wxyz(pa)
                if not all(map(math.isfinite, axes)):
                    _check_finite(prim, "physics:principalAxes", axes)
            r = quat_to_mat(axes) if pa is not None and pa.GetLength() > 0.5 else np.eye(3)
            inertia = r @ np.diag(np.array(d, float) * kgpu * mpu * mpu) @ r.T
    if inertia is None:
        inertia = np.eye(3) * 0.4 * mass * DEFAULT_RADIUS**2
    return mass, com, inertia


def read_stage(stage: Usd.Stage, fix_base: bool = False, free_bodies: bool = False) -> StageSpec:
    """Articulation trees of every stage body that a revolute/prismatic/spherical/fixed joint connects.

    ``free_bodies`` (a model with contacts): every other enabled, non-kinematic rigid body is a
    floating link of its own (a box on a table), with its authored velocity; and no floating
    tree's momentum is restored, since contacts exchange momentum with the world."""
    mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
    kgpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
    layer = stage.GetRootLayer().identifier
    for name, value in (("metersPerUnit", mpu), ("kilogramsPerUnit", kgpu)):
        if not (math.isfinite(value) and value > 0):
            raise StageValueError(
                f"{layer}: stage {name} is {value}; author a positive number (1 for SI) in the layer metadata"
            )
    notes: list[str] = []
    closure_prims: list[tuple[Usd.Prim, str]] = []
    unmoved: dict[str, str] = {}
    bodies: dict[str, Usd.Prim] = {}
    roots_api: set[str] = set()
    kinematic: set[str] = set()
    joint_prims: list[tuple[Usd.Prim, str]] = []
    joint_kinds: dict[str, str] = {}
    excluded: list[str] = []
    xforms, poses = UsdGeom.XformCache(), {}

    cones: dict[str, tuple[float, float, np.ndarray]] = {}

    def cone_of(prim: Usd.Prim) -> tuple[float, float, np.ndarray]:
        """A spherical joint's cone (``_cone_limit``'s half-angles, then its axis), read once per joint."""
        key = str(prim.GetPath())
        if key not in cones:
            axis = _AXES.get(str(UsdPhysics.SphericalJoint(prim).GetAxisAttr().Get()), _AXES["X"])
            cones[key] = (*_cone_limit(prim), axis)
        return cones[key]

    def pose_of(prim: Usd.Prim) -> np.ndarray:
        """``world_pose``, once per prim (a copy: callers compose with it)."""
        key = prim.GetPath()
        if key not in poses:
            poses[key] = world_pose(prim, mpu, xforms)
        return poses[key].copy()

    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            rb = UsdPhysics.RigidBodyAPI(prim)
            if rb.GetRigidBodyEnabledAttr().Get() is not False:
                pose_of(prim)  # refuses a NaN or infinite transform, naming the body
                bodies[str(prim.GetPath())] = prim
                if rb.GetKinematicEnabledAttr().Get():
                    kinematic.add(str(prim.GetPath()))
        if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
            roots_api.add(str(prim.GetPath()))
        kind = J.joint_kind(prim)
        if kind is None:
            continue
        joint_kinds[str(prim.GetPath())] = kind
        joint = UsdPhysics.Joint(prim)
        if joint.GetJointEnabledAttr().Get() is False:
            continue
        if joint.GetExcludeFromArticulationAttr().Get():
            excluded.append(str(prim.GetPath()))
            closure_prims.append((prim, kind))
            continue
        joint_prims.append((prim, kind))

    def side_body(path: str | None) -> str | None:
        return path if path in bodies and path not in kinematic else None

    # adjacency over bodies; None stands for the world (static prims, kinematic bodies)
    edges: list[tuple[Usd.Prim, str, str | None, str | None]] = []
    targets_of: dict[Usd.Prim, tuple[str | None, str | None]] = {}  # joint -> (body0, body1) targets
    for prim, kind in joint_prims:
        b0, b1 = targets_of[prim] = J.joint_bodies(prim)
        s0, s1 = side_body(b0), side_body(b1)
        if s0 is None and s1 is None:
            named = [b for b in (b0, b1) if b]
            unmoved[str(prim.GetPath())] = (
                f"names no rigid body (physics:body0 and physics:body1 are {' and '.join(named) or 'empty'})"
                if not any(b in bodies for b in named)
                else "joins only kinematic or static bodies"
            )
            continue
        if kind not in (J.REVOLUTE, J.PRISMATIC, J.SPHERICAL, J.FIXED):
            raise UnsupportedStageError(
                f"{prim.GetPath()}: {kind} joints are not modelled by the mimic solver; mark it "
                f"physics:excludeFromArticulation or replace it with revolute/prismatic/spherical/fixed joints"
            )
        if kind == J.SPHERICAL:
            cone_of(prim)  # a bad cone refused before the trees are built (an excluded joint's with its closure)
        edges.append((prim, kind, s0, s1))
    adj: dict[str | None, list[int]] = {}
    for i, (_, _, s0, s1) in enumerate(edges):
        adj.setdefault(s0, []).append(i)
        adj.setdefault(s1, []).append(i)

    def anchor(path: str | None) -> np.ndarray:
        """World pose of a joint's static side (a non-body prim, a kinematic body or nothing)."""
        if path is None:
            return np.eye(4)
        prim = stage.GetPrimAtPath(path)
        return pose_of(prim) if prim and prim.IsValid() else np.eye(4)

    links: list[LinkSpec] = []
    where: dict[str, tuple[int, np.ndarray]] = {}  # body -> (link, pose in link frame); link -1 = world
    used: set[int] = set()
    defaulted: list[str] = []

    def attach(link: int, body: str, pose: np.ndarray) -> None:
        where[body] = (link, pose)
        if link >= 0:
            links[link].bodies.append((body, pose))

    def expand(queue: deque) -> None:
        while queue:
            node = queue.popleft()
            for ei in adj.get(node, []):
                if ei in used:
                    continue
                used.add(ei)
                prim, kind, s0, s1 = edges[ei]
                jnt = UsdPhysics.Joint(prim)
                b0, b1 = targets_of[prim]
                if node == s0:
                    child, p_side, c_side, sign = s1, 0, 1, 1.0
                else:
                    child, p_side, c_side, sign = s0, 1, 0, -1.0
                if child is None or child in where:
                    excluded.append(str(prim.GetPath()))
                    closure_prims.append((prim, kind))
                    notes.append(
                        f"{prim.GetPath()}: closes a loop of the articulation; enforced as a loop "
                        f"closure (PhysX needs physics:excludeFromArticulation on it)"
                    )
                    continue
                if node is None:
                    plink, ppose = -1, anchor(b0 if p_side == 0 else b1)
                else:
                    plink, ppose = where[node]
                lp = _local_frame(jnt, p_side, mpu)
                lc = _local_frame(jnt, c_side, mpu)
                if kind == J.FIXED:
                    attach(plink, child, ppose @ lp @ inverse(lc))
                elif kind == J.SPHERICAL:
                    # its quaternion starts at the bodies' authored relative rotation (joint frame 1
                    # in joint frame 0), as PhysX places an articulation from its bodies' poses
                    f0 = (pose_of(bodies[node]) if node is not None else ppose) @ lp
                    f1 = pose_of(bodies[child]) @ lc
                    rel = np.eye(4)
                    rel[:3, :3] = f0[:3, :3].T @ f1[:3, :3]
                    links.append(
                        LinkSpec(
                            body=child,
                            parent=plink,
                            jtype=SPHERICAL,
                            joint=None,
                            X_p=ppose @ lp,
                            X_c=lc,
                            axis=_AXES["X"].copy(),  # the joint frame as authored: no turn
                            pose0=rel,
                            path=str(prim.GetPath()),
                            cone=(cone := cone_of(prim))[0],
                            cone1=cone[1],
                            cone_axis=cone[2],
                        )
                    )
                    attach(len(links) - 1, child, np.eye(4))
                else:
                    axis_tok = (
                        UsdPhysics.RevoluteJoint(prim).GetAxisAttr().Get()
                        if kind == J.REVOLUTE
                        else UsdPhysics.PrismaticJoint(prim).GetAxisAttr().Get()
                    )
                    spec = _joint_spec(prim, kind, mpu, kgpu, notes)
                    links.append(
                        LinkSpec(
                            body=child,
                            parent=plink,
                            jtype=REVOLUTE if kind == J.REVOLUTE else PRISMATIC,
                            joint=spec,
                            X_p=ppose @ lp,
                            X_c=lc,
                            axis=sign * _AXES.get(str(axis_tok), _AXES["X"]),
                            pose0=np.eye(4),
                        )
                    )
                    attach(len(links) - 1, child, np.eye(4))
                queue.append(child)

    # trees rooted at the world first, then floating ones
    if None in adj:
        expand(deque([None]))
    for path in bodies:
        if path in where or path not in adj or path in kinematic:
            continue
        # pick the root: the articulation-root body, else a body that is never a joint's body1
        comp, seen, q = [], {path}, deque([path])
        while q:
            b = q.popleft()
            comp.append(b)
            for ei in adj.get(b, []):
                _, _, s0, s1 = edges[ei]
                for o in (s0, s1):
                    if o is not None and o not in seen:
                        seen.add(o)
                        q.append(o)
        body1s = {edges[ei][3] for b in comp for ei in adj.get(b, [])}
        root = next((b for b in comp if b in roots_api), None) or next((b for b in comp if b not in body1s), comp[0])
        pose = pose_of(bodies[root])
        if fix_base:
            where[root] = (-1, pose)
        else:
            links.append(
                LinkSpec(
                    body=root,
                    parent=-1,
                    jtype=FREE,
                    joint=None,
                    X_p=np.eye(4),
                    X_c=np.eye(4),
                    axis=np.zeros(3),
                    pose0=pose,
                )
            )
            attach(len(links) - 1, root, np.eye(4))
        expand(deque([root]))

    if free_bodies:
        for path, prim in bodies.items():
            if path in where or path in kinematic:
                continue
            pose = pose_of(prim)
            links.append(
                LinkSpec(
                    body=path,
                    parent=-1,
                    jtype=FREE,
                    joint=None,
                    X_p=np.eye(4),
                    X_c=np.eye(4),
                    axis=np.zeros(3),
                    pose0=pose,
                    base_velocity=_free_velocity(prim, pose, mpu, kgpu),
                )
            )
            attach(len(links) - 1, path, np.eye(4))
        for link in links:
            if link.jtype == FREE:
                link.restore = False

    # Bodies welded into a link add their mass; a massless one (a tool frame, a fingertip
    # marker) adds nothing. A massless link with mass somewhere below it (the massless
    # ``jointChainLink`` bodies our MJCF importer writes between the joints of a multi-joint
    # body) stays massless: its joint still moves that mass. Only a link with no mass in its
    # whole subtree gets the documented default.
    own = []
    for link in links:
        ms, coms, inertias = [], [], []
        for body, pose in link.bodies:
            w, v = _velocity_caps(bodies[body], mpu, notes)
            link.max_angular, link.max_linear = min(link.max_angular, w), min(link.max_linear, v)
            m, c, inertia = _body_mass(bodies[body], mpu, kgpu)
            if m <= 0:
                continue
            r = pose[:3, :3]
            ms.append(m)
            coms.append(r @ c + pose[:3, 3])
            inertias.append(r @ inertia @ r.T)
        own.append((ms, coms, inertias))
    below = [bool(o[0]) for o in own]
    for i in range(len(links) - 1, -1, -1):  # children come after their parents
        if below[i] and links[i].parent >= 0:
            below[links[i].parent] = True
    for link, (ms, coms, inertias), massive in zip(links, own, below):
        if not ms and massive:
            link.mass, link.com, link.inertia = 0.0, np.zeros(3), np.zeros((3, 3))
            continue
        if not ms:
            body, pose = link.bodies[0]
            defaulted.append(body)
            ms, coms = [DEFAULT_MASS], [pose[:3, 3]]
            inertias = [np.eye(3) * 0.4 * DEFAULT_MASS * DEFAULT_RADIUS**2]
        mt = float(sum(ms))
        com = sum(m * c for m, c in zip(ms, coms)) / mt
        inertia = np.zeros((3, 3))
        for m, c, i in zip(ms, coms, inertias):
            d = c - com
            inertia += i + m * (d @ d * np.eye(3) - np.outer(d, d))
        link.mass, link.com, link.inertia = mt, com, inertia
    if defaulted:
        msg = (
            f"{len(defaulted)} bod{'y has' if len(defaulted) == 1 else 'ies have'} no mass properties "
            f"(no MassAPI or mass 0, nor a massive body welded to them or below them); using the default {DEFAULT_MASS} kg with the inertia of a "
            f"{DEFAULT_RADIUS} m solid sphere: {', '.join(defaulted)}"
        )
        notes.append(msg)
        warnings.warn(msg, stacklevel=3)
    closures = []
    for prim, kind in closure_prims:
        spec = _closure(prim, kind, where, bodies, kinematic, anchor, mpu, notes)
        if spec is not None:
            if kind == J.SPHERICAL:
                spec.cone, spec.cone1, spec.cone_axis = cone_of(prim)
            closures.append(spec)
    _mark_closed_trees(links, closures)
    # initial poses of floating roots were set above; the rest follow from q by FK in the kernel
    return StageSpec(
        links=links,
        gravity=_gravity(stage, mpu),
        warnings=notes,
        joint_kinds=joint_kinds,
        excluded=excluded,
        source=layer,
        closures=closures,
        unmoved=unmoved,
        world_bodies={b: pose for b, (link, pose) in where.items() if link < 0},
    )


def _cone_limit(prim: Usd.Prim) -> tuple[float, float]:
    """A spherical joint's cone half-angles (rad; inf: none), as PhysX reads them:
    ``physics:coneAngle0Limit`` / ``coneAngle1Limit`` (degrees; PhysX bounds the swing about the
    axis after the joint's ``physics:axis`` by the first, about the one after that by the second)
    without ``PhysicsLimitAPI``; a negative or
    infinite angle is no limit (UsdPhysics: "a negative value means not limited", the default -1).
    Unequal angles are an elliptical cone (``rows.cone_setup``); a limit on one angle only is
    refused, naming the prim (PhysX has no half-limited cone), as is a NaN."""
    sj = UsdPhysics.SphericalJoint(prim)
    limits = []
    for name, attr in (
        ("physics:coneAngle0Limit", sj.GetConeAngle0LimitAttr()),
        ("physics:coneAngle1Limit", sj.GetConeAngle1LimitAttr()),
    ):
        v = attr.Get() if attr else None
        if v is not None and math.isnan(v):
            raise _bad(prim, name, v, "author an angle in degrees (-1 for no limit)")
        limits.append(math.inf if v is None or v < 0 or v >= 180.0 else float(v))
    if math.isinf(limits[0]) != math.isinf(limits[1]):
        raise UnsupportedStageError(
            f"{prim.GetPath()}: physics:coneAngle0Limit = {limits[0]} deg and coneAngle1Limit = {limits[1]} deg: "
            f"the mimic solver simulates a cone limited on both angles or on neither; author both (or -1 on both)"
        )
    return math.radians(limits[0]), math.radians(limits[1])


def _velocity_caps(prim: Usd.Prim, mpu: float, notes: list[str]) -> tuple[float, float]:
    """The body's authored ``physxRigidBody:maxAngularVelocity`` (deg/s -> rad/s) and
    ``maxLinearVelocity`` (stage units/s -> m/s), inf where unauthored. Only authored values
    count: PhysX's unauthored default (5729.58 deg/s, 100 rad/s) would clip a spin PhysX users
    reach on purpose by raising it, and this solver needs no cap to stay stable (docs/solver.md)."""
    caps = []
    for name, scale in (("maxAngularVelocity", math.pi / 180.0), ("maxLinearVelocity", mpu)):
        v = applied_attr(prim, "PhysxRigidBodyAPI", f"physxRigidBody:{name}", "no cap", notes)
        v = math.inf if v is None else _check_non_negative(prim, f"physxRigidBody:{name}", v, allow_inf=True)
        caps.append(v * scale if v < 3.4e38 else math.inf)  # FLT_MAX: PhysX's "unlimited"
    return caps[0], caps[1]


def _free_velocity(prim: Usd.Prim, pose: np.ndarray, mpu: float, kgpu: float) -> np.ndarray:
    """A free body's authored ``physics:velocity`` (of its centre of mass, stage units/s) and
    ``physics:angularVelocity`` (deg/s) as the floating DOFs' (angular, body-origin) velocity."""
    rb = UsdPhysics.RigidBodyAPI(prim)
    v, w = rb.GetVelocityAttr().Get(), rb.GetAngularVelocityAttr().Get()
    for name, x in (("physics:velocity", v), ("physics:angularVelocity", w)):
        if x is not None:
            _check_finite(prim, name, x)
    w = np.radians(np.array(w if w is not None else (0, 0, 0), float))
    v = np.array(v if v is not None else (0, 0, 0), float) * mpu
    com = pose[:3, :3] @ _body_mass(prim, mpu, kgpu)[1]
    return np.concatenate([w, v - np.cross(w, com)])


def _root(links: list[LinkSpec], i: int) -> int:
    while i >= 0 and links[i].parent >= 0:
        i = links[i].parent
    return i


def _mark_closed_trees(links: list[LinkSpec], closures: list[ClosureSpec]) -> None:
    """A floating tree closed to the world or to another tree exchanges momentum through the
    closure: its momentum is not restored (``LinkSpec.restore``)."""
    for c in closures:
        ra, rb = _root(links, c.link_a), _root(links, c.link_b)
        if ra != rb:
            for r in (ra, rb):
                if r >= 0:
                    links[r].restore = False


def axis_frame(axis) -> np.ndarray:
    """A rotation whose x column is the unit ``axis`` (the identity for +x): the solver turns
    every joint frame so that its axis is x. (Stage axes are a few signed tokens: each frame is
    computed once.)"""
    return _axis_frame(tuple(float(x) for x in np.ravel(axis))).copy()


@functools.lru_cache(maxsize=256)
def _axis_frame(axis: tuple) -> np.ndarray:
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    helper = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    c2 = helper - (helper @ a) * a
    c2 /= np.linalg.norm(c2)
    return np.column_stack([a, c2, np.cross(a, c2)])


def _axis_turn(axis) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = axis_frame(axis)
    return t


def _closure_pattern(prim: Usd.Prim, kind: str, notes: list[str]):
    """(mask, angmode, axis permutation frame) of a loop-closing joint, or None when it locks
    nothing this solver can enforce (a note says why)."""
    path = prim.GetPath()
    if kind in (J.REVOLUTE, J.PRISMATIC):
        token = (
            (UsdPhysics.RevoluteJoint(prim) if kind == J.REVOLUTE else UsdPhysics.PrismaticJoint(prim))
            .GetAxisAttr()
            .Get()
        )
        lim = J.limits_si(prim)
        dof = "angular" if kind == J.REVOLUTE else "linear"
        drive = UsdPhysics.DriveAPI(prim, dof) if prim.HasAPI(UsdPhysics.DriveAPI, dof) else None
        driven = drive is not None and bool(
            (drive.GetStiffnessAttr().Get() or 0) or (drive.GetDampingAttr().Get() or 0)
        )
        if lim is not None or driven:
            notes.append(
                f"{path}: limits and drives on a loop-closing joint are not enforced (only its locked directions are)"
            )
        return CLOSURE_MASKS[kind], int(kind == J.REVOLUTE), _axis_turn(_AXES.get(str(token), _AXES["X"]))
    if kind in (J.SPHERICAL, J.FIXED):
        return CLOSURE_MASKS[kind], 0, np.eye(4)
    if kind == J.D6:
        locked = J.d6_locked_dofs(prim)
        lin = [i for i, d in enumerate(J.TRANS_DOFS) if d in locked]
        ang = [i for i, d in enumerate(J.ROT_DOFS) if d in locked]
        if len(ang) == 1:
            notes.append(f"{path}: a loop-closing D6 joint with exactly one locked rotation is not enforced")
            return None
        perm = np.eye(4)
        rot_bits = {0: 0, 2: 0b110000, 3: 0b111000}[len(ang)]
        if len(ang) == 2:  # one free rotation: turn it onto x (a revolute pattern)
            free = ({0, 1, 2} - set(ang)).pop()
            order = [free, (free + 1) % 3, (free + 2) % 3]
            perm[:3, :3] = np.eye(3)[:, order]
            lin = [order.index(i) for i in lin]
        mask = sum(1 << i for i in lin) | rot_bits
        if mask == 0:
            notes.append(f"{path}: a loop-closing D6 joint that locks nothing constrains nothing")
            return None
        return mask, int(len(ang) == 2), perm
    notes.append(f"{path}: {kind} joints cannot close a loop in this solver; it is not enforced")
    return None


def _closure(
    prim: Usd.Prim, kind: str, where: dict, bodies: dict, kinematic: set, anchor, mpu: float, notes: list[str]
) -> ClosureSpec | None:
    """The loop-closing joint ``prim`` as rows between the links its two bodies belong to."""
    pattern = _closure_pattern(prim, kind, notes)
    if pattern is None:
        return None
    mask, angmode, turn = pattern
    joint = UsdPhysics.Joint(prim)
    sides = []
    for side, body in enumerate(J.joint_bodies(prim)):
        local = _local_frame(joint, side, mpu) @ turn
        if body in bodies and body not in kinematic:
            if body not in where:
                notes.append(
                    f"{prim.GetPath()}: closes a loop to {body}, which is in no articulation tree; not enforced"
                )
                return None
            link, pose = where[body]
            sides.append((link, pose @ local))
        else:  # the world: a static prim, a kinematic body or nothing
            sides.append((-1, anchor(body) @ local))
    (la, fa), (lb, fb) = sides
    if la == lb:
        notes.append(
            f"{prim.GetPath()}: both its bodies move as one link (welded by fixed joints); it constrains nothing"
        )
        return None
    return ClosureSpec(
        path=str(prim.GetPath()), kind=kind, link_a=la, frame_a=fa, link_b=lb, frame_b=fb, mask=mask, angmode=angmode
    )
