"""One OpenBLAS thread in the ``mimic-ext`` process, unless the user chose a number.

numpy's OpenBLAS starts a worker thread per core when numpy is imported, and the workers spin
for a while after starting and after every call they share: on the 2-core development machine
(one worker) 0.06 s of CPU for ``import numpy`` alone and about 0.09 s of a one-stage sweep's
0.94 s (issue 43; benchmarks/RESULTS.md, section 10); a machine with more cores starts more. The CLI's numpy work is small
matrices (models, fits, reports) that gain nothing from threads, so the command asks for one
(``OPENBLAS_NUM_THREADS=1``) before numpy loads; a value already set (the user's) is kept. Its
child processes (a pool's workers, an isolated engine's) inherit it. A Python caller of
``cli.main`` keeps its own setting. Standard library only: the CLI module imports it.
"""

from __future__ import annotations

import os

VARIABLE = "OPENBLAS_NUM_THREADS"


def one_thread_unless_set() -> None:
    """Set ``OPENBLAS_NUM_THREADS=1`` where it is unset (read by OpenBLAS when numpy loads)."""
    os.environ.setdefault(VARIABLE, "1")


__all__ = ["VARIABLE", "one_thread_unless_set"]
