"""Starting Warp for mimic_ext's solver the way a user expects: quietly, on a device that exists.

On a machine without a GPU Warp prints "Could not find or load the NVIDIA CUDA driver" at
every start, from native code; when no CUDA device was asked for that is noise, so it is
silenced, and when one was, ``check_device`` says it in one line, naming the devices that
exist. The solver's kernels compile once (several seconds) and are then cached on disk; a
cold cache is detected before the first launch so the user is told why nothing happens.
Imports Warp only when called.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

from .errors import MimicInputError
from .native_stderr import quiet_native_stderr

#: the Python package that builds the solver's kernels, one Warp module per precision and kind
#: (``kernels(precision, contacts, **features).module``: ``mimic_solver_float32``, ``mimic_contact_float32``, ...)
SOLVER_KERNEL_MODULE = "mimic_ext.solver.kernels"
COLD_COMPILE_NOTE = "mimic-ext: compiling solver kernels (first run only, about 10 s)"
#: a contact model's kernels (the step with detection and contact rows in it) take longer
COLD_COMPILE_NOTE_CONTACTS = "mimic-ext: compiling the solver's contact kernels (first run only, about 20 s)"

#: The oldest Warp the solver's kernels build on: ``@wp.func(inline=False)`` (the solver keeps its big
#: functions out of line) is accepted from warp-lang 1.18.0 on; 1.17 raises TypeError when the kernels
#: are defined. pyproject.toml and extension.toml declare the same (a test ties them).
WARP_MIN_VERSION = (1, 18)

_announced: set[tuple] = set()


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in str(text).split(".")[:3]:
        digits = "".join(itertools.takewhile(str.isdigit, piece))
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def warp_version_problem() -> str | None:
    """One line when the importable Warp is older than the solver needs (or absent), else None.
    Matters in Kit, where an app's own ``omni.warp.core`` provides ``warp`` and pip is never asked."""
    need = ".".join(map(str, WARP_MIN_VERSION))
    try:
        import warp
    except ImportError as exc:
        return f"mimic_ext's solver needs Warp >= {need} (warp-lang), which cannot be imported here ({exc})"
    found = str(getattr(warp, "__version__", "unknown"))
    if _version_tuple(found) >= WARP_MIN_VERSION:
        return None
    return (
        f"mimic_ext's solver needs Warp >= {need} (its kernels use @wp.func(inline=False)); this Python has "
        f"Warp {found} from {getattr(warp, '__file__', '?')}, so sweeps on the warp engine fail. Use Warp "
        f"{need} or newer (warp-lang, or an app whose omni.warp.core ships it)"
    )


def wants_cuda(device: str | None) -> bool:
    return device is not None and str(device).startswith("cuda")


def quiet_warp(wp) -> None:
    """Keep Warp's start-up banner off stdout (reports live there); errors still show."""
    if hasattr(wp.config, "log_level") and hasattr(wp, "LOG_WARNING"):
        wp.config.log_level = max(wp.config.log_level, wp.LOG_WARNING)
    else:  # older Warp
        wp.config.quiet = True


def init_warp():
    """``warp`` initialised and quiet, without the CUDA-driver warning (where CUDA was asked
    for and is missing, ``check_device`` says so in one line). Returns the ``warp`` module."""
    import warp as wp

    quiet_warp(wp)
    with quiet_native_stderr():
        wp.init()
    return wp


def device_problem(device: str) -> str | None:
    """Why ``device`` cannot be used on this machine (one line, naming the devices it has), else None."""
    wp = init_warp()
    try:
        wp.get_device(device)
    except (ValueError, RuntimeError):
        names = ", ".join(str(d) for d in wp.get_devices()) or "none"
        why = (
            ""
            if wp.is_cuda_available() or not wants_cuda(device)
            else "; no CUDA driver or GPU is available on this machine"
        )
        return f"no such device (this machine has: {names}){why}"
    return None


def check_device(device: str) -> str:
    """``device`` when Warp has it on this machine, else a one-line ``MimicInputError``."""
    problem = device_problem(device)
    if problem:
        raise MimicInputError(f"--device {device}: {problem.replace('no such device', 'no such Warp device', 1)}")
    return device


def solver_kernels_cached(
    device: str = "cpu", precision: str = "float32", contacts: bool = False, **features: bool
) -> bool:
    """Whether the solver's kernel module for ``precision`` (with contact rows when ``contacts``,
    and the optional code ``features`` names: ``model.kernel_features``) is in Warp's kernel cache
    for ``device``.

    Looks for the compiled binary in the module's cache folder, whose name carries the hash
    of the kernels' source (``Module.get_module_identifier``), so an edited solver reads as
    cold. Builds the kernels' namespace (which registers them; it does not compile them).
    """
    import importlib

    wp = init_warp()
    ns = importlib.import_module(SOLVER_KERNEL_MODULE).kernels(precision, contacts=contacts, **features)
    module = wp.get_module(ns.module)
    folder = Path(wp.config.kernel_cache_dir) / module.get_module_identifier(_launch_block_dim(wp, module, device))
    if not folder.is_dir():
        return False
    binary = (".o",) if not wants_cuda(device) else (".ptx", ".cubin")
    return any(name.endswith(binary) for name in os.listdir(folder))


def _launch_block_dim(wp, module, device: str) -> int:
    """The block_dim a plain launch compiles the module for (part of its cache key): one on the
    CPU, the module's default on CUDA (Warp's ``_resolve_launch_block_dim``)."""
    try:
        from warp._src.context import _resolve_launch_block_dim

        return _resolve_launch_block_dim(
            wp.get_device(device), None if not wants_cuda(device) else module.options["block_dim"]
        )
    except (ImportError, AttributeError):  # another Warp layout: its documented defaults
        return 1 if not wants_cuda(device) else module.options["block_dim"]


def announce_cold_compile(
    device: str = "cpu", precision: str = "float32", contacts: bool = False, **features: bool
) -> bool:
    """Say on stderr, once per process, device and kernel module (``features``: the optional code
    it has, ``model.kernel_features``), that the kernels are about to compile. Returns whether they
    were cold. Never raises: the note is a courtesy."""
    key = (device, precision, bool(contacts), *sorted((k, bool(v)) for k, v in features.items()))
    if key in _announced:
        return False
    _announced.add(key)
    try:
        cold = not solver_kernels_cached(device, precision, contacts, **features)
    except Exception:
        return False
    if cold:
        print(COLD_COMPILE_NOTE_CONTACTS if contacts else COLD_COMPILE_NOTE, file=sys.stderr, flush=True)
    return cold
