"""The public harness's MIM-phase measures, computed from a sweep's samples.

NVIDIA's SimReady harness (``simready_benchmark_kit_suite``, ``articulation_phases/
mimic_joint.py``, ``run_mimic_joint``) judges a mimic pair by these numbers; dashboards
read them from ``result.json`` under ``mim_pair_<follower>_<name>``. They are re-derived
here from the definitions, with two differences that only matter where the harness mixes
units (documented in docs/fet022.md):

* the harness compares an SI motion ratio with the authored |gearing|; for a pair of one
  revolute and one prismatic joint those are in different units, so the ratio here is in
  the authored USD units (identical for every same-kind pair);
* the harness adds the authored offset (degrees for a revolute follower) to radian
  displacements; here gearing and offset are first converted to SI (identical whenever
  the offset is zero or the follower is prismatic in a metre stage).

The harness reads the authored gearing's sign as ``delta q_f = gearing * delta q_ref``:
``gearing >= 0`` moves with the reference. PhysX's own equation, ``q_f + gearing * q_ref
+ offset = 0``, is the opposite; ``sign_rules_disagree`` says when the two expect
different directions (every PhysX relation with a nonzero gearing).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..schema.relation import PHYSX

#: the harness's floor under which the reference "did not sweep" (SI)
SWEPT_FLOOR = 1e-9
#: the harness's floor under which it cannot tell a direction (SI)
DIRECTION_RANGE_FLOOR = 1e-6

#: per-pair metric suffixes, in the harness's order and with its types
PAIR_METRICS = (
    "max_error_rad",
    "mean_error_rad",
    "ref_swept_rad",
    "follower_observed_rad",
    "follower_expected_rad",
    "dir_matches_gear",
    "motion_ratio",
    "gear_ratio_error",
    "abs_formula_max_error_rad",
    "rest_residual_rad",
)


@dataclass(frozen=True)
class HarnessPair:
    """One pair's harness measures (SI for ``*_rad``: rad, or m for a prismatic follower)."""

    max_error_rad: float  # max |dq_f - (gearing dq_ref + offset)| over the samples
    mean_error_rad: float  # mean of the same
    ref_swept_rad: float  # reference peak-to-peak
    follower_observed_rad: float  # follower peak-to-peak
    follower_expected_rad: float  # |gearing| * reference peak-to-peak
    dir_matches_gear: int  # 1 match, 0 mismatch, -1 undetermined (harness sign rule)
    motion_ratio: float  # follower / reference peak-to-peak (authored units)
    gear_ratio_error: float  # |motion_ratio - |gearing||
    abs_formula_max_error_rad: float  # max |q_f - (gearing q_ref + offset)|
    rest_residual_rad: float  # |q_f - (gearing q_ref + offset)| at rest

    def passes(self, tolerance: float) -> bool:
        """The harness's verdict: ``|motion_ratio - |gearing|| <= gear_ratio_tolerance``."""
        return self.gear_ratio_error <= tolerance

    def metrics(self, name: str) -> dict[str, float | int]:
        return {f"mim_pair_{name}_{k}": v for k, v in asdict(self).items()}


def harness_pair(
    q_ref: np.ndarray, q_f: np.ndarray, gearing: float, offset: float, reference_scale: float, follower_scale: float
) -> HarnessPair:
    """The harness's measures from the positions (SI) at the samples; the first sample is the rest pose.

    ``gearing`` and ``offset`` are as authored (PhysX gearing/offset or Newton coef1/coef0,
    USD units); ``*_scale`` are SI per USD unit of each joint.
    """
    q_ref = np.asarray(q_ref, dtype=float)
    q_f = np.asarray(q_f, dtype=float)
    gear_si = gearing * follower_scale / reference_scale  # dq_f(SI) per dq_ref(SI)
    offset_si = offset * follower_scale
    ref_rest, fol_rest = float(q_ref[0]), float(q_f[0])
    err = np.abs((q_f - fol_rest) - (gear_si * (q_ref - ref_rest) + offset_si))
    abs_err = np.abs(q_f - (gear_si * q_ref + offset_si))
    ref_swept = float(np.ptp(q_ref))
    fol_swept = float(np.ptp(q_f))
    if ref_swept > SWEPT_FLOOR:
        motion_ratio = (fol_swept / follower_scale) / (ref_swept / reference_scale)
    else:
        motion_ratio = 0.0
    direction = -1
    if q_ref.size >= 2 and ref_swept > DIRECTION_RANGE_FLOOR:
        ref_delta = ref_swept if q_ref[0] < (q_ref.min() + q_ref.max()) / 2 else -ref_swept
        fol_delta = fol_swept if q_f[0] < (q_f.min() + q_f.max()) / 2 else -fol_swept
        expected = 1.0 if gearing >= 0.0 else -1.0
        actual = 1.0 if fol_delta * ref_delta >= 0 else -1.0
        direction = 1 if expected == actual else 0
    return HarnessPair(
        max_error_rad=float(err.max()),
        mean_error_rad=float(err.mean()),
        ref_swept_rad=ref_swept,
        follower_observed_rad=fol_swept,
        follower_expected_rad=abs(gear_si) * ref_swept,
        dir_matches_gear=direction,
        motion_ratio=float(motion_ratio),
        gear_ratio_error=abs(float(motion_ratio) - abs(gearing)),
        abs_formula_max_error_rad=float(abs_err.max()),
        rest_residual_rad=abs(fol_rest - (gear_si * ref_rest + offset_si)),
    )


def harness_expected_sign(gearing: float) -> int:
    """The direction the harness expects: with the reference when gearing >= 0."""
    return 1 if gearing >= 0.0 else -1


def convention_expected_sign(schema: str, gearing: float) -> int:
    """The direction the schema's own equation gives: PhysX -sign(gearing), Newton sign(coef1); 0 for 0."""
    s = -gearing if schema == PHYSX else gearing
    return 0 if s == 0 or not math.isfinite(s) else (1 if s > 0 else -1)


def sign_rules_disagree(schema: str, gearing: float) -> bool:
    """Whether the harness's sign rule and the schema's equation expect opposite directions."""
    ours = convention_expected_sign(schema, gearing)
    return ours != 0 and ours != harness_expected_sign(gearing)


def sign_rule_note(schema: str, gearing: float, dir_matches_gear: int, direction: str) -> str | None:
    """The per-follower sentence that explains a disagreement, or None where the rules agree."""
    if not sign_rules_disagree(schema, gearing):
        return None
    word = lambda s: "with" if s > 0 else "against"  # noqa: E731
    verdict = {1: "1 (match)", 0: "0 (mismatch)"}.get(dir_matches_gear, "-1 (undetermined)")
    return (
        f"sign rules disagree: the harness reads gearing {gearing:g} as moving {word(harness_expected_sign(gearing))} "
        f"the reference (gearing >= 0: with), PhysX's q_f + gearing*q_ref + offset = 0 moves it "
        f"{word(convention_expected_sign(schema, gearing))}; so mim_pair_..._dir_matches_gear = {verdict} "
        f"follows the harness's rule, and the direction by PhysX's equation is '{direction}'"
    )
