"""Console, JSON (against its schema), JUnit XML and HTML reports, from hand-made results.

Formatting only: the numbers here are invented. The same reporters run on real sweeps
in test_fet022_physics.py.
"""

import json
import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from fet022_records import follower_record

from mimic_ext.fet022.config import SweepConfig
from mimic_ext.fet022.reports import (
    format_console,
    format_html,
    load_schema,
    to_json_data,
    write_html,
    write_json,
    write_junit,
)
from mimic_ext.fet022.result import ReferenceResult, RunResult, SweepResult

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def _follower(name, status="pass", ratio=1.0, gearing=-1.0, direction="match", warnings=(), messages=(), engine="warp"):
    t = [i * 0.0417 for i in range(49)]
    ref = [40 * math.sin(math.pi * i / 48) for i in range(49)]
    # the harness's measures of these invented samples (harness_pair's definitions, by hand)
    harness = {
        "max_error_rad": 0.01,
        "mean_error_rad": 0.005,
        "ref_swept_rad": math.radians(40),
        "follower_observed_rad": abs(ratio) * math.radians(40),
        "follower_expected_rad": abs(gearing) * math.radians(40),
        "dir_matches_gear": 1 if (ratio > 0) == (gearing >= 0) else 0,
        "motion_ratio": abs(ratio),
        "gear_ratio_error": abs(abs(ratio) - abs(gearing)),
        "abs_formula_max_error_rad": 0.01,
        "rest_residual_rad": 0.0,
    }
    return follower_record(
        name,
        joints="/Robot/Joints",
        leader="leader",
        gearing=gearing,
        status=status,
        measured_ratio=ratio,
        motion_ratio=abs(ratio),
        ratio_error=abs(abs(ratio) - abs(gearing)),
        ratio_error_relative=abs(abs(ratio) - abs(gearing)) / abs(gearing),
        relation_max_error=0.01,
        harness=harness,
        engine=engine,
        direction=direction,
        rest_offset=0.0,
        rest_offset_error=0.0,
        samples_used=45,
        reference_excursion=40.0,
        warnings=list(warnings),
        messages=list(messages),
        sample_t=t,
        sample_reference=ref,
        sample_follower=[ratio * r for r in ref],
    )


def _run() -> RunResult:
    cfg = SweepConfig().to_dict()
    good = SweepResult(asset="data/good & <odd>.usda", config=cfg, engine="warp", num_envs=1, timings={"total_s": 0.25})
    good.references.append(
        ReferenceResult(
            path="/Robot/Joints/leader",
            kind="revolute",
            unit="deg",
            lo=0,
            hi=40,
            range_source="limits",
            drive_source="authored",
            stiffness=100,
            damping=1,
            excursion=40,
            followers=[],
        )
    )
    good.followers = [
        _follower("f_ok"),
        _follower("f_bad", status="fail", ratio=0.5, messages=["motion ratio 0.5 differs from |gearing| 1"]),
        _follower("f_rev", ratio=-1.0, direction="reversed", warnings=["direction mismatch: moves against"]),
    ]
    good.settle_status()
    skipped = SweepResult(
        asset="data/plain.usda",
        status="skipped",
        reason="no joint carries PhysxMimicJointAPI",
        config=cfg,
        engine="warp",
        timings={"total_s": 0.01},
    )
    broken = SweepResult(
        asset="data/broken.usda",
        status="error",
        reason="data/broken.usda: cannot be read as USD",
        config=cfg,
        engine="warp",
        timings={"total_s": 0.0},
    )
    return RunResult(
        stages=[good, skipped, broken], config=cfg, versions={"mimic_ext": "0.1.0"}, wall_seconds=0.5, jobs=2
    )


def test_console_table_and_summary():
    text = format_console(_run())
    lines = text.splitlines()
    header = next(line for line in lines if "motion ratio" in line)
    for col in ("follower", "reference", "|gearing|", "motion ratio", "fit slope", "error", "direction", "status"):
        assert col in header
    row = next(line for line in lines if line.strip().startswith("f_bad"))
    assert "0.5" in row.split() and row.rstrip().endswith("FAIL")  # absolute error 0.5 (the default mode)
    assert "REVERSED" in next(line for line in lines if line.strip().startswith("f_rev"))
    # the console says "match" where HTML and JSON do
    assert "match" in next(line for line in lines if line.strip().startswith("f_ok")).split()
    assert "data/plain.usda: SKIPPED (no joint carries PhysxMimicJointAPI)" in text
    assert "data/broken.usda: ERROR" in text
    assert lines[-1].startswith("FET022 mimic_joint: ERROR: 3 stage(s): 0 pass, 1 fail, 1 skipped, 1 error")


def test_json_validates_and_carries_the_harness_metrics(tmp_path):
    run = _run()
    path = write_json(run, tmp_path / "r.json")
    data = json.loads(path.read_text())
    jsonschema.validate(data, load_schema())
    assert data["status"] == "error" and data["exit_code"] == 2
    stage = data["stages"][0]
    assert len(stage["followers"]) == 3
    m = stage["metrics"]
    assert m["mim_pair_f_bad_motion_ratio"] == 0.5 and m["mim_pair_f_bad_gear_ratio_error"] == 0.5
    # the harness's sign rule: gearing -1 expects "against"; f_rev moves against, f_ok with
    assert m["mim_pair_f_rev_dir_matches_gear"] == 1 and m["mim_pair_f_ok_dir_matches_gear"] == 0
    assert m["mim_pair_f_ok_max_error_rad"] == 0.01
    assert (m["mim_mimic_pairs_detected"], m["mim_skipped_pairs"], m["mim_pairs_passed"], m["mim_pairs_failed"]) == (
        3,
        0,
        2,
        1,
    )
    assert stage["extra_metrics"]["mim_pair_f_ok_fit_slope"] == 1.0
    assert len(stage["followers"][0]["samples"]["t"]) == 49
    assert data["stages"][1]["status"] == "skipped" and data["stages"][1]["followers"] == []


def test_json_schema_has_teeth():
    data = to_json_data(_run())
    schema = load_schema()
    broken = json.loads(json.dumps(data))
    broken["stages"][0]["followers"][0]["status"] = "passed"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    broken = json.loads(json.dumps(data))
    broken["stages"][0]["metrics"]["motion_ratio_of_f"] = 1.0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    broken = json.loads(json.dumps(data))
    del broken["stages"][0]["followers"][1]["measured_ratio"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_nan_becomes_null_in_json():
    run = _run()
    run.stages[0].followers[0].measured_ratio = float("nan")
    text = json.dumps(to_json_data(run), allow_nan=False)  # would raise on NaN
    assert '"measured_ratio": null' in text


def _junit_checks(root: ET.Element) -> None:
    suites = root.findall("testsuite")
    assert root.tag == "testsuites" and len(suites) == 3
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("5", "1", "1", "1")
    good = suites[0]
    cases = good.findall("testcase")
    assert [c.get("name") for c in cases] == [f"/Robot/Joints/{n}" for n in ("f_ok", "f_bad", "f_rev")]
    assert cases[1].find("failure").get("message").startswith("motion ratio 0.5")
    assert good.find("properties/property[@name='mim_pairs_failed']").get("value") == "1"
    assert cases[0].find("failure") is None and "direction mismatch" in cases[2].find("system-out").text
    assert suites[1].find("testcase/skipped") is not None and len(suites[1].findall("testcase")) == 1
    assert suites[2].find("testcase/error").get("message").endswith("cannot be read as USD")


def test_junit_structure_with_the_standard_library(tmp_path):
    path = write_junit(_run(), tmp_path / "j.xml")
    _junit_checks(ET.parse(path).getroot())


def test_junit_parses_with_junitparser(tmp_path):
    junitparser = pytest.importorskip("junitparser")
    path = write_junit(_run(), tmp_path / "j.xml")
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 3
    good = suites[0]
    assert (good.tests, good.failures, good.errors, good.skipped) == (3, 1, 0, 0)
    results = {case.name: [type(r).__name__ for r in case.result] for case in good}
    assert results == {"/Robot/Joints/f_ok": [], "/Robot/Joints/f_bad": ["Failure"], "/Robot/Joints/f_rev": []}
    assert [type(r).__name__ for case in suites[1] for r in case.result] == ["Skipped"]
    assert [type(r).__name__ for case in suites[2] for r in case.result] == ["Error"]


def test_html_is_self_contained_and_escaped():
    html = format_html(_run())
    assert "<script" not in html.lower()
    # no resource is fetched: no src= at all, and the only URLs are the SVG namespace declarations
    assert not re.search(r"\ssrc\s*=", html, re.I)
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    assert urls == {"http://www.w3.org/2000/svg"}
    assert "good &amp; &lt;odd&gt;.usda" in html and "<odd>" not in html
    assert html.count('<svg class="ratio-plot"') == 3
    assert html.count('class="follower-row"') == 3
    assert 'class="tolerance-band"' in html and 'class="expected-line"' in html


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not exe:
        pytest.skip("chromium is not on PATH")
    return exe


def render_in_chromium(html_path: Path, tmp_path: Path, screenshot: Path | None = None) -> str:
    """The DOM chromium builds from the page (and optionally a screenshot): proof it renders."""
    exe = _chromium()
    base = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
    ]
    dom = subprocess.run(
        base + [f"--user-data-dir={tmp_path / 'chromium-dom'}", "--dump-dom", html_path.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        shot = subprocess.run(
            base
            + [
                f"--user-data-dir={tmp_path / 'chromium-shot'}",
                f"--screenshot={screenshot}",
                "--window-size=1200,1600",
                html_path.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shot.returncode == 0, shot.stderr[-2000:]
        assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return dom.stdout


def test_html_renders_in_headless_chromium(tmp_path):
    page = write_html(_run(), tmp_path / "report.html")
    dom = render_in_chromium(page, tmp_path, ARTIFACTS / "fet022_report_handmade.png")
    assert dom.count('class="follower-row"') == 3
    assert len(re.findall(r'<svg class="ratio-plot"', dom)) == 3
    assert len(re.findall(r"<circle ", dom)) == 3 * 49
    assert 'id="summary"' in dom


def test_two_engine_html_renders_with_overlaid_plots(tmp_path):
    """Two engine columns of hand-made results; the screenshot is kept for a person to look at."""
    run = _run()
    other = SweepResult(
        asset=run.stages[0].asset,
        config=run.config,
        engine="other",
        num_envs=1,
        timings={"total_s": 0.2},
        references=list(run.stages[0].references),
    )
    other.followers = [
        _follower("f_ok", ratio=0.98, engine="other"),
        _follower("f_bad", status="fail", ratio=0.55, engine="other", messages=["ratio 0.55"]),
        _follower("f_rev", ratio=-1.02, direction="reversed", engine="other"),
    ]
    other.settle_status()
    run.stages.insert(1, other)
    page = write_html(run, tmp_path / "two.html")
    dom = render_in_chromium(page, tmp_path, ARTIFACTS / "fet022_report_two_engines.png")
    assert dom.count('<table class="conformance">') == 1
    assert dom.count('class="cell" data-engine="warp"') == dom.count('class="cell" data-engine="other"') == 3
    assert dom.count('<g class="samples" data-engine="other"') == 3  # overlaid on the warp plots


def test_html_text_is_whole_tokens_and_plain_values():
    html = format_html(_run())
    assert "break-all" not in html  # words and numbers never split mid-token
    assert re.search(r"td\.num\{[^}]*white-space:nowrap", html)
    config = html[html.index('<table class="config">') : html.index("</table>", html.index('<table class="config">'))]
    assert "True" not in config and "{" not in config and '<th>fix_base</th><td class="num">true</td>' in config
    assert "<th>test_drive.angular_stiffness</th>" in config
    # the references table says what the numbers are: authored limits, then the planned sweep range
    assert "<th>limits</th><th>swept range</th>" in html and "limits less the margin" in html


def test_plot_axes_hold_both_tolerance_bands():
    """The opposite-direction band is drawn whole, not clipped to a dash at the plot's edge."""
    html = format_html(_run())
    for poly in re.findall(r'class="tolerance-band-mirror"[^>]*points="([^"]+)"', html):
        ys = [float(p.split(",")[1]) for p in poly.split()]
        # plot area: y from 14 to 256 (svg.TOP, H - BOTTOM); 0.01 px: the printed precision
        assert min(ys) >= 14 - 0.01 and max(ys) <= 256 + 0.01
        assert max(ys) - min(ys) > 100, "the band spans the plot"


def test_mixed_pair_gearing_carries_its_unit():
    f = _follower("slider")
    f.follower_unit = "stage units"
    html = format_html(SweepResult(asset="a.usda", followers=[f], engine="warp", config=SweepConfig().to_dict()))
    assert "1 stage units/deg" in html
    assert "1 stage units/deg" in format_console(
        SweepResult(asset="a.usda", followers=[f], engine="warp", config=SweepConfig().to_dict())
    )


def _two_engines() -> RunResult:
    """One stage on three engines: warp and physx agree; newton misreads the offset (fails its offset
    check, reads c -2.6 rad); mujoco cannot represent the relation (not applicable)."""
    cfg = SweepConfig().to_dict()
    stages = []
    for engine in ("warp", "physx", "newton", "mujoco"):
        st = SweepResult(asset="data/hand.usda", config=cfg, engine=engine, num_envs=1, timings={"total_s": 0.1})
        f = _follower("f", engine=engine)
        f.read_relation = {
            "follower": f.follower,
            "leader": f.reference,
            "multiplier": 1.0,
            "offset": -2.6 if engine == "newton" else -0.045,
            "hard": True,
            "note": "",
        }
        f.offset_error_start = f.offset_error_end = 2.56 if engine == "newton" else 1e-5
        if engine == "newton":
            f.status, f.messages = "fail", ["offset check: at the start of the sweep the follower is 2.56 rad off"]
        if engine == "mujoco":
            f.status, f.messages = "not_applicable", ["not applicable: mujoco cannot represent it"]
        st.followers = [f]
        st.settle_status()
        stages.append(st)
    return RunResult(stages=stages, config=cfg, versions={"mimic_ext": "0.1.0"}, wall_seconds=0.4, jobs=1)


def test_not_applicable_and_disagreements_in_every_report(tmp_path):
    run = _two_engines()
    assert [s.status for s in run.stages] == ["pass", "pass", "fail", "not_applicable"]
    assert run.exit_code == 1 and run.stages[3].exit_code == 0  # not applicable is not a failure
    # console: the disagreement section names the engines, the values and the cause
    text = format_console(run)
    assert "disagreements (2;" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("newton vs the others (warp, physx)"))
    assert "verdict newton fail, warp pass, physx pass" in line and "likely cause: units read" in line
    line = next(x for x in text.splitlines() if "mujoco vs the others" in x)
    assert "missing schema or feature" in line and "mujoco cannot represent it" in line
    assert "1 not applicable" in text.splitlines()[-1]
    # JSON: valid against the schema, with the same two entries
    data = to_json_data(run)
    jsonschema.validate(data, load_schema())
    causes = {tuple(d["engines"]): d["cause"] for d in data["disagreements"]}
    assert causes == {
        ("newton", "warp", "physx"): "units read",
        ("mujoco", "warp", "physx", "newton"): "missing schema or feature",
    }
    # JUnit: not applicable is skipped with its reason
    path = write_junit(run, tmp_path / "r.xml")
    case = next(tc for tc in ET.parse(path).getroot().iter("testcase") if tc.get("name").endswith("[mujoco]"))
    assert case.find("skipped").get("message") == "not applicable: mujoco cannot represent it"
    # HTML: the disagreement table
    html = format_html(run)
    assert '<table class="disagreements">' in html and "units read" in html and "NOT_APPLICABLE" in html


def test_junit_has_one_suite_per_stage_and_engine_named_by_both(tmp_path):
    """Issue 43/38: suites were named ``mimic_joint: <asset>skipped`` (a loop variable reused) and the
    engines of one stage shared a name; CI tools merge suites of one name."""
    junitparser = pytest.importorskip("junitparser")
    two = _two_engines()
    run = RunResult(stages=two.stages + _run().stages[1:], config=two.config, jobs=1)
    xml = junitparser.JUnitXml.fromfile(str(write_junit(run, tmp_path / "j.xml")))
    names = [suite.name for suite in xml]
    assert names == [
        "mimic_joint: data/hand.usda [warp]",
        "mimic_joint: data/hand.usda [physx]",
        "mimic_joint: data/hand.usda [newton]",
        "mimic_joint: data/hand.usda [mujoco]",
        "mimic_joint: data/plain.usda [warp]",
        "mimic_joint: data/broken.usda [warp]",
    ]
    assert len(set(names)) == len(names)


def _noted(asset: str, engine: str, notes: list[str]) -> SweepResult:
    st = SweepResult(asset=asset, config=SweepConfig().to_dict(), engine=engine, num_envs=1, timings={"total_s": 0.1})
    st.followers = [_follower("f", engine=engine)]
    st.warnings = list(notes)
    st.settle_status()
    return st


SOLREF = "mimic joint equalities use solref (0.00833 s, 1), twice MuJoCo's time step"
NO_DRIVE = "/Robot/Joints/leader has no position drive: the sweep's test drive was written on it"


@pytest.mark.parametrize("engines", [("mujoco",), ("warp", "mujoco")])
def test_a_note_an_engine_leaves_on_every_stage_is_said_once(engines):
    """Issue 43: an engine's note about itself (MuJoCo's solref and integrator) was printed under
    each of ten stages. A note it leaves on every stage is said once after the stages, naming the
    engine and the count; one about a stage stays under that stage."""
    stages = []
    for asset in ("a.usda", "b.usda", "c.usda"):
        for engine in engines:
            notes = [SOLREF] if engine == "mujoco" else []
            if asset == "b.usda":
                notes.append(f"{asset}: 2 composition error(s)")
            stages.append(_noted(asset, engine, notes))
    run = RunResult(stages=stages, config=SweepConfig().to_dict(), versions={}, wall_seconds=0.1, jobs=1)
    text = format_console(run)
    assert text.count(SOLREF) == 1, text
    tag = " [mujoco]" if len(engines) > 1 else ""
    assert f"\nnote{tag} (each of 3 stages): {SOLREF}" in text
    assert text.count("b.usda: 2 composition error(s)") == 1  # one stage's own: under it, per engine merged
    block_b = text[text.index("b.usda: PASS") :]
    assert "composition error(s)" in block_b.split("\n\n")[0]
    # a note on one stage of one engine is not said for the run
    one = format_console(RunResult(stages=[_noted("a.usda", "mujoco", [SOLREF])], config=SweepConfig().to_dict()))
    assert f"  note: {SOLREF}" in one and "each of" not in one


def test_a_missing_drive_is_one_line_per_joint_naming_the_engines():
    """Issue 43: the "no position drive" note was printed per engine and joint; on one stage it is
    one line naming the engines that wrote the test drive."""
    stages = [_noted("h.usda", e, [NO_DRIVE]) for e in ("warp", "physx", "newton")]
    stages[0].warnings = []  # our engine drives the plan's test drive without writing the stage
    text = format_console(RunResult(stages=stages, config=SweepConfig().to_dict(), versions={}, wall_seconds=0.1))
    assert text.count("has no position drive") == 1, text
    assert f"  note [physx, newton]: {NO_DRIVE}" in text


@pytest.mark.parametrize("strict", [False, True])
def test_the_catalogue_decides_the_exit_code_by_the_runs_rule(strict):
    """Review of 38: the catalogue's tally repeated ``RunResult.decided_exit_code``'s rule; both
    now call ``result.decided_exit_code``. Every status against every NVIDIA verdict (none, pass,
    fail), one stage per asset: the tally's code is the run's."""
    from mimic_ext.fet022.reports.catalogue import _Tally

    for status in ("pass", "fail", "skipped", "not_applicable", "error", "timeout"):
        for verdict in (None, "pass", "fail"):
            st = SweepResult(asset="a.usda", status=status, engine="warp")
            run = RunResult(stages=[st], strict=strict)
            if verdict is not None:
                run.simready = [{"asset": "a.usda", "engine": "warp", "status": verdict}]
            tally = _Tally(["warp"], nvidia={("a.usda", "warp"): verdict} if verdict else {}, strict=strict)
            tally.add("a.usda", 0, {"warp": st})
            assert tally.decided == run.decided_exit_code, (status, verdict)
