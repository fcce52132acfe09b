"""Body poses, system momentum and kinetic energy from a state, in float64 numpy (no Warp).

An independent second implementation of the forward kinematics: tests use it to check
the kernel (momentum conservation), users to place bodies for display.
"""

from __future__ import annotations

import numpy as np

from ..math3d import axis_angle, inverse, quat_to_mat, quat_wxyz
from .stage_reader import FREE, REVOLUTE, SPHERICAL


def link_kinematics(model, q: np.ndarray, u: np.ndarray):
    """Per link: world pose (4x4), angular velocity and linear velocity of its frame origin."""
    q = np.asarray(q, float)
    u = np.asarray(u, float)
    poses, omegas, vels = [], [], []
    for i, lk in enumerate(model.links):
        qs, us = model.layout.q_start[i], model.layout.qd_start[i]
        if lk.jtype == FREE:
            t = np.eye(4)
            t[:3, :3] = quat_to_mat(quat_wxyz(q[qs + 3 : qs + 7]))  # joint_q keeps Warp's (x, y, z, w)
            t[:3, 3] = q[qs : qs + 3]
            poses.append(t)
            omegas.append(u[us : us + 3].copy())
            vels.append(u[us + 3 : us + 6].copy())
            continue
        parent = poses[lk.parent] if lk.parent >= 0 else np.eye(4)
        w_p = omegas[lk.parent] if lk.parent >= 0 else np.zeros(3)
        v_p = vels[lk.parent] if lk.parent >= 0 else np.zeros(3)
        xj = parent @ lk.X_p
        m = np.eye(4)
        if lk.jtype == SPHERICAL:  # quaternion (x, y, z, w); angular velocity in the child's joint frame
            m[:3, :3] = quat_to_mat(quat_wxyz(q[qs : qs + 4]))
            t = xj @ m @ inverse(lk.X_c)
            w_rel = xj[:3, :3] @ m[:3, :3] @ u[us : us + 3]
            poses.append(t)
            omegas.append(w_p + w_rel)
            vels.append(v_p + np.cross(w_p, t[:3, 3] - parent[:3, 3]) + np.cross(w_rel, t[:3, 3] - xj[:3, 3]))
            continue
        if lk.jtype == REVOLUTE:
            m[:3, :3] = axis_angle(lk.axis, q[qs])
        else:
            m[:3, 3] = lk.axis * q[qs]
        t = xj @ m @ inverse(lk.X_c)
        axis_w = xj[:3, :3] @ lk.axis
        o_p = parent[:3, 3]
        w = w_p.copy()
        v = v_p + np.cross(w_p, t[:3, 3] - o_p)
        if lk.jtype == REVOLUTE:
            w = w + axis_w * u[us]
            v = v + np.cross(axis_w * u[us], t[:3, 3] - xj[:3, 3])
        else:
            v = v + axis_w * u[us]
        poses.append(t)
        omegas.append(w)
        vels.append(v)
    return poses, omegas, vels


def body_poses(model, q: np.ndarray) -> dict[str, np.ndarray]:
    """World pose (4x4, metres) of every body of the model for one environment's ``q`` (bodies
    welded to the world included)."""
    poses, _, _ = link_kinematics(model, q, np.zeros(model.dof_count))
    out = {body: pose.copy() for body, pose in model.spec.world_bodies.items()}
    for lk, t in zip(model.links, poses):
        for body, rel in lk.bodies:
            out[body] = t @ rel
    return out


def momentum(model, q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(linear momentum, angular momentum about the world origin) of all links, world axes."""
    poses, omegas, vels = link_kinematics(model, q, u)
    lin = np.zeros(3)
    ang = np.zeros(3)
    for lk, t, w, v in zip(model.links, poses, omegas, vels):
        r = t[:3, :3]
        c = t[:3, :3] @ lk.com + t[:3, 3]
        vc = v + np.cross(w, c - t[:3, 3])
        p = lk.mass * vc
        lin += p
        ang += r @ lk.inertia @ r.T @ w + np.cross(c, p)
    return lin, ang


def kinetic_energy(model, q: np.ndarray, u: np.ndarray) -> float:
    """Kinetic energy (J) of all links for one environment's ``q``, ``u``: what a force-free
    mechanism keeps (benchmarks/fidelity.py measures how much of it a loop's step loses)."""
    poses, omegas, vels = link_kinematics(model, q, u)
    ke = 0.0
    for lk, t, w, v in zip(model.links, poses, omegas, vels):
        r = t[:3, :3]
        vc = v + np.cross(w, r @ lk.com)
        ke += 0.5 * lk.mass * float(vc @ vc) + 0.5 * float(w @ (r @ lk.inertia @ r.T) @ w)
    return ke
