"""Colliders ride on the solver's own link frames: the frames the solver's kernel computes
(``Scratch.R``, ``Scratch.pos``: joint-motion frames, joint axis along x) are the ones
``frames.motion_frames`` gives, so contacts from either agree; environments are
independent and identical inputs give identical contacts.

Tolerance: the kernel's forward kinematics is float32 over a 3-link chain of ~0.1 m
links: 2e-6 m / 2e-6 rad covers its rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from pxr import Gf, UsdGeom, UsdPhysics, UsdShade
from solver_stages import gripper

from mimic_ext.solver import Solver, build_model
from mimic_ext.solver.collision import build_collision, motion_frames
from mimic_ext.solver.collision.pairs import pair_frames, pair_material, pair_rest
from mimic_ext.solver.collision.wp_types import CollisionData, ContactBuffer

FK = 2e-6


def gripper_with_colliders(num_envs):
    b, jl, jr = gripper(floating=True)
    st = b.stage
    for body, size, t in (
        ("/World/palm", (0.2, 0.05, 0.05), (0, 0, 0.0)),
        ("/World/left", (0.02, 0.02, 0.12), (0, 0, 0.06)),
        ("/World/right", (0.02, 0.02, 0.12), (0, 0, 0.06)),
    ):
        g = UsdGeom.Cube.Define(st, f"{body}/collider")
        g.CreateSizeAttr(1.0)
        g.AddTranslateOp().Set(Gf.Vec3d(*t))
        g.AddScaleOp().Set(Gf.Vec3f(*size))
        UsdPhysics.CollisionAPI.Apply(g.GetPrim())
    # a prismatic slider on the palm, off its axis, for a second joint kind
    slider = b.body("slider", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), pos=(0.05, 0.0, 0.2))
    b.prismatic("slide", "/World/palm", slider, "Y", pos0=(0.05, 0, 0.2))
    s = UsdGeom.Sphere.Define(st, f"{slider}/ball")
    s.CreateRadiusAttr(0.03)
    UsdPhysics.CollisionAPI.Apply(s.GetPrim())
    box = b.body("box", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), pos=(0.0, 0.0, 0.19))
    g = UsdGeom.Cube.Define(st, f"{box}/collider")
    g.CreateSizeAttr(0.06)
    UsdPhysics.CollisionAPI.Apply(g.GetPrim())
    model = build_model(st, num_envs=num_envs)
    return st, model


def random_states(model, rng):
    q = np.tile(model.state().joint_q.numpy()[0], (model.num_envs, 1))
    n1 = len(model.joints)
    q[:, :n1] = rng.uniform(-0.8, 0.8, (model.num_envs, n1))
    base = n1
    q[:, base : base + 3] += rng.uniform(-0.2, 0.2, (model.num_envs, 3))
    quat = rng.normal(size=(model.num_envs, 4))
    q[:, base + 3 : base + 7] = quat / np.linalg.norm(quat, axis=1)[:, None]
    return q


@pytest.fixture(autouse=True)
def _quiet(recwarn):
    yield


def test_the_solver_kernels_frames_are_the_ones_colliders_are_stored_in():
    rng = np.random.default_rng(21)
    st, model = gripper_with_colliders(6)
    q = random_states(model, rng)
    solver = Solver(model)
    s_in, s_out, control = model.state(), model.state(), model.control()
    s_in.joint_q.assign(q.astype(np.float32))
    solver.step(s_in, s_out, control, 1.0 / 240.0)
    R_k = solver._scratch.R.numpy()  # the step's forward kinematics of s_in
    p_k = solver._scratch.pos.numpy()
    for e in range(model.num_envs):
        R, p = motion_frames(model, s_in.joint_q.numpy()[e])
        np.testing.assert_allclose(R_k[e], R, atol=FK)
        np.testing.assert_allclose(p_k[e], p, atol=FK)
    # contacts from the kernel's frames (free box at its stage pose) equal those from ours
    cm = build_collision(st, model)
    Rh, ph = cm.frames(model, s_in.joint_q.numpy())
    cm.collide(Rh, ph)
    host = cm.contacts()
    Rw, pw = Rh.numpy(), ph.numpy()
    L = len(model.links)
    Rw[:, :L], pw[:, :L] = R_k, p_k
    cm.collide(wp.array(Rw, dtype=wp.mat33), wp.array(pw, dtype=wp.vec3))
    kern = cm.contacts()
    assert host.count.sum() > 0
    np.testing.assert_array_equal(host.count, kern.count)
    for e in range(model.num_envs):
        k = host.count[e]
        np.testing.assert_array_equal(host.shapes[e, :k], kern.shapes[e, :k])
        np.testing.assert_allclose(host.separation[e, :k], kern.separation[e, :k], atol=1e-5)


def test_environments_are_independent_and_deterministic():
    rng = np.random.default_rng(22)
    st, model = gripper_with_colliders(8)
    q = random_states(model, rng)
    q[4:] = q[0]  # the last four repeat the first one's pose
    cm = build_collision(st, model)
    cm.collide(*cm.frames(model, q))
    batch = cm.contacts()
    for e in range(5, 8):
        for name in ("count", "shapes", "point", "normal", "separation", "material"):
            np.testing.assert_array_equal(getattr(batch, name)[e], getattr(batch, name)[4])
    model1 = build_model(st, num_envs=1)
    cm1 = build_collision(st, model1)
    for e in range(4):
        cm1.collide(*cm1.frames(model1, q[e]))
        one = cm1.contacts()
        k = one.count[0]
        assert batch.count[e] == k
        np.testing.assert_array_equal(batch.shapes[e, :k], one.shapes[0, :k])
        np.testing.assert_array_equal(batch.separation[e, :k], one.separation[0, :k])
        np.testing.assert_array_equal(batch.point[e, :k], one.point[0, :k])


def test_contacts_read_back_per_shape_pair():
    st, model = gripper_with_colliders(1)
    cm = build_collision(st, model, ground_plane=-0.2)
    q = model.state().joint_q.numpy()[0].copy()
    n1 = len(model.joints)
    q[n1 + 2] = -0.19  # palm lowered onto the ground (its half height 2.5 cm)
    cm.collide(*cm.frames(model, q))
    c = cm.contacts()
    pairs = c.pairs(0)
    key = ("/World/palm/collider", "<ground plane>")
    assert key in pairs
    pc = pairs[key]
    assert pc.body_a == "/World/palm" and pc.body_b is None and pc.impulses is None
    assert len(pc.points) == 4
    np.testing.assert_allclose(pc.separations, -0.015, atol=1e-5)
    np.testing.assert_allclose(pc.normals, [[0, 0, 1]] * 4, atol=1e-6)


@wp.kernel
def _pair_lookup(
    cd: CollisionData,
    out: ContactBuffer,
    frames: wp.array2d(dtype=wp.vec2i),
    mats: wp.array2d(dtype=wp.vec3),
    rests: wp.array2d(dtype=float),
):
    e, c = wp.tid()
    if c < out.count[e]:
        ab = out.shapes[e, c]
        frames[e, c] = pair_frames(cd, ab[0], ab[1])
        mats[e, c] = pair_material(cd, ab[0], ab[1])
        rests[e, c] = pair_rest(cd, ab[0], ab[1])


def test_kernel_side_pair_lookups_match_the_readout():
    """What contact rows will read per contact (frames, combined material, rest offset)
    from the shapes alone, the same as the host readout."""
    st, model = gripper_with_colliders(2)
    rubber = UsdShade.Material.Define(st, "/World/rubber")
    api = UsdPhysics.MaterialAPI.Apply(rubber.GetPrim())
    api.CreateStaticFrictionAttr(1.1)
    api.CreateDynamicFrictionAttr(0.9)
    api.CreateRestitutionAttr(0.3)
    UsdShade.MaterialBindingAPI.Apply(st.GetPrimAtPath("/World/palm/collider")).Bind(
        rubber, UsdShade.Tokens.weakerThanDescendants, "physics"
    )
    cm = build_collision(st, model, ground_plane=-0.2)
    q = np.tile(model.state().joint_q.numpy()[0], (2, 1))
    q[:, len(model.joints) + 2] = -0.19
    cm.collide(*cm.frames(model, q))
    c = cm.contacts()
    N, C = c.shapes.shape[:2]
    frames = wp.zeros((N, C), dtype=wp.vec2i)
    mats = wp.zeros((N, C), dtype=wp.vec3)
    rests = wp.zeros((N, C), dtype=float)
    wp.launch(_pair_lookup, dim=(N, C), inputs=[cm.data, cm.buffer, frames, mats, rests])
    assert any(np.allclose(m, [0.8, 0.7, 0.15]) for m in c.material[0, : c.count[0]])  # rubber with the default
    for e in range(N):
        k = c.count[e]
        assert k > 0
        np.testing.assert_array_equal(frames.numpy()[e, :k], c.frames[e, :k])
        np.testing.assert_allclose(mats.numpy()[e, :k], c.material[e, :k], rtol=1e-7)
        np.testing.assert_allclose(rests.numpy()[e, :k], c.rest_offset[e, :k], atol=1e-9)
