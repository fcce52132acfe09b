"""Importing an engine's peer package with the real cause when it fails.

A package can be absent, or installed and broken: its import raises ``ImportError`` (a
missing submodule or a version mismatch) or ``OSError`` (a shared library such as libGL
missing). Only the first is fixed by installing the extra; the others need the package's
own error shown, so each gets its own one line naming the package.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from ...errors import MimicInputError


def import_peer(module: str, extra: str) -> ModuleType:
    """``module`` imported, else a one-line ``MimicInputError`` naming it and why."""
    try:
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(name=module)
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        if missing == module or module.startswith(missing + "."):
            raise MimicInputError(
                f"the {extra} engine needs {module}, which is not installed: pip install 'mimic-ext[{extra}]'"
            ) from None
        raise MimicInputError(
            f"the {extra} engine: {module} is installed but its import failed: it needs {missing}, "
            f"which is not installed ({exc})"
        ) from None
    except ImportError as exc:
        raise MimicInputError(
            f"the {extra} engine: {module} is installed but its import failed: ImportError: {_one_line(exc)} "
            f"(reinstall it, or the version the extra names: pip install 'mimic-ext[{extra}]')"
        ) from None
    except OSError as exc:
        raise MimicInputError(
            f"the {extra} engine: {module} is installed but its import failed: OSError: {_one_line(exc)} "
            "(a system library it loads is missing or broken)"
        ) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
