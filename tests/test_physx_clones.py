"""PhysX's copies of a robot step like environment 0 (``fet022.engines.physx_layout``).

ovphysx 0.7 clones a robot by moving it, and on stages with loop-closing joints (or an
articulation root body welded to the world) PhysX's motion depends on where the robot stands:
the shared Newton 2F-85 cloned 1 m out along X went NaN within the FET022 sweep
(``python benchmarks/physx_clones.py``). ``run_physx`` now clones only along an axis where a copy
steps as the source does, and runs the environments one after another where there is none.

Skipped without the physx extra (ovphysx) or the shared Robotiq assets.
"""

from __future__ import annotations

import numpy as np
import pytest
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

pytest.importorskip("ovphysx", reason="real PhysX needs the physx extra: pip install 'mimic-ext[physx]'")

from fet022_engines_common import DATA, SHARED, shared

from benchmarks.physx_clones import sweep_copy
from mimic_ext.fet022.engines.physx_layout import faithful_axes, layout
from mimic_ext.fet022.engines.physx_session import joint_names, run_physx

ISAAC = "robotiq_isaacsim_usd_2f85/Gripper_2F85"
COMPLIANT = f"{ISAAC}/configuration/Robotiq_2F_85_config_physics_compliant.usda"
NEWTON = "robotiq_isaacsim_usd_2f85/Gripper_2F85_newton/Robotiq_2F85_newton.usda"

#: A faithful copy repeats environment 0's float32 joint positions bit for bit (measured 0 on
#: both stages below); 1e-6 rad leaves room for a rounding a future ovphysx might add, and is
#: far below what an unfaithful copy shows (5e-6 rad to NaN, benchmarks/physx_clones.py).
SAME = 1e-6


def _sweep_copy(relative: str):
    """The FET022 PhysX engine's prepared copy of a shared stage, its clone source and plan."""
    return sweep_copy(shared(SHARED / relative))


def _run_two(stage, source, plan):
    """Both environments given environment 0's targets: the copies must repeat it."""
    block = plan.target_block(0, plan.total_steps)
    targets = {pj.path: np.repeat(block[:, :1, j], 2, axis=1) for j, pj in enumerate(plan.joints)}
    record = list(joint_names(stage, source)[0].values())
    return run_physx(
        stage,
        plan.total_steps,
        plan.dt,
        targets,
        record=record,
        num_envs=2,
        sample_steps=plan.sample_steps,
        clone_source=source,
    )


def _worst_copy_difference(out) -> float:
    d = np.concatenate([np.abs(v[1] - v[0]) for v in out.positions.values()])
    return float("inf") if not np.isfinite(d).all() else float(d.max())


def test_a_planar_loop_stage_is_cloned_along_its_hinge_axis_and_its_copy_repeats_env0():
    """The Isaac 2F-85 (two revolute loop joints, every hinge along the stage's X): cloned along X."""
    stage, source, plan = _sweep_copy(COMPLIANT)
    axes, why = faithful_axes(stage, source)
    assert axes == "X" and "loop-closing joints" in why
    out = _run_two(stage, source, plan)
    assert not any("one after another" in n for n in out.notes), out.notes
    assert _worst_copy_difference(out) < SAME


def test_a_spherical_loop_stage_is_run_one_environment_after_another():
    """The Newton 2F-85 (spherical loop joints: no axis is safe): not cloned, a note says why,
    and the second environment repeats the first (cloned along X it went NaN)."""
    stage, source, plan = _sweep_copy(NEWTON)
    assert faithful_axes(stage, source)[0] == ""
    out = _run_two(stage, source, plan)
    assert any("one after another" in n and "loop-closing joints" in n for n in out.notes), out.notes
    assert _worst_copy_difference(out) < SAME


def test_a_tree_clones_along_any_axis_and_a_forced_axis_is_noted():
    stage = Usd.Stage.Open(str(DATA / "robotiq_style_linkage.usda"))
    root = str(next(p.GetPath() for p in stage.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI)))
    assert faithful_axes(stage, root) == ("XYZ", "")
    env = layout(stage, root, 3, 1.0)
    assert env.axis == "X" and env.faithful and env.note == ""


def test_an_articulation_root_body_welded_to_the_world_is_not_cloned():
    """PhysX's copy keeps the source's world-anchored weld frame (a copy 1 m out NaN after a step)."""
    st = Usd.Stage.CreateInMemory()
    UsdGeom.Xform.Define(st, "/Robot")
    for name in ("base", "arm"):
        UsdPhysics.RigidBodyAPI.Apply(UsdGeom.Xform.Define(st, f"/Robot/{name}").GetPrim())
    UsdPhysics.ArticulationRootAPI.Apply(st.GetPrimAtPath("/Robot/base"))
    UsdPhysics.FixedJoint.Define(st, "/Robot/weld").CreateBody1Rel().SetTargets([Sdf.Path("/Robot/base")])
    hinge = UsdPhysics.RevoluteJoint.Define(st, "/Robot/hinge")
    hinge.CreateBody0Rel().SetTargets([Sdf.Path("/Robot/base")])
    hinge.CreateBody1Rel().SetTargets([Sdf.Path("/Robot/arm")])
    hinge.CreateLocalPos1Attr(Gf.Vec3f(-0.1, 0, 0))
    axes, why = faithful_axes(st, "/Robot")
    assert axes == "" and "/Robot/base" in why and "world" in why
    forced = layout(st, "/Robot", 2, 1.0, along="Y")
    assert forced.axis == "Y" and not forced.faithful and "may not step like environment 0" in forced.note
