"""Which mimic schema each host application reads, so an import can be written for one and a
stage checked against one (``import --target``, ``validate --target``).

Why: NewtonMimicAPI alone is what Isaac Sim 6.0 authors and what its PhysX, ovphysx 0.7 and
Newton read, but every public omni.physx up to Isaac Sim 5.1 parses only PhysxMimicJointAPI:
there a NewtonMimicAPI follower is simply not coupled, with no message. Every host reads the
same units (NewtonMimicAPI ``coef0`` in the follower's USD unit, degrees for a revolute one;
PhysxMimicJointAPI ``offset`` likewise), so a target picks the schema, never the units.
"""

from __future__ import annotations

from dataclasses import dataclass

from .relation import NEWTON, PHYSX

#: the API that makes Newton 1.8's ``add_usd`` store a relation as an equality constraint
MJC_EQUALITY_JOINT_API = "MjcEqualityJointAPI"


@dataclass(frozen=True)
class Host:
    """A host application: the schemas it couples and the one an import writes for it."""

    name: str
    label: str
    reads: frozenset[str]
    schema: str
    #: a PhysX that reads Newton's joint attributes, ``newton:velocityLimit`` among them
    physx_reads_newton_joint: bool


HOSTS: dict[str, Host] = {
    "isaacsim-6": Host(
        "isaacsim-6",
        "Isaac Sim >= 6.0 and ovphysx >= 0.7 (PhysX reads NewtonMimicAPI and PhysxMimicJointAPI)",
        frozenset({NEWTON, PHYSX}),
        NEWTON,
        physx_reads_newton_joint=True,
    ),
    "isaacsim-5": Host(
        "isaacsim-5",
        "Isaac Sim 4.5-5.1 (omni.physx up to 5.1 parses only PhysxMimicJointAPI)",
        frozenset({PHYSX}),
        PHYSX,
        physx_reads_newton_joint=False,
    ),
    "newton": Host(
        "newton",
        "Newton 1.8 (add_usd reads NewtonMimicAPI, and PhysxMimicJointAPI where no NewtonMimicAPI is)",
        frozenset({NEWTON, PHYSX}),
        NEWTON,
        physx_reads_newton_joint=False,
    ),
    "mujoco": Host(
        "mujoco",
        "Newton's MuJoCo solver (SolverMuJoCo through add_usd; MuJoCo itself loads MJCF: mimic-ext export)",
        frozenset({NEWTON, PHYSX}),
        NEWTON,
        physx_reads_newton_joint=False,
    ),
}
TARGETS = tuple(HOSTS)
DEFAULT_TARGET = "isaacsim-6"
#: said on every import that takes the default
DEFAULT_NOTE = "NewtonMimicAPI (degrees): coupled in Isaac Sim >= 6, Newton, ovphysx; use --target isaacsim-5 for Isaac Sim 4.5-5.1"


def host(name: str) -> Host:
    from ..errors import MimicInputError

    if name not in HOSTS:
        raise MimicInputError(f"unknown target '{name}' (use one of {', '.join(TARGETS)})")
    return HOSTS[name]


def import_note(schema: str, target: str | None) -> str:
    """The one line an import prints: the schema it wrote and the hosts that couple it."""
    if schema == PHYSX:
        return "PhysxMimicJointAPI (degrees): coupled in Isaac Sim 4.5-5.1 and >= 6, ovphysx, Newton" + (
            f" (--target {target})" if target else ""
        )
    if target is None or target == DEFAULT_TARGET:
        return DEFAULT_NOTE
    return f"NewtonMimicAPI (degrees) for --target {target}: {host(target).label}"
