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
use force drives (the type every engine we run reads), so that inertia is computed once, at
the file's configuration (``joint_inertia.moved_inertias``, per tree): the bodies beyond the
joint taken as one rigid body, about the joint's axis (revolute, kg m^2) or their mass
(prismatic, kg). A joint that moves no mass gets the importer's own fallback, an inertia of 1 (its ``computeSimpleStiffness``).
"""

from __future__ import annotations

#: Isaac Sim's URDF importer's default natural frequency (its units: stiffness = I f^2, rad/s)
DEFAULT_FREQUENCY = 25.0
#: Isaac Sim's URDF importer's default damping ratio
DEFAULT_DAMPING_RATIO = 0.005
#: the inertia Isaac Sim's importer uses where it has none (``computeSimpleStiffness``)
FALLBACK_INERTIA = 1.0


def default_gains(
    inertia: float, frequency: float = DEFAULT_FREQUENCY, damping_ratio: float = DEFAULT_DAMPING_RATIO
) -> tuple[float, float]:
    """(stiffness, damping) in SI per rad or m, as Isaac Sim's URDF importer sets a position drive
    on a joint that moves ``inertia`` (``joint_inertia.moved_inertias``; 0: the fallback)."""
    inertia = inertia or FALLBACK_INERTIA
    return inertia * frequency**2, inertia * 2.0 * frequency * damping_ratio
