"""What the mimic code needs to know about a UsdPhysics joint: its kind, DOF units, limits.

Kept apart from authoring because the validator, importers and solver all ask the same
questions, and the unit answer (degrees vs stage distance) must be given in one place.
"""

from __future__ import annotations

import math

from pxr import Usd, UsdGeom, UsdPhysics

from ..errors import MimicInputError
from ..joint_types import BY_NAME, D6, DISTANCE, FIXED, OTHER, PRISMATIC, REVOLUTE, SPHERICAL, USD_TYPES  # noqa: F401 (re-exported)

#: The typed UsdPhysics joint schemas and the kind each is (``joint_types``), tested in this
#: order; the generic ``PhysicsJoint`` (a D6) is what is left when none matches.
_TYPED = tuple(
    (getattr(UsdPhysics, usd_type.removeprefix("Physics")), kind) for usd_type, kind in USD_TYPES.items() if kind != D6
)
_GENERIC = BY_NAME[D6].usd_type  # "PhysicsJoint"

DEG = math.pi / 180.0
#: customData key ``mimic-ext import`` sets on a joint whose drive gains are Isaac Sim's importer
#: defaults (the source has none), not the robot's servo: export and the sweep tell them apart
DEFAULT_GAINS_KEY = "mimicExtDefaultGains"
ROT_DOFS = ("rotX", "rotY", "rotZ")
TRANS_DOFS = ("transX", "transY", "transZ")
#: the PhysX API whose ``physxJoint:*`` attributes (max joint velocity, armature, joint friction)
#: omni.physx reads only where it is applied (``usdLoad/Joint.cpp``, ``fillJointDesc`` and
#: ``fillPhysxJointAxisPropertiesDesc``, in NVIDIA-Omniverse/PhysX)
PHYSX_JOINT_API = "PhysxJointAPI"
#: PhysX's per-axis joint API (multi-apply, instance ``angular`` or ``linear`` on a 1-DOF joint):
#: where applied, omni.physx takes maxJointVelocity and armature from it instead of
#: PhysxJointAPI (the same ``fillPhysxJointAxisPropertiesDesc``), with friction as efforts
PHYSX_AXIS_API = "PhysxJointAxisAPI"


def physx_axis(prim: Usd.Prim) -> str | None:
    """The ``PhysxJointAxisAPI`` instance that counts on this 1-DOF joint (``angular`` for a
    revolute, ``linear`` for a prismatic) when applied, else None."""
    dof = "angular" if prim.IsA(UsdPhysics.RevoluteJoint) else "linear" if prim.IsA(UsdPhysics.PrismaticJoint) else None
    return dof if dof and has_api(prim, f"{PHYSX_AXIS_API}:{dof}") else None


#: each joint term PhysX reads: (PhysxJointAPI's attribute, the per-axis API's attribute name)
PHYSX_JOINT_TERMS = {
    "maxJointVelocity": ("physxJoint:maxJointVelocity", "maxJointVelocity"),
    "armature": ("physxJoint:armature", "armature"),
    "friction": ("physxJoint:jointFriction", "dynamicFrictionEffort"),
}


def physx_joint_attr(prim: Usd.Prim, term: str) -> str | None:
    """The attribute PhysX reads the joint's ``term`` (``maxJointVelocity``, ``armature`` or
    ``friction``) from: the per-axis API's where PhysxJointAxisAPI is applied, else
    PhysxJointAPI's where that is applied; None where neither is (nothing counts)."""
    joint_attr, axis_attr = PHYSX_JOINT_TERMS[term]
    axis = physx_axis(prim)
    if axis:
        return f"physxJointAxis:{axis}:{axis_attr}"
    return joint_attr if has_api(prim, PHYSX_JOINT_API) else None


def authored_api_schemas(prim: Usd.Prim) -> list[str]:
    """The API schemas the prim's composed ``apiSchemas`` list op applies, known to USD's
    registry or not."""
    ops = prim.GetMetadata("apiSchemas")
    return list(ops.ApplyOperations([])) if ops else []


def has_api(prim: Usd.Prim, api: str) -> bool:
    """Whether API schema ``api`` is applied to ``prim``. USD leaves a schema its registry does
    not know out of ``GetAppliedSchemas`` (PhysX's, when physx-usd-schemas was registered after
    the first stage opened, or not at all), so the composed list op decides then."""
    return api in prim.GetAppliedSchemas() or api in authored_api_schemas(prim)


#: joint kind by prim type name, for type names USD's schema registry knows (a prim's IsA then
#: depends on its type name alone); the validator and the edits ask it millions of times
_KIND_BY_TYPE: dict[str, str | None] = {"": None}


def joint_kind(prim: Usd.Prim) -> str | None:
    """The joint's kind, or None when the prim is not a UsdPhysics joint."""
    if not prim or not prim.IsValid():
        return None
    type_name = prim.GetTypeName()
    kind = _KIND_BY_TYPE.get(type_name, _UNKNOWN)
    if kind is _UNKNOWN:
        kind = _joint_kind(prim)
        if Usd.SchemaRegistry.GetTypeFromSchemaTypeName(type_name):  # not a fallback-typed prim
            _KIND_BY_TYPE[type_name] = kind
    return kind


_UNKNOWN = "?"


def _joint_kind(prim: Usd.Prim) -> str | None:
    if not prim.IsA(UsdPhysics.Joint):  # most prims: one test
        return None
    for schema, kind in _TYPED:
        if prim.IsA(schema):
            return kind
    return D6 if prim.GetTypeName() == _GENERIC else OTHER


def meters_per_unit(stage: Usd.Stage) -> float:
    """The stage's ``metersPerUnit``; ``MimicInputError`` naming the stage when it cannot be one.

    Every prismatic value is scaled by it, so 0, a negative or a non-finite value would turn
    into a division by zero or a silently mirrored or NaN relation further on.
    """
    mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
    if not math.isfinite(mpu) or mpu <= 0.0:
        raise MimicInputError(
            f"{stage.GetRootLayer().identifier}: metersPerUnit is {mpu:g}, but it must be a positive number "
            "(1 for metres, 0.01 for centimetres): fix the stage's metersPerUnit metadata"
        )
    return mpu


def d6_locked_dofs(prim: Usd.Prim) -> set[str]:
    """DOFs of a generic (D6) joint locked by a LimitAPI instance with low > high."""
    locked = set()
    for dof in ROT_DOFS + TRANS_DOFS:
        if prim.HasAPI(UsdPhysics.LimitAPI, dof):
            lim = UsdPhysics.LimitAPI(prim, dof)
            lo, hi = lim.GetLowAttr().Get(), lim.GetHighAttr().Get()
            if lo is not None and hi is not None and lo > hi:
                locked.add(dof)
    return locked


def unit_scale(prim: Usd.Prim, dof: str | None = None) -> float | None:
    """SI size of one USD unit of the joint's DOF (rad per degree, or metres per unit).

    ``dof`` picks the DOF of a D6 joint (``rotX``.. or ``transX``..); a 1-DOF joint
    ignores it. None when the prim is not a joint with such a DOF.
    """
    kind = joint_kind(prim)
    if kind == REVOLUTE:
        return DEG
    if kind == PRISMATIC:
        return meters_per_unit(prim.GetStage())
    if kind == D6:
        if dof in TRANS_DOFS:
            return meters_per_unit(prim.GetStage())
        return DEG
    return None


def limits_si(prim: Usd.Prim) -> tuple[float, float] | None:
    """(lower, upper) in SI for a revolute or prismatic joint; None when unlimited.

    USD marks a missing bound with an unauthored value or +-inf; either missing bound
    makes the joint unlimited.
    """
    kind = joint_kind(prim)
    if kind not in (REVOLUTE, PRISMATIC):
        return None
    joint = UsdPhysics.RevoluteJoint(prim) if kind == REVOLUTE else UsdPhysics.PrismaticJoint(prim)
    lo, hi = joint.GetLowerLimitAttr().Get(), joint.GetUpperLimitAttr().Get()
    if lo is None or hi is None or not math.isfinite(lo) or not math.isfinite(hi):
        return None
    scale = unit_scale(prim)
    assert scale is not None  # a revolute or prismatic joint always has a unit
    return float(lo) * scale, float(hi) * scale


def joint_bodies(prim: Usd.Prim) -> tuple[str | None, str | None]:
    """(body0, body1) target paths as strings, None where not authored."""
    joint = UsdPhysics.Joint(prim)
    b0 = joint.GetBody0Rel().GetTargets()
    b1 = joint.GetBody1Rel().GetTargets()
    return (str(b0[0]) if b0 else None, str(b1[0]) if b1 else None)


def max_velocity_si(prim: Usd.Prim) -> float | None:
    """The joint's PhysX velocity cap in SI (rad/s from deg/s, or m/s); None when not set.

    PhysX reads it in the DOF's USD unit per second: ``physxJointAxis:<axis>:maxJointVelocity``
    where PhysxJointAxisAPI is applied, else ``physxJoint:maxJointVelocity`` where PhysxJointAPI
    is; 0 or less, or non-finite, means no cap was authored here.
    """
    name = physx_joint_attr(prim, "maxJointVelocity")
    attr = prim.GetAttribute(name) if name else None
    value = attr.Get() if attr and attr.HasAuthoredValue() else None
    scale = unit_scale(prim)
    if value is None or scale is None or not math.isfinite(value) or value <= 0:
        return None
    return float(value) * scale
