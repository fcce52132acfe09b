"""The run folder as the results store of a catalogue run: each stage-and-engine result is written
(atomically) the moment it finishes, so a client killed mid-run loses only what was in flight,
and the summaries are built from what is stored (``reports.catalogue``), as often as wanted.

Layout (``run_folder`` holds simready-benchmark's part of it)::

    RUN_DIR/mimic_ext_run.json        this run: config, engines, tool version, the units in order,
                                      and at the end what happened (reused, retried, lost, unjudged)
    RUN_DIR/plan.json, run_summary.json            what NVIDIA's reporter reads (run_folder)
    RUN_DIR/results/<asset dir>/.simready/runtime/mimic_joint/result.json   Kit's, per asset
    RUN_DIR/results/<asset dir>/.simready/runtime/mimic_joint/mimic_ext/<asset file>/<engine>.json

The last is ours: the whole ``SweepResult`` with its samples, plus the resume key it was computed
under (``fingerprint.unit_key``) and, when NVIDIA's phase ran in the unit, its record
(``nvidia``: verdict, Kit's result dict, and the key it is reused under, ``simready.verdicts``),
at ``run_folder.own_result_path``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import MimicInputError
from . import run_folder
from .result import RunResult, SweepResult, finite_or_none

MANIFEST = "mimic_ext_run.json"
MANIFEST_FORMAT = "mimic_ext.fet022.run"
STORED_FORMAT = "mimic_ext.fet022.stored_result"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def manifest_path(folder: str | os.PathLike) -> Path:
    return Path(folder) / MANIFEST


def read_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    """The run's manifest; a one-line error when ``folder`` is not a run folder."""
    path = manifest_path(folder)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MimicInputError(f"{folder}: not a sweep run folder (no {MANIFEST}; write one with --report)") from None
    except (OSError, ValueError) as exc:
        raise MimicInputError(f"{path}: cannot be read: {exc}") from None
    if data.get("format") != MANIFEST_FORMAT:
        raise MimicInputError(f"{path}: not a mimic-ext run manifest (format {data.get('format')!r})")
    return data


class RunStore:
    """One run folder: where each unit's result goes, and what is stored there already."""

    def __init__(self, folder: str | os.PathLike, root: str = ""):
        self.folder = Path(folder)
        self.root = root  # the content root: asset keys are relative to it
        self.mirror: dict[str, str] = {}  # asset key -> the key its runtime folder uses (run_folder.mirror_keys)
        #: asset key -> the Kit result.json this run wrote for it (``store``): ``finish`` rewrites
        #: only those whose final headline differs
        self.kit_written: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ paths
    def key(self, path: str | os.PathLike) -> str:
        return run_folder.asset_key(os.path.abspath(os.fspath(path)), self.root)

    def own_path(self, key: str, engine: str) -> Path:
        return run_folder.own_result_path(self.folder, key, engine)

    # ------------------------------------------------------------------ the run
    @classmethod
    def for_run(cls, folder: str | os.PathLike, paths: Sequence[str | os.PathLike], resume: bool) -> RunStore:
        """The store for a run over ``paths`` (absolute): a resumed run keeps the stored content root
        when every stage lies under it, so the keys, and so the stored results, are found again."""
        root = run_folder.content_root(paths)
        if resume and manifest_path(folder).exists():
            old = read_manifest(folder).get("content_root", "")
            if old and all(os.path.abspath(os.fspath(p)).startswith(old.rstrip("/") + "/") for p in paths):
                root = old
        return cls(folder, root)

    def begin(self, units: list[dict[str, str]], config: dict[str, Any], engines: list[str]) -> None:
        """Write the manifest before the first unit runs: ``mimic-ext report`` can summarise a run
        whose client was killed (its unfinished units shown as unjudged)."""
        self.keys = {u["asset"]: u["key"] for u in units}  # a stage as named -> its asset key
        self.manifest: dict[str, Any] = {
            "format": MANIFEST_FORMAT,
            "tool": {"name": "mimic-ext", "version": __version__},
            "started": _now(),
            "finished": None,
            "content_root": self.root,
            "config": config,
            "engines": engines,
            "units": units,
            "run": {},
        }
        run_folder.write_json(manifest_path(self.folder), self.manifest)
        self.mirror = run_folder.mirror_keys(u["key"] for u in units)

    def finish(self, run: RunResult, headline: Mapping[str, Mapping[str, Any]] | None = None, **fields: Any) -> None:
        """Record how the run ended (``fields`` add to it, e.g. NVIDIA's verdicts), and write what
        NVIDIA's reporter reads: the plan, the run summary, and each asset's Kit ``result.json`` where
        its final headline (``headline[asset]``, Kit-shaped, e.g. NVIDIA's verdict; else the first
        engine's stage as ours) is not the one ``store`` wrote. Each file is written once here."""
        self.manifest["finished"] = _now()
        self.manifest["run"] = {
            "wall_s": round(run.wall_seconds, 6),
            "jobs": run.jobs,
            "executor": run.executor,
            "retried": run.retried,
            "reused": run.reused,
            "unjudged": run.unjudged,
            "workers_lost": run.workers_lost,
            "versions": run.versions,
            **fields,
        }
        run_folder.write_json(manifest_path(self.folder), self.manifest)
        stages = list(run.stages)
        done: set[str] = set()
        for stage in stages:
            key = self.keys[stage.asset]
            if key in done:
                continue
            done.add(key)
            kit = finite_or_none({**((headline or {}).get(stage.asset) or run_folder.stage_kit_result(stage, key))})
            kit["asset"] = key
            if kit != self.kit_written.get(key):
                run_folder.write_json(run_folder.result_path(self.folder, self.mirror.get(key, key)), kit)
        assets = list(dict.fromkeys(u["path"] for u in self.manifest["units"]))
        plan = run_folder.plan_dict(assets, self.root, feature=run_folder.run_feature(stages))
        run_folder.write_json(run_folder.plan_path(self.folder), plan)
        unjudged = len({u["asset"] for u in run.unjudged})
        summary = run_folder.run_summary_dict(
            self.manifest["started"], self.manifest["finished"], len(assets), unjudged
        )
        run_folder.write_json(run_folder.run_summary_path(self.folder), summary)

    # ------------------------------------------------------------------ one unit
    def stored(self, key: str, engine: str) -> dict[str, Any] | None:
        """The stored record of one unit (``resume_key``, ``reusable``, ``result``), or None."""
        try:
            data = json.loads(self.own_path(key, engine).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("format") == STORED_FORMAT else None

    def store(self, stage: SweepResult, key: str, resume_key: dict[str, Any], reusable: bool, headline: bool) -> Path:
        """Write one unit's result, with its samples and resume key; ``headline``: also the asset's
        Kit ``result.json`` (the first engine's verdict, as ``run_folder.write_run_folder``)."""
        record = {
            "format": STORED_FORMAT,
            "resume_key": resume_key,
            "reusable": reusable,
            "stored": _now(),
            "result": stage.to_dict(samples=True),
            "config": stage.config,
            "versions": stage.versions,
        }
        if stage.nvidia is not None:
            record["nvidia"] = finite_or_none(stage.nvidia)
        path = run_folder.write_json(self.own_path(key, stage.engine), record)
        if headline:
            # NVIDIA's verdict where its phase ran in the unit, else ours (``finish`` settles it at
            # the end of the run, rewriting it only if it changed; this is what a killed run keeps)
            kit_path = run_folder.result_path(self.folder, self.mirror.get(key, key))
            nvidia_kit = (stage.nvidia or {}).get("kit")
            kit = finite_or_none({**(nvidia_kit or run_folder.stage_kit_result(stage, key)), "asset": key})
            run_folder.write_json(kit_path, kit)
            self.kit_written[key] = kit
        return path


def load_result(record: dict[str, Any]) -> SweepResult:
    """A stored record's ``SweepResult`` (with its samples, configuration, versions and NVIDIA's
    record, when its phase ran in the unit)."""
    stage = SweepResult.from_dict(record["result"])
    stage.config = dict(record.get("config") or {})
    stage.versions = dict(record.get("versions") or {})
    stage.nvidia = record.get("nvidia")
    return stage


def reusable_nvidia(record: dict[str, Any] | None, key: dict[str, Any] | None) -> bool:
    """A unit's stored NVIDIA record stands for this run's: one was stored, reusable (not a
    timeout), under the same ``key`` (``simready.verdicts.phase_key``: test and releases)."""
    return (
        isinstance(record, dict)
        and bool(record.get("reusable"))
        and isinstance(record.get("verdict"), dict)
        and record.get("key") == key
    )


def stored_stages(folder: str | os.PathLike) -> Iterator[tuple[dict[str, str], SweepResult | None]]:
    """Every unit of the run in ``folder``, in run order, with its stored result (None: not stored,
    the run ended first). One result is read at a time: memory holds one asset's samples."""
    manifest = read_manifest(folder)
    store = RunStore(folder, manifest.get("content_root", ""))
    for unit in manifest["units"]:
        record = store.stored(unit["key"], unit["engine"])
        yield unit, (load_result(record) if record else None)


__all__ = [
    "MANIFEST",
    "RunStore",
    "load_result",
    "manifest_path",
    "read_manifest",
    "reusable_nvidia",
    "stored_stages",
]
