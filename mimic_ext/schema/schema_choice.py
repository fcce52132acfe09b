"""One mimic schema per follower: which schema an edit writes, converting, removing the duplicate.

Why: PhysX reads NewtonMimicAPI as well as PhysxMimicJointAPI and applies each as its own
constraint (NVIDIA's answer in isaac-sim/IsaacSim#754; an omni.physx ``usdLoad/MimicJoint.cpp``
newer than the public NVIDIA-Omniverse/PhysX snapshot 6e73dc7 has ``parseNewtonMimicJoints``
beside ``parseMimicJoints``, each appending a ``MimicJointDesc`` for the joint). Measured on ovphysx 0.7 (``tests/test_fet022_engines_physx.py``):
two agreeing relations move as one, two contradicting gearings lock the pair where both hold,
two contradicting offsets leave one of them violated. So a follower carries one schema, and
every edit here keeps it that way.

Newton's reading and PhysX's of a ``NewtonMimicAPI`` between a revolute and a prismatic joint
differ (Newton: ``coef1`` per radian and metre; PhysX: per degree and metre, as its own
gearing), and newton-usd-schemas calls such pairs unsupported, so they stay PhysxMimicJointAPI.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pxr import Usd

from ..errors import MimicInputError
from . import joints
from .authoring import NEWTON_API, PHYSX_API, applied_schemas, read_joint_relations, remove_relation, set_relation
from .registration import in_kit
from .relation import NEWTON, PHYSX, SCHEMAS, MimicRelation

#: what a host does with a follower that carries both APIs (the validator's and the commands' wording)
HOST_BEHAVIOUR = (
    "PhysX (ovphysx, Isaac Sim 6) reads NewtonMimicAPI as well as PhysxMimicJointAPI and "
    "applies each as its own constraint on this joint"
)


def fix_advice(cli: str, command: str, kit_note: str = "", **kwargs: str) -> str:
    """The fix in the host's words: inside Kit its command (a Kit user has no ``mimic-ext`` there, and
    the command is undoable), then ``kit_note``; elsewhere the CLI line ``cli``."""
    if not in_kit():
        return cli
    args = ", ".join(f'{k}="{v}"' for k, v in kwargs.items())
    return f'Kit\'s command {command}: omni.kit.commands.execute("{command}", {args}){kit_note}'


def api_label(rel: MimicRelation) -> str:
    return f"{PHYSX_API}:{rel.instance}" if rel.schema == PHYSX else NEWTON_API


def other_schema(schema: str) -> str:
    return NEWTON if schema == PHYSX else PHYSX


def _check_schema(schema: str) -> None:
    if schema not in SCHEMAS:
        raise MimicInputError(f"unknown schema '{schema}' (use one of {', '.join(SCHEMAS)})")


def carried_schemas(prim: Usd.Prim) -> list[str]:
    """The mimic schemas the prim carries (``physx``, ``newton``), in that order."""
    found = {r.schema for r in read_joint_relations(prim)}
    return [s for s in SCHEMAS if s in found]


def mixed_units(stage: Usd.Stage, follower: str, leader: str | None) -> bool:
    """True between a revolute and a prismatic joint, where PhysX and Newton read
    ``NewtonMimicAPI``'s ``coef1`` in different units."""
    kinds = {joints.joint_kind(stage.GetPrimAtPath(p)) for p in (follower, leader) if p}
    return {joints.REVOLUTE, joints.PRISMATIC} <= kinds


def other_schema_problem(prim: Usd.Prim, schema: str) -> str | None:
    """Why a relation in ``schema`` must not be added to ``prim`` (it carries the other schema), or None."""
    other = [r for r in read_joint_relations(prim) if r.schema != schema]
    if not other:
        return None
    rel = other[0]
    return (
        f"{rel.follower} already follows {rel.leader} through {api_label(rel)}, and {HOST_BEHAVIOUR}: a "
        f"{'NewtonMimicAPI' if schema == NEWTON else PHYSX_API} beside it would be a second constraint. "
        "Edit that relation, or convert it first ("
        + fix_advice(
            f"mimic-ext convert STAGE --to {schema} --follower {rel.follower}",
            "ConvertMimicSchema",
            prim_path=rel.follower,
            to_schema=schema,
        )
        + ")"
    )


def schema_for_edit(prim: Usd.Prim, requested: str | None, default: str = PHYSX) -> str:
    """The schema an edit of ``prim``'s relation writes: the one it carries when ``requested``
    is None (``default`` when it carries none); ``MimicInputError`` when ``requested`` is the
    other one, since the joint would then carry two constraints."""
    carried = carried_schemas(prim)
    if len(carried) == 2:  # already two constraints: editing one would also make them disagree
        raise MimicInputError(
            f"{prim.GetPath()} carries both PhysxMimicJointAPI and NewtonMimicAPI, and {HOST_BEHAVIOUR}: "
            "editing one of them would leave two constraints that disagree. Keep one first ("
            + fix_advice(
                f"mimic-ext convert STAGE --to newton|physx --follower {prim.GetPath()} --duplicates-only",
                "RemoveMimicDuplicate",
                prim_path=str(prim.GetPath()),
                keep="newton|physx",
            )
            + "), then edit it"
        )
    if requested is None:
        return carried[0] if carried else default
    _check_schema(requested)
    problem = other_schema_problem(prim, requested)
    if problem:
        raise MimicInputError(problem)
    return requested


@dataclass
class Conversion:
    """What ``convert_relation`` did on one follower: the relation kept, the ones removed."""

    follower: str
    kept: MimicRelation
    removed: list[MimicRelation] = field(default_factory=list)
    #: True when the kept relation was written from the other schema's (a conversion), False
    #: when it was already there (only a duplicate was removed, or nothing changed)
    converted: bool = False

    @property
    def changed(self) -> bool:
        return self.converted or bool(self.removed)


def _convertible(stage: Usd.Stage, rel: MimicRelation, to: str) -> None:
    """Refuse a conversion whose target schema cannot say what ``rel`` says, naming why."""
    where = f"{rel.follower} ({api_label(rel)})"
    if rel.invalid:
        raise MimicInputError(f"{where}: {rel.invalid}; fix it before converting")
    if to == NEWTON:
        if rel.compliant:
            raise MimicInputError(
                f"{where} is compliant (naturalFrequency {rel.natural_frequency:g}, dampingRatio "
                f"{rel.damping_ratio:g}) and NewtonMimicAPI is always hard: keep it in "
                f"{PHYSX_API}, or make it hard first"
            )
        kinds = [joints.joint_kind(stage.GetPrimAtPath(p)) for p in (rel.follower, rel.leader or "")]
        if joints.D6 in kinds:
            raise MimicInputError(
                f"{where}: NewtonMimicAPI couples single-DOF joints only (revolute, prismatic), "
                f"and a D6 joint takes part here: keep it in {PHYSX_API}"
            )
        if mixed_units(stage, rel.follower, rel.leader):
            raise MimicInputError(
                f"{where} couples a revolute and a prismatic joint, which newton-usd-schemas "
                "does not support and PhysX and Newton read in different units (coef1 per "
                f"degree or per radian): keep it in {PHYSX_API}"
            )
    elif not rel.enabled:
        raise MimicInputError(
            f"{where} is disabled (newton:mimicEnabled = false) and {PHYSX_API} has no switch: "
            "enable it first, or remove it"
        )


def convert_relation(
    stage: Usd.Stage, follower: str, to: str, instance: str = "rotX", rels: list[MimicRelation] | None = None
) -> Conversion:
    """Leave ``follower`` with its relation in schema ``to`` only.

    From the other schema the relation is written in ``to`` (same canonical relation; a new
    PhysxMimicJointAPI uses ``instance``) and the other removed; where the follower carries
    both, ``to``'s relation is kept and the other removed (the duplicate, whatever it said);
    where it carries only ``to``, nothing changes. Refuses, before writing, what ``to`` cannot
    say (compliance, a D6 or mixed-unit pair in Newton; a disabled relation in PhysX).
    """
    _check_schema(to)
    if rels is None:  # (``convert_stage`` passes what it has just read)
        prim = stage.GetPrimAtPath(follower) if follower else None
        rels = read_joint_relations(prim) if prim else []
    if not rels:
        raise MimicInputError(f"{follower} has no mimic relation to convert")
    target = [r for r in rels if r.schema == to]
    source = [r for r in rels if r.schema != to]
    if target:
        removed = remove_relation(stage, follower, schema=other_schema(to), relations=source) if source else []
        return Conversion(follower, target[0], removed)
    if len(source) > 1:
        names = ", ".join(api_label(r) for r in source)
        raise MimicInputError(f"{follower} has several relations ({names}); keep one before converting")
    (rel,) = source
    _convertible(stage, rel, to)
    new = rel.replace(schema=to, instance=instance if to == PHYSX else None, enabled=True, authored=None, invalid=None)
    if to == NEWTON:
        new = new.replace(reference_axis="rotX", natural_frequency=0.0, damping_ratio=0.0)
        new = _chain_root(stage, new)
    kept = set_relation(stage, new)  # refuses before writing; then the source goes
    removed = remove_relation(stage, follower, schema=rel.schema, relations=source)  # (untouched by the set)
    return Conversion(follower, kept, removed, converted=True)


def _chain_root(stage: Usd.Stage, rel: MimicRelation) -> MimicRelation:
    """``rel`` composed onto the root of its chain (C follows B follows A: C follows A with
    ``m_C m_B`` and ``m_C c_B + c_C``), as the importer writes Newton relations: Newton refuses a
    leader that is itself a follower."""
    seen = {rel.follower}
    while rel.leader and rel.leader not in seen:
        leader = stage.GetPrimAtPath(rel.leader)
        up = (
            [r for r in read_joint_relations(leader) if r.enabled and not r.compliant and not r.invalid]
            if leader
            else []
        )
        if not up:
            break
        seen.add(rel.leader)
        rel = rel.replace(
            leader=up[0].leader,
            multiplier=rel.multiplier * up[0].multiplier,
            offset=rel.multiplier * up[0].offset + rel.offset,
        )
    return rel


def remove_duplicate(stage: Usd.Stage, follower: str, keep: str) -> Conversion:
    """On a follower carrying both schemas, remove the one that is not ``keep``; an error when
    it carries only one (there is no duplicate)."""
    _check_schema(keep)
    prim = stage.GetPrimAtPath(follower) if follower else None
    carried = carried_schemas(prim) if prim else []
    if len(carried) < 2:
        what = f"only {'NewtonMimicAPI' if carried == [NEWTON] else PHYSX_API}" if carried else "no mimic relation"
        raise MimicInputError(f"{follower} has {what}: there is no duplicate to remove")
    return convert_relation(stage, follower, keep)


def relations_by_follower(stage: Usd.Stage) -> dict[str, list[MimicRelation]]:
    """Every prim carrying a mimic relation, in traversal order, with its relations as read."""
    out = {}
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        schemas = applied_schemas(prim)  # one look, then the full read only where a mimic API is applied
        if any(a == NEWTON_API or a.startswith(PHYSX_API + ":") for a in schemas) and (
            rels := read_joint_relations(prim)
        ):
            out[str(prim.GetPath())] = rels
    return out


def convert_stage(
    stage: Usd.Stage, to: str, followers: list[str] | None = None, duplicates_only: bool = False
) -> list[Conversion]:
    """``convert_relation`` on every follower (or those named); ``duplicates_only`` touches only
    followers that carry both schemas. All refusals are checked before anything is written."""
    _check_schema(to)
    found = {} if followers else relations_by_follower(stage)
    todo = list(followers) if followers else list(found)
    if duplicates_only:
        todo = [f for f in todo if len(carried_schemas(stage.GetPrimAtPath(f))) > 1]
    read: dict[str, list[MimicRelation]] = {}
    for f in todo:  # refuse before the first write
        prim = stage.GetPrimAtPath(f)
        rels = read[f] = found[f] if f in found else (read_joint_relations(prim) if prim else [])
        if not rels:
            raise MimicInputError(f"{f} has no mimic relation to convert")
        if not any(r.schema == to for r in rels):
            if len(rels) > 1:
                raise MimicInputError(
                    f"{f} has several relations ({', '.join(api_label(r) for r in rels)}); keep one before converting"
                )
            _convertible(stage, rels[0], to)
    # a follower named twice is read again: its first conversion changed it
    return [convert_relation(stage, f, to, rels=read.pop(f, None)) for f in todo]


__all__ = [
    "HOST_BEHAVIOUR",
    "Conversion",
    "carried_schemas",
    "convert_relation",
    "convert_stage",
    "fix_advice",
    "mixed_units",
    "other_schema_problem",
    "remove_duplicate",
    "schema_for_edit",
]
