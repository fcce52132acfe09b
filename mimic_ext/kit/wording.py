"""A mimic relation in words, in the units the panel's fields show (degrees or stage distance).

Why USD units and not SI: the fields show the authored PhysX values, and the sentence must
read against them (gearing 2 -> "q = -2.0 x q_ref"). The conversion from the canonical
relation goes through ``relation.canonical_to_newton``, which is exactly the follower's
equation ``q_f = coef0 + coef1 * q_ref`` in USD units. Pure pxr (no ``omni``).
"""

from __future__ import annotations

from pxr import Sdf, Usd, UsdGeom

from ..schema import joints
from ..schema.relation import MimicRelation, canonical_to_newton

_DISTANCE_UNITS = {1.0: "m", 0.1: "dm", 0.01: "cm", 0.001: "mm"}


def offset_unit(prim: Usd.Prim, dof: str | None = None) -> str:
    """The USD unit of a joint DOF: "deg" for rotations, the stage distance unit otherwise."""
    kind = joints.joint_kind(prim)
    if kind == joints.PRISMATIC or (kind == joints.D6 and dof in joints.TRANS_DOFS):
        mpu = float(UsdGeom.GetStageMetersPerUnit(prim.GetStage()))
        return next((name for size, name in _DISTANCE_UNITS.items() if abs(mpu - size) <= 1e-12 * size), "stage units")
    return "deg"


def number(value: float, always_decimal: bool = False) -> str:
    """Short, exact-looking numbers: 1.0 / -2.0 / 1.334 for gains, 0 / 2.5 for offsets."""
    text = f"{value + 0.0:.6g}"
    if always_decimal and text.lstrip("-").isdigit():
        text += ".0"
    return text


def number_or_dash(value: float | None) -> str:
    """A measured figure to 4 significant digits, "-" when there is none (None or NaN)."""
    return "-" if value is None or value != value else f"{value:.4g}"


def _scales(stage: Usd.Stage, relation: MimicRelation) -> tuple[float, float]:
    """SI per USD unit of follower and leader, as the authoring module resolves them."""
    follower = stage.GetPrimAtPath(relation.follower)
    leader = (
        stage.GetPrimAtPath(relation.leader)
        if relation.leader and Sdf.Path.IsValidPathString(relation.leader)
        else None
    )
    s_l = joints.unit_scale(leader, relation.reference_axis) if leader else None
    s_f = joints.unit_scale(follower) or s_l or 1.0
    return s_f, s_l or s_f


def describe(stage: Usd.Stage, relation: MimicRelation) -> str:
    """e.g. ``follows finger_joint: q = 1.0 x q_ref + 0 deg``."""
    if not relation.leader:
        return "follows no joint: set a reference joint"
    s_f, s_l = _scales(stage, relation)
    coef0, coef1 = canonical_to_newton(relation.multiplier, relation.offset, s_f, s_l)
    sign = "-" if coef0 < 0 else "+"
    unit = offset_unit(stage.GetPrimAtPath(relation.follower))
    name = Sdf.Path(relation.leader).name if Sdf.Path.IsValidPathString(relation.leader) else relation.leader
    text = f"follows {name}: q = {number(coef1, always_decimal=True)} x q_ref {sign} {number(abs(coef0))} {unit}"
    if relation.compliant:
        text += (
            f" (compliant: natural frequency {number(relation.natural_frequency)}, "
            f"damping ratio {number(relation.damping_ratio)})"
        )
    if not relation.enabled:
        text += " (disabled)"
    return text
