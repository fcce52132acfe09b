"""The solver's Warp kernels, written once and instantiated per scalar type.

Each concept has its own module (``spatial`` algebra, ``structs``, ``factor``isation,
``dynamics`` passes, constraint ``rows``, the ``step``); each module's ``build(ns)`` adds
its Warp functions to one namespace for a scalar type, and the step kernel of that
namespace is registered in a Warp module of its own (``mimic_solver_float32`` /
``mimic_solver_float64``), so a float32 user compiles no float64 code and vice versa.
``kernels(precision)`` builds a namespace once per process. ``kernels(precision, contacts=True)``
is the same code with the contact rows compiled in (``contact_rows``; ``wp.static`` hooks in
the step and the joint rows), in a module of its own (``mimic_contact_<precision>``): a model
without colliders compiles and runs none of it. Likewise ``balls=True`` compiles the spherical
joints' code in (their quaternion poses, motion axes and cone rows), ``caps=True`` the authored
PhysX velocity caps (``dynamics.velocity_caps``) and ``momentum=True`` the free trees' momentum
restoration (``momentum64``, ``base_midpoint``, ``turn_bases_about_com``, ``restore_momentum``),
by ``wp.static`` switches, each variant a module of its own (``mimic_solver_balls_caps_float32``,
...): the model that has none, the common one (an articulation on a fixed base), compiles none of
that code (``model.kernel_features`` picks a model's; together some 15 % of a cold compile).
"""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace

import warp as wp

from . import contact_rows, dynamics, factor, rows, spatial, step, structs

PRECISIONS = ("float32", "float64")

_TYPES = {
    "float32": dict(
        T=wp.float32,
        vec3=wp.vec3,
        mat33=wp.mat33,
        spatial=wp.spatial_vector,
        quat=wp.quat,
        rank_tol=1.0e-4,
        loop_closed=1.0e-7,
    ),
    "float64": dict(
        T=wp.float64,
        vec3=wp.vec3d,
        mat33=wp.mat33d,
        spatial=wp.spatial_vectord,
        quat=wp.quatd,
        rank_tol=1.0e-9,
        loop_closed=1.0e-12,
    ),
}


@cache
def kernels(
    precision: str = "float32", contacts: bool = False, balls: bool = False, caps: bool = False, momentum: bool = False
) -> SimpleNamespace:
    """Structs, functions and kernels of the solver for one scalar type ("float32" or "float64"),
    with contact rows when ``contacts``, spherical joints' code when ``balls``, velocity caps when
    ``caps`` and free trees' momentum restoration when ``momentum``."""
    features = "".join(f"_{name}" for name, on in (("balls", balls), ("caps", caps), ("momentum", momentum)) if on)
    module = f"mimic_{'contact' if contacts else 'solver'}{features}_{precision}"
    ns = SimpleNamespace(
        name=precision,
        module=module,
        contacts=bool(contacts),
        balls=bool(balls),
        caps=bool(caps),
        momentum=bool(momentum),
        **_TYPES[precision],
    )
    # forward only: the solver never differentiates through a step, and adjoints would triple the code
    wp.get_module(ns.module).options["enable_backward"] = False
    # loops left rolled (clang unrolls what pays). Warp's precompiled header is not set here: Warp 1.19
    # takes that switch from warp.config for every module, overwriting a module's own option, and
    # hashes it into every module's cache key (docs/solver.md, Performance)
    wp.get_module(ns.module).options["max_unroll"] = 0
    parts = [spatial.build, structs.build, factor.build, dynamics.build, rows.build, step.build]
    if contacts:  # the contact struct before the scratch that holds it, the rows before the step
        parts[1:1] = [contact_rows.build_structs]
        parts[-1:-1] = [contact_rows.build]
    for build in parts:
        build(ns)
    step.build_many(ns)
    return ns


__all__ = ["PRECISIONS", "kernels"]
