"""Stage -> model: units, frames, mass properties, drives, joint properties, bases, gravity."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, Sdf, UsdGeom, UsdPhysics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_stages import DEG, StageBuilder, gripper

pytest.importorskip("warp")
from mimic_ext.schema import joints as J
from mimic_ext.solver import build_model
from mimic_ext.solver.inspect import body_poses


def test_physx_joint_attributes_count_only_where_physx_joint_api_is_applied():
    """omni.physx reads physxJoint:maxJointVelocity, armature and jointFriction only where
    PhysxJointAPI is applied (NVIDIA-Omniverse/PhysX, usdLoad/Joint.cpp): authored without it
    they are ignored, each with a note naming the prim, the attribute and the fix. Whether an
    API is applied is read from the composed apiSchemas too, which USD's GetAppliedSchemas
    leaves out for an API its registry does not know."""
    b = StageBuilder()
    body = b.body("arm", mass=1.0, inertia=(0.01, 0.01, 0.01))
    j = b.revolute("hinge", None, body, "Z")
    prim = b.stage.GetPrimAtPath(j)
    values = {"physxJoint:maxJointVelocity": 90.0, "physxJoint:armature": 0.5, "physxJoint:jointFriction": 0.2}
    for name, value in values.items():
        prim.CreateAttribute(name, Sdf.ValueTypeNames.Float).Set(value)
    model = build_model(b.stage)
    i = model.dof_index(j)
    assert not np.isfinite(model.max_velocity[i]) and model.armature[i] == 0.0 and model.friction[i] == 0.0
    for name in values:
        assert any(
            w.startswith(f"{j}: {name} = ") and "PhysxJointAPI is not applied" in w and "apply PhysxJointAPI" in w
            for w in model.warnings
        ), name
    prim.AddAppliedSchema("PhysxJointAPI")
    model = build_model(b.stage)
    # float32 authoring: 1e-6 relative
    assert model.max_velocity[i] == pytest.approx(90 * DEG, rel=1e-6)
    assert model.armature[i] == pytest.approx(0.5, rel=1e-6)
    assert model.friction[i] == pytest.approx(0.2, rel=1e-6)
    assert not any("PhysxJointAPI" in w for w in model.warnings)
    prim.AddAppliedSchema("SomeUnregisteredAPI")  # in apiSchemas, unknown to the registry
    assert "SomeUnregisteredAPI" not in prim.GetAppliedSchemas()
    assert J.has_api(prim, "SomeUnregisteredAPI") and not J.has_api(prim, "PhysxMimicJointAPI")


def test_physx_joint_axis_api_takes_precedence_as_in_omni_physx():
    """Where PhysxJointAxisAPI:angular is applied, omni.physx takes the velocity cap and armature
    from its ``physxJointAxis:angular:*`` attributes and not PhysxJointAPI's (usdLoad/Joint.cpp);
    its friction is a torque, the dynamic effort here (a static one that differs, a viscous
    coefficient and the PhysxJointAPI values it overrides are named in notes)."""
    b = StageBuilder()
    body = b.body("arm", mass=1.0, inertia=(0.01, 0.01, 0.01))
    j = b.revolute("hinge", None, body, "Z")
    prim = b.stage.GetPrimAtPath(j)
    prim.AddAppliedSchema("PhysxJointAPI")
    prim.CreateAttribute("physxJoint:maxJointVelocity", Sdf.ValueTypeNames.Float).Set(90.0)
    prim.AddAppliedSchema("PhysxJointAxisAPI:angular")
    for name, value in (
        ("maxJointVelocity", 45.0),
        ("armature", 0.3),
        ("dynamicFrictionEffort", 0.1),
        ("staticFrictionEffort", 0.2),
        ("viscousFrictionCoefficient", 0.05),
    ):
        prim.CreateAttribute(f"physxJointAxis:angular:{name}", Sdf.ValueTypeNames.Float).Set(value)
    model = build_model(b.stage)
    i = model.dof_index(j)
    # float32 authoring: 1e-6 relative
    assert model.max_velocity[i] == pytest.approx(45 * DEG, rel=1e-6)
    assert J.max_velocity_si(prim) == pytest.approx(45 * DEG, rel=1e-6)
    assert model.armature[i] == pytest.approx(0.3, rel=1e-6)
    assert model.friction[i] == pytest.approx(0.1, rel=1e-6)
    for words in (
        "physxJoint:maxJointVelocity is authored but PhysxJointAxisAPI:angular is applied",
        "staticFrictionEffort = 0.2",
        "viscousFrictionCoefficient is not modelled",
    ):
        assert any(w.startswith(f"{j}: ") and words in w for w in model.warnings), words


def test_units_drives_and_joint_properties_convert_to_si():
    b = StageBuilder(gravity=980.0)
    UsdGeom.SetStageMetersPerUnit(b.stage, 0.01)  # centimetres
    base = b.body("base", mass=2.0, inertia=(1, 2, 3), pos=(0, 0, 0))
    arm = b.body("arm", mass=1.0, inertia=(100.0, 100.0, 100.0), com=(10, 0, 0))
    slider = b.body("slider", mass=0.5, inertia=(1, 1, 1))
    b.fixed("anchor", None, base)
    rj = b.revolute("hinge", base, arm, "Y", limits_deg=(-45, 90), pos0=(0, 0, 50))
    pj = b.prismatic("slide", arm, slider, "X", limits=(-2, 3), pos0=(20, 0, 0))
    b.drive(rj, stiffness=2.0, damping=0.1, target=30.0, max_force=7.0)
    prim = b.stage.GetPrimAtPath(rj)
    prim.AddAppliedSchema("PhysxJointAPI")
    prim.CreateAttribute("physxJoint:maxJointVelocity", Sdf.ValueTypeNames.Float).Set(90.0)
    prim.CreateAttribute("physxJoint:armature", Sdf.ValueTypeNames.Float).Set(10.0)
    prim.CreateAttribute("physxJoint:jointFriction", Sdf.ValueTypeNames.Float).Set(100.0)
    model = build_model(b.stage)
    assert model.joint_paths == [rj, pj]  # topological order
    assert model.joint_kind == ["revolute", "prismatic"]
    assert model.base_bodies == []  # welded to the world
    i, k = model.dof_index(rj), model.dof_index(pj)
    # float32 authoring: 1e-6 relative
    assert model.limits(rj) == pytest.approx((-45 * DEG, 90 * DEG), rel=1e-6)
    assert model.limits(pj) == pytest.approx((-0.02, 0.03), rel=1e-6)
    d = model.drive(rj)
    # per degree -> per radian (x 180/pi), USD torque kg cm^2/s^2 -> N m (x 1e-4)
    assert d["stiffness"] == pytest.approx(2.0 / DEG * 1e-4, rel=1e-6)
    assert d["damping"] == pytest.approx(0.1 / DEG * 1e-4, rel=1e-6)
    assert d["max_force"] == pytest.approx(7.0 * 1e-4, rel=1e-6)
    assert d["target_pos"] == pytest.approx(30 * DEG, rel=1e-6)
    assert model.max_velocity[i] == pytest.approx(90 * DEG, rel=1e-6)
    assert model.armature[i] == pytest.approx(10.0 * 1e-4, rel=1e-6)
    assert model.friction[i] == pytest.approx(100.0 * 1e-4, rel=1e-6)
    assert not model.has_drive[k]
    assert np.allclose(model.gravity, (0, 0, -9.8), rtol=1e-6)  # 980 cm/s^2
    arm_link = model.links[i]
    assert arm_link.mass == pytest.approx(1.0)
    assert arm_link.com == pytest.approx([0.1, 0, 0])  # 10 cm
    assert np.diag(arm_link.inertia) == pytest.approx([0.01] * 3)  # 100 kg cm^2
    # the sweep runner can add a drive after build
    model.set_drive(pj, stiffness=100.0, damping=5.0)
    assert model.drive(pj)["enabled"] and model.drive(pj)["stiffness"] == 100.0


def test_fixed_joints_merge_and_principal_axes_rotate_inertia():
    b = StageBuilder()
    base = b.body("base", mass=1.0, inertia=(1, 1, 1))
    link = b.body("link", mass=1.0, inertia=(0.1, 0.2, 0.3))
    tip = b.body("tip", mass=2.0, inertia=(0.01, 0.01, 0.01))
    mass_api = UsdPhysics.MassAPI(b.stage.GetPrimAtPath(link))
    s = math.sqrt(0.5)
    mass_api.CreatePrincipalAxesAttr(Gf.Quatf(s, 0, 0, s))  # 90 deg about Z: x <-> y
    b.fixed("anchor", None, base)
    b.revolute("hinge", base, link, "Z")
    b.fixed("weld", link, tip, pos0=(1.0, 0, 0))  # tip 1 m along the link's X
    model = build_model(b.stage)
    assert len(model.links) == 1
    lk = model.links[0]
    assert lk.mass == pytest.approx(3.0)
    assert lk.com == pytest.approx([2.0 / 3.0, 0, 0])
    # rotated principal inertia (0.2, 0.1, 0.3) + tip 0.01 + parallel axis terms about the joint COM
    expected_zz = 0.3 + 0.01 + 1.0 * (2 / 3) ** 2 + 2.0 * (1 / 3) ** 2
    assert lk.inertia[2, 2] == pytest.approx(expected_zz, rel=1e-6)
    assert lk.inertia[0, 0] == pytest.approx(0.2 + 0.01, rel=1e-6)
    assert lk.inertia[1, 1] == pytest.approx(0.1 + 0.01 + 1.0 * (2 / 3) ** 2 + 2.0 * (1 / 3) ** 2, rel=1e-6)


def test_floating_base_and_joint_frames():
    b, jl, jr = gripper(floating=True)
    xf = UsdGeom.Xformable(b.stage.GetPrimAtPath("/World/palm"))
    xf.GetOrderedXformOps()[0].Set(Gf.Vec3d(1.0, 2.0, 3.0))
    model = build_model(b.stage)
    assert model.base_bodies == ["/World/palm"]
    assert model.dof_count == 8 and model.coord_count == 9
    q = model.state().joint_q.numpy()[0]
    assert q[2:5] == pytest.approx([1.0, 2.0, 3.0])
    q[model.dof_index(jl)] = 0.5
    poses = body_poses(model, q)
    # left finger hinges about X at palm + (0, 0.05, 0.1): rotate by 0.5 rad about X
    left = poses["/World/left"]
    assert left[:3, 3] == pytest.approx([1.0, 2.05, 3.1])
    assert left[:3, :3] @ np.array([0, 0, 1.0]) == pytest.approx([0, -math.sin(0.5), math.cos(0.5)])
    fixed = build_model(b.stage, fix_base=True)
    assert fixed.base_bodies == [] and fixed.dof_count == 2


def test_body_without_mass_gets_default_with_one_warning():
    b = StageBuilder()
    a = b.body("a", mass=None)
    c = b.body("c", mass=None)
    j = b.revolute("j", None, a, "Z")
    b.revolute("k", a, c, "Z")
    with pytest.warns(UserWarning, match="2 bodies have no mass") as rec:
        model = build_model(b.stage)
    assert len(rec) == 1
    assert model.links[model.dof_index(j)].mass == pytest.approx(0.1)


def test_solver_options_have_one_source():
    """The options' defaults live in Solver's signature alone (keyword-only); the Model holds none
    (its old attributes say where they went) and the stage reader's own defaults stay its own."""
    import inspect as pyinspect

    from mimic_ext.solver import Solver, stage_reader

    params = pyinspect.signature(Solver).parameters
    opts = {
        "erp": 0.3,
        "iterations": 8,
        "contact_iterations": 16,
        "coupling_every_step": False,
        "drive_discretisation": "implicit",
    }
    for name, default in opts.items():
        assert params[name].kind is pyinspect.Parameter.KEYWORD_ONLY and params[name].default == default, name
    from mimic_ext.schema import open_stage

    model = build_model(open_stage(Path(__file__).resolve().parents[1] / "data" / "geared_pair.usda").stage)
    solver = Solver(model)
    assert {k: getattr(solver, k) for k in opts} == opts
    for name in opts:
        with pytest.raises(AttributeError, match=f"Solver\\(model, {name}="):
            getattr(model, name)
        with pytest.raises(AttributeError, match="solver option"):
            setattr(model, name, 1)
    assert (stage_reader.DEFAULT_MASS, stage_reader.DEFAULT_RADIUS, stage_reader.DEFAULT_GRAVITY) == (0.1, 0.05, 9.81)


def _collision_modules_after(code: str) -> set[str]:
    """The ``mimic_ext.solver.collision`` modules a fresh interpreter has loaded after ``code``
    (run from the project root, ``open_stage`` and ``contact_model`` imported)."""
    import ast
    import subprocess

    head = "import sys\nfrom mimic_ext.schema import open_stage\nfrom mimic_ext.solver.model import contact_model\n"
    tail = "print(sorted(m for m in sys.modules if m.startswith('mimic_ext.solver.collision.')))\n"
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", head + code + tail], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return set(ast.literal_eval(out.stdout.strip().splitlines()[-1]))


def test_a_model_whose_colliders_cannot_touch_never_loads_the_detection_kernels():
    """Issue 43: registering the detection kernels with Warp costs a tenth of a second of a
    one-stage sweep; geared_pair's colliders cannot touch (self-collision off), so building its
    model (and its contact model, as the sweep does) leaves them unimported."""
    loaded = _collision_modules_after(
        "from mimic_ext.solver import build_model\n"
        "stage = open_stage('data/geared_pair.usda').stage\n"
        "assert contact_model(stage) is None and build_model(stage).collision is None\n"
    )
    assert not {"mimic_ext.solver.collision.kernels", "mimic_ext.solver.collision.narrowphase"} & loaded, loaded


def test_the_contact_model_decides_from_the_colliders_before_building_anything():
    """Issue 43: the sweep's ``contact_model`` counts the pairs that can touch on the colliders
    as read, so for geared_pair (self-collision off) it imports neither the detection package's
    ``pipeline`` (Warp structs, the pair tables) nor builds a model to drop it; with
    self-collision on it returns the model ``build_model`` makes, with the same live pairs."""
    root = Path(__file__).resolve().parents[1]
    loaded = _collision_modules_after(
        "assert contact_model(open_stage('data/geared_pair.usda').stage, fix_base=True) is None\n"
    )
    assert "mimic_ext.solver.collision.pipeline" not in loaded, loaded

    from mimic_ext.schema import open_stage
    from mimic_ext.solver.model import contact_model

    stage = open_stage(root / "data" / "geared_pair.usda").stage
    stage.GetPrimAtPath("/Gears").GetAttribute("physxArticulation:enabledSelfCollisions").Set(True)
    whole = contact_model(stage, fix_base=True, num_envs=2)
    built = build_model(stage, fix_base=True, num_envs=2)
    assert whole is not None and whole.collision is not None and built.collision is not None
    assert whole.collision.live_pairs == built.collision.live_pairs > 0
    assert whole.collision.shape_paths == built.collision.shape_paths and whole.num_envs == 2
