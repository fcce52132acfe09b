"""The attributes a mimic element may carry, and the refusal of any other.

Why refuse rather than warn: a misspelled ``<mimic ofset="0.72">`` or ``<joint polycoeff=...>``
is read as the default (offset 0, multiplier 1), so the import would write a different
mechanism with exit 0, and nothing in the USD could tell later that the source meant
something else. MuJoCo itself refuses an unknown attribute ("Schema violation: unrecognized
attribute"), so an MJCF file we refuse is one MuJoCo refuses too. urdfdom ignores unknown
attributes, so for URDF only a namespaced one (``xacro:...``, a vendor's extension, which
cannot be a misspelling of ``offset``) is let through, with a warning.
"""

from __future__ import annotations

import difflib

from ..errors import MimicInputError
from .xmltree import Element

#: URDF ``<mimic>`` (urdfdom's parser reads exactly these)
URDF_MIMIC = ("joint", "multiplier", "offset")
#: MJCF ``<equality><joint>`` (MuJoCo 3.x's schema)
MJCF_EQUALITY_JOINT = ("name", "class", "active", "solref", "solimp", "joint1", "joint2", "polycoef")


def check_attributes(el: Element, known: tuple[str, ...], what: str, warnings: list[str], strict: bool) -> None:
    """Refuse an attribute of ``el`` outside ``known``, naming it, the file and line and the name
    it is closest to; with ``strict`` False a namespaced one (``a:b``) is only a warning."""
    for name, value in el.attrib.items():
        if name in known:
            continue
        if not strict and ":" in name:
            warnings.append(f'{el.where}: {what} attribute {name}="{value}" is not read (not a <mimic> attribute)')
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        raise MimicInputError(
            f'{el.where}: {what} has unknown attribute {name}="{value}", which no simulator reads (the value '
            f"meant would silently be the default): {hint}the attributes are {', '.join(known)}"
        )
