"""Collision geometry and contact detection for the mimic solver, batched per environment.

``build_collision(stage, model)`` reads the stage's colliders (see ``usd_colliders``)
against the solver model's links; ``CollisionModel.collide(frame_R, frame_p)`` detects
every environment's contacts (one Warp thread each) from the link frames the solver's
forward kinematics computes; ``contacts()`` reads them back per environment and pair.
"""

# imported on first use: the detection kernels take a tenth of a second to register with Warp,
# which a model without colliders (most FET022 stages) never launches
from ...lazy_exports import lazy_getattr

_EXPORTS = {
    "CollisionModel": "pipeline",
    "CollisionSpec": "shapes",
    "Contacts": "readout",
    "FrameLayout": "frames",
    "FreeBody": "shapes",
    "Hull": "hull",
    "MaterialSpec": "shapes",
    "PairContacts": "readout",
    "ShapeSpec": "shapes",
    "build_collision": "pipeline",
    "convex_hull": "hull",
    "link_to_motion_frame": "frames",
    "motion_frames": "frames",
    "read_colliders": "usd_colliders",
}
__getattr__ = lazy_getattr(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (the lazy table is the one list of public names)
