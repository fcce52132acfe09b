"""The simready-benchmark run folder (mimic_ext.fet022.run_folder): same paths as the installed
simready-benchmark, Kit's result.json fields, and NVIDIA's reporter ingesting it."""

from __future__ import annotations

import json
import os

import pytest
from fet022_records import follower_record

from mimic_ext.fet022 import run_folder as rf
from mimic_ext.fet022.result import FAIL, PASS, FollowerResult, RunResult, SweepResult


def _follower(name: str, status: str, ratio_error: float) -> FollowerResult:
    f = follower_record(
        name, joints="/robot/joints", leader="ref", label="PhysxMimicJointAPI:rotZ", engine="warp", status=status
    )
    f.harness = {"motion_ratio": 1.0 + ratio_error, "gear_ratio_error": ratio_error, "max_error_rad": 0.01}
    if status == FAIL:
        f.messages.append(f"gear ratio error {ratio_error} > tolerance 0.1")
    return f


def _stage(asset: str, status: str) -> SweepResult:
    st = SweepResult(asset=asset, status=status, engine="warp")
    st.followers.append(_follower("fol", status, 0.5 if status == FAIL else 0.01))
    return st


def test_mirror_paths_equal_installed_layout(tmp_path):
    """The layout built without simready-benchmark equals the installed package's own helpers."""
    layout = pytest.importorskip("simready_benchmark.core.output_layout")
    from simready_benchmark.core.asset_key import asset_rel_key

    root = str(tmp_path / "content")
    asset = os.path.join(root, "robots", "g", "grip.usda")
    key = rf.asset_key(asset, root)
    assert key == asset_rel_key(asset, root) == "robots/g/grip.usda"
    out = str(tmp_path / "run")
    assert str(rf.result_path(out, key)) == layout.per_test_runtime_dir(out, key, "mimic_joint") + "/result.json"
    assert str(rf.plan_path(out)) == layout.plan_file(out)
    assert str(rf.run_summary_path(out)) == layout.run_summary_file(out)
    assert str(rf.report_dir(out)) == layout.report_dir(out)
    assert str(rf.results_dir(out)) == layout.results_dir(out)
    # the fallback mirror (used when simready-benchmark is absent) builds the same path
    asset_dir = key.rsplit("/", 1)[0]
    mirror = rf._join(out, rf.RESULTS_DIR, asset_dir, ".simready", "runtime", "mimic_joint")
    assert mirror == layout.per_test_runtime_dir(out, key, "mimic_joint")


def test_status_map_is_kits():
    assert {rf.kit_status(s) for s in ("pass", "fail", "skipped", "not_applicable", "error")} == {
        "pass",
        "fail",
        "skipped",
    }
    assert rf.kit_status("error") == "fail" and rf.kit_status("not_applicable") == "skipped"
    assert rf.kit_status("something new") == "fail"


def test_stage_kit_result_fields():
    st = _stage("/x/a.usda", FAIL)
    d = rf.stage_kit_result(st, "a.usda")
    assert d["status"] == "fail" and d["test_name"] == "mimic_joint" and d["test_version"] == "1.1.0"
    assert d["feature"] == "FET_022_PHYSX" and d["asset"] == "a.usda" and d["engine"] == "warp"
    assert "1 of 1 mimic pair(s) failed" in d["message"] and "fol" in d["message"]
    assert d["metrics"]["mim_pair_fol_max_error_rad"] == {"value": 0.01, "unit": "rad"}
    assert d["metrics"]["mim_pairs_failed"] == {"value": 1, "unit": None}
    assert all(set(w) == {"level", "message", "source"} for w in d["warnings"])
    json.dumps(d, allow_nan=False)


def test_reporter_ingests_run_folder(tmp_path):
    """NVIDIA's reporter reads a run folder with one passing and one failing asset, no warning,
    and its index lists feature, test, version, status and message per asset."""
    pytest.importorskip("simready_benchmark.reporter.reporter")
    import logging

    from simready_benchmark.reporter.reporter import Reporter

    content = tmp_path / "content"
    content.mkdir()
    good, bad = str(content / "good.usda"), str(content / "sub" / "bad.usda")
    run = RunResult(stages=[_stage(good, PASS), _stage(bad, FAIL)])
    out = tmp_path / "run"
    rf.write_run_folder(run, out)
    assert rf.result_path(out, "sub/bad.usda").is_file()
    assert rf.own_result_path(out, "sub/bad.usda", "warp").is_file()

    records: list[logging.LogRecord] = []

    class _Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    handler = _Keep(level=logging.WARNING)
    logging.getLogger("simready_benchmark").addHandler(handler)
    try:
        Reporter.generate(output_dir=str(out), fmt="both")
    finally:
        logging.getLogger("simready_benchmark").removeHandler(handler)
    assert [r.getMessage() for r in records] == []
    index = json.loads(rf.report_index_path(out).read_text())
    rows = _index_rows(index)
    assert rows["good.usda"] == ("FET_022_PHYSX", "mimic_joint", "1.1.0", "pass", "")
    feat, test, version, status, message = rows["sub/bad.usda"]
    assert (feat, test, version, status) == ("FET_022_PHYSX", "mimic_joint", "1.1.0", "fail")
    assert "mimic pair(s) failed" in message


def test_stages_sharing_a_folder_each_have_their_own_result(tmp_path):
    """NVIDIA's layout mirrors an asset's folder; data/'s samples share one. Each stage of a shared
    folder gets a runtime folder of its own (named by its file), and the reporter lists all of
    them under their real keys; a folder with one asset keeps NVIDIA's path."""
    pytest.importorskip("simready_benchmark.reporter.reporter")
    from simready_benchmark.reporter.reporter import Reporter

    assert rf.mirror_keys(["a.usda", "b.usda", "sub/c.usda"]) == {
        "a.usda": "a.usda/a.usda",
        "b.usda": "b.usda/b.usda",
        "sub/c.usda": "sub/c.usda",
    }
    content = tmp_path / "content"
    content.mkdir()
    one, two, alone = (str(content / n) for n in ("one.usda", "two.usda", "sub/alone.usda"))
    run = RunResult(stages=[_stage(one, PASS), _stage(two, FAIL), _stage(alone, PASS)])
    out = tmp_path / "run"
    rf.write_run_folder(run, out)
    assert rf.result_path(out, "sub/alone.usda").is_file()  # NVIDIA's own path
    Reporter.generate(output_dir=str(out), fmt="both")
    rows = _index_rows(json.loads(rf.report_index_path(out).read_text()))
    assert {k: v[3] for k, v in rows.items()} == {"one.usda": "pass", "two.usda": "fail", "sub/alone.usda": "pass"}


def _index_rows(index: dict) -> dict[str, tuple[str, str, str, str, str]]:
    """asset key -> (feature, test, version, status, message) from the reporter's index."""
    out = {}
    for key, asset in index["assets"].items():
        for profile in asset["profiles"]:
            for feat in profile["features"]:
                for t in feat["tests"]:
                    out[key] = (feat["id"], t["name"], t["version"], t["status"], t["message"])
    return out


def test_whose_verdict_decides_the_exit_code():
    """NVIDIA's verdict where its phase ran, ours where it did not; --strict: both; our error always."""
    from mimic_ext.fet022.result import ERROR

    ours_fail = _stage("/a.usda", FAIL)
    ours_pass = _stage("/b.usda", PASS)
    run = RunResult(stages=[ours_fail, ours_pass])
    assert run.decided_exit_code == 1  # nothing of NVIDIA's: ours decide
    run.simready = [
        {"asset": "/a.usda", "engine": "warp", "status": "pass"},
        {"asset": "/b.usda", "engine": "warp", "status": "pass"},
    ]
    assert run.decided_exit_code == 0  # NVIDIA passes both: our finding on a.usda does not decide
    run.strict = True
    assert run.decided_exit_code == 1
    run.strict = False
    run.simready[1]["status"] = "fail"
    assert run.decided_exit_code == 1  # NVIDIA fails b.usda, which our port passed
    run.simready = [{"asset": "/a.usda", "engine": "warp", "status": "not_run"}]
    assert run.decided_exit_code == 1  # not run: ours decide
    broken = SweepResult(asset="/c.usda", status=ERROR, engine="warp")
    run = RunResult(stages=[broken], simready=[{"asset": "/c.usda", "engine": "warp", "status": "skipped"}])
    assert run.decided_exit_code == 2  # a stage we could not sweep is never a pass


def test_headline_lines():
    """One line per engine; counts over several stages; an engine NVIDIA's phase did not run on says why."""
    from mimic_ext.fet022.reports.headline import findings_line, headlines

    run = RunResult(stages=[_stage("/a.usda", PASS), _stage("/b.usda", FAIL)])
    assert headlines(run) == [] and "our port's verdicts decide" in findings_line(run)
    run.simready = [
        {"asset": "/a.usda", "engine": "warp", "status": "pass"},
        {"asset": "/b.usda", "engine": "warp", "status": "skipped"},
        {"asset": "/a.usda", "engine": "mujoco", "status": "not_run", "message": "not on mujoco"},
    ]
    assert headlines(run) == [
        "SimReady mimic_joint 1.1.0: pass (warp: 1 pass, 1 skipped)",
        "SimReady mimic_joint 1.1.0: not run (mujoco: not on mujoco)",
    ]
    run.simready = run.simready[:1]
    assert headlines(run) == ["SimReady mimic_joint 1.1.0: pass"]


def test_our_own_results_have_one_layout_whoever_writes_them(tmp_path):
    """Review of 37/38: the run store nested our per-unit JSON by the asset's file name while
    ``write_run_folder`` put it under the mirrored key; one function names it now. Two stages of
    one folder each have their own file, where the store reads it back."""
    from mimic_ext.fet022.store import RunStore

    content = tmp_path / "content"
    content.mkdir()
    run = RunResult(stages=[_stage(str(content / "one.usda"), PASS), _stage(str(content / "two.usda"), FAIL)])
    out = tmp_path / "run"
    rf.write_run_folder(run, out)
    store = RunStore(out, str(content))
    paths = {key: store.own_path(key, "warp") for key in ("one.usda", "two.usda")}
    assert paths == {key: rf.own_result_path(out, key, "warp") for key in paths}
    assert {key: json.loads(p.read_text())["status"] for key, p in paths.items()} == {
        "one.usda": PASS,
        "two.usda": FAIL,
    }
