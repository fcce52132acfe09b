"""The validator: every code on its sample, clean samples and real assets, and the tricky rules."""

import math
from pathlib import Path

import pytest
from pxr import Gf, Sdf, Usd, UsdPhysics
from shared_files import ROOT, load_samples

from mimic_ext.errors import MimicInputError
from mimic_ext.schema import MimicRelation, open_stage, read_relations, set_relation
from mimic_ext.schema.validation import CODES, ERROR, INFO, SEVERITIES, SIMREADY, WARNING, Finding, validate

ROBOTIQ = "robotiq_isaacsim_usd_2f85"
REAL_ASSETS = [
    f"{ROBOTIQ}/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_parallel_grip.usda",
    f"{ROBOTIQ}/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_compliant.usda",
    f"{ROBOTIQ}/Gripper_2F85_newton/Robotiq_2F85_newton.usda",
]
#: infos a valid sample is built to show (everything else must be silent)
EXPECTED_INFOS = {"chain3.usda": {("MIMIC_CHAIN", "/Chain/Joints/joint_c")}}


samples = load_samples()


def codes(findings, severities=SEVERITIES):
    return {f.code for f in findings if f.severity in severities}


#: samples of what a validation target adds (a host's, or SimReady's), checked with that target
SAMPLE_TARGET = {"MIMIC_NO_JOINT_STATE": SIMREADY, "MIMIC_HOST_NOT_COUPLED": "isaacsim-5"}


def validate_file(path):
    return validate(open_stage(path).stage, target=SAMPLE_TARGET.get(Path(path).stem))


# ------------------------------------------------------------------ the catalogue


def test_codes_catalogue_is_complete_and_well_formed():
    # 24, the two of one schema per follower, extreme gearing, non-finite mass, unknown property, the two
    # of hosts, joint state, inertia triangle
    assert len(CODES) == 33
    for code, (severity, description) in CODES.items():
        assert code.startswith("MIMIC_") and code.isupper()
        assert severity in SEVERITIES and description and "\n" not in description
    assert CODES["MIMIC_INSTANCE_NAME"][0] == WARNING and CODES["MIMIC_CHAIN"][0] == INFO
    assert CODES["MIMIC_CONTRADICTION"][0] == ERROR
    assert CODES["MIMIC_BOTH_SCHEMAS"][0] == WARNING and CODES["MIMIC_SCHEMAS_DISAGREE"][0] == ERROR


def test_finding_is_frozen():
    f = Finding(ERROR, "MIMIC_ZERO_GEARING", "/A", "gearing is 0")
    with pytest.raises(AttributeError):
        f.code = "x"  # type: ignore[misc]
    assert str(f) == "error MIMIC_ZERO_GEARING /A: gearing is 0"


@pytest.mark.parametrize("code", sorted(CODES))
def test_each_code_fires_on_its_invalid_sample(code, data_dir):
    path = data_dir / "invalid" / f"{code}.usda"
    assert path.exists(), f"no sample for {code}: add it to data/make_samples.py"
    findings = validate(open_stage(path).stage, target=SAMPLE_TARGET.get(code))
    assert code in codes(findings)
    # minimal: no other error or warning than the one the sample is about
    assert codes(findings, (ERROR, WARNING)) <= {code}
    for f in findings:
        assert f.severity == CODES[f.code][0]
        assert f.path.startswith("/") and len(f.message) > 20 and "\n" not in f.message


def test_every_invalid_sample_is_for_a_known_code(data_dir):
    names = {p.stem for p in (data_dir / "invalid").glob("*.usda") if not p.name.startswith(".")}
    assert names == set(CODES)


def test_valid_samples_are_clean(data_dir):
    files = sorted(p for p in data_dir.glob("*.usda") if not p.name.startswith("."))  # not a save in progress
    assert {"gripper_prismatic.usda", "geared_pair.usda", "chain3.usda", "robotiq_style_linkage.usda"} <= {
        p.name for p in files
    }
    for path in files:
        findings = validate_file(path)
        assert [f for f in findings if f.severity != INFO] == [], (path.name, findings)
        assert {(f.code, f.path) for f in findings} == EXPECTED_INFOS.get(path.name, set()), path.name


@pytest.mark.parametrize("rel_path", REAL_ASSETS)
def test_real_assets_have_no_errors(rel_path, shared_assets):
    path = shared_assets / rel_path
    if not path.exists():
        pytest.skip(f"{path} not present")
    opened = open_stage(path)
    assert opened.composition_errors  # the missing payloads really are missing: we validate anyway
    findings = validate(opened.stage)
    assert [f for f in findings if f.severity == ERROR] == []


def test_findings_are_sorted_errors_first_then_path():
    stage, r, foll, lead = samples.pair("ordering", follower_limits=None)
    # a second follower with an error, on a path sorting after the first
    r.body("link_z", (0.3, 0, 0.12), (0.08, 0.02, 0.02), 0.1)
    z = r.revolute("z_follower", "/Robot/base", "/Robot/link_z", (-30, 30))
    set_relation(stage, MimicRelation(z, lead, 1.0))
    stage.GetPrimAtPath(z).GetAttribute("physxMimicJoint:rotX:gearing").Set(0.0)
    findings = validate(stage)
    assert [(f.severity, f.path) for f in findings] == [(ERROR, z), (WARNING, foll)]


# ------------------------------------------------------------------ follower drives


def test_any_gain_on_a_follower_drive_fights_the_coupling():
    """Passive damping too: PhysX's mimic row then competes with a velocity drive towards 0 (NVIDIA's
    DJ.006 "joint is mimic but has damping set"); on main it passed silently. Gainless is fine."""
    stage, r, foll, lead = samples.pair("damped follower")
    samples.add_drive(stage.GetPrimAtPath(foll), "angular", 0.0, 0.0, 10.0)  # gainless: no force
    assert validate(stage) == []
    drive = UsdPhysics.DriveAPI(stage.GetPrimAtPath(foll), "angular")
    drive.CreateDampingAttr(0.05)  # passive damping, targets 0
    (f,) = validate(stage)
    assert f.code == "MIMIC_FOLLOWER_DRIVE" and "damping 0.05" in f.message and lead in f.message
    drive.CreateDampingAttr(0.0)
    drive.CreateStiffnessAttr(1.0)  # any stiffness pulls it to its own target
    (f,) = validate(stage)
    assert f.code == "MIMIC_FOLLOWER_DRIVE" and "stiffness 1 " in f.message


def test_joint_state_is_asked_for_by_the_simready_target_only():
    """NVIDIA's DJ.002 (essential in FET_022_STANDARD) wants PhysicsJointStateAPI; PhysX does not."""
    stage, r, foll, lead = samples.pair("no joint state")
    assert validate(stage) == []
    found = validate(stage, target=SIMREADY)
    assert {(f.code, f.path) for f in found} == {("MIMIC_NO_JOINT_STATE", foll), ("MIMIC_NO_JOINT_STATE", lead)}
    for path in (foll, lead):
        prim = stage.GetPrimAtPath(path)
        prim.AddAppliedSchema("PhysicsJointStateAPI:angular")
    assert validate(stage, target=SIMREADY) == []
    with pytest.raises(ValueError, match="unknown validation target"):
        validate(stage, target="kit")


def test_inertia_triangle_is_a_warning_naming_the_body_and_rounding_is_not():
    """MuJoCo refuses A + B < C (the Ability hand's base did); a flat plate (A + B = C, float32
    round-off) is a real body and passes. Tolerance: 4 float32 eps of C."""
    stage, r, foll, lead = samples.pair("inertia")
    body = stage.GetPrimAtPath("/Robot/link_follower")
    attr = body.GetAttribute("physics:diagonalInertia")
    attr.Set(Gf.Vec3f(1e-4, 2e-4, 3e-4))  # a plate: equality
    assert validate(stage) == []
    attr.Set(Gf.Vec3f(1e-4, 2e-4, 3.01e-4))
    (f,) = validate(stage)
    assert f.code == "MIMIC_INERTIA_TRIANGLE" and f.path == "/Robot/link_follower" and "A + B >= C" in f.message


# MJCF files whose follower carries joint damping, which the importer writes as a
# zero-stiffness drive (right for PhysX); and one whose follower has a position actuator.
DAMPED_FOLLOWERS = ["menagerie_franka_hand/hand.xml", "menagerie_robotiq_2f85/2f85.xml"]
STIFF_FOLLOWER = "menagerie_trossen_wx250s/wx250s.xml"


def _follower_drives(stage):
    out = []
    for rel in read_relations(stage):
        prim = stage.GetPrimAtPath(rel.follower)
        for name in ("angular", "linear"):
            if prim.HasAPI(UsdPhysics.DriveAPI, name):
                d = UsdPhysics.DriveAPI(prim, name)
                out.append((d.GetStiffnessAttr().Get() or 0.0, d.GetDampingAttr().Get() or 0.0))
    return out


@pytest.mark.parametrize("rel_path", DAMPED_FOLLOWERS)
def test_imported_files_with_damped_followers_pass_strict_validation(rel_path, shared_assets, tmp_path, capsys):
    from mimic_ext.cli import main
    from mimic_ext.importers import import_robot

    out = tmp_path / "robot.usda"
    result = import_robot(shared_assets / rel_path, out=out)
    drives = _follower_drives(result.stage)
    # the case under test: the source damps every follower; the import leaves their drives gainless
    # (the damping went to the leaders, NVIDIA's DJ.004 / DJ.006 refuse damping on a follower)
    assert drives and all(k == 0 and d == 0 for k, d in drives), drives
    assert any("keep no drive gains" in w for w in result.warnings), result.warnings
    assert main(["validate", "--strict", str(out)]) == 0, capsys.readouterr().out


def test_imported_follower_servo_drives_its_leader(shared_assets):
    """The wx250s's gripper servo (kp 200) acts on left_finger, which follows right_finger with
    multiplier -1: the import moves it to the leader as (-1)^2 * 200 towards (0 - 0) / -1 and
    leaves the follower gainless, so our validator and NVIDIA's have nothing to say."""
    from mimic_ext.importers import import_robot

    result = import_robot(shared_assets / STIFF_FOLLOWER)
    assert _follower_drives(result.stage) == [(0.0, 0.0)]
    leader = UsdPhysics.DriveAPI(result.stage.GetPrimAtPath(result.joint_paths["right_finger"]), "linear")
    assert leader.GetStiffnessAttr().Get() == pytest.approx(200.0, rel=1e-6)  # float32
    assert leader.GetTargetPositionAttr().Get() == 0.0
    assert not [f for f in validate(result.stage) if f.severity != INFO]


# ------------------------------------------------------------------ tricky rules


def _d6_pair(locked: tuple[str, ...], reference_axis="rotX", leader_d6=False, leader_locked=()):
    """Leader revolute (or D6) and a D6 follower with ``locked`` DOFs (LimitAPI low > high)."""
    stage = samples.new_stage("d6")
    r = samples.Robot(stage, "/Robot")
    base = r.body("base", (0, 0, 0.05), (0.3, 0.1, 0.1), 1.0)
    ll = r.body("link_leader", (-0.1, 0, 0.12), (0.08, 0.02, 0.02), 0.1)
    lf = r.body("link_follower", (0.1, 0, 0.12), (0.08, 0.02, 0.02), 0.1)
    r.fixed_base(base)

    def d6(name, child, locked_dofs):
        joint = UsdPhysics.Joint.Define(stage, r.joint_path(name))
        r.place_joint(joint, base, child, r.positions[child], samples.IDENTITY)
        for dof in locked_dofs:
            lim = UsdPhysics.LimitAPI.Apply(joint.GetPrim(), dof)
            lim.CreateLowAttr(1.0)
            lim.CreateHighAttr(-1.0)
        return str(joint.GetPath())

    lead = d6("leader", ll, leader_locked) if leader_d6 else r.revolute("leader", base, ll, (-30, 30))
    foll = d6("follower", lf, locked)
    set_relation(stage, MimicRelation(foll, lead, 1.0, instance="rotZ", reference_axis=reference_axis))
    return stage, foll


def test_d6_follower_with_locked_linear_dofs_is_accepted():
    stage, foll = _d6_pair(("transX", "transY", "transZ", "rotX", "rotY"))
    assert codes(validate(stage), (ERROR, WARNING)) == set()


def test_d6_follower_with_a_free_linear_dof_is_rejected():
    stage, foll = _d6_pair(("transX", "transY", "rotX", "rotY"))
    findings = [f for f in validate(stage) if f.code == "MIMIC_FOLLOWER_TYPE"]
    assert len(findings) == 1 and findings[0].path == foll and "transZ" in findings[0].message


def test_d6_reference_with_locked_reference_dof_is_rejected():
    stage, foll = _d6_pair(
        ("transX", "transY", "transZ"),
        reference_axis="rotY",
        leader_d6=True,
        leader_locked=("transX", "transY", "transZ", "rotY"),
    )
    findings = [f for f in validate(stage) if f.code == "MIMIC_REFERENCE_TYPE"]
    assert len(findings) == 1 and "rotY" in findings[0].message


def test_reciprocal_pair_is_redundant_not_an_error():
    stage, r, foll, lead = samples.pair("reciprocal", leader_drive=False, multiplier=2.0, follower_limits=(-60, 60))
    set_relation(stage, MimicRelation(lead, foll, 0.5))
    findings = validate(stage)
    assert codes(findings, (ERROR,)) == set()
    assert [(f.code, f.path) for f in findings] == [("MIMIC_REDUNDANT", lead)]
    assert "MIMIC_CHAIN" not in codes(findings)  # a redundant relation does not make a chain


def test_star_of_followers_is_not_a_chain():
    stage = samples.robotiq_style_linkage()
    assert validate(stage) == []


def test_compliant_relations_stay_out_of_the_forest():
    # a compliant reciprocal that contradicts the hard one is a soft row, not an error
    stage, r, foll, lead = samples.pair("soft", leader_drive=False)
    set_relation(stage, MimicRelation(lead, foll, 1.0, offset=0.01, natural_frequency=10.0, damping_ratio=1.0))
    findings = validate(stage)
    assert codes(findings, (ERROR,)) == set()
    assert "MIMIC_REDUNDANT" not in codes(findings) and "MIMIC_CHAIN" not in codes(findings)
    # (with an offset, the ranges of a cycle cannot both fit: that warning is expected)
    assert codes(findings, (WARNING,)) == {"MIMIC_RANGE_OUTSIDE_LIMITS"}


def test_disabled_relation_is_info_and_stays_out_of_the_forest():
    stage, r, foll, lead = samples.pair("disabled", leader_drive=False)
    set_relation(stage, MimicRelation(lead, foll, 2.0, schema="newton", instance=None, enabled=False))
    findings = validate(stage)
    assert [(f.code, f.path) for f in findings] == [("MIMIC_DISABLED", lead)]


def test_physx_and_newton_on_one_follower_are_two_constraints():
    """PhysX reads both APIs and applies each (schema_choice.py): agreeing, a warning that names
    that behaviour and the fix; disagreeing, one error naming both relations (not the cycle or
    contradiction the forest finds in them, which would point at the wrong fix)."""
    stage, r, foll, lead = samples.pair("both schemas")
    set_relation(stage, MimicRelation(foll, lead, 1.0, schema="newton", instance=None))
    (f,) = validate(stage)
    assert (f.severity, f.code, f.path) == (WARNING, "MIMIC_BOTH_SCHEMAS", foll)
    assert "applies each as its own constraint" in f.message and "mimic-ext convert" in f.message
    assert "NewtonMimicAPI" in f.message and "PhysxMimicJointAPI:rotX" in f.message
    # a reciprocal on the leader is still redundant
    set_relation(stage, MimicRelation(lead, foll, 1.0))
    assert "MIMIC_REDUNDANT" in [f.code for f in validate(stage)]  # (the driven leader also warns as a follower)
    for newton_multiplier, offset in ((-1.0, 0.0), (1.5, 0.0), (1.0, 0.1)):  # gain differs, or the offset
        stage, r, foll, lead = samples.pair("both schemas")
        set_relation(stage, MimicRelation(foll, lead, newton_multiplier, offset, schema="newton", instance=None))
        errors = [f for f in validate(stage) if f.severity == ERROR]
        assert [(f.code, f.path) for f in errors] == [("MIMIC_SCHEMAS_DISAGREE", foll)], newton_multiplier
        assert "disagree" in errors[0].message and "--schema newton" in errors[0].message


def test_chain_of_three_is_info_only_on_the_last():
    findings = validate(samples.chain3())
    assert [(f.severity, f.code, f.path) for f in findings] == [(INFO, "MIMIC_CHAIN", "/Chain/Joints/joint_c")]


def test_tolerated_instance_names_warn_but_still_count():
    for inst in ("X", "transZ"):
        stage, r, foll, lead = samples.pair("instance", relation=False)
        set_relation(stage, MimicRelation(foll, lead, 1.0, instance=inst))
        findings = validate(stage)
        assert [(f.code, f.path) for f in findings] == [("MIMIC_INSTANCE_NAME", foll)]
        assert "PhysX ignores" in findings[0].message


def test_reference_without_limits_is_reported_once_on_the_reference():
    stage = samples.robotiq_style_linkage()
    leader = stage.GetPrimAtPath("/Robotiq/Joints/finger_joint")
    leader.GetAttribute("physics:lowerLimit").Clear()
    findings = [f for f in validate(stage) if f.code == "MIMIC_NO_LIMITS"]
    assert [f.path for f in findings] == ["/Robotiq/Joints/finger_joint"]


def test_range_check_tolerates_float32_round_off_but_not_more():
    # follower = leader / 3 with the follower's limits authored as float32(leader limits / 3):
    # exact in real numbers, off by ~1e-8 rad after float32 rounding, so no warning.
    stage, r, foll, lead = samples.pair(
        "thirds", follower_limits=(-10.0, 10.0), leader_limits=(-30, 30), multiplier=1.0 / 3.0
    )
    assert validate(stage) == []
    # 0.01 deg outside a 20-degree range is 5e-4 of it, above RANGE_RTOL (1e-4): a warning
    prim = stage.GetPrimAtPath(foll)
    prim.GetAttribute("physics:upperLimit").Set(10.0 - 0.01)
    assert codes(validate(stage)) == {"MIMIC_RANGE_OUTSIDE_LIMITS"}


SVH_DECIMAL_ROUNDING = [
    # Schunk SVH hand (dex-urdf schunk_svh_hand_right.urdf), rad: leader upper, multiplier, follower upper.
    # The overshoot is the URDF's decimal rounding: 2.7e-6, 2.9e-6, 1.9e-6 and 4.1e-5 rad.
    (0.9704, 1.01511, 0.98506),  # j3 follows Thumb_Flexion
    (0.9704, 1.44889, 1.406),  # j4 follows Thumb_Flexion
    (0.98175, 1.3588, 1.334),  # j12 follows Ring_Finger
    (0.9879, 1.0, 0.98786),  # j5 follows Thumb_Opposition
]


@pytest.mark.parametrize("leader_upper, multiplier, follower_upper", SVH_DECIMAL_ROUNDING)
def test_range_check_ignores_decimal_rounding_of_source_files(leader_upper, multiplier, follower_upper):
    overshoot = multiplier * leader_upper - follower_upper
    assert 1e-6 < overshoot < 1e-4 * follower_upper  # the case: a real overshoot, within RANGE_RTOL of the range
    deg = 180 / math.pi
    stage, r, foll, lead = samples.pair(
        "svh",
        follower_limits=(0.0, follower_upper * deg),
        leader_limits=(0.0, leader_upper * deg),
        multiplier=multiplier,
    )
    assert validate(stage) == []
    # the same relation ten times further out (still under 0.05 deg) is reported
    stage.GetPrimAtPath(foll).GetAttribute("physics:upperLimit").Set(
        (multiplier * leader_upper - max(10 * overshoot, 2e-4 * follower_upper)) * deg
    )
    assert codes(validate(stage)) == {"MIMIC_RANGE_OUTSIDE_LIMITS"}


def test_range_check_handles_mixed_units_and_negative_multipliers():
    assert validate(samples.rack_and_pinion()) == []
    stage = samples.rack_and_pinion()
    stage.GetPrimAtPath("/RackPinion/Joints/rack_joint").GetAttribute("physics:upperLimit").Set(0.03)
    (f,) = validate(stage)
    assert f.code == "MIMIC_RANGE_OUTSIDE_LIMITS" and "0.0314159" in f.message  # 0.02 m/rad * pi/2
    assert validate(samples.gripper_prismatic()) == []  # -1 * [0, 0.04] = [-0.04, 0]: fits


def test_articulation_membership_walks_the_joint_graph():
    stage, r, foll, lead = samples.pair("walk", articulation=False)
    # the root is on the base body only; the joints' prims are outside it, their bodies are reached by the walk
    UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath("/Robot/base"))
    assert validate(stage) == []
    # the leader's body joins only through an excluded joint: not articulated
    UsdPhysics.Joint(stage.GetPrimAtPath(lead)).CreateExcludeFromArticulationAttr(True)
    findings = validate(stage)
    assert [(f.code, f.path) for f in findings] == [("MIMIC_EXCLUDED_FROM_ARTICULATION", lead)]


def test_bodiless_joints_under_a_root_belong_to_it():
    stage = samples.new_stage("bodiless")
    root = stage.DefinePrim("/R", "Xform")
    UsdPhysics.ArticulationRootAPI.Apply(root)
    for name in ("leader", "follower"):
        j = UsdPhysics.RevoluteJoint.Define(stage, f"/R/{name}")
        j.CreateLowerLimitAttr(-90.0)
        j.CreateUpperLimitAttr(90.0)
    set_relation(stage, MimicRelation("/R/follower", "/R/leader", 1.0))
    assert validate(stage) == []


def test_newton_zero_coef1_and_missing_target():
    stage, r, foll, lead = samples.pair("newton", relation=False)
    set_relation(stage, MimicRelation(foll, lead, 1.0, schema="newton", instance=None))
    prim = stage.GetPrimAtPath(foll)
    prim.GetAttribute("newton:mimicCoef1").Set(0.0)
    (f,) = validate(stage)
    assert f.code == "MIMIC_ZERO_GEARING" and "newton:mimicCoef1" in f.message
    prim.GetAttribute("newton:mimicCoef1").Set(1.0)
    prim.GetRelationship("newton:mimicJoint").SetTargets([lead, foll])
    (f,) = validate(stage)
    assert f.code == "MIMIC_REFERENCE_MISSING" and "2 targets" in f.message


WRONGLY_TYPED = """#usda 1.0
def PhysicsRevoluteJoint "L" {}
def PhysicsRevoluteJoint "F" (prepend apiSchemas = ["PhysxMimicJointAPI:rotX", "NewtonMimicAPI"])
{
    string physxMimicJoint:rotX:gearing = "two"
    rel physxMimicJoint:rotX:referenceJoint = </L>
    string newton:mimicEnabled = "false"
    rel newton:mimicJoint = </L>
}
"""


def test_wrongly_typed_attribute_is_a_finding_not_a_traceback():
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.ImportFromString(WRONGLY_TYPED)
    findings = validate(Usd.Stage.Open(layer))
    typed = sorted((f.message for f in findings if f.code == "MIMIC_NONFINITE"), key=len)
    assert [f.path for f in findings if f.code == "MIMIC_NONFINITE"] == ["/F", "/F"]
    assert "newton:mimicEnabled is authored as string ('false'), not bool" in typed[0]
    assert "physxMimicJoint:rotX:gearing is authored as string ('two'), not float" in typed[1]
    # the unreadable switch is not also reported as "disabled", nor the NaN gearing as non-finite
    assert "MIMIC_DISABLED" not in codes(findings) and len(typed) == 2


def test_wrongly_typed_relations_are_listed_and_refused_by_strict_readers():
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.ImportFromString(WRONGLY_TYPED)
    stage = Usd.Stage.Open(layer)
    physx, newton = read_relations(stage)
    assert math.isnan(physx.multiplier) and "gearing" in physx.invalid and math.isnan(physx.authored["gearing"])
    assert newton.invalid and not newton.enabled and newton.multiplier == 1.0
    with pytest.raises(MimicInputError, match=r"/F: physxMimicJoint:rotX:gearing is authored as string"):
        read_relations(stage, strict=True)


def test_infinite_offset_and_partial_compliance_messages_name_the_attribute():
    stage, r, foll, lead = samples.pair("inf", damping_ratio=0.5)
    stage.GetPrimAtPath(foll).GetAttribute("physxMimicJoint:rotX:offset").Set(math.inf)
    findings = validate(stage)
    assert codes(findings) == {"MIMIC_NONFINITE", "MIMIC_PARTIAL_COMPLIANCE"}
    assert "physxMimicJoint:rotX:offset" in findings[0].message


def test_followers_inside_instanced_references_are_validated():
    stage = samples.geared_pair()
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.TransferContent(stage.GetRootLayer())
    outer = Usd.Stage.CreateInMemory()
    UsdPhysics.Scene.Define(outer, "/physicsScene")
    holder = outer.DefinePrim("/World/Gears")
    holder.GetReferences().AddReference(layer.identifier, "/Gears")
    holder.SetInstanceable(True)
    assert outer.GetPrimAtPath("/World/Gears/Joints/gear_follower").IsInstanceProxy()
    assert validate(outer) == []
    holder.SetInstanceable(False)
    outer.GetPrimAtPath("/World/Gears/Joints/gear_follower").GetAttribute("physxMimicJoint:rotX:gearing").Set(0.0)
    assert codes(validate(outer)) == {"MIMIC_ZERO_GEARING"}


@pytest.mark.parametrize("gearing, extreme", [(-8388608.0, True), (8388608.0, True), (-8.0e6, False), (-1e30, True)])
def test_a_gear_ratio_of_2_to_the_23_or_more_is_an_error(tmp_path, gearing, extreme):
    """Issue 27: gearing -1e30 is finite in float32 but no float32 solver holds it. The bound is
    exactly 2^23 = 1/eps of float32 (the sample values are exact in float32), either sign."""
    text = (ROOT / "data" / "geared_pair.usda").read_text().replace("gearing = -2", f"gearing = {gearing!r}")
    path = tmp_path / "g.usda"
    path.write_text(text)
    findings = [f for f in validate_file(path) if f.code == "MIMIC_EXTREME_GEARING"]
    assert bool(findings) == extreme
    if extreme:
        assert findings[0].path == "/Gears/Joints/gear_follower" and findings[0].severity == ERROR


@pytest.mark.parametrize(
    "schema, stray",
    [
        ("newton", "newton:mimicCoeff0"),
        ("newton", "newton:mimicCoef_1"),
        ("physx", "physxMimicJoint:rotX:gearng"),
        ("physx", "physxMimicJoint:rotX:Offset"),
    ],
)
def test_misspelled_schema_property_is_an_error_as_the_sweep_finds_it(schema, stray):
    """Issue 39: ``validate`` said 0 errors for ``newton:mimicCoeff0``, which the sweep fails on
    every engine; the sweep now rejects the follower with this finding (the check runs once)."""
    stage, r, foll, lead = samples.pair("typo", relation=False)
    set_relation(stage, MimicRelation(foll, lead, 1.0, schema=schema, instance="rotX" if schema == "physx" else None))
    stage.GetPrimAtPath(foll).CreateAttribute(stray, Sdf.ValueTypeNames.Float).Set(0.1)
    findings = validate(stage)
    (f,) = [f for f in findings if f.code == "MIMIC_UNKNOWN_PROPERTY"]
    assert f.severity == ERROR and f.path == foll and stray in f.message
    assert codes(findings, (ERROR, WARNING)) == {"MIMIC_UNKNOWN_PROPERTY"}
