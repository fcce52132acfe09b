"""FET022 sweep parameters: one dataclass holding the defaults, read over by named YAML files.

The defaults live here once, so a checkout, a wheel and a Kit folder run the same sweep.
``fet022.yaml`` beside this module lists the same values for people to read and copy (a test
keeps the two equal); it is never read implicitly. A user file is read only when named: the
``MIMIC_EXT_FET022_CONFIG`` environment variable, then ``--config`` (or ``path``), then
command-line flags override, in that order.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MimicInputError

#: The defaults written out as YAML, shipped in the package for people to read and copy.
DEFAULTS_TEMPLATE = Path(__file__).with_name("fet022.yaml")
#: Names a user's settings file, read under ``--config`` (a Kit app or a CI job sets it once).
CONFIG_ENV = "MIMIC_EXT_FET022_CONFIG"

TOLERANCE_MODES = ("absolute", "relative")
#: What the verdict compares with |gearing|: the public harness's peak-to-peak motion ratio,
#: or our least-squares slope of follower against reference displacement.
RATIO_MEASURES = ("motion_ratio", "fit_slope")
#: The most solver steps one sweep may take (settle + sweep): beyond it a run takes hours on
#: a real engine (PhysX here: about 3 ms per Robotiq step) and its samples fill memory.
MAX_STEPS = 100_000


@dataclass(frozen=True)
class TestDrive:
    """Gains of the temporary position drive put on a reference joint that has none (SI)."""

    angular_stiffness: float = 1000.0  # N m / rad
    angular_damping: float = 50.0  # N m s / rad
    linear_stiffness: float = 10000.0  # N / m
    linear_damping: float = 500.0  # N s / m


@dataclass(frozen=True)
class SweepConfig:
    """Parameters of one FET022 mimic_joint sweep (SI units unless the name says otherwise)."""

    gear_ratio_tolerance: float = 0.10
    tolerance_mode: str = "absolute"
    ratio_measure: str = "motion_ratio"
    sweep_seconds: float = 2.0
    settle_seconds: float = 1.0
    sweep_margin_ratio: float = 0.10
    physics_fps: float = 240.0
    sample_every: int = 10
    unlimited_range_deg: tuple[float, float] = (-90.0, 90.0)
    unlimited_range_m: tuple[float, float] = (-0.05, 0.05)
    test_drive: TestDrive = field(default_factory=TestDrive)
    #: Samples whose reference displacement is below this fraction of the largest one are
    #: left out of the ratio fit (near the turning points the ratio is noise over noise).
    min_displacement_fraction: float = 0.05
    #: A rest offset that differs from the authored one by more than this is a warning.
    rest_offset_tolerance_rad: float = 0.01
    rest_offset_tolerance_m: float = 0.001
    #: A relation that asks a follower for more than this beyond its joint limits over the planned
    #: sweep fails the verdict; a follower or reference that goes this far outside them is a warning
    #: on the engine that let it.
    limit_tolerance_rad: float = 0.01
    limit_tolerance_m: float = 0.001
    #: The sweep is void (failed) when the reference moved less than this fraction of the plan.
    min_excursion_fraction: float = 0.25
    #: Weld floating articulation roots to the world where they stand (a gripper on a bench):
    #: the test is about joint coupling, and a free base would fall away under gravity.
    fix_base: bool = True
    #: The harness's explosion canary: a warning when the articulation's bounding box grows
    #: to more than this many times its volume at the start of the sweep.
    bbox_explode_ratio: float = 10.0
    #: The harness's legacy incremental-error tolerance (rad): accepted, unused (as by the harness).
    follow_tolerance: float = 0.05
    #: Read so that the harness's files load unchanged; no frames are captured here.
    capture_fps: int = 15

    # ---------------------------------------------------------------- derived
    @property
    def dt(self) -> float:
        return 1.0 / self.physics_fps

    @property
    def settle_steps(self) -> int:
        return int(round(self.settle_seconds * self.physics_fps))

    @property
    def sweep_steps(self) -> int:
        return int(round(self.sweep_seconds * self.physics_fps))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["unlimited_range_deg"] = list(self.unlimited_range_deg)
        d["unlimited_range_m"] = list(self.unlimited_range_m)
        return d

    def replace(self, **changes: Any) -> SweepConfig:
        """A copy with ``changes`` applied and checked (None values are ignored)."""
        return from_mapping({k: v for k, v in changes.items() if v is not None}, base=self, source="arguments")

    def check(self, source: str = "config") -> SweepConfig:
        """Raise ``MimicInputError`` naming the first value a sweep cannot run with."""

        def bad(name: str, why: str) -> MimicInputError:
            return MimicInputError(f"{source}: {name} = {getattr(self, name, '?')!r}: {why}")

        positive = ("gear_ratio_tolerance", "sweep_seconds", "physics_fps", "bbox_explode_ratio", "follow_tolerance")
        for name in positive:
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise bad(name, "must be a positive number")
        for name in (
            "settle_seconds",
            "min_displacement_fraction",
            "rest_offset_tolerance_rad",
            "rest_offset_tolerance_m",
            "limit_tolerance_rad",
            "limit_tolerance_m",
            "min_excursion_fraction",
        ):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise bad(name, "must be a number >= 0")
        if self.tolerance_mode not in TOLERANCE_MODES:
            raise bad("tolerance_mode", f"must be one of {', '.join(TOLERANCE_MODES)}")
        if self.ratio_measure not in RATIO_MEASURES:
            raise bad("ratio_measure", f"must be one of {', '.join(RATIO_MEASURES)}")
        if not (isinstance(self.capture_fps, int) and self.capture_fps >= 0):
            raise bad("capture_fps", "must be a whole number >= 0")
        steps = self.settle_seconds * self.physics_fps + self.sweep_seconds * self.physics_fps
        if not steps <= MAX_STEPS:
            raise MimicInputError(
                f"{source}: settle_seconds {self.settle_seconds:g} + sweep_seconds {self.sweep_seconds:g} at "
                f"physics_fps {self.physics_fps:g} is {steps:.4g} steps; at most {MAX_STEPS:,} are allowed "
                f"(lower physics_fps or the durations)"
            )
        if not (0 <= self.sweep_margin_ratio < 0.5):
            raise bad("sweep_margin_ratio", "must be in [0, 0.5): the margin is taken at both ends")
        if not (isinstance(self.sample_every, int) and self.sample_every >= 1):
            raise bad("sample_every", "must be a whole number >= 1")
        if self.sweep_steps < 2 * self.sample_every:
            raise bad("sweep_seconds", "gives fewer than 3 samples at this physics_fps and sample_every")
        for name in ("unlimited_range_deg", "unlimited_range_m"):
            lo, hi = getattr(self, name)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise bad(name, "must be [low, high] with low < high")
        for name, v in dataclasses.asdict(self.test_drive).items():
            if not (math.isfinite(v) and v >= 0):
                raise MimicInputError(f"{source}: test_drive.{name} = {v!r}: must be a number >= 0")
        if self.test_drive.angular_stiffness <= 0 or self.test_drive.linear_stiffness <= 0:
            raise MimicInputError(f"{source}: test_drive stiffness must be > 0 (it is a position drive)")
        return self


def _coerce(name: str, value: Any, default: Any, source: str) -> Any:
    """``value`` in the type of ``default``; a wrong type is the user's to fix."""
    try:
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            raise TypeError
        if isinstance(default, int):
            if isinstance(value, bool) or float(value) != int(value):
                raise TypeError
            return int(value)
        if isinstance(default, float):
            if isinstance(value, bool):
                raise TypeError
            return float(value)
        if isinstance(default, str):
            if not isinstance(value, str):
                raise TypeError
            return value
        if isinstance(default, tuple):
            if not isinstance(value, (list, tuple)) or len(value) != len(default):
                raise TypeError
            return tuple(float(v) for v in value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(.inf)
        pass
    else:
        return value
    raise MimicInputError(
        f"{source}: {name} = {value!r}: expected {type(default).__name__}"
        + (f" of {len(default)} numbers" if isinstance(default, tuple) else "")
    )


def from_mapping(data: Mapping[str, Any], base: SweepConfig | None = None, source: str = "config") -> SweepConfig:
    """``base`` (the defaults when None) with the keys of ``data`` over it; unknown keys are errors."""
    base = base or SweepConfig()
    if not isinstance(data, Mapping):
        raise MimicInputError(f"{source}: expected a mapping of FET022 settings, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(SweepConfig)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key not in fields:
            raise MimicInputError(f"{source}: unknown setting '{key}' (known: {', '.join(sorted(fields))})")
        current = getattr(base, key)
        if key == "test_drive":
            if isinstance(value, TestDrive):
                changes[key] = value
                continue
            if not isinstance(value, Mapping):
                raise MimicInputError(f"{source}: test_drive must be a mapping of gains")
            drive_fields = {f.name for f in dataclasses.fields(TestDrive)}
            unknown = set(value) - drive_fields
            if unknown:
                raise MimicInputError(f"{source}: unknown test_drive setting(s) {', '.join(sorted(unknown))}")
            changes[key] = dataclasses.replace(
                current, **{k: _coerce(f"test_drive.{k}", v, getattr(current, k), source) for k, v in value.items()}
            )
        else:
            changes[key] = _coerce(key, value, current, source)
    return dataclasses.replace(base, **changes).check(source)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The mapping in a YAML file; ``MimicInputError`` naming the file (and line) otherwise."""
    import yaml

    from ..input_files import read_input_text

    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise MimicInputError(f"{p}: no such config file")
    text = read_input_text(p, "config file")  # a regular file, capped, UTF-8: else one line
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise MimicInputError(f"{p}:{where} is not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise MimicInputError(f"{p}: expected a mapping of FET022 settings at the top level")
    return data


def config_files(path: str | Path | None = None) -> list[str]:
    """The config files a run reads: the one ``MIMIC_EXT_FET022_CONFIG`` names, then ``path``
    (inputs that no output may replace)."""
    env_path = os.environ.get(CONFIG_ENV, "").strip()
    return [str(p) for p in (env_path, path) if p]


def load_config(path: str | Path | None = None, **overrides: Any) -> SweepConfig:
    """Defaults, then the file ``MIMIC_EXT_FET022_CONFIG`` names (when set), then ``path``, then overrides."""
    cfg = SweepConfig()
    env_path = os.environ.get(CONFIG_ENV, "").strip()
    if env_path:
        cfg = from_mapping(read_yaml(env_path), cfg, source=f"{env_path} (from {CONFIG_ENV})")
    if path is not None:
        cfg = from_mapping(read_yaml(path), cfg, source=str(path))
    if overrides:
        cfg = cfg.replace(**overrides)
    return cfg


def as_config(config: SweepConfig | Mapping[str, Any] | str | Path | None) -> SweepConfig:
    """Whatever ``run`` was given as ``config``: None (defaults), a mapping, a YAML path or a SweepConfig."""
    if config is None:
        return load_config()
    if isinstance(config, SweepConfig):
        return config.check()
    if isinstance(config, (str, Path)):
        return load_config(config)
    return from_mapping(config, load_config(), source="config")
