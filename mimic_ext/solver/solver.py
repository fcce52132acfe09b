"""Solver: steps a Model's environments with every mimic relation held exactly.

One recorded Warp launch per step (launch overhead dominates small systems), cached per
combination of state/control arrays and time step. Relations added at runtime rebuild
the model's projection between steps; doing it inside a step (from a step callback) is
refused, as the step was set up for the old relations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import warp as wp

from . import kernels as K
from .errors import StepInProgressError
from .model import Control, Model, State
from .projection import STATUS

_CACHE_SIZE = 8


@dataclass
class MimicRow:
    """One relation after the last step: impulse on the follower (the leader got -multiplier
    times it; divide by dt for the torque or force) and the position error
    ``q_f - m q_l - c`` at the start of that step, per environment."""

    follower: str
    leader: str
    multiplier: float
    offset: float
    status: str
    impulse: np.ndarray
    position_error: np.ndarray


class Solver:
    """Reduced-coordinate articulation solver with exact mimic relations (see docs/solver.md)."""

    def __init__(self, model: Model, erp: float = 0.3, iterations: int = 8):
        self.model = model
        model.erp = float(erp)
        model.iterations = int(iterations)
        model.sync()
        self.callbacks: list[Callable[["Solver"], None]] = []
        self._in_step = False
        self._launches: dict = {}
        self._alloc()

    # ---- allocation -----------------------------------------------------------------------
    def _alloc(self) -> None:
        m, N, d = self.model, self.model.num_envs, self.model.device
        n, L = m.dof_count, max(len(m.links), 1)
        R = max(len(m.projection.rows), 1)
        z = lambda cols, t=float: wp.zeros((N, max(cols, 1)), dtype=t, device=d)  # noqa: E731
        sc = K.Scratch()
        sc.R, sc.pos = z(L, wp.mat33), z(L, wp.vec3)
        sc.V, sc.Acc, sc.G = (z(L, wp.spatial_vector) for _ in range(3))
        sc.Ic_m, sc.Ic_h, sc.Ic_I = z(L), z(L, wp.vec3), z(L, wp.mat33)
        sc.S = z(n, wp.spatial_vector)
        sc.ws = z(m.work_size)
        Lf = L if m.base_bodies else 1          # float64 momentum bookkeeping of floating bases
        sc.Rd, sc.pd = z(Lf, wp.mat33d), z(Lf, wp.vec3d)
        sc.Vd, sc.Pd, sc.Td = (z(Lf, wp.spatial_vectord) for _ in range(3))
        sc.Imd, sc.Ihd, sc.IId = z(Lf, wp.float64), z(Lf, wp.vec3d), z(Lf, wp.mat33d)
        self._scratch = sc
        self._rel_imp = z(R)
        self._rel_err = z(R)
        self._launches.clear()
        self._version = m.version

    # ---- stepping -------------------------------------------------------------------------
    def _launch(self, state_in: State, state_out: State, control: Control, dt: float):
        if self._version != self.model.version:
            self._alloc()
        arrays = (state_in.joint_q, state_in.joint_qd, control.joint_target_pos, control.joint_target_vel,
                  control.joint_effort, state_out.joint_q, state_out.joint_qd)
        key = tuple(id(a) for a in arrays) + (float(dt),)
        hit = self._launches.get(key)
        if hit is not None:
            return hit[0]
        cmd = wp.launch(K.step_kernel, dim=self.model.num_envs,
                        inputs=[self.model.data, self._scratch, *arrays[:5], float(dt), *arrays[5:],
                                self._rel_imp, self._rel_err],
                        device=self.model.device, record_cmd=True)
        if len(self._launches) >= _CACHE_SIZE:
            self._launches.pop(next(iter(self._launches)))
        self._launches[key] = (cmd, arrays)      # keep the arrays alive so their ids stay unique
        return cmd

    def step(self, state_in: State, state_out: State, control: Control, dt: float) -> None:
        """Advance every environment by ``dt``; ``state_out`` may be ``state_in``."""
        if self._in_step:
            raise StepInProgressError("Solver.step called from inside a step")
        self._in_step = True
        try:
            self._launch(state_in, state_out, control, dt).launch()
            for cb in self.callbacks:
                cb(self)
        finally:
            self._in_step = False
        self.last_dt = float(dt)

    # ---- relations ------------------------------------------------------------------------
    def add_mimic(self, follower_path: str, leader_path: str, multiplier: float, offset: float = 0.0,
                  natural_frequency: float = 0.0, damping_ratio: float = 0.0) -> str:
        """Add ``q_f = multiplier q_l + offset`` (SI) between steps; returns its status.

        A position or velocity that violates it is corrected from the next step on (this
        wakes a resting system). Raises ``StepInProgressError`` inside a step and
        ``MimicInputError`` subclasses for relations that cannot hold.
        """
        if self._in_step:
            raise StepInProgressError(
                f"add_mimic({follower_path}, {leader_path}) called while a step is in progress: "
                f"the step was set up for the old relations; add it between steps")
        row = self.model.make_row(follower_path, leader_path, multiplier, offset, natural_frequency, damping_ratio)
        return self.model.add_relation(row)

    def mimic_rows(self) -> list[MimicRow]:
        """Per relation (stage order, then runtime order): impulse and start-of-step error."""
        rows = self.model.projection.rows
        if not rows:
            return []
        if self._version != self.model.version:      # relations changed since the last step
            zero = np.zeros(self.model.num_envs)
            return [MimicRow(r.follower, r.leader, r.multiplier, r.offset, STATUS[k], zero.copy(), zero.copy())
                    for r, k in zip(rows, self.model.projection.kinds)]
        imp = self._rel_imp.numpy()
        err = self._rel_err.numpy()
        return [MimicRow(r.follower, r.leader, r.multiplier, r.offset, STATUS[k], imp[:, g].copy(), err[:, g].copy())
                for g, (r, k) in enumerate(zip(rows, self.model.projection.kinds))]
