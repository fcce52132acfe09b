"""What a contact's shape pair carries, looked up from its two shapes: the frames whose
motion it constrains, the combined material and the rest offset. Contact rows (the
solver's) call these per contact; the buffer stores only shapes, point, normal and
separation."""

from __future__ import annotations

import warp as wp

from .wp_types import CollisionData


@wp.func
def pair_frames(cd: CollisionData, a: int, b: int):
    """Frames of the two shapes (-1: static, the world)."""
    return wp.vec2i(cd.shapes[a].frame, cd.shapes[b].frame)


@wp.func
def pair_material(cd: CollisionData, a: int, b: int):
    """(static friction, dynamic friction, restitution), combined as PhysX does."""
    return cd.pair_mat[cd.shapes[a].mat * cd.n_mats + cd.shapes[b].mat]


@wp.func
def pair_rest(cd: CollisionData, a: int, b: int):
    """Separation the pair comes to rest at: the sum of the two rest offsets."""
    return cd.shapes[a].rest + cd.shapes[b].rest
