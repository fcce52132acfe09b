"""``Solver.step_many``'s schedules: its inputs as device arrays kept between calls.

A call costs tens of microseconds besides its steps only because nothing is allocated or copied
again that has not changed: a NumPy schedule is written into a buffer the solver keeps, the held
targets are tiled again only when their bytes change, a Warp schedule's rows view is kept, and a
history that nothing holds any more is written again. These rules are about the call, not the
step's mechanics, so they live here; ``Solver`` holds one ``StepManyBuffers`` per model version.
"""

from __future__ import annotations

import sys

import numpy as np
import warp as wp

from .errors import StepInputError
from .model import Control, Model


def _on_cpu(a: wp.array) -> bool:
    """Whether ``a`` lives in host memory (NumPy views of it are its memory)."""
    return a.device is not None and a.device.is_cpu


class Buffer:
    """A device array of at least ``rows`` rows kept between calls, written from
    NumPy (on the CPU through a view of its memory); a tiled one remembers the array ``of``
    and the bytes (``source``) it was filled from."""

    def __init__(self, rows: int, cols: int | None, dtype, device):
        self.rows, self.cols = int(rows), cols
        shape = (max(self.rows, 1),) if cols is None else (max(self.rows, 1), cols)
        self.array = wp.empty(shape, dtype=dtype, device=device)
        self.view = self.array.numpy() if _on_cpu(self.array) else None
        self.source, self.of, self.of_view = None, None, None

    def write(self, data: np.ndarray) -> None:
        """Rows ``0 .. len(data) - 1`` from ``data`` (cast to the buffer's type)."""
        if self.view is not None:
            np.copyto(self.view[: len(data)], data, casting="unsafe")
        elif len(data):
            host: wp.array = wp.array(
                np.ascontiguousarray(data, dtype=wp.dtype_to_numpy(self.array.dtype)), device="cpu"
            )
            wp.copy(self.array, host, count=host.size)


def sample_steps(count: int, sample_every, sample_after) -> np.ndarray:
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


class StepManyBuffers:
    """The device arrays one solver keeps between calls for one model version (a new model
    version gets a new set): named buffers, and the last history ``step_many`` returned."""

    def __init__(self, model: Model):
        self.model = model
        self.buffers: dict = {}
        self.last_history: wp.array | None = (
            None  # the last history step_many returned (written again once no one holds it)
        )

    def history(self, shape: tuple[int, int, int]) -> wp.array:
        """The history of this call: the last call's again when nothing but the solver holds it
        (the launches let go of it after their run: its only references are ``last_history``
        and ``getrefcount``'s argument, so the caller dropped it and every view or NumPy array
        of it, which all hold one), else a new array."""
        if self.last_history is not None and self.last_history.shape == shape:
            if sys.getrefcount(self.last_history) == 2:
                return self.last_history
        self.last_history = None
        return wp.empty(shape, dtype=self.model.dtype, device=self.model.device)

    def no_slot(self) -> wp.array:
        """The slot argument of one step (``[-1]``: its positions are not recorded)."""
        slot = self.buffers.get("no slot")
        if slot is None:
            slot = self.buffers["no slot"] = wp.array([-1], dtype=wp.int32, device=self.model.device)
        return slot

    def no_history(self, n_q: int) -> wp.array:
        """The history argument of a run that records nothing (never written)."""
        hist = self.buffers.get(("no history", n_q))
        if hist is None:
            hist = self.buffers[("no history", n_q)] = wp.empty(
                (1, self.model.num_envs, n_q), dtype=self.model.dtype, device=self.model.device
            )
        return hist

    def buffer(self, name: str, rows: int, cols: int | None, dtype) -> Buffer:
        """A device buffer kept between calls for ``name``, at least ``rows`` x ``cols``
        (``cols`` None: one dimension)."""
        buf = self.buffers.get(name)
        if buf is None or buf.rows < rows or buf.cols != cols:
            buf = self.buffers[name] = Buffer(rows, cols, dtype, self.model.device)
        return buf

    def schedule(self, schedule, steps, control):
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
                return self.device_rows(a, total), use
            buf = self.buffer(name, use * n_env, n_dof, m.dtype)
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
        vel, eff = self.held(control, count)
        return pos, vel, eff, count

    def device_rows(self, a: wp.array, total: int) -> wp.array:
        """A Warp schedule array as contiguous ``(total * num_envs, dof_count)`` rows (the rows
        view of the last one given is kept: passed again, it sets no launch argument)."""
        if len(a.shape) == 2 and a.is_contiguous:
            return a
        last = self.buffers.get("rows view")
        if last is not None and last[0] is a and a.is_contiguous:
            return last[1]
        flat = a if a.is_contiguous else wp.clone(a)
        if len(a.shape) == 3:
            flat = flat.reshape((total * self.model.num_envs, self.model.dof_count))
        self.buffers["rows view"] = (a, flat)
        return flat

    def held(self, control: Control | None, count: int):
        """The held velocity targets and efforts of ``control`` (default: ``model.control()``)
        tiled to a row per step and environment; tiled again only when their values changed
        (compared bytewise) or a longer run needs more rows."""
        m = self.model
        rows = count * m.num_envs
        if control is None:  # the model's own (per model version): its values never change
            bufs = self.buffers.get("default held")
            if bufs is None or bufs[0].rows < rows:
                c = m.control()
                bufs = self.buffers["default held"] = tuple(
                    self.tiled(None, a, rows) for a in (c.joint_target_qd, c.joint_f)
                )
            return bufs[0].array, bufs[1].array
        out = []
        for name, a in (("held vel", control.joint_target_qd), ("held eff", control.joint_f)):
            if tuple(a.shape) != (m.num_envs, m.dof_count) or a.dtype != m.dtype:
                raise StepInputError(
                    f"Solver.step_many: control's arrays are {a.dtype.__name__} {tuple(a.shape)}; "
                    f"they must be {m.precision} ({m.num_envs}, {m.dof_count})"
                )
            out.append(self.tiled(name, a, rows).array)
        return out

    def tiled(self, name: str | None, a: wp.array, rows: int) -> Buffer:
        """A buffer of ``a``'s rows repeated for every step (``name``: kept, and reused while
        ``a`` holds the same bytes)."""
        held = self.buffers.get(name) if name else None
        if held is not None and held.rows >= rows:
            if held.of is not a:  # a NumPy view of it: on the CPU, its memory
                held.of, held.of_view = a, a.numpy() if _on_cpu(a) else None
            now = (held.of_view if held.of_view is not None else a.numpy()).tobytes()
            if now == held.source:
                return held
        now_rows = a.numpy()
        buf = held if held is not None and held.rows >= rows else Buffer(rows, a.shape[1], a.dtype, a.device)
        buf.write(np.tile(now_rows, (buf.rows // a.shape[0], 1)))  # in place when it is large enough
        buf.source, buf.of, buf.of_view = now_rows.tobytes(), a, now_rows if _on_cpu(a) else None
        if name:
            self.buffers[name] = buf
        return buf
