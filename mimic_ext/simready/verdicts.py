"""NVIDIA's verdicts for a sweep: its phase run on every stage and engine of a ``RunResult``.

Per stage and engine NVIDIA's phase runs once on the same engine (warp, physx, mujoco, newton; the
port's engine label ``warp:cuda:0`` runs warp on that device, ``newton:xpbd`` runs the phase on
Newton's Steel solver, ``newton_backend``) with the settings both share
(``gear_ratio_tolerance``, ``sweep_seconds``, ``settle_seconds``, ``physics_fps``). Engines the
adapter does not drive get a ``not_run`` entry saying so; their cells keep our port's verdict.
Without the simready packages nothing is run and the run says so.

Where it runs: ``mimic-ext sweep`` hands ``UnitPhase`` to ``fet022.batch.sweep_paths``, so the
phase runs inside each unit of work, right after our port, wherever the unit runs (here, a pool
worker, a Dask worker): a catalogue's second pass (1-5 s per stage and engine) is parallel with
the first, stored with the unit's result in the run folder (``fet022.store``) and reused by
``--resume`` while ``phase_key`` (NVIDIA's test and the installed releases) is unchanged.
``add_verdicts`` then only collects the stored verdicts into ``RunResult.simready``; it runs the
phase itself for a stage whose unit did not (the Kit in-stage runner's one stage).
"""

from __future__ import annotations

from typing import Any

from ..fet022 import identity as _identity
from ..fet022.result import ERROR, TIMEOUT, RunResult, SweepResult
from .backends import ENGINES

#: settings of our sweep that NVIDIA's phase also takes (same names, same meaning)
SHARED = ("gear_ratio_tolerance", "sweep_seconds", "settle_seconds", "physics_fps")
#: the releases NVIDIA's phase comes from: tier-core holds the phase and the test's declaration,
#: simready-benchmark the run context it reports through
RELEASES = ("simready-foundation-tier-core", "simready-benchmark")
NOT_RUN = "not_run"


def available() -> str:
    """ "" when NVIDIA's phase can run here, else why not (one line)."""
    try:
        import simready_benchmark.runner.test_context  # noqa: F401
        import simready_benchmark_kit_suite.articulation_phases.mimic_joint  # noqa: F401
    except ImportError as exc:
        return f"simready packages not installed ({exc.name}): pip install 'mimic-ext[simready]'"
    return ""


def installed_release(distribution: str) -> str | None:
    """The installed version of ``distribution``, None when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def phase_key() -> dict[str, Any]:
    """What a stored NVIDIA verdict depends on beyond its unit's own resume key (stage bytes,
    configuration, engine, mimic-ext version): the test's declared name and version and the
    installed releases. A new NVIDIA release changes it, so ``--resume`` runs the phase again."""
    ident = _identity.identity()
    return {"test": ident.name, "version": ident.version, **{d: installed_release(d) for d in RELEASES}}


def _not_run(message: str) -> dict[str, Any]:
    return {"status": NOT_RUN, "message": message}


def _why_not(stage: SweepResult, engine: str, why: str) -> str:
    """Why NVIDIA's phase is not run on ``stage`` with ``engine`` ("" when it is)."""
    if stage.status == ERROR:  # unreadable or unsweepable: exit 2 whatever NVIDIA's phase says
        return f"our port could not sweep it ({stage.reason or 'error'})"
    if why or engine.partition(":")[0] not in ENGINES:
        return why or f"NVIDIA's phase runs here on {', '.join(ENGINES)} only, not {engine.partition(':')[0]}"
    return ""


def _run_phase(source: Any, engine: str, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """NVIDIA's phase on ``source`` (a path or an open stage): its verdict as ``RunResult.simready``
    holds it, Kit's result.json dict, and the ``PhaseResult``."""
    from .phase import run_nvidia_mimic

    base, _, device = engine.partition(":")
    r = run_nvidia_mimic(source, base, config={k: config[k] for k in SHARED if k in config}, device=device or "cpu")
    verdict = {
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
    return verdict, r.kit_result(), r


class UnitPhase:
    """NVIDIA's phase as the second step of a sweep's unit of work (``fet022.batch.sweep_one``):
    called with the stage and our port's result, in the process that swept it; returns the record
    the run folder stores beside that result (``SweepResult.nvidia``): ``key`` (``phase_key``),
    ``reusable``, ``verdict`` (``RunResult.simready``'s entry less asset and engine) and ``kit``
    (Kit's result.json dict, None when the phase did not run). Never raises (a unit never does).
    Picklable: it travels to pool and Dask workers."""

    #: modules a pool's forkserver imports once for its workers (``fet022.batch._pool_context``)
    preload = ("mimic_ext.simready.preload",)

    def key(self) -> dict[str, Any]:
        return phase_key()

    def __call__(self, path: str, stage: SweepResult) -> dict[str, Any]:
        key = phase_key()
        why = _why_not(stage, stage.engine, available())
        if why:
            return {"key": key, "reusable": True, "verdict": _not_run(why), "kit": None}
        try:
            verdict, kit, _r = _run_phase(path, stage.engine, stage.config)
        except Exception as exc:  # a file the phase refuses (MimicInputError) or a bug: no verdict, said so
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return {"key": key, "reusable": False, "verdict": _not_run(f"NVIDIA's phase raised: {detail}"), "kit": None}
        return {"key": key, "reusable": True, "verdict": verdict, "kit": kit}

    def timed_out(self, timeout: float, stage: SweepResult) -> dict[str, Any]:
        """The record of a unit whose time ran out: before our port finished (``stage`` timed out),
        or in NVIDIA's phase; never reused (``--resume`` runs the unit again)."""
        which = "our port's sweep" if stage.status == TIMEOUT else "NVIDIA's phase"
        message = f"{which} did not finish within the per-asset timeout of {timeout:g} s (sweep --timeout)"
        return {"key": phase_key(), "reusable": False, "verdict": _not_run(message), "kit": None}


def add_verdicts(
    run: RunResult, progress: Any = None, on: str | None = None, stages: dict[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """Fill ``run.simready``; returns, per asset, NVIDIA's verdict as Kit's result.json dict on the
    run's first engine that it ran on (the run folder's headline result). A stage whose unit ran
    the phase (``SweepResult.nvidia``) gives its verdict as it is; the phase runs here for the
    others. ``on``: run NVIDIA's phase on this engine for every stage, whatever engine our port
    used (the Kit runner: Kit's own PhysX cannot be handed to the phase from there); ``stages``:
    asset -> open ``Usd.Stage`` to run on instead of the file (a private copy)."""
    why = available()
    kit: dict[str, dict[str, Any]] = {}
    done: dict[tuple[str, str], dict[str, Any]] = {}
    for st in run.stages:
        entry: dict[str, Any] = {"asset": st.asset, "engine": st.engine}
        if on:
            entry["nvidia_engine"] = on
        if st.nvidia is not None and not on:  # its unit of work ran the phase (or said why not)
            entry.update(st.nvidia["verdict"])
            if st.nvidia.get("kit") and entry["status"] != NOT_RUN:
                kit.setdefault(st.asset, dict(st.nvidia["kit"]))
            run.simready.append(entry)
            continue
        why_not = _why_not(st, on or st.engine, why)
        if why_not:
            entry.update(_not_run(why_not))
            run.simready.append(entry)
            continue
        key = (st.asset, on or st.engine)  # with ``on``, one phase run serves every engine's stage
        if key not in done:
            source = (stages or {}).get(st.asset, st.asset)
            done[key], kit_result, r = _run_phase(source, on or st.engine, run.config)
            kit.setdefault(st.asset, kit_result)
            if progress is not None:
                progress(st, r)
        entry.update(done[key])
        run.simready.append(entry)
    return kit
