"""Colliders as read from USD, in SI units, before they are packed for the kernels.

A shape's ``pose`` is in the frame of its rigid body (the USD body prim's frame without
scale; for a static collider, the world). Scale is baked into the sizes and hull points.
Capsules and cylinders have their axis along the pose's z, planes their normal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .hull import Hull

KINDS = ("sphere", "capsule", "box", "cylinder", "hull", "plane")
COMBINE_MODES = ("average", "min", "multiply", "max")  # PhysX PxCombineMode order (priority)


@dataclass(frozen=True)
class MaterialSpec:
    """A physics material; the defaults are PhysX's default material."""

    static_friction: float = 0.5
    dynamic_friction: float = 0.5
    restitution: float = 0.0
    friction_mode: str = "average"
    restitution_mode: str = "average"
    path: str | None = None


@dataclass
class ShapeSpec:
    path: str
    kind: str
    body: str | None  # owning rigid body prim (None: a collider without one)
    static: bool  # no simulated body moves it (no body, disabled, kinematic, welded)
    pose: np.ndarray  # 4x4: in the body frame, or in the world when static
    size: np.ndarray  # sphere (r,0,0), capsule (r, half length, 0), box half extents,
    #                                   cylinder (r, half height, 0), plane and hull zeros
    contact_offset: float
    rest_offset: float
    material: MaterialSpec
    groups: frozenset = frozenset()  # collision group paths it belongs to
    hull: Hull | None = None

    @property
    def actor(self) -> str:
        """The rigid actor it belongs to: its body, or itself for a collider without one."""
        return self.body or self.path

    def local_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(centre, half extents) of the shape's box in its own frame (infinite for planes)."""
        r, h = self.size[0], self.size[1]
        if self.kind == "sphere":
            return np.zeros(3), np.full(3, r)
        if self.kind in ("capsule", "cylinder"):
            return np.zeros(3), np.array([r, r, h + (r if self.kind == "capsule" else 0.0)])
        if self.kind == "box":
            return np.zeros(3), np.asarray(self.size, float)
        if self.kind == "hull":
            assert self.hull is not None  # a hull shape carries its hull
            lo, hi = self.hull.vertices.min(0), self.hull.vertices.max(0)
            return 0.5 * (lo + hi), 0.5 * (hi - lo)
        return np.zeros(3), np.full(3, np.inf)


@dataclass
class FreeBody:
    """A rigid body outside every articulation: the solver adds it as a floating body."""

    path: str
    pose: np.ndarray  # initial world pose (4x4, metres)
    mass: float
    com: np.ndarray  # body frame
    inertia: np.ndarray  # about the COM, body frame
    velocity: np.ndarray  # initial linear velocity of the body origin, world (m/s)
    angular_velocity: np.ndarray  # world (rad/s)
    shapes: list[int] = field(default_factory=list)


@dataclass
class CollisionSpec:
    shapes: list[ShapeSpec]
    free_bodies: list[FreeBody]
    group_table: dict  # (frozenset, frozenset) -> bool for the group sets in use
    joint_pairs: list[tuple[str, str]]  # actors a joint keeps from colliding
    no_self_collision: list[list[str]]  # actors of articulations without self-collision
    filtered_pairs: list[tuple[list[int], list[int]]]  # FilteredPairsAPI, as shape index sets
    warnings: list[str]
    bounce_threshold: float = 0.0  # m/s: slower impacts do not bounce (``physxScene:bounceThreshold``)
