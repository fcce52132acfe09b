"""Errors the solver raises, split by who can fix them.

Bad stages and bad relations are the user's to fix (``MimicInputError`` subclasses, one
line naming the prims); calling ``add_mimic`` from inside a step is a programming error
(``StepInProgressError``), as RaiSim's ``addMimicConstraint`` throws ``std::logic_error``.
"""

from __future__ import annotations

from ..errors import MimicInputError
from ..schema.forest import MimicConflictError

__all__ = ["MimicInputError", "MimicConflictError", "UnsupportedStageError",
           "MimicParticipantError", "StepInProgressError"]


class UnsupportedStageError(MimicInputError):
    """The stage holds something the solver does not model (a spherical joint in a tree...)."""


class MimicParticipantError(MimicInputError):
    """A relation names a joint that cannot take part (itself, spherical, fixed, floating base, unknown)."""


class StepInProgressError(RuntimeError):
    """``add_mimic`` was called while a step was being taken (e.g. from a step callback)."""
