"""The relations' coupling impulses computed on demand (``Solver.mimic_rows()``) equal those
the step computes itself (``Solver.coupling_every_step``), bitwise: the on-demand kernel runs the
step's own ``coupling_impulses`` on the work space the last step left, so no tolerance.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_schedules import COMPLIANT, DT, LINKAGE, model_of, schedule

wp = pytest.importorskip("warp")
wp.config.quiet = True

from mimic_ext.solver import Solver  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N = 8
STEPS = 40


def _pair(path: Path, threads: int):
    lazy = model_of(path, N)
    eager = model_of(path, N)
    return (lazy, Solver(lazy, threads=threads)), (eager, Solver(eager, threads=threads, coupling_every_step=True))


def _impulses(solver) -> list[np.ndarray]:
    return [r.impulse for r in solver.mimic_rows()]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("path", [LINKAGE, ROOT / "data" / "rack_and_pinion.usda"], ids=lambda p: p.stem)
def test_on_demand_impulses_are_the_steps_own_after_every_step(path, threads):
    (lazy, ls), (eager, es) = _pair(path, threads)
    assert ls._data.coupling_in_step == 0 and es._data.coupling_in_step == 1
    targets = schedule(lazy, STEPS)
    la, lb, lc = lazy.state(), lazy.state(), lazy.control()
    ea, eb, ec = eager.state(), eager.state(), eager.control()
    seen = 0.0
    for k in range(STEPS):
        lc.joint_target_q.assign(targets[k])
        ec.joint_target_q.assign(targets[k])
        ls.step(la, lb, lc, DT)
        es.step(ea, eb, ec, DT)
        la, lb, ea, eb = lb, la, eb, ea
        if k % 3 == 2:  # read now and then: a read between steps is of the last one
            for a, b in zip(_impulses(ls), _impulses(es)):
                assert np.array_equal(a, b)  # bitwise
                seen = max(seen, float(np.abs(a).max()))
    assert np.array_equal(la.joint_q.numpy(), ea.joint_q.numpy())  # the step itself is unchanged
    assert seen > 0.0  # the relations really pushed


def test_on_demand_impulses_after_step_many_are_its_last_steps():
    (lazy, ls), (eager, es) = _pair(LINKAGE, 1)
    targets = schedule(lazy, STEPS)
    ls.step_many(lazy.state(), targets, DT)
    es.step_many(eager.state(), targets, DT)
    got, want = _impulses(ls), _impulses(es)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))  # bitwise
    assert max(float(np.abs(a).max()) for a in got) > 0.0
    assert all(np.array_equal(a, b) for a, b in zip(_impulses(ls), want))  # read twice: the same


def test_a_step_that_rewrites_its_work_space_computes_them_itself():
    if not COMPLIANT.exists():
        pytest.skip(f"shared asset missing: {COMPLIANT}")
    model = model_of(COMPLIANT, 1)  # loop closures: the projection after the solve reuses the work space
    assert model.loop_row_count > 0 and model.data.coupling_in_step == 1
