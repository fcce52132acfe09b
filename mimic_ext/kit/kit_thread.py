"""Work a job thread hands to Kit's thread, run when Kit's update loop pumps it.

Why: the sweep's analysis runs in a job thread (``worker.Job``) so that Kit keeps drawing,
but the open stage and the stage's PhysX (``omni.physx``, ``omni.physics.tensors``) belong
to Kit's thread: USD stages are not safe to edit from one thread while another reads them,
and Kit steps and renders the stage on its own thread. So the job thread posts each piece
of that work here and waits; the runner's coroutine runs the posted pieces once per frame
(``pump``), between frames Kit draws as usual.

The wait wakes every ``POLL_S`` so that a Cancel (``Job.cancel`` raises an exception in the
job thread at its next Python instruction) ends it promptly; a piece that was already posted
still runs on Kit's thread, its result is then dropped. Called on Kit's thread itself,
``call`` runs the piece at once. Pure Python (no ``omni``), unit-tested without Kit.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Any

#: How often a waiting job thread wakes up to notice a cancel (seconds).
POLL_S = 0.005


class _Call:
    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class KitThreadCalls:
    """A queue of calls for Kit's thread (the thread that made this object)."""

    def __init__(self) -> None:
        self._owner = threading.get_ident()
        self._queue: collections.deque[_Call] = collections.deque()
        self._lock = threading.Lock()

    def on_kit_thread(self) -> bool:
        return threading.get_ident() == self._owner

    def call(self, fn: Callable[..., Any], *args, **kwargs) -> Any:
        """``fn(*args, **kwargs)`` on Kit's thread; its value, or its exception raised here."""
        if self.on_kit_thread():
            return fn(*args, **kwargs)
        item = _Call(fn, args, kwargs)
        with self._lock:
            self._queue.append(item)
        while not item.done.wait(POLL_S):
            pass
        return item.outcome()

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def pump(self, budget_s: float | None = None) -> int:
        """Run posted calls on Kit's thread until none is left (or ``budget_s`` is spent); how many ran."""
        if not self.on_kit_thread():
            raise RuntimeError("KitThreadCalls.pump runs on Kit's thread only")
        start, ran = time.perf_counter(), 0
        while True:
            with self._lock:
                if not self._queue:
                    return ran
                item = self._queue.popleft()
            item.run()
            ran += 1
            if budget_s is not None and time.perf_counter() - start >= budget_s:
                return ran
