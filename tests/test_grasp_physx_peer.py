"""Real PhysX (ovphysx, CPU) as the grasp benchmark's peer (issue 26): the importer's stage of
the Menagerie grasp scene (``benchmarks/grasp_scene.py``), cloned per environment with its
box, steps on the benchmark's schedule and reads back the boxes' poses.

Skipped without ovphysx (the physx extra) or the shared Menagerie 2F-85.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import grasp_scene as G  # noqa: E402
from mimic_ext.fet022.engines.physx_layout import layout  # noqa: E402

needs_menagerie = pytest.mark.skipif(not (G.MENAGERIE / "2f85.xml").exists(), reason="shared Menagerie 2F-85 absent")


def test_layout_places_companions_with_the_robot_on_both_sides():
    """A companion subtree (the box) gets the robot's offsets, environment by environment, and
    its paths map into its own copies; ``centred`` alternates sides. Exact: offsets are sums of
    whole spacings on values USD stores as doubles."""
    st = Usd.Stage.CreateInMemory()
    UsdGeom.Xform.Define(st, "/robot")
    UsdGeom.Xform.Define(st, "/Scene")
    UsdGeom.Xform.Define(st, "/Scene/box").AddTranslateOp().Set(Gf.Vec3d(0.1, 0.2, 0.3))
    env = layout(st, "/robot", 4, 2.0, along="Y", centred=True, companions=["/Scene/box"])
    assert [a[:3] for a in env.anchors] == [(0, 2, 0), (0, -2, 0), (0, 4, 0)]
    (box,) = env.companions
    assert [a[:3] for a in box.anchors] == [pytest.approx((0.1, 0.2 + d, 0.3)) for d in (2, -2, 4)]
    assert env.env_path("/robot/link", 2) == "/robot_fet022_env2/link"
    assert env.env_path("/Scene/box", 3) == "/Scene/box_fet022_env3"
    assert env.env_path("/Scene/box", 0) == "/Scene/box"
    plain = layout(st, "/robot", 3, 1.5)  # the sweep's layout: along X from the source
    assert [a[:3] for a in plain.anchors] == [(1.5, 0, 0), (3.0, 0, 0)] and plain.companions == []


@needs_menagerie
def test_physx_grasp_peer_builds_two_clones_and_steps_the_schedule(tmp_path):
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    xml = G.scene_xml(tmp_path)
    g = G.PhysxGrasp(xml, num_envs=2, spacing=1.0)
    try:
        start = g.box_pose()
        for i in range(10):
            g.step(i)
        pose = g.box_pose()
        rel = g.box_in_gripper()
        res = g.residual()
        q = g.session.dof_rows(0)
    finally:
        g.close()
    assert pose.shape == (2, 7) and np.isfinite(pose).all() and np.isfinite(rel).all()
    # the clones 1 m apart along Y, each box where the source's stood: within 1 cm (the boxes
    # rest on the floor; ten steps of the fingers closing move them by less than a millimetre,
    # a clone placed on its neighbour would be 1 m off)
    assert np.abs(start[1, :3] - start[0, :3] - (0.0, 1.0, 0.0)).max() < 1e-6  # float32 reads of 1.0
    assert np.abs(pose[1, :3] - pose[0, :3] - (0.0, 1.0, 0.0)).max() < 1e-2
    assert np.abs(pose[:, 2] - 0.5 * G.BOX).max() < 1e-2
    # the clone is the same mechanism: its joints where the source's are, within 1e-3 rad (the
    # fingers touch the box in these steps, and its contacts 1 m out round differently in float32:
    # 7e-5 rad measured). Clones offset along X were not: PhysX's cloned loop-closing joints drove
    # their fingers 0.4 rad shut within 3 steps (hence the layout along Y)
    assert np.abs(q[1] - q[0]).max() < 1e-3
    # PhysX's mimic joint is hard: the driver relation within 1e-3 rad (1.1e-5 measured)
    assert np.abs(res).max() < 1e-3
