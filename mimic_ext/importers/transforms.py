"""Rigid transforms, rotations and inertia tensors in float64 (numpy), for the importers.

URDF, MJCF and USD each spell orientations differently (rpy, quaternions w-first,
Euler sequences, axis-angle, frame axes); everything is turned into a 3x3 rotation
matrix here, composed in float64, and only rounded to USD's float32 at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..math3d import axis_angle, mat_to_quat

AXES = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]), "Z": np.array([0.0, 0.0, 1.0])}


def rpy_to_rot(rpy) -> np.ndarray:
    """URDF roll-pitch-yaw: rotations about the fixed X, then Y, then Z axes."""
    r, p, y = rpy
    return axis_angle(AXES["Z"], y) @ axis_angle(AXES["Y"], p) @ axis_angle(AXES["X"], r)


def rot_to_rpy(R) -> np.ndarray:
    """Inverse of ``rpy_to_rot`` (pitch in [-pi/2, pi/2]; roll = 0 at the singularity)."""
    m = np.asarray(R, dtype=float)
    sp = -m[2, 0]
    if abs(sp) >= 1.0 - 1e-12:
        p = math.copysign(math.pi / 2, sp)
        r = 0.0
        y = math.atan2(-m[0, 1], m[1, 1])
    else:
        p = math.asin(sp)
        r = math.atan2(m[2, 1], m[2, 2])
        y = math.atan2(m[1, 0], m[0, 0])
    return np.array([r, p, y])


def euler_to_rot(angles, seq: str) -> np.ndarray:
    """MJCF Euler angles (rad): lower-case axes rotate with the frame, upper-case stay fixed."""
    R = np.eye(3)
    for angle, ch in zip(angles, seq):
        Ri = axis_angle(AXES[ch.upper()], angle)
        R = R @ Ri if ch.islower() else Ri @ R
    return R


def z_to_vec(v) -> np.ndarray:
    """Minimal rotation taking +Z to ``v`` (MJCF ``zaxis``, ``fromto``)."""
    return align(AXES["Z"], v)


def align(a, b) -> np.ndarray:
    """Minimal rotation taking unit vector ``a`` to the direction of ``b``."""
    a = np.asarray(a, dtype=float) / np.linalg.norm(a)
    b = np.asarray(b, dtype=float) / np.linalg.norm(b)
    c = float(np.dot(a, b))
    axis = np.cross(a, b)
    s = np.linalg.norm(axis)
    if s < 1e-12:
        if c > 0:
            return np.eye(3)
        # antiparallel: half turn about any axis perpendicular to a
        perp = np.cross(a, AXES["X"] if abs(a[0]) < 0.9 else AXES["Y"])
        return axis_angle(perp, math.pi)
    return axis_angle(axis, math.atan2(s, c))


def xyaxes_to_rot(values) -> np.ndarray:
    """MJCF ``xyaxes``: the frame's X and Y axes (Y made orthogonal to X)."""
    x = np.asarray(values[:3], dtype=float)
    y = np.asarray(values[3:6], dtype=float)
    x = x / np.linalg.norm(x)
    y = y - np.dot(x, y) * x
    y = y / np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def joint_axis_frame(axis) -> tuple[str, np.ndarray]:
    """(USD axis token, rotation R) with ``R @ e_token`` = the unit ``axis``.

    The token is the nearest coordinate axis, so a +X/+Y/+Z axis gets R = identity and
    files keep their frames; any other direction gets the minimal rotation.
    """
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    k = int(np.argmax(np.abs(a)))
    token = "XYZ"[k]
    return token, align(AXES[token], a)


@dataclass(frozen=True)
class Transform:
    """Rigid transform x -> R x + p (float64)."""

    R: np.ndarray
    p: np.ndarray

    @staticmethod
    def identity() -> Transform:
        return Transform(np.eye(3), np.zeros(3))

    @staticmethod
    def make(p=None, R=None) -> Transform:
        return Transform(
            np.eye(3) if R is None else np.asarray(R, dtype=float),
            np.zeros(3) if p is None else np.asarray(p, dtype=float),
        )

    def __mul__(self, other: Transform) -> Transform:
        return Transform(self.R @ other.R, self.R @ other.p + self.p)

    def inverse(self) -> Transform:
        Rt = self.R.T
        return Transform(Rt, -Rt @ self.p)

    def apply(self, x) -> np.ndarray:
        return self.R @ np.asarray(x, dtype=float) + self.p

    @property
    def quat(self) -> np.ndarray:
        return mat_to_quat(self.R)


def principal_inertia(I) -> tuple[np.ndarray, np.ndarray]:
    """(principal moments, R) with ``I = R diag(moments) R^T`` and det R = +1."""
    sym = 0.5 * (np.asarray(I, dtype=float) + np.asarray(I, dtype=float).T)
    w, V = np.linalg.eigh(sym)
    if np.linalg.det(V) < 0:
        V[:, 2] = -V[:, 2]
    return w, V


def inertia_tensor(ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0) -> np.ndarray:
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def shift_inertia(I_com, mass: float, r) -> np.ndarray:
    """Parallel-axis theorem: inertia about a point at ``-r`` from the centre of mass."""
    r = np.asarray(r, dtype=float)
    return I_com + mass * (np.dot(r, r) * np.eye(3) - np.outer(r, r))
