"""Silencing what C++ libraries print straight to file descriptor 2.

USD prints every composition warning and Warp prints "could not load the CUDA driver"
with ``fprintf(stderr)``, below Python's ``sys.stderr``; where mimic_ext reports the
same thing better (one summary line) or it is noise (no GPU was asked for), the
descriptor itself is pointed at /dev/null for the duration.
"""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def quiet_native_stderr():
    """Point fd 2 at /dev/null inside the block (Python's own ``sys.stderr`` is flushed first)."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
