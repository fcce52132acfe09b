"""The public harness's ``result.json``: one per stage and engine, a flat ``metrics`` map.

The harness's MIM phase reports through its test context: ``add_metric(name, value)``
fills the flat ``metrics`` map, ``warn`` / ``fail`` / ``skip`` add messages and set the
status. This file holds the same: the harness's stage metrics
(``mim_mimic_pairs_detected``, ``mim_skipped_pairs``, ``mim_pairs_passed``,
``mim_pairs_failed``), its per-pair metrics ``mim_pair_<follower>_<measure>``, our own
measures under names of our own (``harness`` module docs, ``result.EXTRA_SUFFIXES``),
the status and the messages. Folder layout: ``<folder>/<stage>/<engine>/result.json``.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path
from typing import Any

from ... import __version__
from ..identity import FEATURES, HARNESS_TEST_VERSION, TEST_NAME
from ..result import ERROR, FAIL, NOT_APPLICABLE, SKIPPED, TIMEOUT, RunResult, SweepResult, finite_or_none
from .common import as_run, write_text

FORMAT = "simready_benchmark.result"


def _messages(stage: SweepResult) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    if stage.status in (SKIPPED, NOT_APPLICABLE):
        out.append({"level": "skip", "text": f"MIM: {stage.reason}"})
    elif stage.status in (ERROR, TIMEOUT) and stage.reason:
        out.append({"level": "error", "text": f"MIM: {stage.reason}"})
    for w in stage.warnings:
        out.append({"level": "warning", "text": f"MIM: {w}"})
    for f in stage.followers:
        for m in f.messages:
            out.append(
                {
                    "level": {ERROR: "error", NOT_APPLICABLE: "skip"}.get(f.status, "warning"),
                    "text": f"MIM: follower '{f.name}' (reference '{f.reference}'): {m}",
                }
            )
        for w in f.warnings:
            out.append({"level": "warning", "text": f"MIM: follower '{f.name}': {w}"})
        for n in f.notes:
            out.append({"level": "info", "text": f"MIM: follower '{f.name}': {n}"})
    failed = [f.name for f in stage.followers if f.status == FAIL]
    if failed:
        out.append(
            {
                "level": "fail",
                "text": f"MIM: {len(failed)} of {len(stage.followers)} mimic pair(s) failed: " + ", ".join(failed),
            }
        )
    return out


def harness_result(stage: SweepResult, created: str | None = None) -> dict[str, Any]:
    """One stage's result in the harness's layout (plain data, JSON-ready)."""
    created = created or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "format": FORMAT,
        "test": TEST_NAME,
        "test_version": HARNESS_TEST_VERSION,
        "features": list(FEATURES),
        "asset": stage.asset,
        "engine": stage.engine,
        "status": stage.status,
        "metrics": finite_or_none({**stage.metrics, **stage.extra_metrics}),
        "messages": _messages(stage),
        "config": stage.config,
        "tool": {"name": "mimic-ext", "version": __version__},
        "created": created,
    }


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text) or "x"


def result_paths(run: RunResult, folder: str | Path) -> list[tuple[SweepResult, Path]]:
    """Where each stage-and-engine result goes: ``<folder>/<stage stem>/<engine>/result.json``
    (stems made unique in run order)."""
    folder = Path(folder)
    stems: dict[str, str] = {}
    taken: dict[str, int] = {}
    out = []
    for st in run.stages:
        if st.asset not in stems:
            stem = _safe(Path(st.asset).stem or "stage")
            taken[stem] = taken.get(stem, 0) + 1
            stems[st.asset] = stem if taken[stem] == 1 else f"{stem}_{taken[stem]}"
        out.append((st, folder / stems[st.asset] / _safe(st.engine or "engine") / "result.json"))
    return out


def format_result_json(stage: SweepResult) -> str:
    return json.dumps(harness_result(stage), indent=2, allow_nan=False) + "\n"


def write_result_json(stage: SweepResult, path: str | Path) -> Path:
    return write_text(path, format_result_json(stage))


def write_result_jsons(result: RunResult | SweepResult, folder: str | Path) -> list[Path]:
    """Write every stage's ``result.json`` under ``folder``; returns the paths written."""
    return [write_result_json(stage, path) for stage, path in result_paths(as_run(result), folder)]
