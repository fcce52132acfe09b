"""mimic_ext: mimic joints (a follower kept at ``multiplier * leader + offset``) for USD.

Kept import-light on purpose: ``import mimic_ext`` must not pull in pxr or warp, so the
CLI starts fast and the Kit layer can import pieces on demand.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
