"""Where engines disagree on one asset: which follower, which engines, by how much, and why.

A multi-engine sweep gives each follower one verdict per engine. When two engines differ
(one passes and the other does not, their motion ratios or their offset checks are more than
``AGREEMENT`` apart, or one lets the follower leave its limits and the other holds it there) the
run names the most likely cause from what it recorded, in this order:

* **crash**: the engine's worker process died (the signal is named; ``isolation``);
* **compile refusal**: the engine refused the model it was built (MuJoCo's compiler, say);
* **missing schema / feature**: an engine's verdict is not applicable (its reason);
* **unread schema**: an engine read no relation for the follower (dropped);
* **units read**: the engines read different relations (``read_relation``: multiplier or
  offset), e.g. Newton's reading of a PhysX offset in degrees as radians;
* **legacy relation**: an engine read the relation from a legacy form (Newton's
  ``constraint_mimic`` entries);
* **velocity cap**: a verdict names an authored velocity cap that stopped the swept joint;
* **diverged**: an engine's output was not finite;
* **limits**: "limit enforced by A, not by B": one engine let the follower (or its reference)
  leave its limits, the other held it there;
* **reference blocked**: on one engine the swept joint did not follow its drive (it moved less
  than ``min_excursion_fraction`` of its range, or not at all);
* **soft constraint lag**: the engine holds the relation softly (a MuJoCo joint equality) and
  strays from it further than the other (``relation_max_error``);
* **engine error**: an engine could not sweep it, and its message says why;
* otherwise "not explained by what the run recorded: compare the engines' notes".

An engine whose whole run failed before it judged any follower (a crash) takes part with its
stage's status and reason. Plain data in, plain data out (``FollowerResult``s), so every reporter
shows the same list.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from .limits import LEFT_LIMITS
from .result import ERROR, FAIL, NOT_APPLICABLE, PASS, FollowerResult, SweepResult, finite_or_none

#: Engines agree on a follower when their motion ratios (authored units) and their offset checks
#: (SI) are within this of each other: the issue's bar, 10x tighter than the verdict's 0.1, and
#: 10-100x what hard relations leave on the shared assets (a few 1e-4).
AGREEMENT = 0.01
#: Two read relations are the same within this (float32 in the USD between engines).
READ_SAME = 1e-5

UNITS, CAP, DIVERGED, MISSING, SOFT, UNKNOWN = (
    "units read",
    "velocity cap",
    "diverged",
    "missing schema or feature",
    "soft constraint lag",
    "unexplained",
)
CRASH, COMPILE, UNREAD, LEGACY, LIMITS, BLOCKED, ENGINE_ERROR = (
    "crash",
    "compile refusal",
    "unread schema",
    "legacy relation",
    "limits",
    "reference blocked",
    "engine error",
)


@dataclass
class Disagreement:
    follower: str  # prim path
    name: str
    engines: list[str]  # two engines; or one that disagrees with all the others, then them
    measure: str  # "verdict", "motion ratio" or "offset"
    values: dict[str, Any] = field(default_factory=dict)  # engine -> its value (status or number)
    difference: float = math.nan  # for numbers: |a - b|
    cause: str = UNKNOWN  # one of the kinds above
    explanation: str = ""

    def to_dict(self) -> dict[str, Any]:
        return finite_or_none(asdict(self))

    def text(self) -> str:
        vals = ", ".join(f"{e} {_fmt(v)}" for e, v in self.values.items())
        by = "" if not math.isfinite(self.difference) else f" ({self.difference:.3g} apart)"
        return f"{self.name}: {self.measure} {vals}{by}; likely cause: {self.cause}: {self.explanation}"

    def who(self) -> str:
        """ "a vs b", or "a vs the others (b, c, d)" for one engine against all the others."""
        if len(self.engines) == 2:
            return " vs ".join(self.engines)
        return f"{self.engines[0]} vs the others ({', '.join(self.engines[1:])})"


def _fmt(v) -> str:
    return f"{v:.5g}" if isinstance(v, float) else str(v)


def _measured(f: FollowerResult) -> bool:
    return f.status in (PASS, FAIL) and math.isfinite(f.motion_ratio)


def _read_differs(a: FollowerResult, b: FollowerResult) -> str | None:
    ra, rb = a.read_relation, b.read_relation
    if not ra or not rb:
        return None
    for key, what in (("multiplier", "multiplier"), ("offset", "offset")):
        va, vb = ra.get(key), rb.get(key)
        if va is None or vb is None:
            continue
        if abs(va - vb) > READ_SAME * max(1.0, abs(va), abs(vb)):
            unit = "" if key == "multiplier" else f" {a.max_error_unit}"
            notes = "; ".join(f"{f.engine}: {r['note']}" for f, r in ((a, ra), (b, rb)) if r.get("note"))
            return (
                f"{a.engine} reads {what} {va:.6g}{unit}, {b.engine} {vb:.6g}{unit} (SI) for the authored "
                f"{a.label} relation" + (f" ({notes})" if notes else "")
            )
    return None


def _said(f: FollowerResult, *words: str) -> str | None:
    """``f``'s first message holding every one of ``words``."""
    return next((m for m in f.messages if all(w in m for w in words)), None)


def _note(f: FollowerResult) -> str:
    return str((f.read_relation or {}).get("note") or "")


def _left_limits(f: FollowerResult) -> str | None:
    """``f``'s warning that the engine let the follower or its reference leave its limits."""
    return next((m for m in [*f.warnings, *f.messages] if LEFT_LIMITS in m), None)


def _cause(a: FollowerResult, b: FollowerResult) -> tuple[str, str]:
    for f in (a, b):
        if f.status == ERROR and (m := _said(f, "engine crashed")):
            return CRASH, f"{f.engine}: {m}"
    for f in (a, b):
        if f.status == ERROR and (m := _said(f, "cannot compile")):
            return COMPILE, f"{f.engine}: {m}"
    for f in (a, b):
        if f.status == NOT_APPLICABLE:
            return MISSING, f"{f.engine}: {'; '.join(f.messages)}"
    for f in (a, b):
        if _note(f).startswith("dropped"):
            return UNREAD, f"{f.engine} did not read the {f.label} relation: {_note(f)}"
    read = _read_differs(a, b)
    if read:
        return UNITS, read
    for f in (a, b):
        if _note(f).startswith("legacy relation"):
            return LEGACY, f"{f.engine}: {_note(f)}"
    for f in (a, b):
        for m in f.messages:
            if "caps the swept joint" in m:
                return CAP, f"{f.engine}: {m}"
    for f in (a, b):
        if f.status == ERROR and any("not finite" in m for m in f.messages):
            return DIVERGED, f"{f.engine}: {next(m for m in f.messages if 'not finite' in m)}"
    la, lb = _left_limits(a), _left_limits(b)
    if bool(la) != bool(lb):
        held, free = (b, a) if la else (a, b)
        return LIMITS, f"limit enforced by {held.engine}, not by {free.engine}: {_left_limits(free)}"
    for f in (a, b):
        if m := _said(f, "the swept joint moved only") or _said(f, "did not move during the sweep"):
            return BLOCKED, f"{f.engine}: {m}"
    soft = [f for f in (a, b) if f.read_relation and not f.read_relation.get("hard", True)]
    if soft and all(math.isfinite(f.relation_max_error) for f in (a, b)):
        s = max(soft, key=lambda f: f.relation_max_error)
        other = b if s is a else a
        if s.relation_max_error > other.relation_max_error:
            return SOFT, (
                f"{s.engine} holds the relation softly ({(s.read_relation or {}).get('note') or 'soft'}) and "
                f"strays {s.relation_max_error:.3g} {s.max_error_unit} from it, {other.engine} "
                f"{other.relation_max_error:.3g}"
            )
    for f in (a, b):
        if f.status == ERROR and f.messages:
            return ENGINE_ERROR, f"{f.engine} could not sweep it: {'; '.join(f.messages)}"
    return UNKNOWN, "not explained by what the run recorded: compare the engines' notes"


def follower_disagreements(cells: dict[str, FollowerResult], tolerance: float = AGREEMENT) -> list[Disagreement]:
    """Every pair of engines that disagrees on one follower (engine -> its record)."""
    out = []
    for ea, eb in combinations(list(cells), 2):
        a, b = cells[ea], cells[eb]

        def entry(measure: str, values: dict, difference: float = math.nan, a=a, b=b, ea=ea, eb=eb) -> Disagreement:
            # this pair's records bound now (the defaults), not looked up when called
            cause, why = _cause(a, b)
            return Disagreement(
                follower=a.follower,
                name=a.name,
                engines=[ea, eb],
                measure=measure,
                values=values,
                difference=difference,
                cause=cause,
                explanation=why,
            )

        if a.status != b.status:
            out.append(entry("verdict", {ea: a.status, eb: b.status}))
            continue
        if not (_measured(a) and _measured(b)):
            continue
        dr = abs(a.motion_ratio - b.motion_ratio)
        if dr > tolerance:
            out.append(entry("motion ratio", {ea: a.motion_ratio, eb: b.motion_ratio}, dr))
            continue
        oa, ob = (max(f.offset_error_start, f.offset_error_end) for f in (a, b))
        if math.isfinite(oa) and math.isfinite(ob) and abs(oa - ob) > tolerance:
            out.append(entry("offset", {ea: oa, eb: ob}, abs(oa - ob)))
            continue
        if bool(_left_limits(a)) != bool(_left_limits(b)):
            out.append(entry("limits", {e: "left" if _left_limits(f) else "held" for e, f in ((ea, a), (eb, b))}))
    return out


def _odd_ones_out(pairs: list[Disagreement], engines: list[str]) -> list[Disagreement]:
    """One entry per engine that disagrees with every remaining other (which agree with each other),
    instead of one per pair: the engine in most pairs first, then the rest among the others."""
    pairs, out, left = list(pairs), [], list(engines)
    while pairs and len(left) > 2:
        # the engine in most pairs; among equals the one whose pairs say it cannot represent the relation
        odd = max(
            left,
            key=lambda e: (
                sum(e in d.engines for d in pairs),
                sum(e in d.engines and d.cause == MISSING for d in pairs),
            ),
        )
        mine = [d for d in pairs if odd in d.engines]
        others = [e for e in left if e != odd]
        if {e for d in mine for e in d.engines} - {odd} != set(others) or len(mine) != len(others):
            break
        first = mine[0]
        values = {odd: first.values[odd], **{e: d.values[e] for d in mine for e in d.engines if e != odd}}
        out.append(
            Disagreement(
                follower=first.follower,
                name=first.name,
                engines=[odd] + others,
                measure=first.measure,
                values=values,
                difference=max((d.difference for d in mine), default=math.nan),
                cause=first.cause,
                explanation=first.explanation,
            )
        )
        pairs = [d for d in pairs if odd not in d.engines]
        left = others
    return out + pairs


def _stage_cell(like: FollowerResult, stage: SweepResult, engine: str) -> FollowerResult:
    """A follower record standing for an engine whose run ended before it judged any follower."""
    return FollowerResult(
        follower=like.follower,
        name=like.name,
        reference=like.reference,
        swept=like.swept,
        schema=like.schema,
        label=like.label,
        compliant=like.compliant,
        follower_unit=like.follower_unit,
        reference_unit=like.reference_unit,
        gearing=like.gearing,
        offset=like.offset,
        engine=engine,
        status=stage.status,
        messages=[stage.reason] if stage.reason else [],
    )


def disagreements(per_engine: dict[str, SweepResult], tolerance: float = AGREEMENT) -> list[Disagreement]:
    """Every disagreement on one asset (engine -> that engine's result), followers in run order; an
    engine against all the others that agree is one entry, that engine first in ``engines``."""
    rows: dict[str, dict[str, FollowerResult]] = {}
    for engine, stage in per_engine.items():
        for f in stage.followers:
            rows.setdefault(f"{f.follower}|{f.label}", {})[engine] = f
    for engine, stage in per_engine.items():  # an engine that judged no follower: its stage's verdict
        if stage.followers or stage.status not in (ERROR, NOT_APPLICABLE):
            continue
        for cells in rows.values():
            if engine not in cells and cells:
                cells[engine] = _stage_cell(next(iter(cells.values())), stage, engine)
    return [
        d
        for cells in rows.values()
        if len(cells) > 1
        for d in _odd_ones_out(follower_disagreements(cells, tolerance), list(cells))
    ]


__all__ = ["AGREEMENT", "Disagreement", "disagreements", "follower_disagreements"]
