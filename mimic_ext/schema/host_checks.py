"""What a host application would do with a stage's relations (``validate --target``).

Why: the same stage is coupled on one host and silently not on another (a NewtonMimicAPI
follower in Isaac Sim 5.1; a NewtonMimicAPI beside MjcEqualityJointAPI in Newton's
Featherstone solver), and a leader's ``newton:velocityLimit`` makes ovphysx diverge with the
relation (NVIDIA's converter output of the Ability hand). The validator reports these as
findings (codes in ``validation.CODES``); without a target, only what the default host
(Isaac Sim 6 / ovphysx) would do wrong is reported.
"""

from __future__ import annotations

import math

from pxr import Sdf, Usd

from . import joints
from .hosts import DEFAULT_TARGET, MJC_EQUALITY_JOINT_API, host
from .relation import NEWTON, PHYSX, MimicRelation
from .schema_choice import api_label

LEADER_CAP = "newton:velocityLimit"


def host_findings(stage: Usd.Stage, rels: list[MimicRelation], target: str | None) -> list[tuple[str, str, str]]:
    """(code, prim path, message) for each relation ``target`` (None: the default host, only the
    leader cap) would not couple as authored."""
    h = host(target or DEFAULT_TARGET)
    out: list[tuple[str, str, str]] = []
    for rel in rels:
        if not rel.enabled or rel.invalid:
            continue
        if target is not None and rel.schema not in h.reads:
            to = "physx" if h.schema == PHYSX else "newton"
            out.append(
                (
                    "MIMIC_HOST_NOT_COUPLED",
                    rel.follower,
                    f"{api_label(rel)} is not read by {h.label}, so this follower is not coupled there: rewrite it "
                    f"(mimic-ext convert STAGE --to {to}, or mimic-ext import --target {h.name})",
                )
            )
        prim = stage.GetPrimAtPath(rel.follower)
        # (Newton's MuJoCo solver applies the equality: --target mujoco is fine with it)
        if target == "newton" and rel.schema == NEWTON and prim and joints.has_api(prim, MJC_EQUALITY_JOINT_API):
            out.append(
                (
                    "MIMIC_HOST_NOT_COUPLED",
                    rel.follower,
                    f"NewtonMimicAPI beside {MJC_EQUALITY_JOINT_API} (mujoco-usd-converter's output): Newton 1.8's "
                    "add_usd stores it as a joint equality, which only SolverMuJoCo applies; Featherstone and "
                    f"Newton's other solvers leave the follower uncoupled: remove {MJC_EQUALITY_JOINT_API} from "
                    "the follower for them (or check with --target mujoco)",
                )
            )
        if (
            target in ("newton", "mujoco")
            and rel.schema == PHYSX
            and prim
            and not joints.has_api(prim, "NewtonMimicAPI")
            and joints.joint_kind(prim) == joints.REVOLUTE
            and rel.offset != 0
        ):
            out.append(
                (
                    "MIMIC_HOST_NOT_COUPLED",
                    rel.follower,
                    f"Newton 1.8's add_usd reads {api_label(rel)}'s offset ({math.degrees(-rel.offset):.6g}, degrees for "
                    "a revolute follower) as radians, so there the follower is held 57.3 times as far from its "
                    "leader's line as authored: rewrite it as NewtonMimicAPI (mimic-ext convert STAGE --to newton)",
                )
            )
        leader = stage.GetPrimAtPath(rel.leader) if rel.leader and Sdf.Path.IsValidPathString(rel.leader) else None
        if h.physx_reads_newton_joint and leader:
            attr = leader.GetAttribute(LEADER_CAP)
            if attr and attr.HasAuthoredValue():
                value = attr.Get()
                shown = f"{value:g}" if isinstance(value, (int, float)) else repr(value)
                out.append(
                    (
                        "MIMIC_LEADER_VELOCITY_LIMIT",
                        str(leader.GetPath()),
                        f"{LEADER_CAP} = {shown} on a mimic leader: Isaac Sim 6's PhysX (ovphysx 0.7) reads "
                        "it as a velocity cap that makes the coupled pair diverge (NVIDIA's converter output of the "
                        "Ability hand): keep the cap as physxJoint:maxJointVelocity only, as mimic-ext import "
                        "writes it, or remove it (validate --target newton for a stage only Newton runs)",
                    )
                )
    return out
