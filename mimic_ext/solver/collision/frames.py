"""Which frame each collider's pose is stored in, and the solver's link frames.

The solver's kernel keeps, per environment and link, the link's *joint-motion frame*:
the world pose of the joint frame after the joint's motion, turned so that the joint
axis is its x axis (``Model._build_data``: ``to_link``; ``kernels.dynamics.forward``: ``sc.R``,
``sc.pos``). A floating base's frame is its USD body frame. Colliders are stored in
those frames, so the contact pass reads the solver's forward kinematics as it is:

    T_shape_world = T_motion_frame(link) @ to_link(link) @ T_body_in_link @ T_shape_in_body

Free bodies (no articulation) take frames after the model's links, in the order of
``CollisionSpec.free_bodies``; their frame is the body frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stage_reader import FREE, axis_frame


def link_to_motion_frame(link) -> np.ndarray:
    """4x4 taking coordinates in a link's frame (its body's USD frame) to its joint-motion
    frame: ``to_link`` of ``Model._build_data``."""
    t = np.eye(4)
    if link.jtype != FREE:
        t[:3, :3] = axis_frame(link.axis).T
        t = t @ np.linalg.inv(link.X_c)
    return t


@dataclass
class FrameLayout:
    """Frames the kernels take poses of: the model's links, then the free bodies."""

    names: list[str]  # the body each frame is named after
    body_frame: dict[str, tuple[int, np.ndarray]]  # body -> (frame, body pose in that frame)
    n_links: int

    @property
    def n_frames(self) -> int:
        return len(self.names)

    @classmethod
    def from_model(cls, model, free_bodies=()) -> FrameLayout:
        names, body_frame = [], {}
        for i, lk in enumerate(model.links):
            to_m = link_to_motion_frame(lk)
            for body, pose in lk.bodies:
                body_frame[body] = (i, to_m @ pose)
            names.append(lk.body)
        for fb in free_bodies:
            body_frame[fb.path] = (len(names), np.eye(4))
            names.append(fb.path)
        return cls(names=names, body_frame=body_frame, n_links=len(model.links))


def motion_frames(model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The solver's link frames for one environment's ``q`` (float64 numpy): rotations
    (L, 3, 3) and origins (L, 3), world. Same as the kernel's ``sc.R``, ``sc.pos``."""
    from ..inspect import link_kinematics

    poses, _, _ = link_kinematics(model, q, np.zeros(model.dof_count))
    R = np.zeros((len(poses), 3, 3))
    p = np.zeros((len(poses), 3))
    for i, (lk, t) in enumerate(zip(model.links, poses)):
        m = t @ np.linalg.inv(link_to_motion_frame(lk))
        R[i], p[i] = m[:3, :3], m[:3, 3]
    return R, p
