"""The FET022 sweep on Newton 1.8 (Featherstone, CPU), which reads the stage with its own importer.

Newton takes PhysxMimicJointAPI's numbers unconverted (an offset in degrees as radians, a
gearing in m/deg as m/rad) and ignores compliance: these tests make each of those show.
Skipped without the ``newton`` extra; CI installs it through the ``test`` extra. Newton's
Featherstone kernels compile on first use (minutes on a cold cache, then cached).
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("newton", reason="the newton engine needs the newton extra: pip install 'mimic-ext[newton]'")
pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from fet022_engines_common import DATA, INSPIRE, Recording, import_to
from pxr import Usd, UsdGeom
from test_fet022_physics import loaded_follower

import mimic_ext.schema as schema
from mimic_ext.errors import MimicInputError
from mimic_ext.fet022 import get_engine, run
from mimic_ext.fet022.config import SweepConfig

#: A quarter-second settle and a one-second sweep: enough to show where a follower sits and
#: how it moves, at 300 Newton steps instead of the default 720 (CI time).
SHORT = SweepConfig(settle_seconds=0.25, sweep_seconds=1.0)
DEG = math.pi / 180


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def inspire(tmp_path_factory):
    """The Inspire hand imported with PhysxMimicJointAPI, swept on warp and on Newton."""
    stage = import_to(tmp_path_factory.mktemp("inspire"), INSPIRE, "physx", self_collisions=False)
    newton = Recording(get_engine("newton"))
    return run(stage, SHORT, engine="warp"), run(stage, SHORT, engine=newton), newton.trace, stage


def test_newton_reads_the_inspire_physx_offset_in_degrees_as_radians(inspire):
    _, _, trace, stage = inspire
    authored = {_name(r.follower): r for r in schema.read_relations(Usd.Stage.Open(str(stage)))}
    read = {_name(r.follower): r for r in trace.relations}
    offset_followers = [n for n, r in authored.items() if r.offset != 0]
    assert sorted(offset_followers) == [
        "index_intermediate_joint",
        "middle_intermediate_joint",
        "pinky_intermediate_joint",
        "ring_intermediate_joint",
    ]
    for name in offset_followers:
        physx_offset_deg = float(authored[name].authored["offset"])  # +2.60409 deg = -(-0.04545 rad)
        assert physx_offset_deg == pytest.approx(0.04545 / DEG, rel=1e-5)
        # Newton: coef0 = -offset, the degrees used as radians: -2.604 rad instead of -0.04545 rad
        assert read[name].offset == pytest.approx(-physx_offset_deg, rel=1e-6)
        assert read[name].note.startswith("offset read as")
        # the multiplier is unitless between two revolute joints, so it is read right
        assert read[name].multiplier == pytest.approx(authored[name].multiplier, rel=1e-6)
    for name in ("thumb_intermediate_joint", "thumb_distal_joint"):  # offset 0: nothing to misread
        assert read[name].offset == 0 and read[name].note == ""


def test_on_newton_the_inspire_fingers_are_dragged_against_their_limits(inspire):
    """Newton holds the misread relation exactly, so the ratio rule alone passes; each finger's
    follower sits 2.56 rad from where the authored relation puts it, past its lower limit, and
    that limit drags the finger's reference up to the top of its travel, where it stays while
    the target goes back down. The thumb (no offset) on the same engine and drive returns.
    On warp every follower tracks, with no rest-offset warning."""
    warp, newton, _, _ = inspire
    for f in warp.followers:
        assert f.status == "pass" and not [w for w in f.warnings if "rest offset" in w], f.name
    fingers = [f for f in newton.followers if f.offset != 0]
    thumb = [f for f in newton.followers if f.offset == 0]
    assert len(fingers) == 4 and len(thumb) == 2
    for f in thumb:
        assert f.status == "pass" and not [w for w in f.warnings if "rest offset" in w]
        assert abs(f.sample_reference[-1]) < 0.05 * max(map(abs, f.sample_reference))  # came back
    for f in fingers:
        # the harness's ratio rule passes (the reduction is exact): the offset warning is what shows it
        assert f.status == "fail" or [w for w in f.warnings if "rest offset mismatch" in w], f.name
        assert f.rest_offset_error > 2.5  # rad: 2.604 - 0.04545 misread
        assert abs(f.sample_reference[-1]) > 0.95 * max(map(abs, f.sample_reference))  # stayed up


def test_newton_ignores_natural_frequency_and_damping_ratio():
    """A compliant relation (naturalFrequency 2, dampingRatio 1) that cannot hold a 5 kg arm:
    our solver lets it sag and fails it; Newton holds it hard, so its verdict is not applicable
    (it cannot represent a compliant mimic joint), not the pass its hard relation would give."""
    stage, _, follower = loaded_follower(2.0)
    warp = run(stage, engine="warp").followers[0]
    newton = Recording(get_engine("newton"))
    on_newton = run(stage, engine=newton).followers[0]
    assert warp.status == "fail"
    assert on_newton.status == "not_applicable"
    assert "simulates this compliant relation (naturalFrequency, dampingRatio) as a hard one" in on_newton.messages[0]
    (rel,) = newton.trace.relations
    assert rel.follower == follower and rel.hard
    assert "compliance ignored: naturalFrequency 2 and dampingRatio 1 are not read" in rel.note


def test_newton_reads_a_mixed_unit_gearing_unconverted():
    """rack_and_pinion: PhysX gearing -0.02*pi/180 m/deg (0.02 m/rad); Newton takes 0.000349 m/rad."""
    (rel,) = get_engine("newton").relations_read(Usd.Stage.Open(str(DATA / "rack_and_pinion.usda")))
    assert rel.multiplier == pytest.approx(0.02 * DEG, rel=1e-5)
    assert "multiplier read as" in rel.note


def test_newton_refuses_mimic_chains_with_one_line():
    """A chain is a feature Newton lacks: not applicable, with Newton's reason; exit code 0."""
    result = run(DATA / "chain3.usda", engine="newton")
    assert result.status == "not_applicable" and result.exit_code == 0
    assert {f.status for f in result.followers} == {"not_applicable"}
    assert (
        "Newton refuses mimic chains" in result.reason
        and "/Chain/Joints/joint_c follows /Chain/Joints/joint_b" in result.reason
    )


def test_newton_solver_choice_and_its_errors():
    assert get_engine("newton:xpbd").solver == "xpbd"
    assert get_engine("newton").solver == "featherstone"
    with pytest.raises(MimicInputError, match="unknown solver 'semi'"):
        get_engine("newton", solver="semi")


@pytest.mark.slow
def test_newton_sweeps_mujoco_usd_converter_output(tmp_path):
    """NVIDIA's mujoco-usd-converter writes each follower with MjcEqualityJointAPI beside
    NewtonMimicAPI; Newton 1.8's add_usd then stores the relation only as a legacy constraint_mimic
    entry, which Featherstone does not read (on main: motion ratio 0, the follower never moves). The
    engine sets it as a joint mimic with Newton's own coefficients and says so."""
    import subprocess
    import sys

    from fet022_engines_common import FRANKA, shared

    # in its own process: its schemas (MjcSceneAPI) must register before any stage is opened
    probe = subprocess.run([sys.executable, "-c", "import mujoco_usd_converter"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("mujoco-usd-converter does not import here: " + (probe.stderr.strip().splitlines() or [""])[-1])
    conv = subprocess.run(
        [sys.executable, "-m", "mujoco_usd_converter", str(shared(FRANKA)), str(tmp_path / "hand")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert conv.returncode == 0, conv.stderr[-2000:]
    (stage,) = (tmp_path / "hand").glob("*.usda")
    newton = Recording(get_engine("newton"))
    result = run(stage, config=SHORT, engine=newton)
    (f,) = result.followers
    assert result.status == "pass", f.messages
    # 0.01: the bar; a hard joint mimic tracks its reference to float round-off (measured 0)
    assert abs(f.motion_ratio - 1.0) < 0.01
    assert any("legacy constraint_mimic" in n and "set_joint_mimic" in n for n in newton.trace.notes)
    (read,) = newton.trace.relations
    assert read.multiplier == pytest.approx(1.0) and read.note.startswith("legacy relation")


def _gears_beside_a_ball_joint() -> Usd.Stage:
    """data/geared_pair.usda (NewtonMimicAPI beside its PhysX relation, as Newton reads it right)
    with a second body hung on its base by a spherical joint, which Newton orders before the
    gears: its 4 coordinates and 3 DOFs put the leader at joint_q 5 but joint_qd 4."""
    import dataclasses

    from pxr import Gf, UsdPhysics

    stage = Usd.Stage.Open(Usd.Stage.Open(str(DATA / "geared_pair.usda")).Flatten())
    pod = UsdGeom.Xform.Define(stage, "/Gears/pod")
    pod.AddTranslateOp().Set(Gf.Vec3d(0, 0, 0.02))  # on the base's origin: the pivot is its centre of mass
    UsdPhysics.RigidBodyAPI.Apply(pod.GetPrim())
    mass = UsdPhysics.MassAPI.Apply(pod.GetPrim())
    mass.CreateMassAttr(1.0)
    mass.CreateDiagonalInertiaAttr(Gf.Vec3f(0.01, 0.01, 0.01))
    ball = UsdPhysics.SphericalJoint.Define(stage, "/Gears/Joints/a_ball")
    ball.CreateBody0Rel().SetTargets(["/Gears/base"])
    ball.CreateBody1Rel().SetTargets(["/Gears/pod"])
    (physx,) = schema.read_relations(stage)
    schema.set_relation(stage, dataclasses.replace(physx, schema="newton", instance=None))
    return stage


@pytest.mark.slow
def test_newton_targets_follow_the_coordinates_not_the_dofs():
    """Review of 43: the engine wrote the swept joint's target at its DOF index (joint_qd_start);
    Newton reads ``joint_target_q`` by coordinate (``joint_target_q_start`` is ``joint_q_start``).
    With a ball joint first the leader's target landed in the ball's quaternion: it never moved
    (motion 0 of the planned 1.676 rad). Motion ratio 2 within 1e-3 (Newton's hard mimic holds it
    to 4e-8 here; the sweep's own pass tolerance is 0.1, so this also says the follower tracked)."""
    result = run(_gears_beside_a_ball_joint(), engine="newton")
    assert result.status == "pass", [(f.label, f.messages) for f in result.followers]
    assert all(abs(f.motion_ratio - 2.0) < 1e-3 for f in result.followers)
