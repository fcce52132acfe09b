"""``from pxr import PhysxSchema`` for NVIDIA's phase, on an OpenUSD without PhysX's Python schemas.

NVIDIA's ``mimic_joints.detect_mimic_joints`` reads each ``PhysxMimicJointAPI:<axis>`` instance
through ``PhysxSchema.PhysxMimicJointAPI(prim, axis)`` (Kit's USD build ships the compiled
schema module). Stock OpenUSD with ``physx-usd-schemas`` has the schema's *codeless* definition
only: no ``pxr.PhysxSchema`` module, so the phase would find no PhysX pair at all. ``bridged()``
puts a small reader in its place for the duration of one phase run, and takes it away after:
it reads the instance's authored ``physxMimicJoint:<axis>:*`` properties by name. It declares no
schema (nothing is registered with USD's schema registry) and is never installed when a real
``pxr.PhysxSchema`` imports.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

MODULE = "pxr.PhysxSchema"


class PhysxMimicJointAPI:
    """Reads one applied ``PhysxMimicJointAPI:<axis>`` instance the way the phase asks for it."""

    def __init__(self, prim: Any, instance: Any):
        self._prim = prim
        self._ns = f"physxMimicJoint:{instance}:"

    def GetReferenceJointRel(self) -> Any:
        return self._prim.GetRelationship(self._ns + "referenceJoint")

    def GetGearingAttr(self) -> Any:
        return self._prim.GetAttribute(self._ns + "gearing")

    def GetOffsetAttr(self) -> Any:
        return self._prim.GetAttribute(self._ns + "offset")


def real_physx_schema() -> bool:
    """True when this OpenUSD has PhysX's compiled Python schemas (Kit's USD build)."""
    if MODULE in sys.modules and getattr(sys.modules[MODULE], "__mimic_ext_bridge__", False):
        return False
    try:
        from pxr import PhysxSchema  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def bridged() -> Iterator[bool]:
    """While inside, ``from pxr import PhysxSchema`` gives the reader above (unless a real one
    exists); yields whether the bridge is in place. Restores ``pxr`` as it was on exit."""
    if real_physx_schema():
        yield False
        return
    import pxr

    shim = types.ModuleType(MODULE, "mimic_ext's reader of PhysxMimicJointAPI (no schema declared)")
    shim.PhysxMimicJointAPI = PhysxMimicJointAPI  # type: ignore[attr-defined]
    shim.__mimic_ext_bridge__ = True  # type: ignore[attr-defined]
    had_attr = hasattr(pxr, "PhysxSchema")
    old_attr = getattr(pxr, "PhysxSchema", None)
    old_mod = sys.modules.get(MODULE)
    sys.modules[MODULE] = shim
    pxr.PhysxSchema = shim
    try:
        yield True
    finally:
        if old_mod is None:
            sys.modules.pop(MODULE, None)
        else:
            sys.modules[MODULE] = old_mod
        if had_attr:
            pxr.PhysxSchema = old_attr
        else:
            with contextlib.suppress(AttributeError):
                delattr(pxr, "PhysxSchema")
