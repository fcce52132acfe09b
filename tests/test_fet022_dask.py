"""Catalogue runs on a Dask cluster: the same results as here, and nothing lost when a worker dies.

A real ``distributed.LocalCluster`` (worker processes, 2 workers); one worker is killed with
SIGKILL while the run is under way.
"""

import os
import signal
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="the dask extra (dask.distributed) is not installed")
import distributed.diagnostics.plugin  # noqa: E402

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from mimic_ext.fet022 import sweep_paths  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
#: longer sweeps than the default, so that every stage is still running when a worker is killed
CONFIG = {"sweep_seconds": 20.0}


def _summary(run):
    return [
        (Path(s.asset).name, s.engine, s.status, [(f.name, f.status, round(f.motion_ratio, 6)) for f in s.followers])
        for s in run.stages
    ]


@pytest.fixture(scope="module")
def cluster():
    import dask

    # the scheduler lives in this process: let a task on a dead worker fail at once, so that
    # mimic-ext's own resubmission is what brings its result back
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with (
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc,
            distributed.Client(lc) as client,
        ):
            yield client


@pytest.mark.slow
def test_dask_gives_the_local_results(cluster):
    local = sweep_paths([DATA], CONFIG, jobs=1)
    seen = []
    remote = sweep_paths(
        [DATA], CONFIG, executor="dask", scheduler=cluster, progress=lambda done, total, res: seen.append((done, total))
    )
    assert _summary(remote) == _summary(local)
    assert [d for d, _ in seen] == list(range(1, len(local.stages) + 1))  # progress as each one finishes
    assert remote.jobs == 2 and remote.retried == 0


def test_a_worker_killed_mid_run_loses_no_result(cluster):
    local = sweep_paths([DATA], CONFIG, jobs=1)
    pids = list(cluster.run(os.getpid).values())
    killed = []

    def kill_one(done, total, res):
        if not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    remote = sweep_paths([DATA], CONFIG, executor="dask", scheduler=cluster, progress=kill_one)
    assert killed and killed[0] not in cluster.run(os.getpid).values(), "the worker died (its nanny restarts one)"
    assert remote.retried >= 1, "the unit it was sweeping was resubmitted"
    assert _summary(remote) == _summary(local), "every stage has its result, the same as here"
    assert all(s.status != "error" for s in remote.stages)


class CrashOnUnit(distributed.diagnostics.plugin.WorkerPlugin):
    """A worker plugin that kills its worker whenever it starts the given unit (every try)."""

    def __init__(self, index: int):
        self.index = index

    def transition(self, key, start, finish, **kwargs):
        parts = str(key).split("-")  # fet022-<run>-<unit>-<try>
        if finish == "executing" and parts[0] == "fet022" and parts[2] == str(self.index):
            os._exit(1)


@pytest.mark.slow
def test_a_unit_that_kills_every_worker_is_left_unjudged(cluster):
    """Not blamed on the asset: the loss is the run's; the unit is unjudged (exit 2) and resumable."""
    cluster.register_plugin(CrashOnUnit(0), name="crash-on-unit")
    try:
        # one unit: with allowed-failures 0 (this fixture) a task merely queued on the dying worker
        # fails with it too, so a second unit could be unjudged beside it, by the same rule
        run = sweep_paths([DATA / "chain3.usda"], executor="dask", scheduler=cluster)
    finally:
        cluster.unregister_worker_plugin("crash-on-unit")
    assert [u["asset"] for u in run.unjudged] == [str(DATA / "chain3.usda")]
    assert "died each time it was tried" in run.unjudged[0]["reason"]
    assert run.stages == [] and run.exit_code == 2 and run.retried >= 1
