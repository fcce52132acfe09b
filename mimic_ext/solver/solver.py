"""Solver: steps a Model's environments with every mimic relation and loop closure held exactly.

One recorded Warp launch per step and slice of environments (launch overhead dominates
small systems), cached per combination of state/control arrays and time step. On the CPU
the environments are split into contiguous slices, one launch each, run at once on a
thread pool (a Warp CPU launch is a serial loop that releases the GIL); each environment's
arithmetic is the same whichever slice runs it, so results do not depend on ``threads``.
``step_many`` takes many steps in one launch per slice, their targets from a schedule. Relations added at runtime rebuild
the model's projection between steps; doing it inside a step (from a step callback) is
refused, as the step was set up for the old relations. A time step that is not a finite
positive number is refused; an environment whose state became NaN or infinite is flagged
by the kernel (``nonfinite_envs()``) and, with ``raise_on_nonfinite``, raises.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import warp as wp

from .errors import NonFiniteStateError, StepInProgressError, StepInputError, WorkSpaceOverrunError
from .model import SOLVER_OPTIONS as OPTIONS
from .model import Control, Model, State, _scratch
from .projection import STATUS
from .workspace import SENTINEL, overrun

_CACHE_SIZE = 8

#: Fewest environment-steps a slice must carry for a launch of its own to pay: handing a slice
#: to a pool thread and waiting for it costs about as much as 64 environment-steps of the Robotiq
#: (measured: benchmarks/RESULTS.md, "Threads"); so a step of fewer than 128 environments stays
#: one launch, and ``step_many`` (many steps per launch) splits from two environments on.
MIN_SLICE_ENV_STEPS = 64
#: The same rule in time, once the solver has timed its model (``Solver`` times its first calls of
#: at least ``TIMED_CALL_S``, less ``CALL_OVERHEAD_S`` for the hand-over, per environment-step and
#: core): a slice carries at least ``MIN_SLICE_S`` of one core's work (64 Robotiq env-steps of
#: 2 us). A heavy model (contacts, loops, a humanoid: 20-200 us an env-step) then splits a step
#: of a few environments, which the count alone keeps on one core, and a lighter one splits later.
MIN_SLICE_S = 128e-6
TIMED_CALL_S = 300e-6
CALL_OVERHEAD_S = 30e-6
#: A launch of many environment-steps (``step_many`` at large N) is cut into up to this many
#: chunks per thread, each of at least ``CHUNK_ENV_STEPS`` (some 10 ms of the Robotiq's work, so a
#: chunk's hand-over stays under 1 %), and a thread that is done takes the next chunk not yet
#: taken: with one fixed slice per thread, a core the machine lends elsewhere for a while holds
#: back the whole call (MuJoCo's rollout balances the same way, over its pool)
CHUNKS_PER_THREAD = 8
CHUNK_ENV_STEPS = 8192


def min_time_step(precision: str) -> float:
    """The least time step a model of ``precision`` takes (s): the square root of its smallest
    normal number, so that the step's dt^2 terms (implicit drives, compliant rows) neither
    underflow nor, through erp / dt, overflow (float32 1.08e-19 s, float64 1.49e-154 s)."""
    return float(np.sqrt(np.finfo(np.float32 if precision == "float32" else np.float64).tiny))


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    """One process-wide pool per size, shared by every solver (many small solvers must not
    each start threads)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            pool = _POOLS[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mimic_solver")
        return pool


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def slices(num_envs: int, threads: int, steps: int = 1, env_step_s: float | None = None) -> list[tuple[int, int]]:
    """Contiguous ``(first, count)`` slices of the environments: at most ``threads``, each
    carrying at least ``MIN_SLICE_ENV_STEPS`` environment-steps or, given the measured seconds of
    one (``env_step_s``), ``MIN_SLICE_S`` of work (one slice when N is small); or, when each
    would carry many more, ``CHUNKS_PER_THREAD`` times as many chunks of at least
    ``CHUNK_ENV_STEPS``, which the threads take one after another (``_run``)."""
    steps = max(int(steps), 1)
    least = MIN_SLICE_ENV_STEPS if not env_step_s else max(1, math.ceil(MIN_SLICE_S / env_step_s))
    n = max(1, min(int(threads), num_envs, (num_envs * steps) // least))
    if n > 1:
        n = max(n, min(n * CHUNKS_PER_THREAD, num_envs, (num_envs * steps) // CHUNK_ENV_STEPS))
    base, extra = divmod(num_envs, n)
    out, first = [], 0
    for i in range(n):
        count = base + (1 if i < extra else 0)
        out.append((first, count))
        first += count
    return out


#: The interpreter's thread switch interval while slices run (s). With Python's default 5 ms the
#: pool's slice mostly waits for the caller's (no gain from a second core); at 0.1 ms both run at
#: once (measured: benchmarks/RESULTS.md, "Threads"). Lowered only while a threaded launch runs,
#: and restored after.
SWITCH_INTERVAL_S = 1e-4
_SWITCH = {"users": 0, "saved": None}


def _short_switch(enter: bool) -> None:
    with _POOLS_LOCK:
        if enter:
            if _SWITCH["users"] == 0:
                _SWITCH["saved"] = sys.getswitchinterval()
                sys.setswitchinterval(min(_SWITCH["saved"], SWITCH_INTERVAL_S))
            _SWITCH["users"] += 1
        else:
            _SWITCH["users"] -= 1
            if _SWITCH["users"] == 0:
                sys.setswitchinterval(_SWITCH["saved"])


def _run(cmds, workers: int) -> None:
    """Launch recorded commands on ``workers`` threads (the calling one and the pool's): each
    thread starts with a command of its own (so a pool thread slow to wake never leaves its
    share to the caller), then takes the next one not yet taken."""
    workers = min(int(workers), len(cmds))
    if workers <= 1:
        for c in cmds:
            c.launch()
        return
    rest = iter(cmds[workers:])  # next() on a list iterator is atomic under the GIL

    def work(first):
        first.launch()
        for c in rest:
            c.launch()

    _short_switch(True)
    try:
        futures = [_pool(workers - 1).submit(work, c) for c in cmds[1:workers]]
        try:
            work(cmds[0])
        finally:
            for f in futures:
                f.result()
    finally:
        _short_switch(False)


class _Buffer:
    """A device array of at least ``rows`` rows kept between ``step_many`` calls, written from
    NumPy (on the CPU through a view of its memory); a tiled one remembers the array ``of``
    and the bytes (``source``) it was filled from."""

    def __init__(self, rows: int, cols: int | None, dtype, device):
        self.rows, self.cols = int(rows), cols
        shape = (max(self.rows, 1),) if cols is None else (max(self.rows, 1), cols)
        self.array = wp.empty(shape, dtype=dtype, device=device)
        self.view = self.array.numpy() if self.array.device.is_cpu else None
        self.source, self.of, self.of_view = None, None, None

    def write(self, data: np.ndarray) -> None:
        """Rows ``0 .. len(data) - 1`` from ``data`` (cast to the buffer's type)."""
        if self.view is not None:
            np.copyto(self.view[: len(data)], data, casting="unsafe")
        elif len(data):
            host = wp.array(np.ascontiguousarray(data, dtype=wp.dtype_to_numpy(self.array.dtype)), device="cpu")
            wp.copy(self.array, host, count=host.size)


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
        self._buffers: dict = {}  # step_many's buffers kept between calls (cleared with the model version)
        self._many: dict = {}  # step_many's recorded launches per slice layout
        self._last_history = None  # the last history step_many returned (written again once no one holds it)
        self._env_step_s = None  # measured seconds of one environment-step on one core (the slicing's)
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
        return slices(self.model.num_envs, self.threads, steps, self._env_step_s)

    def _timed_run(self, cmds, env_steps: int) -> None:
        """``_run`` the launches; until the model's cost is known, time the call (see
        ``MIN_SLICE_S``)."""
        if self._env_step_s is not None or self.threads == 1:
            _run(cmds, self.threads)
            return
        t0 = time.perf_counter()
        _run(cmds, self.threads)
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
        self._data = self._solver_data()
        self._scratch = _scratch(
            m.kernels, m, m.num_envs, m.work_size, len(m.projection.rows), deep=bool(m.data.tree_mass)
        )
        if m.workspace.guards:  # debug: a sentinel after every field, checked after each call
            rows = self._scratch.ws.numpy()
            rows[:, list(m.workspace.guards.values())] = SENTINEL
            self._scratch.ws.assign(rows)
        self._launches.clear()
        self._coupling_due = False  # the last step left its coupling impulses to mimic_rows()
        self._buffers.clear()
        self._many.clear()
        self._last_history = None
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
                    self._no_slot(),
                    self._no_history(n_q),
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
        pos, vel, eff, count = self._schedule(schedule, steps, control)
        after = self._sample_steps(count, sample_every, sample_after)
        slot = self._buffer("slot", count, None, wp.int32)
        marks = np.full(count, -1, np.int32)
        marks[after - 1] = np.arange(after.size, dtype=np.int32)
        slot.write(marks)
        n_q = state.joint_q.shape[1]
        if after.size:
            history = self._history((after.size, m.num_envs, n_q))
        else:  # nothing is recorded: any array of the right shape serves
            history = self._no_history(n_q)
        cmds, now = self._many_launch(state, pos, vel, eff, slot.array, history, count, float(dt))
        self._in_step = True
        try:
            self._timed_run(cmds, m.num_envs * count)
            self._coupling_due = not self._data.coupling_in_step
        finally:
            self._in_step = False
            if after.size:  # the launches let go of it: only _last_history holds it from here on
                spare = self._no_history(n_q)
                for cmd in cmds:
                    cmd.set_param_at_index(len(now) - 1, spare)  # the history is the last argument
                now[-1] = spare
                self._last_history = history
        self.last_dt = float(dt)
        self._check_guards(f"{count} steps")
        if self.raise_on_nonfinite:
            self._raise_if_nonfinite(f"{count} steps")
        return history if after.size else None

    @staticmethod
    def _sample_steps(count: int, sample_every, sample_after) -> np.ndarray:
        """The step counts (1 .. count, ascending) after which positions are recorded."""
        if sample_every is not None and sample_after is not None:
            raise StepInputError("Solver.step_many: give sample_every or sample_after, not both")
        if sample_every is not None:
            if isinstance(sample_every, bool) or int(sample_every) != sample_every or sample_every < 1:
                raise StepInputError(f"Solver.step_many: sample_every = {sample_every!r}; give a whole number >= 1")
            return np.arange(int(sample_every), count + 1, int(sample_every))
        if sample_after is not None:
            after = np.asarray(sample_after, dtype=np.int64).reshape(-1)
            if after.size and (after[0] < 1 or after[-1] > count or np.any(np.diff(after) <= 0)):
                raise StepInputError(f"Solver.step_many: sample_after must be ascending step counts in 1 .. {count}")
            return after
        return np.zeros(0, np.int64)

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

    def _history(self, shape: tuple[int, int, int]) -> wp.array:
        """The history of this call: the last call's again when nothing but the solver holds it
        (the launches let go of it after their run: its only references are ``_last_history``
        and ``getrefcount``'s argument, so the caller dropped it and every view or NumPy array
        of it, which all hold one), else a new array."""
        last = self._last_history
        if last is not None and last.shape == shape:
            del last  # not a third reference
            if sys.getrefcount(self._last_history) == 2:
                return self._last_history
        self._last_history = None
        return wp.empty(shape, dtype=self.model.dtype, device=self.model.device)

    def _no_slot(self) -> wp.array:
        """The slot argument of one step (``[-1]``: its positions are not recorded)."""
        slot = self._buffers.get("no slot")
        if slot is None:
            slot = self._buffers["no slot"] = wp.array([-1], dtype=wp.int32, device=self.model.device)
        return slot

    def _no_history(self, n_q: int) -> wp.array:
        """The history argument of a run that records nothing (never written)."""
        hist = self._buffers.get(("no history", n_q))
        if hist is None:
            hist = self._buffers[("no history", n_q)] = wp.empty(
                (1, self.model.num_envs, n_q), dtype=self.model.dtype, device=self.model.device
            )
        return hist

    def _buffer(self, name: str, rows: int, cols: int | None, dtype) -> _Buffer:
        """A device buffer kept between calls for ``name``, at least ``rows`` x ``cols``
        (``cols`` None: one dimension)."""
        buf = self._buffers.get(name)
        if buf is None or buf.rows < rows or buf.cols != cols:
            buf = self._buffers[name] = _Buffer(rows, cols, dtype, self.model.device)
        return buf

    def _spare_state(self, state: State) -> State:
        """The second buffer ``step_many`` alternates with (one per solver and model version)."""
        spare = getattr(self, "_spare", None)
        if spare is None or spare[0] != self._version or spare[1].joint_q.shape != state.joint_q.shape:
            s = self.model.state()
            self._turns(s)
            spare = self._spare = (self._version, s)
        return spare[1]

    def _schedule(self, schedule, steps, control):
        """(position, velocity, effort) device arrays with a row per step and environment (at
        least), and the step count. NumPy rows are copied into the solver's own buffers; Warp
        arrays are used as they are."""
        m = self.model
        n_env, n_dof = m.num_envs, m.dof_count

        def rows(a, what: str, need: int | None, name: str):
            if isinstance(a, wp.array):
                if a.dtype != m.dtype:
                    raise StepInputError(
                        f"Solver.step_many: {what} is a {a.dtype.__name__} array; the model is {m.precision}"
                    )
                shape = a.shape
            else:
                a = np.asarray(a)
                shape = a.shape
            if len(shape) == 3 and shape[1:] == (n_env, n_dof):
                total = shape[0]
            elif len(shape) == 2 and shape[1] == n_dof and shape[0] % n_env == 0:
                total = shape[0] // n_env
            else:
                raise StepInputError(
                    f"Solver.step_many: {what} has shape {tuple(shape)}; it must be (steps, "
                    f"{n_env}, {n_dof}) (steps x environments x DOFs)"
                )
            use = total if need is None else need
            if use > total:
                raise StepInputError(f"Solver.step_many: steps = {use} but {what} holds {total} steps")
            if isinstance(a, wp.array):
                return self._device_rows(a, total), use
            buf = self._buffer(name, use * n_env, n_dof, m.dtype)
            buf.write(a.reshape(total * n_env, n_dof)[: use * n_env])
            return buf.array, use

        if steps is not None and (isinstance(steps, bool) or int(steps) != steps or steps < 1):
            raise StepInputError(f"Solver.step_many: steps = {steps!r}; give a whole number >= 1")
        need = None if steps is None else int(steps)
        if isinstance(schedule, Control):
            pos, count = rows(schedule.joint_target_q, "the schedule's joint_target_q", need, "pos")
            vel, _ = rows(schedule.joint_target_qd, "the schedule's joint_target_qd", count, "vel")
            eff, _ = rows(schedule.joint_f, "the schedule's joint_f", count, "eff")
            return pos, vel, eff, count
        pos, count = rows(schedule, "the schedule", need, "pos")
        vel, eff = self._held(control, count)
        return pos, vel, eff, count

    def _device_rows(self, a: wp.array, total: int) -> wp.array:
        """A Warp schedule array as contiguous ``(total * num_envs, dof_count)`` rows (the rows
        view of the last one given is kept: passed again, it sets no launch argument)."""
        if len(a.shape) == 2 and a.is_contiguous:
            return a
        last = self._buffers.get("rows view")
        if last is not None and last[0] is a and a.is_contiguous:
            return last[1]
        flat = a if a.is_contiguous else wp.clone(a)
        if len(a.shape) == 3:
            flat = flat.reshape((total * self.model.num_envs, self.model.dof_count))
        self._buffers["rows view"] = (a, flat)
        return flat

    def _held(self, control: Control | None, count: int):
        """The held velocity targets and efforts of ``control`` (default: ``model.control()``)
        tiled to a row per step and environment; tiled again only when their values changed
        (compared bytewise) or a longer run needs more rows."""
        m = self.model
        rows = count * m.num_envs
        if control is None:  # the model's own (per model version): its values never change
            bufs = self._buffers.get("default held")
            if bufs is None or bufs[0].rows < rows:
                c = m.control()
                bufs = self._buffers["default held"] = tuple(
                    self._tiled(None, a, rows) for a in (c.joint_target_qd, c.joint_f)
                )
            return bufs[0].array, bufs[1].array
        out = []
        for name, a in (("held vel", control.joint_target_qd), ("held eff", control.joint_f)):
            if tuple(a.shape) != (m.num_envs, m.dof_count) or a.dtype != m.dtype:
                raise StepInputError(
                    f"Solver.step_many: control's arrays are {a.dtype.__name__} {tuple(a.shape)}; "
                    f"they must be {m.precision} ({m.num_envs}, {m.dof_count})"
                )
            out.append(self._tiled(name, a, rows).array)
        return out

    def _tiled(self, name: str | None, a: wp.array, rows: int) -> _Buffer:
        """A buffer of ``a``'s rows repeated for every step (``name``: kept, and reused while
        ``a`` holds the same bytes)."""
        held = self._buffers.get(name) if name else None
        if held is not None and held.rows >= rows:
            if held.of is not a:  # a NumPy view of it: on the CPU, its memory
                held.of, held.of_view = a, a.numpy() if a.device.is_cpu else None
            now = (held.of_view if held.of_view is not None else a.numpy()).tobytes()
            if now == held.source:
                return held
        now_rows = a.numpy()
        buf = held if held is not None and held.rows >= rows else _Buffer(rows, a.shape[1], a.dtype, a.device)
        buf.write(np.tile(now_rows, (buf.rows // a.shape[0], 1)))  # in place when it is large enough
        buf.source, buf.of, buf.of_view = now_rows.tobytes(), a, now_rows if a.device.is_cpu else None
        if name:
            self._buffers[name] = buf
        return buf

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
        u_plus = self._buffer("u+", m.num_envs, max(m.dof_count, 1), m.dtype).array
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
