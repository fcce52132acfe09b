"""The CPU thread pool a solver's launches run on, and how a launch is cut into slices.

A Warp CPU launch is a serial loop that releases the GIL, so the environments of one step run
at once when split into contiguous slices, one recorded launch each, handed to threads of one
process-wide pool. Kept apart from ``solver.py`` because the rules (how small a slice may be,
chunks, the switch interval) are about the machine, not the mechanics; ``Solver`` reads them
through ``launch_slices`` and ``run``.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

#: Fewest environment-steps a slice must carry for a launch of its own to pay: handing a slice
#: to a pool thread and waiting for it costs about as much as 64 environment-steps of the Robotiq
#: (measured: benchmarks/RESULTS.md, "Threads"); so a step of fewer than 128 environments stays
#: one launch, and ``step_many`` (many steps per launch) splits from two environments on.
MIN_SLICE_ENV_STEPS = 64
#: The same rule in time, once the solver has timed its model (``Solver`` times its first calls of
#: at least ``TIMED_CALL_S``, less ``CALL_OVERHEAD_S`` for the hand-over, per environment-step and
#: core): a slice carries at least ``MIN_SLICE_S`` of one core's work (64 Robotiq env-steps of
#: 2 us). A heavy model (contacts, loops, a humanoid: 20-200 us an env-step) then splits a step
#: of a few environments, which the count alone keeps on one core, and a lighter one splits later.
MIN_SLICE_S = 128e-6
TIMED_CALL_S = 300e-6
CALL_OVERHEAD_S = 30e-6
#: A launch of many environment-steps (``step_many`` at large N) is cut into up to this many
#: chunks per thread, each of at least ``CHUNK_ENV_STEPS`` (some 10 ms of the Robotiq's work, so a
#: chunk's hand-over stays under 1 %), and a thread that is done takes the next chunk not yet
#: taken: with one fixed slice per thread, a core the machine lends elsewhere for a while holds
#: back the whole call (MuJoCo's rollout balances the same way, over its pool)
CHUNKS_PER_THREAD = 8
CHUNK_ENV_STEPS = 8192


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    """One process-wide pool per size, shared by every solver (many small solvers must not
    each start threads)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            pool = _POOLS[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mimic_solver")
        return pool


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def slices(num_envs: int, threads: int, steps: int = 1, env_step_s: float | None = None) -> list[tuple[int, int]]:
    """Contiguous ``(first, count)`` slices of the environments: at most ``threads``, each
    carrying at least ``MIN_SLICE_ENV_STEPS`` environment-steps or, given the measured seconds of
    one (``env_step_s``), ``MIN_SLICE_S`` of work (one slice when N is small); or, when each
    would carry many more, ``CHUNKS_PER_THREAD`` times as many chunks of at least
    ``CHUNK_ENV_STEPS``, which the threads take one after another (``run``)."""
    steps = max(int(steps), 1)
    least = MIN_SLICE_ENV_STEPS if not env_step_s else max(1, math.ceil(MIN_SLICE_S / env_step_s))
    n = max(1, min(int(threads), num_envs, (num_envs * steps) // least))
    if n > 1:
        n = max(n, min(n * CHUNKS_PER_THREAD, num_envs, (num_envs * steps) // CHUNK_ENV_STEPS))
    base, extra = divmod(num_envs, n)
    out, first = [], 0
    for i in range(n):
        count = base + (1 if i < extra else 0)
        out.append((first, count))
        first += count
    return out


#: The interpreter's thread switch interval while slices run (s). With Python's default 5 ms the
#: pool's slice mostly waits for the caller's (no gain from a second core); at 0.1 ms both run at
#: once (measured: benchmarks/RESULTS.md, "Threads"). Lowered only while a threaded launch runs,
#: and restored after.
SWITCH_INTERVAL_S = 1e-4
_SWITCH: dict = {"users": 0, "saved": None}  # threads inside, and the switch interval they replaced


def _short_switch(enter: bool) -> None:
    with _POOLS_LOCK:
        if enter:
            if _SWITCH["users"] == 0:
                _SWITCH["saved"] = sys.getswitchinterval()
                sys.setswitchinterval(min(_SWITCH["saved"], SWITCH_INTERVAL_S))
            _SWITCH["users"] += 1
        else:
            _SWITCH["users"] -= 1
            if _SWITCH["users"] == 0:
                sys.setswitchinterval(_SWITCH["saved"])


def run(cmds, workers: int) -> None:
    """Launch recorded commands on ``workers`` threads (the calling one and the pool's): each
    thread starts with a command of its own (so a pool thread slow to wake never leaves its
    share to the caller), then takes the next one not yet taken."""
    workers = min(int(workers), len(cmds))
    if workers <= 1:
        for c in cmds:
            c.launch()
        return
    rest = iter(cmds[workers:])  # next() on a list iterator is atomic under the GIL

    def work(first):
        first.launch()
        for c in rest:
            c.launch()

    _short_switch(True)
    try:
        futures = [_pool(workers - 1).submit(work, c) for c in cmds[1:workers]]
        try:
            work(cmds[0])
        finally:
            for f in futures:
                f.result()
    finally:
        _short_switch(False)
