"""FET022 at scale: the warp engine simulates each independent part of a stage on its own.

The reference here is what the engine did before: one model of the whole stage, one
environment per swept joint, every environment simulating every joint. The engine now
builds a model per independent part (and runs translated copies once), so it must return
the same positions, for every watched joint in every environment (the environments that
sweep another part included), and the same bounding-box check.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import mechanisms as M  # noqa: E402

wp = pytest.importorskip("warp")
wp.config.quiet = True
from pxr import Gf, UsdGeom, UsdPhysics  # noqa: E402

from mimic_ext.fet022 import run  # noqa: E402
from mimic_ext.fet022.bbox import BoxCheck, body_radii  # noqa: E402
from mimic_ext.fet022.config import SweepConfig  # noqa: E402
from mimic_ext.fet022.discovery import discover  # noqa: E402
from mimic_ext.fet022.engines.warp import WarpEngine, body_sample_indices  # noqa: E402
from mimic_ext.fet022.plan import make_plan  # noqa: E402
from mimic_ext.schema import MimicRelation, read_relations, set_relation  # noqa: E402
from mimic_ext.solver import Solver, build_model  # noqa: E402
from mimic_ext.solver.inspect import body_poses  # noqa: E402
from mimic_ext.solver.parts import independent_parts  # noqa: E402
from mimic_ext.solver.stage_reader import ClosureSpec, read_stage  # noqa: E402

#: Positions agree to this (rad): the part models take spatial quantities about their own
#: root instead of the whole stage's first one, and the whole-stage solve adds exact zeros of
#: the other parts, so float32 round-off differs (measured: 1.8e-7 rad, one float32 ulp of the
#: ~1 rad angles, after the 720 steps; the bound leaves room for longer chains of round-off).
POSITION_TOL = 2e-6


def _boxed(stage):
    """Give every body a 2 cm cube, so the bounding-box check runs."""
    for prim in list(stage.Traverse()):
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            UsdGeom.Cube.Define(stage, prim.GetPath().AppendChild("geom")).CreateSizeAttr(0.02)
    return stage


def _reference(stage, plan, watch, rels):
    """The sweep as the engine ran it before: one whole-stage model, every joint in every environment."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(stage, num_envs=plan.num_envs, fix_base=True, relations=rels)
    for pj in plan.joints:
        if pj.drive.source == "test":
            model.set_drive(pj.path, pj.drive.stiffness, pj.drive.damping, pj.drive.max_force)
    solver = Solver(model, threads=1)
    state = model.state()
    table = np.repeat(model.control().joint_target_pos.numpy()[None], plan.total_steps, axis=0)
    table[:, :, [model.dof_index(pj.path) for pj in plan.joints]] = plan.target_block(0, plan.total_steps)
    after = plan.sample_steps[plan.sample_steps > 0]
    q = solver.step_many(state, table, plan.dt, sample_after=after).numpy().astype(float)
    positions = {p: q[:, :, model.dof_index(p)].T for p in watch}
    samples = body_sample_indices(q.shape[0])
    bodies = {}
    for e in range(plan.num_envs):
        for k, s in enumerate(samples):
            for path, pose in body_poses(model, q[s, e]).items():
                if path not in model.spec.world_bodies:
                    bodies.setdefault(path, np.empty((plan.num_envs, len(samples), 3)))[e, k] = pose[:3, 3]
    return positions, bodies


def _sweep_inputs(stage):
    rels = read_relations(stage)
    found = discover(stage, rels)
    plan = make_plan(found.swept, SweepConfig())
    watch = sorted({p for c in found.cases for p in (c.follower, c.reference, c.swept)})
    return rels, plan, watch


def test_parts_are_trees_joined_by_relations_and_loops():
    stage = M.scale_stage(3, per_articulation=2)          # a fan of two fingers on a fixed palm, and one more
    spec = read_stage(stage, fix_base=True)
    parts = independent_parts(spec, read_relations(stage))
    names = [[spec.links[i].joint.path.rsplit("/", 1)[-1] for i in p] for p in parts]
    assert names == [["lead0", "follow0"], ["lead1", "follow1"], ["lead0", "follow0"]]   # each finger hangs from the world
    # a relation across fingers joins their parts
    extra = MimicRelation(follower="/World/mech0/lead1", leader="/World/mech0/lead0", multiplier=1.0,
                          instance="rotY", schema="physx")
    joined = independent_parts(spec, read_relations(stage) + [extra])
    assert len(joined) == 2 and len(joined[0]) == 4
    # a loop closure between two fingers joins them too; one to the world does not
    def closed(a, b):
        c = ClosureSpec(path="/World/closure", kind="revolute", link_a=a, frame_a=np.eye(4), link_b=b,
                        frame_b=np.eye(4), mask=0b110111, angmode=1)
        return independent_parts(replace(spec, closures=[c]), [])
    assert len(closed(1, 3)) == 2 and len(closed(-1, 3)) == 3
    # a relation naming a joint that no link has: no split (the whole model says what is wrong)
    stray = MimicRelation(follower="/World/nothing", leader="/World/mech0/lead0", multiplier=1.0)
    assert independent_parts(spec, [stray]) is None


@pytest.mark.parametrize("share", [True, False])
def test_part_models_reproduce_the_whole_stage_model(share):
    stage = _boxed(M.scale_stage(4, per_articulation=2))
    # make one finger different (its leader's drive), so that not every part is a copy
    UsdPhysics.DriveAPI(stage.GetPrimAtPath("/World/mech1/lead1"), "angular").GetStiffnessAttr().Set(0.08)
    rels, plan, watch = _sweep_inputs(stage)
    trace = WarpEngine(share_copies=share).simulate(stage, plan, watch, rels)
    ref_pos, ref_bodies = _reference(stage, plan, watch, rels)
    assert trace.timings["parts"] == 4
    assert trace.timings["parts_simulated"] == (2 if share else 4)    # three fingers are translated copies
    worst = max(float(np.abs(np.asarray(trace.positions[p]) - ref_pos[p]).max()) for p in watch)
    assert worst < POSITION_TOL
    for p in watch:                                        # indexing one environment reads the same rows
        assert np.array_equal(trace.positions[p][3], np.asarray(trace.positions[p])[3])
    for path, xyz in ref_bodies.items():                   # m: float32 joint angles on 4 cm links
        assert np.abs(np.asarray(trace.body_positions[path]) - xyz).max() < 1e-6
    radii = body_radii(stage, ref_bodies)
    ours, theirs = BoxCheck(trace.body_positions, radii, 10.0), BoxCheck(ref_bodies, radii, 10.0)
    assert ours.bounded
    for env in range(plan.num_envs):
        a, b = ours.explosion(env), theirs.explosion(env)
        assert b.ratio > 1.0 and abs(a.ratio - b.ratio) < 1e-6 * b.ratio and a.sample == b.sample


def test_a_sweep_of_many_copies_simulates_one_and_judges_each():
    stage = M.scale_stage(40)
    result = run(stage)
    assert result.status == "pass" and len(result.followers) == 40 and result.num_envs == 40
    ratios = [f.motion_ratio for f in result.followers]
    assert max(abs(r - 0.5) for r in ratios) < 1e-3        # multiplier 0.5, held exactly (float32)
