"""Joint limits in the verdict: a relation that drives its follower past the follower's limits, and an
engine that lets a follower or reference leave its limits.

Engines treat such a stage differently: ours and PhysX hold the follower at its limit (and, through
the relation, its reference), so the ratio fails; Newton and MuJoCo let it run through (36 and 71.5
deg past the Aero hand's lower limit with one multiplier's sign flipped) and the ratio passes. The
first check below depends only on the stage and the plan, so every engine reports it and gives the
same verdict (fail); the second, a warning on the engine that did not enforce the limit (an
engine's behaviour, not the asset's relation), is what the disagreement section reads ("limit
enforced by A, not by B").
"""

from __future__ import annotations

import math

#: the phrase of an engine's own finding (the disagreement section looks for it)
LEFT_LIMITS = "left its limits"
#: the phrase of the stage's finding
PAST_LIMITS = "drives the follower past its limits"


def _prismatic(kind: str | None) -> bool:
    from ..schema import joints  # here, so that the disagreement section reads the phrases without USD

    return kind == joints.PRISMATIC


def tolerance(kind: str | None, config) -> float:
    """The allowed excursion past a limit, SI (the config's ``limit_tolerance_rad`` / ``_m``)."""
    return config.limit_tolerance_m if _prismatic(kind) else config.limit_tolerance_rad


def _unit(kind: str | None) -> tuple[float, str]:
    """(SI per shown unit, its name): degrees for a revolute joint, metres for a prismatic one."""
    return (1.0, "m") if _prismatic(kind) else (math.pi / 180.0, "deg")


def beyond(q, limits: tuple[float, float]) -> tuple[float, int]:
    """(how far the samples go past the limits at worst, SI, >= 0; the sample where they do)."""
    import numpy as np  # here: the reports read this module's phrases without numpy (mimic-ext --help)

    lo, hi = limits
    past = np.maximum(lo - q, q - hi)
    k = int(np.argmax(past))
    return max(0.0, float(past[k])), k


def left_limits(
    role: str, path: str, kind: str | None, q, limits, config, engine: str, times: list[float]
) -> str | None:
    """The engine's finding when joint ``path`` (the follower or its reference) went further than the
    tolerance outside its limits during the sweep; None when it stayed within them or has none."""
    import numpy as np

    if limits is None:
        return None
    q = np.asarray(q, float)
    if q.size == 0 or not np.all(np.isfinite(q)):
        return None
    tol = tolerance(kind, config)
    past, k = beyond(q, limits)
    if past <= tol:
        return None
    scale, unit = _unit(kind)
    return (
        f"limit: the {role} {path.rsplit('/', 1)[-1]} {LEFT_LIMITS} [{limits[0] / scale:.4g}, "
        f"{limits[1] / scale:.4g}] {unit} by {past / scale:.4g} {unit} (t = {times[k]:.4g} s; tolerance "
        f"{tol / scale:.3g} {unit}): the {engine} engine does not hold it at its limit"
    )


def relation_past_limits(multiplier: float, offset: float, lo: float, hi: float, limits, kind, config) -> str | None:
    """The stage's finding when the relation, over the reference's planned range [lo, hi] (SI), asks the
    follower for positions further than the tolerance outside its limits: a contradiction of the
    asset (an engine holding the limit fails the ratio, one that does not lets the follower through)."""
    import numpy as np

    if limits is None:
        return None
    ends = np.array([multiplier * lo + offset, multiplier * hi + offset])
    past, k = beyond(ends, limits)
    tol = tolerance(kind, config)
    if past <= tol:
        return None
    scale, unit = _unit(kind)
    return (
        f"limit: the relation {PAST_LIMITS}: over the reference's planned range it asks for "
        f"{ends[k] / scale:.4g} {unit}, {past / scale:.4g} {unit} outside [{limits[0] / scale:.4g}, "
        f"{limits[1] / scale:.4g}] {unit} (tolerance {tol / scale:.3g} {unit}): check the multiplier's "
        f"sign and the offset, or the follower's limits"
    )


__all__ = ["LEFT_LIMITS", "PAST_LIMITS", "beyond", "left_limits", "relation_past_limits", "tolerance"]
