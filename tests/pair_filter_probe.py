"""A kernel that counts the collider pairs ``broadphase.filtered`` lets through, for tests.

(No ``from __future__ import annotations`` here: Warp reads the annotations as live types.)"""

import warp as wp

from mimic_ext.solver.collision import broadphase
from mimic_ext.solver.collision.wp_types import CollisionData


@wp.kernel(module="test_pair_filter_probe")
def count_unfiltered(cd: CollisionData, out: wp.array(dtype=int)):
    i, j = wp.tid()
    if i < j and not broadphase.filtered(cd, i, j):
        wp.atomic_add(out, 0, 1)
