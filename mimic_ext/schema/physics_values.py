"""Which authored physics numbers are not finite: the one rule the validator and the sweep share.

Only authored values count (a schema fallback such as breakForce = inf is the schema's).
Limits may be infinite (USD's way to say unlimited), as may bounds such as a drive's
maxForce, a joint's maxJointVelocity or breakForce; NaN never is, and a mass, inertia,
gain or position never is infinite.
"""

from __future__ import annotations

import math

from pxr import Sdf, Usd


def _numbers(value) -> list[float]:
    """The numbers inside an attribute value (scalar, Gf vector or matrix, array); [] for others."""
    if isinstance(value, (bool, str, Sdf.AssetPath)):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    try:
        items = list(value)
    except TypeError:
        return []
    if all(type(v) is float for v in items):  # a Gf vector or a float array: no recursion
        return items
    out: list[float] = []
    for v in items:
        out.extend(_numbers(v))
    return out


def _quaternion_parts(value) -> list[float] | None:
    if hasattr(value, "GetReal") and hasattr(value, "GetImaginary"):
        return [float(value.GetReal()), *(float(c) for c in value.GetImaginary())]
    return None


def infinity_allowed(name: str) -> bool:
    """True for the attributes whose infinity means "no bound" (limits, max*, break*)."""
    leaf = name.rsplit(":", 1)[-1]
    return leaf.endswith("Limit") or leaf.startswith(("max", "break"))


def nonfinite_value(attr: Usd.Attribute):
    """The authored value of ``attr`` when it holds a NaN, or an infinity the attribute does not
    allow (``infinity_allowed``); else None."""
    if not attr.HasAuthoredValue():
        return None
    value = attr.Get()
    if value is None or (type(value) is float and math.isfinite(value)):  # the common case first
        return None
    parts = _quaternion_parts(value)
    numbers = parts if parts is not None else _numbers(value)
    if all(map(math.isfinite, numbers)):
        return None
    inf_ok = infinity_allowed(attr.GetName())
    if any(math.isnan(v) or (math.isinf(v) and not inf_ok) for v in numbers):
        return value
    return None


#: Inertia components this close to zero are zero, not negative: converters that diagonalise a
#: float32 tensor leave eigenvalues of rounding noise (NVIDIA's urdf-usd-converter wrote
#: -5.7e-26 kg m^2 for a UR5 + Robotiq 2F-140 link). Relative: 16 float32 eps of the largest
#: component; absolute: 1e-20 kg m^2, far below any body (a 1 g sphere of 1 um radius has 4e-16).
INERTIA_ZERO_REL = 16 * 2.0**-23
INERTIA_ZERO_ABS = 1e-20


def inertia_rounding(moments) -> float:
    """How far below zero a component of ``moments`` may read and still be zero (rounding)."""
    return max(INERTIA_ZERO_REL * max((abs(float(x)) for x in moments), default=0.0), INERTIA_ZERO_ABS)


def triangle_violation(moments) -> bool:
    """True when principal moments A <= B <= C have A + B < C beyond float32 round-off: no rigid
    body has them (C = A + B is a flat plate) and MuJoCo refuses them at compile time."""
    values = [float(x) for x in moments]
    if len(values) != 3 or not all(map(math.isfinite, values)):
        return False
    a, b, c = sorted(max(v, 0.0) for v in values)
    return a + b < c * (1.0 - 4 * 2.0**-23)
