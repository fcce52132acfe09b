"""Each engine of a multi-engine sweep in a worker process of its own.

Three of the four engines run native code we do not own (PhysX, Newton's kernels, MuJoCo's C
library); one that crashes (PhysX's SIGBUS on NVIDIA's converter output of the Inspire hand)
would take the whole run down with it, and with it every other engine's results and reports.
Here a crash is that engine's ``error`` result, naming the signal, the engine and the asset,
and the run goes on: the next stage on that engine gets a fresh worker.

One worker per engine, kept for the engine's stages (Newton's import and ovphysx's start are
paid once, not per stage), forked from the pool's forkserver (``batch._pool_context``: USD,
Warp and the solver already loaded). Units still run one at a time, in the run's order.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from .config import SweepConfig
from .result import SweepResult

#: The engines a worker can build (registered on import of ``engines``); an engine registered at
#: run time (Kit's omni.physx, living in Kit's own process) runs where it was registered.
BUILT_IN = ("warp", "physx", "newton", "mujoco")

#: seconds between checks that a worker is still alive while it sweeps
POLL_S = 0.5


def isolated_engines(engines, alone: bool = False) -> set[str]:
    """The engine labels whose units run in a worker: every built-in one when several engines run;
    with ``alone`` (``mimic-ext sweep``) also the one engine, unless it is our own warp engine (the
    default run stays in-process: a worker start costs about 1 s, ``benchmarks/mujoco_sweep.py
    --isolation``)."""
    labels = list(dict.fromkeys(engines))
    built = {e for e in labels if e.partition(":")[0] in BUILT_IN}
    if len(labels) > 1:
        return built
    return {e for e in built if alone and e.partition(":")[0] != "warp"}


def crash_if_asked(engine: str) -> None:
    """The test-only staged crash of ``batch.CRASH_ENV`` (no core file)."""
    from .batch import CRASH_ENV

    spec = os.environ.get(CRASH_ENV, "")
    name, _, sig = spec.partition(":")
    if not name or name != engine.partition(":")[0]:
        return
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file for a staged crash
    os.kill(os.getpid(), getattr(signal, sig or "SIGKILL"))


def _serve(conn) -> None:
    """The worker: sweep each (path, config, engine, options, timeout, nvidia) it is sent; None ends it."""
    from .batch import sweep_one

    while True:
        job = conn.recv()
        if job is None:
            return
        path, config, engine, options, timeout, nvidia = job
        conn.send(sweep_one(path, config, engine, options, timeout, nvidia))


def signal_name(exitcode: int | None) -> str:
    """``SIGBUS (7)`` for a worker killed by a signal, else ``exit code N``."""
    if exitcode is None:
        return "no exit code"
    if exitcode < 0:
        try:
            return f"{signal.Signals(-exitcode).name} ({-exitcode})"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def crash_result(path: str, engine: str, config: SweepConfig, exitcode: int | None, seconds: float) -> SweepResult:
    """The error result of a unit whose worker died: the engine, the signal and the asset named."""
    from .batch import error_result

    how = signal_name(exitcode)
    hint = (
        ""
        if exitcode is None or exitcode < 0
        else " (from a Python script: sweep_paths needs the script's if __name__ == '__main__': guard)"
    )
    res = error_result(
        path,
        f"the {engine} engine crashed sweeping {path}: its worker process died ({how}), a crash in "
        f"native code or out of memory; the other engines' results are kept (run "
        f"'mimic-ext sweep {path} --engine {engine}' alone to reproduce it){hint}",
        config,
        seconds,
        engine,
    )
    res.details = f"crash: engine {engine}, {how}"
    return res


class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def sweep(self, job: tuple) -> SweepResult | None:
        """The unit's result, or None when the worker died before sending it."""
        try:
            self.conn.send(job)
            while not self.conn.poll(POLL_S):
                if not self.proc.is_alive():
                    if self.conn.poll(0):  # it sent the result, then died
                        break
                    return None
            return self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            return None

    def close(self) -> None:
        try:
            self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


class Isolated:
    """Sweeps units in one worker process per engine; ``close()`` (or ``with``) ends them.
    ``nvidia``: NVIDIA's phase, run in the worker after each sweep (``batch.sweep_one``)."""

    def __init__(self, options: dict[str, Any], nvidia: Any = None):
        from .batch import _pool_context

        self.options = options
        self.nvidia = nvidia
        self.ctx = _pool_context(options, nvidia)
        self.workers: dict[str, _Worker] = {}

    def sweep(self, path, config: SweepConfig, engine: str, timeout: float | None = None) -> SweepResult:
        t0 = time.perf_counter()
        worker = self.workers.get(engine)
        if worker is None:
            worker = self.workers[engine] = _Worker(self.ctx)
        res = worker.sweep((str(path), config, engine, self.options, timeout, self.nvidia))
        if res is not None:
            return res
        worker.proc.join(5)
        code = worker.proc.exitcode
        worker.conn.close()
        del self.workers[engine]  # the next stage on this engine gets a fresh worker
        return crash_result(str(path), engine, config, code, time.perf_counter() - t0)

    def close(self) -> None:
        for w in self.workers.values():
            w.close()
        self.workers.clear()

    def __enter__(self) -> Isolated:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["BUILT_IN", "Isolated", "crash_if_asked", "crash_result", "isolated_engines", "signal_name"]
