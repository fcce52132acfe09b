"""Imported once by the multi-stage pool's forkserver, before it forks any worker.

Everything a worker needs that is slow to load is loaded here once: USD and its schema
plugins, numpy, Warp and the solver. For CPU sweeps Warp is also initialised and the
solver's float32 kernel module loaded from the on-disk cache, or compiled into it when cold
(CUDA is never initialised before a fork: a forked child could not use it).
"""

import ctypes.util
import os

import numpy  # noqa: F401
from pxr import Usd, UsdPhysics  # noqa: F401

import mimic_ext.schema
from mimic_ext.fet022 import analysis, runner  # noqa: F401

try:
    import warp as wp

    from mimic_ext.warp_runtime import quiet_warp

    quiet_warp(wp)
    import mimic_ext.solver  # noqa: F401
except ImportError:
    wp = None  # type: ignore[assignment]  # Warp is optional here: None when absent

# wp.init() would initialise CUDA wherever a driver exists; only do it where none does.
if (
    wp is not None
    and os.environ.get("MIMIC_EXT_FET022_PRELOAD_DEVICE", "cpu") == "cpu"
    and ctypes.util.find_library("cuda") is None
):
    try:
        from mimic_ext.warp_runtime import announce_cold_compile, init_warp

        init_warp()  # without the CUDA-driver warning
        from mimic_ext.solver.kernels import kernels

        announce_cold_compile("cpu")
        # the sweep's module alone: wp.force_load() would also compile every other registered
        # module (the collision module collide() uses, Warp's own, one per kernel file), some
        # 6 s of a cold start that no worker runs
        wp.load_module(wp.get_module(kernels("float32").module), device="cpu")
    except Exception:
        pass
