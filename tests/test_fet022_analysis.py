"""The sweep plan, the ratio/direction/offset judgement and discovery, without physics.

These check the arithmetic on hand-made numbers; every physics outcome is asserted in
test_fet022_physics.py with the real solver.
"""

import math

import numpy as np
import pytest
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

import mimic_ext.schema  # noqa: F401
from mimic_ext.fet022.analysis import MATCH, REVERSED, UNDETERMINED, fit_ratio, judge
from mimic_ext.fet022.config import SweepConfig
from mimic_ext.fet022.discovery import FollowerCase, discover
from mimic_ext.fet022.plan import make_plan, sweep_profile
from mimic_ext.schema import MimicRelation, read_relations, set_relation

CFG = SweepConfig()


def _stage_with_chain(mpu: float = 1.0):
    """A -> B -> C chain of revolute joints plus a prismatic pair, limits on A only."""
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(st, mpu)
    UsdGeom.Xform.Define(st, "/R")
    UsdPhysics.ArticulationRootAPI.Apply(st.GetPrimAtPath("/R"))
    for name in "ABCPQ":
        UsdPhysics.RigidBodyAPI.Apply(UsdGeom.Xform.Define(st, f"/R/{name}_link").GetPrim())
    for name in "ABC":
        j = UsdPhysics.RevoluteJoint.Define(st, f"/R/J/{name}")
        j.CreateBody1Rel().SetTargets([Sdf.Path(f"/R/{name}_link")])
    UsdPhysics.RevoluteJoint(st.GetPrimAtPath("/R/J/A")).CreateLowerLimitAttr(-10.0)
    UsdPhysics.RevoluteJoint(st.GetPrimAtPath("/R/J/A")).CreateUpperLimitAttr(90.0)
    for name in "PQ":
        j = UsdPhysics.PrismaticJoint.Define(st, f"/R/J/{name}")
        j.CreateBody1Rel().SetTargets([Sdf.Path(f"/R/{name}_link")])
    set_relation(st, MimicRelation("/R/J/B", "/R/J/A", multiplier=0.5))
    set_relation(st, MimicRelation("/R/J/C", "/R/J/B", multiplier=-1.5, instance="rotY"))
    set_relation(st, MimicRelation("/R/J/Q", "/R/J/P", multiplier=1.0, schema="newton"))
    return st


# ---------------------------------------------------------------- plan
def test_profile_goes_lo_hi_lo_smoothly():
    t = np.linspace(0.0, 2.0, 9)
    s = sweep_profile(t, 2.0)
    # exact values of 3x^2 - 2x^3 at x = 0, 1/2, 1 (floating point represents them exactly)
    assert s[0] == 0.0 and s[4] == 1.0 and s[-1] == 0.0
    assert s[2] == 0.5 and np.all(np.diff(s[:5]) > 0) and np.all(np.diff(s[4:]) < 0)


def test_plan_ranges_margins_and_batched_targets():
    st = _stage_with_chain(mpu=0.01)
    found = discover(st, read_relations(st))
    plan = make_plan(found.swept, CFG)
    by_path = {pj.path: pj for pj in plan.joints}
    assert list(by_path) == ["/R/J/A", "/R/J/P"], "chains are swept at their top joint, once"
    a, p = by_path["/R/J/A"], by_path["/R/J/P"]
    # limits -10..90 deg shrunk by 10 % of the range at each end: 0..80 deg (1e-12 rad: float arithmetic)
    assert a.lo == pytest.approx(0.0, abs=1e-12) and a.hi == pytest.approx(math.radians(80), abs=1e-12)
    assert a.range_source == "limits"
    # unlimited prismatic: default -0.05..0.05 m (SI, whatever metersPerUnit), less 10 % each end
    assert (p.lo, p.hi) == pytest.approx((-0.04, 0.04), abs=1e-12)
    assert p.range_source.startswith("default")
    assert a.drive.source == "test" and a.drive.stiffness == CFG.test_drive.angular_stiffness
    assert p.drive.stiffness == CFG.test_drive.linear_stiffness
    tg = plan.targets()
    assert tg.shape == (720, 2, 2)
    # env 0 sweeps A only, env 1 sweeps P only; the other joint stays at its start (exactly)
    assert np.all(tg[:, 0, 1] == p.lo) and np.all(tg[:, 1, 0] == a.lo)
    assert tg[:240, 0, 0] == pytest.approx(a.lo, abs=0) and tg[239 + 240, 0, 0] == pytest.approx(a.hi, abs=1e-12)
    assert tg[-1, 0, 0] == pytest.approx(a.lo, abs=1e-12)
    assert plan.sample_steps[0] == 240 and len(plan.sample_steps) == 49
    assert plan.sample_times[-1] == pytest.approx(2.0, abs=1e-12)


# ---------------------------------------------------------------- analysis
def _case(gearing=-1.0, offset=0.0, schema="physx", kind="revolute", scale=math.pi / 180):
    m = -gearing if schema == "physx" else gearing
    c = -offset * scale if schema == "physx" else offset * scale
    rel = MimicRelation(
        "/f", "/l", multiplier=m, offset=c, schema=schema, instance="rotX" if schema == "physx" else None
    )
    return FollowerCase(
        relation=rel,
        name="f",
        reference="/l",
        swept="/l",
        follower_kind=kind,
        reference_kind=kind,
        follower_scale=scale,
        reference_scale=scale,
        gearing=gearing,
        offset=offset,
    )


def test_fit_ratio_is_the_slope_and_skips_tiny_displacements():
    x = np.array([0.0, 1e-4, 0.5, 1.0, 0.5, 1e-4])
    y = 2.0 * x
    y[1] = y[5] = 5.0  # garbage where the reference barely moved: left out of the fit
    slope, used = fit_ratio(x, y, 0.05)
    assert used == 3 and slope == pytest.approx(2.0, rel=1e-12)  # exact data, float round-off only
    assert math.isnan(fit_ratio(np.zeros(4), np.ones(4), 0.05)[0])


def test_judge_exact_follower_passes_with_matching_direction():
    q_l = np.radians(np.linspace(5, 40, 20))
    m = judge(_case(gearing=-2.0), q_l, 2.0 * q_l + 0.0, CFG)
    assert m.status == "pass" and m.direction == MATCH and not m.warnings
    assert m.motion_ratio == pytest.approx(2.0, rel=1e-12)
    assert m.max_error_si == pytest.approx(0.0, abs=1e-12)


def test_judge_reversed_follower_passes_the_ratio_warns_and_fails_the_offset_check():
    q_l = np.radians(np.linspace(0, 35, 20))  # starts at 0: the rest offset agrees
    m = judge(_case(gearing=-1.0), q_l, -q_l, CFG)  # PhysX gearing -1 predicts "with", it moves against
    assert m.ratio_error == pytest.approx(0.0, abs=1e-12) and m.direction == REVERSED
    # the harness's magnitude check passes it; its position at the end is 70 deg off q_l: the offset check fails
    assert m.status == "fail" and len(m.messages) == 1 and "offset check: at the end of the sweep" in m.messages[0]
    assert m.offset_error_start == pytest.approx(0.0, abs=1e-12)
    assert m.offset_error_end == pytest.approx(2 * math.radians(35), abs=1e-12)
    # the harness's own sign rule reads gearing -1 as "against": it calls this a match
    assert m.harness.dir_matches_gear == 1
    assert len(m.warnings) == 1 and "direction mismatch" in m.warnings[0]
    # pointwise error against the signed relation: 2 * 35 deg (1e-12: round-off)
    assert m.max_error_si == pytest.approx(2 * math.radians(35), abs=1e-12)


def test_judge_tolerance_modes():
    q_l = np.radians(np.linspace(5, 40, 20))
    follower = 2.3 * q_l  # |gearing| 2: 15 % relative, 0.3 absolute
    # this follower also sits 0.026-0.21 rad off its relation; the offset check is not what is tested here
    cfg = CFG.replace(rest_offset_tolerance_rad=1.0)
    # the default is the harness's: absolute 0.10
    assert judge(_case(gearing=-2.0), q_l, follower, cfg).status == "fail"
    assert judge(_case(gearing=-2.0), q_l, follower, cfg.replace(gear_ratio_tolerance=0.31)).status == "pass"
    assert judge(_case(gearing=-2.0), q_l, follower, cfg.replace(gear_ratio_tolerance=0.29)).status == "fail"
    relative = cfg.replace(tolerance_mode="relative")
    assert judge(_case(gearing=-2.0), q_l, follower, relative).status == "fail"
    assert judge(_case(gearing=-2.0), q_l, follower, relative.replace(gear_ratio_tolerance=0.16)).status == "pass"
    msg = judge(_case(gearing=-2.0), q_l, follower, relative).messages[0]
    assert "motion ratio 2.3" in msg and "15.00%" in msg


def test_ratio_measures_differ_where_the_motion_is_not_linear():
    """Peak-to-peak (the harness) only sees the extremes; the least-squares slope sees the path."""
    q_l = np.radians(np.linspace(0, 40, 41))
    follower = q_l + 0.2 * np.sin(np.linspace(0, np.pi, 41)) * np.radians(40)  # a bulge, same end points
    m_ptp = judge(_case(gearing=-1.0), q_l, follower, CFG)
    m_fit = judge(_case(gearing=-1.0), q_l, follower, CFG.replace(ratio_measure="fit_slope"))
    assert m_ptp.motion_ratio == m_fit.motion_ratio  # both report the harness's ratio
    # the bulge lifts the follower's peak-to-peak by its height; the fit's slope less (1e-9: round-off)
    assert m_ptp.ratio_error == pytest.approx(abs(np.ptp(follower) / np.ptp(q_l) - 1.0), abs=1e-9)
    assert m_fit.ratio_error == pytest.approx(abs(abs(m_fit.measured_ratio) - 1.0), abs=1e-12)
    assert m_ptp.ratio_error != pytest.approx(m_fit.ratio_error, abs=1e-3)


def test_judge_rest_offset_uses_the_authored_convention():
    q_l = np.radians(np.linspace(5, 40, 20))
    # PhysX: q_f + g q_l + o = 0 with g = -1, o = 10 deg  ->  q_f = q_l - 10 deg
    good = judge(_case(gearing=-1.0, offset=10.0), q_l, q_l - np.radians(10), CFG)
    assert not good.warnings and good.rest_offset == pytest.approx(10.0, abs=1e-9)  # deg, round-off
    bad = judge(_case(gearing=-1.0, offset=10.0), q_l, q_l, CFG)
    assert len(bad.warnings) == 1 and "rest offset mismatch" in bad.warnings[0]
    # the ratio alone would pass it; the offset check (10 deg = 0.175 rad over 0.01 rad) fails it
    assert bad.ratio_error == pytest.approx(0.0, abs=1e-12)
    assert bad.status == "fail" and "offset check: at the" in bad.messages[0]
    assert bad.offset_error_start == pytest.approx(math.radians(10), abs=1e-12)
    # Newton: q_f = c0 + c1 q_l with c0 = 10 deg, same sign convention as written
    newton = judge(_case(gearing=1.0, offset=10.0, schema="newton"), q_l, q_l + np.radians(10), CFG)
    assert not newton.warnings and newton.direction == MATCH


def test_judge_reference_that_did_not_move_fails():
    q = np.full(10, 0.3)
    m = judge(_case(), q, q, CFG)
    assert m.status == "fail" and "did not move" in m.messages[0] and m.direction == UNDETERMINED
    short = judge(
        _case(),
        np.linspace(0, 0.01, 10),
        np.linspace(0, 0.01, 10),
        CFG,
        reference_excursion_si=0.01,
        planned_excursion_si=1.0,
    )
    assert short.status == "fail" and "moved only" in short.messages[0]


# ---------------------------------------------------------------- discovery
def test_discovery_checks_chains_against_the_direct_reference():
    st = _stage_with_chain()
    found = discover(st, read_relations(st))
    cases = {c.follower: c for c in found.cases}
    assert cases["/R/J/C"].reference == "/R/J/B" and cases["/R/J/C"].swept == "/R/J/A"
    assert cases["/R/J/C"].gearing == pytest.approx(1.5, rel=1e-6)  # float32 authoring
    assert cases["/R/J/C"].expected_sign == -1
    q = cases["/R/J/Q"]
    assert q.label == "NewtonMimicAPI" and q.gearing == pytest.approx(1.0) and q.expected_sign == 1
    assert [s.path for s in found.swept] == ["/R/J/A", "/R/J/P"]
    assert found.swept[0].followers == ("/R/J/B", "/R/J/C")


def test_metric_names_are_unique():
    st = _stage_with_chain()
    UsdPhysics.RevoluteJoint.Define(st, "/R/K/B")  # a second joint named B
    set_relation(st, MimicRelation("/R/K/B", "/R/J/A", multiplier=1.0))
    names = [c.name for c in discover(st, read_relations(st)).cases]
    assert len(set(names)) == len(names) and "B" in names and "B_2" in names


def test_rejected_relations_are_reported_but_not_swept():
    st = _stage_with_chain()
    rels = read_relations(st)
    skip = {r.key for r in rels if r.follower == "/R/J/B"}
    found = discover(st, rels, skip=skip)
    cases = {c.follower: c for c in found.cases}
    assert cases["/R/J/B"].swept == ""
    # without B's relation, C's chain stops at B: B is swept for C
    assert cases["/R/J/C"].swept == "/R/J/B"
    assert Gf is not None  # (pxr import used by the builders)
