"""The public harness's MIM metrics and result.json, checked against its formulas written out here.

The formulas below are the harness's own (``simready_benchmark_kit_suite``,
``articulation_phases/mimic_joint.py``, ``run_mimic_joint``), written again from its
definitions and applied to the positions the sweep sampled; nothing here calls
``mimic_ext.fet022.harness``.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from solver_stages import StageBuilder

import mimic_ext.schema  # noqa: F401
from mimic_ext import cli
from mimic_ext.fet022 import run
from mimic_ext.fet022.bbox import explosion
from mimic_ext.schema import MimicRelation, set_relation

ROOT = Path(__file__).resolve().parents[1]
ROBOTIQ = (
    ROOT.parent
    / "shared"
    / "assets"
    / "robotiq_isaacsim_usd_2f85"
    / "Gripper_2F85"
    / "configuration"
    / "Robotiq_2F_85_config_physics_parallel_grip.usda"
)
PAIR = (
    "max_error_rad",
    "mean_error_rad",
    "ref_swept_rad",
    "follower_observed_rad",
    "follower_expected_rad",
    "dir_matches_gear",
    "motion_ratio",
    "gear_ratio_error",
    "abs_formula_max_error_rad",
    "rest_residual_rad",
)


def harness_by_hand(f) -> dict:
    """run_mimic_joint's numbers for one follower, from the sampled positions (revolute pair: rad)."""
    deg = math.pi / 180.0
    ref = (np.array(f.sample_reference) + f.reference_start) * deg
    fol = (np.array(f.sample_follower) + f.follower_start) * deg
    gear, offset = f.gearing, f.offset * deg
    ref_rest, fol_rest = ref[0], fol[0]
    err = np.abs((fol - fol_rest) - (gear * (ref - ref_rest) + offset))
    ref_swept, fol_swept = ref.max() - ref.min(), fol.max() - fol.min()
    ratio = fol_swept / ref_swept if ref_swept > 1e-9 else 0.0
    ref_delta = ref_swept if ref[0] < (ref.min() + ref.max()) / 2 else -ref_swept
    fol_delta = fol_swept if fol[0] < (fol.min() + fol.max()) / 2 else -fol_swept
    match = (1.0 if gear >= 0 else -1.0) == (1.0 if fol_delta * ref_delta >= 0 else -1.0)
    return {
        "max_error_rad": err.max(),
        "mean_error_rad": err.mean(),
        "ref_swept_rad": ref_swept,
        "follower_observed_rad": fol_swept,
        "follower_expected_rad": abs(gear) * ref_swept,
        "dir_matches_gear": 1 if match else 0,
        "motion_ratio": ratio,
        "gear_ratio_error": abs(ratio - abs(gear)),
        "abs_formula_max_error_rad": np.abs(fol - (gear * ref + offset)).max(),
        "rest_residual_rad": abs(fol_rest - (gear * ref_rest + offset)),
    }


@pytest.fixture(scope="module")
def robotiq():
    if not ROBOTIQ.is_file():
        pytest.skip(f"shared Robotiq asset not present at {ROBOTIQ}")
    return run(ROBOTIQ)


def test_robotiq_harness_metrics_follow_the_harness_formulas(robotiq):
    assert len(robotiq.followers) == 5
    for f in robotiq.followers:
        expected = harness_by_hand(f)
        got = {k: f.metrics[f"mim_pair_{f.name}_{k}"] for k in PAIR}
        assert got["dir_matches_gear"] == expected["dir_matches_gear"] and isinstance(got["dir_matches_gear"], int)
        for k in PAIR:
            # 1e-9 rad: the samples go through a deg round trip in float64 (about 1e-14 rad);
            # the margin only absorbs that, any formula difference would be >= 1e-4 here
            assert got[k] == pytest.approx(expected[k], abs=1e-9), (f.name, k)
        # the verdict is the harness's: |motion_ratio - |gearing|| <= 0.10
        assert (f.status == "pass") == (expected["gear_ratio_error"] <= 0.10)
    m = robotiq.metrics
    assert (m["mim_mimic_pairs_detected"], m["mim_skipped_pairs"], m["mim_pairs_passed"], m["mim_pairs_failed"]) == (
        5,
        0,
        5,
        0,
    )
    assert all(
        isinstance(m[k], int)
        for k in ("mim_mimic_pairs_detected", "mim_skipped_pairs", "mim_pairs_passed", "mim_pairs_failed")
    )


def test_robotiq_sign_rules_disagree_on_every_physx_follower(robotiq):
    """PhysX gearing +1/-1 on every follower: the harness's rule expects the opposite direction of
    PhysX's equation on each, and our direction (PhysX) is "match" while the harness says 0."""
    for f in robotiq.followers:
        notes = [n for n in f.notes if n.startswith("sign rules disagree")]
        assert len(notes) == 1 and f.direction == "match" and f.dir_matches_gear == 0
        assert f"gearing {f.gearing:g}" in notes[0]


def test_result_json_per_stage_in_the_harness_layout(tmp_path, capsys):
    if not ROBOTIQ.is_file():
        pytest.skip(f"shared Robotiq asset not present at {ROBOTIQ}")
    assert cli.main(["sweep", str(ROBOTIQ), "--report", str(tmp_path / "rep"), "-q"]) == 0
    out = capsys.readouterr().out
    path = tmp_path / "rep" / "result" / ROBOTIQ.stem / "warp" / "result.json"
    assert f"wrote {path}" in out
    data = json.loads(path.read_text())
    assert data["test"] == "mimic_joint" and data["status"] == "pass" and data["engine"] == "warp"
    metrics = data["metrics"]
    assert all(not isinstance(v, (dict, list)) for v in metrics.values()), "the metrics map is flat"
    assert metrics["mim_mimic_pairs_detected"] == 5 and metrics["mim_pairs_failed"] == 0
    report = json.loads((tmp_path / "rep" / "fet022_report.json").read_text())
    for f in run(ROBOTIQ).followers:
        expected = harness_by_hand(f)
        for k in PAIR:
            assert metrics[f"mim_pair_{f.name}_{k}"] == pytest.approx(expected[k], abs=1e-9)  # as above
        assert f"mim_pair_{f.name}_fit_slope" in metrics  # ours, under a name of our own
    assert report["stages"][0]["metrics"] == {
        k: v
        for k, v in metrics.items()
        if not k.endswith(
            (
                "_fit_slope",
                "_fit_ratio_error",
                "_ratio_error_relative",
                "_relation_max_error",
                "_dir_convention",
                "_bbox_volume_ratio",
                "_offset_error_start",
                "_offset_error_end",
            )
        )
    }
    levels = {m["level"] for m in data["messages"]}
    assert levels <= {"info", "warning", "fail", "skip", "error"} and "info" in levels  # the sign notes


def test_sign_rule_note_exactly_where_the_rules_disagree():
    """Three followers of one leader: PhysX gearing -1 (harness: against, PhysX: with), PhysX
    gearing +0.5 (harness: with, PhysX: against) and Newton coef1 1 (both: with)."""
    b = StageBuilder(fixed_base=True)
    lead = b.body("lead", 1.0, (0.01, 0.01, 0.01), pos=(0, 0.3, 0))
    jl = b.revolute("leader", b.base, lead, "Z", (-40, 40), (0, 0.3, 0))
    b.drive(jl, 1.0, 0.05)
    followers = {}
    for i, (name, mult, schema) in enumerate(
        (("px_with", 1.0, "physx"), ("px_against", -0.5, "physx"), ("newton_with", 1.0, "newton"))
    ):
        body = b.body(name, 1.0, (0.01, 0.01, 0.01), pos=(0, -0.3 * (i + 1), 0))
        j = b.revolute(name, b.base, body, "Z", (-60, 60), (0, -0.3 * (i + 1), 0))
        set_relation(
            b.stage,
            MimicRelation(
                follower=j, leader=jl, multiplier=mult, schema=schema, instance="rotX" if schema == "physx" else None
            ),
        )
        followers[name] = j
    result = run(b.stage)
    assert result.status == "pass"
    noted = {f.name for f in result.followers if any(n.startswith("sign rules disagree") for n in f.notes)}
    assert noted == {"px_with", "px_against"}
    by = {f.name: f for f in result.followers}
    assert [by[n].direction for n in ("px_with", "px_against", "newton_with")] == ["match"] * 3
    assert [by[n].dir_matches_gear for n in ("px_with", "px_against", "newton_with")] == [0, 0, 1]


def test_bounding_box_check_by_hand():
    """Two bodies 1 m apart, each holding geometry of radius 0.1 m: start box 1.2 x 0.2 x 0.2 m."""
    start = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    flown = np.array([[0.0, 0.0, 0.0], [1.0, 3.0, 3.0]])  # the second flies off diagonally
    pos = {"/a": np.stack([start[0], start[0], flown[0]])[None], "/b": np.stack([start[1], start[1], flown[1]])[None]}
    radii = {"/a": 0.1, "/b": 0.1}
    boom = explosion(pos, radii, 0, 10.0)
    # volumes: 1.2*0.2*0.2 = 0.048 m^3, then 1.2*3.2*3.2 = 12.288 m^3: 256 times (1e-9: round-off)
    assert boom.ratio == pytest.approx(256.0, abs=1e-9) and boom.sample == 2
    assert explosion(pos, radii, 0, 300.0).sample is None
    assert explosion(pos, {"/a": 0.0, "/b": 0.0}, 0, 10.0).why_not.startswith("no body carries geometry")


def test_bounding_box_of_a_real_sweep_stays_put_and_says_when_it_cannot_run(robotiq):
    geared = run(ROOT / "data" / "geared_pair.usda")
    for f in geared.followers:
        # two gears turning on fixed axes: the box of their geometry spheres does not change
        # (1e-6: the float32 solver state)
        assert f.bbox_volume_ratio == pytest.approx(1.0, abs=1e-6)
        assert not [w for w in f.warnings if "bounding box" in w]
    for f in robotiq.followers:  # its meshes are missing: nothing to bound
        assert math.isnan(f.bbox_volume_ratio)
        assert any(n.startswith("bounding-box explosion check not run: no body carries geometry") for n in f.notes)
