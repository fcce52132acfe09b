"""A package's public names, imported on first use (PEP 562 module ``__getattr__``).

``mimic-ext --help`` imports each part's ``commands`` module, which imports its package;
a package whose ``__init__`` imported its public modules eagerly would pull in USD, numpy
or Warp before any command runs.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps each name to the submodule
    holding it; the value is imported on first access and kept in the package namespace."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def lazy_dir(package: str, exports: Mapping[str, str]) -> Callable[[], list[str]]:
    """A module ``__dir__`` for ``package``: its namespace and the lazy names not loaded yet."""

    def __dir__() -> list[str]:
        return sorted([*vars(sys.modules[package]), *exports])

    return __dir__
