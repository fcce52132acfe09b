"""Spatial algebra: Plücker vectors ``(angular, linear)`` in world axes about a point ``o``.

A spatial inertia is kept as ``(m, h = m c, Ibar = I_c - m [c][c])`` (about ``o``) so that
composite inertias are plain sums.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
from typing import Any

import warp as wp


@wp.func
def turn_about_x(R: Any, c: Any, s: Any):
    """``R Rx(q)`` from ``(cos q, sin q)``: the frame's y and z columns turned about its x axis.

    Generic over the matrix type: the float32 step and the float64 momentum bookkeeping share it.
    """
    return type(R)(
        R[0, 0],
        c * R[0, 1] + s * R[0, 2],
        c * R[0, 2] - s * R[0, 1],
        R[1, 0],
        c * R[1, 1] + s * R[1, 2],
        c * R[1, 2] - s * R[1, 1],
        R[2, 0],
        c * R[2, 1] + s * R[2, 2],
        c * R[2, 2] - s * R[2, 1],
    )


def build(ns) -> None:
    V3, SV = ns.vec3, ns.spatial

    @wp.func
    def sv(w: V3, v: V3):
        return SV(w[0], w[1], w[2], v[0], v[1], v[2])

    @wp.func
    def top(a: SV):
        return V3(a[0], a[1], a[2])

    @wp.func
    def bot(a: SV):
        return V3(a[3], a[4], a[5])

    @wp.func
    def motion_cross(a: SV, b: SV):
        w1 = top(a)
        v1 = bot(a)
        w2 = top(b)
        v2 = bot(b)
        return sv(wp.cross(w1, w2), wp.cross(w1, v2) + wp.cross(v1, w2))

    @wp.func
    def force_cross(a: SV, f: SV):
        w = top(a)
        v = bot(a)
        n = top(f)
        fl = bot(f)
        return sv(wp.cross(w, n) + wp.cross(v, fl), wp.cross(w, fl))

    @wp.func
    def inertia_mul(m: ns.T, h: V3, Ib: ns.mat33, a: SV):
        w = top(a)
        v = bot(a)
        return sv(Ib * w + wp.cross(h, v), m * v - wp.cross(h, w))

    ns.turn_about_x = turn_about_x
    ns.sv, ns.top, ns.bot = sv, top, bot
    ns.motion_cross, ns.force_cross, ns.inertia_mul = motion_cross, force_cross, inertia_mul
