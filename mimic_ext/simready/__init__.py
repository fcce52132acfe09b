"""NVIDIA's SimReady FET022 ``mimic_joint`` test on our engines, headless.

One public call::

    from mimic_ext.simready import run_nvidia_mimic
    r = run_nvidia_mimic("gripper.usda", engine="warp")  # or "physx" (ovphysx), "mujoco", "newton"
    r.status      # "pass" | "fail" | "skipped", as Kit's runner records it
    r.message     # NVIDIA's message (why it failed or was skipped), "" on a pass
    r.metrics     # {name: {"value": v, "unit": u}}: mim_mimic_pairs_detected, mim_pair_<f>_...
    r.warnings    # NVIDIA's warnings, strings
    r.headline    # "SimReady mimic_joint 1.1.0: pass"
    r.kit_result(key)  # Kit's result.json dict (``fet022.run_folder``)

It runs ``run_mimic_joint`` from the installed ``simready-foundation-tier-core`` (imported,
never copied) through what Kit hands it: NVIDIA's own ``RunContext`` over our engine
(``context``), a robot handle (``phase._Robot``) over a backend (``backends``) and the scene
``robot_scene`` would build (``phase``). ``pxr_bridge`` supplies ``pxr.PhysxSchema`` to the
phase where stock OpenUSD lacks it. ``engine_plugin`` makes it an engine of simready-benchmark.
Needs the ``simready`` extra.
"""

from __future__ import annotations

from ..lazy_exports import lazy_dir, lazy_getattr

_EXPORTS = {
    "run_nvidia_mimic": "phase",
    "PhaseResult": "phase",
    "ENGINES": "backends",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (the lazy table is the one list of public names)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
__dir__ = lazy_dir(__name__, _EXPORTS)
