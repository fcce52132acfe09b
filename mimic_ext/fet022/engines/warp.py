"""The sweep on mimic_ext's own Warp articulation solver.

All swept joints of a stage run in one batched model (one environment each). The
temporary test drive goes through ``model.set_drive``, so the stage is only read.
Per step the cost is the solver step plus one small copy of the targets; positions are
copied into a history buffer on the device and read back once at the end.
"""

from __future__ import annotations

import time
import warnings
from typing import Sequence

import numpy as np

from ...errors import MimicInputError
from ...schema import joints
from ...schema.relation import MimicRelation
from .base import ReadRelation, Trace
from ..plan import SweepPlan


def quiet_warp(wp) -> None:
    """Keep Warp's start-up banner off stdout (the console report lives there); errors still show."""
    if hasattr(wp.config, "log_level") and hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = max(wp.config.log_level, wp.LOG_WARNING)
    else:   # older Warp
        wp.config.quiet = True


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
        import warp as wp

        quiet_warp(wp)
        try:
            from ...solver import Solver, build_model
        except ImportError as exc:   # the solver part is not installed in this checkout
            raise MimicInputError(f"the warp sweep engine needs mimic_ext.solver ({exc})") from None

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
        n_env, n_dof = control.joint_target_pos.shape
        dtype = control.joint_target_pos.dtype
        table = np.repeat(control.joint_target_pos.numpy()[None], plan.total_steps, axis=0)
        wanted = plan.targets()                     # (steps, env, swept joint)
        for j, pj in enumerate(plan.joints):
            table[:, :, dof[pj.path]] = wanted[:, :, j]
        targets = wp.array(table, dtype=dtype, device=self.device)
        per_step = n_env * n_dof
        # joint_q has a column per coordinate (a floating base has 7 for 6 DOFs); dof_index
        # is valid for both, as the 1-DOF joints come first
        n_q = state_a.joint_q.shape[1]
        per_sample = n_env * n_q
        sample_after = set(int(s) for s in plan.sample_steps)
        history = wp.zeros((len(sample_after), n_env, n_q), dtype=state_a.joint_q.dtype, device=self.device)
        solver = Solver(model)
        dt = plan.dt
        k = 0
        if 0 in sample_after:
            wp.copy(history, state_a.joint_q, 0, 0, per_sample)
            k = 1
        for step in range(plan.total_steps):
            wp.copy(control.joint_target_pos, targets, 0, step * per_step, per_step)
            solver.step(state_a, state_b, control, dt)
            state_a, state_b = state_b, state_a
            if step + 1 in sample_after:
                wp.copy(history, state_a.joint_q, k * per_sample, 0, per_sample)
                k += 1
        q = history.numpy()                          # (samples, env, coordinate); synchronises
        bad = solver.nonfinite_envs()                # NaN or inf in a state: an error, never a pass
        if bad:
            raise MimicInputError(f"the warp solver's state became NaN or infinite while sweeping "
                                  f"{', '.join(plan.joints[i].path for i in bad)}")
        trace.timings["simulate_s"] = time.perf_counter() - t1
        trace.timings["steps"] = float(plan.total_steps)
        for path, i in dof.items():
            trace.positions[path] = np.ascontiguousarray(q[:, :, i].T, dtype=float)
        return trace
