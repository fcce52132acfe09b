"""Stand-in for ``omni.physics.tensors`` (the tensor API of the physics extensions; PhysX backend
``omni.physx.tensors``). Real ``__init__.py`` exports ``create_simulation_view``, ``reset`` and
``SimulationView`` from ``.api`` and the dtype constants from the bindings; see ``api.py`` here for what
the stand-in follows. Importing it lists ``omni.physx.tensors`` as enabled in Kit's extension manager."""

from __future__ import annotations

import numpy as _np
import omni.kit.app as _app

from .api import ArticulationView, SimulationView, create_simulation_view, reset

float32 = _np.float32
uint32 = _np.uint32
int32 = _np.int32

EXT_ID = "omni.physx.tensors-0.0.0+standin"

_manager = _app.get_app().get_extension_manager()
_manager._stub_add_extension(
    EXT_ID, {"package": {"title": "PhysX Tensor API Implementation (stand-in)", "version": "0.0.0+standin"}}
)
_manager._stub_enable(EXT_ID)

__all__ = ["ArticulationView", "SimulationView", "create_simulation_view", "float32", "int32", "reset", "uint32"]
