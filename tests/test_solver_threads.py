"""Solver(threads=...): the environments split into slices, one launch each, run at once.

Every environment's arithmetic is the same code on the same inputs whichever slice runs it,
so the results must be bitwise those of one thread (compared with ``np.array_equal``: no
tolerance). The mechanisms carry hard and compliant relations, loop closures and limits.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_schedules import COMPLIANT, DT, LINKAGE, model_of, schedule, step_through

pytestmark = pytest.mark.cpu_only(
    "threads slice a CPU launch (a pool of Warp CPU launches); on a GPU one launch covers every environment"
)

wp = pytest.importorskip("warp")
wp.config.quiet = True

from mimic_ext.solver import NonFiniteStateError, Solver, StepInputError  # noqa: E402
from mimic_ext.solver.cpu_pool import MIN_SLICE_ENV_STEPS, available_cores, slices  # noqa: E402

N = 200  # three slices of 67, 67, 66 environments with threads=3


def _stages():
    out = [LINKAGE]
    if COMPLIANT.exists():
        out.append(COMPLIANT)
    return out


@pytest.mark.parametrize("path", _stages(), ids=lambda p: p.stem)
def test_threads_are_bitwise_one_thread(path):
    model = model_of(path, N)
    targets = schedule(model, 60)
    runs = {}
    for threads in (1, 2, 3):
        solver = Solver(model, threads=threads)
        assert len(solver.launch_slices()) == threads  # really split (N >> MIN_SLICE_ENV_STEPS)
        state, samples, impulses = step_through(solver, model, targets, 6)
        runs[threads] = (
            state.joint_q.numpy().copy(),
            state.joint_qd.numpy().copy(),
            state.joint_turns.numpy().copy(),
            samples,
            impulses,
            solver.nonfinite_envs(),
        )
    q1 = runs[1][0]
    assert np.all(np.isfinite(q1)) and np.ptp(q1, axis=0).max() > 1e-3  # environments really differ
    for threads in (2, 3):
        for a, b in zip(runs[1][:4], runs[threads][:4]):
            assert np.array_equal(a, b)  # bitwise: no tolerance
        assert all(np.array_equal(x, y) for x, y in zip(runs[1][4], runs[threads][4]))
        assert runs[threads][5] == []


def test_a_threaded_step_lowers_the_switch_interval_only_while_it_runs(monkeypatch):
    """The solver shortens Python's thread switch interval while its slices run (so the
    pool's launch is not held back by the caller's) and puts the user's value back."""
    from mimic_ext.solver import cpu_pool as S

    model = model_of(LINKAGE, N)
    solver = Solver(model, threads=2)
    seen = []
    real = S.run

    def spy(cmds, workers):
        class Probe:  # runs inside the threaded section
            def launch(self):
                seen.append(sys.getswitchinterval())

        return real(list(cmds) + [Probe()], workers)

    monkeypatch.setattr(S, "run", spy)
    before = sys.getswitchinterval()
    a, b, c = model.state(), model.state(), model.control()
    solver.step(a, b, c, DT)
    assert seen and max(seen) <= S.SWITCH_INTERVAL_S
    assert sys.getswitchinterval() == before


def test_slices_are_contiguous_and_small_n_stays_one_launch():
    assert slices(1, 8) == [(0, 1)]
    assert slices(MIN_SLICE_ENV_STEPS * 2 - 1, 2) == [(0, MIN_SLICE_ENV_STEPS * 2 - 1)]  # too small to split
    assert slices(MIN_SLICE_ENV_STEPS * 2, 2) == [(0, MIN_SLICE_ENV_STEPS), (MIN_SLICE_ENV_STEPS, MIN_SLICE_ENV_STEPS)]
    assert slices(10, 4, steps=100) == [(0, 3), (3, 3), (6, 2), (8, 2)]  # many steps per launch: worth splitting
    for n, t in ((100, 3), (1000, 7), (65, 2)):
        parts = slices(n, t)
        assert sum(c for _, c in parts) == n and all(
            f == sum(c for _, c in parts[:i]) for i, (f, _) in enumerate(parts)
        )


def test_many_env_steps_are_cut_into_chunks_the_threads_share():
    from mimic_ext.solver.cpu_pool import CHUNK_ENV_STEPS, CHUNKS_PER_THREAD

    assert len(slices(1024, 2, steps=1)) == 2  # one step: one slice per thread
    assert len(slices(1024, 2, steps=CHUNK_ENV_STEPS // 1024 * 3)) == 3  # three chunks' worth
    parts = slices(1024, 2, steps=240)
    assert len(parts) == 2 * CHUNKS_PER_THREAD  # at most this many per thread
    assert sum(c for _, c in parts) == 1024 and all(f == sum(c for _, c in parts[:i]) for i, (f, _) in enumerate(parts))
    assert len(slices(1024, 1, steps=240)) == 1  # one thread: one launch, never chunked
    assert len(slices(5, 2, steps=100000)) == 5  # never more chunks than environments


def test_chunked_launches_are_bitwise_one_thread(monkeypatch):
    """More chunks than threads (each thread taking the next one) change nothing in the result."""
    from mimic_ext.solver import cpu_pool as S

    model = model_of(LINKAGE, N)
    targets = schedule(model, 40)
    ref = Solver(model, threads=1)
    s_ref = model.state()
    h_ref = ref.step_many(s_ref, targets, DT, sample_every=8).numpy().copy()
    monkeypatch.setattr(S, "CHUNK_ENV_STEPS", 256)  # N = 200, 40 steps: 31 chunks' worth
    solver = Solver(model, threads=2)
    assert len(solver.launch_slices(40)) == 2 * S.CHUNKS_PER_THREAD
    state = model.state()
    h = solver.step_many(state, targets, DT, sample_every=8).numpy()
    assert np.array_equal(h, h_ref)  # bitwise: no tolerance
    assert np.array_equal(state.joint_q.numpy(), s_ref.joint_q.numpy())
    assert np.array_equal(state.joint_qd.numpy(), s_ref.joint_qd.numpy())
    assert np.ptp(h[-1], axis=0).max() > 1e-3  # environments really differ


def test_each_thread_starts_with_a_command_of_its_own_then_takes_what_is_left():
    """Two workers and two commands: one each, whichever thread is quicker to start (a pool
    thread slow to wake must not leave its slice to the caller); more commands than workers:
    each runs once."""
    import threading

    from mimic_ext.solver import cpu_pool as S

    class Cmd:
        def __init__(self, log):
            self.log = log

        def launch(self):
            self.log.append((self, threading.get_ident()))

    for count in (2, 7):
        log = []
        cmds = [Cmd(log) for _ in range(count)]
        S.run(cmds, 2)
        assert sorted(map(id, (c for c, _ in log))) == sorted(map(id, cmds))  # each once
        first_two = {t for c, t in log if c in cmds[:2]}
        assert len(first_two) == 2  # the first two on two threads


def test_a_measured_cost_sets_the_slices_in_time():
    from mimic_ext.solver.cpu_pool import MIN_SLICE_S

    assert len(slices(16, 2)) == 1  # by count: 16 env-steps stay one launch
    assert len(slices(16, 2, env_step_s=100e-6)) == 2  # 16 x 100 us of work: two slices
    assert len(slices(16, 2, env_step_s=MIN_SLICE_S / 7)) == 2  # 8 env-steps a slice carry MIN_SLICE_S
    assert len(slices(16, 2, env_step_s=MIN_SLICE_S / 9)) == 1  # 8 would carry less: one launch
    assert len(slices(1000, 2, env_step_s=0.1e-6)) == 1  # a light model: 100 us in all stays one


def test_a_heavy_model_splits_few_environments_once_its_cost_is_timed():
    """A step of 16 environments stays one launch by the count rule; once the solver has timed
    its calls at 200 us an env-step (two timed calls: here given to it), the same step runs as
    two slices, bitwise as before."""
    from mimic_ext.solver.cpu_pool import CALL_OVERHEAD_S

    model = model_of(LINKAGE, 16)
    targets = schedule(model, 24)
    ref_state, ref_samples, ref_imp = step_through(Solver(model, threads=1), model, targets, 6)
    solver = Solver(model, threads=2)
    assert len(solver.launch_slices()) == 1
    solver._note_call(16 * 200e-6 + CALL_OVERHEAD_S, 16, 1)
    assert len(solver.launch_slices()) == 1  # one timed call is not enough to tell
    solver._note_call(16 * 250e-6 + CALL_OVERHEAD_S, 16, 1)
    assert solver._env_step_s == pytest.approx(200e-6)  # the least of the two
    assert len(solver.launch_slices()) == 2
    state, samples, imp = step_through(solver, model, targets, 6)
    assert np.array_equal(samples, ref_samples)  # bitwise: no tolerance
    assert np.array_equal(state.joint_qd.numpy(), ref_state.joint_qd.numpy())
    assert all(np.array_equal(a, b) for a, b in zip(imp, ref_imp))
    assert np.ptp(samples[-1], axis=0).max() > 1e-3  # environments really differ


def test_default_is_every_core_and_bad_counts_are_refused():
    model = model_of(LINKAGE, 1)
    assert Solver(model).threads == available_cores()
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(StepInputError, match="threads"):
            Solver(model, threads=bad)


def test_nonfinite_flags_and_callbacks_with_threads():
    model = model_of(LINKAGE, N)
    solver = Solver(model, threads=2, raise_on_nonfinite=True)
    calls = []
    solver.callbacks.append(lambda s: calls.append(s.nonfinite_envs()))
    a, b, c = model.state(), model.state(), model.control()
    solver.step(a, b, c, DT)
    assert calls == [[]]
    effort = c.joint_f.numpy()
    effort[[7, 180], 0] = np.nan  # one environment in each slice
    c.joint_f.assign(effort)
    with pytest.raises(NonFiniteStateError) as err:
        solver.step(b, a, c, DT)
    assert err.value.envs == [7, 180] and solver.nonfinite_envs() == [7, 180]
    assert len(calls) == 2  # the callback ran inside that step too
