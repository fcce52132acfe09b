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

from pxr import Plug, Usd

_LOG = logging.getLogger(__name__)

#: schema name -> the pip package whose import registers the plugin that declares it
OWNERS = {
    "PhysxMimicJointAPI": "physx_usd_schemas",
    "NewtonMimicAPI": "newton_usd_schemas",
}
SCHEMA_NAMES = tuple(OWNERS)

_state = {"done": False, "resolvable": False, "sources": {}}


def declaring_plugin(schema_name: str) -> str | None:
    """Name of a registered plugin that declares ``schema_name`` (reads plugInfo only, so it
    does not build USD's schema registry)."""
    for plugin in Plug.Registry().GetAllPlugins():
        types = (plugin.metadata or {}).get("Types", {}) or {}
        for type_name, info in types.items():
            alias = (info or {}).get("alias", {}) or {}
            if alias.get("UsdSchemaBase") == schema_name or (info or {}).get("schemaIdentifier") == schema_name:
                return plugin.name
    return None


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
        plugin = declaring_plugin(name)
        if plugin is None:
            try:
                importlib.import_module(package)
            except ImportError as exc:
                _LOG.warning("%s is not declared by any USD plugin and %s cannot be imported (%s); "
                             "relations are still read and written by attribute name. "
                             "Fix: pip install %s", name, package, exc, package.replace("_", "-"))
                continue
            plugin = declaring_plugin(name)
        sources[name] = plugin
    resolvable = all(Usd.SchemaRegistry.FindSchemaInfo(n) is not None for n in SCHEMA_NAMES)
    if not resolvable:
        _LOG.warning(
            "USD's schema registry was built before the mimic schemas were registered; "
            "prim.ApplyAPI('PhysxMimicJointAPI', ...) will not resolve in this process. "
            "mimic_ext's own functions still work. Import mimic_ext.schema (or physx_usd_schemas "
            "and newton_usd_schemas) before opening the first stage to fix this.")
    _state.update(done=True, resolvable=resolvable, sources=sources)
    return resolvable


def schema_resolvable() -> bool:
    """True when ``ApplyAPI`` by schema name works in this process."""
    return register_schemas()


def schema_sources() -> dict[str, str | None]:
    """Which plugin declares each mimic schema in this process (after registration)."""
    register_schemas()
    return dict(_state["sources"])
