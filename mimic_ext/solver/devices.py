"""The Warp device a model is built on when its caller names none.

It is "cpu": the solver's kernels are written for a thread per environment on any Warp
device, but a CPU is what every machine has. ``set_default_device`` moves that default for
the process (the test suite's ``--device cuda:0`` does, to run the solver's tests on a GPU);
a caller that names ``device=`` gets that device whatever the default is.
"""

from __future__ import annotations

import warp as wp

_default = "cpu"


def default_device() -> str:
    """The device ``build_model`` and ``Model`` use for ``device=None``."""
    return _default


def set_default_device(device: str) -> str:
    """Build models on ``device`` (a Warp device name Warp has here) when their caller names
    none; returns the previous default, for a caller that puts it back."""
    global _default
    name = str(wp.get_device(device))  # raises for a device this machine lacks
    previous, _default = _default, name
    return previous


def resolve_device(device) -> wp.Device:
    """``device`` as a Warp device; None is ``default_device()``."""
    return wp.get_device(_default if device is None else device)


__all__ = ["default_device", "resolve_device", "set_default_device"]
