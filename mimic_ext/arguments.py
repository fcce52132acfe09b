"""Number types for command-line flags, shared by every sub-command (standard library only).

Python's ``float()`` accepts far more than a person means by a number: Arabic-Indic and
other Unicode digits, ``1_000``, surrounding spaces, ``nan`` and ``infinity``. A flag takes
plain ASCII decimal notation only, finite, and (where the value is stored in USD as a
32-bit float) within float32's range: 1e39 would be stored as inf and 1e-50 as 0.
The argparse error then names the flag.
"""

from __future__ import annotations

import argparse
import math
import re

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_NON_FINITE = ("nan", "inf", "infinity")
#: float32's largest finite value and its smallest normal one
FLOAT32_MAX = 3.4028234663852886e38
FLOAT32_TINY = 1.1754943508222875e-38


def finite_number(text: str) -> float:
    """An argparse ``type``: a finite number written in ASCII decimal notation."""
    if not _NUMBER.fullmatch(text):
        if text.strip().lstrip("+-").lower() in _NON_FINITE:
            raise argparse.ArgumentTypeError(f"must be a finite number, got '{text}'")
        raise argparse.ArgumentTypeError(f"'{text}' is not a number (write it in ASCII digits, e.g. 2, -0.5 or 1e-3)")
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got '{text}' (too large)")
    return value


def float32_number(text: str) -> float:
    """``finite_number`` that a 32-bit float (USD's ``float``) holds without becoming inf or 0."""
    value = finite_number(text)
    if abs(value) > FLOAT32_MAX:
        raise argparse.ArgumentTypeError(
            f"{text} does not fit the 32-bit float USD stores it in (largest {FLOAT32_MAX:.4g}); give a smaller value"
        )
    if value != 0 and abs(value) < FLOAT32_TINY:
        raise argparse.ArgumentTypeError(
            f"{text} is below the smallest 32-bit float USD can store exactly "
            f"({FLOAT32_TINY:.4g}; it would be stored as 0 or lose digits): "
            "give 0 or a larger value"
        )
    return value
