"""FET022 "mimic_joint" on one stage: discover, validate, plan, simulate, judge.

Works on an open ``Usd.Stage`` (e.g. Kit's) or a file path. The authored stage is never
edited: the engine is handed the relations to simulate (the validator's rejects left
out), and the temporary test drive lives in the solver model only. An engine that must
read relations from the stage hides rejects with ``engine.stage_without`` (a private
session layer).
"""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

import mimic_ext.schema  # noqa: F401  (registers the mimic schemas before any stage is read)

from .. import __version__
from ..errors import MimicInputError
from ..schema import joints, read_relations
from ..schema.relation import MimicRelation
from . import limits
from .analysis import judge
from .bbox import BoxCheck, body_radii
from .config import SweepConfig, as_config
from .discovery import PHYSX_UNITS, Discovery, FollowerCase, discover
from .engines import EngineNotApplicable, SweepEngine, Trace, get_engine
from .harness import sign_rule_note
from .identity import NO_FOLLOWERS
from .plan import SweepPlan, make_plan
from .result import ERROR, FAIL, NOT_APPLICABLE, PASS, SKIPPED, FollowerResult, ReferenceResult, SweepResult
from .stage_checks import (
    ignored_by_physx,
    massless_stage,
    nonfinite_physics,
    reversed_limits,
    why_not_simulated,
)


def _no_simulation(result: SweepResult, status: str, reason: str) -> None:
    """The stage was not simulated: its status and reason, and every follower that had passed
    the checks so far takes them too."""
    result.status, result.reason = status, reason
    for rec in result.followers:
        if rec.status == PASS:
            rec.status = status
            rec.messages.append(reason)


def versions() -> dict[str, str]:
    from pxr import Usd

    return {
        "mimic_ext": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "usd": ".".join(str(v) for v in Usd.GetVersion()),
        "platform": platform.platform(),
    }


def _open(stage_or_path):
    """(stage, asset name, composition warning or None, seconds spent opening)."""
    if isinstance(stage_or_path, (str, os.PathLike)):
        from ..importers.opening import open_stage_or_robot  # a URDF/MJCF file is imported in memory

        t0 = time.perf_counter()
        opened = open_stage_or_robot(stage_or_path)
        return opened.stage, str(opened.path), opened.composition_summary(), time.perf_counter() - t0
    stage = stage_or_path
    if stage is None or not hasattr(stage, "GetRootLayer"):
        raise MimicInputError(f"run() needs a Usd.Stage or a USD file path, got {type(stage_or_path).__name__}")
    layer = stage.GetRootLayer()
    return stage, layer.realPath or layer.identifier, None, 0.0


class _Findings:
    """The validator's findings, by the prim they are about."""

    def __init__(self, stage):
        self.note = None
        try:
            from ..schema.validation import validate
        except ImportError as exc:  # a checkout without the validator still sweeps
            self.note = f"relations not validated: mimic_ext.schema.validation unavailable ({exc})"
            findings = []
        else:
            findings = list(validate(stage))
        self.by_path: dict[str, list[Any]] = {}
        for f in findings:
            self.by_path.setdefault(str(getattr(f, "path", "") or ""), []).append(f)

    def rejection(self, rel: MimicRelation) -> list[str]:
        """Error findings on the follower, then on its reference (each message once)."""
        msgs, seen = [], set()
        for path in (rel.follower, rel.leader or ""):
            for f in self.by_path.get(path, []) if path else []:
                if f.severity == "error" and f.message not in seen:
                    seen.add(f.message)
                    where = "" if path == rel.follower else f" (reference {rel.leader})"
                    msgs.append(f"{f.code}{where}: {f.message}")
        return msgs

    def warnings_on(self, path: str) -> list[str]:
        return [f"validator {f.code}: {f.message}" for f in self.by_path.get(path, []) if f.severity == "warning"]

    def stray_errors(self, relations: list[MimicRelation]) -> list[str]:
        """Errors on prims that are neither a follower nor a reference (reported on the stage)."""
        known = {r.follower for r in relations} | {r.leader for r in relations if r.leader}
        return [
            f"validator {f.code} at {path or 'stage'}: {f.message}"
            for path, items in self.by_path.items()
            if path not in known
            for f in items
            if f.severity == "error"
        ]


def _record(case: FollowerCase) -> FollowerResult:
    rel = case.relation
    unit = lambda kind: PHYSX_UNITS.get(kind or "", "?")  # noqa: E731
    return FollowerResult(
        follower=case.follower,
        name=case.name,
        reference=case.reference,
        swept=case.swept,
        schema=rel.schema,
        label=case.label,
        compliant=rel.compliant,
        follower_unit=unit(case.follower_kind),
        reference_unit=unit(case.reference_kind),
        gearing=case.gearing,
        offset=case.offset,
        max_error_unit="m" if case.follower_kind == joints.PRISMATIC else "rad",
    )


def _records(found: Discovery, rejected: dict[tuple, list[str]], findings: _Findings) -> dict[tuple, FollowerResult]:
    """One record per relation, in authored order; those that will not be swept already judged."""
    records = {}
    for case in found.cases:
        rec = _record(case)
        if case.relation.key in rejected:
            rec.status = FAIL
            rec.messages.extend(rejected[case.relation.key])
        elif not case.relation.enabled:
            rec.status = SKIPPED
            rec.messages.append("relation disabled (newton:mimicEnabled = false): not checked")
        elif not case.swept:
            rec.status = ERROR
            rec.messages.append(
                "the relation names no reference joint (physxMimicJoint:<axis>:referenceJoint "
                "or newton:mimicJoint needs exactly one target)"
            )
        rec.warnings.extend(findings.warnings_on(case.follower))
        records[case.relation.key] = rec
    return records


def _velocity_cap_reason(pj, cfg: SweepConfig) -> str | None:
    """Why the swept joint cannot cover its range in time, when an authored velocity cap says so."""
    cap, source = pj.joint.velocity_cap, pj.joint.velocity_cap_source
    rise = cfg.sweep_seconds / 2.0  # lo -> hi takes half the sweep
    if cap is None or cap * rise >= pj.excursion:
        return None
    si = "m" if pj.joint.kind == joints.PRISMATIC else "rad"
    return (
        f"{pj.joint.velocity_cap_attr} on {source} caps the swept joint at {cap:.4g} {si}/s, so it can "
        f"cover at most {cap * rise:.4g} {si} in the sweep's {rise:g} s rise: raise that velocity limit "
        f"(authored in USD units per second: deg/s for a revolute joint) or lengthen sweep_seconds"
    )


def _first_nonfinite(arrays: dict[str, np.ndarray], env: int) -> tuple[str, int] | None:
    """(path, sample) of the first non-finite value in environment ``env``, or None."""
    for path, a in arrays.items():
        bad = ~np.isfinite(np.asarray(a[env], float))
        if bad.any():
            idx = np.argwhere(bad)[0]
            return path, int(idx[0])
    return None


def _read_relations(trace: Trace) -> dict:
    """(follower, leader) -> the relation as the engine read it (indexed once per trace)."""
    cached = trace._read_index
    if cached is None or cached[0] is not trace.relations:
        cached = (trace.relations, {(r.follower, r.leader): r for r in (trace.relations or [])})
        trace._read_index = cached
    return cached[1]


def _first_nonfinite_body(body_positions, env: int) -> tuple[str, int] | None:
    """As ``_first_nonfinite`` over the body positions (an engine's own answer where it has one)."""
    own = getattr(body_positions, "first_nonfinite", None)
    return own(env) if own is not None else _first_nonfinite(body_positions, env)


def _limit_findings(
    case: FollowerCase, pj, q_ref, q_f, cfg: SweepConfig, engine: str, times, stage
) -> tuple[str | None, list[str]]:
    """(the stage's relation asking for positions past the follower's limits over the planned sweep,
    the same on every engine: a failure; the follower or reference leaving its limits on this engine:
    warnings, which the disagreement section reads as "limit enforced by A, not by B")."""
    f_prim, r_prim = stage.GetPrimAtPath(case.follower), stage.GetPrimAtPath(case.reference)
    f_limits = joints.limits_si(f_prim) if f_prim else None
    r_limits = pj.joint.limits if case.reference == pj.path else (joints.limits_si(r_prim) if r_prim else None)
    past = None
    if case.reference == pj.path:
        rel = case.relation
        past = limits.relation_past_limits(rel.multiplier, rel.offset, pj.lo, pj.hi, f_limits, case.follower_kind, cfg)
    left = [
        why
        for role, path, kind, q, lim in (
            ("follower", case.follower, case.follower_kind, q_f, f_limits),
            ("reference", case.reference, case.reference_kind, q_ref, r_limits),
        )
        if (why := limits.left_limits(role, path, kind, q, lim, cfg, engine, times))
    ]
    return past, left


def _judge_env(
    env: int,
    plan: SweepPlan,
    trace: Trace,
    found: Discovery,
    records: dict,
    cfg: SweepConfig,
    result: SweepResult,
    stage,
    boxes: BoxCheck,
) -> None:
    """Judge every follower moved by the joint swept in environment ``env``."""
    pj = plan.joints[env]
    q_top = trace.positions[pj.path][env]
    finite = np.isfinite(q_top)
    excursion = float(np.max(np.abs(q_top[finite] - q_top[0]))) if finite.all() else math.nan
    result.references.append(
        ReferenceResult(
            path=pj.path,
            kind=pj.joint.kind,
            unit=pj.joint.unit,
            lo=pj.lo / pj.joint.scale,
            hi=pj.hi / pj.joint.scale,
            range_source=pj.range_source,
            drive_source=pj.drive.source,
            stiffness=pj.drive.stiffness,
            damping=pj.drive.damping,
            excursion=excursion / pj.joint.scale,
            followers=list(pj.joint.followers),
            limits=None if pj.joint.limits is None else [v / pj.joint.scale for v in pj.joint.limits],
        )
    )
    times = plan.sample_times.tolist()
    watched = {
        p: trace.positions[p]
        for c in found.cases_of(pj.path)
        for p in (c.follower, c.reference, pj.path)
        if p in trace.positions
    }
    # body positions are read only where geometry is bounded
    bad = _first_nonfinite(watched, env) or (
        _first_nonfinite_body(trace.body_positions, env) if boxes.bounded else None
    )
    boom = None if bad else boxes.explosion(env)
    read = _read_relations(trace)
    for case in found.cases_of(pj.path):
        rec = records[case.relation.key]
        rr = read.get((case.follower, case.reference))
        if rr is not None:
            rec.read_relation = {
                "follower": rr.follower,
                "leader": rr.leader,
                "multiplier": rr.multiplier,
                "offset": rr.offset,
                "hard": rr.hard,
                "note": rr.note,
            }
        why_na = trace.not_applicable.get(case.follower)
        if why_na is None and rr is not None and case.relation.compliant and rr.hard:
            why_na = (
                f"the {result.engine} engine simulates this compliant relation (naturalFrequency, dampingRatio) "
                f"as a hard one: it cannot represent a compliant mimic joint, so its motion says nothing "
                f"about the asset's"
            )
        if why_na:
            rec.status = NOT_APPLICABLE
            rec.messages.append(f"not applicable: {why_na}")
            continue
        missing = [p for p in (case.follower, case.reference) if p in trace.missing]
        if missing:
            rec.status = ERROR
            rec.messages.extend(f"{p}: {why_not_simulated(stage, p) or trace.missing[p]}" for p in missing)
            continue
        if bad:
            path, k = bad
            rec.status = ERROR
            rec.messages.append(
                f"the {result.engine} engine's output is not finite: {path} at sample {k} (t = {times[k]:.4g} s "
                f"into the sweep of {pj.path}); the simulation diverged, so nothing can be measured (look for "
                f"zero or extreme masses, inertias or gains on the stage)"
            )
            continue
        q_ref, q_f = trace.positions[case.reference][env], trace.positions[case.follower][env]
        m = judge(
            case,
            q_ref,
            q_f,
            cfg,
            reference_excursion_si=excursion,
            planned_excursion_si=pj.excursion,
            blocked_because=_velocity_cap_reason(pj, cfg),
        )
        rec.status = m.status
        rec.messages.extend(m.messages)
        rec.warnings.extend(m.warnings)
        rec.harness = dict(vars(m.harness))
        rec.motion_ratio = m.harness.motion_ratio
        rec.ratio_measure = cfg.ratio_measure
        for name in (
            "measured_ratio",
            "ratio_error",
            "ratio_error_relative",
            "direction",
            "rest_offset",
            "samples_used",
            "reference_excursion",
            "offset_error_start",
            "offset_error_end",
        ):
            setattr(rec, name, getattr(m, name))
        rec.relation_max_error, rec.rest_offset_error = m.max_error_si, m.rest_offset_error_si
        past, left = _limit_findings(case, pj, q_ref, q_f, cfg, result.engine, times, stage)
        if past:  # the stage's contradiction: the same failure on every engine
            rec.status = FAIL
            rec.messages.append(past)
        rec.warnings.extend(left)  # this engine's limit enforcement, not the asset's relation
        note = sign_rule_note(case.relation.schema, case.gearing, m.harness.dir_matches_gear, m.direction)
        if note:
            rec.notes.append(note)
        if boom is not None:
            rec.bbox_volume_ratio = boom.ratio
            if boom.sample is not None:
                rec.warnings.append(
                    f"bounding box exploded during the sweep of {pj.path}: its volume reached "
                    f"{boom.ratio:.3g} times the start volume (limit bbox_explode_ratio {cfg.bbox_explode_ratio:g}), "
                    f"first at t = {times[trace.body_samples[boom.sample]]:.4g} s; the coupling is unstable: "
                    f"lower naturalFrequency or raise dampingRatio on {case.label}, or check the gearing"
                )
            elif boom.why_not:
                rec.notes.append(f"bounding-box explosion check not run: {boom.why_not}")
        rec.sample_t = times
        rec.reference_start, rec.follower_start = q_ref[0] / case.reference_scale, q_f[0] / case.follower_scale
        rec.sample_reference = ((q_ref - q_ref[0]) / case.reference_scale).tolist()
        rec.sample_follower = ((q_f - q_f[0]) / case.follower_scale).tolist()


def run(
    stage,
    config: SweepConfig | Mapping[str, Any] | str | Path | None = None,
    engine: str | SweepEngine = "warp",
    label: str | None = None,
) -> SweepResult:
    """Run FET022 mimic_joint on ``stage`` (a ``Usd.Stage`` or a USD file path).

    ``config``: a ``SweepConfig``, a mapping of overrides, a YAML path, or None for the
    defaults. ``engine``: a registered name (``"warp"``, ``"physx"``, ``"warp:cuda:0"``) or
    an engine instance; ``label`` names its column in multi-engine reports (default: the
    name given). Bad input (unreadable file, bad config, unknown engine) raises
    ``MimicInputError``; a stage the physics cannot take comes back with status "error".
    """
    t_start = time.perf_counter()
    cfg = as_config(config)
    be = get_engine(engine)
    label = label or (engine if isinstance(engine, str) else be.name)
    stage, asset, composition, t_open = _open(stage)
    result = SweepResult(
        asset=asset,
        config=cfg.to_dict(),
        engine=label,
        versions={**versions(), **be.versions()},
        timings={"open_s": t_open},
    )
    if composition:
        result.warnings.append(composition)

    def done() -> SweepResult:
        for rec in result.followers:
            rec.engine = label
        result.timings["total_s"] = time.perf_counter() - t_start
        return result

    t0 = time.perf_counter()
    relations = read_relations(stage)
    t_relations = time.perf_counter() - t0
    if not relations:
        result.status, result.reason = SKIPPED, NO_FOLLOWERS
        return done()

    t0 = time.perf_counter()
    findings = _Findings(stage)
    result.timings["validate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    result.warnings.extend(([findings.note] if findings.note else []) + findings.stray_errors(relations))
    rejected = {
        r.key: [f"rejected by the validator: {m}" for m in msgs] for r in relations if (msgs := findings.rejection(r))
    }
    # (a property the schema does not declare is the validator's MIMIC_UNKNOWN_PROPERTY, an error: in
    # ``rejected`` already; an instance PhysX ignores is only its warning, so the sweep rejects it here)
    for r in relations:
        why = ignored_by_physx(r)
        if why and r.enabled:
            rejected.setdefault(r.key, []).append(why)
    found = discover(stage, relations, skip=set(rejected))
    records = _records(found, rejected, findings)
    result.followers = list(records.values())
    result.warnings.extend(f"the references of {top} form a cycle: swept at {top}" for top in found.cycles)

    broken = nonfinite_physics(stage)
    massless = None if broken else massless_stage(stage)
    result.timings["checks_s"] = t_relations + time.perf_counter() - t0
    if broken or massless:
        result.status = ERROR
        result.reason = (
            f"cannot simulate {asset}: {broken[0]}"
            + (f" (+{len(broken) - 1} more non-finite value(s))" if len(broken) > 1 else "")
            if broken
            else f"cannot judge {asset}: {massless}"
        )
        for rec in result.followers:
            if rec.status == PASS:
                rec.status = ERROR
                rec.messages.append(result.reason)
        return done()

    t0 = time.perf_counter()
    sweepable = []
    for s in found.swept:
        why = (
            None
            if s.kind in be.supported_kinds
            else (
                f"not applicable: swept joint {s.path} is a {s.kind or 'missing'} joint: the {be.name} engine can only "
                f"drive {' or '.join(be.supported_kinds)} joints"
            )
        )
        status = NOT_APPLICABLE if s.kind else ERROR
        if why is None and (flipped := reversed_limits(stage, s.path)):
            why, status = flipped, FAIL
        if why is None:
            sweepable.append(s)
            continue
        for c in found.cases_of(s.path):
            records[c.relation.key].status = status
            records[c.relation.key].messages.append(why)
    if sweepable:
        plan = make_plan(sweepable, cfg)
        result.num_envs = plan.num_envs
        watch = sorted(
            {p for sj in sweepable for c in found.cases_of(sj.path) for p in (c.follower, c.reference, c.swept)}
        )
        simulated = [r for r in relations if r.enabled and r.key not in rejected]
        result.timings["checks_s"] += time.perf_counter() - t0
        try:
            trace = be.simulate(stage, plan, watch, simulated, fix_base=cfg.fix_base)
        except EngineNotApplicable as exc:
            _no_simulation(result, NOT_APPLICABLE, f"not applicable on {label}: {exc}")
            if any(rec.status == FAIL for rec in result.followers):  # a validator reject still fails
                result.status = FAIL
            return done()
        except MimicInputError as exc:
            _no_simulation(result, ERROR, f"cannot simulate {asset}: {exc}")
            return done()
        result.timings.update({k: v for k, v in trace.timings.items() if k.endswith("_s")})
        result.warnings.extend(trace.notes)
        t0 = time.perf_counter()
        radii = body_radii(stage, trace.body_positions) if trace.body_positions else {}
        boxes = BoxCheck(trace.body_positions, radii, cfg.bbox_explode_ratio)
        for env in range(plan.num_envs):
            _judge_env(env, plan, trace, found, records, cfg, result, stage, boxes)
        result.timings["judge_s"] = time.perf_counter() - t0
    result.settle_status()
    return done()


__all__ = ["run", "versions"]
