"""Solver.step_many: many steps in one launch, targets from a schedule, positions recorded.

It runs ``step_env`` with the same inputs as ``step`` does, alternating between two state
buffers as a caller of ``step`` swaps them, so every comparison here is bitwise
(``np.array_equal``, no tolerance), with one thread and with several.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_schedules import COMPLIANT, DT, LINKAGE, model_of, schedule, step_through

wp = pytest.importorskip("warp")
wp.config.quiet = True

from mimic_ext.solver import Control, NonFiniteStateError, Solver, StepInputError  # noqa: E402

N = 70


#: threads=2 splits a CPU launch in two slices; on a GPU a solver runs one launch (threads is 1)
CPU_SLICES = pytest.mark.cpu_only("threads slice a CPU launch; on a GPU one launch covers every environment")


def _stages():
    return [LINKAGE] + ([COMPLIANT] if COMPLIANT.exists() else [])


@pytest.mark.parametrize("threads", [1, pytest.param(2, marks=CPU_SLICES)])
@pytest.mark.parametrize("steps", [48, 49])  # an odd count ends in the second buffer: copied back
@pytest.mark.parametrize("path", _stages(), ids=lambda p: p.stem)
def test_step_many_is_bitwise_step_by_step(path, steps, threads):
    model = model_of(path, N)
    targets = schedule(model, steps)
    ref_state, ref_samples, ref_imp = step_through(Solver(model, threads=1), model, targets, 8)
    solver = Solver(model, threads=threads)
    assert len(solver.launch_slices(steps)) == threads
    state = model.state()
    history = solver.step_many(state, targets, DT, sample_every=8)
    assert history.shape == (steps // 8, N, model.coord_count)
    assert np.array_equal(history.numpy(), ref_samples)  # bitwise
    assert np.array_equal(state.joint_q.numpy(), ref_state.joint_q.numpy())
    assert np.array_equal(state.joint_qd.numpy(), ref_state.joint_qd.numpy())
    assert np.array_equal(state.joint_turns.numpy(), ref_state.joint_turns.numpy())
    assert all(np.array_equal(a, r.impulse) for a, r in zip(ref_imp, solver.mimic_rows()))  # the last step's
    assert solver.nonfinite_envs() == []
    assert np.ptp(history.numpy()[-1], axis=0).max() > 1e-3  # environments really differ


def test_schedule_forms_steps_and_sample_after():
    model = model_of(LINKAGE, 3)
    targets = schedule(model, 30)
    solver = Solver(model, threads=1)
    s_full = model.state()
    h_full = solver.step_many(s_full, targets, DT, sample_after=[1, 2, 30])
    # a Control schedule (velocity targets and efforts per step too) on the device, flat rows
    ctl = model.control()
    sched = Control(
        joint_target_q=wp.array(targets.reshape(-1, model.dof_count), dtype=wp.float32),
        joint_target_qd=wp.array(np.tile(ctl.joint_target_qd.numpy(), (30, 1)), dtype=wp.float32),
        joint_f=wp.zeros((30 * 3, model.dof_count), dtype=wp.float32),
    )
    s_ctl = model.state()
    h_ctl = solver.step_many(s_ctl, sched, DT, sample_after=[1, 2, 30])
    assert np.array_equal(h_full.numpy(), h_ctl.numpy())
    assert np.array_equal(s_full.joint_q.numpy(), s_ctl.joint_q.numpy())
    # the first 20 steps of a longer schedule, then the rest: the same as all 30 at once
    s_two = model.state()
    assert solver.step_many(s_two, targets, DT, steps=20) is None  # nothing asked to be recorded
    solver.step_many(s_two, targets[20:], DT)
    assert np.array_equal(s_two.joint_q.numpy(), s_full.joint_q.numpy())


def test_refusals_are_one_clear_line():
    model = model_of(LINKAGE, 2)
    solver = Solver(model)
    state, targets = model.state(), schedule(model, 5)
    bad = [
        (dict(schedule=targets[:, :1]), "shape"),
        (dict(schedule=targets, steps=6), "holds 5 steps"),
        (dict(schedule=targets, dt=0.0), "dt"),
        (dict(schedule=targets, sample_every=0), "sample_every"),
        (dict(schedule=targets, sample_after=[3, 2]), "sample_after"),
        (dict(schedule=wp.array(targets, dtype=wp.float64)), "float64"),
    ]
    for kwargs, word in bad:
        kwargs = {"dt": DT, **kwargs}
        with pytest.raises(StepInputError, match=word):
            solver.step_many(state, **kwargs)
    solver.callbacks.append(lambda s: None)
    with pytest.raises(StepInputError, match="callback"):
        solver.step_many(state, targets, DT)


def test_nonfinite_in_any_step_is_flagged_after_the_run():
    model = model_of(LINKAGE, 4)
    targets = schedule(model, 40)
    targets[10, 2, :] = np.nan  # environment 2 is given a NaN target at step 10
    solver = Solver(model, threads=1, raise_on_nonfinite=True)
    with pytest.raises(NonFiniteStateError) as err:
        solver.step_many(model.state(), targets, DT)
    assert err.value.envs == [2] and solver.nonfinite_envs() == [2]


def _one_at_a_time(solver, model, state, calls):
    """Reference for ``calls``: each (position targets (steps, N, dofs), velocity targets and
    efforts per step or held (N, dofs), dt, sample step counts) stepped one ``step`` at a time
    from ``state``; the positions at the sample counts of each call, and the final state."""
    a, b, c = state, model.state(), model.control()
    out = []
    for pos, vel, eff, dt, after in calls:
        samples = []
        for k in range(pos.shape[0]):
            c.joint_target_q.assign(pos[k])
            c.joint_target_qd.assign(vel[k] if vel.ndim == 3 else vel)
            c.joint_f.assign(eff[k] if eff.ndim == 3 else eff)
            solver.step(a, b, c, dt)
            a, b = b, a
            if k + 1 in after:
                samples.append(a.joint_q.numpy().copy())
        out.append(np.array(samples))
    return out, a


@pytest.mark.parametrize("threads", [1, pytest.param(2, marks=CPU_SLICES)])
def test_repeated_calls_give_one_at_a_time_results(threads):
    """The launches, buffers and tiled targets step_many keeps between calls never carry a
    stale value: calls that change the schedule (its values in place, its kind, its length,
    beyond every buffer's size and back), the sampling, dt and the held control each give
    bitwise what one ``step`` at a time gives, and no later call writes into an earlier history."""
    model = model_of(LINKAGE, N)
    n_env, n_dof = N, model.dof_count
    base = schedule(model, 80)
    held = model.control()
    vel0, eff0 = held.joint_target_qd.numpy().copy(), held.joint_f.numpy().copy()
    sched_a = base[:30].copy()
    sched_w = wp.array(base[:80], dtype=wp.float32)
    ctl = model.control()  # a held control of the caller's, changed in place below
    vel1 = np.full((n_env, n_dof), 0.3, np.float32)
    rng = np.random.default_rng(7)
    per_step = Control(
        joint_target_q=wp.array(base[10:40], dtype=wp.float32),
        joint_target_qd=wp.array(rng.uniform(-1, 1, (30, n_env, n_dof)), dtype=wp.float32),
        joint_f=wp.array(rng.uniform(-0.01, 0.01, (30 * n_env, n_dof)), dtype=wp.float32),
    )

    def call(solver, state, kind):
        if kind == 0:
            return solver.step_many(state, sched_a, DT, sample_every=5)
        if kind == 1:
            return solver.step_many(state, base[30:60], DT, sample_after=[3, 30])
        if kind == 2:
            sched_a[:] += 0.05  # the same array, new values
            return solver.step_many(state, sched_a, DT, steps=20)
        if kind == 3:
            return solver.step_many(state, sched_w, DT / 2, sample_every=7)
        if kind == 8:
            sched_w.assign(base[:80] + 0.02)  # the same Warp array, new values
            return solver.step_many(state, sched_w, DT, steps=10, sample_after=[10])
        if kind == 4:
            ctl.joint_target_qd.assign(vel1)
            return solver.step_many(state, base[:12], DT, control=ctl, sample_after=[12])
        if kind == 5:
            ctl.joint_target_qd.assign(-vel1)  # the same control, new values
            return solver.step_many(state, base[12:20], DT, control=ctl, sample_every=4)
        if kind == 6:
            return solver.step_many(state, per_step, DT, sample_every=10)
        return solver.step_many(state, base[:3], DT, sample_every=1)  # short again, default control

    sched_a2 = base[:30] + 0.05
    refs = [
        (base[:30], vel0, eff0, DT, set(range(5, 31, 5))),
        (base[30:60], vel0, eff0, DT, {3, 30}),
        (sched_a2[:20], vel0, eff0, DT, set()),
        (base[:80], vel0, eff0, DT / 2, set(range(7, 81, 7))),
        (base[:12], vel1, eff0, DT, {12}),
        (base[12:20], -vel1, eff0, DT, {4, 8}),
        (
            base[10:40],
            per_step.joint_target_qd.numpy(),
            per_step.joint_f.numpy().reshape(30, n_env, n_dof),
            DT,
            {10, 20, 30},
        ),
        (base[:3], vel0, eff0, DT, {1, 2, 3}),
        ((base[:80] + 0.02)[:10], vel0, eff0, DT, {10}),
    ]
    expected, ref_state = _one_at_a_time(Solver(model, threads=1), model, model.state(), refs)

    solver, state = Solver(model, threads=threads), model.state()
    got = []
    for kind in range(len(refs)):
        h = call(solver, state, kind)
        got.append((h, None if h is None else h.numpy().copy()))
    assert len(solver.launch_slices(30)) == threads
    for (h, first), want in zip(got, expected):
        if h is None:
            assert want.size == 0
            continue
        assert np.array_equal(first, want)  # bitwise
        assert np.array_equal(h.numpy(), first)  # not overwritten by a later call
    assert np.array_equal(state.joint_q.numpy(), ref_state.joint_q.numpy())
    assert np.array_equal(state.joint_qd.numpy(), ref_state.joint_qd.numpy())
    assert np.ptp(state.joint_q.numpy(), axis=0).max() > 1e-3  # environments really differ


def test_a_history_is_never_written_while_anything_holds_it():
    """step_many writes a history again only once nothing outside the solver holds it: a NumPy
    array or a Warp view of an earlier one keeps it (and so its values) alive."""
    model = model_of(LINKAGE, 3)
    solver, state, targets = Solver(model, threads=1), model.state(), schedule(model, 30)
    view = solver.step_many(state, targets[:10], DT, sample_every=5).numpy()  # only a NumPy view kept
    first = view.copy()
    h2 = solver.step_many(state, targets[10:20], DT, sample_every=5)
    assert not np.array_equal(h2.numpy(), first)  # the two runs recorded different positions
    assert np.array_equal(view, first)
    part = h2[1]  # only a Warp view of the second one kept
    del h2
    second = part.numpy().copy()
    h3 = solver.step_many(state, targets[20:], DT, sample_every=5)
    assert not np.array_equal(h3.numpy()[1], second)
    assert np.array_equal(part.numpy(), second) and np.array_equal(view, first)
