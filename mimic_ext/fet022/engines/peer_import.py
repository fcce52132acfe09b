"""Importing an engine's peer package with the real cause when it fails.

A package can be absent, or installed and broken: its import raises ``ImportError`` (a
missing submodule or a version mismatch) or ``OSError`` (a shared library such as libGL
missing). Only the first is fixed by installing the extra; the others need the package's
own error shown, so each gets its own one line naming the package. Before a run the peer is
only looked up (``find_peer``: importing Newton takes seconds, in a process that does not run
it); ``import_peer`` imports it where the engine runs and names what went wrong.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from types import ModuleType

from ...errors import MimicInputError


def _not_installed(module: str, extra: str) -> MimicInputError:
    return MimicInputError(
        f"the {extra} engine needs {module}, which is not installed: pip install 'mimic-ext[{extra}]'"
    )


def find_peer(module: str, extra: str) -> None:
    """A one-line ``MimicInputError`` when ``module`` (a top-level package) is not installed;
    the package is found, not imported."""
    if sys.modules.get(module) is not None:  # imported already (None: an import that is blocked)
        return
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a finder that fails: leave the diagnosis to import_peer
        return
    if spec is None:
        raise _not_installed(module, extra)


def import_peer(module: str, extra: str) -> ModuleType:
    """``module`` imported (its import-time warnings silenced: the engine reports what it
    uses), else a one-line ``MimicInputError`` naming it and why."""
    try:
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(name=module)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        if missing == module or module.startswith(missing + "."):
            raise _not_installed(module, extra) from None
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
