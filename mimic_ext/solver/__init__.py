"""Warp articulation solver that holds every mimic relation and loop closure exactly
(projection onto the relations' null space plus an exact loop solve; see docs/solver.md and
docs/solver_design.md)."""

from .devices import default_device, set_default_device
from .errors import (
    LoopConflictError,
    MimicConflictError,
    MimicParticipantError,
    NonFiniteStateError,
    StageValueError,
    StepInProgressError,
    StepInputError,
    UnsupportedStageError,
    WorkSpaceOverrunError,
)
from .model import Model, build_model
from .solver import MimicRow, Solver
from .state import Control, State

__all__ = [
    "Control",
    "LoopConflictError",
    "MimicConflictError",
    "MimicParticipantError",
    "MimicRow",
    "Model",
    "NonFiniteStateError",
    "Solver",
    "StageValueError",
    "State",
    "StepInProgressError",
    "StepInputError",
    "UnsupportedStageError",
    "WorkSpaceOverrunError",
    "build_model",
    "default_device",
    "set_default_device",
]
