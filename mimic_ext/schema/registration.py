"""Registers the codeless PhysxMimicJointAPI / NewtonMimicAPI schemas exactly once.

Why codeless: usd-core ships neither schema, and NVIDIA's PhysxSchema only exists inside
Kit. When a real plugin already declares a schema we must not register ours (two types
with one alias break the registry), so each schema is checked on its own.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pxr import Plug, Usd

_LOG = logging.getLogger(__name__)

PLUGIN_DIR = Path(__file__).resolve().parent / "plugin"
PLUGIN_NAME = "mimicExtSchema"
SCHEMA_NAMES = ("PhysxMimicJointAPI", "NewtonMimicAPI")

_state = {"done": False, "ours": False, "resolvable": False}


def _declared_elsewhere(schema_name: str) -> bool:
    """True when a plugin other than ours declares ``schema_name`` (reads plugInfo only)."""
    for plugin in Plug.Registry().GetAllPlugins():
        if plugin.name == PLUGIN_NAME:
            continue
        types = (plugin.metadata or {}).get("Types", {}) or {}
        for info in types.values():
            alias = (info or {}).get("alias", {}) or {}
            if alias.get("UsdSchemaBase") == schema_name:
                return True
    return False


def register_schemas() -> bool:
    """Register our plugin unless it or a real one is there; return True when ApplyAPI works.

    Safe to call any number of times. When USD's schema registry was already built before
    this call (a stage with typed prims was opened first and the package's startup hook
    did not run), ``ApplyAPI`` by name cannot see the schema in this process; the
    authoring functions of this package still work (they add the API by name and apply
    the fallbacks themselves), and one warning says so.
    """
    if _state["done"]:
        return _state["resolvable"]
    registry = Plug.Registry()
    ours_loaded = registry.GetPluginWithName(PLUGIN_NAME) is not None
    if not ours_loaded and not all(_declared_elsewhere(n) for n in SCHEMA_NAMES):
        if any(_declared_elsewhere(n) for n in SCHEMA_NAMES):
            _LOG.info("one mimic schema is provided by another plugin; registering ours for the other")
        registry.RegisterPlugins(str(PLUGIN_DIR))
        _state["ours"] = True
    resolvable = all(Usd.SchemaRegistry.FindSchemaInfo(n) is not None for n in SCHEMA_NAMES)
    if not resolvable:
        _LOG.warning(
            "USD's schema registry was built before mimic_ext registered PhysxMimicJointAPI; "
            "prim.ApplyAPI('PhysxMimicJointAPI', ...) will not resolve in this process. "
            "mimic_ext's own functions still work. Install the package (pip install) or "
            "set PXR_PLUGINPATH_NAME=%s before starting Python to fix this.", PLUGIN_DIR)
    _state.update(done=True, resolvable=resolvable)
    return resolvable


def schema_resolvable() -> bool:
    """True when ``ApplyAPI`` by schema name works in this process."""
    return register_schemas()

