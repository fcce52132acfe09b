"""The console view: one table per stage (a conformance matrix when several engines ran),
then a summary line across stages."""

from __future__ import annotations

from ..result import ERROR, NOT_APPLICABLE, SKIPPED, TIMEOUT, RunResult, SweepResult
from .common import (
    as_run,
    by_asset,
    direction_text,
    engines_of,
    follower_rows,
    gearing_text,
    num,
    overall_status,
    ratio_error_text,
    read_text,
    short,
    worst_status,
)
from .headline import findings_line, headlines
from .sign_rule import SIGN_NOTE, sign_rule_note

HEADER = ["follower", "reference", "|gearing|", "motion ratio", "fit slope", "error", "direction", "status"]


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _findings(stage: SweepResult, tag: str = "", said: frozenset[str] = frozenset()) -> list[str]:
    """Failure messages and warnings per follower, other notes, stage notes (the sign-rule note
    is the report's, once: ``sign_rule_note``; ``said``: stage notes said once for the run,
    ``_engine_notes``)."""
    lines = []
    for f in stage.followers:
        for msg in f.messages:
            lines.append(f"  {f.status}{tag}: {f.name}: {msg}")
        for msg in f.warnings:
            lines.append(f"  warning{tag}: {f.name}: {msg}")
    for f in stage.followers:
        for msg in f.notes:
            if not msg.startswith(SIGN_NOTE):
                lines.append(f"  note{tag}: {f.name}: {msg}")
    for msg in dict.fromkeys(stage.warnings):
        if msg not in said:
            lines.append(f"  note{tag}: {msg}")
    return lines


def _engine_notes(run: RunResult) -> dict[str, tuple[int, frozenset[str]]]:
    """Per engine, the stage notes it left on every stage it left any on, when that is two or more
    stages: facts about the engine in this run, not about a stage (MuJoCo's solref and integrator,
    the in-memory flattening), said once after the stages instead of once per stage. Returns
    engine -> (stages, notes)."""
    per_engine: dict[str, list[set[str]]] = {}
    for st in run.stages:
        if st.warnings:
            per_engine.setdefault(st.engine, []).append(set(st.warnings))
    out = {}
    for engine, notes in per_engine.items():
        common = set.intersection(*notes) if len(notes) > 1 else set()
        if common:
            out[engine] = (len(notes), frozenset(common))
    return out


def _engine_note_lines(run: RunResult, said: dict[str, tuple[int, frozenset[str]]], tagged: bool) -> list[str]:
    """The notes ``_engine_notes`` found, once each, naming the engines (in the run's order) that
    left it on each of the same number of stages."""
    shared: dict[tuple[str, int], list[str]] = {}
    for st in run.stages:  # the notes in the order the stages said them
        count, notes = said.get(st.engine, (0, frozenset()))
        for msg in dict.fromkeys(st.warnings):
            if msg in notes and st.engine not in shared.setdefault((msg, count), []):
                shared[(msg, count)].append(st.engine)
    order = engines_of(run)
    return [
        f"note{' [' + ', '.join(sorted(es, key=order.index)) + ']' if tagged else ''} (each of {count} stages): {msg}"
        for (msg, count), es in shared.items()
    ]


def _stage_lines(stage: SweepResult, mode: str, said: frozenset[str] = frozenset()) -> list[str]:
    head = f"{stage.asset}: {stage.status.upper()}"
    if stage.status in (SKIPPED, ERROR, NOT_APPLICABLE, TIMEOUT) and stage.reason:
        head += f" ({stage.reason})"
    lines = [head]
    if stage.followers:
        rows = [
            [
                f.name,
                short(f.reference),
                gearing_text(f),
                num(f.motion_ratio, 6),
                num(f.measured_ratio, 6),
                ratio_error_text(f, mode),
                direction_text(f),
                f.status.upper(),
            ]
            for f in stage.followers
        ]
        lines += ["  " + line for line in _table(rows, HEADER)]
    return lines + _findings(stage, said=said)


def _matrix_lines(
    asset: str, per_engine: dict[str, SweepResult], engines: list[str], said: dict[str, frozenset[str]]
) -> list[str]:
    """follower x engine: motion ratio, verdict and what that engine read."""
    status = worst_status(s.status for s in per_engine.values())
    lines = [
        f"{asset}: {status.upper()} ("
        + ", ".join(f"{e} {per_engine[e].status}" for e in engines if e in per_engine)
        + ")"
    ]
    for e in engines:
        st = per_engine.get(e)
        if st is not None and st.status in (SKIPPED, ERROR, NOT_APPLICABLE, TIMEOUT) and st.reason:
            lines.append(f"  {e}: {st.status}: {st.reason}")
    rows = []
    for _, name, cells in follower_rows(per_engine):
        any_f = next(iter(cells.values()))
        row = [name, gearing_text(any_f)]
        for e in engines:
            f = cells.get(e)
            row.append("-" if f is None else f"{num(f.motion_ratio, 4)} {f.status.upper()}; read {read_text(f)}")
        rows.append(row)
    if rows:
        lines += ["  " + line for line in _table(rows, ["follower", "|gearing|"] + engines)]
    lines += _disagreement_lines(per_engine)
    # a finding several engines share (the validator's warnings, a missing drive) once, naming them
    shared: dict[str, list[str]] = {}
    for e in engines:
        if e in per_engine:
            for line in _findings(per_engine[e], _TAG, said.get(e, frozenset())):
                shared.setdefault(line, []).append(e)
    return lines + [line.replace(_TAG, f" [{', '.join(es)}]") for line, es in shared.items()]


#: where an engine tag goes in a finding line, until the engines that share the line are known
_TAG = "\0"


def _disagreement_lines(per_engine: dict[str, SweepResult]) -> list[str]:
    from ..disagreement import AGREEMENT, disagreements  # only a run on two engines or more compares them

    found = disagreements(per_engine)
    if not found:
        if any(st.followers for st in per_engine.values()):
            return [f"  engines agree on every follower (verdict; motion ratio and offset check within {AGREEMENT:g})"]
        return []
    return [f"  disagreements ({len(found)}; motion ratio and offset check compared within {AGREEMENT:g}):"] + [
        f"    {d.who()}: {d.text()}" for d in found
    ]


def format_console(result: RunResult | SweepResult) -> str:
    run = as_run(result)
    mode = run.config.get("tolerance_mode", "absolute")
    engines = engines_of(run)
    top = headlines(run)
    lines: list[str] = top + [findings_line(run), ""] if top else []
    engine_notes = _engine_notes(run)
    said = {e: notes for e, (_, notes) in engine_notes.items()}
    if len(engines) > 1:
        for asset, per_engine in by_asset(run).items():
            lines += _matrix_lines(asset, per_engine, engines, said) + [""]
    else:
        for stage in run.stages:
            lines += _stage_lines(stage, mode, said.get(stage.engine, frozenset())) + [""]
    if engine_notes:
        lines += _engine_note_lines(run, engine_notes, tagged=len(engines) > 1) + [""]
    note = sign_rule_note(run)
    if note:
        lines += [note, ""]
    s = run.summary()
    tol = run.config.get("gear_ratio_tolerance")
    measure = run.config.get("ratio_measure", "motion_ratio").replace("_", " ")
    lines.append(
        f"FET022 mimic_joint: {overall_status(run).upper()}: "
        + (
            f"{len(by_asset(run))} stage(s) x {len(engines)} engines ({', '.join(engines)}) = {s['stages']} run(s)"
            if len(engines) > 1
            else f"{s['stages']} stage(s)"
        )
        + f": {s['stages_pass']} pass, {s['stages_fail']} fail, {s['stages_skipped']} skipped, "
        f"{s['stages_error']} error"
        + (f", {s['stages_not_applicable']} not applicable" if s["stages_not_applicable"] else "")
        + (f", {s['stages_timeout']} timed out" if s["stages_timeout"] else "")
        + "; "
        f"{s['followers']} follower(s): {s['followers_pass']} pass, {s['followers_fail']} fail"
        + (f", {s['followers_error']} error" if s["followers_error"] else "")
        + (f", {s['followers_not_applicable']} not applicable" if s["followers_not_applicable"] else "")
        + f"; {s['warnings']} warning(s); {measure} within {num(tol, 3)} ({mode}) of |gearing|"
    )
    lines += _run_notes(run)
    return "\n".join(lines)


def _run_notes(run: RunResult) -> list[str]:
    """What happened to the run itself (not to an asset): reuse, lost workers, unjudged units."""
    out = []
    if run.reused:
        out.append(f"reused {run.reused} stored result(s) from the run folder (same content, configuration, engine)")
    for w in run.workers_lost:
        out.append(
            f"Dask worker {w['worker']} left the cluster; {len(w['units'])} unit(s) it was sweeping were run again"
            + (f": {', '.join(w['units'][:5])}" if w["units"] else "")
        )
    if run.unjudged:
        reasons = sorted({u["reason"] for u in run.unjudged})
        out.append(
            f"UNJUDGED: {len(run.unjudged)} unit(s) got no verdict ({'; '.join(reasons)}); "
            "run again with --resume RUN_DIR to sweep only those"
        )
    return out


__all__ = ["format_console"]
