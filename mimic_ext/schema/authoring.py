"""Read, add/replace, edit and remove mimic relations on a USD stage.

Every value crosses the USD boundary here and nowhere else: reading applies the schema
fallbacks itself (so it works even when USD's registry was built before the schema
plugins were registered), and writing converts from the canonical SI relation with ``relation.py``.
"""

from __future__ import annotations

from typing import Any, Iterable

from pxr import Sdf, Usd

from ..errors import MimicInputError
from . import joints
from .registration import register_schemas
from .relation import (
    NEWTON,
    PHYSX,
    SCHEMAS,
    MimicRelation,
    canonical_to_newton,
    canonical_to_physx,
    newton_to_canonical,
    physx_to_canonical,
)

PHYSX_API = "PhysxMimicJointAPI"
NEWTON_API = "NewtonMimicAPI"
PHYSX_PREFIX = "physxMimicJoint"

#: name -> (USD type, fallback) for each PhysxMimicJointAPI attribute.
PHYSX_ATTRS = {
    "referenceJointAxis": (Sdf.ValueTypeNames.Token, "rotX"),
    "gearing": (Sdf.ValueTypeNames.Float, 1.0),
    "offset": (Sdf.ValueTypeNames.Float, 0.0),
    "naturalFrequency": (Sdf.ValueTypeNames.Float, 0.0),
    "dampingRatio": (Sdf.ValueTypeNames.Float, 0.0),
}
NEWTON_ATTRS = {
    "newton:mimicCoef0": (Sdf.ValueTypeNames.Float, 0.0),
    "newton:mimicCoef1": (Sdf.ValueTypeNames.Float, 1.0),
    "newton:mimicEnabled": (Sdf.ValueTypeNames.Bool, True),
}
NEWTON_REL = "newton:mimicJoint"


def physx_attr_name(instance: str, name: str) -> str:
    return f"{PHYSX_PREFIX}:{instance}:{name}"


def physx_property_names(instance: str) -> list[str]:
    return [physx_attr_name(instance, n) for n in ("referenceJoint", *PHYSX_ATTRS)]


def newton_property_names() -> list[str]:
    return [NEWTON_REL, *NEWTON_ATTRS]


def applied_schemas(prim: Usd.Prim) -> list[str]:
    """The prim's applied API schemas, also where USD's registry could not take the mimic
    schemas (it then leaves them out of ``GetAppliedSchemas``): the composed ``apiSchemas``
    list op holds them either way."""
    if register_schemas():
        return list(prim.GetAppliedSchemas())
    ops = prim.GetMetadata("apiSchemas")
    return list(ops.ApplyOperations([])) if ops else []


def physx_instances(prim: Usd.Prim) -> list[str]:
    """Instance names of PhysxMimicJointAPI applied to ``prim``, in authored order."""
    out = []
    for entry in applied_schemas(prim):
        name, _, inst = entry.partition(":")
        if name == PHYSX_API and inst:
            out.append(inst)
    return out


def has_newton(prim: Usd.Prim) -> bool:
    return NEWTON_API in applied_schemas(prim)


def _get(prim: Usd.Prim, name: str, fallback: Any) -> Any:
    attr = prim.GetAttribute(name)
    if attr and attr.HasValue():
        value = attr.Get()
        if value is not None:
            return value
    return fallback


def _targets(prim: Usd.Prim, name: str) -> list[str]:
    rel = prim.GetRelationship(name)
    return [str(t) for t in rel.GetTargets()] if rel else []


def _scales(stage: Usd.Stage, follower: Usd.Prim, leader_path: str | None, axis: str) -> tuple[float, float]:
    """SI per USD unit of follower and leader; an unknown side borrows the other's."""
    s_f = joints.unit_scale(follower)
    leader = stage.GetPrimAtPath(leader_path) if leader_path and Sdf.Path.IsValidPathString(leader_path) else None
    s_l = joints.unit_scale(leader, axis) if leader else None
    s_f = s_f or s_l or 1.0
    return s_f, (s_l or s_f)


def read_joint_relations(prim: Usd.Prim) -> list[MimicRelation]:
    """All relations authored on one follower prim (PhysX instances first, then Newton)."""
    stage = prim.GetStage()
    follower = str(prim.GetPath())
    out: list[MimicRelation] = []
    for inst in physx_instances(prim):
        raw = {n: _get(prim, physx_attr_name(inst, n), fb) for n, (_, fb) in PHYSX_ATTRS.items()}
        raw["referenceJoint"] = _targets(prim, physx_attr_name(inst, "referenceJoint"))
        raw["referenceJointAxis"] = str(raw["referenceJointAxis"])
        leader = raw["referenceJoint"][0] if raw["referenceJoint"] else None
        s_f, s_l = _scales(stage, prim, leader, raw["referenceJointAxis"])
        m, c = physx_to_canonical(float(raw["gearing"]), float(raw["offset"]), s_f, s_l)
        out.append(MimicRelation(
            follower=follower, leader=leader, multiplier=m, offset=c, instance=inst,
            reference_axis=raw["referenceJointAxis"],
            natural_frequency=float(raw["naturalFrequency"]), damping_ratio=float(raw["dampingRatio"]),
            schema=PHYSX, enabled=True, authored=raw))
    if has_newton(prim):
        raw = {n: _get(prim, n, fb) for n, (_, fb) in NEWTON_ATTRS.items()}
        raw[NEWTON_REL] = _targets(prim, NEWTON_REL)
        leader = raw[NEWTON_REL][0] if raw[NEWTON_REL] else None
        s_f, s_l = _scales(stage, prim, leader, "rotX")
        m, c = newton_to_canonical(float(raw["newton:mimicCoef0"]), float(raw["newton:mimicCoef1"]), s_f, s_l)
        out.append(MimicRelation(
            follower=follower, leader=leader, multiplier=m, offset=c, instance=None,
            schema=NEWTON, enabled=bool(raw["newton:mimicEnabled"]), authored=raw))
    return out


def read_relations(stage: Usd.Stage) -> list[MimicRelation]:
    """Every mimic relation on the stage, in traversal order (instance proxies included)."""
    out: list[MimicRelation] = []
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        applied = applied_schemas(prim)
        if any(a == NEWTON_API or a.startswith(PHYSX_API + ":") for a in applied):
            out.extend(read_joint_relations(prim))
    return out


def _follower_prim(stage: Usd.Stage, path: str) -> Usd.Prim:
    if not path or not Sdf.Path.IsValidPathString(path):
        raise MimicInputError(f"'{path}' is not a valid prim path")
    prim = stage.GetPrimAtPath(path)
    if not prim or not prim.IsValid():
        raise MimicInputError(f"no prim at {path} in {_stage_name(stage)}")
    return prim


def _stage_name(stage: Usd.Stage) -> str:
    return stage.GetRootLayer().identifier


def _apply(prim: Usd.Prim, schema: str, instance: str | None) -> None:
    if register_schemas():
        ok = prim.ApplyAPI(schema, instance) if instance else prim.ApplyAPI(schema)
    else:
        ok = prim.AddAppliedSchema(f"{schema}:{instance}" if instance else schema)
    if not ok:
        raise MimicInputError(f"cannot apply {schema} to {prim.GetPath()} (is the edit target writable?)")


def _set_attr(prim: Usd.Prim, name: str, type_name: Sdf.ValueTypeName, value: Any) -> None:
    variability = Sdf.VariabilityUniform if type_name == Sdf.ValueTypeNames.Token else Sdf.VariabilityVarying
    attr = prim.GetAttribute(name)
    if not attr or not attr.IsValid():
        attr = prim.CreateAttribute(name, type_name, False, variability)
    attr.Set(value)


def set_relation(stage: Usd.Stage, relation: MimicRelation) -> MimicRelation:
    """Add or replace ``relation`` on its follower (schema from ``relation.schema``).

    Authors every field explicitly, so the result reads back the same whatever the
    fallbacks are. Returns the relation as read back.
    """
    if relation.schema not in SCHEMAS:
        raise MimicInputError(f"unknown schema '{relation.schema}' (use one of {', '.join(SCHEMAS)})")
    prim = _follower_prim(stage, relation.follower)
    if not relation.leader or not Sdf.Path.IsValidPathString(relation.leader):
        raise MimicInputError(f"'{relation.leader}' is not a valid reference joint path for {relation.follower}")
    s_f, s_l = _scales(stage, prim, relation.leader, relation.reference_axis)
    if relation.schema == PHYSX:
        inst = relation.instance or "rotX"
        gearing, offset = canonical_to_physx(relation.multiplier, relation.offset, s_f, s_l)
        _apply(prim, PHYSX_API, inst)
        prim.CreateRelationship(physx_attr_name(inst, "referenceJoint"), False).SetTargets([Sdf.Path(relation.leader)])
        values = {"referenceJointAxis": relation.reference_axis, "gearing": gearing, "offset": offset,
                  "naturalFrequency": relation.natural_frequency, "dampingRatio": relation.damping_ratio}
        for name, (type_name, _) in PHYSX_ATTRS.items():
            _set_attr(prim, physx_attr_name(inst, name), type_name, values[name])
        match = [r for r in read_joint_relations(prim) if r.schema == PHYSX and r.instance == inst]
    else:
        coef0, coef1 = canonical_to_newton(relation.multiplier, relation.offset, s_f, s_l)
        _apply(prim, NEWTON_API, None)
        prim.CreateRelationship(NEWTON_REL, False).SetTargets([Sdf.Path(relation.leader)])
        values = {"newton:mimicCoef0": coef0, "newton:mimicCoef1": coef1, "newton:mimicEnabled": relation.enabled}
        for name, (type_name, _) in NEWTON_ATTRS.items():
            _set_attr(prim, name, type_name, values[name])
        match = [r for r in read_joint_relations(prim) if r.schema == NEWTON]
    return match[0]


def find_relation(stage: Usd.Stage, follower: str, instance: str | None = None,
                  schema: str | None = None) -> MimicRelation:
    """The one relation on ``follower`` matching instance/schema; error when none or several."""
    prim = _follower_prim(stage, follower)
    found = [r for r in read_joint_relations(prim)
             if (schema is None or r.schema == schema) and (instance is None or r.instance == instance)]
    if not found:
        raise MimicInputError(f"{follower} has no mimic relation"
                              + (f" with instance '{instance}'" if instance else ""))
    if len(found) > 1:
        names = ", ".join(r.instance or r.schema for r in found)
        raise MimicInputError(f"{follower} has several mimic relations ({names}); name one with an instance or schema")
    return found[0]


def edit_relation(stage: Usd.Stage, follower: str, instance: str | None = None,
                  schema: str | None = None, **changes: Any) -> MimicRelation:
    """Change fields of an existing relation (canonical units) and author the result."""
    current = find_relation(stage, follower, instance, schema)
    bad = set(changes) - {"leader", "multiplier", "offset", "reference_axis", "natural_frequency",
                          "damping_ratio", "enabled"}
    if bad:
        raise MimicInputError(f"cannot edit {', '.join(sorted(bad))} of a mimic relation")
    return set_relation(stage, current.replace(**changes))


def _remove_properties(prim: Usd.Prim, names: Iterable[str]) -> None:
    for name in names:
        if prim.GetProperty(name):
            prim.RemoveProperty(name)


def remove_relation(stage: Usd.Stage, follower: str, instance: str | None = None,
                    schema: str | None = None) -> list[MimicRelation]:
    """Remove the matching relation(s) and their properties; returns what was removed."""
    prim = _follower_prim(stage, follower)
    removed = [r for r in read_joint_relations(prim)
               if (schema is None or r.schema == schema) and (instance is None or r.instance == instance)]
    if not removed:
        raise MimicInputError(f"{follower} has no mimic relation"
                              + (f" with instance '{instance}'" if instance else "") + " to remove")
    for rel in removed:
        # RemoveAppliedSchema edits the apiSchemas list op directly, so it also works
        # when USD's registry does not know the schema.
        if rel.schema == PHYSX:
            prim.RemoveAppliedSchema(f"{PHYSX_API}:{rel.instance}")
            _remove_properties(prim, physx_property_names(rel.instance))
        else:
            prim.RemoveAppliedSchema(NEWTON_API)
            _remove_properties(prim, newton_property_names())
    return removed
