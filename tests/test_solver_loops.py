"""Loop closures: excluded joints and joints reaching a body already in the tree are exact rows.

Every check measures the loop independently of the kernel: the anchors of the stage's own
closure joints through float64 forward kinematics (``closure_gaps``), or an analytic answer.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import StageBuilder, closure_gaps, four_bar, four_bar_follower_angle

wp = pytest.importorskip("warp")
wp.config.quiet = True
from pxr import Sdf, UsdPhysics  # noqa: E402

from mimic_ext.schema.stage_io import open_stage  # noqa: E402
from mimic_ext.solver import LoopConflictError, Solver, build_model  # noqa: E402
from mimic_ext.solver.inspect import body_poses, kinetic_energy, momentum  # noqa: E402

ASSETS = Path(__file__).resolve().parents[1].parent / "shared" / "assets"
COMPLIANT = ASSETS / "robotiq_isaacsim_usd_2f85/Gripper_2F85/configuration/Robotiq_2F_85_config_physics_compliant.usda"
MENAGERIE = ASSETS / "menagerie_robotiq_2f85" / "2f85.xml"
BARS = dict(a=0.1, b=0.25, c=0.2, d=0.22)
THETA0 = 1.0


def _run(model, steps, dt, effort=None, solver=None, each=None):
    solver = solver or Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    if effort is not None:
        ef = c.joint_f.numpy()
        for path, value in effort.items():
            ef[:, model.dof_index(path)] = value
        c.joint_f.assign(ef)
    for i in range(steps):
        solver.step(s0, s1, c, dt)
        s0, s1 = s1, s0
        if each is not None:
            each(i, s0.joint_q.numpy()[0].astype(np.float64), solver)
    return s0, solver


@pytest.mark.parametrize("excluded", [True, False])
def test_four_bar_follows_the_analytic_rocker_angle(excluded):
    bld, J, _ = four_bar(theta0=THETA0, excluded=excluded, **BARS)
    model = build_model(bld.stage)
    assert model.closure_paths == [J["C"]] and model.loop_row_count == 5
    if not excluded:  # found while building the tree; PhysX would want it marked
        assert any("closes a loop" in w for w in model.warnings)
    iA, iD = model.dof_index(J["A"]), model.dof_index(J["D"])
    rock0 = four_bar_follower_angle(THETA0, **BARS)
    worst_angle = worst_gap = 0.0
    travel = []

    def check(i, q, solver):
        nonlocal worst_angle, worst_gap
        diff = rock0 + q[iD] - four_bar_follower_angle(THETA0 + q[iA], **BARS)
        worst_angle = max(worst_angle, abs(math.remainder(diff, 2 * math.pi)))
        worst_gap = max(worst_gap, closure_gaps(model, bld.stage, q))
        travel.append(abs(solver_speed(solver)))

    def solver_speed(solver):
        return s_state[0].joint_qd.numpy()[0, iA]

    s_state = []
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    s_state.append(s0)
    ef = c.joint_f.numpy()
    ef[:, iA] = 0.004  # the crank (Grashof: a full-turning crank) speeds up
    c.joint_f.assign(ef)
    for i in range(240):
        solver.step(s0, s1, c, 1.0 / 60.0)
        s0, s1 = s1, s0
        s_state[0] = s0
        check(i, s0.joint_q.numpy()[0].astype(np.float64), solver)
    assert max(travel) > 6.0  # rad/s: two full turns by the end (its angle wraps at +-pi)
    # 1e-5 rad: the rocker's angle is the analytic one up to the loop gap over its 0.2 m length
    # and float32 angles of order 1 (~1e-7); measured 1.4e-6 rad
    assert worst_angle < 1e-5
    assert worst_gap < 1e-6  # metres; measured 3e-7 m at 60 Hz and 7 rad/s


def coast_four_bar(fps: int, precision: str = "float32", seconds: float = 3.5, crank_speed: float = 4.0):
    """(kinetic energy after ``seconds`` / after the first step, largest loop gap in m) of the
    four-bar coasting without gravity from its crank turning at ``crank_speed`` rad/s (issue 29's
    case; the first step makes the start velocity consistent with the loop)."""
    bld, J, _ = four_bar(theta0=THETA0, **BARS)
    model = build_model(bld.stage, precision=precision)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    u = s0.joint_qd.numpy()
    u[:, model.dof_index(J["A"])] = crank_speed
    s0.joint_qd.assign(u)
    ke0 = None
    gap = 0.0
    steps = int(round(seconds * fps))
    for i in range(steps):
        solver.step(s0, s1, c, 1.0 / fps)
        s0, s1 = s1, s0
        if ke0 is None or i % 5 == 4 or i == steps - 1:
            q = model.unwrapped_q(s0)[0]
            ke = kinetic_energy(model, q, s0.joint_qd.numpy()[0].astype(np.float64))
            ke0 = ke if ke0 is None else ke0
            gap = max(gap, closure_gaps(model, bld.stage, q))
    return ke / ke0, gap


@pytest.mark.parametrize("fps, kept", [(60, 0.90), (240, 0.95)])
def test_a_coasting_four_bar_keeps_its_energy_as_its_loop_impulses_do_no_work(fps, kept):
    """Issue 29: the four-bar coasting without gravity keeps at least 90% of its kinetic energy
    over 3.5 s at 60 Hz and 95% at 240 Hz (the issue's targets; MuJoCo keeps 97% at 240 Hz with
    its loop open by 0.5 mm). Two parts do it: the loop rows' target takes half a step of their
    velocity-product rate, so the loop impulse does no work to leading order (``loop_rows``;
    without it 44% / 70%), and a loop model's bias and that rate are taken at the mid-step
    velocity ``(u + u+) / 2`` with one re-solve on the same factor (``midpoint_bias``; without it
    74.6% / 92.9%: the tree's semi-implicit Euler exchanged 3.4x the energy between its velocity
    update and its moving positions at 60 Hz and lost the balance). Measured 91.2% and 99.1%
    (float32 and float64 agree to 2e-4; float64 numpy of the same scheme, ``benchmarks/
    loop_energy_schemes.py``: 91.1 / 99.1); the bounds are the issue's own. The scheme must not
    gain energy either (1.0); the loops stay closed to 1e-6 m as before."""
    ratio, gap = coast_four_bar(fps)
    assert kept <= ratio <= 1.0
    assert gap < 1e-6


def test_loop_holds_whatever_the_iteration_count():
    bld, J, _ = four_bar(theta0=THETA0, **BARS)
    prim = bld.stage.GetPrimAtPath(J["A"])
    UsdPhysics.RevoluteJoint(prim).CreateLowerLimitAttr(-10.0)  # degrees: the crank runs into its limits
    UsdPhysics.RevoluteJoint(prim).CreateUpperLimitAttr(20.0)
    prim.AddAppliedSchema("PhysxJointAPI")
    prim.CreateAttribute("physxJoint:jointFriction", Sdf.ValueTypeNames.Float).Set(0.001)
    for iterations in (1, 8):
        model = build_model(bld.stage)
        gaps = []
        s, _ = _run(
            model,
            180,
            1.0 / 60.0,
            effort={J["A"]: 0.01},
            solver=Solver(model, iterations=iterations),
            each=lambda i, q, sv, gaps=gaps, model=model: gaps.append(closure_gaps(model, bld.stage, q)),
        )
        q = s.joint_q.numpy()[0]
        assert q[model.dof_index(J["A"])] == pytest.approx(20 * math.pi / 180, abs=1e-4)  # resting on its limit
        assert max(gaps) < 1e-6  # metres: the loop is an exact row of every solve, not a PGS row


def _parallelogram():
    return four_bar(a=0.15, b=0.3, c=0.15, d=0.3, theta0=THETA0)


def test_parallelogram_mimic_is_redundant_and_changes_nothing():
    bld, J, _ = _parallelogram()
    ref = []
    _run(build_model(bld.stage), 120, 1.0 / 60.0, effort={J["A"]: 0.01}, each=lambda i, q, s: ref.append(q.copy()))
    bld.mimic(J["D"], J["A"], 1.0, 0.0)  # the parallel bars turn together: the loop says so already
    model = build_model(bld.stage)
    assert [r["status"] for r in model.relations()] == ["redundant"]
    traj = []
    _, solver = _run(model, 120, 1.0 / 60.0, effort={J["A"]: 0.01}, each=lambda i, q, s: traj.append(q.copy()))
    # the same solve (the redundant relation is not eliminated): equal up to float32 round-off
    np.testing.assert_allclose(np.array(traj), np.array(ref), atol=1e-6)
    assert abs(traj[-1][model.dof_index(J["A"])]) > 0.3  # it really moved
    row = solver.mimic_rows()[0]
    assert row.status == "redundant" and row.impulse[0] == 0.0
    # and the runtime addition of the same relation reports the same
    solver2 = Solver(build_model(_parallelogram()[0].stage))
    assert solver2.add_mimic(J["D"], J["A"], 1.0) == "redundant"


@pytest.mark.parametrize(
    "multiplier,offset,kind", [(1.0, 0.1, LoopConflictError.LOOP_OFFSET), (2.0, 0.0, LoopConflictError.LOOP_GAIN)]
)
def test_relation_contradicting_a_loop_is_rejected_naming_both(multiplier, offset, kind):
    bld, J, _ = _parallelogram()
    bld.mimic(J["D"], J["A"], multiplier, offset)
    with pytest.raises(LoopConflictError) as err:
        build_model(bld.stage)
    assert err.value.kind == kind
    assert J["D"] in str(err.value) and J["C"] in str(err.value)  # the relation and the closure joint
    assert J["C"] in err.value.relations


def test_a_relation_the_loop_does_not_imply_is_active():
    """A general four-bar has one DOF; a mimic between the crank and a second, free crank joint is new."""
    bld, J, _ = four_bar(theta0=THETA0, **BARS)
    bld.mimic(J["B"], J["A"], -0.5, 0.0)  # the coupler joint is moved by the loop, not at -0.5: a conflict
    with pytest.raises(LoopConflictError):
        build_model(bld.stage)
    bld2, J2, _ = four_bar(theta0=THETA0, **BARS)
    extra = bld2.body("wheel", mass=0.1, inertia=(1e-4, 1e-4, 1e-4))
    wj = bld2.revolute("wheel_joint", None, extra, "Z", pos0=(0.5, 0.5, 0))
    bld2.mimic(wj, J2["A"], 2.0, 0.0)
    model = build_model(bld2.stage)
    assert [r["status"] for r in model.relations()] == ["active"]
    s, _ = _run(model, 60, 1.0 / 60.0, effort={J2["A"]: 0.01})
    q = s.joint_q.numpy()[0]
    assert q[model.dof_index(wj)] == pytest.approx(2.0 * q[model.dof_index(J2["A"])], abs=1e-6)


def test_slider_crank_prismatic_closure():
    """Crank (a) and rod (b) drive a slider whose prismatic joint to the world closes the loop:
    x = a cos(theta) + sqrt(b^2 - (a sin(theta))^2)."""
    a, b, th0 = 0.1, 0.3, 0.7
    B = np.array([a * math.cos(th0), a * math.sin(th0), 0.0])
    C = np.array([a * math.cos(th0) + math.sqrt(b * b - (a * math.sin(th0)) ** 2), 0.0, 0.0])
    bld = StageBuilder()
    crank = bld.body("crank", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), com=tuple(B / 2))
    rod = bld.body("rod", mass=0.2, inertia=(1e-3, 1e-3, 1e-3), com=tuple((B + C) / 2))
    slider = bld.body("slider", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), com=tuple(C))
    jA = bld.revolute("A", None, crank, "Z")
    bld.revolute("B", crank, rod, "Z", pos0=tuple(B), pos1=tuple(B))
    bld.revolute("C", rod, slider, "Z", pos0=tuple(C), pos1=tuple(C))
    rail = bld.prismatic("rail", None, slider, "X", pos0=tuple(C), pos1=tuple(C))
    UsdPhysics.Joint(bld.stage.GetPrimAtPath(rail)).CreateExcludeFromArticulationAttr(True)
    model = build_model(bld.stage)
    assert model.closure_paths == [rail] and model.loop_row_count == 5
    worst = 0.0

    def check(i, q, s):
        nonlocal worst
        th = th0 + q[model.dof_index(jA)]
        x = a * math.cos(th) + math.sqrt(b * b - (a * math.sin(th)) ** 2)
        p = body_poses(model, q)[slider]
        slider_x = (p @ np.r_[C, 1.0])[0]
        worst = max(worst, abs(slider_x - x), abs((p @ np.r_[C, 1.0])[1]), abs(p[1, 0]))

    s, _ = _run(model, 180, 1.0 / 120.0, effort={jA: 0.02}, each=check)
    assert abs(s.joint_q.numpy()[0][model.dof_index(jA)]) > 1.0
    assert worst < 1e-6  # m (and rad for the slider's rotation): the prismatic closure holds exactly


def test_fixed_closure_locks_the_chain():
    bld = StageBuilder()
    l1 = bld.body("l1", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), com=(0.05, 0, 0))
    l2 = bld.body("l2", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), com=(0.15, 0, 0))
    j1 = bld.revolute("j1", None, l1, "Z")
    j2 = bld.revolute("j2", l1, l2, "Z", pos0=(0.1, 0, 0), pos1=(0.1, 0, 0))
    weld = bld.fixed("weld", None, l2, pos0=(0.2, 0, 0), pos1=(0.2, 0, 0))
    UsdPhysics.Joint(bld.stage.GetPrimAtPath(weld)).CreateExcludeFromArticulationAttr(True)
    model = build_model(bld.stage)
    s, _ = _run(model, 120, 1.0 / 60.0, effort={j1: 0.5, j2: -0.3})
    q = s.joint_q.numpy()[0]
    assert np.abs(q).max() < 1e-6  # rad: a welded tip leaves the chain no motion at all
    # rad/s: the torques would spin the free chain at ~40 rad/s per step; the loop solve cancels
    # that to float32 round-off of it (measured 3e-5)
    assert np.abs(s.joint_qd.numpy()).max() < 2e-4


def test_floating_four_bar_conserves_momentum():
    bld, J, _ = four_bar(theta0=THETA0, **BARS)
    # the ground becomes a free body: both ground pivots move to it
    ground = bld.body("ground", mass=1.0, inertia=(0.01, 0.01, 0.01), com=(0.11, 0.0, 0.0), root=True)
    for name in ("A", "D"):
        UsdPhysics.Joint(bld.stage.GetPrimAtPath(J[name])).CreateBody0Rel().SetTargets([Sdf.Path(ground)])
    model = build_model(bld.stage)
    assert model.base_bodies == [ground]
    q0 = model.state().joint_q.numpy()[0]
    u0 = np.zeros(model.dof_count)
    n1 = len(model.joints)
    u0[n1 : n1 + 3] = (0.0, 0.0, 0.7)  # spinning about Z
    lin0, ang0 = momentum(model, q0, u0)
    s0, s1, c = model.state(), model.state(), model.control()
    s0.joint_qd.assign(u0[None])
    ef = c.joint_f.numpy()
    ef[:, model.dof_index(J["A"])] = 0.003  # an internal torque: crank against ground
    c.joint_f.assign(ef)
    solver = Solver(model)
    worst = 0.0
    for i in range(600):
        solver.step(s0, s1, c, 1.0 / 120.0)
        s0, s1 = s1, s0
        if i % 50 == 49:
            q, u = s0.joint_q.numpy()[0].astype(float), s0.joint_qd.numpy()[0].astype(float)
            lin, ang = momentum(model, q, u)
            worst = max(worst, np.linalg.norm(ang - ang0) / np.linalg.norm(ang0), np.linalg.norm(lin - lin0))
            assert closure_gaps(model, bld.stage, q) < 1e-6
    assert abs(s0.joint_q.numpy()[0][model.dof_index(J["A"])]) > 0.2
    assert worst < 1e-5  # relative angular momentum (and kg m/s, from 0): the loop's impulses are internal


def test_loop_work_stays_in_the_loops_group_beside_a_free_body():
    """A free body beside a four-bar: the loops' columns are the four-bar's group alone (their
    rows' responses, Schur complement and every loop correction skip the body's six, so loop work
    does not grow with the bodies around a mechanism), and the four-bar moves as it does alone
    while the body falls freely."""
    runs = {}
    for extra in (False, True):
        bld, J, _ = four_bar(theta0=THETA0, gravity=9.81, **BARS)
        if extra:
            bld.body("box", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), pos=(0.6, 0.0, 0.0), root=True)
        model = build_model(bld.stage, contacts=True)  # a contact model takes in every free body
        assert model.base_bodies == (["/World/box"] if extra else [])
        md, k = model.data, model.data.k
        lo = model.sparsity.group_lo[md.dof_col.numpy()[model.dof_index(J["A"])]]
        hi = model.sparsity.group_hi[md.dof_col.numpy()[model.dof_index(J["A"])]]
        assert (md.loop_c0, md.loop_c1) == (lo, hi)
        assert hi - lo == (k - 6 if extra else k)  # the box's six columns are not the loops'
        s, _ = _run(model, 120, 1.0 / 120.0, effort={J["A"]: 0.004})
        q = s.joint_q.numpy()[0].astype(np.float64)
        assert closure_gaps(model, bld.stage, q) < 1e-6  # metres, as in the four-bar test above
        runs[extra] = q
    q0, q1, n1 = runs[False], runs[True], len(model.joints)
    # 1e-5 rad: the same float32 step on the same mechanism (a sum split at other columns would
    # round differently, 1e-7 a step; measured bitwise equal: the loops' group comes first)
    np.testing.assert_allclose(q1[:n1], q0[:n1], atol=1e-5)
    # the box falls freely, as semi-implicit Euler does: z_n = -g dt^2 n (n + 1) / 2; 1e-5 m is
    # float32 round-off of 120 position updates of up to 8 cm on a 5 m fall (measured 2e-6)
    n, dt = 120, 1.0 / 120.0
    assert q1[n1 + 2] == pytest.approx(-9.81 * dt * dt * n * (n + 1) / 2, abs=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("fps", [60, 240])
def test_compliant_robotiq_loops_hold_every_step_while_the_leader_sweeps(fps):
    if not COMPLIANT.exists():
        pytest.skip(f"{COMPLIANT} not present")
    stage = open_stage(COMPLIANT).stage
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bodies without MassAPI: the documented default
        model = build_model(stage, fix_base=True)
    assert len(model.closure_paths) == 2 and model.loop_row_count == 10
    assert [r["status"] for r in model.relations()] == ["compliant"]
    leader = model.dof_index("/Robotiq_2F_85/Robotiq_2F_85/Joints/finger_joint")
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    target = c.joint_target_q.numpy()
    lo, hi = model.lower[leader], model.upper[leader]
    steps, worst, seen = 2 * fps, 0.0, []
    for i in range(steps):
        target[:, leader] = lo + (hi - lo) * (0.1 + 0.8 * math.sin(math.pi * i / steps) ** 2)
        c.joint_target_q.assign(target)
        solver.step(s0, s1, c, 1.0 / fps)
        s0, s1 = s1, s0
        q = s0.joint_q.numpy()[0].astype(np.float64)
        seen.append(q[leader])
        worst = max(worst, closure_gaps(model, stage, q))
    assert max(seen) - min(seen) > 0.8  # rad: the leader swept most of its 75 degrees
    assert worst < 1e-5  # the bound, every step (measured 6e-7 m at 60 Hz, 2e-8 m at 240 Hz)


def _menagerie_usd():
    """The Menagerie 2F-85 as our importer writes it: its two connect equalities as excluded
    spherical joints, body masses from its meshes as MuJoCo computes them."""
    from pxr import UsdPhysics

    from mimic_ext.importers import import_robot

    result = import_robot(MENAGERIE)
    # the bare mechanism, as the MuJoCo side zeroes its actuator's gains: the import writes a position
    # drive (Isaac Sim's default gains) on the actuated leader, left_driver_joint, whose stiffness is
    # taken off here; the spring links' joint springs stay, and so does passive damping (on the
    # leader, the follower's reflected onto it: the same under the relation)
    driver = next(p for p in result.stage.Traverse() if p.GetName() == "left_driver_joint")
    UsdPhysics.DriveAPI(driver, "angular").GetStiffnessAttr().Set(0.0)
    return result, result.stage


def test_menagerie_2f85_with_its_connect_loops_matches_mujoco():
    mj = pytest.importorskip("mujoco")
    if not MENAGERIE.exists():
        pytest.skip(f"{MENAGERIE} not present")
    mm = mj.MjModel.from_xml_path(str(MENAGERIE))
    mm.opt.disableflags |= mj.mjtDisableBit.mjDSBL_CONTACT  # we model no contacts
    mm.actuator_gainprm[:] = 0.0  # the bare mechanism: no actuator
    mm.actuator_biasprm[:] = 0.0
    mm.eq_solref[:] = [0.004, 1.0]  # stiff equalities (connects and joint)
    mm.eq_solimp[:, :3] = [0.99, 0.999, 0.001]
    result, stage = _menagerie_usd()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(stage, fix_base=True, contacts=False)  # MuJoCo's contacts are off too
    # the two connects as closures; the one joint equality (NewtonMimicAPI, the default) one active relation
    assert len(model.closure_paths) == 2
    assert sorted(r["status"] for r in model.relations()) == ["active"]
    names = [mj.mj_id2name(mm, mj.mjtObj.mjOBJ_JOINT, j) for j in range(mm.njnt)]
    torque = 0.02  # N m opening the leader (the left driver)
    data = mj.MjData(mm)
    lead = mj.mj_name2id(mm, mj.mjtObj.mjOBJ_JOINT, "left_driver_joint")
    data.qfrc_applied[mm.jnt_dofadr[lead]] = torque
    dt, steps = float(mm.opt.timestep), 250  # 0.5 s; the drivers open to about 0.5 of their 0.8 rad
    ref = []
    for _ in range(steps):
        mj.mj_step(mm, data)
        ref.append(data.qpos.copy())
    ref = np.array(ref)
    ours = []
    _run(
        model,
        steps,
        dt,
        effort={result.joint_paths["left_driver_joint"]: torque},
        each=lambda i, q, s: ours.append(q.copy()),
    )
    ours = np.array(ours)
    cols = [model.dof_index(result.joint_paths[n]) for n in names]
    travel = np.abs(ref[-1]).max()
    assert travel > 0.2  # rad: the linkage really moved
    # 1% of the largest joint travel: MuJoCo's connect and joint equalities are soft (4 ms time
    # constant) where ours are exact; measured agreement 0.11% of travel, with the importer's
    # closures and mesh masses
    np.testing.assert_allclose(ours[:, cols], ref[:, mm.jnt_qposadr], atol=0.01 * travel)
