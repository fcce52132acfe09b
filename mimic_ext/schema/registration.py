"""Makes the mimic schemas known to USD through their owners' plugins; declares none itself.

PhysxMimicJointAPI belongs to NVIDIA's PhysxSchema and NewtonMimicAPI to Newton's schema
package. Two plugins that declare one alias make USD raise at every stage open in the
process, so we only ever load the real ones: where a plugin already declares a schema
(Kit's compiled PhysxSchema, or the package imported by the user) nothing is loaded for
it; otherwise the owner's pip package is imported, which registers its plugin
(``physx-usd-schemas``, ``newton-usd-schemas``; both are dependencies of mimic-ext).
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any, NamedTuple

from pxr import Plug, Usd

_LOG = logging.getLogger(__name__)

#: schema name -> the pip package whose import registers the plugin that declares it
OWNERS = {
    "PhysxMimicJointAPI": "physx_usd_schemas",
    "NewtonMimicAPI": "newton_usd_schemas",
}
SCHEMA_NAMES = tuple(OWNERS)

#: the Kit extension that brings each schema's compiled plugin into a Kit app (docs/kit.md)
KIT_EXTENSIONS = {
    "PhysxMimicJointAPI": "omni.usd.schema.physx",
    "NewtonMimicAPI": "omni.usd.schema.newton",
}

_state: dict[str, Any] = {"done": False, "resolvable": False, "sources": {}}


def in_kit() -> bool:
    """True inside an Omniverse Kit app (Isaac Sim, USD Composer): Kit's kernel has imported
    ``omni.kit.app`` before any extension's module runs. Only looked up, never imported (only
    ``mimic_ext.kit`` imports ``omni``), so plain Python never pays for it."""
    return "omni.kit.app" in sys.modules


def _undeclared_message(name: str, package: str, exc: Exception) -> tuple[int, str]:
    """(log level, message) for a schema no plugin declares, true for the host it runs in: in Kit
    a pip install is wrong (Kit has its own pxr and compiled schemas), the Kit extension is the fix."""
    still = "relations are still read and written by attribute name"
    if in_kit():
        ext = KIT_EXTENSIONS[name]
        # an app without Newton's schema (Isaac Sim 4.x/5.x, USD Composer) is normal: nothing is lost
        level = logging.INFO if name == "NewtonMimicAPI" else logging.WARNING
        return level, (
            f"{name} is not declared by any USD plugin in this Kit app ({ext} is not loaded); {still}. "
            f"To have USD know it, use an app that ships {ext} (Kit's schemas come with the app, "
            "never from pip)"
        )
    return logging.WARNING, (
        f"{name} is not declared by any USD plugin and {package} cannot be imported ({exc}); "
        f"{still}. Fix: pip install {package.replace('_', '-')}"
    )


class SchemaSource(NamedTuple):
    """Where a mimic schema's declaration comes from: plugin name, its resource folder, the Tf type name."""

    plugin: str
    path: str
    type_name: str


def find_declaration(schema_name: str) -> SchemaSource | None:
    """The registered plugin that declares ``schema_name`` (by alias, schema identifier or
    type name; Kit's compiled PhysxSchema declares ``PhysxSchemaPhysxMimicJointAPI`` with the
    alias). Reads plugInfo only, so it does not build USD's schema registry."""
    for plugin in Plug.Registry().GetAllPlugins():
        types = (plugin.metadata or {}).get("Types", {}) or {}
        for type_name, info in types.items():
            info = info or {}
            alias = info.get("alias", {}) or {}
            if schema_name in (alias.get("UsdSchemaBase"), info.get("schemaIdentifier"), type_name):
                return SchemaSource(plugin.name, plugin.resourcePath, type_name)
    return None


def declaring_plugin(schema_name: str) -> str | None:
    """Name of the registered plugin that declares ``schema_name`` (see ``find_declaration``)."""
    found = find_declaration(schema_name)
    return found.plugin if found else None


def register_schemas() -> bool:
    """Load the real plugin of each mimic schema unless one is loaded; True when ApplyAPI works.

    Safe to call any number of times. When USD's schema registry was already built before
    this call (a stage with typed prims was opened before ``mimic_ext.schema`` or the schema
    packages were imported), ``prim.ApplyAPI`` by name cannot see a schema registered now;
    this package's own functions still work (they add the API by name and apply the
    fallbacks themselves), and one warning says so.
    """
    if _state["done"]:
        return _state["resolvable"]
    sources = {}
    for name, package in OWNERS.items():
        plugin = find_declaration(name)
        if plugin is None:
            try:
                importlib.import_module(package)
            except ImportError as exc:
                _LOG.log(*_undeclared_message(name, package, exc))
                continue
            plugin = find_declaration(name)
        if plugin is not None:
            sources[name] = plugin
    resolvable = all(Usd.SchemaRegistry.FindSchemaInfo(n) is not None for n in SCHEMA_NAMES)
    # Only a schema that has a declaration and still does not resolve means the registry was built too
    # early; one that no plugin declares was reported above (and ApplyAPI of it cannot work anywhere).
    late = [n for n in sources if Usd.SchemaRegistry.FindSchemaInfo(n) is None]
    if late:
        names = " and ".join(late)
        _LOG.warning(
            "USD's schema registry was built before %s was registered; prim.ApplyAPI('%s', ...) will not resolve "
            "in this process. mimic_ext's own functions still work. Import mimic_ext.schema (or %s) before "
            "opening the first stage to fix this.",
            names,
            late[0],
            " and ".join(OWNERS[n] for n in late),
        )
    _state.update(done=True, resolvable=resolvable, sources=sources)
    return resolvable


def schema_resolvable() -> bool:
    """True when ``ApplyAPI`` by schema name works in this process."""
    return register_schemas()


def schema_sources() -> dict[str, SchemaSource]:
    """Which plugin declares each mimic schema in this process (after registration); a
    schema no plugin declares is missing from the result."""
    register_schemas()
    return dict(_state["sources"])
