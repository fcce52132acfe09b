"""The canonical mimic relation and the only place where authored forms convert to it.

Canonical means SI and one sign convention: ``q_f = multiplier * q_l + offset`` with q in
radians or metres. PhysX writes ``q_f + gearing * q_ref + offset = 0`` and Newton
``q_f = coef0 + coef1 * q_l``, both in USD units (degrees for revolute DOFs, stage
distance for prismatic ones), so each conversion needs the SI size of one USD unit of the
follower (``s_f``) and of the leader (``s_l``): ``q_SI = s * q_USD``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: SI per USD unit of a revolute joint (radians per degree)
DEG = math.pi / 180.0
PHYSX = "physx"
NEWTON = "newton"
SCHEMAS = (PHYSX, NEWTON)

#: Instance names PhysX reads; others are accepted with a warning (see the validator).
PHYSX_INSTANCES = ("rotX", "rotY", "rotZ")
#: Instance names some tools write instead; read, but flagged.
TOLERATED_INSTANCES = ("transX", "transY", "transZ", "X", "Y", "Z")
REFERENCE_AXES = ("rotX", "rotY", "rotZ")


@dataclass(frozen=True)
class MimicRelation:
    """One scalar relation ``q_f = multiplier * q_l + offset`` (SI units).

    ``instance`` is the PhysxMimicJointAPI instance name (None for NewtonMimicAPI);
    ``reference_axis`` selects the DOF of a multi-DOF reference joint. The relation is
    compliant (a spring-damper on its error) only when both ``natural_frequency`` and
    ``damping_ratio`` are positive. ``authored`` keeps the values as they stand in USD
    (for display; a value of the wrong type shows as NaN); it takes no part in equality.
    ``invalid`` says which attribute holds a value of the wrong type (a string gearing):
    such a relation is read so that it can be listed and reported, but its numbers are
    NaN and nothing may simulate it.
    """

    follower: str
    leader: str | None
    multiplier: float = 1.0
    offset: float = 0.0
    instance: str | None = "rotX"
    reference_axis: str = "rotX"
    natural_frequency: float = 0.0
    damping_ratio: float = 0.0
    schema: str = PHYSX
    enabled: bool = True
    authored: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    invalid: str | None = field(default=None, compare=False)

    @property
    def compliant(self) -> bool:
        return self.natural_frequency > 0.0 and self.damping_ratio > 0.0

    @property
    def key(self) -> tuple[str, str, str | None]:
        """Identifies the authored instance: (follower, schema, instance)."""
        return (self.follower, self.schema, self.instance)

    def replace(self, **changes: Any) -> MimicRelation:
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        """The relation in words, canonical units."""
        sign = "+" if self.offset >= 0 else "-"
        return f"q = {self.multiplier:g} x q_ref {sign} {abs(self.offset):g}"


def _ratio(s_f: float, s_l: float) -> float:
    return s_f / s_l


def _clean(a: float, b: float) -> tuple[float, float]:
    """Drop negative zeros so that a zero offset prints and compares as 0."""
    return a + 0.0, b + 0.0


def physx_to_canonical(gearing: float, offset: float, s_f: float, s_l: float) -> tuple[float, float]:
    """``q_f + g q_l + o = 0`` in USD units -> (multiplier, offset) in SI."""
    return _clean(-gearing * _ratio(s_f, s_l), -offset * s_f)


def canonical_to_physx(multiplier: float, offset: float, s_f: float, s_l: float) -> tuple[float, float]:
    """(multiplier, offset) in SI -> (gearing, offset) in USD units."""
    return _clean(-multiplier / _ratio(s_f, s_l), -offset / s_f)


def _newton_ratio(s_f: float, s_l: float) -> float:
    """SI per unit of ``coef1``: NewtonMimicAPI declares ``coef1`` dimensionless, and Newton
    (``import_usd._resolve_newton_mimic``) uses it unconverted between its joint coordinates,
    radians and stage distance units. So between a revolute and a prismatic joint ``coef1``
    is rad per unit (or units per rad), not the degrees the USD limits use; between like
    joints this is 1 either way. (A revolute joint's scale is exactly ``DEG``.)"""
    return (1.0 if s_f == DEG else s_f) / (1.0 if s_l == DEG else s_l)


def newton_to_canonical(coef0: float, coef1: float, s_f: float, s_l: float) -> tuple[float, float]:
    """``q_f = c0 + c1 q_l`` (``c0`` in the follower's USD units) -> (multiplier, offset) in SI."""
    return _clean(coef1 * _newton_ratio(s_f, s_l), coef0 * s_f)


def canonical_to_newton(multiplier: float, offset: float, s_f: float, s_l: float) -> tuple[float, float]:
    """(multiplier, offset) in SI -> (coef0 in the follower's USD units, dimensionless coef1)."""
    return _clean(offset / s_f, multiplier / _newton_ratio(s_f, s_l))
