"""One background job that a Cancel button can really stop.

Why not a thread-pool future: ``Future.cancel`` cannot stop work that has started, and the
sweep has no cancel hook of its own (``fet022.run`` simulates in one call). So the job gets
a thread of its own and ``cancel()`` raises ``JobCancelled`` inside it
(``PyThreadState_SetAsyncExc``, CPython, which Kit embeds): the job stops at the next Python
bytecode it runs, i.e. between two solver steps, or right after a long native call (a Warp
kernel compile) returns. ``cancel()`` also sets ``cancelled`` so code in the job can check it
at safe points. A job that has finished is never interrupted (the request and the end are
ordered by one lock), and only this job's thread ever receives the exception.

Pure Python (no ``omni``), so it is unit-tested without Kit.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any


class JobCancelled(Exception):
    """Raised inside a job when its Cancel was pressed."""


class Job:
    """Run ``fn()`` on its own daemon thread; ``result()`` / ``error`` once ``done()``."""

    def __init__(self, fn: Callable[[], Any], name: str = "mimic_ext job", cancelled: threading.Event | None = None):
        self._fn = fn
        self._lock = threading.Lock()
        self._started = False
        self._finished = False
        self._result: Any = None
        self.error: BaseException | None = None
        self.cancelled = cancelled if cancelled is not None else threading.Event()
        self._thread = threading.Thread(target=self._body, name=name, daemon=True)

    def start(self) -> Job:
        self._thread.start()
        return self

    def _body(self) -> None:
        try:
            with self._lock:
                self._started = True
            try:
                if self.cancelled.is_set():
                    raise JobCancelled("cancelled before it started")
                self._result = self._fn()
            finally:
                with self._lock:
                    self._finished = True
        except BaseException as exc:
            self.error = JobCancelled("cancelled") if self.cancelled.is_set() else exc

    def done(self) -> bool:
        return self._finished and not self._thread.is_alive()

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self._result

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def cancel(self) -> bool:
        """Stop the job; True when it was still running."""
        with self._lock:
            if self._finished:
                return False
            self.cancelled.set()
            if not self._started:
                return True  # the job raises JobCancelled as soon as it starts
            hit = ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self._thread.ident), ctypes.py_object(JobCancelled)
            )
            if hit > 1:  # never expected; undo a request that reached more than one thread
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread.ident), None)
                return False
            return hit == 1

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread; True when it has ended."""
        if self._thread.ident is not None:
            self._thread.join(timeout)
        return not self._thread.is_alive()
