"""Ending the ``mimic-ext`` process without tearing the interpreter down.

A command that loaded Warp and USD spends a quarter of a second of CPU after its last line in
Python's finalization: every module's objects freed one by one (Warp's thousands of builtins,
USD's plugin registry), for a process that is about to go anyway. ``exit_now`` does what a
normal exit must (the ``atexit`` handlers: multiprocessing stops its workers, logging flushes;
Python's and C's output buffers flushed) and then ends the process. Where another thread
still runs (a normal exit would wait for it) it exits normally. Standard library only: the
CLI module imports it.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def _flush_c_stdio() -> None:
    """``fflush(NULL)``: what a native library printed through C's stdio (PhysX, USD) still buffered."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):
        pass


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` after the ``atexit`` handlers and the output flushes."""
    main = threading.main_thread()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main):
        sys.exit(code)  # a normal exit waits for that thread
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a reader that closed the pipe (`| head`), a closed stream
            pass
    _flush_c_stdio()
    os._exit(code)


__all__ = ["exit_now"]
