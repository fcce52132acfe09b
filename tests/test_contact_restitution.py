"""Restitution in the contact rows: a sphere dropped on a plane bounces as PhysX's rule says.

PhysX's rule (``DyContactPrepShared.h``, ``constructContactConstraint``): a contact whose
pair restitution ``e`` is positive, whose approach speed at the step's start exceeds the
scene's ``physxScene:bounceThreshold`` and whose surfaces meet within the step leaves at ``e``
times that speed. Ours differs in one point only: the bounce waits until the surfaces touch
(a speculative contact lands them first and carries its approach speed into the next step;
``kernels/contact_rows.py``), where PhysX turns a speculative contact back before the surfaces
meet. Each drop below is one USD stage (a static ``UsdGeom.Plane`` and a free sphere, each
with its own bound material) run by our solver and, where ovphysx is installed, by real
PhysX on the CPU.

The sphere carries a contact offset of 1 cm, above the 5.3 mm it falls in a step at 600 Hz,
so the impact is seen a step ahead (speculative contacts); with the default offsets (2 mm) the
plane pair looks ahead by the sphere's own motion in the step, and the impact is found as
early (``test_a_fast_impact_...``).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, UsdShade

from mimic_ext.errors import MimicInputError
from mimic_ext.solver import Solver, build_model
from mimic_ext.solver.collision import read_colliders
from mimic_ext.solver.collision.pipeline import combine_materials
from mimic_ext.solver.collision.shapes import COMBINE_MODES, MaterialSpec

G = 9.81
R = 0.05  # m: the sphere's radius
FPS = 600
#: m: the drop heights (of the sphere's bottom above the plane), spread over one step's travel
#: at impact (5.3 mm at 600 Hz), so the surfaces meet at different fractions of a step
HEIGHTS = (0.5, 0.504, 0.508, 0.512)


def drop_stage(
    h: float,
    e_ball: float = 0.5,
    e_ground: float = 0.5,
    mode_ball: str | None = None,
    threshold: float | None = None,
    fps: int = FPS,
    mpu: float = 1.0,
    box: bool = False,
) -> Usd.Stage:
    """A sphere of radius R (or a cube of edge 2 R, a face down) whose bottom is h above a static
    plane; restitution e_ball on its material (``physxMaterial:restitutionCombineMode`` mode_ball),
    e_ground on the plane's; ``physxScene:bounceThreshold`` when given (stage units per second)."""
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(st, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(st, mpu)
    UsdPhysics.SetStageKilogramsPerUnit(st, 1.0)
    u = 1.0 / mpu  # stage units per metre
    UsdGeom.Xform.Define(st, "/World")
    scene = UsdPhysics.Scene.Define(st, "/World/physicsScene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
    scene.CreateGravityMagnitudeAttr(G * u)
    sp = scene.GetPrim()
    sp.AddAppliedSchema("PhysxSceneAPI")
    sp.CreateAttribute("physxScene:timeStepsPerSecond", Sdf.ValueTypeNames.UInt).Set(fps)
    if threshold is not None:
        sp.CreateAttribute("physxScene:bounceThreshold", Sdf.ValueTypeNames.Float).Set(threshold)

    def material(path, e, mode):
        m = UsdShade.Material.Define(st, path)
        api = UsdPhysics.MaterialAPI.Apply(m.GetPrim())
        api.CreateStaticFrictionAttr(0.5)
        api.CreateDynamicFrictionAttr(0.5)
        api.CreateRestitutionAttr(e)
        if mode is not None:
            m.GetPrim().AddAppliedSchema("PhysxMaterialAPI")
            m.GetPrim().CreateAttribute("physxMaterial:restitutionCombineMode", Sdf.ValueTypeNames.Token).Set(mode)
        return m

    ground = UsdGeom.Plane.Define(st, "/World/ground")
    ground.CreateAxisAttr("Z")
    UsdPhysics.CollisionAPI.Apply(ground.GetPrim())
    UsdShade.MaterialBindingAPI.Apply(ground.GetPrim()).Bind(
        material("/World/groundMaterial", e_ground, None), UsdShade.Tokens.weakerThanDescendants, "physics"
    )
    if box:
        ball = UsdGeom.Cube.Define(st, "/World/ball")
        ball.CreateSizeAttr(2 * R * u)
    else:
        ball = UsdGeom.Sphere.Define(st, "/World/ball")
        ball.CreateRadiusAttr(R * u)
    ball.AddTranslateOp().Set(Gf.Vec3d(0, 0, (R + h) * u))
    p = ball.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(p)
    UsdPhysics.CollisionAPI.Apply(p)
    p.AddAppliedSchema("PhysxCollisionAPI")
    p.CreateAttribute("physxCollision:contactOffset", Sdf.ValueTypeNames.Float).Set(0.01 * u)
    mass = UsdPhysics.MassAPI.Apply(p)
    mass.CreateMassAttr(1.0)
    mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*((2 / 3 if box else 0.4) * R * R * u * u,) * 3))
    UsdShade.MaterialBindingAPI.Apply(p).Bind(
        material("/World/ballMaterial", e_ball, mode_ball), UsdShade.Tokens.weakerThanDescendants, "physics"
    )
    return st


def ours(st: Usd.Stage, seconds: float, fps: int = FPS) -> tuple[np.ndarray, np.ndarray]:
    """The sphere's height above the plane (bottom, m) and vertical velocity after every step."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(st)
    solver = Solver(model)
    a, b, c = model.state(), model.state(), model.control()
    z, vz = [], []
    for _ in range(int(round(seconds * fps))):
        solver.step(a, b, c, 1.0 / fps)
        a, b = b, a
        q, u = a.joint_q.numpy()[0], a.joint_qd.numpy()[0]  # floating link: position, quaternion; w, v
        z.append(float(q[2]) - R)
        vz.append(float(u[5]))
    return np.array(z), np.array(vz)


def physx(st: Usd.Stage, seconds: float, fps: int = FPS) -> tuple[np.ndarray, np.ndarray]:
    """The same read-out from real PhysX (ovphysx, CPU), the stage as it is."""
    from ovphysx.types import TensorType

    from mimic_ext.fet022.engines.physx_session import PhysxSession

    session = PhysxSession(st.Flatten().ExportToString(), [], {})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pose = session.physx.create_tensor_binding(
                prim_paths=["/World/ball"], tensor_type=TensorType.RIGID_BODY_POSE
            )
            vel = session.physx.create_tensor_binding(
                prim_paths=["/World/ball"], tensor_type=TensorType.RIGID_BODY_VELOCITY
            )
            session._bindings += [pose, vel]  # destroyed by close()
            P, V = np.zeros(pose.shape, np.float32), np.zeros(vel.shape, np.float32)
            z, vz = [], []
            for _ in range(int(round(seconds * fps))):
                session.step(1.0 / fps)
                pose.read(P)
                vel.read(V)
                z.append(float(P[0, 2]) - R)
                vz.append(float(V[0, 2]))
    finally:
        session.close()
    return np.array(z), np.array(vz)


def bounce(z: np.ndarray, vz: np.ndarray) -> tuple[float, float, float]:
    """(impact speed, rebound speed, apex after the rebound): the fastest fall before the first
    step that ends moving up, that step's velocity, and the highest point after it."""
    k = int(np.argmax(vz > 0))
    if k == 0:
        return float(-vz.min()), 0.0, 0.0
    return float(-vz[:k].min()), float(vz[k]), float(z[k:].max())


def _rebound(b: tuple[float, float, float]) -> float:
    """Rebound over impact speed, from ``bounce``'s triple."""
    return b[1] / b[0]


# ---- ours ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("h", HEIGHTS)
def test_drop_rebounds_at_e_times_its_impact_speed_to_e_squared_h(h):
    e = 0.5
    z, vz = ours(drop_stage(h, e, e), 0.65)
    v_in, v_out, apex = bounce(z, vz)
    assert z.min() > -1e-5  # m: never sinks (the landing's overlap is the rows' 1e-3 compliance; measured 5e-6)
    # the rebound speed is e times the speed it came in with; 1%: the rows' compliance takes 1e-3 of
    # the impulse (1 + e) m v (measured ratios 0.4985-0.4994)
    assert v_out == pytest.approx(e * v_in, rel=0.01)
    # the apex: e^2 h within e v dt (2.6 mm, 2.1%): the bounce turns the sphere at the end of the
    # step in which its surfaces meet, up to one step after the exact impact, so the rebound starts
    # up to e v dt low; the symplectic step's apex lies up to v_out dt / 2 high. Measured -1.2 to
    # +0.3 mm over HEIGHTS.
    assert abs(apex - e * e * h) < e * v_in / FPS


def default_offsets(st: Usd.Stage) -> Usd.Stage:
    """The stage with the sphere's contact offset unauthored: the default, 2 mm for this sphere
    (``0.02 *`` its 0.1 m extent), under the 5.3 mm it falls in a step at the impact."""
    st.GetPrimAtPath("/World/ball").RemoveProperty("physxCollision:contactOffset")
    return st


@pytest.mark.parametrize("h", HEIGHTS)
def test_a_fast_impact_is_found_before_it_overlaps_with_default_offsets(h):
    """A shape against a plane looks as far ahead as it moves in the step, past its contact
    offsets, so the impact is a speculative contact a step early: e = 0 lands without sinking or
    popping (out to the offsets only, it sank up to 2.1 mm and the erp push-out popped it 5.7 mm
    up), and e = 0.5 still rebounds at e times its impact speed."""
    z, vz = ours(default_offsets(drop_stage(h, 0.0, 0.0)), 0.4)
    assert z.min() > -1e-5  # m: never sinks, as with a 1 cm offset (measured 5e-6)
    assert vz.max() < 2e-3  # m/s: no pop, the bound of test_no_restitution_no_bounce
    z, vz = ours(default_offsets(drop_stage(h, 0.5, 0.5)), 0.65)
    v_in, v_out, apex = bounce(z, vz)
    assert z.min() > -1e-5  # m (measured 1e-6 to 5e-6)
    assert v_out == pytest.approx(0.5 * v_in, rel=0.01)  # 1%, as in the drop test above


def test_no_restitution_no_bounce():
    """e = 0 (PhysX's default material): the sphere lands and stays, at every phase of the step."""
    for h in HEIGHTS:
        z, vz = ours(drop_stage(h, 0.0, 0.0), 0.4)
        assert z.min() > -1e-5  # m: never sinks (measured 5e-6)
        assert z[-int(0.05 * FPS) :].max() < 1e-5  # m: no rebound: at rest on the plane (measured 1e-7 below it)
        # m/s: it never moves up faster than erp pushing out the landing's overlap (< 1e-5 m), erp 1e-5 / dt
        # = 1.8e-3 (measured 6.7e-4 to 8.8e-4)
        assert vz.max() < 2e-3


def test_impacts_slower_than_the_bounce_threshold_do_not_bounce():
    """A 2 cm drop reaches 0.6 m/s: with physxScene:bounceThreshold 1 m/s it lands and stays;
    with 0.5 m/s it bounces at e times its speed. Authored in cm/s on a centimetre stage
    (metersPerUnit 0.01), read once at the boundary as m/s."""
    h, e = 0.02, 0.5
    z, vz = ours(drop_stage(h, e, e, threshold=1.0), 0.2)
    assert vz.max() < 2e-3 and z[-10:].max() < 1e-5  # no bounce, bounds as above (measured 1.6e-4 m/s, -1e-7 m)
    z, vz = ours(drop_stage(h, e, e, threshold=0.5), 0.2)
    v_in, v_out, apex = bounce(z, vz)
    assert v_in < 1.0 and v_out == pytest.approx(e * v_in, rel=0.01)  # as in the drop test above
    cm = drop_stage(h, e, e, threshold=100.0, mpu=0.01)
    assert read_colliders(cm).bounce_threshold == pytest.approx(1.0, rel=1e-7)  # 100 cm/s = 1 m/s
    z, vz = ours(cm, 0.2)
    assert vz.max() < 2e-3  # 1 m/s on the centimetre stage: no bounce (as above)
    assert read_colliders(drop_stage(h)).bounce_threshold == 0.0  # unauthored: PhysxSchema's fallback, 0


def test_a_contact_that_does_not_bounce_steps_as_without_restitution():
    """Restitution only ever raises a bouncing contact's target: below the threshold the drop
    with e = 0.5 is the drop with e = 0, bitwise (the rows' arithmetic is the same)."""
    z0, v0 = ours(drop_stage(0.1, 0.0, 0.0), 0.3)
    z1, v1 = ours(drop_stage(0.1, 0.5, 0.5, threshold=100.0), 0.3)
    assert np.array_equal(z0, z1) and np.array_equal(v0, v1)


@pytest.mark.parametrize("bad", [-0.1, math.inf, math.nan])
def test_a_bad_bounce_threshold_names_the_scene_and_attribute(bad):
    with pytest.raises(MimicInputError, match=r"/World/physicsScene: physxScene:bounceThreshold"):
        read_colliders(drop_stage(0.1, threshold=bad))


def test_restitution_combines_as_physx_does():
    """PxCombineMode on restitution: average unless a material asks for min, multiply or max;
    of two different modes the later in average < min < multiply < max wins."""
    b = MaterialSpec(restitution=0.2, restitution_mode="average")
    expect = {"average": 0.5, "min": 0.2, "multiply": 0.16, "max": 0.8}
    for mode in COMBINE_MODES:
        a2 = MaterialSpec(restitution=0.8, restitution_mode=mode)
        assert combine_materials(a2, b)[2] == pytest.approx(expect[mode], abs=1e-12)
        assert combine_materials(b, a2)[2] == pytest.approx(expect[mode], abs=1e-12)  # symmetric
    for lo, hi in itertools.pairwise(COMBINE_MODES):
        x = MaterialSpec(restitution=0.8, restitution_mode=lo)
        y = MaterialSpec(restitution=0.2, restitution_mode=hi)
        assert combine_materials(x, y)[2] == pytest.approx(expect[hi], abs=1e-12)


# ---- against real PhysX ----------------------------------------------------------------------------


def _require_physx():
    pytest.importorskip("ovphysx", reason="real PhysX runs through the ovphysx package (the physx extra)")
    pytest.importorskip("ovstage", reason="real PhysX runs through the ovphysx package (the physx extra)")


@pytest.mark.parametrize("h", HEIGHTS)
def test_drop_rebounds_to_the_apex_physx_reaches(h):
    _require_physx()
    e = 0.5
    st = drop_stage(h, e, e)
    v_in, v_out, apex = bounce(*ours(st, 0.65))
    p_in, p_out, p_apex = bounce(*physx(st, 0.65))
    # PhysX: e times its impact speed too; 2%: its fastest fall sampled after a step's gravity or
    # before it (measured 0.4943-0.5000)
    assert p_out == pytest.approx(e * p_in, rel=0.02)
    # the apexes within one step's travel at impact of each other, v dt = 5.3 mm: PhysX turns a
    # speculative contact back up to its contact offset before the surfaces meet, ours turns at the
    # end of the step they meet in (measured 0.3-3.5 mm apart; apexes 0.1228-0.1290 m PhysX,
    # 0.1249-0.1278 m ours)
    assert abs(apex - p_apex) < v_in / FPS


def test_box_dropped_flat_bounces_on_its_four_corners_as_on_physx():
    """A cube lands on a face: four speculative contacts land together and each carries its
    approach speed, so the face rebounds as one at e times the impact speed."""
    _require_physx()
    e, h = 0.5, 0.5
    st = drop_stage(h, e, e, box=True)
    z, vz = ours(st, 0.65)
    v_in, v_out, apex = bounce(z, vz)
    p_in, p_out, p_apex = bounce(*physx(st, 0.65))
    assert z.min() > -1e-5  # m: never sinks (as the sphere; measured 5e-6)
    assert v_out == pytest.approx(e * v_in, rel=0.01)  # as the sphere (measured 0.4994)
    assert abs(apex - e * e * h) < e * v_in / FPS  # as the sphere (measured +0.3 mm)
    assert abs(apex - p_apex) < v_in / FPS  # as the sphere (measured 2.2 mm; PhysX 0.1230 m)


@pytest.mark.parametrize("mode,e_pair", [("average", 0.5), ("min", 0.2), ("multiply", 0.16), ("max", 0.8)])
def test_combine_modes_bounce_as_on_physx(mode, e_pair):
    """Restitution 0.8 on the sphere with its combine mode, 0.2 on the plane: both engines
    rebound at the restitution the mode picks."""
    _require_physx()
    st = drop_stage(0.2, 0.8, 0.2, mode_ball=mode)
    v_in, v_out, _ = bounce(*ours(st, 0.5))
    p_in, p_out, _ = bounce(*physx(st, 0.5))
    assert v_out / v_in == pytest.approx(e_pair, rel=0.01)  # ours: as in the drop test above
    assert p_out / p_in == pytest.approx(e_pair, rel=0.02)  # PhysX, 2% as above (measured to 1e-6)


def test_a_combine_mode_without_its_api_is_ignored_as_on_physx():
    """``physxMaterial:restitutionCombineMode = max`` authored on the sphere's material without
    PhysxMaterialAPI applied: PhysX averages (0.8 and 0.2: 0.5), and so do we (with a note)."""
    _require_physx()
    st = drop_stage(0.2, 0.8, 0.2)
    mat = st.GetPrimAtPath("/World/ballMaterial")
    assert "PhysxMaterialAPI" not in mat.GetAppliedSchemas()
    mat.CreateAttribute("physxMaterial:restitutionCombineMode", Sdf.ValueTypeNames.Token).Set("max")
    with pytest.warns(UserWarning, match="restitutionCombineMode = 'max' is authored but PhysxMaterialAPI is not"):
        build_model(st)
    v_in, v_out, _ = bounce(*ours(st, 0.5))
    p_in, p_out, _ = bounce(*physx(st, 0.5))
    assert v_out / v_in == pytest.approx(0.5, rel=0.01)  # ours: as in the drop test above
    assert p_out / p_in == pytest.approx(0.5, rel=0.02)  # PhysX, 2% as above


def test_a_fast_impact_with_default_offsets_lands_as_on_physx():
    """The e = 0 drop with the default offsets: neither engine sinks nor pops."""
    _require_physx()
    for engine in (ours, physx):
        z, vz = engine(default_offsets(drop_stage(HEIGHTS[2], 0.0, 0.0)), 0.4)
        assert z.min() > -1e-5, engine.__name__  # m (measured 5e-6 ours, 0 PhysX)
        assert vz.max() < 2e-3, engine.__name__  # m/s (measured 1e-3 ours, 0 PhysX)


def rest_stage(rest: float, contact: float, applied: bool) -> Usd.Stage:
    """The sphere 5 cm above the plane with these offsets on it (m), PhysxCollisionAPI applied or not."""
    st = drop_stage(0.05, 0.0, 0.0)
    p = st.GetPrimAtPath("/World/ball")
    p.GetAttribute("physxCollision:contactOffset").Set(contact)
    p.CreateAttribute("physxCollision:restOffset", Sdf.ValueTypeNames.Float).Set(rest)
    if not applied:
        p.RemoveAppliedSchema("PhysxCollisionAPI")
    return st


#: (rest offset, contact offset, PhysxCollisionAPI applied, the height the sphere rests at on PhysX)
REST_CASES = [
    (0.004, 0.006, True, 0.004),
    (0.004, 0.006, False, 0.0),
    (0.006, 0.004, True, 0.0),
    (0.01, 0.01, True, 0.0),
]


@pytest.mark.parametrize("rest, contact, applied, height", REST_CASES)
def test_rest_offsets_count_as_on_physx(rest, contact, applied, height):
    """The sphere comes to rest at its rest offset only where PhysX has it: with PhysxCollisionAPI
    applied and the rest offset below the contact offset (measured on ovphysx: without the API, or
    with a rest offset at or above the contact offset, PhysX rests it on the plane)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z, _ = ours(rest_stage(rest, contact, applied), 0.6)
    # 1e-4 m: the resting overlap is the rows' compliance (measured 5e-6 m and below)
    assert z[-1] == pytest.approx(height, abs=1e-4)


def test_rest_offsets_rest_on_physx_as_ours():
    _require_physx()
    for rest, contact, applied, height in REST_CASES:
        z, _ = physx(rest_stage(rest, contact, applied), 0.6)
        assert z[-1] == pytest.approx(height, abs=1e-4), (rest, contact, applied)  # measured to 1e-6


def test_bounce_threshold_as_on_physx():
    """Unauthored, physxScene:bounceThreshold is 0 (PhysxSchema's fallback) and PhysX bounces a
    0.18 m/s impact; authored 0.2 m/s, neither engine bounces it; authored without PhysxSceneAPI
    on the scene, PhysX ignores it and bounces, and so do we."""
    _require_physx()
    h, e = 0.0018, 0.5
    for threshold, bounces, applied in ((None, True, True), (0.2, False, True), (0.2, True, False)):
        st = drop_stage(h, e, e, threshold=threshold)
        if not applied:
            st.GetPrimAtPath("/World/physicsScene").RemoveAppliedSchema("PhysxSceneAPI")
        for engine in (ours, physx):
            v_in, v_out, _ = bounce(*engine(st, 0.2))
            if bounces:  # 2% as above (measured 0.4984 ours, 0.5000 PhysX)
                assert v_out == pytest.approx(e * v_in, rel=0.02), engine.__name__
            else:  # m/s: no rebound, as in the no-bounce tests (measured 4e-5 ours, 6e-9 PhysX)
                assert v_out < 2e-3, engine.__name__


if (
    __name__ == "__main__"
):  # the figures benchmarks/RESULTS.md records (Fidelity): python tests/test_contact_restitution.py
    try:
        import ovphysx  # noqa: F401

        engines = (("ours", ours), ("PhysX", physx))
    except ImportError:
        engines = (("ours", ours),)
    print(f"drop of a {R} m sphere on a plane at {FPS} Hz, e = 0.5 on both materials (average)")
    print("h (m)    e^2 h (m) " + " ".join(f"{n + ' apex':>11} {n + ' out/in':>12}" for n, _ in engines))
    rows = [(f"{h:<8}", h, drop_stage(h, 0.5, 0.5)) for h in HEIGHTS]
    rows.append(("cube 0.5", 0.5, drop_stage(0.5, 0.5, 0.5, box=True)))  # a 10 cm cube on a face
    for label, h, st in rows:
        cols = []
        for _, run in engines:
            v_in, v_out, apex = bounce(*run(st, 0.65))
            cols.append(f"{apex:11.5f} {v_out / v_in:12.5f}")
        print(f"{label:<8} {0.25 * h:<9.5f} " + " ".join(cols))
    print("restitution 0.8 on the sphere (its combine mode), 0.2 on the plane; rebound / impact speed")
    for mode in COMBINE_MODES:
        st = drop_stage(0.2, 0.8, 0.2, mode_ball=mode)
        print(f"{mode:<9} " + " ".join(f"{n}: {_rebound(bounce(*run(st, 0.5))):.5f}" for n, run in engines))
