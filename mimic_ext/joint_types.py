"""The joint types, once: their names, USD type names, motion sizes and the solver's codes.

Every layer speaks of joint kinds (the schema handler classifies prims, the importers build
joints, the stage reader picks a code per tree link, the Warp kernels branch on it); each used
to declare its own copy, and nothing tied them. This module is the only vocabulary: the others
import their names and codes from it (``tests/test_joint_types.py`` checks that every copy
agrees and that no module declares its own). Standard library only, so every layer can
import it without an upward import.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JointType:
    """One joint type. ``dofs`` / ``coords``: its velocity DOFs and position coordinates
    (None where they depend on the prim: a D6 joint's locks); ``code``: its code in the
    solver's trees (``LinkSpec.jtype``, the kernels' Warp constants), None where the solver
    has no tree link of this type (a fixed joint is merged, the others are refused)."""

    name: str
    usd_type: str | None  # the UsdPhysics prim type name (None: no prim, a floating base)
    dofs: int | None
    coords: int | None
    code: int | None


#: The type names (``schema.joints.joint_kind``'s answers, ``importers.model.Joint.kind``).
REVOLUTE = "revolute"
PRISMATIC = "prismatic"
FREE = "free"  # a floating base (no prim: a tree whose root has no joint to the world)
FIXED = "fixed"
SPHERICAL = "spherical"
DISTANCE = "distance"
D6 = "d6"
OTHER = "other"

#: Every joint type, in the order of their solver codes first.
JOINT_TYPES: tuple[JointType, ...] = (
    JointType(REVOLUTE, "PhysicsRevoluteJoint", 1, 1, 0),
    JointType(PRISMATIC, "PhysicsPrismaticJoint", 1, 1, 1),
    JointType(FREE, None, 6, 7, 2),  # a floating base: angular and linear velocity; position and quaternion
    JointType(FIXED, "PhysicsFixedJoint", 0, 0, None),
    JointType(SPHERICAL, "PhysicsSphericalJoint", 3, 4, 3),  # a quaternion; angular velocity in the child's joint frame
    JointType(DISTANCE, "PhysicsDistanceJoint", None, None, None),
    JointType(D6, "PhysicsJoint", None, None, None),  # the generic joint; its LimitAPI locks say what moves
    JointType(OTHER, None, None, None, None),  # a joint type no table here knows (a plugin's)
)

BY_NAME: dict[str, JointType] = {t.name: t for t in JOINT_TYPES}
#: The solver's code of each type that can be a tree link (``stage_reader``, ``kernels.dynamics``).
JOINT_CODES: dict[str, int] = {t.name: t.code for t in JOINT_TYPES if t.code is not None}
#: UsdPhysics prim type name -> joint type name.
USD_TYPES: dict[str, str] = {t.usd_type: t.name for t in JOINT_TYPES if t.usd_type is not None}
#: The solver's code -> its joint type (``solver.layout`` takes the DOF and coordinate counts from it).
BY_CODE: dict[int, JointType] = {t.code: t for t in JOINT_TYPES if t.code is not None}
