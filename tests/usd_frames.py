"""A USD joint's two frames in world space, read from the stage as authored.

Several importer tests check that the authored body poses and joint frames agree; they
must all compose the frames the same way (body world transform, then localPos/localRot).
"""

from __future__ import annotations

import numpy as np
from pxr import UsdGeom, UsdPhysics

from mimic_ext.math3d import quat_to_mat


def joint_world_frames(stage, joint_prim) -> tuple[np.ndarray, np.ndarray]:
    """(frame0, frame1) as 4x4 arrays (column vectors): world(body_i) @ localFrame_i.

    A side with no body target is the world itself (identity body transform).
    """
    joint = UsdPhysics.Joint(joint_prim)
    cache = UsdGeom.XformCache()

    def frame(rel, pos, rot):
        targets = rel.GetTargets()
        world = np.array(cache.GetLocalToWorldTransform(stage.GetPrimAtPath(targets[0]))).T if targets else np.eye(4)
        q = rot.Get()
        local = np.eye(4)
        local[:3, :3] = quat_to_mat([q.GetReal(), *q.GetImaginary()])
        local[:3, 3] = pos.Get()
        return world @ local

    f0 = frame(joint.GetBody0Rel(), joint.GetLocalPos0Attr(), joint.GetLocalRot0Attr())
    f1 = frame(joint.GetBody1Rel(), joint.GetLocalPos1Attr(), joint.GetLocalRot1Attr())
    return f0, f1
