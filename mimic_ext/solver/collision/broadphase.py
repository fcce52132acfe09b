"""Broad phase per environment: a uniform hash grid, and the pair filter.

Each finite shape small enough for a cell (``ShapeData.big == 0``) is entered in the at
most 2 x 2 x 2 cells its bounding box touches; a pair is a candidate in the one cell
that holds the lowest corner of the two boxes' overlap, so it is examined once. With the
cell as large as the largest small shape, the candidates grow with the number of shapes
times their density, not with its square. Shapes too large for the cells (a table, a big
static box) and planes are tested against every shape: linear in the shape count as long
as they are few. A scene of few small shapes skips the grid and pairs them all
(``kernels.ALL_PAIRS_MAX``).
"""

from __future__ import annotations

import warp as wp

from .wp_types import CollisionData, CollisionScratch


@wp.func
def cell_of(x: wp.vec3, inv: float):
    return wp.vec3i(
        int(wp.floor(wp.clamp(x[0] * inv, -1.0e6, 1.0e6))),
        int(wp.floor(wp.clamp(x[1] * inv, -1.0e6, 1.0e6))),
        int(wp.floor(wp.clamp(x[2] * inv, -1.0e6, 1.0e6))),
    )


@wp.func
def bucket(x: int, y: int, z: int, mask: int):
    h = (
        (wp.uint32(x) * wp.uint32(73856093))
        ^ (wp.uint32(y) * wp.uint32(19349663))
        ^ (wp.uint32(z) * wp.uint32(83492791))
    )
    return int(h & wp.uint32(mask))


@wp.func
def in_sorted(keys: wp.array(dtype=int), n: int, key: int):
    lo = int(0)
    hi = int(n)
    while lo < hi:
        mid = (lo + hi) // 2
        k = keys[mid]
        if k == key:
            return True
        if k < key:
            lo = mid + 1
        else:
            hi = mid
    return False


@wp.func
def filtered(cd: CollisionData, i: int, j: int):
    """True when the pair never collides: one actor, two static shapes, collision groups,
    actors filtered by joints (``physics:collisionEnabled`` false, the default) or
    articulation self-collision, and ``FilteredPairsAPI``."""
    si = cd.shapes[i]
    sj = cd.shapes[j]
    out = si.owner == sj.owner or (si.frame < 0 and sj.frame < 0) or cd.gtable[si.gset * cd.n_gsets + sj.gset] == 0
    if not out and cd.n_owner_pairs > 0:
        out = in_sorted(
            cd.owner_pairs, cd.n_owner_pairs, wp.min(si.owner, sj.owner) * cd.n_owners + wp.max(si.owner, sj.owner)
        )
    if not out and cd.n_shape_pairs > 0:
        out = in_sorted(cd.shape_pairs, cd.n_shape_pairs, wp.min(i, j) * cd.n_shapes + wp.max(i, j))
    return out


@wp.func
def cell(lo: wp.vec3, hi: wp.vec3, inv_cell: float, hash_mask: int, q: int):
    """The q-th (of at most 2 x 2 x 2) cell a box touches: (touched, cell, bucket)."""
    c0 = cell_of(lo, inv_cell)
    c1 = cell_of(hi, inv_cell)
    c = c0 + wp.vec3i(q & 1, (q >> 1) & 1, (q >> 2) & 1)
    ok = c[0] <= c1[0] and c[1] <= c1[1] and c[2] <= c1[2]
    return ok, c, bucket(c[0], c[1], c[2], hash_mask)


@wp.func
def insert_cells(cd: CollisionData, sc: CollisionScratch, e: int):
    """Enter every small shape into the cells its box touches."""
    s_heads = sc.heads
    s_ent = sc.ent
    s_nxt = sc.nxt
    for h in range(cd.hash_mask + 1):
        s_heads[e, h] = -1
    ne = int(0)
    for k in range(cd.n_small * 8):
        s = cd.small[k // 8]
        ok, c, h = cell(sc.lo[e, s], sc.hi[e, s], cd.inv_cell, cd.hash_mask, k % 8)
        if ok and ne < s_ent.shape[1]:
            s_ent[e, ne] = wp.vec4i(s, c[0], c[1], c[2])
            s_nxt[e, ne] = s_heads[e, h]
            s_heads[e, h] = ne
            ne = ne + 1
