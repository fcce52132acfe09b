"""The edits a user makes to a PhysxMimicJointAPI instance, checked and authored as typed.

Why apart from the commands: the property panel checks a typed value with the same rules
before it runs a command (so a refusal is one clear log line, not a command failure with a
traceback), and both must agree. Values are the PhysX convention (``q_f + gearing*q_ref +
offset = 0``, offset in the follower's USD units: degrees or stage distance) exactly as the
user typed them, so they are written to the attributes directly (no round trip through SI);
only a new relation goes through ``mimic_ext.schema.set_relation`` and ``relation.py``.

Pure pxr (no ``omni``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from pxr import Sdf, Usd

from ..schema import joints
from ..schema.authoring import (
    PHYSX_ATTRS,
    physx_attr_name,
    physx_instances,
    read_joint_relations,
    set_relation,
)
from ..schema.relation import (
    PHYSX,
    PHYSX_INSTANCES,
    REFERENCE_AXES,
    TOLERATED_INSTANCES,
    MimicRelation,
    physx_to_canonical,
)

#: Joint kinds that can follow or lead (one scalar DOF, or a D6 DOF picked by the axis).
MOVABLE_KINDS = (joints.REVOLUTE, joints.PRISMATIC, joints.D6)


def _prim(stage: Usd.Stage, path: str) -> Usd.Prim | None:
    if not path or not Sdf.Path.IsValidPathString(str(path)):
        return None
    prim = stage.GetPrimAtPath(str(path))
    return prim if prim and prim.IsValid() else None


def follower_problem(stage: Usd.Stage | None, path: str) -> str | None:
    """Why ``path`` cannot carry a mimic relation, or None."""
    if stage is None:
        return "no stage is open: open a stage before editing mimic joints"
    prim = _prim(stage, path)
    if prim is None:
        return f"no prim at '{path}': select an existing joint"
    kind = joints.joint_kind(prim)
    if kind is None:
        return f"{path} is not a UsdPhysics joint: a mimic relation goes on a revolute or prismatic joint"
    if kind not in MOVABLE_KINDS:
        return f"{path} is a {kind} joint: only revolute, prismatic or D6 joints can follow another joint"
    return None


def reference_problem(stage: Usd.Stage, follower: str, reference: str) -> str | None:
    """Why ``reference`` cannot be the reference joint of ``follower``, or None."""
    if not reference or not Sdf.Path.IsValidPathString(str(reference)):
        return f"'{reference}' is not a prim path: give the reference joint's path, e.g. /Robot/Joints/finger_joint"
    if Sdf.Path(str(reference)) == Sdf.Path(str(follower)):
        return f"{follower} cannot follow itself: pick another joint as its reference"
    prim = _prim(stage, reference)
    if prim is None:
        return f"no prim at {reference}: pick an existing joint as the reference of {follower}"
    kind = joints.joint_kind(prim)
    if kind is None:
        return f"{reference} is not a joint: the reference of {follower} must be a revolute or prismatic joint"
    if kind not in MOVABLE_KINDS:
        return f"{reference} is a {kind} joint and cannot lead: pick a revolute or prismatic joint"
    return None


def value_problem(label: str, value: Any, *, nonzero: bool = False, non_negative: bool = False) -> str | None:
    """Why ``value`` is not acceptable for ``label``, or None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"{label} must be a number, got {value!r}"
    value = float(value)
    if not math.isfinite(value):
        return f"{label} must be finite, got {value}"
    if nonzero and value == 0:
        return (
            f"{label} cannot be 0 (q_f + gearing*q_ref + offset = 0 would lock the follower): "
            "type the gear ratio, e.g. -1 to follow 1:1"
        )
    if non_negative and value < 0:
        return f"{label} must be >= 0 (0 makes the relation hard), got {value}"
    return None


def axis_problem(axis: str) -> str | None:
    if axis not in REFERENCE_AXES:
        return f"reference axis '{axis}' is not one of {', '.join(REFERENCE_AXES)}"
    return None


def instance_problem(stage: Usd.Stage, follower: str, instance: str, *, must_exist: bool) -> str | None:
    """Why ``instance`` cannot be edited (must_exist) or added (not must_exist) on ``follower``."""
    if not instance or not Sdf.Path.IsValidIdentifier(instance):
        return f"'{instance}' is not a valid instance name: use rotX"
    prim = _prim(stage, follower)
    present = instance in physx_instances(prim) if prim else False
    if must_exist and not present:
        return f"{follower} has no PhysxMimicJointAPI:{instance}: add a mimic joint first"
    if not must_exist and present:
        return f"{follower} already has PhysxMimicJointAPI:{instance}: edit it instead of adding another"
    if not must_exist and instance not in PHYSX_INSTANCES + TOLERATED_INSTANCES:
        return f"instance name '{instance}' is not one PhysX reads: use rotX"
    return None


def authored_value(prim: Usd.Prim, instance: str, name: str) -> Any:
    """The value the attribute resolves to, with the schema fallback when unauthored."""
    attr = prim.GetAttribute(physx_attr_name(instance, name))
    value = attr.Get() if attr and attr.HasValue() else None
    return PHYSX_ATTRS[name][1] if value is None else value


def author_value(prim: Usd.Prim, instance: str, name: str, value: Any) -> None:
    """Author one PhysxMimicJointAPI attribute (``gearing``, ``offset``, ...) as given."""
    type_name, _ = PHYSX_ATTRS[name]
    attr_name = physx_attr_name(instance, name)
    attr = prim.GetAttribute(attr_name)
    if not attr or not attr.IsValid():
        variability = Sdf.VariabilityUniform if type_name == Sdf.ValueTypeNames.Token else Sdf.VariabilityVarying
        attr = prim.CreateAttribute(attr_name, type_name, False, variability)
    if not attr.Set(value):
        raise RuntimeError(f"cannot write {attr_name} on {prim.GetPath()} (is the edit target writable?)")


def author_reference(prim: Usd.Prim, instance: str, reference: str) -> None:
    rel = prim.CreateRelationship(physx_attr_name(instance, "referenceJoint"), False)
    rel.SetTargets([Sdf.Path(str(reference))])


def add_relation(
    stage: Usd.Stage,
    follower: str,
    reference: str,
    *,
    instance: str = "rotX",
    reference_axis: str = "rotX",
    gearing: float = -1.0,
    offset: float = 0.0,
    natural_frequency: float = 0.0,
    damping_ratio: float = 0.0,
) -> MimicRelation:
    """Apply PhysxMimicJointAPI:<instance> with every field authored; gearing/offset exactly as given."""
    prim = stage.GetPrimAtPath(follower)
    leader = stage.GetPrimAtPath(reference)
    s_f = joints.unit_scale(prim) or joints.unit_scale(leader, reference_axis) or 1.0
    s_l = joints.unit_scale(leader, reference_axis) or s_f
    multiplier, canonical_offset = physx_to_canonical(float(gearing), float(offset), s_f, s_l)
    set_relation(
        stage,
        MimicRelation(
            follower=str(follower),
            leader=str(reference),
            multiplier=multiplier,
            offset=canonical_offset,
            instance=instance,
            reference_axis=reference_axis,
            natural_frequency=float(natural_frequency),
            damping_ratio=float(damping_ratio),
            schema=PHYSX,
        ),
    )
    # set_relation converted SI back to USD units; write the typed values themselves.
    author_value(prim, instance, "gearing", float(gearing))
    author_value(prim, instance, "offset", float(offset))
    return next(r for r in read_joint_relations(prim) if r.schema == PHYSX and r.instance == instance)


def reference_candidates(stage: Usd.Stage, follower: str) -> list[str]:
    """Joints ``follower`` may follow, best first: same parent and kind, not followers themselves."""
    me = _prim(stage, follower)
    my_kind = joints.joint_kind(me) if me else None
    my_parent = Sdf.Path(str(follower)).GetParentPath() if follower else None
    followers_of_me = set()
    is_follower = set()
    for prim in stage.Traverse():
        rels = read_joint_relations(prim)
        if rels:
            is_follower.add(str(prim.GetPath()))
        followers_of_me.update(str(prim.GetPath()) for r in rels if r.leader == str(follower))
    ranked = []
    for order, prim in enumerate(stage.Traverse()):
        path = str(prim.GetPath())
        kind = joints.joint_kind(prim)
        if path == str(follower) or kind not in MOVABLE_KINDS or path in followers_of_me:
            continue
        score = (kind != my_kind, path in is_follower, prim.GetPath().GetParentPath() != my_parent)
        ranked.append((score, order, path))
    return [path for _, _, path in sorted(ranked)]


def default_reference(stage: Usd.Stage, follower: str) -> str | None:
    candidates = reference_candidates(stage, follower)
    return candidates[0] if candidates else None
