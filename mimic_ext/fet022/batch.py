"""Many stages at once: collect them from folders, sweep them in a process pool, keep going.

Each stage runs in a worker process, so one that crashes the solver or raises cannot
stop the others; its result says what went wrong. Workers are forked from a forkserver
that has already imported USD, Warp and the solver (and, for CPU sweeps, loaded the
cached Warp kernels), so each worker starts in milliseconds; the parent itself never
imports USD or Warp, so the server's one start-up is the only one paid. As with any
``multiprocessing`` code, a script calling ``sweep_paths`` needs the
``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import MimicInputError
from .config import SweepConfig
from .result import ERROR, RunResult, SweepResult

Progress = Callable[[int, int, SweepResult], None]
PRELOAD_DEVICE_ENV = "MIMIC_EXT_FET022_PRELOAD_DEVICE"
#: schema.stage_io.USD_EXTENSIONS, repeated so that the pool's parent never imports USD
#: (a test keeps the two equal)
STAGE_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")


def collect_stages(inputs: Sequence[str | os.PathLike], recursive: bool = False) -> list[Path]:
    """USD files named directly or found in the given folders, in a stable order.

    Folders are read one level deep unless ``recursive`` (so ``data/`` does not sweep
    ``data/invalid/``); hidden files (a leading dot, e.g. an interrupted atomic save)
    are left out. A path that does not exist is kept: it becomes an error result.
    """
    out: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            walker = p.rglob("*") if recursive else p.glob("*")
            found = sorted(f for f in walker if f.is_file() and f.suffix.lower() in STAGE_SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise MimicInputError(f"{p}: no USD files (.usd, .usda, .usdc, .usdz) in this folder"
                                      + ("" if recursive else " (use --recursive to look in sub-folders)"))
            out.extend(found)
        else:
            out.append(p)
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def error_result(asset: str, reason: str, config: SweepConfig, seconds: float = 0.0) -> SweepResult:
    return SweepResult(asset=asset, status=ERROR, reason=reason, config=config.to_dict(),
                       timings={"total_s": seconds})


def sweep_one(path: str | os.PathLike, config: SweepConfig, engine: str = "warp",
              engine_options: dict[str, Any] | None = None) -> SweepResult:
    """``run`` on one file, turning every exception into an error result (never raises)."""
    from .engines import get_engine
    from .runner import run

    t0 = time.perf_counter()
    try:
        return run(path, config, get_engine(engine, **(engine_options or {})))
    except MimicInputError as exc:
        return error_result(str(path), str(exc), config, time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001  (a defect in one stage must not stop the others)
        res = error_result(str(path), f"internal error: {type(exc).__name__}: {exc}", config,
                           time.perf_counter() - t0)
        res.details = traceback.format_exc()
        return res


def _pool_context(engine_options: dict[str, Any]):
    """A forkserver context whose server preloads USD, Warp and the solver (Linux/macOS)."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    device = str(engine_options.get("device", "cpu"))
    os.environ[PRELOAD_DEVICE_ENV] = device
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["mimic_ext.fet022.preload"])
    return ctx


def _run_pool(paths: list[Path], config: SweepConfig, engine: str, options: dict[str, Any], jobs: int,
              report: Callable[[int, SweepResult], None]) -> list[int]:
    """Sweep ``paths`` (indices into the caller's list); return the indices whose worker died."""
    broken: list[int] = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_pool_context(options)) as pool:
        futures = {pool.submit(sweep_one, str(p), config, engine, options): i for i, p in enumerate(paths)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                report(i, fut.result())
            except BrokenProcessPool:
                broken.append(i)
    return broken


def sweep_paths(inputs: Sequence[str | os.PathLike], config: SweepConfig, engine: str = "warp",
                engine_options: dict[str, Any] | None = None, jobs: int | None = None,
                recursive: bool = False, progress: Progress | None = None) -> RunResult:
    """Sweep every stage in ``inputs`` (files or folders) and collect one ``RunResult``.

    ``jobs`` worker processes (default: one per CPU, at most one per stage); with one
    stage or ``jobs=1`` everything runs in this process.
    """
    t0 = time.perf_counter()
    options = dict(engine_options or {})
    paths = collect_stages(inputs, recursive)
    if not paths:
        raise MimicInputError("no stage to sweep: name USD files or folders that hold them")
    jobs = max(1, min(jobs or (os.cpu_count() or 1), len(paths)))
    results: list[SweepResult | None] = [None] * len(paths)
    done = 0

    def report(i: int, res: SweepResult) -> None:
        nonlocal done
        results[i] = res
        done += 1
        if progress:
            progress(done, len(paths), res)

    if jobs == 1:
        for i, p in enumerate(paths):
            report(i, sweep_one(p, config, engine, options))
    else:
        broken = _run_pool(paths, config, engine, options, jobs, report)
        # a worker that died takes the pool down: retry those stages one per pool, so that
        # the stage that kills its worker is named and the others still get their result
        for i in broken:
            again = _run_pool([paths[i]], config, engine, options, 1, lambda _, res, i=i: report(i, res))
            if again:
                report(i, error_result(str(paths[i]), "the worker process sweeping this stage died "
                                       "(a crash in native code); run it alone to see why", config))
    run = RunResult(stages=[r for r in results if r is not None], config=config.to_dict(),
                    wall_seconds=time.perf_counter() - t0, jobs=jobs)
    run.versions = next((s.versions for s in run.stages if s.versions), None) or {}
    return run
