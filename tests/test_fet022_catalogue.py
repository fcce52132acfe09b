"""Catalogue runs without a cluster: the run folder as the results store, resume, the per-asset
timeout, the automatic pool decision, the rebuilt summaries. (Dask: test_fet022_dask.py.)"""

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from mimic_ext import cli
from mimic_ext.errors import MimicInputError
from mimic_ext.fet022 import batch
from mimic_ext.fet022.batch import sweep_paths
from mimic_ext.fet022.result import SweepResult
from mimic_ext.fet022.store import read_manifest, stored_stages

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TWO = [DATA / "chain3.usda", DATA / "geared_pair.usda"]


def _summary(run):
    return [
        (Path(s.asset).name, s.engine, s.status, [(f.name, f.status, f.motion_ratio) for f in s.followers])
        for s in run.stages
    ]


def test_a_small_folder_stays_in_this_process(monkeypatch):
    """Issue 43/38: the automatic decision started ``fastest`` at infinity, so any run of two or more
    stages went to a process pool before one stage was measured. Two stages: after the first, one
    is left, and one stage never pays for a pool, whatever the first one took."""
    monkeypatch.setattr(batch.os, "cpu_count", lambda: 4)
    started = []
    monkeypatch.setattr(batch, "_run_pool", lambda *a, **k: started.append(a))
    run = sweep_paths(TWO)
    assert not started and run.jobs == 1
    assert [s.status for s in run.stages] == ["pass", "pass"]


def test_jobs_with_dask_is_refused():
    with pytest.raises(MimicInputError, match="--jobs is for the local executor"):
        sweep_paths(TWO, executor="dask", scheduler="tcp://127.0.0.1:1", jobs=2)


def test_each_result_is_stored_as_it_finishes_and_reads_back_the_same(tmp_path):
    seen = []

    def progress(done, total, res):
        # the unit just reported is on disk before the next one starts
        seen.append(sum(1 for _, st in stored_stages(tmp_path / "run") if st is not None))

    run = sweep_paths(TWO, jobs=1, store=tmp_path / "run", progress=progress)
    assert seen == [1, 2]
    stored = [st for _, st in stored_stages(tmp_path / "run")]
    assert [(s.asset, s.status) for s in stored] == [(s.asset, s.status) for s in run.stages]
    # the samples live in the run folder, not in the run's results
    assert all(f.sample_reference for s in stored for f in s.followers)
    assert not any(f.sample_reference for s in run.stages for f in s.followers)
    # the stored numbers are the swept ones, exactly (JSON keeps a float's 17 digits)
    assert [[f.motion_ratio for f in s.followers] for s in stored] == [
        [f.motion_ratio for f in s.followers] for s in run.stages
    ]
    manifest = read_manifest(tmp_path / "run")
    assert manifest["finished"] and [u["asset"] for u in manifest["units"]] == [str(p) for p in TWO]


def test_resume_reuses_only_what_still_matches(tmp_path):
    cat = tmp_path / "cat"
    cat.mkdir()
    for p in TWO:
        shutil.copy(p, cat / p.name)
    first = sweep_paths([cat], jobs=1, store=tmp_path / "run")
    assert first.reused == 0
    again = sweep_paths([cat], jobs=1, store=tmp_path / "run", resume=True)
    assert again.reused == 2 and _summary(again) == _summary(first)
    # an edited stage, a changed configuration: swept again
    (cat / "chain3.usda").write_text((cat / "chain3.usda").read_text() + "\n", encoding="utf-8")
    edited = sweep_paths([cat], jobs=1, store=tmp_path / "run", resume=True)
    assert edited.reused == 1
    other = sweep_paths([cat], {"gear_ratio_tolerance": 0.2}, jobs=1, store=tmp_path / "run", resume=True)
    assert other.reused == 0


def test_resume_sees_an_edited_sublayer(tmp_path):
    """The content hash covers the composed layers, not only the file named."""
    (tmp_path / "robot.usda").write_text("#usda 1.0\n(\n    subLayers = [@./body.usda@]\n)\n", encoding="utf-8")
    shutil.copy(DATA / "geared_pair.usda", tmp_path / "body.usda")
    first = sweep_paths([tmp_path / "robot.usda"], jobs=1, store=tmp_path / "run")
    assert first.stages[0].status == "pass"
    assert sweep_paths([tmp_path / "robot.usda"], jobs=1, store=tmp_path / "run", resume=True).reused == 1
    (tmp_path / "body.usda").write_text((tmp_path / "body.usda").read_text() + "\n", encoding="utf-8")
    assert sweep_paths([tmp_path / "robot.usda"], jobs=1, store=tmp_path / "run", resume=True).reused == 0


def test_a_unit_past_its_timeout_has_its_own_status(tmp_path):
    """A timeout far below one sweep (about 0.1-1 s on this machine for chain3: 0.001 s cannot be
    met); the stored timeout is not reused by --resume."""
    run = sweep_paths([TWO[0]], jobs=1, timeout=0.001, store=tmp_path / "run")
    st = run.stages[0]
    assert st.status == "timeout" and "timeout of 0.001 s" in st.reason and run.exit_code == 2
    assert sweep_paths([TWO[0]], jobs=1, store=tmp_path / "run", resume=True, timeout=0.001).reused == 0


def test_a_stored_result_round_trips():
    run = sweep_paths([TWO[0]], jobs=1)
    st = run.stages[0]
    back = SweepResult.from_dict(json.loads(json.dumps(st.to_dict())))
    assert back.to_dict() == st.to_dict()


def test_report_rebuilds_the_summaries_from_the_run_folder(tmp_path, capsys, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    from mimic_ext.fet022.reports import catalogue, load_schema

    run_dir = tmp_path / "run"
    assert cli.main(["sweep", *map(str, TWO), "--report", str(run_dir), "-q", "-j", "1"]) == 0
    first = json.loads((run_dir / "fet022_report.json").read_text())
    for name in catalogue.NAMES.values():
        (run_dir / name).unlink()
    monkeypatch.setattr(catalogue, "INLINE_ASSETS", 0)  # as a catalogue: the index has no plots
    assert cli.main(["report", str(run_dir)]) == 0
    assert "2 stage run(s): 2 pass" in capsys.readouterr().out
    data = json.loads((run_dir / "fet022_report.json").read_text())
    jsonschema.validate(data, load_schema())
    strip = lambda d: {k: v for k, v in d.items() if k not in ("created", "catalogue")}  # noqa: E731
    assert strip(data) == strip(first)
    assert not any("samples" in f for s in data["stages"] for f in s["followers"])  # in the per-asset files
    index = (run_dir / "fet022_report.html").read_text()
    assert "<svg" not in index
    assert set(re.findall(r'href="(fet022_assets/\d+\.html)"', index)) == {
        f"fet022_assets/0000{i}.html" for i in (0, 1)
    }
    page = (run_dir / "fet022_assets" / "00000.html").read_text()
    assert '<svg class="ratio-plot"' in page  # the plots are on the asset's own page


@pytest.mark.parametrize("simready", [[], ["--no-simready"]], ids=["nvidia-phase", "no-simready"])
def test_a_sweep_writes_each_run_folder_file_once(tmp_path, monkeypatch, simready):
    """Review of 37/38: plan.json was written by the store and again at the end, the manifest three
    times (begin, finish, NVIDIA's verdicts) and each Kit result.json by the store and again at the
    end. Every write goes through ``atomic_write._write_temporary``; counted there. The manifest is
    written twice on purpose: before the first unit (a killed run can still be reported) and at the
    end."""
    from mimic_ext import atomic_write

    counts: dict[str, int] = {}
    real = atomic_write._write_temporary

    def counting(shown, *args, **kwargs):
        counts[str(shown)] = counts.get(str(shown), 0) + 1
        return real(shown, *args, **kwargs)

    monkeypatch.setattr(atomic_write, "_write_temporary", counting)
    run_dir = tmp_path / "run"
    assert cli.main(["sweep", *map(str, TWO), "--report", str(run_dir), "-q", "-j", "1", *simready]) == 0
    written = {str(Path(p).relative_to(run_dir)): n for p, n in counts.items()}
    assert written.pop("mimic_ext_run.json") == 2
    kit = [p for p in written if p.endswith("/result.json") and p.startswith("results/")]
    assert len(kit) == 2 and {"plan.json", "run_summary.json", "fet022_report.json"} <= set(written)
    assert {p: n for p, n in written.items() if n != 1} == {}


def test_cli_resume_sweeps_only_what_changed(tmp_path, capsys):
    cat = tmp_path / "cat"
    cat.mkdir()
    for p in TWO:
        shutil.copy(p, cat / p.name)
    run_dir = tmp_path / "run"
    assert cli.main(["sweep", str(cat), "--report", str(run_dir), "-q", "-j", "1"]) == 0
    capsys.readouterr()
    (cat / "chain3.usda").write_text((cat / "chain3.usda").read_text() + "\n", encoding="utf-8")
    assert cli.main(["sweep", str(cat), "--resume", str(run_dir), "-j", "1"]) == 0
    captured = capsys.readouterr()
    assert "reused 1 stored result(s)" in captured.out
    assert re.findall(r"^\[1/1\] .*chain3.usda", captured.err, re.M), "only the edited stage was swept"


def test_a_file_a_worker_cannot_see_is_said_so_and_swept_again_on_resume(tmp_path):
    """What a Dask worker without the client's file system returns: the environment is named, the
    asset is not blamed, and the result is not reused."""
    res = batch.sweep_on_worker(str(tmp_path / "only_on_the_client.usda"), batch.SweepConfig(), "warp", {}, None)
    assert res.status == "error" and "not found on Dask worker" in res.reason and "same absolute paths" in res.reason
    assert res.details == batch.ENVIRONMENT_DETAILS


def test_failure_reasons_are_counted_once_across_assets():
    """The index counts causes, not assets: the asset's path (relative or absolute), prim paths and
    numbers are taken out."""
    from mimic_ext.fet022.reports.catalogue import reason_class

    a = reason_class("cannot simulate /cat/a/robot.usda: /R/J physics:mass = 1.5 is not finite", "a/robot.usda")
    b = reason_class("cannot simulate b/robot.usda: /Q/K physics:mass = -2e3 is not finite", "b/robot.usda")
    assert a == b == "cannot simulate <asset>: <path> physics:mass = # is not finite"


def test_progress_lines_count_verdicts_and_give_rate_and_eta(capsys, monkeypatch):
    from mimic_ext.fet022.commands import Progress

    show = Progress()
    clock = iter([10.0, 20.0])  # 10 s and 20 s after the start: 1 then 2 units done
    monkeypatch.setattr(show, "clock", lambda: next(clock))
    show.start = 0.0
    show(1, 4, SweepResult(asset="a.usda", status="pass", engine="warp"))
    show(2, 4, SweepResult(asset="b.usda", status="fail", engine="warp"))
    lines = capsys.readouterr().err.splitlines()
    assert (
        lines[0].startswith("[1/4] a.usda [warp]: PASS")
        and "so far 1 pass, 0 fail, 0 error; 6.0/min, ETA 30s" in lines[0]
    )
    assert "so far 1 pass, 1 fail, 0 error; 6.0/min, ETA 20s" in lines[1]
