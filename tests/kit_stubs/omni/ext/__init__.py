"""Stand-in for ``omni.ext``: the ``IExt`` base class and the extension manager.

Real behaviour (kit-app-template python_ui extension.py; Kit dev guide): Kit instantiates every ``IExt``
subclass found in the module named by ``[[python.module]]`` (constructor takes no arguments), calls
``on_startup(ext_id)`` when the extension is enabled and ``on_shutdown()`` when it is disabled.
"""

from __future__ import annotations

import sys
from pathlib import Path


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


class ExtensionManager:
    """The few look-ups extensions make; paths resolve the way Kit lays extensions out on disk."""

    def __init__(self) -> None:
        self._enabled: dict[str, str] = {}
        self._dicts: dict[str, dict] = {}

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
