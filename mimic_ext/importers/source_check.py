"""Is the stage the robot its source describes? Its mimic relations against the URDF/MJCF file's.

Why: every engine honours the relation authored in the USD and the sweep judges against it, so
an offset 0.5 rad off or a flipped sign authored in the stage passes everywhere. Only the robot
description says what the mechanism is. Both sides are compared as the canonical SI relation
of each follower composed down its chain to the chain's root (our importer writes Newton
relations against the root; a chain in the source is the same mechanism), with the joint kinds
(units) beside them. Stage joints are matched to source joints by the name the importer kept
(``customData`` ``mimicExtSourceName``), else the prim name, else the name made a valid prim
name (what NVIDIA's converters do).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from pxr import Tf, Usd, UsdPhysics

from ..schema import joints, read_relations
from .model import PRISMATIC, REVOLUTE, chain_root
from .usd_writer import SOURCE_NAME_KEY

#: Relative (to max(1, |value|)) tolerance on multiplier and offset. USD keeps gearing, offset
#: and coefficients as float32 (6e-8 relative) and a degree conversion and a chain's composition
#: add a few roundings more: 1e-5 is ~100x that, and 5e4x below the mistakes this is for (an
#: offset 0.5 rad off, a flipped sign, a ratio wrong in its third digit is 1e-3).
TOL = 1e-5
_UNIT = {REVOLUTE: "rad", PRISMATIC: "m"}  # the importers' and the schema's kinds: one vocabulary (joint_types)


@dataclass(frozen=True)
class Side:
    """One side's relation of a follower, composed to its chain's root: q_f = m * q_leader + c."""

    leader: str
    multiplier: float
    offset: float
    units: str  # follower unit / leader unit, e.g. "rad/rad"

    def text(self) -> str:
        return f"{self.multiplier:.6g} x {self.leader} {'+' if self.offset >= 0 else '-'} {abs(self.offset):.6g}"


@dataclass
class Row:
    """A follower of the source or the stage, and what differs (nothing: they agree)."""

    follower: str
    source: Side | None
    stage: Side | None
    problems: list[str] = field(default_factory=list)
    stage_path: str | None = None  # the follower's prim on the stage, where it has one

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class SourceComparison:
    stage: str
    source: Path
    rows: list[Row]

    @property
    def mismatches(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]

    def summary(self) -> str:
        bad = len(self.mismatches)
        verdict = "matches" if not bad else f"{bad} of {len(self.rows)} relation(s) differ from"
        return f"{self.stage} {verdict} its source {self.source} ({len(self.rows)} follower(s), canonical rad/m)"

    def table(self) -> str:
        """One line per follower: the source's relation, the stage's, and what differs."""
        header = ["follower", "source (q_f =)", "units", "stage (q_f =)", "units", "verdict"]
        rows = [
            [
                r.follower,
                r.source.text() if r.source else "(none)",
                r.source.units if r.source else "",
                r.stage.text() if r.stage else "(none)",
                r.stage.units if r.stage else "",
                "ok" if r.ok else "DIFFERS: " + "; ".join(r.problems),
            ]
            for r in self.rows
        ]
        widths = [max(len(x[i]) for x in rows + [header]) for i in range(len(header))]

        def line(cells):
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])

    def record(self) -> dict:
        def side(s: Side | None):
            return (
                None
                if s is None
                else {"leader": s.leader, "multiplier": s.multiplier, "offset": s.offset, "units": s.units}
            )

        return {
            "stage": self.stage,
            "source": str(self.source),
            "match": not self.mismatches,
            "relations": [
                {"follower": r.follower, "source": side(r.source), "stage": side(r.stage), "problems": r.problems}
                for r in self.rows
            ],
        }


@dataclass(frozen=True)
class _Rel:
    follower: str
    leader: str
    multiplier: float
    offset: float


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


def _stage_names(stage: Usd.Stage) -> dict[str, str]:
    """Joint prim path -> the source joint name it stands for."""
    out = {}
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        if prim.IsA(UsdPhysics.Joint):
            out[str(prim.GetPath())] = str(prim.GetCustomDataByKey(SOURCE_NAME_KEY) or prim.GetName())
    return out


def _unit_hint(src: float, got: float) -> str:
    """' (a factor 180/pi: ...)' where the stage's value is the source's in the other angle unit."""
    if src == 0 or got == 0:
        return ""
    ratio = got / src
    for factor, what in ((math.pi / 180.0, "pi/180"), (180.0 / math.pi, "180/pi")):
        if abs(ratio - factor) <= 1e-3 * factor:
            return f" (a factor {what}: written in the other angle unit, degrees for radians or back)"
    if abs(ratio + 1.0) <= 1e-3:
        return " (the sign flipped)"
    return ""


def compare_with_source(stage: Usd.Stage, robot: str | os.PathLike, stage_label: str | None = None) -> SourceComparison:
    """The stage's mimic relations against those of the URDF/MJCF file ``robot``, per follower."""
    from .importing import read_robot

    model = read_robot(robot)
    kinds = {j.name: j.kind for j in model.joints}
    names = _stage_names(stage)
    by_name: dict[str, list[str]] = {}
    for path, name in names.items():
        by_name.setdefault(name, []).append(path)

    def path_of(name: str) -> str | None:
        paths = by_name.get(name) or by_name.get(Tf.MakeValidIdentifier(name)) or []
        return paths[0] if len(paths) == 1 else None

    def stage_kind(name: str) -> str | None:
        path = path_of(name)
        return joints.joint_kind(stage.GetPrimAtPath(path)) if path else None

    def source_name(path: str) -> str:
        name = names.get(path, path.rsplit("/", 1)[-1])
        if name in kinds:
            return name
        matches = [k for k in kinds if Tf.MakeValidIdentifier(k) == name]
        return matches[0] if len(matches) == 1 else name

    src = [_Rel(m.follower, m.leader, m.multiplier, m.offset) for m in model.mimics]
    stg: list[_Rel] = []
    problems_of: dict[str, list[str]] = {}
    for rel in read_relations(stage):
        f = source_name(rel.follower)
        if not rel.enabled:
            problems_of.setdefault(f, []).append("the stage's relation is disabled (newton:mimicEnabled = false)")
            continue
        if rel.invalid or not rel.leader:
            problems_of.setdefault(f, []).append(f"the stage's relation cannot be read: {rel.invalid or 'no leader'}")
            continue
        if any(s.follower == f for s in stg):
            continue  # a second schema on one follower: the validator's business (MIMIC_BOTH_SCHEMAS)
        stg.append(_Rel(f, source_name(rel.leader), rel.multiplier, rel.offset))

    def side(rels: list[_Rel], rel: _Rel, kind_of) -> Side:
        leader, m, c = chain_root(rels, rel)
        units = f"{_UNIT.get(kind_of(rel.follower), '?')}/{_UNIT.get(kind_of(leader), '?')}"
        return Side(leader, m, c, units)

    src_side = {r.follower: side(src, r, kinds.get) for r in src}
    stg_side = {r.follower: side(stg, r, stage_kind) for r in stg}
    rows: list[Row] = []
    used: set[str] = set()
    for follower, s in src_side.items():
        row = Row(follower, s, stg_side.get(follower), list(problems_of.get(follower, [])), path_of(follower))
        rows.append(row)
        if row.stage_path is None:
            count = len(by_name.get(follower) or by_name.get(Tf.MakeValidIdentifier(follower)) or [])
            row.problems.append(f"{count or 'no'} joints named {follower} on the stage")
            continue
        t = row.stage
        if t is None:
            inverse = stg_side.get(s.leader)
            if inverse is not None and inverse.leader == follower:
                used.add(s.leader)
                row.stage = Side(
                    s.leader, 1.0 / inverse.multiplier, -inverse.offset / inverse.multiplier, inverse.units[::-1]
                )
                same = _close(row.stage.multiplier, s.multiplier) and _close(row.stage.offset, s.offset)
                row.problems.append(
                    f"the stage inverts it: {s.leader} follows {follower}"
                    + (" (the same constraint, another joint driven)" if same else ", and the constraint differs")
                )
            elif not row.problems:
                row.problems.append("the stage has no relation on this follower")
            continue
        used.add(follower)
        if t.leader != s.leader:
            row.problems.append(f"leader {t.leader} where the source has {s.leader}")
            continue
        if not _close(t.multiplier, s.multiplier):
            row.problems.append(
                f"multiplier {t.multiplier:.6g} where the source has {s.multiplier:.6g}"
                + _unit_hint(s.multiplier, t.multiplier)
            )
        if not _close(t.offset, s.offset):
            unit = s.units.split("/")[0]
            row.problems.append(
                f"offset {t.offset:.6g} where the source has {s.offset:.6g} {unit} "
                f"(off by {t.offset - s.offset:+.6g} {unit})" + _unit_hint(s.offset, t.offset)
            )
        if t.units != s.units:
            row.problems.append(f"joint kinds {t.units} where the source has {s.units}")
    for follower, t in stg_side.items():
        if follower not in used and follower not in src_side:
            rows.append(Row(follower, None, t, ["the source has no relation on this follower"], path_of(follower)))
    for follower, problems in problems_of.items():
        if follower not in src_side and follower not in stg_side:
            rows.append(Row(follower, None, None, problems, path_of(follower)))
    label = stage_label or stage.GetRootLayer().identifier
    return SourceComparison(label, Path(robot), rows)
