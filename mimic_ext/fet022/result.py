"""What a sweep found, as plain data: per follower, per stage, per run.

Kept free of USD and Warp objects so that results cross process boundaries (the
multi-stage pool) and feed every reporter the same way.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

PASS, FAIL, SKIPPED, ERROR = "pass", "fail", "skipped", "error"
#: the engine cannot represent the relation or the stage (no schema it reads, a feature it lacks):
#: no verdict on the asset, with the reason; not a failure (exit code 0, like skipped)
NOT_APPLICABLE = "not_applicable"
#: the stage took longer than the per-asset timeout (``sweep --timeout``): no verdict, exit code 2
TIMEOUT = "timeout"
EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
STATUSES = (PASS, FAIL, SKIPPED, ERROR, NOT_APPLICABLE, TIMEOUT)

#: Our own per-follower measures, beside the harness's (``harness.PAIR_METRICS``): names the
#: harness does not use, so its dashboards never read them for its own.
EXTRA_SUFFIXES = (
    "fit_slope",
    "fit_ratio_error",
    "ratio_error_relative",
    "relation_max_error",
    "dir_convention",
    "bbox_volume_ratio",
    "offset_error_start",
    "offset_error_end",
)


def finite_or_none(value: Any) -> Any:
    """JSON has no NaN or infinity: such numbers become null, also inside lists and mappings."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


_DIRECTION_CODE = {"match": 1, "reversed": 0}


@dataclass
class FollowerResult:
    follower: str
    name: str
    reference: str
    swept: str
    schema: str
    label: str  # "PhysxMimicJointAPI:rotX" or "NewtonMimicAPI"
    compliant: bool
    follower_unit: str  # authored unit of the follower ("deg" or "stage units")
    reference_unit: str
    gearing: float  # signed, as authored (PhysX gearing or Newton coef1)
    offset: float  # as authored (PhysX offset or Newton coef0)
    engine: str = ""  # the engine (label) whose run this is
    status: str = PASS
    #: the harness's motion ratio: follower / reference peak-to-peak (authored units)
    motion_ratio: float = math.nan
    #: our least-squares slope of follower against reference displacement (signed, authored
    #: units; metric ``mim_pair_<name>_fit_slope``)
    measured_ratio: float = math.nan
    ratio_measure: str = "motion_ratio"  # which of the two the verdict compared with |gearing|
    ratio_error: float = math.nan  # |that measure - |gearing||
    ratio_error_relative: float = math.nan
    #: the harness's measures (``harness.PAIR_METRICS`` -> value); empty when not measured
    harness: dict[str, Any] = field(default_factory=dict)
    relation_max_error: float = math.nan  # SI: max |d_f - m d_ref| with the authored relation
    max_error_unit: str = "rad"
    direction: str = "undetermined"  # against the schema's own equation (PhysX / Newton)
    rest_offset: float = math.nan  # offset the start pose implies, authored convention and units
    rest_offset_error: float = math.nan  # SI
    #: the offset check: |q_f - (multiplier q_ref + offset)| (canonical relation, SI) at the sweep's
    #: first and last samples
    offset_error_start: float = math.nan
    offset_error_end: float = math.nan
    samples_used: int = 0
    reference_excursion: float = 0.0  # largest |reference displacement|, reference's authored unit
    bbox_volume_ratio: float = math.nan  # largest box volume over the start volume in this sweep
    #: the relation as the engine read it (``engines.ReadRelation`` fields, SI), None when it cannot say
    read_relation: dict[str, Any] | None = None
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # explanations, not findings (e.g. sign rules)
    #: positions at the first sample (authored units): add them to the displacements for positions
    reference_start: float = math.nan
    follower_start: float = math.nan
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
    def dir_matches_gear(self) -> int:
        """The harness's metric: 1 match, 0 mismatch, -1 undetermined, by the harness's sign rule."""
        return int(self.harness.get("dir_matches_gear", -1))

    @property
    def measured(self) -> bool:
        return bool(self.harness)

    @property
    def metrics(self) -> dict[str, Any]:
        """This follower under the public harness's metric names (none when it was not measured)."""
        return {f"mim_pair_{self.name}_{k}": finite_or_none(v) for k, v in self.harness.items()}

    @property
    def extra_metrics(self) -> dict[str, Any]:
        """Our own measures under names of our own (``EXTRA_SUFFIXES``)."""
        if not self.measured:
            return {}
        values = (
            self.measured_ratio,
            abs(abs(self.measured_ratio) - self.abs_gearing),
            self.ratio_error_relative,
            self.relation_max_error,
            _DIRECTION_CODE.get(self.direction, -1),
            self.bbox_volume_ratio,
            self.offset_error_start,
            self.offset_error_end,
        )
        return {f"mim_pair_{self.name}_{k}": finite_or_none(v) for k, v in zip(EXTRA_SUFFIXES, values)}

    def to_dict(self, samples: bool = True) -> dict[str, Any]:
        # not ``asdict``: it deep-copies the sample lists only for them to be dropped (a catalogue's
        # summary writes thousands of followers); finite_or_none copies the lists and dicts kept
        d = finite_or_none({f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("sample_")})
        d["abs_gearing"] = finite_or_none(self.abs_gearing)
        d["expected_ratio"] = finite_or_none(self.expected_ratio)
        d["dir_matches_gear"] = self.dir_matches_gear
        d["metrics"] = self.metrics
        d["extra_metrics"] = self.extra_metrics
        if samples:
            d["samples"] = finite_or_none(
                {"t": self.sample_t, "reference": self.sample_reference, "follower": self.sample_follower}
            )
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FollowerResult:
        """The inverse of ``to_dict`` (a stored result read back; null numbers become NaN)."""
        kwargs = _known(cls, d)
        samples = d.get("samples") or {}
        kwargs["sample_t"] = _floats(samples.get("t", []))
        kwargs["sample_reference"] = _floats(samples.get("reference", []))
        kwargs["sample_follower"] = _floats(samples.get("follower", []))
        return cls(**kwargs)

    def drop_samples(self) -> None:
        self.sample_t, self.sample_reference, self.sample_follower = [], [], []


@dataclass
class ReferenceResult:
    """A swept joint: its range, the drive that moved it and how far it actually went."""

    path: str
    kind: str | None
    unit: str
    lo: float  # planned sweep range (authored unit): the limits less the margin
    hi: float
    range_source: str
    drive_source: str  # "authored" | "test"
    stiffness: float  # SI
    damping: float
    excursion: float = math.nan  # measured max displacement from the sweep start, authored unit
    followers: list[str] = field(default_factory=list)
    limits: list[float] | None = None  # authored [lower, upper] (authored unit); None when unlimited

    def to_dict(self) -> dict[str, Any]:
        return finite_or_none(asdict(self))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReferenceResult:
        return cls(**_known(cls, d))


def _nan(v: Any) -> Any:
    return math.nan if v is None else v


def _floats(values: list[Any]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """The dataclass fields of ``cls`` found in ``d``; a float field stored as null is NaN again."""
    out = {}
    for f in fields(cls):
        if f.name in d and not f.name.startswith("sample_"):
            v = d[f.name]
            out[f.name] = _nan(v) if f.type == "float" else v
    return out


@dataclass
class SweepResult:
    """The FET022 mimic_joint result for one stage."""

    asset: str
    status: str = PASS
    reason: str = ""  # why skipped or errored
    details: str = ""  # e.g. the traceback of an internal error (JSON only)
    followers: list[FollowerResult] = field(default_factory=list)
    references: list[ReferenceResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    engine: str = ""
    num_envs: int = 0
    versions: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: NVIDIA's verdict on this stage and engine when its phase ran in the same unit of work
    #: (``simready.verdicts.UnitPhase``): kept by the run folder beside this result, not in
    #: ``to_dict`` (the reports carry it as ``RunResult.simready``)
    nvidia: dict[str, Any] | None = None

    def counts(self) -> dict[str, int]:
        c = dict.fromkeys(STATUSES, 0)
        for f in self.followers:
            c[f.status] = c.get(f.status, 0) + 1
        return c

    @property
    def exit_code(self) -> int:
        return {ERROR: EXIT_ERROR, TIMEOUT: EXIT_ERROR, FAIL: EXIT_FAIL}.get(self.status, EXIT_OK)

    def settle_status(self) -> str:
        """The stage's status from its followers (unless it already errored, was skipped or is not
        applicable to the engine). Not-applicable followers give no verdict: a stage of passes and
        not-applicables passes; one of not-applicables alone is not applicable."""
        if self.status in (ERROR, SKIPPED, NOT_APPLICABLE, TIMEOUT):
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
        elif statuses <= {SKIPPED, NOT_APPLICABLE}:
            self.status = NOT_APPLICABLE
            first = next(f for f in self.followers if f.status == NOT_APPLICABLE)
            self.reason = self.reason or f"{first.follower}: {'; '.join(first.messages)}"
        else:
            self.status = PASS
        return self.status

    def follower(self, path_or_name: str) -> FollowerResult:
        for f in self.followers:
            if path_or_name in (f.follower, f.name):
                return f
        raise KeyError(path_or_name)

    def harness_counts(self) -> dict[str, int]:
        """The harness's stage metrics: pairs detected, skipped (not measured), passed, failed."""
        c = self.counts()
        return {
            "mim_mimic_pairs_detected": len(self.followers),
            "mim_skipped_pairs": c[SKIPPED] + c[ERROR] + c[NOT_APPLICABLE],
            "mim_pairs_passed": c[PASS],
            "mim_pairs_failed": c[FAIL],
        }

    @property
    def metrics(self) -> dict[str, Any]:
        """Every harness metric of this stage, flat, as its ``result.json`` holds them."""
        out: dict[str, Any] = dict(self.harness_counts())
        for f in self.followers:
            out.update(f.metrics)
        return out

    @property
    def extra_metrics(self) -> dict[str, Any]:
        return {k: v for f in self.followers for k, v in f.extra_metrics.items()}

    def to_dict(self, samples: bool = True) -> dict[str, Any]:
        return {
            "asset": self.asset,
            "status": self.status,
            "reason": self.reason,
            "details": self.details,
            "counts": self.counts(),
            "engine": self.engine,
            "num_envs": self.num_envs,
            "warnings": list(self.warnings),
            "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "references": [r.to_dict() for r in self.references],
            "followers": [f.to_dict(samples) for f in self.followers],
            "metrics": self.metrics,
            "extra_metrics": self.extra_metrics,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SweepResult:
        """The inverse of ``to_dict`` (a stored result read back)."""
        out = cls(**{k: v for k, v in _known(cls, d).items() if k not in ("followers", "references")})
        out.followers = [FollowerResult.from_dict(f) for f in d.get("followers", [])]
        out.references = [ReferenceResult.from_dict(r) for r in d.get("references", [])]
        return out

    def drop_samples(self) -> None:
        """Forget the sampled displacements (a catalogue run keeps them in the run folder only)."""
        for f in self.followers:
            f.drop_samples()


def decided_exit_code(stage: SweepResult, verdict: str | None, strict: bool) -> int:
    """One stage-and-engine's share of a run's exit code (``RunResult.decided_exit_code``; the
    catalogue's summaries add it up asset by asset): ``verdict`` is NVIDIA's status where its phase
    ran (fail: 1), else None and our port's ``exit_code`` decides; ``strict``: ours count too; an
    error or timeout counts always."""
    code = EXIT_OK
    if verdict is None or strict or stage.status in (ERROR, TIMEOUT):
        code = stage.exit_code
    if verdict == FAIL:
        code = max(code, EXIT_FAIL)
    return code


@dataclass
class RunResult:
    """Several stages swept with one configuration."""

    stages: list[SweepResult] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    jobs: int = 1
    retried: int = 0  # units run again because the process or Dask worker sweeping them died
    executor: str = "local"  # "local" (this process and its pool) or "dask" (jobs = Dask workers)
    #: units taken from the run folder unswept (``--resume``): their stored key matched
    reused: int = 0
    #: units that got no verdict because the run itself failed (the Dask scheduler was lost):
    #: ``{"asset", "engine", "reason"}``; not stored, so the next ``--resume`` sweeps them
    unjudged: list[dict[str, str]] = field(default_factory=list)
    #: Dask workers that left the cluster during the run, and the units they were sweeping
    workers_lost: list[dict[str, Any]] = field(default_factory=list)
    #: NVIDIA's SimReady verdicts, one dict per stage and engine (``simready.verdicts``); empty when
    #: its phase was not run
    simready: list[dict[str, Any]] = field(default_factory=list)
    #: our port's findings fail the run too (``--strict``), not only NVIDIA's verdict
    strict: bool = False

    @property
    def exit_code(self) -> int:
        """2 when any stage errored or timed out or a unit was left unjudged, else 1 when any failed, else
        0 (pass or skipped)."""
        worst = max((s.exit_code for s in self.stages), default=EXIT_OK)
        return EXIT_ERROR if self.unjudged else worst

    @property
    def decided_exit_code(self) -> int:
        """The run's exit code: per stage and engine NVIDIA's verdict where its phase ran (fail: 1),
        our port's (``exit_code``) where it did not; with ``strict`` ours count everywhere too. A
        stage our port could not read or sweep (error: 2, timeout: 2) counts always: that is no finding
        about the asset's relations but a run that did not happen; so does a unit left unjudged."""
        nvidia = {(v["asset"], v["engine"]): v["status"] for v in self.simready if v.get("status") != "not_run"}
        code = EXIT_ERROR if self.unjudged else EXIT_OK
        for st in self.stages:
            code = max(code, decided_exit_code(st, nvidia.get((st.asset, st.engine)), self.strict))
        return code

    def summary(self) -> dict[str, int]:
        stages = dict.fromkeys(STATUSES, 0)
        followers = dict.fromkeys(STATUSES, 0)
        warnings = 0
        for st in self.stages:
            stages[st.status] += 1
            for k, v in st.counts().items():
                followers[k] += v
            warnings += sum(len(f.warnings) for f in st.followers)
        return {
            "stages": len(self.stages),
            **{f"stages_{k}": v for k, v in stages.items()},
            "followers": sum(followers.values()),
            **{f"followers_{k}": v for k, v in followers.items()},
            "warnings": warnings,
        }
