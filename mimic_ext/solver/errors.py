"""Errors the solver raises, split by who can fix them.

Bad stages, bad relations, bad step arguments and states that are no longer finite are the
user's to fix (``MimicInputError`` subclasses, one line naming the prims or environments);
calling ``add_mimic`` from inside a step is a programming error (``StepInProgressError``),
as RaiSim's ``addMimicConstraint`` throws ``std::logic_error``.
"""

from __future__ import annotations

from ..errors import MimicInputError
from ..schema.forest import MimicConflictError

__all__ = [
    "LoopConflictError",
    "MimicConflictError",
    "MimicInputError",
    "MimicParticipantError",
    "NonFiniteStateError",
    "StageValueError",
    "StepInProgressError",
    "StepInputError",
    "UnsupportedStageError",
]


class UnsupportedStageError(MimicInputError):
    """The stage holds something the solver does not model (a spherical joint in a tree...)."""


class StageValueError(MimicInputError):
    """A physics value on the stage is not usable (NaN or infinite, negative mass, lower > upper...)."""


class MimicParticipantError(MimicInputError):
    """A relation names a joint that cannot take part (itself, spherical, fixed, floating base, unknown)."""


class LoopConflictError(MimicConflictError):
    """A hard relation that the model's loop closures contradict: its offset differs from the one
    the loops hold (``LOOP_OFFSET``), or the loops already fix the two joints' ratio to another
    value, so both could only stand still (``LOOP_GAIN``). ``relations`` names the relation and
    the loop-closing joints."""

    LOOP_OFFSET = "loop_offset"
    LOOP_GAIN = "loop_gain"


class StepInputError(MimicInputError, ValueError):
    """``Solver.step`` was given a time step that is not a finite positive number."""


class NonFiniteStateError(MimicInputError, FloatingPointError):
    """Environments whose state became NaN or infinite (``envs``), raised by a solver asked to."""

    def __init__(self, message: str, envs):
        super().__init__(message)
        self.envs = list(envs)


class StepInProgressError(RuntimeError):
    """``add_mimic`` was called while a step was being taken (e.g. from a step callback)."""


class WorkSpaceOverrunError(RuntimeError):
    """A step wrote past the end of a work-space field (found by the debug guards of
    ``solver.workspace``): a defect of the solver, not of the user's input."""
