"""Collision geometry and contact detection for the mimic solver, batched per environment.

``build_collision(stage, model)`` reads the stage's colliders (see ``usd_colliders``)
against the solver model's links; ``CollisionModel.collide(frame_R, frame_p)`` detects
every environment's contacts (one Warp thread each) from the link frames the solver's
forward kinematics computes; ``contacts()`` reads them back per environment and pair.
"""

from .frames import FrameLayout, link_to_motion_frame, motion_frames
from .hull import Hull, convex_hull
from .pipeline import CollisionModel, build_collision
from .readout import Contacts, PairContacts
from .shapes import CollisionSpec, FreeBody, MaterialSpec, ShapeSpec
from .usd_colliders import read_colliders

__all__ = [
    "CollisionModel",
    "CollisionSpec",
    "Contacts",
    "FrameLayout",
    "FreeBody",
    "Hull",
    "MaterialSpec",
    "PairContacts",
    "ShapeSpec",
    "build_collision",
    "convex_hull",
    "link_to_motion_frame",
    "motion_frames",
    "read_colliders",
]
