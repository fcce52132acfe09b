"""Rotations, quaternions and rigid transforms in float64 (numpy), one convention for the package.

Quaternions are ``(w, x, y, z)``, scalar first, as USD's ``Gf.Quat*`` (``GetReal()``,
``GetImaginary()``), MJCF and URDF tools write them. Warp's ``wp.quat`` (and so the solver's
``joint_q`` of a floating base) is ``(x, y, z, w)``: cross that boundary only with
``quat_xyzw`` / ``quat_wxyz``. Matrices act on column vectors (``p_world = R @ p_local + t``);
a 4x4 transform is ``transform(R, t)``. USD's ``Gf.Matrix4d`` is row-vector: transpose it.
"""

from __future__ import annotations

import math

import numpy as np


def axis_angle(axis, angle: float) -> np.ndarray:
    """Rotation by ``angle`` (rad) about ``axis`` (normalised here; a zero axis: identity)."""
    a = np.asarray(axis, dtype=float)
    n = np.linalg.norm(a)
    if n == 0.0:
        return np.eye(3)
    x, y, z = a / n
    c, s = math.cos(angle), math.sin(angle)
    C = 1.0 - c
    return np.array(
        [
            [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
        ]
    )


def gf_wxyz(q) -> tuple[float, float, float, float]:
    """A ``Gf.Quat*``'s ``(w, x, y, z)`` (duck-typed: no pxr import here)."""
    im = q.GetImaginary()
    return float(q.GetReal()), float(im[0]), float(im[1]), float(im[2])


def quat_to_mat(q) -> np.ndarray:
    """``(w, x, y, z)``, normalised here (a zero quaternion: identity) -> rotation matrix."""
    w, x, y, z = (float(c) for c in q)
    n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def mat_to_quat(R) -> np.ndarray:
    """Rotation matrix -> unit ``(w, x, y, z)`` with ``w >= 0`` (Shepperd's method: the largest
    of the four squared components first, so no branch divides by a small number)."""
    m = np.asarray(R, dtype=float)
    t = m[0, 0] + m[1, 1] + m[2, 2]
    if t > 0:
        s = 2.0 * math.sqrt(t + 1.0)
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    out = np.array(q)
    out /= np.linalg.norm(out)
    return -out if out[0] < 0 else out


def quat_xyzw(q_wxyz) -> np.ndarray:
    """``(w, x, y, z)`` -> Warp's ``(x, y, z, w)``."""
    w, x, y, z = q_wxyz
    return np.array([x, y, z, w], dtype=float)


def quat_wxyz(q_xyzw) -> np.ndarray:
    """Warp's ``(x, y, z, w)`` -> ``(w, x, y, z)``."""
    x, y, z, w = q_xyzw
    return np.array([w, x, y, z], dtype=float)


def transform(R, t) -> np.ndarray:
    """The 4x4 rigid transform ``p -> R p + t``."""
    out = np.eye(4)
    out[:3, :3] = R
    out[:3, 3] = t
    return out


def inverse(T: np.ndarray) -> np.ndarray:
    """Inverse of a 4x4 rigid transform (``R^T``, ``-R^T t``: no general matrix inverse)."""
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out
