"""Authored properties in a mimic schema's namespace that the schema does not declare.

Why: PhysX and Newton read only the declared names, so ``newton:mimicCoeff0`` or
``physxMimicJoint:rotX:gearng`` is never read and the relation falls back to the schema's
default for the property meant: the asset does something other than it says. The validator
reports it and the sweep rejects the follower for it, with this one message.
"""

from __future__ import annotations

from pxr import Usd

from .authoring import NEWTON_API, PHYSX_API
from .relation import PHYSX, MimicRelation

_INSTANCE = "__INSTANCE_NAME__"


def declared(api: str) -> set[str]:
    """The property names a registered API schema declares (instance template kept as written)."""
    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(api)
    return set(definition.GetPropertyNames()) if definition else set()


def undeclared_properties(prim: Usd.Prim, rel: MimicRelation) -> tuple[list[str], set[str], str]:
    """(the stray names, the declared ones, the API label) of ``rel``'s namespace on ``prim``;
    no stray names when the schema is not registered (nothing to compare with)."""
    if rel.schema == PHYSX:
        prefix = f"physxMimicJoint:{rel.instance}:"
        known = {n.replace(_INSTANCE, rel.instance or "") for n in declared(PHYSX_API)}
        what = f"{PHYSX_API}:{rel.instance}"
    else:
        prefix, known, what = "newton:mimic", declared(NEWTON_API), NEWTON_API
    if not known:
        return [], known, what
    stray = sorted(
        p.GetName() for p in prim.GetAuthoredProperties() if p.GetName().startswith(prefix) and p.GetName() not in known
    )
    return stray, known, what


def unread_properties(stage: Usd.Stage, rel: MimicRelation) -> str | None:
    """Why the follower's relation does not say what is authored (a property no engine reads), or None."""
    prim = stage.GetPrimAtPath(rel.follower)
    if not prim:
        return None
    stray, known, what = undeclared_properties(prim, rel)
    if not stray:
        return None
    return (
        f"{', '.join(stray)} on {rel.follower} is not a property of {what} (it declares "
        f"{', '.join(sorted(known))}): no engine reads it, so the relation falls back to the schema's default "
        f"for the property meant; fix the name"
    )
