"""Strict reading of numbers from XML attributes.

``float()`` accepts "nan", "inf", "1_0" and any Unicode digit (an Arabic-Indic one reads
as 1); robot files carry typos like ``multiplier="2junk"`` or ``offset=""`` that must be
refused with the file and line, never read as a default or a partial number. USD stores
most values as float32, so a number float32 cannot hold (1e39 becomes inf, 1e-50 becomes
0) is refused here too rather than written as something else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import overload

import numpy as np

from ..errors import MimicInputError
from .xmltree import Element

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPACE = re.compile(r"[ \t\r\n]+")
#: the largest float32 and the smallest positive (subnormal) one
F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).smallest_subnormal)
#: an effort or velocity limit at or above this means "no limit" (URDF requires the
#: attributes, so ``export`` writes this where the USD has none; ``import`` reads it back
#: as unlimited)
UNBOUNDED = 1e30


def fits_float32(value: float) -> bool:
    """True when float32 keeps ``value`` finite, and nonzero when it is nonzero."""
    a = abs(value)
    return math.isfinite(value) and a <= F32_MAX and (a == 0.0 or a >= F32_TINY)


def parse_number(text: str | None) -> float | None:
    """The finite float that ``text`` spells completely in ASCII and float32 can hold, or None."""
    if text is None:
        return None
    s = text.strip(" \t\r\n")
    if not _NUMBER.fullmatch(s):
        return None
    value = float(s)
    return value if fits_float32(value) else None


def ascii_split(text: str) -> list[str]:
    """Whitespace-separated words, splitting on XML's (ASCII) whitespace only."""
    return [w for w in _SPACE.split(text) if w]


@overload
def number(el: Element, name: str, default: None = None, what: str | None = None) -> float | None: ...
@overload
def number(el: Element, name: str, default: float, what: str | None = None) -> float: ...
def number(el: Element, name: str, default: float | None = None, what: str | None = None) -> float | None:
    """Attribute ``name`` of ``el`` as one complete finite number (``default`` when absent)."""
    text = el.get(name)
    if text is None:
        return default
    value = parse_number(text)
    if value is None:
        raise MimicInputError(
            f'{el.where}: {what or "<" + el.tag + ">"} {name}="{text}" '
            "is not one complete finite number (ASCII digits, within float32's range)"
        )
    return value


@overload
def numbers(
    el: Element, name: str, count: int | tuple[int, ...] | None = None, default: None = None, what: str | None = None
) -> np.ndarray | None: ...
@overload
def numbers(
    el: Element,
    name: str,
    count: int | tuple[int, ...] | None = None,
    *,
    default: Sequence[float] | np.ndarray,
    what: str | None = None,
) -> np.ndarray: ...
def numbers(
    el: Element, name: str, count: int | tuple[int, ...] | None = None, default=None, what: str | None = None
) -> np.ndarray | None:
    """Attribute ``name`` as a whitespace-separated list of finite numbers."""
    text = el.get(name)
    if text is None:
        return None if default is None else np.asarray(default, dtype=float)
    parts = ascii_split(text)
    values = [parse_number(p) for p in parts]
    label = what or f"<{el.tag}>"
    if any(v is None for v in values):
        raise MimicInputError(
            f'{el.where}: {label} {name}="{text}" must be finite numbers (ASCII digits, within float32\'s range)'
        )
    counts = (count,) if isinstance(count, int) else count
    if counts is not None and len(values) not in counts:
        want = " or ".join(str(c) for c in counts)
        raise MimicInputError(f'{el.where}: {label} {name}="{text}" needs {want} numbers, got {len(values)}')
    return np.asarray(values, dtype=float)
