"""Small helpers every reporter shares: one run from a stage, the run's status, number text,
and the run seen as a conformance matrix (asset x follower x engine)."""

from __future__ import annotations

import math
from pathlib import Path

from ...atomic_write import write_text_atomically
from ..result import ERROR, FAIL, NOT_APPLICABLE, PASS, SKIPPED, TIMEOUT, RunResult, SweepResult


def as_run(result: RunResult | SweepResult) -> RunResult:
    if isinstance(result, RunResult):
        return result
    return RunResult(
        stages=[result],
        config=dict(result.config),
        versions=dict(result.versions),
        wall_seconds=result.timings.get("total_s", 0.0),
    )


def overall_status(run: RunResult) -> str:
    """error > timeout > fail > pass > not applicable > skipped: a run passes when nothing failed and something
    passed."""
    return worst_status(s.status for s in run.stages)


def num(value: float | None, digits: int = 6) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:.{digits}g}"


def ratio_error_text(f, mode: str) -> str:
    """The error the verdict was based on: percent (relative mode) or the absolute difference."""
    if mode == "relative":
        v = f.ratio_error_relative
        return "-" if v is None or not math.isfinite(v) else f"{100 * v:.3g}%"
    return num(f.ratio_error, 3)


def gearing_unit(f) -> str:
    """The unit |gearing| is written in: none for a same-kind pair, e.g. "stage units/deg" otherwise."""
    return "" if f.follower_unit == f.reference_unit else f"{f.follower_unit}/{f.reference_unit}"


def gearing_text(f, digits: int = 6) -> str:
    unit = gearing_unit(f)
    return num(f.abs_gearing, digits) + (f" {unit}" if unit else "")


DIRECTION_WORDS = {"match": "match", "reversed": "REVERSED", "undetermined": "-"}


def direction_text(f) -> str:
    """The same word on every view: match, REVERSED, or - (undetermined)."""
    return DIRECTION_WORDS.get(f.direction, "-")


def read_text(f) -> str:
    """What the engine read for this relation, SI canonical (q_f = m q_ref + c), or "-"."""
    r = f.read_relation
    if not r:
        return "-"
    unit = "m" if f.max_error_unit == "m" else "rad"
    text = f"m {r['multiplier']:.6g}, c {r['offset']:.4g} {unit}" + ("" if r.get("hard", True) else ", soft")
    return text + (f" ({r['note']})" if r.get("note") else "")


def engines_of(run: RunResult) -> list[str]:
    """The engine labels of a run, in the order first met."""
    return list(dict.fromkeys(s.engine for s in run.stages if s.engine)) or [""]


def by_asset(run: RunResult) -> dict[str, dict[str, SweepResult]]:
    """asset -> engine -> that engine's result, assets in run order."""
    out: dict[str, dict[str, SweepResult]] = {}
    for s in run.stages:
        out.setdefault(s.asset, {})[s.engine] = s
    return out


def worst_status(statuses) -> str:
    statuses = set(statuses)
    for status in (ERROR, TIMEOUT, FAIL, PASS, NOT_APPLICABLE):
        if status in statuses:
            return status
    return SKIPPED


def follower_rows(per_engine: dict[str, SweepResult]) -> list[tuple[str, str, dict]]:
    """(follower path, name, engine -> FollowerResult) for every follower any engine reported."""
    rows: dict[str, tuple[str, dict]] = {}
    for engine, stage in per_engine.items():
        for f in stage.followers:
            key = f"{f.follower}|{f.label}"
            rows.setdefault(key, (f.name, {}))[1][engine] = f
    return [(k.split("|")[0], name, cells) for k, (name, cells) in rows.items()]


def short(path: str) -> str:
    return path.rsplit("/", 1)[-1] if path else "-"


def write_text(path: str | Path, text: str) -> Path:
    """Write a report atomically; a folder that does not exist is made."""
    return write_text_atomically(path, text, make_parent=True)
