"""The robot as read from URDF or MJCF, before it becomes USD: bodies, joints, relations.

Both parsers fill this one format-neutral description (SI units, float64, poses as
``Transform``), and one writer turns it into a stage, so the USD layout and the unit
conversions exist once, not once per format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..joint_types import FIXED, PRISMATIC, REVOLUTE, SPHERICAL  # noqa: F401 (the kinds, re-exported to the parsers)
from .transforms import Transform, principal_inertia


@dataclass
class Inertia:
    """Mass properties in the body frame: COM and principal moments with their axes."""

    mass: float
    com: np.ndarray
    moments: np.ndarray
    axes: np.ndarray  # columns: principal axes in the body frame

    @staticmethod
    def from_tensor(mass: float, com, tensor) -> Inertia:
        """From an inertia tensor about the COM, expressed in the body frame."""
        moments, axes = principal_inertia(tensor)
        return Inertia(float(mass), np.asarray(com, dtype=float), np.maximum(moments, 0.0), axes)

    @property
    def tensor(self) -> np.ndarray:
        return self.axes @ np.diag(self.moments) @ self.axes.T


@dataclass
class Geom:
    """A shape attached to a body. Cylinders and capsules lie along their local Z axis.

    ``size``: box full extents (3); sphere (radius,); cylinder and capsule (radius,
    length of the straight part); mesh: scale (3); plane: (half x, half y).
    """

    name: str
    shape: str
    pose: Transform
    size: tuple[float, ...]
    collision: bool
    mesh_file: Path | None = None
    mesh_ref: str | None = None
    rgba: tuple[float, float, float, float] | None = None  # authored colour (URDF/MJCF material)
    friction: float | None = None  # sliding friction coefficient (MJCF), None: the simulator's default
    visible: bool = True  # drawn in the default view (a collider that is not is written purpose=guide)
    contype: int = 1  # MJCF collision bit masks
    conaffinity: int = 1


@dataclass
class Body:
    name: str
    world: Transform  # pose at the file's configuration
    inertia: Inertia | None = None
    geoms: list[Geom] = field(default_factory=list)
    line: int = 0
    tree: int = 0  # 0: the robot; others: extra trees of an MJCF scene
    chain_link: bool = False  # a massless body between two joints of one MJCF body
    frame_of: str | None = None  # URDF: a massless link on a fixed joint, folded (a frame): its parent link
    folded_joint: str = ""  # ... and the fixed joint it was folded through


@dataclass
class Joint:
    """A joint between ``parent`` (None: the world) and ``child``.

    ``frame0``/``frame1`` are the joint frame in the parent and child body; the joint
    coordinate is the motion of frame1 relative to frame0 along/about ``axis``.
    """

    name: str
    kind: str
    parent: str | None
    child: str
    frame0: Transform
    frame1: Transform
    axis: str = "X"
    lower: float | None = None
    upper: float | None = None
    velocity_limit: float | None = None
    effort_limit: float | None = None
    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0
    stiffness: float = 0.0
    target: float = 0.0
    line: int = 0
    cone_limit: float | None = None  # spherical joints (rad)
    initial: float = 0.0  # the coordinate at the file's configuration (MJCF ref; URDF 0), SI


@dataclass
class Mimic:
    """``q_follower = multiplier * q_leader + offset`` (SI), and where it was written."""

    follower: str
    leader: str
    multiplier: float
    offset: float
    file: Path
    line: int


@dataclass
class Closure:
    """A joint that closes a kinematic loop (MJCF ``connect``: spherical, ``weld``: fixed),
    written excluded from the articulation. ``body1`` None is the world."""

    name: str
    kind: str  # SPHERICAL or FIXED
    body0: str
    body1: str | None
    frame0: Transform
    frame1: Transform
    line: int = 0


@dataclass
class RobotModel:
    name: str
    source: Path
    format: str
    bodies: dict[str, Body] = field(default_factory=dict)
    joints: list[Joint] = field(default_factory=list)
    mimics: list[Mimic] = field(default_factory=list)
    floating: dict[int, bool] = field(default_factory=dict)  # per tree
    roots: dict[int, str] = field(default_factory=dict)  # tree -> root body
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    world_geoms: list[Geom] = field(default_factory=list)
    filtered_pairs: list[tuple[str, str]] = field(default_factory=list)  # bodies that never collide
    filtered_geoms: list[tuple[Geom, Geom]] = field(default_factory=list)  # collider pairs that never collide
    closures: list[Closure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meshes_skipped: list[str] = field(default_factory=list)
    unresolved_meshes: list[str] = field(default_factory=list)
    massless_bodies: list[str] = field(default_factory=list)
    folded_links: list[str] = field(default_factory=list)  # URDF: massless fixed-joint links, now frames
    mesh_inertia_bodies: list[str] = field(default_factory=list)  # MJCF: mass would come from meshes

    def joint(self, name: str) -> Joint | None:
        for j in self.joints:
            if j.name == name:
                return j
        return None


def chain_root(mimics, mimic) -> tuple[str, float, float]:
    """(root leader, multiplier, offset) of ``mimic`` composed down its chain of ``mimics``
    (anything with follower, leader, multiplier, offset: ``Mimic``, ``MimicRelation``):
    ``q_f = m1 q_b + c1`` and ``q_b = m2 q_a + c2`` give ``q_f = m1 m2 q_a + m1 c2 + c1``.
    The relations were checked acyclic (``check_relations``), so the walk ends."""
    leader_of = {m.follower: m for m in mimics}
    leader, multiplier, offset = mimic.leader, mimic.multiplier, mimic.offset
    while leader in leader_of:
        up = leader_of[leader]
        leader, multiplier, offset = up.leader, multiplier * up.multiplier, multiplier * up.offset + offset
    return leader, multiplier, offset
