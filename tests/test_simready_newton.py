"""NVIDIA's FET022 MIM phase (installed tier-core, unmodified) on Newton (``simready.newton_backend``).

Each run is NVIDIA's verdict on the model Newton's own ``add_usd`` reads, on its ``SolverSteel``.
Its pass rule is ``gear_ratio_error <= 0.10`` (its default ``gear_ratio_tolerance``)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("simready_benchmark_kit_suite.articulation_phases.mimic_joint")
pytest.importorskip("simready_benchmark.runner.test_context")
pytest.importorskip("newton")

from test_simready_adapter import ISAAC_ROBOTIQ, no_mimic_stage, soft_stage


@pytest.mark.slow
def test_isaac_robotiq_passes_on_newton(shared_assets):
    """The asset's own stiff drive (finger_joint, 172 N m/rad) moves the reference on Steel: on
    Featherstone the finger, resting on its lower limit under gravity, sagged past it where
    Featherstone switches the drive off, and every pair failed with the reference swept 0 rad."""
    from mimic_ext.simready import run_nvidia_mimic

    r = run_nvidia_mimic(shared_assets / ISAAC_ROBOTIQ, "newton")
    assert r.status == "pass", r.message or r.failure_details
    assert r.headline == "SimReady mimic_joint 1.1.0: pass"
    assert r.engine_version.startswith("newton ") and "SolverSteel" in r.engine_version
    assert r.metric("mim_mimic_pairs_detected") == 5 and r.metric("mim_pairs_passed") == 5
    # NVIDIA's own pass rule, on its own metric (its default tolerance 0.10)
    for name, m in r.metrics.items():
        if name.endswith("_gear_ratio_error"):
            assert m["value"] <= 0.10, name
    # the reference really moved: NVIDIA's sweep spans 90 % of finger_joint's 0..0.82 rad range
    assert r.metric("mim_pair_right_outer_knuckle_joint_ref_swept_rad") > 0.5


def test_newton_reads_a_physx_offset_in_degrees_as_radians(data_dir):
    """The geared pair's follower: PhysX's ``gearing -2, offset -5.729578`` (degrees) means
    ``q_f = 2 q_l + 0.1 rad``. Newton's ``add_usd`` stores ``coeffs (-offset, -gearing)`` with the
    number unconverted: 5.729578 rad. The adapter runs it so (Newton's finding) and says so."""
    from pxr import Usd

    from mimic_ext.simready.newton_backend import NewtonBackend

    b = NewtonBackend(Usd.Stage.Open(str(data_dir / "geared_pair.usda")), fix_base=True)
    labels = list(b.model.joint_label)
    follower = labels.index("/Gears/Joints/gear_follower")
    assert labels[int(b.model.joint_mimic_joint.numpy()[follower])] == "/Gears/Joints/gear_leader"
    c0, c1 = (float(c) for c in b.model.joint_mimic_coeffs.numpy()[follower])
    # float32 storage of USD's numbers: 1e-5 relative
    assert c1 == pytest.approx(2.0, rel=1e-5)
    assert c0 == pytest.approx(5.729578, rel=1e-5)  # the authored number, taken as radians
    assert abs(c0 - math.radians(5.729578)) > 5.0  # not the 0.1 rad the relation means
    assert any("offset read as 5.72958 rad" in n and "in degrees" in n for n in b.notes), b.notes
    assert sorted(b.dof_names) == ["gear_follower", "gear_leader"]


def test_very_soft_relation_fails_on_newton_for_its_offset(tmp_path):
    """Newton reads no naturalFrequency/dampingRatio (the 0.5 Hz relation is hard there) and the
    offset's degrees as radians: the mimic row then asks the follower for 5.7 rad against its
    limit rows (-120..130 deg), and the pair locks (reference swept 0 rad). Fail, as on the other
    engines, but for Newton's reading of the offset, not for the softness."""
    from mimic_ext.simready import run_nvidia_mimic

    r = run_nvidia_mimic(soft_stage(tmp_path), "newton")
    assert r.status == "fail"
    assert r.message.startswith("MIM: 1 of 1 mimic pair(s) failed the motion-magnitude check")
    assert r.metric("mim_pair_gear_follower_ref_swept_rad") < 1e-3  # locked, not lagging
    assert any("compliance ignored" in n and "offset read as 5.72958 rad" in n for n in r.notes), r.notes


def test_very_soft_relation_is_hard_on_newton(tmp_path):
    """The same stage with its offset 0 (nothing for Newton's importer to misread): the 0.5 Hz
    relation runs hard on Newton, so the follower keeps |gearing| 2 exactly and the phase passes,
    where warp, physx and mujoco fail it (ratio 0.39 to 0.58)."""
    from pxr import Usd

    from mimic_ext.simready import run_nvidia_mimic

    path = soft_stage(tmp_path)
    stage = Usd.Stage.Open(str(path))
    stage.GetPrimAtPath("/Gears/Joints/gear_follower").GetAttribute("physxMimicJoint:rotX:offset").Set(0.0)
    stage.GetRootLayer().Save()
    r = run_nvidia_mimic(path, "newton")
    assert r.status == "pass", r.message
    # a hard mimic row solved by PGS: measured 2.0000; 0.01 is far below the 1.2 a 0.5 Hz
    # spring-damper would lose and far inside NVIDIA's 0.10
    assert r.metric("mim_pair_gear_follower_motion_ratio") == pytest.approx(2.0, abs=0.01)
    assert any("compliance ignored: naturalFrequency 0.5" in n for n in r.notes), r.notes


def test_no_mimic_is_nvidias_skip_on_newton(tmp_path):
    from simready_benchmark_kit_suite.articulation_phases.mimic_joint import _msg_no_mimic_authored

    from mimic_ext.simready import run_nvidia_mimic

    r = run_nvidia_mimic(no_mimic_stage(tmp_path), "newton")
    assert r.status == "skipped" and r.message == _msg_no_mimic_authored("physx")
    assert r.failure_details == ""


def test_unresolvable_pairs_are_nvidias_skip_on_newton(data_dir):
    """Newton's importer drops a mimic whose reference names no joint (it warns; a note says so),
    as PhysX ignores it: NVIDIA's phase finds no DOF for the pair and skips with its message."""
    from mimic_ext.simready import run_nvidia_mimic

    r = run_nvidia_mimic(data_dir / "invalid" / "MIMIC_REFERENCE_NOT_FOUND.usda", "newton")
    assert r.status == "skipped"
    assert r.message.startswith("MIM: PhysxMimicJointAPI is applied on this asset (1 pair(s))")
    assert "NONE of them resolve to a live articulation DOF" in r.message
    assert any("dropped: Newton's model holds no mimic" in n for n in r.notes), r.notes


@pytest.mark.slow
def test_newton_sweep_has_nvidias_headline(data_dir, tmp_path, capsys):
    """``--engine newton``: NVIDIA's phase runs on Newton too (the adapter's newton backend), so
    the headline is its verdict there, not "not run"."""
    import json

    from mimic_ext import cli

    out = tmp_path / "r.json"
    assert (
        cli.main(["sweep", str(data_dir / "gripper_prismatic.usda"), "--engine", "newton", "-q", "--json", str(out)])
        == 0
    )
    assert capsys.readouterr().out.splitlines()[0] == "SimReady mimic_joint 1.1.0: pass"
    (verdict,) = json.loads(out.read_text())["simready"]["verdicts"]
    assert (verdict["engine"], verdict["status"]) == ("newton", "pass")
    assert verdict["engine_version"].startswith("newton ") and "SolverSteel" in verdict["engine_version"]
    assert verdict["metrics"]["mim_pairs_passed"] == 1
