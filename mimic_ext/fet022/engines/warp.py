"""The sweep on mimic_ext's own Warp articulation solver.

All swept joints of a stage run in one batched model (one environment each). The
temporary test drive goes through ``model.set_drive``, so the stage is only read.
Per step the cost is the solver step plus one small copy of the targets (uploaded a block
of steps at a time); positions are copied into a history buffer on the device and read
back once at the end; body positions for the bounding-box check come from the solver's
own forward kinematics (``solver.inspect.body_poses``) at the samples.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Sequence

import numpy as np

from ...errors import MimicInputError
from ...schema import joints
from ...schema.relation import MimicRelation
from .base import ReadRelation, Trace
from ..plan import SweepPlan


class WarpEngine:
    name = "warp"
    supported_kinds = (joints.REVOLUTE, joints.PRISMATIC)

    def __init__(self, device: str = "cpu"):
        self.device = device

    def versions(self) -> dict[str, str]:
        import warp as wp

        return {"warp": wp.config.version, "device": self.device}

    def simulate(self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation],
                 fix_base: bool = True) -> Trace:
        from ...warp_runtime import announce_cold_compile, init_warp

        wp = init_warp()                # quiet, without the CUDA-driver warning
        try:
            from ...solver import Solver, build_model
        except ImportError as exc:   # the solver part is not installed in this checkout
            raise MimicInputError(f"the warp sweep engine needs mimic_ext.solver ({exc})") from None
        announce_cold_compile(self.device)

        trace = Trace()
        t0 = time.perf_counter()
        with warnings.catch_warnings():   # the model's notes are reported with the result instead
            warnings.simplefilter("ignore")
            model = build_model(stage, num_envs=plan.num_envs, device=self.device, fix_base=fix_base,
                                relations=list(relations))
        trace.notes.extend(getattr(model, "warnings", []))
        trace.relations = [ReadRelation(r["follower"], r["leader"], r["multiplier"], r["offset"],
                                        hard=r["status"] != "compliant", note="" if r["status"] == "active" else r["status"])
                           for r in model.relations()]
        for pj in plan.joints:
            if pj.drive.source == "test":
                model.set_drive(pj.path, pj.drive.stiffness, pj.drive.damping, pj.drive.max_force)
        dof: dict[str, int] = {}
        for path in dict.fromkeys([pj.path for pj in plan.joints] + list(watch)):
            try:
                dof[path] = int(model.dof_index(path))
            except MimicInputError as exc:   # the solver's MimicParticipantError
                trace.missing[path] = f"not simulated by the warp solver ({exc})"
        swept_missing = [pj.path for pj in plan.joints if pj.path in trace.missing]
        if swept_missing:
            raise MimicInputError(f"swept joint(s) {', '.join(swept_missing)} are not degrees of freedom of the "
                                  f"warp model (only revolute and prismatic joints of an articulation are)")

        state_a, state_b = model.state(), model.state()
        control = model.control()
        trace.timings["build_s"] = time.perf_counter() - t0

        t1 = time.perf_counter()
        q = _step_through(wp, Solver(model), model, state_a, state_b, control, plan,
                          [dof[pj.path] for pj in plan.joints])
        trace.timings["simulate_s"] = time.perf_counter() - t1
        trace.timings["steps"] = float(plan.total_steps)
        for path, i in dof.items():
            trace.positions[path] = np.ascontiguousarray(q[:, :, i].T, dtype=float)
        trace.body_samples = body_sample_indices(q.shape[0])
        trace.body_positions = _LazyBodyPositions(model, q, trace.body_samples)
        return trace


#: Steps whose targets are on the device at once: long runs stream in blocks of this many.
BLOCK_STEPS = 1024


def _step_through(wp, solver, model, state_a, state_b, control, plan: SweepPlan, columns: list[int]) -> np.ndarray:
    """Run the whole plan (every step of every environment) and return the recorded
    ``joint_q`` at the plan's samples, (samples, num_envs, coordinates).

    The only place the warp engine steps: targets go to the device one block of steps at a
    time (``plan.target_block``) and each sample's positions are copied into a history
    buffer on the device, read back once at the end.
    """
    n_env, n_dof = control.joint_target_pos.shape
    dtype = control.joint_target_pos.dtype
    base = control.joint_target_pos.numpy()            # (env, dof): the stage's own targets
    per_step = n_env * n_dof
    # joint_q has a column per coordinate (a floating base has 7 for 6 DOFs); dof_index
    # is valid for both, as the 1-DOF joints come first
    n_q = state_a.joint_q.shape[1]
    per_sample = n_env * n_q
    sample_after = set(int(s) for s in plan.sample_steps)
    history = wp.zeros((len(sample_after), n_env, n_q), dtype=state_a.joint_q.dtype, device=model.device)
    dt = plan.dt
    k = 0
    if 0 in sample_after:
        wp.copy(history, state_a.joint_q, 0, 0, per_sample)
        k = 1
    for start in range(0, plan.total_steps, BLOCK_STEPS):
        stop = min(start + BLOCK_STEPS, plan.total_steps)
        table = np.repeat(base[None], stop - start, axis=0)
        table[:, :, columns] = plan.target_block(start, stop)
        block = wp.array(table, dtype=dtype, device=model.device)
        for i, step in enumerate(range(start, stop)):
            wp.copy(control.joint_target_pos, block, 0, i * per_step, per_step)
            solver.step(state_a, state_b, control, dt)
            state_a, state_b = state_b, state_a
            if step + 1 in sample_after:
                wp.copy(history, state_a.joint_q, k * per_sample, 0, per_sample)
                k += 1
    q = history.numpy()                                  # synchronises
    bad = solver.nonfinite_envs()                        # NaN or inf in a state: an error, never a pass
    if bad:
        raise MimicInputError(f"the warp solver's state became NaN or infinite while sweeping "
                              f"{', '.join(plan.joints[i].path for i in bad)}")
    return q


#: Body positions are computed at about this many samples per environment (the harness
#: checks its bounding box every 20 steps: every second sample of the default sweep).
BODY_CHECKS = 25


def body_sample_indices(n_samples: int) -> list[int]:
    """Every second sample (the harness's cadence), thinned to about ``BODY_CHECKS`` on long runs,
    always with the first (the baseline) and the last."""
    stride = max(2, -(-n_samples // BODY_CHECKS))
    idx = list(range(0, n_samples, stride))
    if n_samples and idx[-1] != n_samples - 1:
        idx.append(n_samples - 1)
    return idx


class _LazyBodyPositions(Mapping):
    """Body path -> world origins (m), (num_envs, len(samples), 3), computed on first use: the
    paths are known at once, the forward kinematics (``solver.inspect.body_poses``, about as
    costly as the sweep itself) runs only when a check reads a position."""

    def __init__(self, model, q: np.ndarray, samples: list[int]):
        self._model, self._q, self._samples = model, q, samples
        self._paths = [path for lk in model.links for path, _ in lk.bodies]
        self._values: dict[str, np.ndarray] | None = None

    def _compute(self) -> dict[str, np.ndarray]:
        if self._values is None:
            from ...solver.inspect import body_poses

            n_env = self._q.shape[1]
            out = {p: np.empty((n_env, len(self._samples), 3)) for p in self._paths}
            for e in range(n_env):
                for k, s in enumerate(self._samples):
                    for path, pose in body_poses(self._model, self._q[s, e]).items():
                        if path in out:              # (body_poses also lists bodies welded to the world)
                            out[path][e, k] = pose[:3, 3]
            self._values = out
        return self._values

    def __getitem__(self, path: str) -> np.ndarray:
        return self._compute()[path]

    def __iter__(self):
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)
