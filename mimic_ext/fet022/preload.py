"""Imported once by the multi-stage pool's forkserver, before it forks any worker.

Everything a worker needs that is slow to load is loaded here once: USD and its schema
plugins, numpy, Warp and the solver. For CPU sweeps Warp is also initialised and the
solver's kernel modules loaded from the on-disk cache (CUDA is never initialised before
a fork: a forked child could not use it).
"""

import ctypes.util
import os

import numpy  # noqa: F401
from pxr import Usd, UsdPhysics  # noqa: F401

import mimic_ext.schema  # noqa: F401
from mimic_ext.fet022 import analysis, runner  # noqa: F401

try:
    import warp as wp

    from mimic_ext.warp_runtime import quiet_warp

    quiet_warp(wp)
    import mimic_ext.solver  # noqa: F401
except ImportError:
    wp = None

# wp.init() would initialise CUDA wherever a driver exists; only do it where none does.
if (wp is not None and os.environ.get("MIMIC_EXT_FET022_PRELOAD_DEVICE", "cpu") == "cpu"
        and ctypes.util.find_library("cuda") is None):
    try:
        from mimic_ext.warp_runtime import announce_cold_compile, init_warp

        init_warp()                       # without the CUDA-driver warning
        from mimic_ext.solver.kernels import kernels

        kernels("float32")                # registered, so that force_load loads (or compiles) them
        announce_cold_compile("cpu")
        wp.force_load(device="cpu")
    except Exception:  # noqa: BLE001  (preloading is an optimisation: workers load on demand)
        pass
