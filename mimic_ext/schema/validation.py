"""Checks a stage's mimic relations before a simulator silently ignores or rejects them.

PhysX drops a bad mimic relation with at best a log line, so every rule PhysX (or the
solver) enforces is checked here, each finding naming the prim to fix and how.

Rules that need a judgement call:

- ``Finding.path`` is the prim where the fix goes: the follower for anything about the
  relation itself, the reference joint for a reference-only problem (no limits, excluded
  from the articulation, in no articulation), reported once however many followers use it.
- Articulation membership: the bodies of an articulation are the rigid bodies at or under
  a prim with ``ArticulationRootAPI`` (or, for a root on a joint, that joint's bodies) plus
  every body reached from them through joints not excluded from articulations. A joint
  belongs to the articulation of either of its bodies or, failing that, to the
  articulation root its prim lies under. A joint excluded from articulations is reported
  as such and is not also reported as in no articulation.
- Stage-level checks (chains, redundancy, contradictions, cycles) use
  :class:`~mimic_ext.schema.forest.MimicForest` exactly as the solver does, over every
  hard, enabled relation that has no error of its own, added sorted by follower path,
  schema and instance. PhysX and Newton relations share the one forest (the solver and PhysX
  read both), so a PhysX and a Newton relation on one follower are two constraints there:
  ``MIMIC_BOTH_SCHEMAS`` (a warning) when the forest finds them agreeing, ``MIMIC_SCHEMAS_DISAGREE``
  (an error, instead of the cycle or contradiction it makes) when they do not.
  A chain is a relation the forest kept whose reference is the follower of another kept
  relation (compliant relations are soft rows, never composed, so never chains).
- The range check uses the reference's own limits, and only runs for relations without
  errors between revolute/prismatic joints that both have limits. It tolerates an
  overshoot of ``RANGE_RTOL`` (1e-4) of the follower's range plus float32 round-off:
  decimal rounding in source files, not a mechanism that leaves its limits.
- A follower drive fights the coupling when it has stiffness or damping: PhysX's mimic row
  then competes with a spring or a velocity drive (towards 0 for passive damping), and NVIDIA's
  DJ.004 / DJ.006 refuse both. Gains belong on the leader, ``m^2`` times the follower's (what
  the importers write). A gainless drive is fine.
- ``target="simready"`` (NVIDIA's SimReady FET_022 checks) also asks every mimic follower and
  reference joint for ``PhysicsJointStateAPI`` (DJ.002, an essential requirement there).
- A body whose principal moments break the triangle inequality (``A + B >= C``, with float32
  round-off) is a warning naming the body: MuJoCo refuses it at compile time (and Newton's
  MuJoCo solver with it). Inertia components within rounding of zero are zero
  (``mimic_ext.schema.physics_values.INERTIA_ZERO``), not negative.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pxr import Sdf, Usd, UsdPhysics

from . import joints
from .authoring import (
    NEWTON_API,
    NEWTON_REL,
    PHYSX_API,
    has_newton,
    physx_attr_name,
    physx_instances,
    read_joint_relations,
)
from .declared_properties import unread_properties
from .forest import REDUNDANT, MimicConflictError, MimicForest
from .host_checks import host_findings
from .hosts import TARGETS as HOST_TARGETS
from .physics_values import nonfinite_value, triangle_violation
from .relation import PHYSX, PHYSX_INSTANCES, REFERENCE_AXES, MimicRelation
from .schema_choice import HOST_BEHAVIOUR, fix_advice

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)
#: what ``validate(target=...)`` checks for beyond the engines' needs: a host that must couple the
#: relations as authored (``schema.hosts``), or NVIDIA's SimReady FET_022 checks
SIMREADY = "simready"
TARGETS = (None, *HOST_TARGETS, SIMREADY)
_RANK = {ERROR: 0, WARNING: 1, INFO: 2}

#: Range check tolerance, relative: 1e-4 of the follower's range plus float32 round-off.
#: Source files write limits and multipliers with 4-6 significant digits, and that decimal
#: rounding alone makes a follower overshoot its limits by up to ~5e-5 of its range (the
#: Schunk SVH hand: j3 follows 1.01511 x [0, 0.9704] rad within [0, 0.98506], 2.7e-6 rad or
#: 3e-6 of the range; j5 follows [0, 0.9879] within [0, 0.98786], 4e-5 of it). 1e-4 of the
#: range (0.009 deg on a 90-degree joint) is no mechanical difference, while a relation that
#: really leaves its limits misses by far more (a wrong ratio in its 3rd digit: 1e-3).
RANGE_RTOL = 1e-4
#: USD stores limits, gearing and offset as 32-bit floats (~6e-8 relative each, eps/2);
#: four of them meet in one comparison, so 4 eps of the largest magnitude involved.
RANGE_F32 = 4 * float(np.finfo(np.float32).eps)
#: The largest |gear ratio| (canonical, SI) a float32 solver can hold: PhysX and Newton (and
#: mimic_ext's solver by default) keep joint positions in float32, whose spacing at 1 is eps = 2^-23, so
#: at a ratio of 1/eps = 2^23 (8.4e6) one float32 step of a reference near 1 rad (or 1 m) moves
#: the follower by a whole radian (metre): the relation cannot be held to better than that.
#: Real gear trains (harmonic drives, worm gears) stay below 1e4.
MAX_GEAR_RATIO = 1.0 / float(np.finfo(np.float32).eps)

#: What real PhysX does with each instance name, measured (tests/test_physx_mimic_instances.py,
#: docs/conventions.md), where NVIDIA's tier-core 2026.8 rules say otherwise.
INSTANCES_MEASURED = (
    "Measured on ovphysx 0.7.0 (CPU), leader driven through a sine: a prismatic follower under rotX follows "
    "it (travel ratio 1, within 1.1e-7 m), under transX or X it does not move (ratio 0), and a revolute one the "
    "same (rotX within 9.9e-6 rad; transX, X: 0). NVIDIA's DJ.007 accepts transX/Y/Z and X/Y/Z, and its "
    "DJ.004/DJ.006 say PhysX does not enforce a prismatic mimic: both contradict this measurement"
)

CODES: dict[str, tuple[str, str]] = {
    "MIMIC_FOLLOWER_NOT_JOINT": (ERROR, "the prim carrying the mimic API is not a UsdPhysics joint"),
    "MIMIC_FOLLOWER_TYPE": (
        ERROR,
        "the follower is not revolute, prismatic, nor a D6 joint with its linear DOFs locked",
    ),
    "MIMIC_REFERENCE_MISSING": (ERROR, "referenceJoint / newton:mimicJoint has no target or more than one"),
    "MIMIC_REFERENCE_NOT_FOUND": (ERROR, "the reference joint's target prim does not exist"),
    "MIMIC_REFERENCE_NOT_JOINT": (ERROR, "the reference target is not a UsdPhysics joint"),
    "MIMIC_REFERENCE_TYPE": (
        ERROR,
        "the reference is a fixed, spherical, distance or other joint without the referenced DOF",
    ),
    "MIMIC_SELF_REFERENCE": (ERROR, "the follower references itself"),
    "MIMIC_NONFINITE": (
        ERROR,
        "gearing, offset, naturalFrequency, dampingRatio, coef0 or coef1 is not a finite number "
        "(or a mimic attribute is authored with the wrong type)",
    ),
    "MIMIC_UNKNOWN_PROPERTY": (
        ERROR,
        "a property in the relation's namespace that the schema does not declare (a misspelling: no engine reads it)",
    ),
    "MIMIC_HOST_NOT_COUPLED": (
        ERROR,
        "validate --target: the host does not read the relation's schema, or reads it otherwise than authored",
    ),
    "MIMIC_LEADER_VELOCITY_LIMIT": (
        WARNING,
        "newton:velocityLimit on a mimic leader, which Isaac Sim 6's PhysX (ovphysx) reads as a cap that diverges",
    ),
    "MIMIC_ZERO_GEARING": (ERROR, "gearing (or newton:mimicCoef1) is 0, which couples nothing"),
    "MIMIC_EXTREME_GEARING": (ERROR, "a gear ratio of 2^23 (1/eps of float32) or more: no float32 solver holds it"),
    "MIMIC_BODY_MASS_NONFINITE": (
        ERROR,
        ("a body's authored mass, density, inertia, centre of mass or principal axes is NaN or infinite"),
    ),
    "MIMIC_BAD_REFERENCE_AXIS": (ERROR, "referenceJointAxis is not rotX, rotY or rotZ"),
    "MIMIC_INSTANCE_NAME": (
        WARNING,
        "the PhysxMimicJointAPI instance name is not rotX, rotY or rotZ (PhysX ignores it)",
    ),
    "MIMIC_MULTIPLE_INSTANCES": (ERROR, "two or more PhysxMimicJointAPI instances on a 1-DOF joint"),
    "MIMIC_EXCLUDED_FROM_ARTICULATION": (ERROR, "the follower or reference has physics:excludeFromArticulation = true"),
    "MIMIC_NO_ARTICULATION": (ERROR, "the follower or reference belongs to no articulation"),
    "MIMIC_DIFFERENT_ARTICULATIONS": (ERROR, "the follower and reference belong to different articulations"),
    "MIMIC_NO_LIMITS": (WARNING, "a revolute follower or reference has no limits (PhysX rejects it)"),
    "MIMIC_FOLLOWER_DRIVE": (
        WARNING,
        "the follower has a drive with nonzero stiffness or damping, which fights the coupling "
        "(NVIDIA's DJ.004 / DJ.006 refuse it too); put the gains on the leader",
    ),
    "MIMIC_NO_JOINT_STATE": (
        WARNING,
        "(target simready) a mimic follower or reference has no PhysicsJointStateAPI, which NVIDIA's "
        "DJ.002 requires (FET_022_STANDARD)",
    ),
    "MIMIC_INERTIA_TRIANGLE": (
        WARNING,
        "a body's principal moments of inertia break the triangle inequality A + B >= C, which MuJoCo "
        "refuses at compile time",
    ),
    "MIMIC_RANGE_OUTSIDE_LIMITS": (
        WARNING,
        "the reference's range mapped through the relation leaves the follower's limits",
    ),
    "MIMIC_PARTIAL_COMPLIANCE": (
        INFO,
        "only one of naturalFrequency / dampingRatio is positive, so the relation stays hard",
    ),
    "MIMIC_CHAIN": (INFO, "the reference joint is itself a follower (a chain; supported)"),
    "MIMIC_REDUNDANT": (
        WARNING,
        "the relation is implied by others (duplicate, reciprocal, consistent cycle): changes nothing",
    ),
    "MIMIC_CONTRADICTION": (ERROR, "relations that no configuration satisfies (offsets disagree)"),
    "MIMIC_CYCLE_GAIN": (ERROR, "a cycle of relations whose gains do not multiply to 1 (it would lock the joints)"),
    "MIMIC_DISABLED": (INFO, "NewtonMimicAPI with newton:mimicEnabled = false: not simulated"),
    "MIMIC_BOTH_SCHEMAS": (
        WARNING,
        "the follower carries PhysxMimicJointAPI and NewtonMimicAPI saying the same relation: "
        "PhysX reads both and applies two constraints",
    ),
    "MIMIC_SCHEMAS_DISAGREE": (
        ERROR,
        "the follower's PhysxMimicJointAPI and NewtonMimicAPI say different relations, and PhysX applies both",
    ),
}

_BAD_REFERENCE_KINDS = (joints.FIXED, joints.SPHERICAL, joints.DISTANCE, joints.OTHER)


@dataclass(frozen=True)
class Finding:
    """One problem (or note) about one prim; ``message`` says what is wrong and what to fix."""

    severity: str
    code: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity} {self.code} {self.path}: {self.message}"


# ---------------------------------------------------------------- stage facts


class _Articulations:
    """Which articulation (named by its root prim's path) each joint belongs to."""

    def __init__(self, stage: Usd.Stage):
        self._stage = stage
        self.roots: list[str] = []
        self.mass_prims: list[Usd.Prim] = []  # prims with MassAPI (bodies, and colliders that carry mass)
        bodies: list[str] = []
        joint_prims: list[Usd.Prim] = []
        for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
            if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
                self.roots.append(str(prim.GetPath()))
            if prim.HasAPI(UsdPhysics.RigidBodyAPI):
                bodies.append(str(prim.GetPath()))
            if prim.HasAPI(UsdPhysics.MassAPI):
                self.mass_prims.append(prim)
            if joints.joint_kind(prim) is not None:
                joint_prims.append(prim)
        self._body_set = set(bodies)
        adjacency: dict[str, list[str]] = {}
        for prim in joint_prims:
            if _excluded(prim):
                continue
            b0, b1 = (self.body_of(b) for b in joints.joint_bodies(prim))
            if b0 and b1:
                adjacency.setdefault(b0, []).append(b1)
                adjacency.setdefault(b1, []).append(b0)
        self._body_root: dict[str, str] = {}
        under: dict[str, list[str]] = {}  # root -> the bodies at or below it, in stage order
        root_set = set(self.roots)
        for b in bodies:  # (one walk up per body: a scan per root is quadratic)
            p = Sdf.Path(b)
            while p != Sdf.Path.absoluteRootPath and not p.isEmpty:
                if str(p) in root_set:
                    under.setdefault(str(p), []).append(b)
                p = p.GetParentPath()
        for root in sorted(self.roots):
            root_prim = stage.GetPrimAtPath(root)
            if joints.joint_kind(root_prim) is not None:
                seed = [b for b in (self.body_of(b) for b in joints.joint_bodies(root_prim)) if b]
            else:
                seed = under.get(root, [])
            queue = deque(b for b in seed if b not in self._body_root)
            for b in queue:
                self._body_root[b] = root
            while queue:
                b = queue.popleft()
                for other in adjacency.get(b, ()):
                    if other not in self._body_root:
                        self._body_root[other] = root
                        queue.append(other)

    def body_of(self, path: str | None) -> str | None:
        """The rigid body a joint's body target means (the target or its nearest body ancestor)."""
        if not path:
            return None
        p = Sdf.Path(path)
        while p != Sdf.Path.absoluteRootPath and not p.isEmpty:
            if str(p) in self._body_set:
                return str(p)
            p = p.GetParentPath()
        return None

    def of_joint(self, prim: Usd.Prim) -> str | None:
        for body in joints.joint_bodies(prim):
            root = self._body_root.get(self.body_of(body) or "")
            if root:
                return root
        path = prim.GetPath()
        under = [r for r in self.roots if path.HasPrefix(Sdf.Path(r))]
        return max(under, key=len) if under else None


def _excluded(prim: Usd.Prim) -> bool:
    attr = UsdPhysics.Joint(prim).GetExcludeFromArticulationAttr()
    return bool(attr and attr.HasValue() and attr.Get())


def _unit(prim: Usd.Prim) -> str:
    return "deg" if joints.joint_kind(prim) == joints.REVOLUTE else "stage units"


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _label(rel: MimicRelation) -> str:
    return f"{rel.follower} ({PHYSX_API}:{rel.instance})" if rel.schema == PHYSX else f"{rel.follower} ({NEWTON_API})"


def _api_name(rel: MimicRelation) -> str:
    return f"{PHYSX_API}:{rel.instance}" if rel.schema == PHYSX else NEWTON_API


# ---------------------------------------------------------------- the checker


class _Checker:
    def __init__(self, stage: Usd.Stage, articulations: _Articulations | None = None):
        self.stage = stage
        self.findings: set[Finding] = set()
        self.art = articulations or _Articulations(stage)
        self.errored: set[tuple] = set()  # keys of relations with an error of their own

    def add(self, code: str, path: str, message: str, rel: MimicRelation | None = None) -> None:
        severity = CODES[code][0]
        self.findings.add(Finding(severity, code, path, message))
        if rel is not None and severity == ERROR:
            self.errored.add(rel.key)

    # -- per follower prim ------------------------------------------------

    def check_prim(self, prim: Usd.Prim) -> list[MimicRelation]:
        path = str(prim.GetPath())
        rels = read_joint_relations(prim)
        kind = joints.joint_kind(prim)
        if kind is None:
            for rel in rels:
                self.add(
                    "MIMIC_FOLLOWER_NOT_JOINT",
                    path,
                    f"{_api_name(rel)} is applied to a {prim.GetTypeName() or 'typeless'} prim, not a UsdPhysics "
                    "joint: move the API to the follower joint or remove it",
                    rel,
                )
            return rels
        follower_ok = True
        if kind == joints.D6:
            free_linear = [d for d in joints.TRANS_DOFS if d not in joints.d6_locked_dofs(prim)]
            if free_linear:
                follower_ok = False
                for rel in rels:
                    self.add(
                        "MIMIC_FOLLOWER_TYPE",
                        path,
                        f"follower is a D6 joint with free linear DOFs ({', '.join(free_linear)}): lock them "
                        "(LimitAPI with low > high) or use a revolute/prismatic follower",
                        rel,
                    )
        elif kind not in (joints.REVOLUTE, joints.PRISMATIC):
            follower_ok = False
            for rel in rels:
                self.add(
                    "MIMIC_FOLLOWER_TYPE",
                    path,
                    f"follower is a {kind} joint ({prim.GetTypeName()}); a follower must be revolute, "
                    "prismatic or a D6 joint with transX/Y/Z locked: move the relation to such a joint",
                    rel,
                )
        physx = [r for r in rels if r.schema == PHYSX]
        if kind in (joints.REVOLUTE, joints.PRISMATIC) and len(physx) > 1:
            names = ", ".join(str(r.instance) for r in physx)
            for rel in physx:
                self.add(
                    "MIMIC_MULTIPLE_INSTANCES",
                    path,
                    f"{len(physx)} PhysxMimicJointAPI instances ({names}) on a 1-DOF {kind} joint: keep one and "
                    "remove the others (a 1-DOF joint can follow only one reference)",
                    rel,
                )
        for rel in rels:
            self.check_relation(prim, kind, rel, follower_ok)
        return rels

    def check_relation(self, prim: Usd.Prim, kind: str, rel: MimicRelation, follower_ok: bool) -> None:
        path = rel.follower
        raw = rel.authored or {}
        if rel.schema == PHYSX:
            rel_name = physx_attr_name(str(rel.instance), "referenceJoint")
            if rel.instance not in PHYSX_INSTANCES:
                self.add(
                    "MIMIC_INSTANCE_NAME",
                    path,
                    f"instance '{rel.instance}' is not rotX, rotY or rotZ, so PhysX ignores this relation: "
                    f"rename it to PhysxMimicJointAPI:rotX (the instance does not pick the axis of a 1-DOF joint). "
                    f"{INSTANCES_MEASURED}",
                )
            values: dict[str, Any] = {n: raw.get(n) for n in ("gearing", "offset", "naturalFrequency", "dampingRatio")}
            names = {n: physx_attr_name(str(rel.instance), n) for n in values}
            gear_name = names["gearing"]
            if str(raw.get("referenceJointAxis")) not in REFERENCE_AXES:
                self.add(
                    "MIMIC_BAD_REFERENCE_AXIS",
                    path,
                    f"{physx_attr_name(str(rel.instance), 'referenceJointAxis')} is '{raw.get('referenceJointAxis')}': "
                    "set it to rotX, rotY or rotZ (the reference DOF; any of them for a 1-DOF reference)",
                    rel,
                )
        else:
            rel_name = NEWTON_REL
            values = {n: raw.get(n) for n in ("newton:mimicCoef0", "newton:mimicCoef1")}
            names = {n: n for n in values}
            gear_name = "newton:mimicCoef1"
            if not rel.enabled and "newton:mimicEnabled " not in (rel.invalid or ""):
                self.add(
                    "MIMIC_DISABLED",
                    path,
                    "newton:mimicEnabled is false, so this relation is not simulated: set it to true to use it",
                )
        unread = unread_properties(self.stage, rel)
        if unread:  # the sweep rejects the follower for it (fet022.stage_checks), so it is an error here too
            self.add("MIMIC_UNKNOWN_PROPERTY", path, unread, rel)
        if rel.invalid:
            self.add("MIMIC_NONFINITE", path, f"{_api_name(rel)}: {rel.invalid}", rel)
        # a wrongly typed value reads as NaN and is reported above, not again as non-finite
        bad = [
            names[n]
            for n, v in values.items()
            if not (isinstance(v, (int, float)) and math.isfinite(v)) and f"{names[n]} " not in (rel.invalid or "")
        ]
        if bad:
            self.add(
                "MIMIC_NONFINITE",
                path,
                f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not finite: set "
                f"{'it' if len(bad) == 1 else 'them'} to a finite number",
                rel,
            )
        if not bad and not rel.invalid and abs(rel.multiplier) >= MAX_GEAR_RATIO:
            self.add(
                "MIMIC_EXTREME_GEARING",
                path,
                f"{gear_name} = {_fmt(values['gearing'] if 'gearing' in values else values['newton:mimicCoef1'])} "
                f"makes the follower "
                f"move {_fmt(abs(rel.multiplier))} times as far as its reference ({rel.describe()}, rad/m): at "
                f"{_fmt(MAX_GEAR_RATIO)} (1/eps of float32) or more one float32 step of the reference moves the "
                "follower by over a radian or metre, so no float32 solver (PhysX, Newton, mimic_ext) can hold it: "
                "author the real gear ratio (a wrong exponent or unit?)",
                rel,
            )
        gear = values.get("gearing", values.get("newton:mimicCoef1"))
        if isinstance(gear, (int, float)) and gear == 0:
            form = "q_f + gearing*q_ref + offset = 0" if rel.schema == PHYSX else "q_f = coef0 + coef1*q_leader"
            what = "gearing" if rel.schema == PHYSX else "newton:mimicCoef1"
            self.add("MIMIC_ZERO_GEARING", path, f"{what} is 0: set {gear_name} to the gear ratio ({form})", rel)
        if rel.schema == PHYSX and 0 < sum(v > 0 for v in (rel.natural_frequency, rel.damping_ratio)) < 2:
            self.add(
                "MIMIC_PARTIAL_COMPLIANCE",
                path,
                f"only one of naturalFrequency ({_fmt(rel.natural_frequency)}) and dampingRatio "
                f"({_fmt(rel.damping_ratio)}) is positive, so the relation stays hard: set both > 0 for a "
                "compliant coupling, or both to 0",
            )

        leader = self.check_reference(prim, rel, rel_name)
        if kind in (joints.REVOLUTE, joints.PRISMATIC, joints.D6) and follower_ok:
            self.check_follower_drive(prim, kind, rel)
        self.check_articulation(prim, leader, rel)
        if kind == joints.REVOLUTE and joints.limits_si(prim) is None:
            self.add(
                "MIMIC_NO_LIMITS",
                path,
                "revolute follower has no limits and PhysX rejects mimic joints without them: author "
                "physics:lowerLimit and physics:upperLimit (degrees)",
            )

    def check_reference(self, prim: Usd.Prim, rel: MimicRelation, rel_name: str) -> Usd.Prim | None:
        """Reference checks; the reference prim when it is a joint that can take part."""
        path = rel.follower
        targets = list((rel.authored or {}).get("referenceJoint" if rel.schema == PHYSX else NEWTON_REL) or [])
        if len(targets) != 1:
            what = "no target" if not targets else f"{len(targets)} targets ({', '.join(targets)})"
            self.add(
                "MIMIC_REFERENCE_MISSING", path, f"{rel_name} has {what}: point it at exactly one reference joint", rel
            )
            return None
        target = targets[0]
        if target == path:
            self.add(
                "MIMIC_SELF_REFERENCE",
                path,
                f"{rel_name} points at the follower itself: point it at the joint this one should follow",
                rel,
            )
            return None
        leader = self.stage.GetPrimAtPath(target) if Sdf.Path(target).IsPrimPath() else None
        if not leader or not leader.IsValid():
            self.add(
                "MIMIC_REFERENCE_NOT_FOUND",
                path,
                f"{rel_name} points at {target}, which does not exist: fix the path",
                rel,
            )
            return None
        kind = joints.joint_kind(leader)
        if kind is None:
            self.add(
                "MIMIC_REFERENCE_NOT_JOINT",
                path,
                f"{rel_name} points at {target}, a {leader.GetTypeName() or 'typeless'} prim, not a joint: "
                "point it at the reference joint",
                rel,
            )
            return None
        if kind in _BAD_REFERENCE_KINDS:
            self.add(
                "MIMIC_REFERENCE_TYPE",
                path,
                f"the reference {target} is a {kind} joint ({leader.GetTypeName()}), which has no DOF to follow: "
                "reference a revolute, prismatic or D6 joint",
                rel,
            )
            return None
        if kind == joints.D6 and rel.schema == PHYSX and rel.reference_axis in joints.d6_locked_dofs(leader):
            self.add(
                "MIMIC_REFERENCE_TYPE",
                path,
                f"the reference DOF {rel.reference_axis} of D6 joint {target} is locked: set "
                f"{physx_attr_name(str(rel.instance), 'referenceJointAxis')} to a free rotational DOF",
                rel,
            )
            return None
        if kind == joints.REVOLUTE and joints.limits_si(leader) is None:
            self.add(
                "MIMIC_NO_LIMITS",
                target,
                "revolute joint is a mimic reference but has no limits, and PhysX rejects mimic joints "
                "without them: author physics:lowerLimit and physics:upperLimit (degrees)",
            )
        return leader

    def check_follower_drive(self, prim: Usd.Prim, kind: str, rel: MimicRelation) -> None:
        """A drive with gains on the follower fights the coupling.

        The drive's force is ``stiffness * (target - q) + damping * (targetVelocity - qd)``:
        stiffness pulls the follower to the drive's own target, damping to the drive's target
        velocity (0 for a passive damper), each against the relation's row. Through a hard
        relation ``q_f = m q_l + c`` the same spring and damper are ``m^2`` times them on the
        leader (what the importers write); a gainless drive applies no force.
        """
        name = {joints.REVOLUTE: "angular", joints.PRISMATIC: "linear"}.get(kind, rel.instance)
        if not name or not prim.HasAPI(UsdPhysics.DriveAPI, name):
            return
        drive = UsdPhysics.DriveAPI(prim, name)
        k = drive.GetStiffnessAttr().Get() or 0.0
        d = drive.GetDampingAttr().Get() or 0.0
        if k == 0 and d == 0:
            return
        gains = " and ".join(f"{n} {_fmt(v)}" for n, v in (("stiffness", k), ("damping", d)) if v)
        self.add(
            "MIMIC_FOLLOWER_DRIVE",
            rel.follower,
            f"follower has PhysicsDriveAPI:{name} with {gains} (USD units), which PhysX applies against the "
            "mimic constraint (NVIDIA's DJ.004 / DJ.006 refuse it too): set them to 0 and add multiplier^2 "
            f"times them to the leader {rel.leader}'s drive, where the relation carries them",
        )

    def check_joint_state(self, rels: list[MimicRelation]) -> None:
        """(target simready) PhysicsJointStateAPI on every follower and reference joint (DJ.002)."""
        paths = sorted({p for r in rels for p in (r.follower, r.leader) if p})
        for path in paths:
            prim = self.stage.GetPrimAtPath(path)
            kind = joints.joint_kind(prim) if prim else None
            name = {joints.REVOLUTE: "angular", joints.PRISMATIC: "linear"}.get(kind or "")
            if name is None or f"PhysicsJointStateAPI:{name}" in prim.GetAppliedSchemas():
                continue
            self.add(
                "MIMIC_NO_JOINT_STATE",
                path,
                f"mimic joint has no PhysicsJointStateAPI:{name}, which NVIDIA's SimReady DJ.002 requires: apply it "
                f"with state:{name}:physics:position at the pose the bodies are authored in "
                f"({'degrees' if name == 'angular' else 'stage units'}) and velocity 0 (mimic-ext import writes it)",
            )

    def check_articulation(self, prim: Usd.Prim, leader: Usd.Prim | None, rel: MimicRelation) -> None:
        if joints.joint_kind(prim) is None:
            return
        roots = {}
        for role, joint in (("follower", prim), ("reference", leader)):
            if joint is None:
                continue
            jpath = str(joint.GetPath())
            what = f"its {_api_name(rel)} relation" if role == "follower" else "a mimic reference joint"
            if _excluded(joint):
                self.add(
                    "MIMIC_EXCLUDED_FROM_ARTICULATION",
                    jpath,
                    f"physics:excludeFromArticulation is true, but {what} works only inside an articulation: "
                    "set it to false (or remove the relation)",
                    rel,
                )
                continue
            root = self.art.of_joint(joint)
            if root is None:
                self.add(
                    "MIMIC_NO_ARTICULATION",
                    jpath,
                    f"joint is in no articulation, but {what} works only inside one: apply "
                    "PhysicsArticulationRootAPI to the robot's root prim (or connect the joint's bodies to an "
                    "articulated body)",
                    rel,
                )
            roots[role] = root
        f_root, l_root = roots.get("follower"), roots.get("reference")
        if f_root and l_root and f_root != l_root:
            self.add(
                "MIMIC_DIFFERENT_ARTICULATIONS",
                rel.follower,
                f"follower is in the articulation {f_root} but its reference {rel.leader} is in {l_root}: "
                "reference a joint of the same articulation",
                rel,
            )

    # -- bodies -------------------------------------------------------------

    def check_masses(self) -> None:
        """A mass property that is NaN or infinite (an infinite mass or inertia is an immovable
        link no engine can take in an articulation), on the prim that carries it."""
        names = UsdPhysics.MassAPI.GetSchemaAttributeNames(False)
        for prim in self.art.mass_prims:
            bad = [f"{n} = {v}" for n in names if (a := prim.GetAttribute(n)) and (v := nonfinite_value(a)) is not None]
            if bad:
                self.add(
                    "MIMIC_BODY_MASS_NONFINITE",
                    str(prim.GetPath()),
                    f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not finite: author finite mass "
                    "properties (kg, kg m^2; or leave them unauthored for the engine to compute)",
                )
                continue
            moments = UsdPhysics.MassAPI(prim).GetDiagonalInertiaAttr().Get()
            if moments is not None and triangle_violation(tuple(moments)):
                a, b, c = sorted(float(x) for x in moments)
                self.add(
                    "MIMIC_INERTIA_TRIANGLE",
                    str(prim.GetPath()),
                    f"physics:diagonalInertia ({_fmt(a)}, {_fmt(b)}, {_fmt(c)}) breaks the triangle inequality: "
                    f"{_fmt(a)} + {_fmt(b)} < {_fmt(c)}, which no rigid body has and MuJoCo refuses at compile time "
                    "('inertia must satisfy A + B >= C'; Newton's MuJoCo solver with it): fix the source's "
                    "inertia (or compile with MuJoCo's balanceinertia)",
                )

    # -- stage level --------------------------------------------------------

    def check_forest(self, rels: list[MimicRelation]) -> None:
        """Chains, redundancy and conflicts; a rejected relation counts as errored."""
        usable = [r for r in rels if r.key not in self.errored and r.enabled]
        hard = sorted((r for r in usable if not r.compliant), key=lambda r: (r.follower, r.schema, r.instance or ""))
        forest = MimicForest()
        active: list[MimicRelation] = []
        for rel in hard:
            assert rel.leader is not None  # a relation without one is errored (MIMIC_REFERENCE_MISSING)
            try:
                status = forest.add(
                    _label(rel),
                    _node(self.stage, rel.follower, rel.instance),
                    _node(self.stage, rel.leader, rel.reference_axis),
                    rel.multiplier,
                    rel.offset,
                )
            except MimicConflictError as exc:
                twin = _twin(rel, active, exc.relations)
                if twin is not None:
                    self.add("MIMIC_SCHEMAS_DISAGREE", rel.follower, _disagree_message(twin, rel), rel)
                    continue
                code = {
                    MimicConflictError.CONTRADICTION: "MIMIC_CONTRADICTION",
                    MimicConflictError.GAIN_CYCLE: "MIMIC_CYCLE_GAIN",
                    MimicConflictError.SELF: "MIMIC_SELF_REFERENCE",
                    MimicConflictError.ZERO_GAIN: "MIMIC_ZERO_GEARING",
                }[exc.kind]
                fix = (
                    "make the offsets agree or remove one of these relations"
                    if code == "MIMIC_CONTRADICTION"
                    else "fix the gearings or remove one of these relations"
                )
                self.add(code, rel.follower, f"{exc}: {fix}", rel)
                continue
            twin = _twin(rel, active) if status == REDUNDANT else None
            if twin is not None:
                self.add("MIMIC_BOTH_SCHEMAS", rel.follower, _both_message(twin, rel))
                continue
            if status == REDUNDANT:
                self.add(
                    "MIMIC_REDUNDANT",
                    rel.follower,
                    f"the {_api_name(rel)} relation (follow {rel.leader}) is implied by the other relations "
                    "between these joints (a duplicate, reciprocal or consistent cycle) and changes nothing: "
                    "remove it",
                )
            else:
                active.append(rel)
        # chains among the hard relations the forest kept (a compliant row is not composed)
        followers = {_node(self.stage, r.follower, r.instance) for r in active}
        for rel in active:
            assert rel.leader is not None  # as in the loop above
            if _node(self.stage, rel.leader, rel.reference_axis) in followers:
                self.add(
                    "MIMIC_CHAIN",
                    rel.follower,
                    f"follows {rel.leader}, which itself follows another joint: a chain (supported; the "
                    "relations compose). Reference the chain's root directly if that is what you meant",
                )

    def check_ranges(self, rels: list[MimicRelation]) -> None:
        for rel in rels:
            if rel.key in self.errored or not rel.enabled or not rel.leader:
                continue
            follower = self.stage.GetPrimAtPath(rel.follower)
            leader = self.stage.GetPrimAtPath(rel.leader)
            lim_f, lim_l = joints.limits_si(follower), joints.limits_si(leader)
            if lim_f is None or lim_l is None:
                continue
            a, b = (rel.multiplier * q + rel.offset for q in lim_l)
            lo, hi = min(a, b), max(a, b)
            tol = RANGE_RTOL * (lim_f[1] - lim_f[0]) + RANGE_F32 * max(abs(v) for v in (lo, hi, *lim_f, rel.offset))
            if lo < lim_f[0] - tol or hi > lim_f[1] + tol:
                s_f, s_l = joints.unit_scale(follower), joints.unit_scale(leader)
                assert s_f is not None and s_l is not None  # both have limits: revolute or prismatic
                uf, ul = _unit(follower), _unit(leader)
                self.add(
                    "MIMIC_RANGE_OUTSIDE_LIMITS",
                    rel.follower,
                    f"the reference {rel.leader} range [{_fmt(lim_l[0] / s_l)}, {_fmt(lim_l[1] / s_l)}] {ul} maps "
                    f"through {rel.describe()} (rad/m) to [{_fmt(lo / s_f)}, {_fmt(hi / s_f)}] {uf}, outside the "
                    f"follower's limits [{_fmt(lim_f[0] / s_f)}, {_fmt(lim_f[1] / s_f)}] {uf}: widen the "
                    "follower's limits or narrow the reference's",
                )


def _node(stage: Usd.Stage, path: str, dof: str | None) -> str:
    """Forest node of a joint DOF: the path for a 1-DOF joint, path:dof for a D6 joint."""
    prim = stage.GetPrimAtPath(path)
    if joints.joint_kind(prim) == joints.D6 and dof:
        return f"{path}:{dof}"
    return path


def _mimic_prims(stage: Usd.Stage) -> Iterable[Usd.Prim]:
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        if has_newton(prim) or physx_instances(prim):
            yield prim


def validate(stage: Usd.Stage, target: str | None = None, body_facts: dict | None = None) -> list[Finding]:
    """Every finding about the stage's mimic relations: errors first, then by prim path.

    ``target``: None (what PhysX, Newton and mimic_ext need, and what the default host, Isaac
    Sim 6 / ovphysx, would do wrong); a host of ``schema.hosts.TARGETS`` (also what that host would
    not couple); or ``"simready"`` (also what NVIDIA's SimReady FET_022 checks ask of mimic joints:
    ``MIMIC_NO_JOINT_STATE``).

    ``body_facts``: a dict kept between the validations before and after an edit that changes
    only mimic relations (``mimic-ext set``/``convert``/``remove``): the articulations and
    the mass findings are computed on the first call and reused on the second (on 56,000
    joints they were a third of each validation)."""
    if target not in TARGETS:
        raise ValueError(f"unknown validation target {target!r} (use one of {', '.join(map(str, TARGETS))})")
    facts = {} if body_facts is None else body_facts
    checker = _Checker(stage, facts.get("articulations"))
    facts["articulations"] = checker.art
    rels: list[MimicRelation] = []
    for prim in _mimic_prims(stage):
        rels.extend(checker.check_prim(prim))
    for code, path, message in host_findings(stage, rels, None if target == SIMREADY else target):
        checker.add(code, path, message)
    checker.check_forest(rels)
    checker.check_ranges(rels)
    if "masses" not in facts:
        before = set(checker.findings)
        checker.check_masses()
        facts["masses"] = checker.findings - before
    checker.findings |= facts["masses"]
    if target == SIMREADY:
        checker.check_joint_state(rels)
    return sorted(checker.findings, key=lambda f: (_RANK[f.severity], f.path, f.code, f.message))


__all__ = ["CODES", "ERROR", "INFO", "SEVERITIES", "SIMREADY", "TARGETS", "WARNING", "Finding", "validate"]


def _twin(rel: MimicRelation, kept: list[MimicRelation], involved: list | None = None) -> MimicRelation | None:
    """The relation of the other schema on ``rel``'s follower that the forest kept (and, for a
    conflict, that takes part in it), or None. The leaders may differ: the importer's Newton
    relations name a chain's root with the composed coefficients where PhysX keeps the chain."""
    for k in kept:
        if k.follower == rel.follower and k.schema != rel.schema and (involved is None or _label(k) in involved):
            return k
    return None


def _pair_text(a: MimicRelation, b: MimicRelation) -> str:
    return (
        f"{_api_name(a)} (follow {a.leader}: {a.describe()}) and {_api_name(b)} (follow {b.leader}: "
        f"{b.describe()}) (rad/m)"
    )


def _both_message(a: MimicRelation, b: MimicRelation) -> str:
    return (
        f"{_pair_text(a, b)} say the same relation, but {HOST_BEHAVIOUR}: two constraints on one joint. Keep one: "
        + fix_advice(
            "mimic-ext convert STAGE --to newton --duplicates-only (or --to physx for PhysX builds that read only "
            "PhysxMimicJointAPI)",
            "RemoveMimicDuplicate",
            ' (or keep="physx" for PhysX builds that read only PhysxMimicJointAPI)',
            prim_path=a.follower,
            keep="newton",
        )
    )


def _disagree_message(a: MimicRelation, b: MimicRelation) -> str:
    return (
        f"{_pair_text(a, b)} disagree, and {HOST_BEHAVIOUR}: where gearings differ it locks both joints, "
        "where offsets differ one of them is violated. Keep the right one: "
        + fix_advice(
            f"mimic-ext remove STAGE {b.follower} --schema {b.schema} (or --schema {a.schema})",
            "RemoveMimicJoint",
            f' (or schema="{a.schema}")',
            prim_path=b.follower,
            schema=b.schema,
        )
    )
