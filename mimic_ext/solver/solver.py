"""Solver: steps a Model's environments with every mimic relation and loop closure held exactly.

One recorded Warp launch per step (launch overhead dominates small systems), cached per
combination of state/control arrays and time step. Relations added at runtime rebuild
the model's projection between steps; doing it inside a step (from a step callback) is
refused, as the step was set up for the old relations. A time step that is not a finite
positive number is refused; an environment whose state became NaN or infinite is flagged
by the kernel (``nonfinite_envs()``) and, with ``raise_on_nonfinite``, raises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import warp as wp

from .errors import NonFiniteStateError, StepInProgressError, StepInputError
from .model import Control, Model, State, _scratch
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
    """Reduced-coordinate articulation solver with exact mimic relations (see docs/solver.md).

    ``raise_on_nonfinite``: after each step, read the kernel's per-environment flags and raise
    ``NonFiniteStateError`` naming the environments whose state is no longer finite (costs a
    device-to-host copy per step; ``nonfinite_envs()`` reads the same flags on demand).
    """

    def __init__(self, model: Model, erp: float = 0.3, iterations: int = 8, raise_on_nonfinite: bool = False):
        self.model = model
        model.erp = float(erp)
        model.iterations = int(iterations)
        model.sync()
        self.raise_on_nonfinite = bool(raise_on_nonfinite)
        self.callbacks: list[Callable[["Solver"], None]] = []
        self._in_step = False
        self._launches: dict = {}
        self._alloc()

    # ---- allocation -----------------------------------------------------------------------
    def _alloc(self) -> None:
        m = self.model
        self._scratch = _scratch(m.kernels, m, m.num_envs, m.work_size, len(m.projection.rows))
        self._launches.clear()
        self._version = m.version

    # ---- stepping -------------------------------------------------------------------------
    def _turns(self, state: State) -> wp.array:
        if state.joint_turns is None:
            state.joint_turns = wp.zeros((self.model.num_envs, max(len(self.model.joints), 1)), dtype=wp.int32,
                                         device=self.model.device)
        return state.joint_turns

    def _launch(self, state_in: State, state_out: State, control: Control, dt: float):
        if self._version != self.model.version:
            self._alloc()
        arrays = (state_in.joint_q, state_in.joint_qd, self._turns(state_in), control.joint_target_pos,
                  control.joint_target_vel, control.joint_effort, state_out.joint_q, state_out.joint_qd,
                  self._turns(state_out))
        key = tuple(id(a) for a in arrays) + (float(dt),)
        hit = self._launches.get(key)
        if hit is not None:
            return hit[0]
        cmd = wp.launch(self.model.kernels.step_kernel, dim=self.model.num_envs,
                        inputs=[self.model.data, self._scratch, 0, *arrays[:6], float(dt), *arrays[6:]],
                        device=self.model.device, record_cmd=True)
        if len(self._launches) >= _CACHE_SIZE:
            self._launches.pop(next(iter(self._launches)))
        self._launches[key] = (cmd, arrays)      # keep the arrays alive so their ids stay unique
        return cmd

    def step(self, state_in: State, state_out: State, control: Control, dt: float) -> None:
        """Advance every environment by ``dt`` (s, finite and > 0); ``state_out`` may be ``state_in``."""
        if self._in_step:
            raise StepInProgressError("Solver.step called from inside a step")
        try:
            dt_ok = math.isfinite(dt) and dt > 0
        except TypeError:
            dt_ok = False
        if not dt_ok:
            raise StepInputError(f"Solver.step: time step dt = {dt!r} s; it must be a finite number > 0")
        self._in_step = True
        try:
            self._launch(state_in, state_out, control, dt).launch()
            for cb in self.callbacks:
                cb(self)
        finally:
            self._in_step = False
        self.last_dt = float(dt)
        if self.raise_on_nonfinite:
            bad = self.nonfinite_envs()
            if bad:
                shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
                raise NonFiniteStateError(f"the state of {len(bad)} environment(s) is no longer finite after "
                                          f"this step: {shown} (NaN or inf in their state or control?)", bad)

    def nonfinite_envs(self) -> list[int]:
        """Environments whose state after the last step holds NaN or inf (the kernel's flags)."""
        return [int(i) for i in np.flatnonzero(self._scratch.nonfinite.numpy())]

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
        imp = self._scratch.rel_imp.numpy()
        err = self._scratch.rel_err.numpy()
        return [MimicRow(r.follower, r.leader, r.multiplier, r.offset, STATUS[k], imp[:, g].copy(), err[:, g].copy())
                for g, (r, k) in enumerate(zip(rows, self.model.projection.kinds))]

    # ---- contacts (a contact model: ``build_model`` found colliders) ------------------------
    def contacts(self):
        """The last step's contacts (``collision.Contacts``: per environment and shape pair,
        points, normals from shape b to shape a, separations, and ``impulse``: the world
        impulse on shape a in N s, divide by dt for the force), or None without contacts."""
        cm = self.model.collision
        if cm is None:
            return None
        c = cm.contacts()
        c.impulse = self._scratch.cx.imp.numpy() if self._version == self.model.version else None
        return c
