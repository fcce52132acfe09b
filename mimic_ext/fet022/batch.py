"""Many stages (and engines) at once: collect them from folders, sweep them here, in a process
pool or on a Dask cluster, and keep going whatever one of them does.

A unit of work is one stage on one engine. Each runs through ``sweep_one``, which turns
every exception into an error result, so one stage cannot stop the others. Where they run:

* here, one after the other, while that is fastest: a pool costs a start-up
  (``POOL_STARTUP_S``, measured by ``benchmarks/sweep_time.py``) that a few small stages never
  win back; once the stages swept so far say the rest would take longer than the pool's
  break-even, the remaining ones go to the pool (``jobs=None``, the default; ``jobs=N > 1``
  always uses a pool, ``jobs=1`` never);
* in a process pool forked from a forkserver that has already imported USD, Warp and the
  solver (and, for CPU sweeps, loaded the cached kernels); a worker that dies is retried
  alone once, in a worker of its own (``isolation``), then reported as that engine's crash;
* with several engines (and, from ``mimic-ext sweep``, physx, newton or mujoco alone) each
  engine sweeps in a worker process of its own (``isolation``), so one engine's native crash
  leaves the others' results and the reports;
* on a Dask cluster (``executor="dask"``, ``scheduler=ADDRESS``; the ``dask`` extra): each
  unit is a task; a unit whose worker died is resubmitted once, then reported as an
  error. Workers must see the stage files at the same paths (a shared file system).

As with any ``multiprocessing`` code, a script calling ``sweep_paths`` with a pool needs
the ``if __name__ == "__main__":`` guard (the forkserver imports the main module).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from ..errors import MimicInputError
from .config import SweepConfig
from .result import ERROR, RunResult, SweepResult

Progress = Callable[[int, int, SweepResult], None]
PRELOAD_DEVICE_ENV = "MIMIC_EXT_FET022_PRELOAD_DEVICE"
#: schema.stage_io.USD_EXTENSIONS, repeated so that ``mimic-ext --help`` never imports USD
#: (a test keeps the two equal)
STAGE_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
#: Seconds a process pool takes to start and load USD, Warp and the solver kernels in its
#: workers (2-core CPU machine; benchmarks/sweep_time.py prints the figure it is based on).
POOL_STARTUP_S = 1.0
EXECUTORS = ("local", "dask")
#: Test-only: ``ENGINE[:SIGNAL]`` makes ``sweep_one`` on ENGINE kill its process with SIGNAL (default
#: SIGKILL) before sweeping, as a crash in that engine's native code would (``isolation``).
CRASH_ENV = "MIMIC_EXT_FET022_TEST_CRASH"


# ----------------------------------------------------------------------------- collection
def _dependencies(path: Path) -> set[Path]:
    """The layers ``path`` pulls in (sublayers, references, payloads), resolved beside it."""
    from pxr import Sdf, UsdUtils

    from ..input_files import check_regular_file

    try:
        check_regular_file(path, "stage")
        sublayers, references, payloads = UsdUtils.ExtractExternalReferences(str(path))
    except Exception:
        return set()
    layer_dir = path.parent
    out = set()
    for asset in [*sublayers, *references, *payloads]:
        asset = str(asset)
        if not asset or Sdf.Layer.IsAnonymousLayerIdentifier(asset):
            continue
        target = Path(asset) if os.path.isabs(asset) else layer_dir / asset
        try:
            out.add(target.resolve())
        except OSError:
            continue
    return out


def roots_only(files: list[Path]) -> list[Path]:
    """``files`` less every one that another of them composes in (as a sublayer, reference or
    payload): NVIDIA converter folders hold ``Payload/Physics.usda`` and the like, which are
    parts of the asset, not stages. A group that only composes itself (a cycle) keeps its
    first file."""
    if len(files) < 2:
        return files
    resolved = {f: f.resolve() for f in files}
    inside = set(resolved.values())
    used_by: dict[Path, set[Path]] = {}
    for f in files:
        for dep in _dependencies(f) & inside:
            if dep != resolved[f]:
                used_by.setdefault(dep, set()).add(resolved[f])
    keep = [f for f in files if resolved[f] not in used_by]
    covered: set[Path] = set()
    stack = [resolved[f] for f in keep]
    deps_of = {resolved[f]: _dependencies(f) & inside for f in files} if len(keep) < len(files) else {}
    while stack:
        p = stack.pop()
        if p in covered:
            continue
        covered.add(p)
        stack.extend(deps_of.get(p, ()))
    for f in files:  # members of a cycle nobody outside it composes
        if resolved[f] not in covered:
            keep.append(f)
            stack = [resolved[f]]
            while stack:
                p = stack.pop()
                if p not in covered:
                    covered.add(p)
                    stack.extend(deps_of.get(p, ()))
    order = {f: i for i, f in enumerate(files)}
    return sorted(keep, key=order.__getitem__)


def collect_stages(inputs: Sequence[str | os.PathLike], recursive: bool = False) -> list[Path]:
    """USD files named directly or found in the given folders, in a stable order.

    Folders are read one level deep unless ``recursive`` (so ``data/`` does not sweep
    ``data/invalid/``); hidden files (a leading dot, e.g. an interrupted atomic save)
    are left out, and so is a file that another file of the same folder composes in
    (``roots_only``). A file named directly is always swept; one that does not exist is
    kept: it becomes an error result.
    """
    out: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            walker = p.rglob("*") if recursive else p.glob("*")
            found = sorted(
                f
                for f in walker
                if f.is_file()
                and f.suffix.lower() in STAGE_SUFFIXES
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            if not found:
                raise MimicInputError(
                    f"{p}: no USD files (.usd, .usda, .usdc, .usdz) in this folder"
                    + ("" if recursive else " (use --recursive to look in sub-folders)")
                )
            out.extend(roots_only(found))
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


# ----------------------------------------------------------------------------- one unit
def error_result(asset: str, reason: str, config: SweepConfig, seconds: float = 0.0, engine: str = "") -> SweepResult:
    return SweepResult(
        asset=asset, status=ERROR, reason=reason, config=config.to_dict(), engine=engine, timings={"total_s": seconds}
    )


def sweep_one(
    path: str | os.PathLike, config: SweepConfig, engine: str = "warp", engine_options: dict[str, Any] | None = None
) -> SweepResult:
    """``run`` on one file with one engine, turning every exception into an error result (never raises)."""
    t0 = time.perf_counter()
    if os.environ.get(CRASH_ENV):
        from .isolation import crash_if_asked

        crash_if_asked(engine)
    try:
        from .engines import get_engine
        from .runner import run

        return run(path, config, get_engine(engine, **(engine_options or {})), label=engine)
    except MimicInputError as exc:
        return error_result(str(path), str(exc), config, time.perf_counter() - t0, engine)
    except Exception as exc:
        res = error_result(
            str(path), f"internal error: {type(exc).__name__}: {exc}", config, time.perf_counter() - t0, engine
        )
        res.details = traceback.format_exc()
        return res


Unit = tuple[Path, str]  # (stage, engine label)
Report = Callable[[int, SweepResult], None]  # (unit index, its result)


class _Retries:
    """How many units were run again after their worker died."""

    count = 0


def _died(unit: Unit, config: SweepConfig, where: str) -> SweepResult:
    return error_result(
        str(unit[0]),
        f"the {where} sweeping this stage died twice (a crash in native code, or "
        f"the machine ran out of memory); run it alone to see why",
        config,
        engine=unit[1],
    )


# ----------------------------------------------------------------------------- local pool
def _pool_context(engine_options: dict[str, Any]):
    """A forkserver context whose server preloads USD, Warp and the solver (Linux/macOS)."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    device = str(engine_options.get("device", "cpu"))
    os.environ[PRELOAD_DEVICE_ENV] = device
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["mimic_ext.fet022.preload"])
    return ctx


def _pool_once(
    units: list[tuple[int, Unit]], config: SweepConfig, options: dict[str, Any], jobs: int, report: Report
) -> list[int]:
    """Sweep ``units`` in one pool; return the indices whose worker died."""
    broken: list[int] = []
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(units))), mp_context=_pool_context(options)) as pool:
        futures = {pool.submit(sweep_one, str(u[0]), config, u[1], options): i for i, u in units}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                report(i, fut.result())
            except BrokenProcessPool:
                broken.append(i)
    return broken


def _run_pool(
    units: list[tuple[int, Unit]], config: SweepConfig, options: dict[str, Any], jobs: int, report: Report
) -> None:
    from .isolation import Isolated

    broken = _pool_once(units, config, options, jobs, report)
    # a worker that died takes the pool down: retry those units each in a worker of its own, so
    # that the one that kills its worker is named, with the signal, and the others get their result
    by_index = dict(units)
    _Retries.count += len(broken)
    with Isolated(options) as alone:
        for i in broken:
            report(i, alone.sweep(by_index[i][0], config, by_index[i][1]))


def _run_local(
    units: list[Unit],
    config: SweepConfig,
    options: dict[str, Any],
    jobs: int | None,
    report: Report,
    isolate_alone: bool = False,
) -> int:
    """Here while it pays, then (``jobs`` allowing) the rest in a pool; returns the processes used."""
    cpus = os.cpu_count() or 1
    pool_jobs = max(1, min(jobs or cpus, len(units)))
    if pool_jobs > 1 and jobs is not None:
        _run_pool(list(enumerate(units)), config, options, pool_jobs, report)
        return pool_jobs
    from .isolation import Isolated, isolated_engines

    # engines in workers of their own, so that one's crash leaves the others' results (isolation)
    apart = isolated_engines((u[1] for u in units), alone=isolate_alone)
    isolated = Isolated(options) if apart else None
    fastest = float("inf")
    try:
        for i, unit in enumerate(units):
            left = len(units) - i
            if pool_jobs > 1 and left > 1 and fastest * left > POOL_STARTUP_S * pool_jobs / (pool_jobs - 1):
                _run_pool(list(enumerate(units))[i:], config, options, pool_jobs, report)
                return pool_jobs
            if isolated is not None and unit[1] in apart:
                res = isolated.sweep(unit[0], config, unit[1])
            else:
                res = sweep_one(unit[0], config, unit[1], options)
            fastest = min(fastest, res.timings.get("total_s", 0.0))
            report(i, res)
    finally:
        if isolated is not None:
            isolated.close()
    return 1


# ----------------------------------------------------------------------------- Dask
def _dask_client(scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise MimicInputError("--executor dask needs dask.distributed: pip install 'mimic-ext[dask]'") from None
    if scheduler is None:
        raise MimicInputError("--executor dask needs --scheduler ADDRESS (e.g. tcp://scheduler:8786)")
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout="20s"), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise MimicInputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None


def _run_dask(units: list[Unit], config: SweepConfig, options: dict[str, Any], scheduler, report: Report) -> int:
    from distributed import as_completed as dask_completed

    client, owned = _dask_client(scheduler)
    try:
        run_id = uuid.uuid4().hex[:8]
        tries = dict.fromkeys(range(len(units)), 0)

        def submit(i: int):
            return client.submit(
                sweep_one,
                str(units[i][0]),
                config,
                units[i][1],
                options,
                pure=False,
                key=f"fet022-{run_id}-{i}-{tries[i]}",
            )

        futures: dict[str, int] = {}
        held = []  # a future nobody holds is released by Dask
        for i in range(len(units)):
            held.append(submit(i))
            futures[held[-1].key] = i
        pending = dask_completed(held)
        for fut in pending:
            i = futures[fut.key]
            try:
                res = fut.result()
            except Exception:
                if tries[i] == 0:
                    tries[i] = 1
                    _Retries.count += 1
                    held.append(submit(i))
                    futures[held[-1].key] = i
                    pending.add(held[-1])
                    continue
                res = _died(units[i], config, "Dask worker")
            report(i, res)
        workers = len(client.scheduler_info().get("workers", {})) or 1
    finally:
        if owned:
            client.close()
    return workers


# ----------------------------------------------------------------------------- the run
def sweep_paths(
    inputs: Sequence[str | os.PathLike],
    config: SweepConfig | None = None,
    engine: str | Sequence[str] = "warp",
    engine_options: dict[str, Any] | None = None,
    jobs: int | None = None,
    recursive: bool = False,
    progress: Progress | None = None,
    executor: str = "local",
    scheduler=None,
    isolate_alone: bool = False,
) -> RunResult:
    """Sweep every stage in ``inputs`` (files or folders) with every engine in ``engine``.

    ``config``: a ``SweepConfig``, a mapping of overrides, a YAML path, or None (defaults).
    ``engine``: a name or a list of names (``"warp,physx"`` also works); each gets its own
    result per stage. ``jobs``: None decides by itself (see the module docs), 1 sweeps
    here, N > 1 uses a pool of N. ``executor="dask"`` with ``scheduler`` (an address or a
    ``distributed.Client``) runs the units on a Dask cluster. ``progress(done, total,
    result)`` is called as each unit finishes. Several engines each sweep in a worker process of
    their own (``isolation``); ``isolate_alone`` does that for physx, newton or mujoco alone too
    (``mimic-ext sweep`` does; a script then needs the ``if __name__ == "__main__":`` guard).
    """
    from .config import as_config
    from .engines import check_engine

    t0 = time.perf_counter()
    cfg = as_config(config)
    engines = [e.strip() for e in (engine.split(",") if isinstance(engine, str) else engine) if e.strip()]
    if not engines:
        raise MimicInputError("no sweep engine named")
    if executor not in EXECUTORS:
        raise MimicInputError(f"unknown executor '{executor}' (choose {' or '.join(EXECUTORS)})")
    for e in dict.fromkeys(engines):
        check_engine(e)
    options = dict(engine_options or {})
    paths = collect_stages(inputs, recursive)
    if not paths:
        raise MimicInputError("no stage to sweep: name USD files or folders that hold them")
    units: list[Unit] = [(p, e) for p in paths for e in dict.fromkeys(engines)]
    results: list[SweepResult | None] = [None] * len(units)
    done = 0

    def report(i: int, res: SweepResult) -> None:
        nonlocal done
        if results[i] is None:
            done += 1
        results[i] = res
        if progress:
            progress(done, len(units), res)

    _Retries.count = 0
    if executor == "dask":
        used = _run_dask(units, cfg, options, scheduler, report)
    else:
        used = _run_local(units, cfg, options, jobs, report, isolate_alone)
    run = RunResult(
        stages=[r for r in results if r is not None],
        config=cfg.to_dict(),
        wall_seconds=time.perf_counter() - t0,
        jobs=used,
        retried=_Retries.count,
    )
    run.versions = next((s.versions for s in run.stages if s.versions), {})
    return run
