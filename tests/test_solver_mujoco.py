"""Cross-check against MuJoCo (optional extra): same mechanism, MuJoCo with a stiff joint equality."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import franka_hand_equivalent, independent_pair

mujoco = pytest.importorskip("mujoco")
wp = pytest.importorskip("warp")
wp.config.quiet = True
from mimic_ext.solver import Solver, build_model  # noqa: E402

HAND = Path(__file__).resolve().parents[1].parent / "shared" / "assets" / "menagerie_franka_hand" / "hand.xml"
STIFF = 'solref="0.004 1" solimp="0.99 0.999 0.001"'


def _ours(model, steps, dt, effort):
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    c.joint_f.assign(np.atleast_2d(effort))
    out = []
    for _ in range(steps):
        solver.step(s0, s1, c, dt)
        s0, s1 = s1, s0
        out.append(s0.joint_q.numpy()[0].astype(np.float64))
    return np.array(out)


def test_two_joint_mimic_matches_mujoco():
    I_l, I_f, m, c = 2.0, 0.5, -2.0, 0.0
    b, lead, fol = independent_pair(I_l=I_l, I_f=I_f, multiplier=m, offset=c)
    model = build_model(b.stage)
    dt, steps = 0.002, 500
    ours = _ours(model, steps, dt, [1.0, 0.25])
    xml = f"""<mujoco><option timestep="{dt}" gravity="0 0 0" integrator="implicitfast"/>
      <worldbody>
        <body name="l"><inertial pos="0 0 0" mass="1" diaginertia="1 1 {I_l}"/><joint name="lead" axis="0 0 1"/></body>
        <body name="f" pos="0 1 0"><inertial pos="0 0 0" mass="1" diaginertia="1 1 {I_f}"/><joint name="fol" axis="0 0 1"/></body>
      </worldbody>
      <equality><joint joint1="fol" joint2="lead" polycoef="{c} {m} 0 0 0" {STIFF}/></equality></mujoco>"""
    mm = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mm)
    d.qfrc_applied[:] = [1.0, 0.25]
    ref = []
    for _ in range(steps):
        mujoco.mj_step(mm, d)
        ref.append(d.qpos.copy())
    ref = np.array(ref)
    il, jf = model.dof_index(lead), model.dof_index(fol)
    # after 1 s the leader has turned (1 - 0.5) / (2 + 4 * 0.5) / 2 = 0.0625 rad; MuJoCo's soft
    # equality lags by its 4 ms time constant, which costs < 1% of the travel
    np.testing.assert_allclose(ours[:, il], ref[:, 0], rtol=0, atol=0.01 * abs(ref[-1, 0]))
    np.testing.assert_allclose(ours[:, jf], ref[:, 1], rtol=0, atol=0.01 * abs(ref[-1, 1]))


def test_franka_hand_matches_mujoco():
    if not HAND.exists():
        pytest.skip("shared franka hand asset absent")
    mm = mujoco.MjModel.from_xml_path(str(HAND))
    mm.actuator_biasprm[:] = 0.0  # compare the bare mechanism: no tendon actuator
    mm.actuator_gainprm[:] = 0.0
    mm.eq_solref[:] = [0.004, 1.0]  # a stiff joint equality
    mm.eq_solimp[:, :3] = [0.99, 0.999, 0.001]
    d = mujoco.MjData(mm)
    j1 = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, "finger_joint1")
    j2 = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, "finger_joint2")
    force = 0.3
    d.qfrc_applied[mm.jnt_dofadr[j2]] = force  # push the leader open
    dt = mm.opt.timestep
    steps = 180  # stop before the 4 cm limit (MuJoCo's limits are soft)
    ref = []
    for _ in range(steps):
        mujoco.mj_step(mm, d)
        ref.append([d.qpos[mm.jnt_qposadr[j1]], d.qpos[mm.jnt_qposadr[j2]]])
    ref = np.array(ref)

    b, p1, p2 = franka_hand_equivalent()
    model = build_model(b.stage)
    model.damping[:] = 1.0  # MJCF joint damping="1" (the panda class)
    eff = np.zeros(model.dof_count)
    eff[model.dof_index(p2)] = force
    ours = _ours(model, steps, dt, eff)
    i1, i2 = model.dof_index(p1), model.dof_index(p2)
    travel = abs(ref[-1, 1])
    assert travel > 0.01  # the fingers really moved (about 3.5 cm of 4)
    # 2% of the travel: MuJoCo's equality is soft (4 ms time constant); measured agreement ~1%
    np.testing.assert_allclose(ours[:, i2], ref[:, 1], atol=0.02 * travel)
    np.testing.assert_allclose(ours[:, i1], ref[:, 0], atol=0.02 * travel)
