"""FET022 at scale: the warp engine simulates each independent part of a stage on its own.

The reference here is what the engine did before: one model of the whole stage, one
environment per swept joint, every environment simulating every joint. The engine now
simulates each independent part in environments of its own (translated copies once, parts
of one shape side by side in one model), so it must return the same positions, for every
watched joint in every environment (the environments that sweep another part included),
and the same bounding-box check; and a stage's report must not depend on how its parts
were grouped into models.
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
from benchmarks.sweep_scale import distinct_pairs  # noqa: E402

wp = pytest.importorskip("warp")
wp.config.quiet = True
from pxr import UsdGeom, UsdPhysics  # noqa: E402

from mimic_ext.fet022 import run  # noqa: E402
from mimic_ext.fet022.bbox import BoxCheck, body_radii  # noqa: E402
from mimic_ext.fet022.config import SweepConfig  # noqa: E402
from mimic_ext.fet022.discovery import discover  # noqa: E402
from mimic_ext.fet022.engines.warp import WarpEngine, body_sample_indices  # noqa: E402
from mimic_ext.fet022.plan import make_plan  # noqa: E402
from mimic_ext.schema import MimicRelation, read_relations  # noqa: E402
from mimic_ext.solver import Solver, build_model  # noqa: E402
from mimic_ext.solver.inspect import body_poses  # noqa: E402
from mimic_ext.solver.parts import independent_parts, part_spec, structure_key  # noqa: E402
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
    table = np.repeat(model.control().joint_target_q.numpy()[None], plan.total_steps, axis=0)
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
    stage = M.scale_stage(3, per_articulation=2)  # a fan of two fingers on a fixed palm, and one more
    spec = read_stage(stage, fix_base=True)
    parts = independent_parts(spec, read_relations(stage))
    names = [[spec.links[i].joint.path.rsplit("/", 1)[-1] for i in p] for p in parts]
    assert names == [
        ["lead0", "follow0"],
        ["lead1", "follow1"],
        ["lead0", "follow0"],
    ]  # each finger hangs from the world
    # a relation across fingers joins their parts
    extra = MimicRelation(
        follower="/World/mech0/lead1", leader="/World/mech0/lead0", multiplier=1.0, instance="rotY", schema="physx"
    )
    joined = independent_parts(spec, read_relations(stage) + [extra])
    assert len(joined) == 2 and len(joined[0]) == 4

    # a loop closure between two fingers joins them too; one to the world does not
    def closed(a, b):
        c = ClosureSpec(
            path="/World/closure",
            kind="revolute",
            link_a=a,
            frame_a=np.eye(4),
            link_b=b,
            frame_b=np.eye(4),
            mask=0b110111,
            angmode=1,
        )
        return independent_parts(replace(spec, closures=[c]), [])

    assert len(closed(1, 3)) == 2 and len(closed(-1, 3)) == 3
    # a relation naming a joint that no link has: no split (the whole model says what is wrong)
    stray = MimicRelation(follower="/World/nothing", leader="/World/mech0/lead0", multiplier=1.0)
    assert independent_parts(spec, [stray]) is None


@pytest.mark.parametrize("share,batch", [(True, None), (False, None), (False, 1), (True, 1)])
def test_part_models_reproduce_the_whole_stage_model(share, batch):
    stage = _boxed(M.scale_stage(4, per_articulation=2))
    # make one finger different (its leader's drive), so that not every part is a copy
    UsdPhysics.DriveAPI(stage.GetPrimAtPath("/World/mech1/lead1"), "angular").GetStiffnessAttr().Set(0.08)
    rels, plan, watch = _sweep_inputs(stage)
    trace = WarpEngine(share_copies=share, batch_parts=batch).simulate(stage, plan, watch, rels)
    ref_pos, ref_bodies = _reference(stage, plan, watch, rels)
    assert trace.timings["parts"] == 4
    assert trace.timings["parts_simulated"] == (2 if share else 4)  # three fingers are translated copies
    # the fingers have one shape: the simulated ones share one model unless batching is off
    assert trace.timings["models"] == (1 if batch is None else trace.timings["parts_simulated"])
    worst = max(float(np.abs(np.asarray(trace.positions[p]) - ref_pos[p]).max()) for p in watch)
    assert worst < POSITION_TOL
    for p in watch:  # indexing one environment reads the same rows
        assert np.array_equal(trace.positions[p][3], np.asarray(trace.positions[p])[3])
    for path, xyz in ref_bodies.items():  # m: float32 joint angles on 4 cm links
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
    assert max(abs(r - 0.5) for r in ratios) < 1e-3  # multiplier 0.5, held exactly (float32)


def test_parts_of_one_shape_whatever_their_numbers_share_a_key():
    stage = distinct_pairs(M.scale_stage(3, per_articulation=1))
    spec = read_stage(stage, fix_base=True)
    rels = read_relations(stage)
    parts = [part_spec(spec, links) for links in independent_parts(spec, rels)]
    rels_of = [[r for r in rels if r.follower.startswith(f"/World/mech{k}/")] for k in range(3)]
    keys = [structure_key(p, r) for p, r in zip(parts, rels_of)]
    assert keys[0] is not None and keys[0] == keys[1] == keys[2]
    assert parts[0].links[0].mass != parts[1].links[0].mass  # distinct numbers, one shape
    # a joint property that switches a row on (friction) is another shape, as is another relation set
    rubbed = replace(
        parts[1],
        links=[replace(parts[1].links[0], joint=replace(parts[1].links[0].joint, friction=0.1)), parts[1].links[1]],
    )
    assert structure_key(rubbed, rels_of[1]) != keys[1]
    assert structure_key(parts[1], []) != keys[1]
    closed = replace(
        parts[0],
        closures=[
            ClosureSpec(
                path="/World/c",
                kind="revolute",
                link_a=0,
                frame_a=np.eye(4),
                link_b=1,
                frame_b=np.eye(4),
                mask=0b110111,
                angmode=1,
            )
        ],
    )
    assert structure_key(closed, rels_of[0]) is None  # loop rows are dense over a model: never batched


def _same_report(a, b, path="report"):
    """Equal structure, strings, ints and flags; floats equal to ``REPORT_TOL`` (absolute, in the
    report's units: degrees, metres, ratios, volume ratios)."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            _same_report(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same_report(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert (np.isnan(a) and np.isnan(b)) or abs(a - b) <= REPORT_TOL, (path, a, b)
    else:
        assert a == b, (path, a, b)


#: A batched part computes with its first joint frame at the world origin, a part's own model at
#: its place on the stage, so float32 round-off differs: POSITION_TOL (rad) is 1.2e-4 deg, and
#: the ratios, volume ratios and errors derived from positions move by as little (measured on
#: this stage: 3.4e-6 at most, a reference joint's sample in degrees).
REPORT_TOL = 1.2e-4


def test_a_stage_of_distinct_parts_reports_the_same_batched_or_part_by_part():
    stage = _boxed(distinct_pairs(M.scale_stage(6, per_articulation=2)))
    counts = {}

    class Counted(WarpEngine):
        def simulate(self, *args, **kwargs):
            trace = super().simulate(*args, **kwargs)
            counts[self.batch_parts] = (trace.timings["parts_simulated"], trace.timings["models"])
            return trace

    def report(batch):
        d = run(stage, engine=Counted(batch_parts=batch), label="warp").to_dict()
        d.pop("timings")
        return d

    one_by_one, batched, pairs_of_two = report(1), report(None), report(2)
    assert counts[1] == (6, 6) and counts[2] == (6, 3) and counts[WarpEngine().batch_parts] == (6, 1)
    assert one_by_one["status"] == "pass" and all(f["status"] == "pass" for f in one_by_one["followers"])
    assert all(np.isfinite(f["bbox_volume_ratio"]) for f in one_by_one["followers"])  # the box check ran
    _same_report(one_by_one, batched)
    _same_report(one_by_one, pairs_of_two)


@pytest.mark.parametrize("sample", sorted((ROOT / "data").glob("*.usda")), ids=lambda p: p.stem)
def test_a_sample_reports_byte_for_byte_the_same_batched_or_not(sample):
    import json

    def report(batch):
        d = run(str(sample), engine=WarpEngine(batch_parts=batch), label="warp").to_dict()
        d.pop("timings")
        return json.dumps(d, sort_keys=True)

    assert report(1) == report(None)


def test_a_batch_whose_state_diverges_names_the_part_that_did():
    stage = distinct_pairs(M.scale_stage(4))
    # a drive stiffer than float32 holds (1e38 N m/deg is inf N m/rad): that part's state goes non-finite
    UsdPhysics.DriveAPI(stage.GetPrimAtPath("/World/mech2/lead0"), "angular").GetStiffnessAttr().Set(1e38)
    one_by_one = run(stage, engine=WarpEngine(batch_parts=1))
    batched = run(stage, engine=WarpEngine())
    assert one_by_one.status == batched.status == "error"
    assert "NaN or infinite while sweeping /World/mech2/lead0, (every joint held) /World/mech2/lead0" in batched.reason
    assert batched.reason == one_by_one.reason  # the batch was rerun part by part to say which


def test_a_batch_rerun_part_by_part_keeps_its_copies_on_their_reps(monkeypatch):
    """The rerun of a batch (after a non-finite flag) moves its parts to models of their own; the
    translated copies of those parts must read their reps' new models (their columns changed)."""
    import mimic_ext.fet022.engines.warp as W

    stage = distinct_pairs(M.scale_stage(4))
    for name in ("lead0",):  # pair 2 becomes a translated copy of pair 0 again
        src = UsdPhysics.DriveAPI(stage.GetPrimAtPath(f"/World/mech0/{name}"), "angular").GetStiffnessAttr().Get()
        UsdPhysics.DriveAPI(stage.GetPrimAtPath(f"/World/mech2/{name}"), "angular").GetStiffnessAttr().Set(src)
    for body in ("f0a", "f0b"):
        mass = UsdPhysics.MassAPI(stage.GetPrimAtPath(f"/World/mech0/{body}")).GetMassAttr().Get()
        UsdPhysics.MassAPI(stage.GetPrimAtPath(f"/World/mech2/{body}")).GetMassAttr().Set(mass)
    rels, plan, watch = _sweep_inputs(stage)
    reference = WarpEngine(batch_parts=1).simulate(stage, plan, watch, rels)
    real = W._step_through
    flagged = []

    def flag_the_first_batch(solver, model, plan, envs, mine):
        q, bad = real(solver, model, plan, envs, mine)
        if len(mine) > 1 and not flagged:  # the batch of three reps: say it diverged
            flagged.append(True)
            return q, [0]
        return q, bad

    monkeypatch.setattr(W, "_step_through", flag_the_first_batch)
    trace = WarpEngine().simulate(stage, plan, watch, rels)
    assert flagged and trace.timings["parts_simulated"] == 3 and reference.timings["parts_simulated"] == 3
    for p in watch:  # rerun part by part: the per-part models' very numbers
        assert np.array_equal(np.asarray(trace.positions[p]), np.asarray(reference.positions[p])), p
