"""The machine-readable report: one JSON document per run, described by ``report.schema.json``."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

from ... import __version__
from ..disagreement import disagreements
from ..identity import FEATURES, TEST_NAME, TEST_VERSION
from ..result import RunResult, SweepResult, finite_or_none
from .common import as_run, by_asset, engines_of, follower_rows, overall_status, write_text
from .headline import headlines

FORMAT = "mimic_ext.fet022.report"
SCHEMA_VERSION = "2.0"
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "report.schema.json"


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def conformance(run: RunResult) -> list[dict[str, Any]]:
    """Per stage, per follower, per engine: the verdict, the ratios and what that engine read."""
    out = []
    for asset, per_engine in by_asset(run).items():
        rows = []
        for path, name, cells in follower_rows(per_engine):
            rows.append(
                {
                    "follower": path,
                    "name": name,
                    "engines": {
                        e: finite_or_none(
                            {
                                "status": f.status,
                                "motion_ratio": f.motion_ratio,
                                "fit_slope": f.measured_ratio,
                                "ratio_error": f.ratio_error,
                                "direction": f.direction,
                                "dir_matches_gear": f.dir_matches_gear,
                                "read_relation": f.read_relation,
                            }
                        )
                        for e, f in cells.items()
                    },
                }
            )
        out.append({"asset": asset, "status": {e: st.status for e, st in per_engine.items()}, "followers": rows})
    return out


def disagreement_data(run: RunResult) -> list[dict[str, Any]]:
    """Per stage with several engines: every pair of engines that disagrees on a follower."""
    return [
        {"asset": asset, **d.to_dict()}
        for asset, per_engine in by_asset(run).items()
        if len(per_engine) > 1
        for d in disagreements(per_engine)
    ]


def report_identity(created: str | None = None) -> dict[str, Any]:
    """The first keys of every JSON report we write, a run's or a catalogue's: its format, the test
    and the tool, and when (``created``, ISO 8601 UTC; now when not given)."""
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "test": {"name": TEST_NAME, "version": TEST_VERSION, "features": list(FEATURES)},
        "tool": {"name": "mimic-ext", "version": __version__},
        "created": created or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def to_json_data(result: RunResult | SweepResult, samples: bool = True, created: str | None = None) -> dict[str, Any]:
    """The report as plain data (what ``write_json`` writes)."""
    run = as_run(result)
    return {
        **report_identity(created),
        "status": overall_status(run),
        "exit_code": run.decided_exit_code,
        "config": run.config,
        "versions": run.versions,
        "timings": {
            "wall_s": round(run.wall_seconds, 6),
            "jobs": run.jobs,
            "executor": run.executor,
            "retried": run.retried,
        },
        "summary": run.summary(),
        "engines": engines_of(run),
        "stages": [s.to_dict(samples) for s in run.stages],
        "conformance": conformance(run),
        "disagreements": disagreement_data(run),
        "simready": {
            "headline": headlines(run),
            "strict": run.strict,
            "port_exit_code": run.exit_code,
            "verdicts": finite_or_none(run.simready),
        },
    }


def format_json(result: RunResult | SweepResult, samples: bool = True) -> str:
    return json.dumps(to_json_data(result, samples), indent=2, allow_nan=False) + "\n"


def write_json(result: RunResult | SweepResult, path: str | Path, samples: bool = True) -> Path:
    return write_text(path, format_json(result, samples))
