"""The console view: one table per stage, then a summary line across stages."""

from __future__ import annotations

from ..result import ERROR, SKIPPED, RunResult, SweepResult
from .common import as_run, num, overall_status, ratio_error_text, short

HEADER = ["follower", "reference", "|gearing|", "measured ratio", "error", "direction", "status"]


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _stage_lines(stage: SweepResult, mode: str) -> list[str]:
    head = f"{stage.asset}: {stage.status.upper()}"
    if stage.status in (SKIPPED, ERROR) and stage.reason:
        head += f" ({stage.reason})"
    lines = [head]
    if stage.followers:
        rows = [[f.name, short(f.reference), num(f.abs_gearing, 6), num(f.motion_ratio, 6),
                 ratio_error_text(f, mode), {"match": "ok", "reversed": "REVERSED"}.get(f.direction, "-"),
                 f.status.upper()] for f in stage.followers]
        lines += ["  " + line for line in _table(rows, HEADER)]
    for f in stage.followers:
        for msg in f.messages:
            lines.append(f"  {f.status}: {f.name}: {msg}")
        for msg in f.warnings:
            lines.append(f"  warning: {f.name}: {msg}")
    for msg in stage.warnings:
        lines.append(f"  note: {msg}")
    return lines


def format_console(result: RunResult | SweepResult) -> str:
    run = as_run(result)
    mode = run.config.get("tolerance_mode", "relative")
    lines: list[str] = []
    for stage in run.stages:
        lines += _stage_lines(stage, mode) + [""]
    s = run.summary()
    tol = run.config.get("gear_ratio_tolerance")
    lines.append(
        f"FET022 mimic_joint: {overall_status(run).upper()}: {s['stages']} stage(s): {s['stages_pass']} pass, "
        f"{s['stages_fail']} fail, {s['stages_skipped']} skipped, {s['stages_error']} error; "
        f"{s['followers']} follower(s): {s['followers_pass']} pass, {s['followers_fail']} fail"
        + (f", {s['followers_error']} error" if s["followers_error"] else "")
        + f"; {s['warnings']} warning(s); tolerance {num(tol, 3)} {mode}")
    return "\n".join(lines)


__all__ = ["format_console"]
