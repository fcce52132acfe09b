"""What a sweep found, as plain data: per follower, per stage, per run.

Kept free of USD and Warp objects so that results cross process boundaries (the
multi-stage pool) and feed every reporter the same way.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, SKIPPED, ERROR = "pass", "fail", "skipped", "error"
EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
STATUSES = (PASS, FAIL, SKIPPED, ERROR)

#: The public harness's metric names, per follower (``<follower>`` is the joint's prim name).
METRIC_SUFFIXES = ("motion_ratio", "gear_ratio_error", "max_error_rad", "dir_matches_gear")


def finite_or_none(value: Any) -> Any:
    """JSON has no NaN or infinity: such numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class FollowerResult:
    follower: str
    name: str
    reference: str
    swept: str
    schema: str
    label: str                      # "PhysxMimicJointAPI:rotX" or "NewtonMimicAPI"
    compliant: bool
    follower_unit: str              # authored unit of the follower ("deg" or "stage units")
    reference_unit: str
    gearing: float                  # signed, as authored (PhysX gearing or Newton coef1)
    offset: float                   # as authored (PhysX offset or Newton coef0)
    status: str = PASS
    measured_ratio: float = math.nan
    motion_ratio: float = math.nan
    ratio_error: float = math.nan
    ratio_error_relative: float = math.nan
    max_error: float = math.nan     # SI: rad (revolute follower) or m (prismatic)
    max_error_unit: str = "rad"
    direction: str = "undetermined"
    rest_offset: float = math.nan   # offset the start pose implies, authored convention and units
    rest_offset_error: float = math.nan   # SI
    samples_used: int = 0
    reference_excursion: float = 0.0      # largest |reference displacement|, reference's authored unit
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: seconds since sweep start, and reference / follower displacement in authored units
    sample_t: list[float] = field(default_factory=list)
    sample_reference: list[float] = field(default_factory=list)
    sample_follower: list[float] = field(default_factory=list)

    @property
    def abs_gearing(self) -> float:
        return abs(self.gearing)

    @property
    def expected_ratio(self) -> float:
        """The signed ratio the authored relation predicts (PhysX: -gearing)."""
        return -self.gearing if self.schema == "physx" else self.gearing

    @property
    def dir_matches_gear(self) -> bool | None:
        return None if self.direction == "undetermined" else self.direction == "match"

    @property
    def metrics(self) -> dict[str, Any]:
        """This follower under the public harness's metric names."""
        p = f"mim_pair_{self.name}_"
        return {
            p + "motion_ratio": finite_or_none(self.motion_ratio),
            p + "gear_ratio_error": finite_or_none(self.ratio_error),
            p + "max_error_rad": finite_or_none(self.max_error),
            p + "dir_matches_gear": self.dir_matches_gear,
        }

    def to_dict(self, samples: bool = True) -> dict[str, Any]:
        d = {k: finite_or_none(v) for k, v in asdict(self).items()}
        for key in ("sample_t", "sample_reference", "sample_follower"):
            d.pop(key)
        d["abs_gearing"] = self.abs_gearing
        d["expected_ratio"] = self.expected_ratio
        d["dir_matches_gear"] = self.dir_matches_gear
        d["metrics"] = self.metrics
        if samples:
            d["samples"] = {"t": self.sample_t, "reference": self.sample_reference, "follower": self.sample_follower}
        return d


@dataclass
class ReferenceResult:
    """A swept joint: its range, the drive that moved it and how far it actually went."""

    path: str
    kind: str | None
    unit: str
    lo: float                 # authored unit
    hi: float
    range_source: str
    drive_source: str         # "authored" | "test"
    stiffness: float          # SI
    damping: float
    excursion: float = math.nan      # measured max displacement from the sweep start, authored unit
    followers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {k: finite_or_none(v) for k, v in asdict(self).items()}


@dataclass
class SweepResult:
    """The FET022 mimic_joint result for one stage."""

    asset: str
    status: str = PASS
    reason: str = ""                           # why skipped or errored
    details: str = ""                          # e.g. the traceback of an internal error (JSON only)
    followers: list[FollowerResult] = field(default_factory=list)
    references: list[ReferenceResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    engine: str = ""
    num_envs: int = 0
    versions: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        c = {s: 0 for s in STATUSES}
        for f in self.followers:
            c[f.status] = c.get(f.status, 0) + 1
        return c

    @property
    def exit_code(self) -> int:
        return {ERROR: EXIT_ERROR, FAIL: EXIT_FAIL}.get(self.status, EXIT_OK)

    def settle_status(self) -> str:
        """The stage's status from its followers (unless it already errored or was skipped)."""
        if self.status in (ERROR, SKIPPED):
            return self.status
        statuses = {f.status for f in self.followers}
        if ERROR in statuses:
            # a follower the engine could not sweep is the harness's problem, not the asset's
            self.status = ERROR
            first = next(f for f in self.followers if f.status == ERROR)
            self.reason = self.reason or f"{first.follower}: {'; '.join(first.messages) or 'not swept'}"
        elif FAIL in statuses:
            self.status = FAIL
        elif statuses <= {SKIPPED}:
            self.status = SKIPPED
            self.reason = self.reason or "every relation is disabled"
        else:
            self.status = PASS
        return self.status

    def follower(self, path_or_name: str) -> FollowerResult:
        for f in self.followers:
            if path_or_name in (f.follower, f.name):
                return f
        raise KeyError(path_or_name)

    def to_dict(self, samples: bool = True) -> dict[str, Any]:
        return {
            "asset": self.asset, "status": self.status, "reason": self.reason, "details": self.details,
            "counts": self.counts(), "engine": self.engine, "num_envs": self.num_envs,
            "warnings": list(self.warnings), "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "references": [r.to_dict() for r in self.references],
            "followers": [f.to_dict(samples) for f in self.followers],
            "metrics": {k: v for f in self.followers for k, v in f.metrics.items()},
        }


@dataclass
class RunResult:
    """Several stages swept with one configuration."""

    stages: list[SweepResult] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    jobs: int = 1

    @property
    def exit_code(self) -> int:
        """2 when any stage errored, else 1 when any failed, else 0 (pass or skipped)."""
        return max((s.exit_code for s in self.stages), default=EXIT_OK)

    def summary(self) -> dict[str, int]:
        stages = {s: 0 for s in STATUSES}
        followers = {s: 0 for s in STATUSES}
        warnings = 0
        for st in self.stages:
            stages[st.status] += 1
            for k, v in st.counts().items():
                followers[k] += v
            warnings += sum(len(f.warnings) for f in st.followers)
        return {"stages": len(self.stages), **{f"stages_{k}": v for k, v in stages.items()},
                "followers": sum(followers.values()), **{f"followers_{k}": v for k, v in followers.items()},
                "warnings": warnings}
