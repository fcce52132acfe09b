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
