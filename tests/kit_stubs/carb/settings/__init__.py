"""Stand-in for ``carb.settings``: one process-wide tree of slash-separated paths.

Real behaviour (typings5 ``carb/settings/_settings.pyi``): ``get(path)`` returns a Python value or None when
missing; ``set``/``set_default`` and typed getters/setters; arrays come back as lists.
"""

from __future__ import annotations

from typing import Any


def _norm(path: str) -> str:
    return "/" + "/".join(p for p in str(path).split("/") if p)


class ISettings:
    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def get(self, path: str) -> Any:
        value = self._values.get(_norm(path))
        return list(value) if isinstance(value, tuple) else value

    def set(self, path: str, value: Any) -> None:
        self._values[_norm(path)] = value

    def set_default(self, path: str, value: Any) -> None:
        self._values.setdefault(_norm(path), value)

    def destroy_item(self, path: str) -> None:
        self._values.pop(_norm(path), None)

    def get_as_bool(self, path: str) -> bool:
        return bool(self.get(path) or False)

    def get_as_int(self, path: str) -> int:
        return int(self.get(path) or 0)

    def get_as_float(self, path: str) -> float:
        return float(self.get(path) or 0.0)

    def get_as_string(self, path: str) -> str:
        value = self.get(path)
        return "" if value is None else str(value)

    def set_bool(self, path: str, value: bool) -> None:
        self.set(path, bool(value))

    def set_int(self, path: str, value: int) -> None:
        self.set(path, int(value))

    def set_float(self, path: str, value: float) -> None:
        self.set(path, float(value))

    def set_string(self, path: str, value: str) -> None:
        self.set(path, str(value))

    def set_default_bool(self, path: str, value: bool) -> None:
        self.set_default(path, bool(value))

    def set_default_int(self, path: str, value: int) -> None:
        self.set_default(path, int(value))

    def set_default_float(self, path: str, value: float) -> None:
        self.set_default(path, float(value))

    def set_default_string(self, path: str, value: str) -> None:
        self.set_default(path, str(value))


_SETTINGS = ISettings()


def get_settings() -> ISettings:
    return _SETTINGS
