"""The solver's Warp kernels, written once and instantiated per scalar type.

Each concept has its own module (``spatial`` algebra, ``structs``, ``factor``isation,
``dynamics`` passes, constraint ``rows``, the ``step``); each module's ``build(ns)`` adds
its Warp functions to one namespace for a scalar type, and the step kernel of that
namespace is registered in a Warp module of its own (``mimic_solver_float32`` /
``mimic_solver_float64``), so a float32 user compiles no float64 code and vice versa.
``kernels(precision)`` builds a namespace once per process.
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

import warp as wp

from . import dynamics, factor, rows, spatial, step, structs

PRECISIONS = ("float32", "float64")

_TYPES = {
    "float32": dict(T=wp.float32, vec3=wp.vec3, mat33=wp.mat33, spatial=wp.spatial_vector, quat=wp.quat,
                    rank_tol=1.0e-4),
    "float64": dict(T=wp.float64, vec3=wp.vec3d, mat33=wp.mat33d, spatial=wp.spatial_vectord, quat=wp.quatd,
                    rank_tol=1.0e-9),
}


@lru_cache(maxsize=None)
def kernels(precision: str = "float32") -> SimpleNamespace:
    """Structs, functions and kernels of the solver for one scalar type ("float32" or "float64")."""
    ns = SimpleNamespace(name=precision, module=f"mimic_solver_{precision}", **_TYPES[precision])
    # forward only: the solver never differentiates through a step, and adjoints would triple the code
    wp.get_module(ns.module).options["enable_backward"] = False
    for part in (spatial, structs, factor, dynamics, rows, step):
        part.build(ns)
    step.build_many(ns)
    return ns


__all__ = ["kernels", "PRECISIONS"]
