"""Warp articulation solver that holds every mimic relation and loop closure exactly
(projection onto the relations' null space plus an exact loop solve; see docs/solver.md and
docs/solver_design.md)."""

from .devices import default_device, set_default_device
from .errors import (LoopConflictError, MimicConflictError, MimicParticipantError, NonFiniteStateError,
                     StageValueError, StepInProgressError, StepInputError, UnsupportedStageError,
                     WorkSpaceOverrunError)
from .model import Control, Model, State, build_model
from .solver import MimicRow, Solver

__all__ = ["build_model", "Solver", "Model", "State", "Control", "MimicRow", "default_device",
           "set_default_device", "MimicConflictError",
           "LoopConflictError", "MimicParticipantError", "NonFiniteStateError", "StageValueError",
           "StepInProgressError", "StepInputError", "UnsupportedStageError", "WorkSpaceOverrunError"]
