"""The sweep as numbers: ranges, drive gains and the target of every swept joint at every step.

Environment ``i`` sweeps ``joints[i]`` and holds every other swept joint at the start of
its own range, so that one batched run covers all reference joints of a stage. The plan
is pure numpy: an engine only has to apply ``targets`` step by step and record
positions at ``sample_steps``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..schema import joints
from .config import SweepConfig
from .discovery import Drive, SweptJoint


@dataclass(frozen=True)
class PlannedJoint:
    """A swept joint with its range (SI) and the drive that moves it."""

    joint: SweptJoint
    lo: float
    hi: float
    drive: Drive
    range_source: str  # "limits" | "default range (unlimited joint)"

    @property
    def path(self) -> str:
        return self.joint.path

    @property
    def excursion(self) -> float:
        return self.hi - self.lo


def smoothstep(x: np.ndarray) -> np.ndarray:
    """3x^2 - 2x^3 on [0, 1]: zero velocity at both ends, so the drive is not kicked."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def sweep_profile(t: np.ndarray, duration: float) -> np.ndarray:
    """0 -> 1 -> 0 over ``duration``: a smoothstep up in the first half, back down in the second."""
    u = np.clip(np.asarray(t, dtype=float) / duration, 0.0, 1.0)
    phase = np.where(u <= 0.5, 2.0 * u, 2.0 * (1.0 - u))
    return smoothstep(phase)


def sweep_range(joint: SweptJoint, config: SweepConfig) -> tuple[float, float, str]:
    """(lo, hi, source) in SI: the limits shrunk by the margin at each end, or the default range."""
    if joint.limits is not None:
        lo, hi = joint.limits
        source = "limits"
    else:
        if joint.kind == joints.PRISMATIC:
            lo, hi = config.unlimited_range_m
        else:
            lo, hi = (math.radians(v) for v in config.unlimited_range_deg)
        source = "default range (unlimited joint)"
    margin = config.sweep_margin_ratio * (hi - lo)
    return lo + margin, hi - margin, source


def test_drive(joint: SweptJoint, config: SweepConfig) -> Drive:
    d = config.test_drive
    if joint.kind == joints.PRISMATIC:
        return Drive(d.linear_stiffness, d.linear_damping, math.inf, source="test")
    return Drive(d.angular_stiffness, d.angular_damping, math.inf, source="test")


@dataclass(frozen=True)
class SweepPlan:
    joints: tuple[PlannedJoint, ...]
    dt: float
    settle_steps: int
    sweep_steps: int
    sample_every: int

    @property
    def num_envs(self) -> int:
        return len(self.joints)

    @property
    def total_steps(self) -> int:
        return self.settle_steps + self.sweep_steps

    @property
    def sample_steps(self) -> np.ndarray:
        """Step counts (from the start of the run) after which positions are recorded.

        The first sample is the state at the end of the settle phase, i.e. the start of
        the sweep, from which displacements are measured.
        """
        return self.settle_steps + np.arange(0, self.sweep_steps + 1, self.sample_every)

    @property
    def sample_times(self) -> np.ndarray:
        """Seconds since the start of the sweep, one per sample."""
        return (self.sample_steps - self.settle_steps) * self.dt

    def target_block(self, start: int, stop: int, envs=None, joints=None) -> np.ndarray:
        """Position targets (SI) of steps ``start .. stop-1``, shape (stop-start, num_envs, num_joints).

        Row k is the target applied during step ``start + k``, taken at the step's end time
        (an implicit drive pulls toward where the target is at the end of the step). Engines
        ask for blocks so that a long run never holds every step's targets at once.
        ``envs`` / ``joints`` (index sequences) take only those environments and joints' columns
        (an environment index -1: every joint held at ``lo``, as in any environment that sweeps
        another joint), so an engine that simulates part of the stage per environment never
        forms the whole (steps, joints, joints) table. ``envs`` may also be a table (environments,
        joints): the plan environment each environment stands for in each joint's column (a model
        of several independent parts sweeps one joint of each in one environment).
        """
        envs = np.arange(self.num_envs) if envs is None else np.asarray(envs, dtype=int)
        joints = np.arange(self.num_envs) if joints is None else np.asarray(joints, dtype=int)
        lo = np.array([self.joints[j].lo for j in joints])
        span = np.array([self.joints[j].excursion for j in joints])
        t_end = (np.arange(start, stop) + 1 - self.settle_steps) * self.dt
        s = sweep_profile(np.maximum(t_end, 0.0), self.sweep_steps * self.dt)  # (steps,)
        out = np.broadcast_to(lo, (len(t_end), len(envs), len(joints))).copy()
        own = (envs[:, None] if envs.ndim == 1 else envs) == joints[None, :]
        row, col = np.nonzero(own)  # the environment's own swept joint
        out[:, row, col] = lo[None, col] + s[:, None] * span[None, col]
        return out

    def targets(self) -> np.ndarray:
        """Every step's targets at once, (total_steps, num_envs, num_joints): ``target_block`` of
        the whole run (fine for the default 720 steps; long runs should take blocks)."""
        return self.target_block(0, self.total_steps)


def make_plan(swept: list[SweptJoint], config: SweepConfig) -> SweepPlan:
    planned = []
    for joint in swept:
        lo, hi, source = sweep_range(joint, config)
        planned.append(
            PlannedJoint(joint=joint, lo=lo, hi=hi, drive=joint.drive or test_drive(joint, config), range_source=source)
        )
    return SweepPlan(
        joints=tuple(planned),
        dt=config.dt,
        settle_steps=config.settle_steps,
        sweep_steps=config.sweep_steps,
        sample_every=config.sample_every,
    )
