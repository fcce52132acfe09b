"""Strict reading of numbers from XML attributes.

``float()`` accepts "nan", "inf", "1_0" and surrounding junk-free whitespace only; robot
files carry typos like ``multiplier="2junk"`` or ``offset=""`` that must be refused with
the file and line, never read as a default or a partial number.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..errors import MimicInputError
from .xmltree import Element

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def parse_number(text: str | None) -> float | None:
    """The finite float that ``text`` spells completely, or None."""
    if text is None:
        return None
    s = text.strip()
    if not _NUMBER.fullmatch(s):
        return None
    value = float(s)
    return value if math.isfinite(value) else None


def number(el: Element, name: str, default: float | None = None, what: str | None = None) -> float | None:
    """Attribute ``name`` of ``el`` as one complete finite number (``default`` when absent)."""
    text = el.get(name)
    if text is None:
        return default
    value = parse_number(text)
    if value is None:
        raise MimicInputError(f"{el.where}: {what or '<' + el.tag + '>'} {name}=\"{text}\" "
                              "is not one complete finite number")
    return value


def numbers(el: Element, name: str, count: int | tuple[int, ...] | None = None,
            default=None, what: str | None = None) -> np.ndarray | None:
    """Attribute ``name`` as a whitespace-separated list of finite numbers."""
    text = el.get(name)
    if text is None:
        return None if default is None else np.asarray(default, dtype=float)
    parts = text.split()
    values = [parse_number(p) for p in parts]
    label = what or f"<{el.tag}>"
    if any(v is None for v in values):
        raise MimicInputError(f"{el.where}: {label} {name}=\"{text}\" must be finite numbers")
    counts = (count,) if isinstance(count, int) else count
    if counts is not None and len(values) not in counts:
        want = " or ".join(str(c) for c in counts)
        raise MimicInputError(f"{el.where}: {label} {name}=\"{text}\" needs {want} numbers, got {len(values)}")
    return np.asarray(values, dtype=float)
