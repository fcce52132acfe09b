"""Read, add/replace, edit and remove mimic relations on a USD stage.

Every value crosses the USD boundary here and nowhere else: reading applies the schema
fallbacks itself (so it works even when USD's registry was built before the schema
plugins were registered), and writing converts from the canonical SI relation with ``relation.py``.

Reading and writing go by property name, with the names, types and fallbacks of the real
declarations (``generatedSchema.usda`` of physx-usd-schemas, the same as Kit's compiled
PhysxSchema, and of newton-usd-schemas; ``tests/test_coexistence.py`` checks the tables
below against USD's registry for both PhysX sources). Their API classes add nothing
here: the codeless ``PhysxSchema.PhysxMimicJointAPI`` reads and writes the same names, and
Kit's compiled class is not importable outside Kit, so going through them would only add
a second write path.

Reading never raises on a wrongly typed value (a gearing authored as a string): the
relation comes back with ``invalid`` naming the attribute, so ``list`` can show it and the
validator can report it; ``strict=True`` (the solver) refuses it instead. Writing refuses
what USD would not store faithfully: an instance name that is not one identifier, and a
value that is not finite or that a 32-bit float would turn into inf or 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
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
#: attribute -> (its USD value type, its fallback)
PHYSX_ATTRS: dict[str, tuple[Any, Any]] = {
    "referenceJointAxis": (Sdf.ValueTypeNames.Token, "rotX"),
    "gearing": (Sdf.ValueTypeNames.Float, 1.0),
    "offset": (Sdf.ValueTypeNames.Float, 0.0),
    "naturalFrequency": (Sdf.ValueTypeNames.Float, 0.0),
    "dampingRatio": (Sdf.ValueTypeNames.Float, 0.0),
}
NEWTON_ATTRS: dict[str, tuple[Any, Any]] = {
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
    return joints.authored_api_schemas(prim)


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


class _Reader:
    """Reads one relation's attributes, noting each value whose type is wrong."""

    def __init__(self, prim: Usd.Prim):
        self.prim = prim
        self.problems: list[str] = []

    def _wrong(self, name: str, value: Any, want: str) -> None:
        # the strongest spec holds the authored type (the composed attribute reports the
        # schema's type whenever USD's registry knows the schema)
        attr = self.prim.GetAttribute(name)
        specs = attr.GetPropertyStack(Usd.TimeCode.Default()) if attr else []
        authored_as = str(specs[0].typeName) if specs else type(value).__name__
        self.problems.append(f"{name} is authored as {authored_as} ({value!r}), not {want}: author it as {want}")

    def number(self, name: str, fallback: float) -> float:
        value = _get(self.prim, name, fallback)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self._wrong(name, value, "float")
            return math.nan
        return float(value)

    def flag(self, name: str, fallback: bool) -> bool:
        value = _get(self.prim, name, fallback)
        if not isinstance(value, bool):
            self._wrong(name, value, "bool")
            return False  # never simulate a relation whose switch cannot be read
        return value

    def token(self, name: str, fallback: str) -> str:
        value = _get(self.prim, name, fallback)
        if not isinstance(value, str):
            self._wrong(name, value, "token")
        return str(value)

    @property
    def invalid(self) -> str | None:
        return "; ".join(self.problems) or None


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


def read_joint_relations(prim: Usd.Prim, strict: bool = False) -> list[MimicRelation]:
    """All relations authored on one follower prim (PhysX instances first, then Newton).

    A relation with a wrongly typed attribute comes back with ``invalid`` set and NaN
    numbers; ``strict`` raises ``MimicInputError`` naming the prim and attribute instead.
    """
    stage = prim.GetStage()
    follower = str(prim.GetPath())
    out: list[MimicRelation] = []
    for inst in physx_instances(prim):
        read = _Reader(prim)
        raw: dict[str, Any] = {}
        for n, (type_name, fb) in PHYSX_ATTRS.items():
            name = physx_attr_name(inst, n)
            raw[n] = read.token(name, fb) if type_name == Sdf.ValueTypeNames.Token else read.number(name, fb)
        raw["referenceJoint"] = _targets(prim, physx_attr_name(inst, "referenceJoint"))
        leader = raw["referenceJoint"][0] if raw["referenceJoint"] else None
        s_f, s_l = _scales(stage, prim, leader, raw["referenceJointAxis"])
        m, c = physx_to_canonical(raw["gearing"], raw["offset"], s_f, s_l)
        out.append(
            MimicRelation(
                follower=follower,
                leader=leader,
                multiplier=m,
                offset=c,
                instance=inst,
                reference_axis=raw["referenceJointAxis"],
                natural_frequency=raw["naturalFrequency"],
                damping_ratio=raw["dampingRatio"],
                schema=PHYSX,
                enabled=True,
                authored=raw,
                invalid=read.invalid,
            )
        )
    if has_newton(prim):
        read = _Reader(prim)
        raw = {
            n: (read.flag(n, fb) if type_name == Sdf.ValueTypeNames.Bool else read.number(n, fb))
            for n, (type_name, fb) in NEWTON_ATTRS.items()
        }
        raw[NEWTON_REL] = _targets(prim, NEWTON_REL)
        leader = raw[NEWTON_REL][0] if raw[NEWTON_REL] else None
        s_f, s_l = _scales(stage, prim, leader, "rotX")
        m, c = newton_to_canonical(raw["newton:mimicCoef0"], raw["newton:mimicCoef1"], s_f, s_l)
        out.append(
            MimicRelation(
                follower=follower,
                leader=leader,
                multiplier=m,
                offset=c,
                instance=None,
                schema=NEWTON,
                enabled=raw["newton:mimicEnabled"],
                authored=raw,
                invalid=read.invalid,
            )
        )
    if strict:
        for rel in out:
            if rel.invalid:
                raise MimicInputError(f"{_stage_name(stage)}: {follower}: {rel.invalid}")
    return out


def read_relations(stage: Usd.Stage, strict: bool = False) -> list[MimicRelation]:
    """Every mimic relation on the stage, in traversal order (instance proxies included).

    ``strict``: raise ``MimicInputError`` on a relation with a wrongly typed attribute
    (for callers that would simulate it) instead of returning it with ``invalid`` set.
    """
    out: list[MimicRelation] = []
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        applied = applied_schemas(prim)
        if any(a == NEWTON_API or a.startswith(PHYSX_API + ":") for a in applied):
            out.extend(read_joint_relations(prim, strict=strict))
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


#: Largest finite 32-bit float and smallest normal one: USD stores these schemas' numbers as
#: ``float``, so a larger value becomes inf, and a smaller nonzero one becomes 0 or keeps
#: fewer than the ~7 significant digits every other value keeps.
F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).tiny)


def check_instance_name(follower: str, instance: str) -> None:
    """Refuse a PhysxMimicJointAPI instance name USD or PhysX cannot use, in one line.

    The instance becomes one component of the property names
    (``physxMimicJoint:<instance>:gearing``), so it must be a single identifier: a space
    makes the names invalid and a ``:`` moves the properties into another namespace.
    """
    base_names = ("referenceJoint", *PHYSX_ATTRS)
    # USD's own rule (which also knows the schema's property names) answers only when its
    # registry holds the schema; otherwise the same base names are checked by hand
    if (
        not isinstance(instance, str)
        or not Sdf.Path.IsValidIdentifier(instance)
        or instance in base_names
        or (register_schemas() and not Usd.SchemaRegistry.IsAllowedAPISchemaInstanceName(PHYSX_API, instance))
    ):
        raise MimicInputError(
            f"{follower}: '{instance}' cannot name a {PHYSX_API} instance: use one identifier (letters, digits "
            "and _, no spaces or ':', not starting with a digit), normally rotX, rotY or rotZ"
        )


def _storable(follower: str, name: str, value: float) -> float:
    """``value`` if a USD float attribute keeps it; ``MimicInputError`` naming it otherwise."""
    value = float(value)
    if not math.isfinite(value):
        raise MimicInputError(f"{follower}: {name} would be {value}: give finite numbers")
    if abs(value) > F32_MAX:
        raise MimicInputError(
            f"{follower}: {name} would be {value:.7g} (as stored), which overflows a 32-bit "
            f"USD float (largest {F32_MAX:.7g}) and would be stored as inf: give a smaller value"
        )
    if value != 0.0 and abs(value) < F32_TINY:
        raise MimicInputError(
            f"{follower}: {name} would be {value:.7g} (as stored), below the smallest normal "
            f"32-bit USD float ({F32_TINY:.7g}), so it would be stored as 0 or lose precision: "
            "give 0 or a larger value"
        )
    return value


def set_relation(stage: Usd.Stage, relation: MimicRelation) -> MimicRelation:
    """Add or replace ``relation`` on its follower (schema from ``relation.schema``).

    Authors every field explicitly, so the result reads back the same whatever the
    fallbacks are. Returns the relation as read back. Refuses, before writing anything,
    an instance name that is not one identifier and any value that is not finite or that
    a 32-bit float would not keep (see ``_storable``).
    """
    if relation.schema not in SCHEMAS:
        raise MimicInputError(f"unknown schema '{relation.schema}' (use one of {', '.join(SCHEMAS)})")
    prim = _follower_prim(stage, relation.follower)
    follower = relation.follower
    if not relation.leader or not Sdf.Path.IsValidPathString(relation.leader):
        raise MimicInputError(f"'{relation.leader}' is not a valid reference joint path for {follower}")
    for field_name in ("multiplier", "offset", "natural_frequency", "damping_ratio"):
        value = getattr(relation, field_name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise MimicInputError(f"{follower}: the relation's {field_name} is {value!r}: give a finite number")
    s_f, s_l = _scales(stage, prim, relation.leader, relation.reference_axis)
    if relation.schema == PHYSX:
        inst = relation.instance or "rotX"
        check_instance_name(follower, inst)
        gearing, offset = canonical_to_physx(relation.multiplier, relation.offset, s_f, s_l)
        values: dict[str, Any] = {
            "referenceJointAxis": relation.reference_axis,
            "gearing": gearing,
            "offset": offset,
            "naturalFrequency": relation.natural_frequency,
            "dampingRatio": relation.damping_ratio,
        }
        for name, (type_name, _) in PHYSX_ATTRS.items():
            if type_name == Sdf.ValueTypeNames.Float:
                values[name] = _storable(follower, physx_attr_name(inst, name), values[name])
        _apply(prim, PHYSX_API, inst)
        prim.CreateRelationship(physx_attr_name(inst, "referenceJoint"), False).SetTargets([Sdf.Path(relation.leader)])
        for name, (type_name, _) in PHYSX_ATTRS.items():
            _set_attr(prim, physx_attr_name(inst, name), type_name, values[name])
        match = [r for r in read_joint_relations(prim) if r.schema == PHYSX and r.instance == inst]
    else:
        coef0, coef1 = canonical_to_newton(relation.multiplier, relation.offset, s_f, s_l)
        values = {
            "newton:mimicCoef0": _storable(follower, "newton:mimicCoef0", coef0),
            "newton:mimicCoef1": _storable(follower, "newton:mimicCoef1", coef1),
            "newton:mimicEnabled": bool(relation.enabled),
        }
        _apply(prim, NEWTON_API, None)
        prim.CreateRelationship(NEWTON_REL, False).SetTargets([Sdf.Path(relation.leader)])
        for name, (type_name, _) in NEWTON_ATTRS.items():
            _set_attr(prim, name, type_name, values[name])
        match = [r for r in read_joint_relations(prim) if r.schema == NEWTON]
    return match[0]


def find_relation(
    stage: Usd.Stage, follower: str, instance: str | None = None, schema: str | None = None
) -> MimicRelation:
    """The one relation on ``follower`` matching instance/schema; error when none or several."""
    prim = _follower_prim(stage, follower)
    found = [
        r
        for r in read_joint_relations(prim)
        if (schema is None or r.schema == schema) and (instance is None or r.instance == instance)
    ]
    if not found:
        raise MimicInputError(
            f"{follower} has no mimic relation" + (f" with instance '{instance}'" if instance else "")
        )
    if len(found) > 1:
        names = ", ".join(r.instance or r.schema for r in found)
        raise MimicInputError(f"{follower} has several mimic relations ({names}); name one with an instance or schema")
    return found[0]


def edit_relation(
    stage: Usd.Stage, follower: str, instance: str | None = None, schema: str | None = None, **changes: Any
) -> MimicRelation:
    """Change fields of an existing relation (canonical units) and author the result."""
    current = find_relation(stage, follower, instance, schema)
    bad = set(changes) - {
        "leader",
        "multiplier",
        "offset",
        "reference_axis",
        "natural_frequency",
        "damping_ratio",
        "enabled",
    }
    if bad:
        raise MimicInputError(f"cannot edit {', '.join(sorted(bad))} of a mimic relation")
    return set_relation(stage, current.replace(**changes))


def _remove_properties(prim: Usd.Prim, names: Iterable[str]) -> None:
    for name in names:
        if prim.GetProperty(name):
            prim.RemoveProperty(name)


def remove_relation(
    stage: Usd.Stage,
    follower: str,
    instance: str | None = None,
    schema: str | None = None,
    relations: list[MimicRelation] | None = None,
) -> list[MimicRelation]:
    """Remove the matching relation(s) and their properties; returns what was removed.

    ``relations``: the follower's relations as the caller has just read them (a conversion of
    56,000 joints read each one again here), else they are read."""
    prim = _follower_prim(stage, follower)
    removed = [
        r
        for r in (read_joint_relations(prim) if relations is None else relations)
        if (schema is None or r.schema == schema) and (instance is None or r.instance == instance)
    ]
    if not removed:
        raise MimicInputError(
            f"{follower} has no mimic relation" + (f" with instance '{instance}'" if instance else "") + " to remove"
        )
    for rel in removed:
        # RemoveAppliedSchema edits the apiSchemas list op directly, so it also works
        # when USD's registry does not know the schema.
        if rel.schema == PHYSX:
            prim.RemoveAppliedSchema(f"{PHYSX_API}:{rel.instance}")
            _remove_properties(prim, physx_property_names(str(rel.instance)))
        else:
            prim.RemoveAppliedSchema(NEWTON_API)
            _remove_properties(prim, newton_property_names())
    return removed
