"""Judging one follower from its recorded motion: ratio, pointwise error, direction, rest offset.

Definitions (documented in docs/fet022.md):

* the harness's measures (``harness.harness_pair``), among them its motion ratio, the
  follower's peak-to-peak over the reference's, which the verdict compares with |gearing|
  by default (``ratio_measure: motion_ratio``);
* displacements are taken from the first sample (the start of the sweep), so rest
  offsets cancel, and expressed in the authored USD units (degrees or stage units), in
  which |gearing| is written;
* our fit (``measured_ratio``, metric ``_fit_slope``) is the least-squares slope through
  the origin of follower displacement against reference displacement, over the samples
  whose |reference displacement| is at least ``min_displacement_fraction`` of the largest
  one (``ratio_measure: fit_slope`` judges its magnitude instead);
* the max pointwise error is ``max |d_f - m d_ref|`` in SI (rad or m) with ``m`` the
  authored signed relation, over all samples;
* the direction is the sign of the measured ratio against the sign the authored
  relation predicts with the PhysX convention (q_f = -gearing q_ref - offset);
* the rest offset is what the authored convention's offset would have to be for the
  positions at the start of the sweep;
* the offset check compares the follower's position with ``multiplier q_ref + offset``
  (canonical relation, SI) at the sweep's first and last samples; a hard relation fails it
  past ``rest_offset_tolerance_rad`` / ``_m`` (an engine that misreads the offset: the ratio,
  taken from displacements, cannot see it), a compliant one only warns (it may sag).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..schema import joints
from ..schema.relation import PHYSX
from .config import SweepConfig
from .discovery import FollowerCase
from .harness import HarnessPair, harness_pair
from .result import FAIL, PASS

MATCH, REVERSED, UNDETERMINED = "match", "reversed", "undetermined"

#: A measured ratio this small (relative to |gearing|, or absolutely when gearing is 0)
#: carries no direction.
DIRECTION_FLOOR = 1e-3


@dataclass
class Measurement:
    harness: HarnessPair  # the harness's measures (its motion ratio among them)
    measured_ratio: float  # our signed least-squares slope, USD units
    ratio_error: float  # |judged measure - |gearing||
    ratio_error_relative: float  # ratio_error / |gearing| (inf when gearing is 0)
    max_error_si: float  # rad or m
    direction: str
    rest_offset: float  # authored-convention offset at the start of the sweep (USD units)
    rest_offset_error_si: float  # |measured - authored| offset in SI
    samples_used: int
    reference_excursion: float  # max |d_ref| (USD units)
    offset_error_start: float = math.nan  # |q_f - (m q_ref + c)| at the first sample, SI
    offset_error_end: float = math.nan  # at the last sample
    status: str = PASS
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def motion_ratio(self) -> float:
        return self.harness.motion_ratio


def fit_ratio(d_ref: np.ndarray, d_f: np.ndarray, min_fraction: float) -> tuple[float, int]:
    """(slope through the origin, samples used); nan when the reference did not move."""
    d_ref = np.asarray(d_ref, dtype=float)
    d_f = np.asarray(d_f, dtype=float)
    peak = float(np.max(np.abs(d_ref))) if d_ref.size else 0.0
    if not peak > 0.0 or not math.isfinite(peak):
        return math.nan, 0
    mask = np.abs(d_ref) >= min_fraction * peak
    x, y = d_ref[mask], d_f[mask]
    return float(np.dot(x, y) / np.dot(x, x)), int(mask.sum())


def judge(
    case: FollowerCase,
    q_ref: np.ndarray,
    q_f: np.ndarray,
    config: SweepConfig,
    reference_excursion_si: float | None = None,
    planned_excursion_si: float | None = None,
    blocked_because: str | None = None,
) -> Measurement:
    """Measure and judge one follower from its and its reference's positions (SI) at the samples."""
    q_ref = np.asarray(q_ref, dtype=float)
    q_f = np.asarray(q_f, dtype=float)
    d_ref_si, d_f_si = q_ref - q_ref[0], q_f - q_f[0]
    d_ref, d_f = d_ref_si / case.reference_scale, d_f_si / case.follower_scale
    slope, used = fit_ratio(d_ref, d_f, config.min_displacement_fraction)
    g = case.abs_gearing
    pair = harness_pair(q_ref, q_f, case.gearing, case.offset, case.reference_scale, case.follower_scale)
    if config.ratio_measure == "motion_ratio":
        motion = pair.motion_ratio if np.ptp(q_ref) > 0 else math.nan
    else:
        motion = abs(slope) if math.isfinite(slope) else math.nan
    err = abs(motion - g) if math.isfinite(motion) else math.nan
    rel = (err / g if g > 0 else (0.0 if err == 0 else math.inf)) if math.isfinite(err) else math.nan
    m = case.relation.multiplier
    max_err = float(np.max(np.abs(d_f_si - m * d_ref_si))) if d_f_si.size else math.nan

    floor = DIRECTION_FLOOR * (g if g > 0 else 1.0)
    if not math.isfinite(slope) or abs(slope) < floor or case.expected_sign == 0:
        direction = UNDETERMINED
    else:
        direction = MATCH if (slope > 0) == (case.expected_sign > 0) else REVERSED

    # offset at the start of the sweep, in the authored convention and units
    qf0, ql0 = q_f[0] / case.follower_scale, q_ref[0] / case.reference_scale
    if case.relation.schema == PHYSX:
        rest = -(qf0 + case.gearing * ql0)  # q_f + g q_ref + o = 0
    else:
        rest = qf0 - case.gearing * ql0  # q_f = c0 + c1 q_ref
    rest_err_si = abs(rest - case.offset) * case.follower_scale
    out = Measurement(
        harness=pair,
        measured_ratio=slope,
        ratio_error=err,
        ratio_error_relative=rel,
        max_error_si=max_err,
        direction=direction,
        rest_offset=rest,
        rest_offset_error_si=rest_err_si,
        samples_used=used,
        reference_excursion=float(np.max(np.abs(d_ref))) if d_ref.size else 0.0,
    )
    c = case.relation.offset
    if q_f.size:
        out.offset_error_start = float(abs(q_f[0] - (m * q_ref[0] + c)))
        out.offset_error_end = float(abs(q_f[-1] - (m * q_ref[-1] + c)))

    unit_f = "m" if case.follower_kind == joints.PRISMATIC else "rad"
    judged = rel if config.tolerance_mode == "relative" else err
    tol_text = (
        f"{config.gear_ratio_tolerance:g} relative"
        if config.tolerance_mode == "relative"
        else f"{config.gear_ratio_tolerance:g} absolute"
    )
    if (
        reference_excursion_si is not None
        and planned_excursion_si
        and reference_excursion_si < config.min_excursion_fraction * planned_excursion_si
    ):
        out.status = FAIL
        out.messages.append(
            f"the swept joint moved only {reference_excursion_si:.4g} of the planned {planned_excursion_si:.4g} "
            f"(SI): "
            + (
                blocked_because
                or "its drive is too weak or something blocks it (limits of a follower act on the reference too)"
            )
        )
    elif not math.isfinite(slope):
        out.status = FAIL
        out.messages.append(f"reference {case.reference} did not move during the sweep: no ratio can be measured")
    elif not judged <= config.gear_ratio_tolerance * (1 + 1e-12):
        out.status = FAIL
        what = "motion ratio" if config.ratio_measure == "motion_ratio" else "fitted slope magnitude"
        out.messages.append(
            f"{what} {motion:.6g} differs from |gearing| {g:.6g} by {err:.4g} ({rel:.2%}), over the "
            f"{tol_text} tolerance; max pointwise error {max_err:.4g} {unit_f}"
        )
    if direction == REVERSED:
        word = lambda sign: "with" if sign > 0 else "against"  # noqa: E731
        if case.relation.schema == PHYSX:
            rule = f"{case.label} gearing {case.gearing:g} (PhysX: q_f = -gearing*q_ref - offset)"
        else:
            rule = f"NewtonMimicAPI coef1 {case.gearing:g} (q_f = coef0 + coef1*q_ref)"
        out.warnings.append(
            f"direction mismatch: the follower moves {word(slope)} its reference (measured ratio {slope:+.4g}) "
            f"but {rule} says it moves {word(case.expected_sign)} it"
        )
    tol_off = config.rest_offset_tolerance_m if unit_f == "m" else config.rest_offset_tolerance_rad
    worst = max(out.offset_error_start, out.offset_error_end)
    if worst > tol_off:
        when = "start" if out.offset_error_start >= out.offset_error_end else "end"
        q_at = (q_f[0], q_ref[0]) if when == "start" else (q_f[-1], q_ref[-1])
        text = (
            f"offset check: at the {when} of the sweep the follower is at {q_at[0]:.5g} {unit_f}, "
            f"{worst:.3g} {unit_f} from multiplier * q_ref + offset = {m:.6g} * {q_at[1]:.5g} + {c:.6g} "
            f"(tolerance {tol_off:g} {unit_f})"
        )
        if case.relation.compliant:
            out.warnings.append(text + ": a compliant relation may sag")
        else:
            out.status = FAIL
            out.messages.append(text + ": the engine reads another offset, or the follower is held off its relation")
    if rest_err_si > tol_off:
        unit_u = "deg" if case.follower_kind == joints.REVOLUTE else "stage units"
        what = "offset" if case.relation.schema == PHYSX else "coef0"
        out.warnings.append(
            f"rest offset mismatch: at the start of the sweep the positions give {what} {rest:.4g} {unit_u}, "
            f"authored {case.offset:g} ({rest_err_si:.3g} {unit_f} apart, tolerance {tol_off:g})"
        )
    return out
