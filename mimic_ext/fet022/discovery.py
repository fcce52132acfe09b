"""Which followers a stage holds and which joint must be swept to move each of them.

A follower is checked against its *direct* reference (so a chain C -> B -> A checks C
against B), but only an independent joint can be driven: a follower's position is set
by its relation. So every follower is grouped under the joint at the top of its chain
of references (the *swept* joint), and each swept joint gets its own environment.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from pxr import Sdf, Usd, UsdPhysics

from ..schema import joints
from ..schema.relation import NEWTON, PHYSX, MimicRelation

PHYSX_UNITS = {joints.REVOLUTE: "deg", joints.PRISMATIC: "stage units"}


@dataclass(frozen=True)
class FollowerCase:
    """One relation to check, with the numbers it is judged by (authored USD units)."""

    relation: MimicRelation
    name: str  # metric-safe name, unique on the stage
    reference: str  # direct reference joint
    swept: str  # the joint driven to move it (top of its reference chain)
    follower_kind: str | None
    reference_kind: str | None
    follower_scale: float  # SI per USD unit of the follower
    reference_scale: float  # and of its reference
    gearing: float  # PhysX gearing, or Newton coef1 (signed, as authored)
    offset: float  # PhysX offset, or Newton coef0 (USD units, as authored)

    @property
    def follower(self) -> str:
        return self.relation.follower

    @property
    def abs_gearing(self) -> float:
        """The magnitude the public test compares against (|gearing| or |coef1|, USD units)."""
        return abs(self.gearing)

    @property
    def expected_sign(self) -> int:
        """Sign of d(q_f)/d(q_ref) the authored relation asks for (PhysX: -sign(gearing))."""
        s = -self.gearing if self.relation.schema == PHYSX else self.gearing
        return 0 if s == 0 else (1 if s > 0 else -1)

    @property
    def label(self) -> str:
        """How the relation is named on reports: schema and instance."""
        if self.relation.schema == PHYSX:
            return f"PhysxMimicJointAPI:{self.relation.instance}"
        return "NewtonMimicAPI"


@dataclass(frozen=True)
class Drive:
    """A position drive in SI: authored on the stage, or the temporary test drive."""

    stiffness: float
    damping: float
    max_force: float = math.inf
    source: str = "authored"  # "authored" | "test"


@dataclass(frozen=True)
class SweptJoint:
    """A reference joint that is driven through its range in its own environment."""

    path: str
    kind: str | None
    scale: float  # SI per USD unit
    limits: tuple[float, float] | None  # SI, None when unlimited
    drive: Drive | None  # None: no position drive authored (the plan adds one)
    followers: tuple[str, ...] = ()
    #: the fastest this joint may move (SI/s): its own PhysX velocity cap and each
    #: follower's divided by |gain to this joint| (a cap on either joint acts on both); and
    #: the prim whose cap that is. None when no cap is authored.
    velocity_cap: float | None = None
    velocity_cap_source: str | None = None
    velocity_cap_attr: str | None = None  # the attribute PhysX reads that cap from, on the source

    @property
    def unit(self) -> str:
        return PHYSX_UNITS.get(self.kind or "", "?")


@dataclass
class Discovery:
    """Everything the sweep needs to know about a stage's relations, before any physics."""

    cases: list[FollowerCase] = field(default_factory=list)
    swept: list[SweptJoint] = field(default_factory=list)
    disabled: list[MimicRelation] = field(default_factory=list)
    cycles: list[str] = field(default_factory=list)

    def cases_of(self, swept_path: str) -> list[FollowerCase]:
        """The followers swept by ``swept_path`` (an index built once: a stage of thousands of
        pairs asks once per swept joint)."""
        index = self.__dict__.get("_by_swept")
        if index is None or index[0] != len(self.cases):
            by: dict[str, list[FollowerCase]] = {}
            for c in self.cases:
                by.setdefault(c.swept, []).append(c)
            index = self.__dict__["_by_swept"] = (len(self.cases), by)
        return list(index[1].get(swept_path, ()))


def _authored(rel: MimicRelation) -> tuple[float, float]:
    a = rel.authored or {}
    if rel.schema == NEWTON:
        return float(a.get("newton:mimicCoef1", 1.0)), float(a.get("newton:mimicCoef0", 0.0))
    return float(a.get("gearing", 1.0)), float(a.get("offset", 0.0))


def _prim(stage: Usd.Stage, path: str | None) -> Usd.Prim | None:
    if not path or not Sdf.Path.IsValidPathString(path):
        return None
    prim = stage.GetPrimAtPath(path)
    return prim if prim and prim.IsValid() else None


def authored_drive(prim: Usd.Prim | None, import_defaults: bool = False) -> Drive | None:
    """The joint's authored position drive in SI, or None when it has none.

    A drive counts only with a positive stiffness: a pure damper cannot hold a target.
    USD angular gains are per degree, so they are scaled by 180/pi here. Gains ``mimic-ext
    import`` wrote as Isaac Sim's importer defaults (``customData.mimicExtDefaultGains``: there
    for NVIDIA's FET022 phase, not the robot's servo) count as none, so the sweep keeps its test
    drive there: on Newton they did not move the 2F-85's or the Inspire's references (docs/fet022.md).
    ``import_defaults`` counts them, as Kit does: NVIDIA's phase runs with the asset's drives as
    authored (``simready.backends``).
    """
    if not prim:
        return None
    if not import_defaults and prim.GetCustomDataByKey(joints.DEFAULT_GAINS_KEY):
        return None
    kind = joints.joint_kind(prim)
    if kind not in (joints.REVOLUTE, joints.PRISMATIC):
        return None
    name = "angular" if kind == joints.REVOLUTE else "linear"
    if not prim.HasAPI(UsdPhysics.DriveAPI, name):
        return None
    api = UsdPhysics.DriveAPI(prim, name)
    stiffness = api.GetStiffnessAttr().Get() or 0.0
    damping = api.GetDampingAttr().Get() or 0.0
    max_force = api.GetMaxForceAttr().Get()
    if not (stiffness > 0 and math.isfinite(stiffness)):
        return None
    scale = joints.unit_scale(prim)
    assert scale is not None  # revolute or prismatic: degrees or stage units
    per_unit = 1.0 / scale  # USD gains are per degree or per stage unit
    # maxForce is a force or torque as authored (not per unit); unset means unlimited
    max_force = math.inf if max_force is None or not math.isfinite(max_force) else float(max_force)
    return Drive(
        stiffness=float(stiffness) * per_unit,
        damping=float(damping) * per_unit,
        max_force=float(max_force),
        source="authored",
    )


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text) or "joint"


def _metric_names(rels: list[MimicRelation]) -> list[str]:
    """The follower's prim name, made safe for metric keys and unique on the stage.

    A follower with several relations gets the instance (or schema) appended; followers
    of the same name under different parents get ``_2``, ``_3`` in traversal order.
    """
    names = []
    per_follower: dict[str, int] = {}
    for rel in rels:
        per_follower[rel.follower] = per_follower.get(rel.follower, 0) + 1
    for rel in rels:
        name = _safe(Sdf.Path(rel.follower).name)
        if per_follower[rel.follower] > 1:
            name += "_" + _safe(rel.instance or rel.schema)
        names.append(name)
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return unique


def _top_of_chain(start: str, leader_of: dict[str, str]) -> tuple[str, bool]:
    """Follow references up from ``start``; (top joint, whether a cycle was met)."""
    seen = [start]
    j = start
    while j in leader_of:
        j = leader_of[j]
        if j in seen:
            # A consistent cycle (e.g. a reciprocal pair): drive the joint where it closes,
            # picked by name so that every member agrees.
            loop = seen[seen.index(j) :]
            return min(loop), True
        seen.append(j)
    return j, False


def discover(stage: Usd.Stage, relations: list[MimicRelation], skip: frozenset | set = frozenset()) -> Discovery:
    """A case for every relation, and the swept joints for the enabled ones not in ``skip``.

    ``skip`` holds the keys of relations the validator rejected: they get a case (to be
    reported) but take no part in the chains and are not swept (``swept`` is "").
    """
    found = Discovery()
    active = []
    for rel in relations:
        if not rel.enabled:
            found.disabled.append(rel)
        elif rel.key not in skip:
            active.append(rel)
    leader_of: dict[str, str] = {}
    gain_of: dict[str, float] = {}
    for rel in active:
        if rel.leader and rel.follower not in leader_of:
            leader_of[rel.follower] = rel.leader
            gain_of[rel.follower] = rel.multiplier
    names = _metric_names(relations)
    swept_order: list[str] = []
    followers_of: dict[str, list[str]] = {}
    active_keys = {r.key for r in active}
    for rel, name in zip(relations, names):
        f_prim, l_prim = _prim(stage, rel.follower), _prim(stage, rel.leader)
        f_kind = joints.joint_kind(f_prim) if f_prim else None
        l_kind = joints.joint_kind(l_prim) if l_prim else None
        s_f = (joints.unit_scale(f_prim) if f_prim else None) or 1.0
        s_l = (joints.unit_scale(l_prim, rel.reference_axis) if l_prim else None) or s_f
        if rel.key in active_keys and rel.leader:
            top, cyclic = _top_of_chain(rel.leader, leader_of)
        else:
            top, cyclic = "", False
        if cyclic and top not in found.cycles:
            found.cycles.append(top)
        gearing, offset = _authored(rel)
        if rel.schema == NEWTON and f_kind != l_kind and math.isfinite(rel.multiplier):
            # Newton's coef1 is dimensionless between its joint coordinates (rad, m), so between
            # a revolute and a prismatic joint the harness's USD-unit gearing is the relation's
            gearing = rel.multiplier * s_l / s_f
        found.cases.append(
            FollowerCase(
                relation=rel,
                name=name,
                reference=rel.leader or "",
                swept=top,
                follower_kind=f_kind,
                reference_kind=l_kind,
                follower_scale=s_f,
                reference_scale=s_l,
                gearing=gearing,
                offset=offset,
            )
        )
        if top and top not in followers_of:
            swept_order.append(top)
            followers_of[top] = []
        if top:
            followers_of[top].append(rel.follower)
    for path in swept_order:
        prim = _prim(stage, path)
        kind = joints.joint_kind(prim) if prim else None
        scale = (joints.unit_scale(prim) if prim else None) or 1.0
        cap, source = _velocity_cap(stage, path, followers_of[path], leader_of, gain_of)
        attr = joints.physx_joint_attr(_prim(stage, source), "maxJointVelocity") if source else None
        found.swept.append(
            SweptJoint(
                path=path,
                kind=kind,
                scale=scale,
                limits=joints.limits_si(prim) if prim else None,
                drive=authored_drive(prim),
                followers=tuple(followers_of[path]),
                velocity_cap=cap,
                velocity_cap_source=source,
                velocity_cap_attr=attr,
            )
        )
    return found


def _velocity_cap(
    stage, top: str, followers: list[str], leader_of: dict[str, str], gain_of: dict[str, float]
) -> tuple[float | None, str | None]:
    """The tightest velocity cap on ``top`` from itself and its followers (SI), and whose it is."""
    best: tuple[float | None, str | None] = (None, None)
    for path in [top, *followers]:
        prim = _prim(stage, path)
        cap = joints.max_velocity_si(prim) if prim else None
        gain, joint = 1.0, path
        while joint != top and joint in leader_of:  # compose the chain's gains up to top
            gain *= gain_of[joint]
            joint = leader_of[joint]
        if cap is not None and gain != 0 and (best[0] is None or cap / abs(gain) < best[0]):
            best = (cap / abs(gain), path)
    return best
