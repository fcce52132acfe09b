"""Mechanisms and per-environment target schedules shared by the threads and step_many tests.

Two stages that exercise every part of the step: ``data/robotiq_style_linkage.usda`` (five
hard relations, all six joints limited, one driven leader pushed past its limits) and the
shared Isaac Robotiq "compliant" configuration (two loop closures, a compliant relation,
limits, seven drives). The schedule drives every driven joint along a sinusoid with a
per-environment phase and an amplitude past the joints' limits, so limits engage in some
environments and not in others.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT.parent / "shared" / "assets"
LINKAGE = ROOT / "data" / "robotiq_style_linkage.usda"
COMPLIANT = ASSETS / "robotiq_isaacsim_usd_2f85/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_compliant.usda"
DT = 1.0 / 240.0


def model_of(path: Path, num_envs: int):
    from mimic_ext.schema.stage_io import open_stage
    from mimic_ext.solver import build_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_model(open_stage(path).stage, num_envs=num_envs, fix_base=True)


def schedule(model, steps: int) -> np.ndarray:
    """Position targets (steps, num_envs, dof_count): the stage's own, driven joints swept."""
    base = model.control().joint_target_q.numpy()
    out = np.repeat(base[None], steps, axis=0)
    n = model.num_envs
    for j in np.flatnonzero(model.has_drive):
        lo, hi = model.lower[j], model.upper[j]
        bounded = bool(np.isfinite(lo) and np.isfinite(hi))
        mid = 0.5 * (lo + hi) if bounded else 0.0
        amp = 0.7 * (hi - lo) if bounded else 0.5
        phase = np.arange(n) * 2.0 * np.pi / n
        t = np.arange(steps)[:, None] * DT
        out[:, :, j] = mid + amp * np.sin(2.0 * np.pi * 2.0 * t + phase[None, :])
    return out.astype(np.float32)


def step_through(solver, model, targets: np.ndarray, sample_every: int):
    """Step one step at a time with ``targets``; (final state, positions after every
    ``sample_every``-th step as copies, impulses of the last step)."""
    a, b, c = model.state(), model.state(), model.control()
    samples = []
    for k in range(targets.shape[0]):
        c.joint_target_q.assign(targets[k])
        solver.step(a, b, c, DT)
        a, b = b, a
        if (k + 1) % sample_every == 0:
            samples.append(a.joint_q.numpy().copy())
    return a, np.array(samples), [r.impulse for r in solver.mimic_rows()]
