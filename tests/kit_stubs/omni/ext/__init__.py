"""Stand-in for ``omni.ext``: the ``IExt`` base class and the extension manager.

Real behaviour (kit-app-template python_ui extension.py; Kit dev guide): Kit instantiates every ``IExt``
subclass found in the module named by ``[[python.module]]`` (constructor takes no arguments), calls
``on_startup(ext_id)`` when the extension is enabled and ``on_shutdown()`` when it is disabled.

Enabling by name, as scripts and Kit's own extension manager window do
(``ExtensionManager.set_extension_enabled_immediate(extension_id, enabled) -> bool``, typings
``omni/ext/_extensions.pyi``; Isaac Sim's ``isaacsim.core.utils`` ``extensions.py`` ``enable_extension``
calls it with a name), follows the kernel's Python side of the extension manager, ``omni/ext/_impl/_internal.py``
(Kit kernel 6.2): ``ExtensionModules.prestartup_module`` appends the extension folder to ``sys.path``;
``ExtensionModules.startup`` imports each ``[[python.module]]`` (an already imported module is reused on the
first start), and ``_custom_importer`` logs ``Failed to import python module <name> from <path>. Error: ...``
when the import raises, after which ``startup`` stops; otherwise it starts every class found by
``dir(module)`` that is an ``IExt`` subclass (``_startup_ext``: ``ext_class()``, then ``on_startup(ext_id)``,
or ``on_startup()`` when it takes no parameter). ``ExtensionModules.shutdown`` calls ``on_shutdown()`` in the
reverse order, drops from ``sys.modules`` every module under the folders it added to ``sys.path`` and removes
those folders from ``sys.path``. What the native part does, as ``tools/kit_kernel_check.py`` saw it in the
real kernel 6.2: the extension is found as a folder (its name is the extension's name) holding
``config/extension.toml`` or ``extension.toml`` in a folder given with ``--ext-folder`` / ``add_path``; its
id is ``<name>-<package.version>``; ``[settings]`` are applied on enable; the solver fails the enable when a
required dependency cannot be resolved, leaves an optional one as it is, and the enable returns True (and
the extension stays listed as enabled) even when importing a python module failed. Not modelled: the
native hooks (``omni.kit.pipapi``'s before-enable hook), reloading on a second start, version ranges.

The change event stream (``ExtensionManager.get_change_event_stream()``): the real kernel 6.2 pushes
``EXTENSION_EVENT_SCRIPT_CHANGED`` when an extension's Python modules start and again when they shut down (seen
with an ``--exec`` probe: one event per enable and per disable, delivered to a pop subscriber during that same
app update); here it is pushed by ``_startup``/``_shutdown`` and pumped once per frame by the stand-in app's
``update()``. Kit's ``CommandExt`` re-registers every live ``Command`` subclass on each of these events (see the
``omni.kit.commands`` stand-in). The constants are the real kernel's values.

Stand-in extensions of the Kit SDK (``_STAND_INS``): enabling one (by name, or as a required dependency of an
extension being enabled) starts the ``IExt`` classes of its stand-in module, as Kit starts the real ones:
``omni.kit.async_engine`` (the loop) and ``omni.kit.commands`` (``CommandExt``). The other modules of
``_PROVIDED`` are listed as enabled and start nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import tomllib
import traceback
from pathlib import Path

#: The Kit extensions these stand-ins stand for, by the module that is there when the stand-in is: a required
#: dependency resolves (and is enabled) when that module can be found. omni.physx lists itself when imported.
_PROVIDED = {
    "omni.kit.uiapp": "omni.ui",
    "omni.ui": "omni.ui",
    "omni.usd": "omni.usd",
    "omni.kit.commands": "omni.kit.commands",
    "omni.kit.window.property": "omni.kit.window.property",
    "omni.kit.property.usd": "omni.kit.property.usd",
    "omni.kit.menu.utils": "omni.kit.menu.utils",
    "omni.kit.actions.core": "omni.kit.actions.core",
    "omni.kit.pipapi": "omni.kit.pipapi",
    "omni.kit.context_menu": "omni.kit.context_menu",
    "omni.kit.notification_manager": "omni.kit.notification_manager",
    "omni.kit.test": "omni.kit.test",
}
STAND_IN_VERSION = "0.0.0+standin"
#: stand-in extensions whose module has ``IExt`` classes to start (name -> its python module)
_STAND_INS = {"omni.kit.async_engine": "omni.kit.async_engine", "omni.kit.commands": "omni.kit.commands"}
#: ``omni.ext.EXTENSION_EVENT_SCRIPT_CHANGED`` / ``EXTENSION_EVENT_FOLDER_CHANGED`` of the real kernel 6.2
EXTENSION_EVENT_SCRIPT_CHANGED = 5696860606285888797
EXTENSION_EVENT_FOLDER_CHANGED = 16256091767625351810


class IExt:
    def __init__(self) -> None:
        pass

    def on_startup(self, ext_id: str) -> None:  # pragma: no cover - overridden
        pass

    def on_shutdown(self) -> None:  # pragma: no cover - overridden
        pass


def get_extension_name(ext_id: str) -> str:
    """``name-version`` -> ``name``, ``name-tag-version`` -> ``name-tag`` (Kit's
    ``omni/ext/_impl/__init__.py`` ``get_extension_name``: the second part is a version when
    its first dot-separated piece is a number)."""
    a, b, *_ = ext_id.split("-") + [""]
    if b and not b.split(".")[0].isdigit():
        return f"{a}-{b}"
    return a


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _settings(tree: dict, prefix: str = "") -> dict[str, object]:
    """``[settings]`` of a manifest as carb setting paths (``exts."a".b = 1`` -> ``/exts/a/b``)."""
    out: dict[str, object] = {}
    for key, value in tree.items():
        path = f"{prefix}/{key}"
        if isinstance(value, dict):
            out.update(_settings(value, path))
        else:
            out[path] = value
    return out


class ExtensionManager:
    """The few look-ups extensions make; paths resolve the way Kit lays extensions out on disk."""

    def __init__(self) -> None:
        self._enabled: dict[str, str] = {}
        self._dicts: dict[str, dict] = {}
        self._folders: list[str] = []
        self._started: dict[str, list] = {}  # ext id -> IExt instances, in startup order
        self._sys_paths: dict[str, list[str]] = {}  # ext id -> folders its start added to sys.path
        import carb.events

        self._change_stream = carb.events.IEventStream("extension change")
        root = str(Path(__file__).resolve().parents[1])  # the stand-ins' folder (on sys.path)
        for name, module in _STAND_INS.items():
            self._dicts[f"{name}-{STAND_IN_VERSION}"] = {
                "package": {"version": STAND_IN_VERSION, "title": f"{name} (stand-in)"},
                "python": {"module": [{"name": module}]},
                "path": root,
            }

    def get_change_event_stream(self):
        return self._change_stream

    def _stub_pump_changes(self) -> None:
        self._change_stream.pump()

    def _stub_add_extension(self, ext_id: str, ext_dict: dict) -> None:
        """Make ``get_extension_dict(ext_id)`` return ``ext_dict`` (a parsed extension.toml)."""
        self._dicts[ext_id] = ext_dict

    def get_extension_dict(self, ext_id: str):
        """A ``carb.dictionary.Item`` as in Kit (whose ``get`` needs a default), not a dict."""
        import carb.dictionary

        return carb.dictionary.Item(self._dicts.get(ext_id, {}))

    def _stub_enable(self, ext_id: str) -> None:
        self._enabled[get_extension_name(ext_id)] = ext_id

    def _stub_disable(self, ext_id: str) -> None:
        self._enabled.pop(get_extension_name(ext_id), None)

    def is_extension_enabled(self, name: str) -> bool:
        return name in self._enabled

    def get_enabled_extension_id(self, ext_name: str) -> str | None:
        return self._enabled.get(ext_name)

    def get_extension_path_by_module(self, module: str) -> str | None:
        mod = sys.modules.get(module)
        file = getattr(mod, "__file__", None)
        if not file:
            return None
        for folder in Path(file).resolve().parents:
            if (folder / "config" / "extension.toml").is_file() or (folder / "extension.toml").is_file():
                return str(folder)
        return None

    # -- finding and enabling extensions in folders (``--ext-folder``) ----------------------------------
    def add_path(self, path: str, type=None) -> None:
        path = os.path.abspath(os.fspath(path))
        if path not in self._folders:
            self._folders.append(path)

    def remove_path(self, path: str) -> None:
        path = os.path.abspath(os.fspath(path))
        if path in self._folders:
            self._folders.remove(path)

    def _scan(self) -> None:
        for folder in self._folders:
            for child in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else ():
                manifest = next(
                    (m for m in (child / "config" / "extension.toml", child / "extension.toml") if m.is_file()), None
                )
                if manifest is None:
                    continue
                data = tomllib.loads(manifest.read_text())
                version = str(data.get("package", {}).get("version", ""))
                ext_id = f"{child.name}-{version}" if version else child.name
                self._dicts.setdefault(ext_id, {**data, "path": str(child), "configPath": str(manifest)})

    def get_extensions(self) -> tuple:
        self._scan()
        out = []
        for ext_id, d in self._dicts.items():
            name = get_extension_name(ext_id)
            out.append(
                {
                    "id": ext_id,
                    "name": name,
                    "version": str(d.get("package", {}).get("version", "")),
                    "title": d.get("package", {}).get("title", ""),
                    "path": d.get("path", ""),
                    "enabled": self._enabled.get(name) == ext_id,
                }
            )
        return tuple(out)

    def get_extension_path(self, ext_id: str) -> str:
        return str(self._dicts.get(ext_id, {}).get("path", ""))

    def _resolve(self, extension_id: str) -> str | None:
        self._scan()
        if extension_id in self._dicts:
            return extension_id
        return next((i for i in self._dicts if get_extension_name(i) == extension_id), None)

    def set_extension_enabled_immediate(self, extension_id: str, enabled: bool) -> bool:
        import carb

        if not enabled:
            name = get_extension_name(extension_id)
            ext_id = self._enabled.get(name)
            if ext_id is not None:
                self._shutdown(ext_id)
                self._enabled.pop(name, None)
            return True
        ext_id = self._resolve(extension_id)
        if ext_id is None:
            carb.log_error(f"Can't find extension '{extension_id}' in the extension folders {self._folders}")
            return False
        name = get_extension_name(ext_id)
        if self._enabled.get(name) == ext_id:
            return True
        d = self._dicts[ext_id]
        for dep, spec in d.get("dependencies", {}).items():
            if (spec or {}).get("optional") or dep in self._enabled:
                continue  # an optional dependency stays as it is (enabled or not)
            if dep in _STAND_INS and _found(_STAND_INS[dep]):
                self.set_extension_enabled_immediate(dep, True)
                continue
            if dep in _PROVIDED and _found(_PROVIDED[dep]):
                self._stub_enable(f"{dep}-{STAND_IN_VERSION}")
                continue
            carb.log_error(f"Failed to solve dependencies of '{ext_id}': '{dep}' cannot be found")
            return False
        import carb.settings

        settings = carb.settings.get_settings()
        for path, value in _settings(d.get("settings", {})).items():
            settings.set_default(path, value)
        self._enabled[name] = ext_id
        self._startup(ext_id, d)
        return True

    def _startup(self, ext_id: str, d: dict) -> None:
        """``ExtensionModules.prestartup_module`` + ``startup`` + ``_startup_ext``."""
        import carb

        path = os.path.abspath(d.get("path", ""))
        self._sys_paths[ext_id] = []
        if path not in sys.path:
            sys.path.append(path)
            self._sys_paths[ext_id].append(path)
        started = self._started.setdefault(ext_id, [])
        for entry in d.get("python", {}).get("module", []):
            name = entry.get("name", "")
            if not name:
                continue
            try:
                module = sys.modules.get(name) or importlib.import_module(name)
            except Exception as exc:
                carb.log_error(
                    f"Failed to import python module {name} from {path}. Error: {exc}. "
                    f"Traceback:\n{traceback.format_exc()}"
                )
                return
            for attr in dir(module):
                obj = getattr(module, attr)
                if isinstance(obj, type) and issubclass(obj, IExt):
                    instance = obj()
                    if len(inspect.signature(instance.on_startup).parameters) > 0:
                        instance.on_startup(ext_id)
                    else:
                        instance.on_startup()
                    started.append(instance)
        self._change_stream.push(EXTENSION_EVENT_SCRIPT_CHANGED, payload={"ext_id": ext_id})

    def _shutdown(self, ext_id: str) -> None:
        """``ExtensionModules.shutdown``."""
        for instance in reversed(self._started.pop(ext_id, [])):
            if hasattr(instance, "on_shutdown"):
                instance.on_shutdown()
        for folder in self._sys_paths.pop(ext_id, []):
            for name, mod in list(sys.modules.items()):
                file = getattr(mod, "__file__", None)
                if file and Path(folder) in Path(os.path.abspath(file)).parents:
                    del sys.modules[name]
            if folder in sys.path:
                sys.path.remove(folder)
        self._change_stream.push(EXTENSION_EVENT_SCRIPT_CHANGED, payload={"ext_id": ext_id})

    def _stub_shutdown_all(self) -> None:
        """What Kit's shutdown does to the extensions it started: disables them, the last started first."""
        for ext_id in reversed(list(self._started)):
            self.set_extension_enabled_immediate(get_extension_name(ext_id), False)
