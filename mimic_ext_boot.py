"""Put mimic_ext's codeless schema plugin on PXR_PLUGINPATH_NAME at interpreter start.

USD builds its schema registry once, the first time a typed prim is composed; a plugin
registered after that is not seen by ``prim.ApplyAPI("PhysxMimicJointAPI", ...)``. The
installed ``mimic_ext_schema.pth`` imports this module before any user code, so the
schema resolves whatever the user imported first. It never imports pxr or mimic_ext
(startup stays cheap) and steps aside when ``MIMIC_EXT_NO_SCHEMA_BOOT`` is set, e.g. in
a process that loads NVIDIA's real PhysxSchema plugin.
"""

import importlib.util
import os


def _install() -> None:
    if os.environ.get("MIMIC_EXT_NO_SCHEMA_BOOT"):
        return
    try:
        spec = importlib.util.find_spec("mimic_ext")
    except (ImportError, ValueError):
        return
    if spec is None or not spec.submodule_search_locations:
        return
    plugin = os.path.join(list(spec.submodule_search_locations)[0], "schema", "plugin")
    if not os.path.isfile(os.path.join(plugin, "plugInfo.json")):
        return
    current = os.environ.get("PXR_PLUGINPATH_NAME", "")
    parts = [p for p in current.split(os.pathsep) if p]
    if plugin not in parts:
        os.environ["PXR_PLUGINPATH_NAME"] = os.pathsep.join(parts + [plugin])


_install()
