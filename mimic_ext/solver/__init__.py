"""Warp articulation solver that holds every mimic relation exactly (projection onto the
relations' null space; see docs/solver.md and ../shared/docs/SOLVER_NOTES.md)."""

from .errors import MimicConflictError, MimicParticipantError, StepInProgressError, UnsupportedStageError
from .model import Control, Model, State, build_model
from .solver import MimicRow, Solver

__all__ = ["build_model", "Solver", "Model", "State", "Control", "MimicRow", "MimicConflictError",
           "MimicParticipantError", "StepInProgressError", "UnsupportedStageError"]
