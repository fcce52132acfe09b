"""What must hold on a stage before its sweep means anything, said in the stage's own terms.

The validator judges the mimic relations themselves; these are the sweep's other
preconditions: physics values that are numbers (a NaN inertia or gain would otherwise be
dropped or defaulted somewhere and the follower "pass"), bodies that have a mass (with every
mass 0 each engine would judge its own default), a reference range that is not
upside down, a relation PhysX would actually read, and, when an engine leaves a joint
out, why in USD terms (a joint without bodies is not "a revolute joint that cannot take
part").
"""

from __future__ import annotations

import math

from pxr import Sdf, Usd, UsdPhysics

from ..schema import joints
from ..schema.physics_values import nonfinite_value
from ..schema.relation import PHYSX, PHYSX_INSTANCES, MimicRelation

#: attribute namespaces whose numbers the simulation reads (mimic attributes are the validator's)
PHYSICS_NAMESPACES = (
    "physics:",
    "drive:",
    "physxJoint:",
    "physxArticulation:",
    "physxRigidBody:",
    "newton:",
    "xformOp:",
)
_SKIP_PREFIXES = ("newton:mimic",)


def nonfinite_physics(stage: Usd.Stage) -> list[str]:
    """``"<prim> <attribute> = <value> is not finite"`` for each physics value that is NaN or infinite
    (``schema.physics_values.nonfinite_value``: only authored values; limits and max/break bounds
    may be infinite)."""
    out: list[str] = []
    for prim in stage.Traverse():
        for attr in prim.GetAuthoredAttributes():  # a value only the schema's fallback gives is fine
            name = attr.GetName()
            if not name.startswith(PHYSICS_NAMESPACES) or name.startswith(_SKIP_PREFIXES):
                continue
            value = nonfinite_value(attr)
            if value is not None:
                out.append(f"{prim.GetPath()} {name} = {value} is not finite: author a number")
    return out


def _positive(prim: Usd.Prim, name: str) -> bool:
    attr = prim.GetAttribute(name)
    value = attr.Get() if attr and attr.HasAuthoredValue() else None
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _authored_zero(prim: Usd.Prim, name: str) -> bool:
    attr = prim.GetAttribute(name)
    return bool(attr) and attr.HasAuthoredValue() and attr.Get() == 0


def massless_stage(stage: Usd.Stage) -> str | None:
    """Why a stage whose every body has mass 0 cannot be judged, or None.

    With every dynamic body authoring ``physics:mass = 0`` and no positive ``physics:mass`` or
    ``physics:density`` anywhere (on the body or the MassAPI prims under it), the asset states
    that it has no inertia: every engine fills
    in its own (PhysX and Newton from the colliders at a default density, mimic_ext's solver
    0.1 kg per link), so they simulate different mechanisms and a PASS on one is about that
    engine's default, not the asset. One body with a mass is enough: the solver's note names
    the others it defaults.
    """
    bodies = [
        p
        for p in stage.Traverse()
        if p.HasAPI(UsdPhysics.RigidBodyAPI)
        and UsdPhysics.RigidBodyAPI(p).GetRigidBodyEnabledAttr().Get() is not False
        and not UsdPhysics.RigidBodyAPI(p).GetKinematicEnabledAttr().Get()
    ]
    if not bodies:
        return None
    for body in bodies:
        zero = False
        for prim in Usd.PrimRange(body, Usd.TraverseInstanceProxies()):
            if prim.HasAPI(UsdPhysics.MassAPI) and (
                _positive(prim, "physics:mass") or _positive(prim, "physics:density")
            ):
                return None
            zero = zero or _authored_zero(prim, "physics:mass")
        # no mass authored at all: the engines' documented defaults apply (USD Physics computes
        # one from the colliders' volume at the default density; Isaac Sim's compliant 2F-85
        # configuration authors none), which is the asset's choice, not a statement of mass 0
        if not zero:
            return None
    shown = ", ".join(str(b.GetPath()) for b in bodies[:3]) + (f" (+{len(bodies) - 3} more)" if len(bodies) > 3 else "")
    return (
        f"every rigid body has mass 0 ({shown}): with no positive physics:mass or physics:density the "
        "asset gives no inertia, so each engine substitutes its own default and a PASS would judge that "
        "default, not the asset: author the bodies' physics:mass (kg)"
    )


def reversed_limits(stage: Usd.Stage, path: str) -> str | None:
    """Why a reference joint's range cannot be swept because its lower limit is above its upper one."""
    prim = stage.GetPrimAtPath(path)
    kind = joints.joint_kind(prim) if prim else None
    if kind not in (joints.REVOLUTE, joints.PRISMATIC):
        return None
    joint = UsdPhysics.RevoluteJoint(prim) if kind == joints.REVOLUTE else UsdPhysics.PrismaticJoint(prim)
    lo, hi = joint.GetLowerLimitAttr().Get(), joint.GetUpperLimitAttr().Get()
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)) or lo <= hi:
        return None
    unit = "deg" if kind == joints.REVOLUTE else "stage units"
    return (
        f"reference joint {path} has physics:lowerLimit {lo:g} above physics:upperLimit {hi:g} {unit}: "
        f"the range is upside down, so it cannot be swept; swap the two limits"
    )


def ignored_by_physx(rel: MimicRelation) -> str | None:
    """Why PhysX would not couple this relation at all (its instance name), or None."""
    if rel.schema != PHYSX or rel.instance in PHYSX_INSTANCES:
        return None
    return (
        f"PhysX ignores PhysxMimicJointAPI:{rel.instance} (it reads only rotX, rotY and rotZ), so on PhysX this "
        f"follower is not coupled at all: rename the instance to PhysxMimicJointAPI:rotX"
    )


def why_not_simulated(stage: Usd.Stage, path: str) -> str | None:
    """The USD reason a joint is not a degree of freedom of the simulated articulation, when one shows."""
    prim = stage.GetPrimAtPath(path) if Sdf.Path.IsValidPathString(path) else None
    if not prim or not prim.IsValid():
        return f"no prim at {path}"
    if not prim.IsA(UsdPhysics.Joint):
        return f"{path} is a {prim.GetTypeName() or 'typeless prim'}, not a joint"
    b0, b1 = joints.joint_bodies(prim)
    if b0 is None and b1 is None:
        return (
            f"joint {path} has no bodies (physics:body0 and physics:body1 are unset), so it moves nothing: "
            f"set them to the two links it connects"
        )
    for rel_name, target in (("physics:body0", b0), ("physics:body1", b1)):
        if target is not None and not stage.GetPrimAtPath(target):
            return f"joint {path} {rel_name} targets {target}, which does not exist on the stage"
    attr = prim.GetAttribute("physics:excludeFromArticulation")
    if attr and attr.Get():
        return f"joint {path} has physics:excludeFromArticulation = true, so it is no degree of freedom of the tree"
    return None
