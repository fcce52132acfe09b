"""Small helpers every reporter shares: one run from a stage, the run's status, number text."""

from __future__ import annotations

import math
from pathlib import Path

from ...atomic_write import write_text_atomically
from ..result import ERROR, FAIL, PASS, SKIPPED, RunResult, SweepResult


def as_run(result: RunResult | SweepResult) -> RunResult:
    if isinstance(result, RunResult):
        return result
    return RunResult(stages=[result], config=dict(result.config), versions=dict(result.versions),
                     wall_seconds=result.timings.get("total_s", 0.0))


def overall_status(run: RunResult) -> str:
    """error > fail > pass > skipped: a run passes when nothing failed and something passed."""
    statuses = {s.status for s in run.stages}
    for status in (ERROR, FAIL, PASS):
        if status in statuses:
            return status
    return SKIPPED


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


def short(path: str) -> str:
    return path.rsplit("/", 1)[-1] if path else "-"


def write_text(path: str | Path, text: str) -> Path:
    """Write a report atomically; a folder that does not exist is made."""
    return write_text_atomically(path, text, make_parent=True)
