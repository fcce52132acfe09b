"""Solver: steps a Model's environments with every mimic relation and loop closure held exactly.

One recorded Warp launch per step and slice of environments (launch overhead dominates
small systems), cached per combination of state/control arrays and time step. On the CPU
the environments are split into contiguous slices, one launch each, run at once on a
thread pool (a Warp CPU launch is a serial loop that releases the GIL); each environment's
arithmetic is the same whichever slice runs it, so results do not depend on ``threads``
(the slicing and the pool: ``cpu_pool.py``). ``step_many`` takes many steps in one launch per
slice, their targets from a schedule (kept between calls: ``step_many.py``). Relations added
at runtime rebuild the model's projection between steps; doing it inside a step (from a step
callback) is refused, as the step was set up for the old relations. A time step that is not a
finite positive number is refused; an environment whose state became NaN or infinite is
flagged by the kernel (``nonfinite_envs()``) and, with ``raise_on_nonfinite``, raises.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import warp as wp

from . import cpu_pool
from .cpu_pool import (  # the slicing's rules, also named here where they were first documented
    CALL_OVERHEAD_S,
    CHUNK_ENV_STEPS,
    CHUNKS_PER_THREAD,
    MIN_SLICE_ENV_STEPS,
    MIN_SLICE_S,
    SWITCH_INTERVAL_S,
    TIMED_CALL_S,
    available_cores,
    slices,
)
from .errors import NonFiniteStateError, StepInProgressError, StepInputError, WorkSpaceOverrunError
from .model import SOLVER_OPTIONS as OPTIONS
from .model import Control, Model, State, _scratch
from .projection import STATUS
from .step_many import StepManyBuffers, sample_steps
from .workspace import SENTINEL, overrun

_CACHE_SIZE = 8


def min_time_step(precision: str) -> float:
    """The least time step a model of ``precision`` takes (s): the square root of its smallest
    normal number, so that the step's dt^2 terms (implicit drives, compliant rows) neither
    underflow nor, through erp / dt, overflow (float32 1.08e-19 s, float64 1.49e-154 s)."""
    return float(np.sqrt(np.finfo(np.float32 if precision == "float32" else np.float64).tiny))


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


#: ``drive_discretisation``'s values.
DRIVE_DISCRETISATIONS = ("implicit", "exact")
#: ``Solver(max_speed=...)``'s default (rad/s or m/s, any DOF): 100 times PhysX's default
#: ``physxRigidBody:maxAngularVelocity`` (100 rad/s), about 95,000 rpm, and 10 km/s; no mechanism
#: this solver models moves so fast, and a step that does has run away (an unstable step grows by
#: orders of magnitude per step: it is flagged within a few steps, where the overflow that
#: ``nonfinite_envs`` sees came at up to 1e65 rad/s).
RUNAWAY_SPEED = 1.0e4


class Solver:
    """Reduced-coordinate articulation solver with exact mimic relations (see docs/solver.md).

    ``raise_on_nonfinite``: after each step, read the kernel's per-environment flags and raise
    ``NonFiniteStateError`` naming the environments whose state is no longer finite (costs a
    device-to-host copy per step; ``nonfinite_envs()`` reads the same flags on demand), or an
    environment that ran away (``runaway_envs()``: a speed past ``max_speed``, rad/s or m/s of
    any DOF; default ``RUNAWAY_SPEED``, 1e4, with its reason there).
    ``threads``: CPU threads a step may use (default: every core this process may run on;
    1: one launch on the calling thread). Ignored on a GPU (one launch covers every environment).

    The options are this solver's own (keyword-only, as Newton's solvers take theirs): a Model
    holds none, so solvers with different options share one Model and each steps as it would
    alone. ``erp``: the fraction of a relation's or loop's position error removed per step.
    ``iterations``: block Gauss-Seidel sweeps over the joints' rows (limits, velocity caps,
    friction, drive bounds). ``contact_iterations``: the most passes over the joint and contact
    rows together (contact models). ``coupling_every_step``: compute the relations' coupling
    impulses in every step; False: only where the step itself overwrites what they are computed
    from (loop closures, floating bases, contacts), elsewhere ``mimic_rows()`` computes them on
    demand from the last step, bitwise the same. ``drive_discretisation``: "implicit" (backward
    Euler, ``dt (kd + dt kp)`` on the diagonal: over-damps by about ``kp dt``, settles as PhysX's
    drives do) or "exact" (each drive's one-step map matched to the continuous PD response for the
    effective inertia of its column: docs/solver.md). ``set_options`` changes them between steps.
    """

    def __init__(
        self,
        model: Model,
        *,
        erp: float = 0.3,
        iterations: int = 8,
        contact_iterations: int = 16,
        coupling_every_step: bool = False,
        drive_discretisation: str = "implicit",
        raise_on_nonfinite: bool = False,
        threads: int | None = None,
        max_speed: float = RUNAWAY_SPEED,
    ):
        if threads is None:
            threads = available_cores()
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise StepInputError(f"Solver: threads = {threads!r}; give a whole number >= 1, or None for every core")
        self.threads = int(threads) if model.device.is_cpu else 1
        self.model = model
        self._options: dict = {}
        self._options = self._checked_options(
            erp=erp,
            iterations=iterations,
            contact_iterations=contact_iterations,
            coupling_every_step=coupling_every_step,
            drive_discretisation=drive_discretisation,
            max_speed=max_speed,
        )
        self._keep_mass_factor()
        model.sync()  # the model's arrays as edited so far (a no-op when nothing changed)
        self.raise_on_nonfinite = bool(raise_on_nonfinite)
        self.callbacks: list[Callable[[Solver], None]] = []
        self._in_step = False
        self._launches: dict = {}
        self._many: dict = {}  # step_many's recorded launches per slice layout
        self._env_step_s: float | None = None  # measured seconds of one environment-step on one core (the slicing's)
        self._cost_samples: list[float] = []
        self._alloc()

    # ---- options (read-only here; ``set_options`` changes them) -----------------------------
    erp = property(lambda self: self._options["erp"])
    iterations = property(lambda self: self._options["iterations"])
    contact_iterations = property(lambda self: self._options["contact_iterations"])
    coupling_every_step = property(lambda self: self._options["coupling_every_step"])
    drive_discretisation = property(lambda self: self._options["drive_discretisation"])
    max_speed = property(lambda self: self._options["max_speed"])

    def set_options(self, **options) -> None:
        """Change some of this solver's options (the constructor's names) for the steps to come."""
        if self._in_step:
            raise StepInProgressError("Solver.set_options called from inside a step")
        self._options = self._checked_options(**{**self._options, **options})
        self._keep_mass_factor()
        self._alloc()

    def _keep_mass_factor(self) -> None:
        """Exact drives factor the mass-only matrix HM: the model's work space keeps it from the
        first solver that asks (a model whose solvers all use the implicit drive does not)."""
        m = self.model
        if self._options["drive_discretisation"] == "exact" and not m.mass_factor_kept:
            m.mass_factor_kept = True
            m.sync()

    def _checked_options(self, **o) -> dict:
        unknown = set(o) - set(OPTIONS)
        if unknown:
            raise StepInputError(
                f"Solver: unknown option(s) {', '.join(sorted(unknown))} (options: {', '.join(OPTIONS)})"
            )

        def whole(name: str, low: int) -> int:
            v = o[name]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise StepInputError(f"Solver: {name} = {v!r}; give a whole number >= {low}")
            return int(v)

        erp = o["erp"]
        if isinstance(erp, bool) or not isinstance(erp, (int, float, np.floating)) or not 0.0 <= erp <= 1.0:
            raise StepInputError(
                f"Solver: erp = {erp!r}; give a number in [0, 1] (the fraction of a position error removed per step)"
            )
        if o["drive_discretisation"] not in DRIVE_DISCRETISATIONS:
            raise StepInputError(
                f"Solver: drive_discretisation = {o['drive_discretisation']!r}; give one of "
                f"{', '.join(map(repr, DRIVE_DISCRETISATIONS))}"
            )
        ms = o["max_speed"]
        if isinstance(ms, bool) or not isinstance(ms, (int, float, np.integer, np.floating)) or not ms > 0:
            raise StepInputError(
                f"Solver: max_speed = {ms!r}; give a speed > 0 (rad/s or m/s; inf for no runaway check)"
            )
        return {
            "max_speed": float(ms),
            "erp": float(erp),
            "iterations": whole("iterations", 1),
            "contact_iterations": whole("contact_iterations", 0),
            "coupling_every_step": bool(o["coupling_every_step"]),
            "drive_discretisation": o["drive_discretisation"],
        }

    def _solver_data(self):
        """The model's ``ModelData`` with this solver's options: a copy of the struct (its arrays
        shared, not copied), so another solver's options never reach this one's steps."""
        K, md = self.model.kernels, self.model.data
        out = K.ModelData()
        for name in K.ModelData.vars:
            setattr(out, name, getattr(md, name))
        o = self._options
        out.erp, out.iterations = o["erp"], o["iterations"]
        out.max_speed = o["max_speed"]
        out.coupling_in_step = int(bool(md.coupling_in_step or o["coupling_every_step"]))
        # exact drives factor the mass-only matrix HM, which the layout keeps wherever a joint has a drive
        out.drive_exact = int(o["drive_discretisation"] == "exact" and bool(self.model.has_drive.any()))
        if K.contacts:
            out.c_iter = o["contact_iterations"]
        return out

    def launch_slices(self, steps: int = 1) -> list[tuple[int, int]]:
        """The ``(first environment, count)`` slices a launch of ``steps`` steps is split into
        (each its own launch, taken by ``threads`` threads at once: ``slices``)."""
        return cpu_pool.slices(self.model.num_envs, self.threads, steps, self._env_step_s)

    def _timed_run(self, cmds, env_steps: int) -> None:
        """Run the launches (``cpu_pool.run``); until the model's cost is known, time the call (see
        ``MIN_SLICE_S``)."""
        if self._env_step_s is not None or self.threads == 1:
            cpu_pool.run(cmds, self.threads)
            return
        t0 = time.perf_counter()
        cpu_pool.run(cmds, self.threads)
        self._note_call(time.perf_counter() - t0, env_steps, min(self.threads, len(cmds)))

    def _note_call(self, wall: float, env_steps: int, workers: int) -> None:
        """A timed call of ``env_steps`` environment-steps on ``workers`` threads: from the
        second one long enough to tell (the first may still fault its arrays in), the least
        cost per environment-step sets the slicing, and the step's launches are recorded
        again on its slices."""
        if wall < TIMED_CALL_S:
            return
        self._cost_samples.append((wall - CALL_OVERHEAD_S) * workers / max(env_steps, 1))
        if len(self._cost_samples) >= 2:
            self._env_step_s = min(self._cost_samples)
            self._launches.clear()

    # ---- allocation -----------------------------------------------------------------------
    def _alloc(self) -> None:
        m = self.model
        md: Any = m.data  # the model's ModelData (a Warp struct; model.py types it only as None)
        self._data = self._solver_data()
        self._scratch = _scratch(m.kernels, m, m.num_envs, m.work_size, len(m.projection.rows), deep=bool(md.tree_mass))
        if m.workspace.guards:  # debug: a sentinel after every field, checked after each call
            rows = self._scratch.ws.numpy()
            rows[:, list(m.workspace.guards.values())] = SENTINEL
            self._scratch.ws.assign(rows)
        self._launches.clear()
        self._coupling_due = False  # the last step left its coupling impulses to mimic_rows()
        self._io = StepManyBuffers(m)  # step_many's buffers kept between calls, per model version
        self._many.clear()
        self._version = m.version

    # ---- stepping -------------------------------------------------------------------------
    def _turns(self, state: State) -> wp.array:
        if state.joint_turns is None:
            state.joint_turns = wp.zeros(
                (self.model.num_envs, max(len(self.model.joints), 1)), dtype=wp.int32, device=self.model.device
            )
        return state.joint_turns

    def _launch(self, state_in: State, state_out: State, control: Control, dt: float):
        if self._version != self.model.version:
            self._alloc()
        arrays = (
            state_in.joint_q,
            state_in.joint_qd,
            self._turns(state_in),
            control.joint_target_q,
            control.joint_target_qd,
            control.joint_f,
            state_out.joint_q,
            state_out.joint_qd,
            self._turns(state_out),
        )
        key = tuple(id(a) for a in arrays) + (float(dt),)
        hit = self._launches.get(key)
        if hit is not None:
            return hit[0]
        n_q = state_in.joint_q.shape[1]
        cmds = [
            wp.launch(
                self.model.kernels.step_kernel,
                dim=count,
                inputs=[
                    self._data,
                    self._scratch,
                    first,
                    *arrays[:6],
                    float(dt),
                    *arrays[6:],
                    self._io.no_slot(),
                    self._io.no_history(n_q),
                ],
                device=self.model.device,
                record_cmd=True,
            )
            for first, count in self.launch_slices()
        ]
        if len(self._launches) >= _CACHE_SIZE:
            self._launches.pop(next(iter(self._launches)))
        self._launches[key] = (cmds, arrays)  # keep the arrays alive so their ids stay unique
        return cmds

    def _check_dt(self, dt, where: str) -> None:
        try:
            dt_ok = math.isfinite(dt) and dt > 0
        except TypeError:
            dt_ok = False
        if not dt_ok:
            raise StepInputError(f"Solver.{where}: time step dt = {dt!r} s; it must be a finite number > 0")
        least = min_time_step(self.model.precision)
        if dt < least:
            raise StepInputError(
                f"Solver.{where}: time step dt = {dt!r} s is below the least a {self.model.precision} "
                f"model steps with, {least:.3g} s (the step forms dt^2, which must stay a normal "
                f"{self.model.precision}); take a larger dt, or build the model with "
                f"precision='float64' (least {min_time_step('float64'):.3g} s)"
            )

    def _check_guards(self, after: str) -> None:
        """With the work-space guards on (``Model.workspace_guards``): raise naming the fields a
        step wrote past."""
        guards = self.model.workspace.guards
        if not guards:
            return
        bad = overrun(guards, self._scratch.ws.numpy())
        if bad:
            raise WorkSpaceOverrunError(
                f"{after} wrote past the end of the work-space field(s) {', '.join(bad)} "
                f"(mimic_ext/solver/workspace.py declares their sizes): a solver defect; "
                f"please report it with the stage"
            )

    def _raise_if_nonfinite(self, after: str) -> None:
        fast = self.runaway_envs()
        bad = self.nonfinite_envs()
        if fast and not bad:
            shown = ", ".join(map(str, fast[:10])) + (" ..." if len(fast) > 10 else "")
            raise NonFiniteStateError(
                f"{len(fast)} environment(s) ran away after {after}: {shown} (a speed past "
                f"max_speed = {self.max_speed:g} rad/s or m/s; raise it with Solver(max_speed=...) if real)",
                fast,
            )
        if bad:
            shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
            raise NonFiniteStateError(
                f"the state of {len(bad)} environment(s) is no longer finite after "
                f"{after}: {shown} (NaN or inf in their state or control?)",
                bad,
            )

    def step(self, state_in: State, state_out: State, control: Control, dt: float) -> None:
        """Advance every environment by ``dt`` (s, finite and > 0); ``state_out`` may be ``state_in``."""
        if self._in_step:
            raise StepInProgressError("Solver.step called from inside a step")
        self._check_dt(dt, "step")
        self._in_step = True
        try:
            self._timed_run(self._launch(state_in, state_out, control, dt), self.model.num_envs)
            self._coupling_due = not self._data.coupling_in_step
            for cb in self.callbacks:
                cb(self)
        finally:
            self._in_step = False
        self.last_dt = float(dt)
        self._check_guards("this step")
        if self.raise_on_nonfinite:
            self._raise_if_nonfinite("this step")

    def step_many(
        self,
        state: State,
        schedule,
        dt: float,
        steps: int | None = None,
        sample_every: int | None = None,
        control: Control | None = None,
        sample_after=None,
    ) -> wp.array | None:
        """Advance every environment of ``state`` (in place) by ``steps`` steps of ``dt`` in one
        launch per slice of environments; returns the positions recorded on the way, or None.

        ``schedule``: the targets of each step. An array (numpy or Warp, the model's precision)
        ``(steps, num_envs, dof_count)`` of position targets, velocity targets and efforts then
        held at ``control``'s (default: ``model.control()``); or a ``Control`` whose three arrays
        are ``(steps, num_envs, dof_count)`` (or ``(steps * num_envs, dof_count)``). ``steps``
        defaults to the schedule's length. Positions (``joint_q``) are recorded after every
        ``sample_every``-th step, or after the step counts listed in ``sample_after`` (1 ..
        ``steps``, ascending), into an array ``(samples, num_envs, coord_count)``: a later call
        never writes into one returned before while anything still holds it (or a view of it).

        The same arithmetic as ``step`` called ``steps`` times with the state swapped between two
        buffers: the results are bitwise those of one step at a time. Per-step ``callbacks``
        cannot run inside the launch: with any registered this raises ``StepInputError``. The
        finiteness flags (``nonfinite_envs()``, ``raise_on_nonfinite``) cover every step of the
        run and are checked after it; ``mimic_rows()`` reports its last step.

        A call costs tens of microseconds besides its steps: its launches are recorded once per
        slice layout and only the arguments that changed are set again, a NumPy schedule is
        copied into a buffer the solver keeps, the held targets are tiled again only when
        their values change or a longer run needs more rows, and a history nothing holds any
        more is written again.
        """
        if self._in_step:
            raise StepInProgressError("Solver.step_many called from inside a step")
        if self.callbacks:
            raise StepInputError(
                f"Solver.step_many: {len(self.callbacks)} step callback(s) registered, and a "
                f"run of many steps in one launch cannot call them between steps; remove them "
                f"(solver.callbacks.clear()) or call step() once per step"
            )
        self._check_dt(dt, "step_many")
        if self._version != self.model.version:
            self._alloc()
        m = self.model
        pos, vel, eff, count = self._io.schedule(schedule, steps, control)
        after = sample_steps(count, sample_every, sample_after)
        slot = self._io.buffer("slot", count, None, wp.int32)
        marks = np.full(count, -1, np.int32)
        marks[after - 1] = np.arange(after.size, dtype=np.int32)
        slot.write(marks)
        n_q = state.joint_q.shape[1]
        if after.size:
            history = self._io.history((after.size, m.num_envs, n_q))
        else:  # nothing is recorded: any array of the right shape serves
            history = self._io.no_history(n_q)
        cmds, now = self._many_launch(state, pos, vel, eff, slot.array, history, count, float(dt))
        self._in_step = True
        try:
            self._timed_run(cmds, m.num_envs * count)
            self._coupling_due = not self._data.coupling_in_step
        finally:
            self._in_step = False
            if after.size:  # the launches let go of it: only the buffers' last_history holds it from here on
                spare = self._io.no_history(n_q)
                for cmd in cmds:
                    cmd.set_param_at_index(len(now) - 1, spare)  # the history is the last argument
                now[-1] = spare
                self._io.last_history = history
        self.last_dt = float(dt)
        self._check_guards(f"{count} steps")
        if self.raise_on_nonfinite:
            self._raise_if_nonfinite(f"{count} steps")
        return history if after.size else None

    def _many_launch(self, state: State, pos, vel, eff, slot, history, count: int, dt: float):
        """The recorded launches of ``step_many`` (one per slice) and their arguments, recorded
        once per slice layout (which only the step count changes, and only while the slices
        are fewer than ``threads`` or the chunks fewer than ``CHUNKS_PER_THREAD`` per thread); of
        the arguments only those that changed since the last call are set."""
        m = self.model
        other = self._spare_state(state)
        args = [
            self._data,
            self._scratch,
            0,
            m.num_envs,
            count,
            state.joint_q,
            state.joint_qd,
            self._turns(state),
            other.joint_q,
            other.joint_qd,
            other.joint_turns,
            pos,
            vel,
            eff,
            dt,
            slot,
            history,
        ]
        cuts = tuple(self.launch_slices(count))
        hit = self._many.get(cuts)
        if hit is None:  # at most min(threads * CHUNKS_PER_THREAD, N) layouts
            cmds = []
            for first, cnt in cuts:
                args[2] = first
                cmds.append(
                    wp.launch(m.kernels.step_many_kernel, dim=cnt, inputs=list(args), device=m.device, record_cmd=True)
                )
            self._many[cuts] = (cmds, args)  # the arguments as recorded (kept alive with them)
            return cmds, args
        cmds, now = hit
        for i in range(5, len(args)):  # 0 .. 4: the model, the scratch and the slice's extent
            a = args[i]
            if a is not now[i] and not (isinstance(a, (int, float)) and a == now[i]):
                for cmd in cmds:
                    cmd.set_param_at_index(i, a)
                now[i] = a
        if count != now[4]:
            for cmd in cmds:
                cmd.set_param_at_index(4, count)
            now[4] = count
        return cmds, now

    def _spare_state(self, state: State) -> State:
        """The second buffer ``step_many`` alternates with (one per solver and model version)."""
        spare = getattr(self, "_spare", None)
        if spare is None or spare[0] != self._version or spare[1].joint_q.shape != state.joint_q.shape:
            s = self.model.state()
            self._turns(s)
            spare = self._spare = (self._version, s)
        return spare[1]

    def nonfinite_envs(self) -> list[int]:
        """Environments whose state after the last step holds NaN or inf (the kernel's flags)."""
        return [int(i) for i in np.flatnonzero(self._scratch.nonfinite.numpy() & 1)]

    def runaway_envs(self) -> list[int]:
        """Environments with a speed past ``max_speed`` (rad/s or m/s, any DOF) after the last step
        (over ``step_many``: after any of its steps): flagged the step it happens."""
        return [int(i) for i in np.flatnonzero(self._scratch.nonfinite.numpy() & 2)]

    # ---- relations ------------------------------------------------------------------------
    def add_mimic(
        self,
        follower_path: str,
        leader_path: str,
        multiplier: float,
        offset: float = 0.0,
        natural_frequency: float = 0.0,
        damping_ratio: float = 0.0,
    ) -> str:
        """Add ``q_f = multiplier q_l + offset`` (SI) between steps; returns its status.

        A position or velocity that violates it is corrected from the next step on (this
        wakes a resting system). Raises ``StepInProgressError`` inside a step and
        ``MimicInputError`` subclasses for relations that cannot hold.
        """
        if self._in_step:
            raise StepInProgressError(
                f"add_mimic({follower_path}, {leader_path}) called while a step is in progress: "
                f"the step was set up for the old relations; add it between steps"
            )
        row = self.model.make_row(follower_path, leader_path, multiplier, offset, natural_frequency, damping_ratio)
        return self.model.add_relation(row)

    def mimic_rows(self) -> list[MimicRow]:
        """Per relation (stage order, then runtime order): impulse and start-of-step error."""
        rows = self.model.projection.rows
        if not rows:
            return []
        if self._version != self.model.version:  # relations changed since the last step
            zero = np.zeros(self.model.num_envs)
            return [
                MimicRow(r.follower, r.leader, r.multiplier, r.offset, STATUS[k], zero.copy(), zero.copy())
                for r, k in zip(rows, self.model.projection.kinds)
            ]
        if self._coupling_due:
            self._coupling_impulses()
        imp = self._scratch.rel_imp.numpy()
        err = self._scratch.rel_err.numpy()
        return [
            MimicRow(r.follower, r.leader, r.multiplier, r.offset, STATUS[k], imp[:, g].copy(), err[:, g].copy())
            for g, (r, k) in enumerate(zip(rows, self.model.projection.kinds))
        ]

    def _coupling_impulses(self) -> None:
        """The last step's coupling impulses, computed now from the work space it left (the
        step skips them where nothing it does after its velocity solve touches that work space:
        ``Solver.coupling_every_step``); bitwise what the step would have computed."""
        m = self.model
        u_plus = self._io.buffer("u+", m.num_envs, max(m.dof_count, 1), m.dtype).array
        wp.launch(
            m.kernels.coupling_kernel,
            dim=m.num_envs,
            inputs=[self._data, self._scratch, u_plus, float(self.last_dt)],
            device=m.device,
        )
        self._coupling_due = False

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


__all__ = [
    "CALL_OVERHEAD_S",
    "CHUNKS_PER_THREAD",
    "CHUNK_ENV_STEPS",
    "DRIVE_DISCRETISATIONS",
    "MIN_SLICE_ENV_STEPS",
    "MIN_SLICE_S",
    "RUNAWAY_SPEED",
    "SWITCH_INTERVAL_S",
    "TIMED_CALL_S",
    "MimicRow",
    "Solver",
    "available_cores",
    "min_time_step",
    "slices",
]
