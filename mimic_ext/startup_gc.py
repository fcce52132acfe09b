"""Python's cyclic garbage collector held off while a ``mimic-ext sweep`` process starts.

Start-up (numpy, Warp's builtins and the solver's kernels, USD, NVIDIA's phase) creates about a
million objects that live as long as the process and very few garbage cycles, and the collector
walks them again and again as they pile up: about 0.1 s of a one-stage sweep's 1 s of CPU (issue
43; benchmarks/RESULTS.md). The CLI pauses automatic collection before it parses its arguments;
a sweep resumes it as soon as its first unit of work has reported (whatever garbage that unit
left is then collected as usual, so a catalogue's later stages run with the collector on), and
every other command resumes it at once. A Python caller of ``cli.main`` or ``sweep_paths`` never
pauses it, so ``resume`` does nothing there. Standard library only: the CLI module imports it.
"""

from __future__ import annotations

import gc

_paused = [False]


def pause() -> None:
    """Turn automatic collection off until ``resume`` (nothing when it is already off)."""
    if gc.isenabled():
        gc.disable()
        _paused[0] = True


def resume() -> None:
    """Turn automatic collection back on when ``pause`` turned it off (else nothing)."""
    if _paused[0]:
        _paused[0] = False
        gc.enable()


__all__ = ["pause", "resume"]
