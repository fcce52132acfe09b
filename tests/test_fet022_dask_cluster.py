"""A catalogue run on a real Dask cluster that fails: a ``dask scheduler`` and ``dask worker``
processes on the loopback interface, started in another folder than this one, as a user starts
them. A worker killed, the scheduler stopped, the client killed: every finished result is kept,
nothing finished is computed twice, the rest is resumable.

Every task a worker starts is logged by ``StartLog`` (a worker plugin) to a file, so that
"computed again" is counted, not guessed.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="the dask extra (dask.distributed) is not installed")
pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from distributed.diagnostics.plugin import WorkerPlugin  # noqa: E402

from mimic_ext.fet022.batch import sweep_paths  # noqa: E402
from mimic_ext.fet022.store import stored_stages  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
#: longer sweeps than the default (each stage then takes seconds), so that stages are still running
#: when something is killed
CONFIG = {"sweep_seconds": 20.0}
LONG = {"sweep_seconds": 60.0}  # the killed client's run: units slow enough to be caught mid-run
pytestmark = pytest.mark.slow


class StartLog(WorkerPlugin):
    """Appends the key of every task a worker starts to ``path`` (one line each)."""

    def __init__(self, path: str):
        self.path = path

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and str(key).startswith("fet022-"):
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(f"{key}\n")


def _starts(path: Path) -> dict[str, int]:
    """unit (run id and index, without the try) -> times a worker started it."""
    out: dict[str, int] = {}
    if path.exists():
        for key in path.read_text().split():
            unit = key.rsplit("-", 1)[0]
            out[unit] = out.get(unit, 0) + 1
    return out


class Cluster:
    """One scheduler and ``workers`` single-threaded worker processes, in ``folder``."""

    def __init__(self, folder: Path, workers: int = 2):
        self.folder = folder
        folder.mkdir(exist_ok=True)
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
        sched_file = folder / f"scheduler-{time.monotonic_ns()}.json"
        self.scheduler = subprocess.Popen(
            ["dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
            + ["--scheduler-file", str(sched_file)],
            cwd=folder,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.address = json.loads(sched_file.read_text())["address"]
        self.workers = [
            subprocess.Popen(
                ["dask", "worker", self.address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                cwd=folder,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(workers)
        ]
        self.client = distributed.Client(self.address, timeout="60s")
        self.client.wait_for_workers(workers, timeout=120)

    def log_starts(self, path: Path) -> None:
        self.client.register_plugin(StartLog(str(path)), name="start-log")

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                p.terminate()
        try:
            self.client.close(timeout=5)
        except Exception:
            pass
        for p in [*self.workers, self.scheduler]:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path / "elsewhere")
    yield c
    c.close()


def _summary(run):
    return sorted((Path(s.asset).name, s.status, [(f.name, f.status) for f in s.followers]) for s in run.stages)


def test_relative_paths_reach_workers_started_in_another_folder(cluster, monkeypatch, tmp_path):
    """Issue 38: paths were submitted as typed: 6 of 6 'no such file' on workers started elsewhere."""
    monkeypatch.chdir(ROOT)
    run = sweep_paths(["data"], executor="dask", scheduler=cluster.client, store=tmp_path / "run")
    assert len(run.stages) == 6 and all(s.status == "pass" for s in run.stages), [s.reason for s in run.stages]
    assert run.stages[0].asset == "data/chain3.usda"  # reported as typed
    assert run.executor == "dask" and run.jobs == 2
    from mimic_ext.fet022.reports import format_html

    assert "on a Dask cluster of 2 worker(s)" in format_html(run)  # not "2 process(es)"
    # the per-asset timeout interrupts the sweep in the worker's thread too (0.001 s cannot be met)
    late = sweep_paths([DATA / "chain3.usda"], executor="dask", scheduler=cluster.client, timeout=0.001)
    assert late.stages[0].status == "timeout" and late.exit_code == 2


def test_a_worker_killed_mid_run(cluster, tmp_path):
    log = tmp_path / "starts.txt"
    cluster.log_starts(log)
    pids = list(cluster.client.run(os.getpid).values())
    finished_before_kill: list[str] = []

    def kill_one(done, total, res):
        if not finished_before_kill:
            finished_before_kill.append(res.asset)
            os.kill(pids[0], signal.SIGKILL)

    run = sweep_paths([DATA], CONFIG, executor="dask", scheduler=cluster.client, progress=kill_one)
    assert len(run.stages) == 6 and all(s.status == "pass" for s in run.stages), "every asset judged"
    assert not run.unjudged
    assert run.workers_lost and run.retried >= 1, "the loss is reported, with what was run again"
    assert run.workers_lost[0]["units"], "the unit the dead worker was sweeping is named"
    starts = _starts(log)
    assert len(starts) == 6 and max(starts.values()) <= 2, starts
    # only what the dead worker held ran again: the unit it was sweeping, and one it had finished
    # whose result lived on it alone (Dask keeps a result on its worker until the client takes it)
    lost = {str(u) for w in run.workers_lost for u in w["units"]}
    assert sum(starts.values()) <= 6 + max(1, len(lost)), ("only the dead worker's units ran twice", starts, lost)


def test_the_scheduler_stopped_mid_run_then_resumed(tmp_path):
    first = Cluster(tmp_path / "elsewhere")
    try:
        stopped = []

        def stop(done, total, res):
            if done == 2 and not stopped:
                first.scheduler.send_signal(signal.SIGTERM)
                stopped.append(done)

        run = sweep_paths(
            [DATA], CONFIG, executor="dask", scheduler=first.address, store=tmp_path / "run", progress=stop
        )
    finally:
        first.close()
    judged = {s.asset for s in run.stages}
    assert len(judged) >= 2 and run.unjudged, "finished stored, the rest unjudged"
    assert all("scheduler was lost" in u["reason"] for u in run.unjudged), run.unjudged
    assert all(s.status == "pass" for s in run.stages), "nothing blamed on an asset"
    assert run.exit_code == 2
    stored = {u["asset"] for u, st in stored_stages(tmp_path / "run") if st is not None}
    assert stored == judged
    second = Cluster(tmp_path / "elsewhere")
    try:
        log = tmp_path / "starts.txt"
        second.log_starts(log)
        again = sweep_paths(
            [DATA], CONFIG, executor="dask", scheduler=second.address, store=tmp_path / "run", resume=True
        )
    finally:
        second.close()
    assert again.reused == len(judged) and not again.unjudged
    assert len(again.stages) == 6 and all(s.status == "pass" for s in again.stages)
    assert sum(_starts(log).values()) == 6 - len(judged), "only the unjudged were swept"


def test_the_client_killed_mid_run_then_resumed(cluster, tmp_path):
    run_dir = tmp_path / "run"
    log = tmp_path / "starts.txt"
    client = subprocess.Popen(
        [sys.executable, "-m", "mimic_ext", "sweep", str(DATA), "--executor", "dask", "--scheduler", cluster.address]
        # 60 s sweeps: each unit takes long enough that the client cannot store the rest between
        # this loop's look and its kill (with 20 s, a busy CI machine once stored all 6 in between)
        + ["--report", str(run_dir), "--sweep-seconds", str(LONG["sweep_seconds"]), "-q"],
        env=cluster.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        stored = 0
        while time.monotonic() < deadline and client.poll() is None:
            time.sleep(0.05)
            own = (run_dir / "results").rglob("mimic_ext/*/*.json") if (run_dir / "results").exists() else []
            stored = sum(1 for p in own if not p.name.startswith("."))  # not a write in progress
            if stored >= 2:
                client.send_signal(signal.SIGKILL)
                break
        client.wait(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
    assert 2 <= stored < 6, f"killed with {stored} of 6 stored"
    kept = {u["asset"] for u, st in stored_stages(run_dir) if st is not None}
    assert len(kept) >= 2
    cluster.log_starts(log)
    # the same configuration as the killed run: its stored results match and are reused
    again = sweep_paths([DATA], LONG, executor="dask", scheduler=cluster.client, store=run_dir, resume=True)
    assert again.reused == len(kept) and len(again.stages) == 6
    assert all(s.status == "pass" for s in again.stages)
    assert sum(_starts(log).values()) == 6 - len(kept), "only the unfinished were swept"


def test_the_dashboard_starts_with_the_dask_extra():
    """The dask extra brings bokeh: without it the scheduler serves no dashboard."""
    pytest.importorskip("bokeh", reason="bokeh (the dask extra) is not installed")
    import urllib.request

    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address="127.0.0.1:0") as lc:
        assert "dashboard" in lc.scheduler.services
        url = f"http://127.0.0.1:{lc.scheduler.http_server.port}/status"
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert resp.status == 200 and b"bokeh" in resp.read().lower()
