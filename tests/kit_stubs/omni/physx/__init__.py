"""Stand-in for ``omni.physx``: ``get_physx_interface()`` and ``get_physx_simulation_interface()``.

Real source: ``omni.physx`` 110.4.4 (isaacsim-extscache-physics 6.2.0.0): ``omni/physx/__init__.py`` imports
the public API from ``scripts/ifaces.py``, whose ``get_physx_interface`` / ``get_physx_simulation_interface``
return the cached ``PhysX`` / ``IPhysxSimulation`` bindings (``bindings/_physx.pyi``; see ``bindings/_physx.py``).

The physics is real NVIDIA PhysX through ``ovphysx`` where it is installed, mimic_ext's Warp solver
otherwise (``_stub_physics``). Which one runs is said where Kit code can read it: the extension manager
lists this stand-in as the enabled extension ``omni.physx`` whose package title names the physics
(real omni.physx: ``title = "PhysX Core"``, ``version = "110.4.4"`` in its ``config/extension.toml``).
Stand-in-only helpers start with ``_stub``.
"""

from __future__ import annotations

import omni.kit.app

from . import _stub_physics
from .bindings._physx import (
    SCENE,
    SETTING_UPDATE_TO_USD,
    SETTING_UPDATE_VELOCITIES_TO_USD,
    IPhysxSimulation,
    PhysX,
    acquire_physx_interface,
    acquire_physx_simulation_interface,
)

__all__ = ["IPhysxSimulation", "PhysX", "get_physx_interface", "get_physx_simulation_interface"]

EXT_ID = "omni.physx-0.0.0+standin"
_STATE = {
    "backend": _stub_physics.OVPHYSX if _stub_physics.ovphysx_version() else _stub_physics.WARP,
    "why": "" if _stub_physics.ovphysx_version() else "ovphysx is not installed",
}


def get_physx_interface() -> PhysX:
    return acquire_physx_interface()


def get_physx_simulation_interface() -> IPhysxSimulation:
    return acquire_physx_simulation_interface()


# -- stand-in helpers ---------------------------------------------------------------------------
def _stub_backend_name() -> str:
    return _STATE["backend"]


def _stub_title() -> str:
    if _STATE["backend"] == _stub_physics.OVPHYSX:
        return f"stand-in over ovphysx {_stub_physics.ovphysx_version()}, real NVIDIA PhysX headless on the CPU"
    return f"stand-in over mimic_ext's Warp solver, not PhysX ({_STATE['why']})"


def _stub_register() -> None:
    """List this stand-in in Kit's extension manager as the enabled omni.physx (and its settings' defaults)."""
    import carb.settings

    manager = omni.kit.app.get_app().get_extension_manager()
    manager._stub_add_extension(EXT_ID, {"package": {"title": _stub_title(), "version": EXT_ID.partition("-")[2]}})
    manager._stub_enable(EXT_ID)
    settings = carb.settings.get_settings()
    for key in (SETTING_UPDATE_TO_USD, SETTING_UPDATE_VELOCITIES_TO_USD):  # Kit's defaults: PhysX writes to USD
        settings.set_default(key, True)


def _stub_use_backend(name: str | None, why: str = "chosen by the test") -> None:
    """Run the physics on ``"ovphysx"`` or ``"warp"`` from the next attach on (None: the default)."""
    if name is None:
        name = _stub_physics.OVPHYSX if _stub_physics.ovphysx_version() else _stub_physics.WARP
        why = "" if name == _stub_physics.OVPHYSX else "ovphysx is not installed"
    _STATE["backend"], _STATE["why"] = name, why
    _stub_register()


def _stub_play() -> None:
    """The timeline's Play: PhysX is now running on the stage."""
    SCENE.playing = True


def _stub_stop() -> None:
    SCENE.playing = False


def _stub_outputs() -> dict:
    """How many times PhysX wrote results to USD and to Fabric (fetch_results), the attach/step counts, and
    the threads that attached or stepped."""
    return {**SCENE.outputs, **SCENE.counts, "threads": set(SCENE.threads)}


def _stub_reset() -> None:
    """Nothing attached, nothing playing, counters at zero (a fresh app)."""
    if SCENE.stage_id:
        get_physx_simulation_interface().detach_stage()
    SCENE.playing, SCENE.gpu_setting = False, -1
    SCENE.outputs.update(usd=0, fabric=0)
    SCENE.counts.update(attach=0, detach=0, simulate=0)
    SCENE.threads.clear()


_stub_register()
