"""Reading colliders from USD: every schema feature the collision package takes, in SI,
cross-checked against OpenUSD's own UsdPhysics parser where it reports the same thing.

Tolerances: sizes and poses go through float32 USD attributes and Gf matrices; 1e-6 m
(relative 1e-6) covers their rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, UsdShade
from solver_stages import StageBuilder

from mimic_ext.errors import MimicInputError
from mimic_ext.solver import build_model
from mimic_ext.solver.collision import build_collision, read_colliders

TOL = 1e-6

# the stages here leave most bodies without MassAPI; that warning is checked once (the first test)
pytestmark = pytest.mark.filterwarnings("ignore:.*free body without mass properties")


def new_stage(mpu: float = 1.0, up: str = "Z", steps_per_second: float | None = None) -> Usd.Stage:
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(st, up)
    UsdGeom.SetStageMetersPerUnit(st, mpu)
    scene = UsdPhysics.Scene.Define(st, "/World/scene")
    scene.CreateGravityMagnitudeAttr(9.81 / mpu)
    if steps_per_second is not None:
        scene.GetPrim().AddAppliedSchema("PhysxSceneAPI")  # PhysX reads its scene attributes only with it
        scene.GetPrim().CreateAttribute("physxScene:timeStepsPerSecond", Sdf.ValueTypeNames.UInt).Set(steps_per_second)
    return st


def xform(st, path, t=(0, 0, 0), rot_xyz=None, scale=None, body=False, kinematic=False):
    x = UsdGeom.Xform.Define(st, path)
    x.AddTranslateOp().Set(Gf.Vec3d(*t))
    if rot_xyz is not None:
        x.AddRotateXYZOp().Set(Gf.Vec3f(*rot_xyz))
    if scale is not None:
        x.AddScaleOp().Set(Gf.Vec3f(*scale))
    if body:
        rb = UsdPhysics.RigidBodyAPI.Apply(x.GetPrim())
        if kinematic:
            rb.CreateKinematicEnabledAttr(True)
    return x.GetPrim()


def geom(st, path, kind, t=(0, 0, 0), rot_xyz=None, scale=None, collide=True, **attrs):
    g = getattr(UsdGeom, kind).Define(st, path)
    if t != (0, 0, 0):
        g.AddTranslateOp().Set(Gf.Vec3d(*t))
    if rot_xyz is not None:
        g.AddRotateXYZOp().Set(Gf.Vec3f(*rot_xyz))
    if scale is not None:
        g.AddScaleOp().Set(Gf.Vec3f(*scale))
    for k, v in attrs.items():
        g.GetPrim().GetAttribute(k).Set(v)
    if collide:
        UsdPhysics.CollisionAPI.Apply(g.GetPrim())
    return g.GetPrim()


def cube_mesh(st, path, half=(1, 1, 1), approximation="convexHull", extra_points=()):
    m = UsdGeom.Mesh.Define(st, path)
    pts = [(sx * half[0], sy * half[1], sz * half[2]) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    m.CreatePointsAttr([Gf.Vec3f(*p) for p in pts + list(extra_points)])
    m.CreateFaceVertexCountsAttr([3] * 2)
    m.CreateFaceVertexIndicesAttr([0, 1, 2, 1, 2, 3])
    UsdPhysics.CollisionAPI.Apply(m.GetPrim())
    if approximation is not None:
        UsdPhysics.MeshCollisionAPI.Apply(m.GetPrim()).CreateApproximationAttr(approximation)
    return m.GetPrim()


def by_path(spec):
    return {s.path: s for s in spec.shapes}


def test_every_geometry_kind_in_si_with_scale_baked_and_pose_in_its_body_frame():
    st = new_stage(mpu=0.01)  # centimetres
    xform(st, "/World/body", t=(100, 0, 50), rot_xyz=(0, 0, 90), scale=(2, 2, 2), body=True)
    geom(st, "/World/body/cube", "Cube", t=(5, 0, 0), scale=(1, 2, 3), size=10.0)
    geom(st, "/World/body/ball", "Sphere", radius=3.0)
    geom(st, "/World/body/pill", "Capsule", t=(0, 4, 0), axis="X", radius=2.0, height=10.0)
    geom(st, "/World/body/can", "Cylinder", axis="Y", radius=1.0, height=4.0)
    cube_mesh(st, "/World/body/hull", half=(1, 2, 3))
    geom(st, "/World/floor", "Plane", axis="Z")
    with pytest.warns(UserWarning, match="/World/body: free body without mass properties; using 0.1 kg"):
        spec = read_colliders(st)
    s = by_path(spec)
    assert {k: v.kind for k, v in s.items()} == {
        "/World/body/cube": "box",
        "/World/body/ball": "sphere",
        "/World/body/pill": "capsule",
        "/World/body/can": "cylinder",
        "/World/body/hull": "hull",
        "/World/floor": "plane",
    }
    # body scale 2 and the cube's own (1, 2, 3) on a 10 cm cube: half extents 10, 20, 30 cm
    np.testing.assert_allclose(s["/World/body/cube"].size, [0.1, 0.2, 0.3], rtol=TOL)
    np.testing.assert_allclose(s["/World/body/cube"].pose[:3, 3], [0.1, 0, 0], atol=TOL)  # 5 cm x 2
    assert s["/World/body/ball"].size[0] == pytest.approx(0.06, rel=TOL)
    pill = s["/World/body/pill"]
    np.testing.assert_allclose(pill.size[:2], [0.04, 0.1], rtol=TOL)  # r 2 cm, half 5 cm, x2
    np.testing.assert_allclose(pill.pose[:3, 2], [1, 0, 0], atol=TOL)  # its axis: body x
    np.testing.assert_allclose(pill.pose[:3, 3], [0, 0.08, 0], atol=TOL)
    can = s["/World/body/can"]
    np.testing.assert_allclose(can.size[:2], [0.02, 0.04], rtol=TOL)
    np.testing.assert_allclose(can.pose[:3, 2], [0, 1, 0], atol=TOL)
    hull = s["/World/body/hull"].hull
    np.testing.assert_allclose(np.abs(hull.vertices).max(0), [0.02, 0.04, 0.06], rtol=TOL)
    assert len(hull.vertices) == 8 and sorted(len(f) for f in hull.faces) == [4] * 6
    floor = s["/World/floor"]
    assert floor.static and floor.body is None
    np.testing.assert_allclose(floor.pose[:3, 2], [0, 0, 1], atol=TOL)
    assert all(x.body == "/World/body" and not x.static for k, x in s.items() if k != "/World/floor")
    assert [fb.path for fb in spec.free_bodies] == ["/World/body"]
    fb = spec.free_bodies[0]
    np.testing.assert_allclose(fb.pose[:3, 3], [1.0, 0, 0.5], atol=TOL)
    assert sorted(spec.shapes[i].path for i in fb.shapes) == sorted(k for k in s if k != "/World/floor")


def test_shapes_agree_with_openusds_physics_parser():
    """UsdPhysics' own parser (OpenUSD 25.02+) reports each collider's body, pose relative
    to it and scaled size: ours must be the same (in SI)."""
    load = getattr(UsdPhysics, "LoadUsdPhysicsFromRange", None)
    if load is None:
        pytest.skip("this OpenUSD has no UsdPhysics parser")
    mpu = 0.01
    st = new_stage(mpu=mpu)
    xform(st, "/World/b", t=(10, -20, 30), rot_xyz=(30, 10, 50), scale=(1.5, 1.5, 1.5), body=True)
    geom(st, "/World/b/cube", "Cube", t=(1, 2, 3), rot_xyz=(0, 45, 0), scale=(1, 2, 0.5), size=4.0)
    geom(st, "/World/b/ball", "Sphere", t=(0, 0, 2), radius=1.5)
    geom(st, "/World/b/pill", "Capsule", t=(2, 0, 0), rot_xyz=(90, 0, 0), axis="Y", radius=0.5, height=3.0)
    geom(st, "/World/b/can", "Cylinder", axis="X", radius=0.7, height=2.0)
    with pytest.warns(UserWarning):
        mine = by_path(read_colliders(st))
    with pytest.warns(DeprecationWarning) if hasattr(UsdPhysics, "UsdPhysicsLoadStageFromPrimRange") else _nothing():
        ref = load(st, ["/"])
    axis_col = {"X": 0, "Y": 1, "Z": 2}
    seen = 0
    for kind, (paths, descs) in ref.items():
        for path, d in zip(paths, descs):
            if str(path) not in mine:
                continue
            s = mine[str(path)]
            seen += 1
            assert str(d.rigidBody) == s.body
            np.testing.assert_allclose(s.pose[:3, 3], np.array(d.localPos) * mpu, atol=TOL)
            q = d.localRot
            R = np.array(Gf.Matrix3d(Gf.Rotation(q)).GetTranspose())  # Gf is row-vector
            if s.kind == "box":
                np.testing.assert_allclose(s.pose[:3, :3], R, atol=TOL)
                np.testing.assert_allclose(s.size, np.array(d.halfExtents) * mpu, rtol=TOL)
            elif s.kind == "sphere":
                assert s.size[0] == pytest.approx(d.radius * mpu, rel=TOL)
            else:
                np.testing.assert_allclose(s.pose[:3, 2], R[:, axis_col[str(d.axis).split(".")[-1]]], atol=TOL)
                assert s.size[0] == pytest.approx(d.radius * mpu, rel=TOL)
                assert s.size[1] == pytest.approx(d.halfHeight * mpu, rel=TOL)
    assert seen == 4


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_mesh_approximations_other_than_convex_hull_warn_and_use_the_hull():
    st = new_stage()
    xform(st, "/World/b", body=True)
    cube_mesh(st, "/World/b/hull", approximation="convexHull")
    cube_mesh(st, "/World/b/none", approximation=None)
    cube_mesh(st, "/World/b/decomp", approximation="convexDecomposition")
    with pytest.warns(UserWarning):
        spec = read_colliders(st)
    notes = "\n".join(spec.warnings)
    assert "/World/b/hull" not in notes
    assert "/World/b/none: mesh collision approximation 'none'" in notes
    assert "/World/b/decomp: mesh collision approximation 'convexDecomposition'" in notes
    assert all(s.kind == "hull" and len(s.hull.vertices) == 8 for s in spec.shapes)


def test_hull_vertex_limit_is_read():
    st = new_stage()
    xform(st, "/World/b", body=True)
    rng = np.random.default_rng(0)
    sphere_pts = rng.normal(size=(300, 3))
    sphere_pts /= np.linalg.norm(sphere_pts, axis=1)[:, None]
    m = cube_mesh(st, "/World/b/round", half=(0.5, 0.5, 0.5), extra_points=[tuple(p) for p in sphere_pts])
    m.GetPrim().AddAppliedSchema("PhysxConvexHullCollisionAPI")
    m.CreateAttribute("physxConvexHullCollision:hullVertexLimit", Sdf.ValueTypeNames.Int).Set(16)
    with pytest.warns(UserWarning):
        spec = read_colliders(st)
    assert len(spec.shapes[0].hull.vertices) == 16
    assert any("cut to 16 vertices" in w for w in spec.warnings)


def test_physx_scene_and_hull_attributes_count_only_where_their_api_is_applied():
    """As for the offsets, materials and bounce threshold (measured on ovphysx): an attribute of
    a PhysX API that is not applied is ignored, with a note naming the prim and the fix."""
    st = new_stage(mpu=0.01)
    st.GetPrimAtPath("/World/scene").CreateAttribute("physxScene:timeStepsPerSecond", Sdf.ValueTypeNames.UInt).Set(120)
    xform(st, "/World/b", body=True)
    rng = np.random.default_rng(0)
    sphere_pts = rng.normal(size=(300, 3))
    sphere_pts /= np.linalg.norm(sphere_pts, axis=1)[:, None]
    m = cube_mesh(st, "/World/b/round", half=(0.5, 0.5, 0.5), extra_points=[tuple(p) for p in sphere_pts])
    m.CreateAttribute("physxConvexHullCollision:hullVertexLimit", Sdf.ValueTypeNames.Int).Set(16)
    geom(st, "/World/b/auto", "Cube", scale=(1, 1, 0.1), size=40.0)  # 40 x 40 x 4 cm
    with pytest.warns(UserWarning):
        spec = read_colliders(st)
    s = by_path(spec)
    assert len(s["/World/b/round"].hull.vertices) == 64  # the default limit, not 16
    # the offset's dt term at the default 60 steps per second: 2 (1/60)^2 9.81 = 5.45 mm
    assert s["/World/b/auto"].contact_offset == pytest.approx(2 * 9.81 / 60**2, rel=1e-5)
    notes = "\n".join(spec.warnings)
    assert (
        "/World/scene: physxScene:timeStepsPerSecond = 120 is authored but PhysxSceneAPI is not applied, "
        "so PhysX ignores it (60 steps per second)"
    ) in notes
    assert (
        "/World/b/round: physxConvexHullCollision:hullVertexLimit = 16 is authored but "
        "PhysxConvexHullCollisionAPI is not applied"
    ) in notes


def test_disabled_colliders_and_unsupported_geometry_are_left_out():
    st = new_stage()
    xform(st, "/World/b", body=True)
    g = geom(st, "/World/b/off", "Cube")
    UsdPhysics.CollisionAPI(g).CreateCollisionEnabledAttr(False)
    geom(st, "/World/b/on", "Sphere")
    geom(st, "/World/b/cone", "Cone")
    with pytest.warns(UserWarning):
        spec = read_colliders(st)
    assert [s.path for s in spec.shapes] == ["/World/b/on"]
    assert any("/World/b/cone: CollisionAPI on a Cone is not supported" in w for w in spec.warnings)


def test_non_uniform_scale_on_a_sphere_or_across_a_capsule_warns_and_takes_the_largest():
    st = new_stage()
    xform(st, "/World/b", body=True)
    geom(st, "/World/b/egg", "Sphere", scale=(1, 1, 3), radius=0.1)
    geom(st, "/World/b/flat_pill", "Capsule", scale=(1, 2, 5), radius=0.1, height=0.2)  # axis Z
    geom(st, "/World/b/long_pill", "Capsule", scale=(1, 1, 5), radius=0.1, height=0.2)  # along its axis: fine
    with pytest.warns(UserWarning):
        spec = read_colliders(st)
    s = by_path(spec)
    assert s["/World/b/egg"].size[0] == pytest.approx(0.3, rel=TOL)
    np.testing.assert_allclose(s["/World/b/flat_pill"].size[:2], [0.2, 0.5], rtol=TOL)
    np.testing.assert_allclose(s["/World/b/long_pill"].size[:2], [0.1, 0.5], rtol=TOL)
    notes = "\n".join(spec.warnings)
    assert "/World/b/egg: non-uniform scale" in notes and "/World/b/flat_pill: non-uniform scale" in notes
    assert "long_pill" not in notes


def test_contact_and_rest_offsets_authored_defaulted_and_from_newton():
    st = new_stage(mpu=0.01, steps_per_second=120)
    xform(st, "/World/b", body=True)
    a = geom(st, "/World/b/authored", "Cube", size=10.0)
    a.GetPrim().AddAppliedSchema("PhysxCollisionAPI")  # PhysX reads the offsets only with their API
    a.CreateAttribute("physxCollision:contactOffset", Sdf.ValueTypeNames.Float).Set(2.0)
    a.CreateAttribute("physxCollision:restOffset", Sdf.ValueTypeNames.Float).Set(0.5)
    loose = geom(st, "/World/b/unapplied", "Cube", size=10.0)  # the same values without the API
    loose.CreateAttribute("physxCollision:contactOffset", Sdf.ValueTypeNames.Float).Set(2.0)
    loose.CreateAttribute("physxCollision:restOffset", Sdf.ValueTypeNames.Float).Set(0.5)
    geom(st, "/World/b/auto", "Cube", scale=(1, 1, 0.1), size=40.0)  # 40 x 40 x 4 cm
    n = geom(st, "/World/b/newton", "Sphere", radius=1.0)
    n.CreateAttribute("newton:contactMargin", Sdf.ValueTypeNames.Float).Set(0.2)
    n.CreateAttribute("newton:contactGap", Sdf.ValueTypeNames.Float).Set(1.0)
    bad = geom(st, "/World/b/bad", "Sphere", radius=1.0)
    bad.GetPrim().AddAppliedSchema("PhysxCollisionAPI")
    bad.CreateAttribute("physxCollision:contactOffset", Sdf.ValueTypeNames.Float).Set(0.1)
    bad.CreateAttribute("physxCollision:restOffset", Sdf.ValueTypeNames.Float).Set(0.3)
    with pytest.warns(UserWarning) as seen:
        s = by_path(read_colliders(st))
    notes = " ".join(str(w.message) for w in seen)
    assert (
        "/World/b/unapplied: physxCollision:contactOffset = 2.0 is authored but PhysxCollisionAPI is not "
        "applied" in notes
    )
    assert "/World/b/bad: contact offset 0.001 m is not above the rest offset 0.003 m" in notes
    assert (s["/World/b/authored"].contact_offset, s["/World/b/authored"].rest_offset) == pytest.approx((0.02, 0.005))
    # omni.physx for -inf: max(2 dt^2 max(g, 1), 0.02 * smallest extent): 2 (1/120)^2 9.81 = 1.36 mm
    # against 0.02 * 4 cm = 0.8 mm
    auto = s["/World/b/auto"]
    assert auto.rest_offset == 0.0
    assert auto.contact_offset == pytest.approx(2 * 9.81 / 120**2, rel=1e-5)
    assert (s["/World/b/newton"].rest_offset, s["/World/b/newton"].contact_offset) == pytest.approx((0.002, 0.012))
    # without PhysxCollisionAPI the authored offsets do not count: the defaults (as above; for this
    # 10 cm cube 0.02 * 10 cm = 2 mm wins over 1.36 mm)
    assert s["/World/b/unapplied"].rest_offset == 0.0
    assert s["/World/b/unapplied"].contact_offset == pytest.approx(max(2 * 9.81 / 120**2, 0.02 * 0.1), rel=1e-5)
    # a rest offset not below the contact offset: PhysX keeps none (the shape rests at 0, measured on
    # ovphysx: tests/test_contact_restitution.py), and the contact offset stays as authored
    assert (s["/World/b/bad"].contact_offset, s["/World/b/bad"].rest_offset) == pytest.approx((0.001, 0.0))


def _material(st, path, static, dynamic, restitution, mode=None):
    m = UsdShade.Material.Define(st, path)
    api = UsdPhysics.MaterialAPI.Apply(m.GetPrim())
    api.CreateStaticFrictionAttr(static)
    api.CreateDynamicFrictionAttr(dynamic)
    api.CreateRestitutionAttr(restitution)
    if mode:
        m.GetPrim().AddAppliedSchema("PhysxMaterialAPI")  # PhysX reads the mode only with its API
        m.GetPrim().CreateAttribute("physxMaterial:frictionCombineMode", Sdf.ValueTypeNames.Token).Set(mode)
    return m


def _bind(prim, material):
    UsdShade.MaterialBindingAPI.Apply(prim).Bind(material, UsdShade.Tokens.weakerThanDescendants, "physics")


def test_materials_bound_on_the_collider_then_the_body_then_the_scene():
    st = new_stage()
    body = xform(st, "/World/b", body=True)
    own = geom(st, "/World/b/own", "Cube")
    geom(st, "/World/b/inherits", "Sphere")
    xform(st, "/World/c", t=(5, 0, 0), body=True)
    geom(st, "/World/c/scene_default", "Sphere")
    rubber = _material(st, "/World/rubber", 1.0, 0.8, 0.1)
    steel = _material(st, "/World/steel", 0.4, 0.3, 0.6)
    ice = _material(st, "/World/ice", 0.05, 0.02, 0.0)
    _bind(own, rubber)
    _bind(body, steel)
    _bind(st.GetPrimAtPath("/World/scene"), ice)
    s = by_path(read_colliders(st))
    assert s["/World/b/own"].material.path == "/World/rubber"
    assert s["/World/b/inherits"].material.path == "/World/steel"
    assert s["/World/c/scene_default"].material.path == "/World/ice"
    m = s["/World/b/own"].material
    assert (m.static_friction, m.dynamic_friction, m.restitution) == pytest.approx((1.0, 0.8, 0.1))
    st2 = new_stage()
    xform(st2, "/World/b", body=True)
    geom(st2, "/World/b/plain", "Sphere")
    m = read_colliders(st2).shapes[0].material
    assert (m.static_friction, m.dynamic_friction, m.restitution, m.path) == (0.5, 0.5, 0.0, None)  # PhysX default


def test_pair_materials_combine_as_physx_does():
    """Average by default; when the two modes differ, the higher of average < min <
    multiply < max wins (PxCombineMode)."""
    st = new_stage()
    for name, z in (("low", 0.0), ("high", 0.15)):
        xform(st, f"/World/{name}", t=(0, 0, z), body=True)
        geom(st, f"/World/{name}/geom", "Cube", size=0.2)
    a = _material(st, "/World/a", 0.2, 0.1, 0.0)
    b = _material(st, "/World/b", 0.8, 0.5, 0.4)
    _bind(st.GetPrimAtPath("/World/low/geom"), a)
    _bind(st.GetPrimAtPath("/World/high/geom"), b)
    model = build_model(st, contacts=False)
    with pytest.warns(UserWarning):
        cm = build_collision(st, model)
    cm.collide(*cm.frames(model))
    c = cm.contacts()
    assert c.count[0] == 4
    np.testing.assert_allclose(c.material[0, 0], [0.5, 0.3, 0.2], atol=1e-7)  # averages
    # a mode authored without PhysxMaterialAPI: PhysX ignores it (averages), so does the reader, and says so
    b.GetPrim().CreateAttribute("physxMaterial:frictionCombineMode", Sdf.ValueTypeNames.Token).Set("min")
    with pytest.warns(
        UserWarning,
        match="/World/b: physxMaterial:frictionCombineMode = 'min' is authored but PhysxMaterialAPI is not applied",
    ):
        cm = build_collision(st, model)
    cm.collide(*cm.frames(model))
    np.testing.assert_allclose(cm.contacts().material[0, 0], [0.5, 0.3, 0.2], atol=1e-7)
    b.GetPrim().AddAppliedSchema("PhysxMaterialAPI")
    cm = build_collision(st, model)
    cm.collide(*cm.frames(model))
    np.testing.assert_allclose(cm.contacts().material[0, 0], [0.2, 0.1, 0.2], atol=1e-7)


def test_bad_material_and_geometry_values_name_the_prim():
    st = new_stage()
    xform(st, "/World/b", body=True)
    g = geom(st, "/World/b/g", "Sphere")
    _bind(g, _material(st, "/World/m", -0.1, 0.1, 0.0))
    with pytest.raises(MimicInputError, match="/World/m: physics:staticFriction"):
        read_colliders(st)
    st = new_stage()
    xform(st, "/World/b", body=True)
    flat = UsdGeom.Mesh.Define(st, "/World/b/flat")
    flat.CreatePointsAttr([(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)])
    UsdPhysics.CollisionAPI.Apply(flat.GetPrim())
    with pytest.raises(MimicInputError, match="/World/b/flat: mesh collider has no volume"):
        read_colliders(st)
    st = new_stage()
    xform(st, "/World/b", body=True)
    geom(st, "/World/b/neg", "Cube", size=-1.0)
    with pytest.raises(MimicInputError, match="/World/b/neg: size"):
        read_colliders(st)


def test_free_kinematic_and_articulated_bodies():
    b = StageBuilder(gravity=9.81, fixed_base=True)
    arm = b.body("arm", mass=1.0, inertia=(0.01, 0.01, 0.01), pos=(0, 0, 0.5))
    b.revolute("hinge", b.base, arm, "X", pos0=(0, 0, 0.5))
    box = b.body("box", mass=0.2, inertia=(1e-4, 1e-4, 1e-4), pos=(0.3, 0, 0.05))
    stage = b.stage
    UsdPhysics.RigidBodyAPI(stage.GetPrimAtPath(box)).CreateVelocityAttr(Gf.Vec3f(1, 0, 0))
    conveyor = xform(stage, "/World/conveyor", t=(0, 1, 0), body=True, kinematic=True)
    for body in (arm, box, b.base, str(conveyor.GetPath())):
        geom(stage, f"{body}/shape", "Cube", size=0.1)
    model = build_model(stage, contacts=False)
    with pytest.warns(UserWarning, match="kinematic"):
        cm = build_collision(stage, model)
    spec = cm.spec
    assert [fb.path for fb in spec.free_bodies] == [box]
    fb = spec.free_bodies[0]
    assert fb.mass == pytest.approx(0.2) and np.allclose(fb.velocity, [1, 0, 0])
    np.testing.assert_allclose(fb.pose[:3, 3], [0.3, 0, 0.05], atol=TOL)
    s = by_path(spec)
    assert not s[f"{arm}/shape"].static and not s[f"{box}/shape"].static
    assert s[f"{b.base}/shape"].static  # welded to the world
    assert s["/World/conveyor/shape"].static  # kinematic: static at its pose for contacts
    assert cm.layout.names == [arm, box]  # the model's link, then the free body


@pytest.mark.parametrize("up, axis", [("Z", 2), ("Y", 1)])
def test_ground_plane_option_lies_along_the_up_axis(up, axis):
    st = new_stage(up=up)
    t = [0.0, 0.0, 0.0]
    t[axis] = 0.04
    xform(st, "/World/ball", t=tuple(t), body=True)
    geom(st, "/World/ball/geom", "Sphere", radius=0.05)
    model = build_model(st, contacts=False)
    with pytest.warns(UserWarning):
        cm = build_collision(st, model, ground_plane=0.0)
    cm.collide(*cm.frames(model))
    c = cm.contacts()
    assert c.count[0] == 1
    want = np.zeros(3)
    want[axis] = 1.0
    np.testing.assert_allclose(c.normal[0, 0], want, atol=1e-6)
    assert c.separation[0, 0] == pytest.approx(-0.01, abs=1e-6)
    assert "<ground plane>" in cm.shape_paths
