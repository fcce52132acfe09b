"""simready-benchmark's run folder: where its reporter looks, and Kit's ``result.json`` shape.

NVIDIA's reporter (``simready-benchmark --report-only --output-dir DIR``) reads only what its
runner writes, laid out by ``simready_benchmark/core/output_layout.py`` (2026.6.5)::

    DIR/plan.json                      planner's plan (assets, tests, content root)
    DIR/run_summary.json               orchestrator's summary (started_at / finished_at)
    DIR/report/                        the reporter's HTML and test_results_index.json
    DIR/results/<asset dir>/.simready/runtime/<test_name>/result.json

where ``<asset dir>`` is the directory part of the asset key: the asset's path relative to the
run's content root (``core/asset_key.asset_rel_key``), which is also the ``asset`` field of
result.json and the key the reporter groups by. This module is the one place in mimic_ext that
knows that layout: when simready-benchmark is installed its own helpers are used; without it the
same paths are built here (the mirror below; ``tests/test_run_folder.py`` compares the two).

Our own per-asset, per-engine JSON (mimic_ext's full result) goes beside Kit's, in
``runtime/<test_name>/mimic_ext/<asset file>/<engine>.json``: the reporter reads only ``result.json`` files in
``runtime/<test>/`` and ignores it. One ``result.json`` per asset and test, as Kit writes; a run
on several engines puts its headline engine's verdict there (``kit_result``'s ``engine``).

Statuses: Kit writes pass / fail / skipped. Ours map (``STATUS_MAP``): pass -> pass, fail -> fail,
skipped -> skipped, not_applicable -> skipped (the engine cannot judge the asset: no verdict, the
reason as the message), error -> fail with the details in ``failure_details`` (Kit's runner
reports a test that raised as failed, and the reporter turns Kit's own ``error`` into fail).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .identity import FEATURES, TEST_NAME, TEST_VERSION
from .result import finite_or_none

REPORT_DIR = "report"
RESULTS_DIR = "results"
PLAN_FILENAME = "plan.json"
RUN_SUMMARY_FILENAME = "run_summary.json"
RESULT_FILENAME = "result.json"
#: beside Kit's result.json: mimic_ext's own per-engine JSON
OWN_DIRNAME = "mimic_ext"
#: simready-benchmark's planner's plan format (``planner/planner.py`` PLAN_VERSION, 2026.6.5)
PLAN_VERSION = "1.1.0"
#: the profile plan.json files its feature under (no SimReady profile: the asset is not validated)
PLAN_PROFILE = "mimic_ext"
#: the index the reporter writes, under ``report/``
REPORT_INDEX = "test_results_index.json"

#: our statuses -> Kit's (see the module docs)
STATUS_MAP = {
    "pass": "pass",
    "fail": "fail",
    "skipped": "skipped",
    "not_applicable": "skipped",
    "error": "fail",
}

FEATURE_PHYSX, FEATURE_NEWTON, FEATURE_ISAAC = "FET_022_PHYSX", "FET_022_NEWTON", "FET_022_ISAAC"


# -- the layout (mirror of simready_benchmark.core.output_layout and .asset_key) -------------


def _join(base: str, *parts: str) -> str:
    """Forward-slash join, as output_layout._join (keeps URL schemes intact)."""
    out = base.rstrip("/")
    for p in parts:
        if p:
            out = out.rstrip("/") + "/" + p.strip("/")
    return out


def asset_key(asset_path: str | os.PathLike, content_root: str | os.PathLike | None) -> str:
    """The asset's key: its path relative to ``content_root`` with forward slashes, else the path
    with its drive and leading slash stripped (``asset_key.asset_rel_key``)."""
    try:
        from simready_benchmark.core.asset_key import asset_rel_key
    except ImportError:
        asset_rel_key = None
    path, root = os.fspath(asset_path), os.fspath(content_root) if content_root else ""
    if asset_rel_key is not None:
        return str(asset_rel_key(path, root))
    if root:
        try:
            rel = os.path.relpath(path, root)
            if not rel.startswith(".."):
                return rel.replace("\\", "/")
        except ValueError:
            pass
    _drive, tail = os.path.splitdrive(path)
    return tail.lstrip("/\\").replace("\\", "/")


def content_root(assets: Iterable[str | os.PathLike]) -> str:
    """The deepest folder holding every asset (absolute): the keys are then short and unique."""
    folders = [os.path.dirname(os.path.abspath(os.fspath(a))) for a in assets]
    if not folders:
        return ""
    return os.path.commonpath(folders)


def results_dir(output_dir: str | os.PathLike) -> Path:
    return Path(_join(os.fspath(output_dir), RESULTS_DIR))


def report_dir(output_dir: str | os.PathLike) -> Path:
    return Path(_join(os.fspath(output_dir), REPORT_DIR))


def plan_path(output_dir: str | os.PathLike) -> Path:
    return Path(_join(os.fspath(output_dir), PLAN_FILENAME))


def run_summary_path(output_dir: str | os.PathLike) -> Path:
    return Path(_join(os.fspath(output_dir), RUN_SUMMARY_FILENAME))


def report_index_path(output_dir: str | os.PathLike) -> Path:
    return report_dir(output_dir) / REPORT_INDEX


def runtime_dir(output_dir: str | os.PathLike, key: str, test_name: str = TEST_NAME) -> Path:
    """``results/<asset dir>/.simready/runtime/<test_name>/`` (output_layout.per_test_runtime_dir)."""
    try:
        from simready_benchmark.core import output_layout
    except ImportError:
        output_layout = None
    if output_layout is not None:
        return Path(output_layout.per_test_runtime_dir(os.fspath(output_dir), key, test_name))
    asset_dir = key.rsplit("/", 1)[0] if "/" in key else ""
    return Path(_join(os.fspath(output_dir), RESULTS_DIR, asset_dir, ".simready", "runtime", test_name))


def mirror_keys(keys: Iterable[str]) -> dict[str, str]:
    """Each asset key -> the key its runtime folder is laid out by.

    Why: NVIDIA's layout mirrors an asset's *folder* (a SimReady asset is a folder:
    ``results/<asset dir>/.simready/runtime/...``), so stages that share a folder (data/'s samples,
    a catalogue of loose files) would share one result.json and the reporter would list only the
    last. Where a folder holds several of the run's assets, each gets a folder of its own named by
    its file (``results/<dir>/<file>/.simready/...``); the reporter scans ``results/**`` and groups
    by the result's ``asset`` field, which keeps the real key. A folder with one asset keeps
    NVIDIA's path."""
    keys = list(dict.fromkeys(keys))
    folders: dict[str, int] = {}
    for key in keys:
        folder = key.rsplit("/", 1)[0] if "/" in key else ""
        folders[folder] = folders.get(folder, 0) + 1
    out = {}
    for key in keys:
        folder, _, name = key.rpartition("/")
        out[key] = f"{key}/{name}" if folders[folder] > 1 else key
    return out


def result_path(output_dir: str | os.PathLike, key: str, test_name: str = TEST_NAME) -> Path:
    """Kit's ``result.json`` for one asset and test."""
    return runtime_dir(output_dir, key, test_name) / RESULT_FILENAME


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def own_result_path(output_dir: str | os.PathLike, key: str, engine: str, test_name: str = TEST_NAME) -> Path:
    """mimic_ext's own JSON for one asset and engine, beside Kit's result.json, in a folder named
    by the asset's file: the runtime folder is per asset *folder* (several stages can share it),
    and this path depends on the asset alone, not on which other assets a run holds (the run store
    finds a unit's result again on ``--resume`` with a different set of stages)."""
    folder = _safe_name(key.rsplit("/", 1)[-1]) or "asset"
    return runtime_dir(output_dir, key, test_name) / OWN_DIRNAME / folder / f"{_safe_name(engine) or 'engine'}.json"


# -- Kit's result.json ------------------------------------------------------------------------


def kit_status(status: str) -> str:
    """Our status as Kit writes it (``STATUS_MAP``); unknown ones are a fail, never a pass."""
    return STATUS_MAP.get(status, "fail")


def metric_unit(name: str) -> str | None:
    """The unit of one of NVIDIA's metric names: ``*_rad`` are radians (or metres for a prismatic
    joint: the phase names them _rad regardless), counts and ratios have none."""
    return "rad" if name.endswith("_rad") else None


def kit_metrics(metrics: Mapping[str, Any], units: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """Flat ``{name: value}`` -> Kit's ``{name: {"value": v, "unit": u}}`` (test_context.add_metric);
    values already in that shape pass through. NaN and infinity become null (JSON has none)."""
    out: dict[str, Any] = {}
    for name, value in metrics.items():
        if isinstance(value, Mapping) and "value" in value:
            out[name] = {"value": finite_or_none(value["value"]), "unit": value.get("unit")}
        else:
            unit = (units or {}).get(name, metric_unit(name))
            out[name] = {"value": finite_or_none(value), "unit": unit}
    return out


def kit_warnings(warnings: Iterable[Any], source: str = "mimic_ext") -> list[dict[str, str]]:
    """Strings or ``{level, message|text, source}`` -> Kit's ``[{level, message, source}]``."""
    out = []
    for w in warnings:
        if isinstance(w, Mapping):
            out.append(
                {
                    "level": str(w.get("level", "warning")),
                    "message": str(w.get("message", w.get("text", ""))),
                    "source": str(w.get("source", source)),
                }
            )
        else:
            out.append({"level": "warning", "message": str(w), "source": source})
    return out


def kit_result(
    *,
    status: str,
    asset: str,
    engine: str,
    message: str = "",
    metrics: Mapping[str, Any] | None = None,
    warnings: Iterable[Any] = (),
    feature: str = FEATURE_PHYSX,
    engine_version: str = "",
    duration: float = 0.0,
    failure_details: str = "",
    test_name: str = TEST_NAME,
    test_version: str = TEST_VERSION,
    description: str = "",
    session_id: str = "",
    logs: Iterable[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One result in Kit's ``result.json`` shape (fields of simready_benchmark_engine_kit's
    execution.py and kit_runner.py), plus ``feature`` (which the reporter reads when the plan names
    none) and whatever ``extra`` adds (e.g. our own ``mimic_ext`` section)."""
    out: dict[str, Any] = {
        "status": kit_status(status),
        "duration": round(float(duration), 6),
        "message": message,
        "failure_details": failure_details,
        "description": description,
        "expected_video": "",
        "test_name": test_name,
        "test_version": test_version,
        "feature": feature,
        "metrics": kit_metrics(metrics or {}),
        "media": [],
        "warnings": kit_warnings(warnings),
        "logs": list(logs),
        "kit_logs": [],
        "scene_file": "",
        "asset": asset,
        "session_id": session_id,
        "engine": engine,
        "engine_version": engine_version,
    }
    if extra:
        out.update(extra)
    return out


def stage_feature(stage: Any) -> str:
    """The feature a stage's run verifies: FET_022_NEWTON when every relation is NewtonMimicAPI,
    else FET_022_PHYSX (NVIDIA's test serves all three features; FET_022_ISAAC is the Isaac
    profile's, which a headless engine cannot claim)."""
    schemas = {getattr(f, "schema", "") for f in getattr(stage, "followers", [])}
    return FEATURE_NEWTON if schemas == {"newton"} else FEATURE_PHYSX


def run_feature(stages: Iterable[Any]) -> str:
    """The one feature a run folder's plan reports the test under: FET_022_NEWTON when every stage
    is Newton-only, else FET_022_PHYSX."""
    feats = {stage_feature(s) for s in stages}
    return FEATURE_NEWTON if feats == {FEATURE_NEWTON} else FEATURE_PHYSX


def stage_message(stage: Any) -> str:
    """One stage's message as Kit's would read: why skipped or errored, or which pairs failed."""
    status = stage.status
    if status in ("skipped", "not_applicable", "error"):
        return f"MIM: {stage.reason}" if stage.reason else ""
    failed = [f for f in stage.followers if f.status == "fail"]
    if failed:
        lines = [f"MIM: {len(failed)} of {len(stage.followers)} mimic pair(s) failed:"]
        for f in failed:
            why = "; ".join(f.messages) or "see metrics"
            lines.append(f"  - follower='{f.name}' (reference='{f.reference}', gearing={f.gearing:g}): {why}")
        return "\n".join(lines)
    return ""


def stage_warnings(stage: Any) -> list[dict[str, str]]:
    out = [{"level": "warning", "message": f"MIM: {w}", "source": "mimic_ext"} for w in stage.warnings]
    for f in stage.followers:
        for w in f.warnings:
            out.append({"level": "warning", "message": f"MIM: follower '{f.name}': {w}", "source": "mimic_ext"})
        if f.status not in ("pass", "fail"):
            for m in f.messages:
                out.append({"level": "warning", "message": f"MIM: follower '{f.name}': {m}", "source": "mimic_ext"})
    return out


def stage_kit_result(
    stage: Any,
    key: str,
    *,
    feature: str | None = None,
    engine_version: str = "",
    session_id: str = "",
) -> dict[str, Any]:
    """One of our stage results (``result.SweepResult``) as Kit's result.json: our port's verdict
    (marked ``mimic_ext.verdict_by: port``; NVIDIA's phase's is ``nvidia_phase``), NVIDIA's metric
    names (``stage.metrics``) and ours (``stage.extra_metrics``)."""
    metrics = {**stage.metrics, **stage.extra_metrics}
    return kit_result(
        status=stage.status,
        asset=key,
        engine=stage.engine,
        message=stage_message(stage),
        metrics=metrics,
        warnings=stage_warnings(stage),
        feature=feature or stage_feature(stage),
        engine_version=engine_version or stage.versions.get(stage.engine, ""),
        duration=float(stage.timings.get("total_s", 0.0)),
        failure_details=stage.details if stage.status == "error" else "",
        session_id=session_id,
        extra={"mimic_ext": {"verdict_by": "port"}},
    )


# -- plan.json and run_summary.json -----------------------------------------------------------


def plan_dict(
    assets: Iterable[str | os.PathLike],
    root: str,
    *,
    test_name: str = TEST_NAME,
    test_version: str = TEST_VERSION,
    feature: str = FEATURE_PHYSX,
    engine_tags: Iterable[str] = ("mimic_ext",),
    created: str | None = None,
) -> dict[str, Any]:
    """A plan.json (``core/models.plan_to_dict``) naming the run's assets, the one test and the
    feature it is reported under, in a profile of its own (``PLAN_PROFILE``): the reporter keeps
    only tests reachable through a feature of a profile (``core/plan_resolver``), and maps a test
    name to one feature per plan, as NVIDIA's own planner's plans do. The feature's version is left
    empty: the assets were not validated against a profile here."""
    created = created or _dt.datetime.now(_dt.UTC).isoformat()
    plan_assets = []
    for i, a in enumerate(dict.fromkeys(os.path.abspath(os.fspath(a)) for a in assets), start=1):
        plan_assets.append(
            {
                "id": i,
                "path": a.replace("\\", "/"),
                "tests": [1],
                "validation": None,
                "not_tested_reason": None,
                "profile_features": [],
                "validation_failed_features": [],
            }
        )
    return {
        "plan_version": PLAN_VERSION,
        "created": created,
        "sr_specs_path": "",
        "content_root": root.replace("\\", "/"),
        "test_dirs": [],
        "profiles": [{"id": 1, "name": PLAN_PROFILE, "version": "", "features": [1]}],
        "features": [{"id": 1, "name": feature, "version": "", "tests": [1]}],
        "tests": [
            {
                "id": 1,
                "name": test_name,
                "version": test_version,
                "test_file": "",
                "engine": {"tags": list(engine_tags)},
                "max_duration": 300,
            }
        ],
        "assets": plan_assets,
        "overrides": [],
        "engine_configs": {},
        "warnings": [],
        "engine_coverage": None,
    }


def run_summary_dict(started_at: str, finished_at: str, total: int, failed: int) -> dict[str, Any]:
    """run_summary.json as the orchestrator writes it (``runner/runner.py``); ``failed`` counts work
    items that did not complete (a test verdict of fail is still a completed item)."""
    return {
        "total_work_items": total,
        "completed": total - failed,
        "failed": failed,
        "status": "completed",
        "started_at": started_at,
        "finished_at": finished_at,
        "readiness": {"status": "ok"},
    }


def write_json(path: str | os.PathLike, data: Any) -> Path:
    """Atomically, parents made, no NaN (JSON has none)."""
    from ..atomic_write import write_text_atomically

    return write_text_atomically(path, json.dumps(data, indent=2, allow_nan=False) + "\n", make_parent=True)


def write_run_folder(
    run: Any,
    output_dir: str | os.PathLike,
    *,
    root: str | None = None,
    headline: Mapping[str, Mapping[str, Any]] | None = None,
    started_at: str | None = None,
) -> list[Path]:
    """Write ``run`` (a ``result.RunResult``) in simready-benchmark's layout under ``output_dir``:
    per asset Kit's ``result.json`` (its first engine's verdict, or ``headline[asset]`` when given:
    a ready Kit-shaped dict such as NVIDIA's phase's verdict), our own JSON per engine beside it,
    plan.json and run_summary.json (a sweep's run folder is written by its store instead,
    ``fet022.store``, as each unit finishes). Returns the paths written."""
    stages = list(run.stages)
    root = root if root is not None else content_root(s.asset for s in stages)
    finished = _dt.datetime.now(_dt.UTC).isoformat()
    written: list[Path] = []
    done: set[str] = set()
    mirror = mirror_keys(asset_key(s.asset, root) for s in stages)
    for stage in stages:
        key = asset_key(stage.asset, root)
        own = own_result_path(output_dir, key, stage.engine)
        written.append(write_json(own, stage.to_dict(False)))
        if stage.asset in done:
            continue
        done.add(stage.asset)
        kit = dict((headline or {}).get(stage.asset) or stage_kit_result(stage, key))
        kit["asset"] = key
        written.append(write_json(result_path(output_dir, mirror[key]), kit))
    plan = plan_dict([s.asset for s in stages], root, feature=run_feature(stages))
    written.append(write_json(plan_path(output_dir), plan))
    summary = run_summary_dict(started_at or finished, finished, len(done), 0)
    written.append(write_json(run_summary_path(output_dir), summary))
    return written


__all__ = [
    "FEATURES",
    "FEATURE_ISAAC",
    "FEATURE_NEWTON",
    "FEATURE_PHYSX",
    "OWN_DIRNAME",
    "PLAN_PROFILE",
    "PLAN_VERSION",
    "STATUS_MAP",
    "asset_key",
    "content_root",
    "kit_metrics",
    "kit_result",
    "kit_status",
    "kit_warnings",
    "mirror_keys",
    "own_result_path",
    "plan_dict",
    "plan_path",
    "report_dir",
    "report_index_path",
    "result_path",
    "results_dir",
    "run_feature",
    "run_summary_dict",
    "run_summary_path",
    "runtime_dir",
    "stage_feature",
    "stage_kit_result",
    "write_json",
    "write_run_folder",
]
