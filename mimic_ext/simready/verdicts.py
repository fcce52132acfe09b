"""NVIDIA's verdicts for a sweep: its phase run on every stage and engine of a ``RunResult``.

``mimic-ext sweep`` (and the Kit in-stage runner) sweep with our port, then call ``add_verdicts``:
per stage and engine NVIDIA's phase runs once on the same engine (warp, physx, mujoco, newton; the
port's engine label ``warp:cuda:0`` runs warp on that device, ``newton:xpbd`` runs the phase on
Newton's Steel solver, ``newton_backend``) with the settings both share
(``gear_ratio_tolerance``, ``sweep_seconds``, ``settle_seconds``, ``physics_fps``). An engine the
adapter does not drive gets a ``not_run`` entry saying so; its cells keep our port's verdict.
Without the simready packages nothing is run and the run says so.
"""

from __future__ import annotations

from typing import Any

from ..fet022.result import RunResult
from .backends import ENGINES

#: settings of our sweep that NVIDIA's phase also takes (same names, same meaning)
SHARED = ("gear_ratio_tolerance", "sweep_seconds", "settle_seconds", "physics_fps")


def available() -> str:
    """ "" when NVIDIA's phase can run here, else why not (one line)."""
    try:
        import simready_benchmark.runner.test_context  # noqa: F401
        import simready_benchmark_kit_suite.articulation_phases.mimic_joint  # noqa: F401
    except ImportError as exc:
        return f"simready packages not installed ({exc.name}): pip install 'mimic-ext[simready]'"
    return ""


def add_verdicts(
    run: RunResult, progress: Any = None, on: str | None = None, stages: dict[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """Fill ``run.simready``; returns, per asset, NVIDIA's verdict as Kit's result.json dict on the
    run's first engine that it ran on (the run folder's headline result). ``on``: run NVIDIA's
    phase on this engine for every stage, whatever engine our port used (the Kit runner: Kit's own
    PhysX cannot be handed to the phase from there); ``stages``: asset -> open ``Usd.Stage`` to
    run on instead of the file (a private copy)."""
    from .phase import run_nvidia_mimic

    why = available()
    config = {k: run.config[k] for k in SHARED if k in run.config}
    kit: dict[str, dict[str, Any]] = {}
    done: dict[tuple[str, str], dict[str, Any]] = {}
    for st in run.stages:
        base, _, device = (on or st.engine).partition(":")
        entry: dict[str, Any] = {"asset": st.asset, "engine": st.engine}
        if on:
            entry["nvidia_engine"] = on
        if why or base not in ENGINES or st.status == "error":
            if st.status == "error":  # unreadable or unsweepable: exit 2 whatever NVIDIA's phase says
                why_not = f"our port could not sweep it ({st.reason or 'error'})"
            else:
                why_not = why or f"NVIDIA's phase runs here on {', '.join(ENGINES)} only, not {base}"
            entry.update(status="not_run", message=why_not)
            run.simready.append(entry)
            continue
        key = (st.asset, st.engine)
        if key not in done:
            source = (stages or {}).get(st.asset, st.asset)
            r = run_nvidia_mimic(source, base, config=config, device=device or "cpu")
            done[key] = {
                "status": r.status,
                "message": r.message,
                "headline": r.headline,
                "test": r.test_name,
                "version": r.test_version,
                "feature": r.feature,
                "engine_version": r.engine_version,
                "metrics": {k: m.get("value") for k, m in r.metrics.items()},
                "warnings": list(r.warnings),
                "failure_details": r.failure_details,
                "adapter_notes": list(r.notes),
            }
            kit.setdefault(st.asset, r.kit_result())
            if progress is not None:
                progress(st, r)
        entry.update(done[key])
        run.simready.append(entry)
    return kit
