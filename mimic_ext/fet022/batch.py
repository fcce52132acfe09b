"""Many stages (and engines) at once: collect them from folders, sweep them here, in a process
pool or on a Dask cluster, and keep going whatever one of them does.

A unit of work is one stage on one engine. Each runs through ``sweep_one``, which turns
every exception into an error result, so one stage cannot stop the others; with ``nvidia``
(``mimic-ext sweep``: ``simready.verdicts.UnitPhase``) NVIDIA's phase runs in the same unit,
right after ours, so it is parallel, stored and resumed with it. Where they run:

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
  unit is a task, submitted with its absolute path (workers must see the stage files at the
  same paths: a shared file system; one that cannot says so); each future is released as
  its result is reported, so a worker lost later takes no finished result with it. Workers
  lost are reported with the units they were sweeping (run again by the scheduler; one it
  gives up on is resubmitted once, then left unjudged); a lost scheduler leaves the units
  not yet finished unjudged (``RunResult.unjudged``), for ``resume`` to sweep.

With a run folder (``store``) each result is written there as it finishes (``store``), and
``resume`` reuses the stored results that still match (``fingerprint``). ``timeout`` bounds
each unit (status ``timeout``).

As with any ``multiprocessing`` code, a script calling ``sweep_paths`` with a pool needs
the ``if __name__ == "__main__":`` guard (the forkserver imports the main module).
"""

from __future__ import annotations

import ctypes
import os
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MimicInputError
from ..startup_gc import resume as resume_collection
from .config import SweepConfig
from .result import ERROR, TIMEOUT, RunResult, SweepResult

if TYPE_CHECKING:
    from .store import RunStore

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
#: ``details`` of an error that the run's environment caused, not the asset (a worker that cannot
#: see the file, a worker that died twice): such a result is stored but ``--resume`` sweeps it again
ENVIRONMENT_DETAILS = "caused by the run's environment, not the asset: --resume sweeps it again"


class UnitTimeout(BaseException):
    """Raised in the thread sweeping a unit when its time is up. Not an ``Exception``, so the
    sweep's own ``except Exception`` handlers let it through."""


def error_result(asset: str, reason: str, config: SweepConfig, seconds: float = 0.0, engine: str = "") -> SweepResult:
    return SweepResult(
        asset=asset, status=ERROR, reason=reason, config=config.to_dict(), engine=engine, timings={"total_s": seconds}
    )


def _sweep(
    path: str | os.PathLike, config: SweepConfig, engine: str, engine_options: dict[str, Any] | None
) -> SweepResult:
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


def _checkpoint() -> None:
    """A Python-level call: an asynchronous exception still pending is raised here at the latest."""


def _unit(
    path: str | os.PathLike,
    config: SweepConfig,
    engine: str,
    engine_options: dict[str, Any] | None,
    nvidia: Any,
    state: dict[str, Any],
) -> SweepResult:
    """Our port's sweep, then (``nvidia``) NVIDIA's phase on the same stage and engine; our result
    is in ``state["port"]`` while the phase runs (a timeout there keeps it)."""
    res = state["port"] = _sweep(path, config, engine, engine_options)
    if nvidia is not None:
        res.nvidia = nvidia(str(path), res)
    return res


def sweep_one(
    path: str | os.PathLike,
    config: SweepConfig,
    engine: str = "warp",
    engine_options: dict[str, Any] | None = None,
    timeout: float | None = None,
    nvidia: Any = None,
) -> SweepResult:
    """``run`` on one file with one engine, turning every exception into an error result (never raises).

    ``nvidia`` (``simready.verdicts.UnitPhase``): NVIDIA's phase runs right after, in the same
    process, its record in the result's ``nvidia``. ``timeout`` (seconds) bounds the two together:
    past it the unit is interrupted (an asynchronous ``UnitTimeout`` in the thread running it, which
    works in this process, a pool worker and a Dask worker thread alike; native code finishes its
    current call first) and the result has status ``timeout``, or, when only NVIDIA's phase was
    still running, keeps our port's verdict with NVIDIA's marked not run.
    """
    state: dict[str, Any] = {"done": False, "port": None}
    if not timeout:
        return _unit(path, config, engine, engine_options, nvidia, state)
    t0 = time.perf_counter()
    lock = threading.Lock()
    thread = threading.get_ident()

    def expire() -> None:
        with lock:
            if not state["done"]:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(UnitTimeout))

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    try:
        try:
            timer.start()
            return _unit(path, config, engine, engine_options, nvidia, state)
        finally:
            with lock:
                state["done"] = True
            timer.cancel()
            _checkpoint()
    except UnitTimeout:
        res = state["port"] or SweepResult(
            asset=str(path),
            status=TIMEOUT,
            reason=f"not finished within the per-asset timeout of {timeout:g} s (sweep --timeout)",
            config=config.to_dict(),
            engine=engine,
            timings={"total_s": time.perf_counter() - t0},
        )
        if nvidia is not None:
            res.nvidia = nvidia.timed_out(timeout, res)
        return res


def sweep_on_worker(
    path: str,
    config: SweepConfig,
    engine: str,
    engine_options: dict[str, Any],
    timeout: float | None,
    nvidia: Any = None,
) -> SweepResult:
    """``sweep_one`` on a Dask worker: a file the client could read but this worker cannot see is
    said to be so (a cluster without a shared file system), not blamed on the asset."""
    if not os.path.isfile(path):
        res = error_result(
            path,
            f"{path}: not found on Dask worker {socket.gethostname()} (pid {os.getpid()}), though the client "
            "can read it: workers must see the stage files at the same absolute paths (a shared file system)",
            config,
            engine=engine,
        )
        res.details = ENVIRONMENT_DETAILS
        return res
    return sweep_one(path, config, engine, engine_options, timeout, nvidia)


Unit = tuple[Path, str]  # (stage, engine label)
Report = Callable[[int, SweepResult], None]  # (unit index, its result)
Lost = Callable[[int, str], None]  # (unit index, why it got no verdict)


class _Outcome:
    """What happened to the run itself: units run again, workers lost."""

    def __init__(self) -> None:
        self.retried = 0
        self.workers_lost: list[dict[str, Any]] = []


# ----------------------------------------------------------------------------- local pool
def _pool_context(engine_options: dict[str, Any], nvidia: Any = None):
    """A forkserver context whose server preloads USD, Warp and the solver (Linux/macOS), and
    what NVIDIA's phase imports when the units run it (``nvidia.preload``: each worker would
    otherwise import it again)."""
    import multiprocessing as mp  # here: a sweep that stays in its process never starts a pool

    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    device = str(engine_options.get("device", "cpu"))
    os.environ[PRELOAD_DEVICE_ENV] = device
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["mimic_ext.fet022.preload", *getattr(nvidia, "preload", ())])
    return ctx


def _pool_once(
    units: list[tuple[int, Unit]],
    config: SweepConfig,
    options: dict[str, Any],
    jobs: int,
    timeout: float | None,
    report: Report,
    nvidia: Any = None,
) -> list[int]:
    """Sweep ``units`` in one pool; return the indices whose worker died."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    broken: list[int] = []
    with ProcessPoolExecutor(
        max_workers=max(1, min(jobs, len(units))), mp_context=_pool_context(options, nvidia)
    ) as pool:
        futures = {pool.submit(sweep_one, str(u[0]), config, u[1], options, timeout, nvidia): i for i, u in units}
        for fut in as_completed(futures):
            i = futures.pop(fut)
            try:
                report(i, fut.result())
            except BrokenProcessPool:
                broken.append(i)
    return broken


def _run_pool(
    units: list[tuple[int, Unit]],
    config: SweepConfig,
    options: dict[str, Any],
    jobs: int,
    timeout: float | None,
    report: Report,
    outcome: _Outcome,
    nvidia: Any = None,
) -> None:
    from .isolation import Isolated

    broken = _pool_once(units, config, options, jobs, timeout, report, nvidia)
    # a worker that died takes the pool down: retry those units each in a worker of its own, so
    # that the one that kills its worker is named, with the signal, and the others get their result
    by_index = dict(units)
    outcome.retried += len(broken)
    with Isolated(options, nvidia) as alone:
        for i in broken:
            report(i, alone.sweep(by_index[i][0], config, by_index[i][1], timeout))


def _run_local(
    units: list[tuple[int, Unit]],
    config: SweepConfig,
    options: dict[str, Any],
    jobs: int | None,
    timeout: float | None,
    report: Report,
    outcome: _Outcome,
    isolate_alone: bool = False,
    nvidia: Any = None,
) -> int:
    """Here while it pays, then (``jobs`` allowing) the rest in a pool; returns the processes used.

    The decision needs a measured stage: the first runs here, and the pool is started only when the
    fastest stage so far says the ones left would take longer here than the pool's start-up costs."""
    cpus = os.cpu_count() or 1
    pool_jobs = max(1, min(jobs or cpus, len(units)))
    if pool_jobs > 1 and jobs is not None:
        _run_pool(units, config, options, pool_jobs, timeout, report, outcome, nvidia)
        return pool_jobs
    from .isolation import Isolated, isolated_engines

    # engines in workers of their own, so that one's crash leaves the others' results (isolation)
    apart = isolated_engines((u[1] for _, u in units), alone=isolate_alone)
    isolated = Isolated(options, nvidia) if apart else None
    fastest: float | None = None
    try:
        for n, (i, unit) in enumerate(units):
            left = len(units) - n
            if (
                pool_jobs > 1
                and left > 1
                and fastest is not None
                and fastest * left > POOL_STARTUP_S * pool_jobs / (pool_jobs - 1)
            ):
                _run_pool(units[n:], config, options, pool_jobs, timeout, report, outcome, nvidia)
                return pool_jobs
            started = time.perf_counter()
            if isolated is not None and unit[1] in apart:
                res = isolated.sweep(unit[0], config, unit[1], timeout)
            else:
                res = sweep_one(unit[0], config, unit[1], options, timeout, nvidia)
            took = time.perf_counter() - started  # the whole unit: our sweep and NVIDIA's phase

            fastest = took if fastest is None else min(fastest, took)
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


def _workers_lost(client, since: float, keys: dict[str, int], units: dict[int, Unit]) -> list[dict[str, Any]]:
    """The scheduler's record of workers removed since ``since`` and which of our units each was
    running (the scheduler runs those again elsewhere) or held finished (recomputed)."""
    try:
        events = client.get_events("all")
    except Exception:  # the scheduler is gone: nothing more to learn
        return []
    out = []
    for stamp, msg in events:
        if stamp < since or not isinstance(msg, dict) or msg.get("action") != "remove-worker":
            continue
        ours = [k for k in (*msg.get("processing-tasks", ()), *msg.get("lost-computed-tasks", ())) if k in keys]
        out.append(
            {
                "worker": str(msg.get("worker", "?")),
                "expected": bool(msg.get("expected", False)),
                "units": [f"{units[keys[k]][0]} [{units[keys[k]][1]}]" for k in ours],
                "indices": sorted({keys[k] for k in ours}),
            }
        )
    return out


def _run_dask(
    todo: list[tuple[int, Unit]],
    config: SweepConfig,
    options: dict[str, Any],
    scheduler,
    timeout: float | None,
    report: Report,
    lost: Lost,
    outcome: _Outcome,
    nvidia: Any = None,
) -> int:
    """Every unit a task; each future is released as soon as its result is reported (stored), so a
    worker lost later takes no finished result with it. A task whose worker died is run again by
    the scheduler (``distributed.scheduler.allowed-failures``) and, once it gives up, resubmitted
    here once, then left unjudged; the losses are reported as such. A lost scheduler leaves the
    units not yet reported unjudged (``lost``), never failed."""
    from distributed import KilledWorker
    from distributed import as_completed as dask_completed

    client, owned = _dask_client(scheduler)
    since = time.time()
    units = dict(todo)
    all_keys: dict[str, int] = {}
    try:
        run_id = uuid.uuid4().hex[:8]
        tries = dict.fromkeys(units, 0)
        rerun: set[int] = set()

        def submit(i: int):
            fut = client.submit(
                sweep_on_worker,
                os.path.abspath(units[i][0]),
                config,
                units[i][1],
                options,
                timeout,
                nvidia,
                pure=False,
                key=f"fet022-{run_id}-{i}-{tries[i]}",
            )
            all_keys[fut.key] = i
            return fut

        pending = dask_completed([submit(i) for i in units])
        gone = ""
        for fut in pending:
            i = all_keys[fut.key]
            try:
                if gone:
                    raise RuntimeError(gone)
                res = fut.result()
            except KilledWorker:
                if tries[i] == 0:
                    tries[i] = 1
                    rerun.add(i)
                    pending.add(submit(i))
                    continue
                # a worker loss, not a verdict: the asset may crash its engine, or the machine may be
                # short of memory; left unjudged (resumable), with what to do
                lost(
                    i,
                    "the Dask workers sweeping this stage died each time it was tried (a crash in native "
                    "code, or a worker out of memory): no verdict; sweep it alone (--executor local) to see why",
                )
                continue
            except Exception as exc:  # the scheduler (or the connection to it) is gone
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                gone = gone or f"the Dask scheduler was lost before this unit finished ({reason})"
                lost(i, gone)
                continue
            finally:
                fut.release()
                del fut
            report(i, res)
        lost_workers = _workers_lost(client, since, all_keys, units)
        for w in lost_workers:
            rerun.update(w.pop("indices"))
        outcome.workers_lost = lost_workers
        outcome.retried += len(rerun)  # units run more than once, each counted once
        try:
            workers = len(client.scheduler_info().get("workers", {})) or 1
        except Exception:
            workers = 1
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
    store: str | os.PathLike | RunStore | None = None,
    resume: bool = False,
    timeout: float | None = None,
    isolate_alone: bool = False,
    nvidia: Any = None,
) -> RunResult:
    """Sweep every stage in ``inputs`` (files or folders) with every engine in ``engine``.

    ``config``: a ``SweepConfig``, a mapping of overrides, a YAML path, or None (defaults).
    ``engine``: a name or a list of names (``"warp,physx"`` also works); each gets its own
    result per stage. ``jobs``: None decides by itself (see the module docs), 1 sweeps
    here, N > 1 uses a pool of N (local executor only). ``executor="dask"`` with ``scheduler``
    (an address or a ``distributed.Client``) runs the units on a Dask cluster. ``progress(done,
    total, result)`` is called as each unit finishes (``total``: the units swept, not reused).
    Several engines each sweep in a worker process of their own (``isolation``); ``isolate_alone``
    does that for physx, newton or mujoco alone too (``mimic-ext sweep`` does; a script then needs
    the ``if __name__ == "__main__":`` guard).

    ``store``: a run folder (``store.RunStore``): each result is written there as it finishes,
    with its samples (the returned results then hold none), and the run recorded at the end; a
    ``RunStore`` handed in is left for its caller to ``finish`` (with what it adds). ``resume``: reuse the results stored
    there whose content, configuration, engine and tool version match (``fingerprint``).
    ``timeout``: seconds per unit, past which it is reported with status ``timeout``.
    ``nvidia`` (``simready.verdicts.UnitPhase``): NVIDIA's phase runs in each unit, right after
    ours, wherever the unit runs; its record (``SweepResult.nvidia``) is stored with the unit and
    reused by ``resume`` only while ``nvidia.key()`` (NVIDIA's test and releases) is unchanged:
    a unit stored without it, or under another key, is swept again.
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
    if executor == "dask" and jobs is not None:
        raise MimicInputError(
            "--jobs is for the local executor: on a Dask cluster the workers set how many stages run at once "
            "(dask worker --nworkers N --nthreads 1)"
        )
    if resume and store is None:
        raise MimicInputError("resume needs the run folder to resume (--resume RUN_DIR)")
    if timeout is not None and not (0 < timeout < float("inf")):
        raise MimicInputError(f"the per-asset timeout must be a positive number of seconds, got {timeout}")
    for e in dict.fromkeys(engines):
        check_engine(e)
    options = dict(engine_options or {})
    paths = collect_stages(inputs, recursive)
    if not paths:
        raise MimicInputError("no stage to sweep: name USD files or folders that hold them")
    engines = list(dict.fromkeys(engines))
    units: list[Unit] = [(p, e) for p in paths for e in engines]
    labels = [str(p) for p, _ in units]
    results: list[SweepResult | None] = [None] * len(units)
    unjudged: list[dict[str, str]] = []
    todo = list(range(len(units)))
    reused = 0

    run_store = None
    if store is not None:
        from .fingerprint import content_hash, reusable, unit_key
        from .store import RunStore, load_result, reusable_nvidia

        absolute = {p: os.path.abspath(p) for p in paths}
        # a store handed in is finished by whoever opened it (the CLI, after NVIDIA's verdicts)
        run_store = store if isinstance(store, RunStore) else RunStore.for_run(store, list(absolute.values()), resume)
        asset_keys = {p: run_store.key(absolute[p]) for p in paths}
        cfg_dict = cfg.to_dict()
        contents = {p: content_hash(absolute[p]) for p in paths}  # every layer's bytes read once a stage
        resume_keys = [unit_key(contents[p], cfg_dict, e) for p, e in units]
        if resume:
            todo = []
            nvidia_key = nvidia.key() if nvidia is not None else None
            for i, (p, e) in enumerate(units):
                record = run_store.stored(asset_keys[p], e)
                if (
                    record
                    and record.get("reusable")
                    and reusable(record.get("resume_key"), resume_keys[i])
                    and (nvidia is None or reusable_nvidia(record.get("nvidia"), nvidia_key))
                ):
                    res = results[i] = load_result(record)
                    res.asset = labels[i]
                    res.drop_samples()
                    if nvidia is None:
                        res.nvidia = None  # not asked for in this run (--no-simready)
                    reused += 1
                else:
                    todo.append(i)
        run_store.begin(
            [
                {"asset": labels[i], "path": absolute[p], "key": asset_keys[p], "engine": e}
                for i, (p, e) in enumerate(units)
            ],
            cfg_dict,
            engines,
        )
    done = 0

    def report(i: int, res: SweepResult) -> None:
        nonlocal done
        resume_collection()  # the CLI held the garbage collector off for the start-up (startup_gc)
        path = os.path.abspath(units[i][0])
        if res.asset != labels[i]:  # a worker saw the absolute path: report the stage as it was named
            res.reason = res.reason.replace(path, labels[i])
            res.asset = labels[i]
            if res.nvidia is not None:
                verdict = res.nvidia["verdict"]
                verdict["message"] = str(verdict.get("message", "")).replace(path, labels[i])
        if run_store is not None:
            keep = res.status != TIMEOUT and res.details != ENVIRONMENT_DETAILS
            p, e = units[i]
            run_store.store(res, asset_keys[p], resume_keys[i], keep, headline=e == engines[0])
            res.drop_samples()
        if results[i] is None:
            done += 1
        results[i] = res
        if progress:
            progress(done, len(todo), res)

    def lost(i: int, reason: str) -> None:
        unjudged.append({"asset": labels[i], "engine": units[i][1], "reason": reason})

    outcome = _Outcome()
    pending = [(i, units[i]) for i in todo]
    used = 1
    if executor == "dask" and pending:
        # a file the client cannot read is its error here, at once; the rest go to the cluster
        here = [(i, u) for i, u in pending if not os.access(u[0], os.R_OK) or not os.path.isfile(u[0])]
        for i, u in here:
            report(i, sweep_one(u[0], cfg, u[1], options, nvidia=nvidia))
        remote = [(i, u) for i, u in pending if (i, u) not in here]
        if remote:
            used = _run_dask(remote, cfg, options, scheduler, timeout, report, lost, outcome, nvidia)
    elif pending:
        used = _run_local(pending, cfg, options, jobs, timeout, report, outcome, isolate_alone, nvidia)
    run = RunResult(
        stages=[r for r in results if r is not None],
        config=cfg.to_dict(),
        wall_seconds=time.perf_counter() - t0,
        jobs=used,
        retried=outcome.retried,
        executor=executor,
        reused=reused,
        unjudged=unjudged,
        workers_lost=outcome.workers_lost,
    )
    run.versions = next((s.versions for s in run.stages if s.versions), {})
    if run_store is not None and run_store is not store:
        run_store.finish(run)
    return run
