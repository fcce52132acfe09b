"""FET022 sweeps of grippers with colliders, now that the warp engine's solver has contacts.

The sample Robotiq-style linkage carries colliders on every link and, as the real Robotiq
asset does, ``physxArticulation:enabledSelfCollisions = false``: its fingers, which meet
when the sweep closes them, are filtered as PhysX filters them, and the sweep passes as it
does with its colliders disabled. Turned on, self-collision stops the fingers where they
touch, and the sweep fails: the contacts really act in the sweep.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pxr import UsdPhysics

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from mimic_ext.fet022 import run
from mimic_ext.schema.stage_io import open_stage
from mimic_ext.solver import build_model

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "robotiq_style_linkage.usda"


def _stage():
    return open_stage(str(SAMPLE)).stage


def _statuses(result):
    return [(f.follower, f.status) for f in result.followers]


def test_a_gripper_with_colliders_sweeps_as_without_them_when_its_fingers_are_filtered():
    st = _stage()
    model = build_model(st, fix_base=True)
    # every collider pair is filtered (one articulation, self-collision off): no contact kernels
    assert model.collision is None and not model.kernels.contacts
    assert any("can touch another" in w for w in model.warnings)
    with_colliders = run(st, engine="warp")
    bare = _stage()
    for prim in bare.Traverse():
        if prim.HasAPI(UsdPhysics.CollisionAPI):
            UsdPhysics.CollisionAPI(prim).CreateCollisionEnabledAttr(False)
    assert build_model(bare, fix_base=True).collision is None  # the plain solver
    without = run(bare, engine="warp")
    assert with_colliders.status == without.status == "pass"
    assert _statuses(with_colliders) == _statuses(without)


def test_self_collision_on_makes_the_fingers_meet_and_the_sweep_fail():
    st = _stage()
    root = next(p for p in st.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI))
    root.GetAttribute("physxArticulation:enabledSelfCollisions").Set(True)
    assert build_model(st, fix_base=True).kernels.contacts  # now the links can touch
    result = run(st, engine="warp")
    assert result.status == "fail"
    assert all(status == "fail" for _, status in _statuses(result))


def _without_articulation_api():
    """The sample with ``enabledSelfCollisions = false`` still authored but PhysxArticulationAPI
    removed from its root: PhysX then ignores the attribute (self-collision on)."""
    st = _stage()
    root = next(p for p in st.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI))
    assert root.GetAttribute("physxArticulation:enabledSelfCollisions").Get() is False
    root.RemoveAppliedSchema("PhysxArticulationAPI")
    return st


def test_self_collision_off_without_its_api_does_not_count():
    """As on PhysX (next test): the switch off without PhysxArticulationAPI leaves self-collision
    on, so the fingers meet and the sweep fails, and the reader says why."""
    st = _without_articulation_api()
    with pytest.warns(
        UserWarning, match="enabledSelfCollisions = False is authored but PhysxArticulationAPI is not applied"
    ):
        assert build_model(st, fix_base=True).kernels.contacts
    result = run(st, engine="warp")
    assert result.status == "fail"
    assert all(status == "fail" for _, status in _statuses(result))


def test_self_collision_off_without_its_api_fails_on_physx_too():
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    result = run(_without_articulation_api(), engine="physx")
    assert result.status == "fail"  # measured: every follower fails, as ours
    assert run(_stage(), engine="physx").status == "pass"  # with the API the fingers are filtered


def test_the_hosts_pair_count_is_the_kernels_filter():
    """``CollisionModel.live_pairs`` (host, decides whether a model needs contact kernels)
    counts exactly the pairs ``broadphase.filtered`` lets through, on stages with and without
    self-collision, a ground plane and a free body."""
    import warp as wp
    from pair_filter_probe import count_unfiltered

    on = _stage()
    root = next(p for p in on.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI))
    root.GetAttribute("physxArticulation:enabledSelfCollisions").Set(True)
    cases = [
        build_model(on, fix_base=True),
        build_model(_stage(), fix_base=True, ground_plane=0.0),
        build_model(on, fix_base=True, ground_plane=-1.0),
    ]
    for model in cases:
        cm = model.collision
        n = len(cm.shape_paths)
        out = wp.zeros(1, dtype=int, device=cm.device)
        wp.launch(count_unfiltered, dim=(n, n), inputs=[cm.data, out], device=cm.device)
        assert cm.live_pairs == int(out.numpy()[0]) > 0


def test_the_peer_engines_read_the_self_collision_switch_as_physx_does():
    """The MuJoCo and PhysX engines' reading (``prepared.self_collisions``) follows the same rule:
    the switch counts only with PhysxArticulationAPI (without it: None, PhysX's default, collide)."""
    from mimic_ext.fet022.engines.prepared import self_collisions

    st = _stage()
    root = next(p for p in st.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI))
    assert self_collisions(root) is False
    root.RemoveAppliedSchema("PhysxArticulationAPI")
    assert self_collisions(root) is None
