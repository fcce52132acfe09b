"""Warp structs of the collision pipeline: model data (built once), per-environment scratch,
and the per-environment contact buffer.

Layout follows the solver's: arrays of small structs for the model, and per-environment
rows of a few 2-D work arrays (``[env, slot]``), so one thread per environment addresses
few arrays. Shapes' poses are stored in the frame of their owner (see ``frames.py``).
"""

from __future__ import annotations

import warp as wp

from .shapes import KINDS

# shape kinds, in the order pairs are sorted by (``shapes.KINDS``)
SPHERE, CAPSULE, BOX, CYLINDER, HULL, PLANE = (
    wp.constant(KINDS.index(k)) for k in ("sphere", "capsule", "box", "cylinder", "hull", "plane")
)

# per-environment scratch sizes (vec3 slots in CollisionScratch.pts)
MAXP = wp.constant(16)  # vertices of one contact feature (a face polygon)
MAXW = wp.constant(40)  # a clipped polygon
MAXV = wp.constant(40)  # EPA polytope vertices
MAXF = wp.constant(80)  # EPA faces
MAXE = wp.constant(64)  # EPA horizon edges
MAXC = wp.constant(48)  # contact candidates of one pair before reduction to 4
O_FA = wp.constant(0)  # feature polygon of shape A
O_FB = wp.constant(16)  # feature polygon of shape B
O_W1 = wp.constant(32)  # clipping ping-pong buffers
O_W2 = wp.constant(72)
O_SW = wp.constant(0)  # GJK simplex / EPA vertices (Minkowski points) ...
O_SA = wp.constant(40)  # ... and their witness points on shape A
PTS = 112  # vec3 slots per environment
GK_SLOTS = wp.constant(32)  # pairs GJK proved far apart, remembered per environment (gjk.py)


@wp.struct
class ShapeData:
    """One collider. ``frame``: the link/body frame its pose ``(R, p)`` is in (-1: world,
    a static shape); ``owner``: the rigid actor it belongs to (filtering). Capsules and
    cylinders have their axis along local z, planes their normal along local z."""

    kind: int
    frame: int
    owner: int
    R: wp.mat33
    p: wp.vec3
    size: wp.vec3  # sphere (r), capsule (r, half length), box half extents, cylinder (r, half height)
    radius: float  # the rounded part GJK leaves out: sphere and capsule radius, else 0
    v0: int  # hull: first vertex in verts, count
    nv: int
    f0: int  # hull: first face in faces, count
    nf: int
    center: wp.vec3  # local bounding box (centre, half extents), contact offset not included
    half: wp.vec3
    offset: float  # contact offset (contacts are reported within offset_a + offset_b)
    rest: float  # rest offset (the solver holds separation at rest_a + rest_b)
    mat: int
    gset: int  # collision-group set
    big: int  # 1: too large for the grid's cells, tested against every shape


@wp.struct
class FaceData:
    n: wp.vec3  # outward unit normal, shape frame
    d: float
    start: int  # vertex indices in CollisionData.fverts (global vertex ids)
    count: int


@wp.struct
class CollisionData:
    n_shapes: int
    n_owners: int
    shapes: wp.array(dtype=ShapeData)
    verts: wp.array(dtype=wp.vec3)
    faces: wp.array(dtype=FaceData)
    fverts: wp.array(dtype=int)
    n_mats: int
    pair_mat: wp.array(dtype=wp.vec3)  # [mat_a * n_mats + mat_b]: combined (static, dynamic friction, restitution)
    n_gsets: int
    gtable: wp.array(dtype=int)  # [gset_a * n_gsets + gset_b] = 1 when they collide
    n_owner_pairs: int
    owner_pairs: wp.array(dtype=int)  # sorted keys lo * n_owners + hi of owners that never collide
    n_shape_pairs: int
    shape_pairs: wp.array(dtype=int)  # sorted keys lo * n_shapes + hi of filtered shape pairs
    n_small: int
    small: wp.array(dtype=int)  # shapes in the grid
    n_big: int
    big: wp.array(dtype=int)  # finite shapes too large for a cell
    n_planes: int
    planes: wp.array(dtype=int)
    inv_cell: float
    hash_mask: int
    capacity: int  # contacts per environment
    bounce_threshold: float  # m/s: a contact approaching slower does not bounce


@wp.struct
class CollisionScratch:
    Rw: wp.array2d(dtype=wp.mat33)  # shapes' world poses and bounding boxes
    pw: wp.array2d(dtype=wp.vec3)
    lo: wp.array2d(dtype=wp.vec3)
    hi: wp.array2d(dtype=wp.vec3)
    heads: wp.array2d(dtype=int)  # grid hash buckets
    ent: wp.array2d(dtype=wp.vec4i)  # (shape, cell x, y, z)
    nxt: wp.array2d(dtype=int)
    pts: wp.array2d(dtype=wp.vec3)  # features, clipping, GJK/EPA points (O_* slots)
    cand: wp.array2d(dtype=wp.vec3)  # contact candidates of one pair: point ...
    cs: wp.array2d(dtype=float)  # ... and separation
    tri: wp.array2d(dtype=wp.vec3i)  # EPA faces (x = -1: removed)
    pln: wp.array2d(dtype=wp.vec4)  # EPA face planes (n, d)
    edges: wp.array2d(dtype=wp.vec2i)  # EPA horizon
    gk_key: wp.array2d(dtype=int)  # [e, key % GK_SLOTS]: pair key a * n_shapes + b (-1: none) ...
    gk_R: wp.array2d(dtype=wp.mat33)  # ... b's pose relative to a's when GJK proved them apart ...
    gk_t: wp.array2d(dtype=wp.vec3)
    gk_d: wp.array2d(dtype=float)  # ... by at least this (core to core)


@wp.struct
class ContactBuffer:
    """Per environment: ``count`` contacts in ``[0, count)``; ``lost`` the ones that did not
    fit; ``stats``: (candidate pairs, pairs sent to the narrow phase, filtered pairs, pairs of
    those the narrow phase skipped as still proven far apart: ``gjk``).
    A contact's frames, material and rest offset follow from its shapes (``pairs.py``)."""

    count: wp.array(dtype=int)
    lost: wp.array(dtype=int)
    stats: wp.array(dtype=wp.vec4i)
    shapes: wp.array2d(dtype=wp.vec2i)  # (a, b): the normal points from b to a
    point: wp.array2d(dtype=wp.vec3)  # world, midway between the two surfaces
    normal: wp.array2d(dtype=wp.vec3)  # world, unit, from shape b to shape a
    sep: wp.array2d(dtype=float)  # signed distance between the surfaces (< 0: penetration)


@wp.struct
class Pair:
    """The pair being collided: environment, shapes (kind of a <= kind of b), margin."""

    e: int
    a: int
    b: int
    margin: float
