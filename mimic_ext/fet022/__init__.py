"""FET022 "mimic_joint": sweep each reference joint and check its followers' motion ratio.

``run(stage)`` on an open stage or a file; ``sweep_paths`` for many files with a process
pool; ``mimic_ext.fet022.reports`` writes console, JSON, JUnit XML and HTML. Names are
loaded on first use, so importing the package (as ``mimic-ext --help`` does through
``commands``) costs nothing: USD, numpy and Warp load when a sweep runs.
"""

from __future__ import annotations

from ..lazy_exports import lazy_dir, lazy_getattr

_EXPORTS = {
    "run": "runner",
    "versions": "runner",
    "SweepConfig": "config",
    "TestDrive": "config",
    "load_config": "config",
    "SweepResult": "result",
    "FollowerResult": "result",
    "ReferenceResult": "result",
    "RunResult": "result",
    "SweepEngine": "engines",
    "Trace": "engines",
    "get_engine": "engines",
    "register_engine": "engines",
    "stage_without": "engines",
    "ReadRelation": "engines",
    "EngineNotApplicable": "engines",
    "sweep_paths": "batch",
    "collect_stages": "batch",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (the lazy table is the one list of public names)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
__dir__ = lazy_dir(__name__, _EXPORTS)
