"""NVIDIA's phase inside the sweep's unit of work (``simready.verdicts.UnitPhase``): it runs where
the unit runs (here, a pool worker), its verdict is stored with the unit's result in the run
folder, and ``--resume`` reuses it without running the phase again, unless NVIDIA's test or
releases changed (``phase_key``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")
pytest.importorskip("simready_benchmark_kit_suite.articulation_phases.mimic_joint")
pytest.importorskip("simready_benchmark.runner.test_context")

from test_simready_adapter import soft_stage

from mimic_ext import cli
from mimic_ext.fet022 import batch
from mimic_ext.fet022 import identity as identity_module
from mimic_ext.fet022.batch import sweep_paths
from mimic_ext.fet022.result import SweepResult, finite_or_none
from mimic_ext.simready import phase, verdicts
from mimic_ext.simready.verdicts import UnitPhase, add_verdicts

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture
def calls(monkeypatch) -> list[str]:
    """Every run of NVIDIA's phase in this process, by stage (the real phase still runs)."""
    seen: list[str] = []
    real = phase.run_nvidia_mimic

    def counted(source, *args, **kwargs):
        seen.append(Path(str(source)).name)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(phase, "run_nvidia_mimic", counted)
    return seen


def _verdicts(run) -> list[tuple[str, str, str, str]]:
    """``add_verdicts`` on ``run`` (once: it appends), as (stage file, engine, status, message)."""
    add_verdicts(run)
    return [(Path(v["asset"]).name, v["engine"], v["status"], v["message"]) for v in run.simready]


def test_phase_runs_in_the_unit_and_resume_reuses_its_verdict(tmp_path, calls):
    """The phase runs once per unit during the sweep (add_verdicts then runs none); a resumed run
    takes both verdicts, a pass and NVIDIA's fail of the soft relation, from the run folder and
    runs the phase no more."""
    stages = [DATA / "geared_pair.usda", soft_stage(tmp_path)]
    first = sweep_paths(stages, jobs=1, store=tmp_path / "run", nvidia=UnitPhase())
    assert sorted(calls) == sorted(p.name for p in stages)
    assert all(st.nvidia is not None for st in first.stages)
    expected = _verdicts(first)
    assert sorted(calls) == sorted(p.name for p in stages)  # collected, not run again
    assert [v[2] for v in expected] == ["pass", "fail"]
    calls.clear()
    again = sweep_paths(stages, jobs=1, store=tmp_path / "run", resume=True, nvidia=UnitPhase())
    assert again.reused == 2 and calls == []
    assert _verdicts(again) == expected and calls == []
    assert finite_or_none(again.simready) == finite_or_none(first.simready)


def test_cli_resume_keeps_the_headline_and_run_folder(tmp_path, calls, capsys):
    """``mimic-ext sweep --report R`` then ``--resume R``: the same headline, exit code, JSON
    verdicts and Kit result.json, and the phase not run by the resumed command."""
    soft = soft_stage(tmp_path)
    rep = tmp_path / "rep"
    args = [str(DATA / "geared_pair.usda"), str(soft), "-q", "--jobs", "1"]
    assert cli.main(["sweep", *args, "--report", str(rep)]) == 1
    head = capsys.readouterr().out.splitlines()[0]
    assert head == "SimReady mimic_joint 1.1.0: fail (warp: 1 pass, 1 fail)"
    kit = sorted((rep / "results").rglob("mimic_joint/result.json"))
    before = [json.loads(p.read_text()) for p in kit]
    report = json.loads((rep / "fet022_report.json").read_text())["simready"]["verdicts"]
    assert len(calls) == 2
    calls.clear()
    assert cli.main(["sweep", *args, "--resume", str(rep)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == head
    assert calls == []
    assert json.loads((rep / "fet022_report.json").read_text())["simready"]["verdicts"] == report
    after = [json.loads(p.read_text()) for p in kit]
    assert [(k["status"], k["message"], k["mimic_ext"]["verdict_by"]) for k in after] == [
        (k["status"], k["message"], k["mimic_ext"]["verdict_by"]) for k in before
    ]
    assert {k["mimic_ext"]["verdict_by"] for k in after} == {"nvidia_phase"}


@pytest.mark.parametrize("change", ["tier-core release", "test version"])
def test_a_new_nvidia_release_runs_the_phase_again(tmp_path, calls, monkeypatch, change):
    """The stored verdict is keyed on NVIDIA's test (name, version) and the installed tier-core and
    simready-benchmark releases: either changed, ``--resume`` sweeps the unit again."""
    stage = [DATA / "geared_pair.usda"]
    sweep_paths(stage, jobs=1, store=tmp_path / "run", nvidia=UnitPhase())
    assert sweep_paths(stage, jobs=1, store=tmp_path / "run", resume=True, nvidia=UnitPhase()).reused == 1
    assert len(calls) == 1
    if change == "tier-core release":
        real = verdicts.installed_release
        monkeypatch.setattr(
            verdicts,
            "installed_release",
            lambda d: "2099.1.0" if d == "simready-foundation-tier-core" else real(d),
        )
    else:
        ident = identity_module.identity()
        newer = identity_module.TestIdentity(ident.name, "1.2.0", ident.features, "monkeypatched")
        monkeypatch.setattr(identity_module, "identity", lambda: newer)
    run = sweep_paths(stage, jobs=1, store=tmp_path / "run", resume=True, nvidia=UnitPhase())
    assert run.reused == 0 and len(calls) == 2
    assert run.stages[0].nvidia["verdict"]["status"] == "pass"


def test_no_simready_and_back(tmp_path, calls):
    """A run stored without NVIDIA's phase (--no-simready) has no verdict to reuse: resumed with
    the phase, its units are swept again; a run stored with it resumes without it as it is."""
    stage = [DATA / "geared_pair.usda"]
    sweep_paths(stage, jobs=1, store=tmp_path / "run")
    assert calls == []
    run = sweep_paths(stage, jobs=1, store=tmp_path / "run", resume=True, nvidia=UnitPhase())
    assert run.reused == 0 and len(calls) == 1
    plain = sweep_paths(stage, jobs=1, store=tmp_path / "run", resume=True)
    assert plain.reused == 1 and plain.stages[0].nvidia is None and len(calls) == 1


def test_a_phase_past_the_timeout_keeps_our_verdict(monkeypatch):
    """--timeout bounds the whole unit: our port's result (made instant here) is kept, NVIDIA's
    phase (made endless here) is interrupted and marked not run, never reused. 0.5 s: far above
    the instant port result, and the endless phase cannot finish within any bound."""
    port = SweepResult(asset="x.usda", status="pass", engine="warp", config={"physics_fps": 240.0})
    monkeypatch.setattr(batch, "_sweep", lambda *a, **k: port)
    monkeypatch.setattr(verdicts, "available", lambda: "")

    def endless(*a, **k):
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(verdicts, "_run_phase", endless)
    res = batch.sweep_one("x.usda", batch.SweepConfig(), "warp", {}, timeout=0.5, nvidia=UnitPhase())
    assert res is port and res.status == "pass"
    assert res.nvidia["verdict"]["status"] == "not_run" and not res.nvidia["reusable"]
    assert "NVIDIA's phase did not finish within the per-asset timeout of 0.5 s" in res.nvidia["verdict"]["message"]


@pytest.mark.slow
def test_a_pool_gives_the_verdicts_of_one_process(tmp_path, calls):
    """--jobs 2: the units (ours and NVIDIA's phase) run in the pool's workers, none of the phase
    here, and the verdicts are those of --jobs 1: the same statuses and messages, and NVIDIA's
    metrics equal to 1e-9 relative (the same CPU solver on the same input in another process; only
    a different summation order could move a last digit)."""
    stages = [DATA / "geared_pair.usda", soft_stage(tmp_path), DATA / "chain3.usda"]
    one = sweep_paths(stages, jobs=1, nvidia=UnitPhase())
    assert len(calls) == 3
    calls.clear()
    pool = sweep_paths(stages, jobs=2, nvidia=UnitPhase())
    assert pool.jobs == 2 and calls == []  # every phase ran in a worker
    add_verdicts(one)
    add_verdicts(pool)
    assert calls == []
    assert [(v["asset"], v["status"], v["message"]) for v in pool.simready] == [
        (v["asset"], v["status"], v["message"]) for v in one.simready
    ]
    for a, b in zip(one.simready, pool.simready, strict=True):
        assert a["metrics"].keys() == b["metrics"].keys()
        for name, value in a["metrics"].items():
            assert b["metrics"][name] == pytest.approx(value, rel=1e-9, abs=1e-12), name


@pytest.mark.slow
def test_dask_workers_run_the_phase(tmp_path, calls):
    """--executor dask: each Dask task is the whole unit, NVIDIA's phase included (none runs in
    the client), stored in the run folder as it finishes; the verdicts are those of a local run."""
    distributed = pytest.importorskip("distributed", reason="the dask extra (dask.distributed) is not installed")
    stages = [DATA / "geared_pair.usda", soft_stage(tmp_path)]
    expected = _verdicts(sweep_paths(stages, jobs=1, nvidia=UnitPhase()))
    calls.clear()
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc,
        distributed.Client(lc) as client,
    ):
        remote = sweep_paths(stages, executor="dask", scheduler=client, store=tmp_path / "run", nvidia=UnitPhase())
    assert calls == []
    assert _verdicts(remote) == expected
    again = sweep_paths(stages, jobs=1, store=tmp_path / "run", resume=True, nvidia=UnitPhase())
    assert again.reused == 2 and calls == []
    assert _verdicts(again) == expected


def test_a_killed_runs_report_has_nvidias_stored_verdicts(tmp_path, calls):
    """A client killed before the end records no verdicts in the manifest (``sweep`` does that
    last); ``mimic-ext report RUN`` then takes NVIDIA's verdicts from the stored units: the same
    headline and exit code as the finished run, the phase not run."""
    from mimic_ext.fet022.reports.catalogue import write_summaries
    from mimic_ext.fet022.store import manifest_path

    stages = [DATA / "geared_pair.usda", soft_stage(tmp_path)]
    sweep_paths(stages, jobs=1, store=tmp_path / "run", nvidia=UnitPhase())
    manifest = json.loads(manifest_path(tmp_path / "run").read_text())
    manifest.update(finished=None, run={})  # as begin() left it: the client killed after the last unit
    manifest_path(tmp_path / "run").write_text(json.dumps(manifest))
    calls.clear()
    out = write_summaries(tmp_path / "run")
    assert calls == [] and out["exit_code"] == 1
    data = json.loads((tmp_path / "run" / "fet022_report.json").read_text())
    assert data["simready"]["headline"] == ["SimReady mimic_joint 1.1.0: fail (warp: 1 pass, 1 fail)"]
    assert [v["status"] for v in data["simready"]["verdicts"]] == ["pass", "fail"]
    assert "SimReady mimic_joint 1.1.0: fail" in (tmp_path / "run" / "fet022_report.html").read_text()


def test_no_simready_runs_no_phase(calls, capsys):
    """``mimic-ext sweep --no-simready``: no unit runs NVIDIA's phase, and no headline."""
    assert cli.main(["sweep", str(DATA / "geared_pair.usda"), "--no-simready", "-q"]) == 0
    assert calls == [] and not capsys.readouterr().out.startswith("SimReady")
