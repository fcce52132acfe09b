"""Position-drive gains for joints whose source gives none, as Isaac Sim's URDF importer sets them.

NVIDIA's FET022 mimic test moves a reference joint by setting position targets on its drive,
so a reference whose drive has no stiffness (a URDF, which has no gains; an MJCF joint driven
through a tendon) never moves there. Isaac Sim's URDF importer gives every joint a position
drive from a natural frequency and a damping ratio (isaac-sim/urdf-importer-extension,
``isaacsim.asset.importer.urdf``: ``plugins/UrdfTypes.h``, ``UrdfJointDrive``:
``naturalFrequency = 25``, ``dampingRatio = 0.005``; ``plugins/Urdf.cpp``, ``parseUrdf`` and
``computeSimpleStiffness``: ``stiffness = jointInertia * naturalFrequency^2``,
``damping = jointInertia * 2 * naturalFrequency * dampingRatio``). Its default drive type,
``acceleration``, makes PhysX multiply by the inertia the joint moves at run time; our stages
use force drives (the type every engine we run reads), so that inertia is computed here once,
at the file's configuration: the bodies beyond the joint taken as one rigid body, about the
joint's axis (revolute, kg m^2) or their mass (prismatic, kg). A joint that moves no mass
gets the importer's own fallback, an inertia of 1 (its ``computeSimpleStiffness``).
"""

from __future__ import annotations

import numpy as np

from .model import PRISMATIC, Joint, RobotModel
from .transforms import AXES, Transform

#: Isaac Sim's URDF importer's default natural frequency (its units: stiffness = I f^2, rad/s)
DEFAULT_FREQUENCY = 25.0
#: Isaac Sim's URDF importer's default damping ratio
DEFAULT_DAMPING_RATIO = 0.005
#: the inertia Isaac Sim's importer uses where it has none (``computeSimpleStiffness``)
FALLBACK_INERTIA = 1.0


def _joint_world(model: RobotModel, joint: Joint) -> Transform:
    parent = model.bodies[joint.parent].world if joint.parent is not None else Transform.identity()
    return parent * joint.frame0


def _subtree(model: RobotModel, joint: Joint) -> list[str]:
    children: dict[str, list[str]] = {}
    for j in model.joints:
        if j.parent is not None:
            children.setdefault(j.parent, []).append(j.child)
    out, stack = [], [joint.child]
    while stack:
        body = stack.pop()
        if body in out:
            continue
        out.append(body)
        stack.extend(children.get(body, ()))
    return out


def moved_inertia(model: RobotModel, joint: Joint) -> float:
    """The inertia ``joint`` moves at the file's configuration (SI): the bodies beyond it as one
    rigid body, about its axis (revolute) or their total mass (prismatic); 0 when massless."""
    frame = _joint_world(model, joint)
    axis = frame.R @ AXES[joint.axis]
    total = 0.0
    for name in _subtree(model, joint):
        inertia = model.bodies[name].inertia
        if inertia is None:
            continue
        if joint.kind == PRISMATIC:
            total += inertia.mass
            continue
        world = model.bodies[name].world
        R = world.R
        tensor = R @ inertia.tensor @ R.T
        arm = world.apply(inertia.com) - frame.p
        perp = arm - np.dot(arm, axis) * axis
        total += float(axis @ tensor @ axis) + inertia.mass * float(perp @ perp)
    return total


def default_gains(
    model: RobotModel, joint: Joint, frequency: float = DEFAULT_FREQUENCY, damping_ratio: float = DEFAULT_DAMPING_RATIO
) -> tuple[float, float]:
    """(stiffness, damping) in SI per rad or m, as Isaac Sim's URDF importer sets a position drive."""
    inertia = moved_inertia(model, joint) or FALLBACK_INERTIA
    return inertia * frequency**2, inertia * 2.0 * frequency * damping_ratio
