"""Which pairs collide: a body's own shapes never; two static shapes never; links joined by
a joint not unless the joint says ``physics:collisionEnabled`` (the default is off, as in
PhysX); articulations without self-collision; collision groups (filtered, inverted,
merged); ``FilteredPairsAPI`` on bodies and on single colliders."""

from __future__ import annotations

import numpy as np
import pytest
from pxr import Gf, UsdGeom, UsdPhysics
from solver_stages import StageBuilder

from mimic_ext.solver import build_model
from mimic_ext.solver.collision import build_collision


def cube(stage, path, size=0.25, t=(0, 0, 0)):
    g = UsdGeom.Cube.Define(stage, path)
    g.CreateSizeAttr(size)
    g.AddTranslateOp().Set(Gf.Vec3d(*t))
    UsdPhysics.CollisionAPI.Apply(g.GetPrim())
    return str(g.GetPath())


def tower():
    """A welded base and two links stacked by hinges, each with a 25 cm cube 10 cm above the
    last: neighbours overlap, and so do the base and the top link (not neighbours). A free
    ball rests in the base's cube."""
    b = StageBuilder(fixed_base=True)
    l1 = b.body("l1", pos=(0, 0, 0.1))
    l2 = b.body("l2", pos=(0, 0, 0.2))
    j1 = b.revolute("j1", b.base, l1, "X", pos0=(0, 0, 0.1))
    j2 = b.revolute("j2", l1, l2, "X", pos0=(0, 0, 0.1))
    ball = b.body("ball", pos=(0.1, 0, 0))
    shapes = {
        "base": cube(b.stage, f"{b.base}/a"),
        "base2": cube(b.stage, f"{b.base}/b", t=(0.01, 0, 0)),
        "l1": cube(b.stage, f"{l1}/c"),
        "l2": cube(b.stage, f"{l2}/c"),
        "l2b": cube(b.stage, f"{l2}/d", t=(0, 0.01, 0)),
    }
    s = UsdGeom.Sphere.Define(b.stage, f"{ball}/s")
    s.CreateRadiusAttr(0.05)
    UsdPhysics.CollisionAPI.Apply(s.GetPrim())
    shapes["ball"] = str(s.GetPath())
    return b, shapes, {"j1": j1, "j2": j2, "l1": l1, "l2": l2, "ball": ball}


def touching(stage):
    """Unordered pairs of shape paths in contact."""
    model = build_model(stage)
    cm = build_collision(stage, model)
    cm.collide(*cm.frames(model))
    c = cm.contacts()
    return {frozenset(k) for k in c.pairs(0)}, cm


def names(pairs, shapes):
    inv = {v: k for k, v in shapes.items()}
    return {frozenset(inv[p] for p in pair) for pair in pairs}


ALL_BUT_NEIGHBOURS = {
    frozenset(p)
    for p in [
        ("base", "l2"),
        ("base", "l2b"),
        ("base2", "l2"),
        ("base2", "l2b"),
        ("base", "ball"),
        ("base2", "ball"),
        ("l1", "ball"),
    ]
}


@pytest.fixture(autouse=True)
def _quiet(recwarn):
    """Bodies without mass properties get a default, with a warning; not the point here."""
    yield


def test_defaults_skip_own_shapes_and_jointed_neighbours():
    b, shapes, _ = tower()
    pairs, cm = touching(b.stage)
    assert names(pairs, shapes) == ALL_BUT_NEIGHBOURS
    # the filtered candidates: base/l1 (x2 shapes), l1/l2 (x2), own shapes of base and of l2
    assert cm.stats()[0][2] == 2 + 2 + 1 + 1


def test_a_joint_with_collision_enabled_lets_its_bodies_collide():
    b, shapes, p = tower()
    UsdPhysics.Joint(b.stage.GetPrimAtPath(p["j1"])).CreateCollisionEnabledAttr(True)
    pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == ALL_BUT_NEIGHBOURS | {frozenset(("base", "l1")), frozenset(("base2", "l1"))}


def test_articulation_without_self_collision():
    b, shapes, _ = tower()
    root = b.stage.GetPrimAtPath(b.base)
    assert root.HasAPI(UsdPhysics.ArticulationRootAPI)
    from pxr import Sdf

    root.CreateAttribute("physxArticulation:enabledSelfCollisions", Sdf.ValueTypeNames.Bool).Set(False)
    # without PhysxArticulationAPI PhysX ignores the switch (tests/test_contact_fet022.py), and so do we
    with pytest.warns(UserWarning, match="PhysxArticulationAPI is not applied"):
        pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == ALL_BUT_NEIGHBOURS
    root.AddAppliedSchema("PhysxArticulationAPI")
    pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == {frozenset(p) for p in [("base", "ball"), ("base2", "ball"), ("l1", "ball")]}


def test_filtered_pairs_on_a_body_and_on_one_collider():
    b, shapes, p = tower()
    UsdPhysics.FilteredPairsAPI.Apply(b.stage.GetPrimAtPath(p["l2"])).CreateFilteredPairsRel().AddTarget(b.base)
    pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == ALL_BUT_NEIGHBOURS - {
        frozenset(p) for p in [("base", "l2"), ("base", "l2b"), ("base2", "l2"), ("base2", "l2b")]
    }
    b, shapes, p = tower()
    api = UsdPhysics.FilteredPairsAPI.Apply(b.stage.GetPrimAtPath(shapes["l2"]))
    api.CreateFilteredPairsRel().AddTarget(shapes["base"])
    pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == ALL_BUT_NEIGHBOURS - {frozenset(("base", "l2"))}


def _group(stage, name, members, filtered=(), invert=False, merge=None):
    g = UsdPhysics.CollisionGroup.Define(stage, f"/World/groups/{name}")
    inc = g.GetCollidersCollectionAPI().CreateIncludesRel()
    for m in members:
        inc.AddTarget(m)
    rel = g.CreateFilteredGroupsRel()
    for f in filtered:
        rel.AddTarget(f"/World/groups/{f}")
    if invert:
        g.CreateInvertFilteredGroupsAttr(True)
    if merge:
        g.CreateMergeGroupNameAttr(merge)
    return g


def test_collision_groups_filter_invert_and_merge():
    b, shapes, p = tower()
    _group(b.stage, "low", [b.base], filtered=["high"])  # a body path: all its colliders
    _group(b.stage, "high", [p["l2"]])
    pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == {frozenset(x) for x in [("base", "ball"), ("base2", "ball"), ("l1", "ball")]}
    # inverted: "low" meets only "high"; the ungrouped ball no longer touches the base
    b, shapes, p = tower()
    _group(b.stage, "low", [b.base], filtered=["high"], invert=True)
    _group(b.stage, "high", [p["l2"]])
    pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == ALL_BUT_NEIGHBOURS - {frozenset(("base", "ball")), frozenset(("base2", "ball"))}
    # merged: "high2" shares "high"'s merge name, so "low" filtering "high" filters it too
    b, shapes, p = tower()
    _group(b.stage, "low", [b.base], filtered=["high"])
    _group(b.stage, "high", [], merge="upper")
    _group(b.stage, "high2", [p["l2"]], merge="upper")
    pairs, _ = touching(b.stage)
    assert names(pairs, shapes) == {frozenset(x) for x in [("base", "ball"), ("base2", "ball"), ("l1", "ball")]}


def test_filtered_pairs_are_counted_not_collided():
    b, shapes, p = tower()
    _, cm = touching(b.stage)
    stats = cm.stats()[0]
    assert stats[0] >= stats[1] + stats[2]  # candidates >= collided + filtered
    c = cm.contacts()
    assert c.count[0] > 0 and np.all(c.frames[0, : c.count[0], 0] != c.frames[0, : c.count[0], 1])
