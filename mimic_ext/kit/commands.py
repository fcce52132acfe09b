"""Undoable Kit commands that add, edit and remove PhysxMimicJointAPI relations.

Every command records the follower's prim spec on the stage's edit target before it edits
(``PrimSpecSnapshot``), so undo restores the exact authored state, including which
attributes were unauthored (fallbacks) and the ``apiSchemas`` list op; Kit's redo calls
``do`` again, which records afresh. Values are PhysX convention as typed (gearing; offset
in degrees for a revolute follower, stage distance for a prismatic one).

Refused input (non-finite values, zero gearing, a joint following itself, a reference that
is not a joint, an unknown instance) logs one line with ``carb.log_error`` and raises
``MimicInputError`` from ``do`` before anything is written: Kit then returns
``(False, None)`` from ``execute`` and keeps nothing on the undo stack.

Names end in ``Command``; Kit registers them without it (``execute("SetMimicGearing", ...)``).
"""

from __future__ import annotations

from typing import Any

import carb
import omni.kit.commands
import omni.usd
from pxr import Sdf, Usd

from ..errors import MimicInputError
from ..schema.authoring import read_joint_relations, remove_relation
from ..schema.relation import PHYSX, SCHEMAS, MimicRelation
from . import physx_edits as edits
from .prim_snapshot import PrimSpecSnapshot


class _MimicEditCommand(omni.kit.commands.Command):
    """Shared do/undo: check, record the prim spec, edit; undo puts the record back."""

    def __init__(self, prim_path: str | Sdf.Path, instance: str | None = "rotX", stage: Usd.Stage | None = None,
                 usd_context_name: str = ""):
        self._prim_path = str(prim_path)
        self._instance = instance
        self._stage_arg = stage
        self._usd_context_name = usd_context_name
        self._snapshot: PrimSpecSnapshot | None = None

    def _stage(self) -> Usd.Stage | None:
        if self._stage_arg is not None:
            return self._stage_arg
        return omni.usd.get_context(self._usd_context_name).get_stage()

    def _follower_problem(self, stage: Usd.Stage | None) -> str | None:
        return edits.follower_problem(stage, self._prim_path)

    def _problem(self, stage: Usd.Stage) -> str | None:
        """Why this command's inputs are refused (after the follower itself passed), or None."""
        return None

    def _apply(self, stage: Usd.Stage, prim: Usd.Prim) -> Any:
        raise NotImplementedError

    def _refuse(self, problem: str) -> None:
        name = type(self).__name__.removesuffix("Command")
        carb.log_error(f"{name}: {problem}")
        raise MimicInputError(problem)

    def _relation(self, prim: Usd.Prim, instance: str) -> MimicRelation:
        return next(r for r in read_joint_relations(prim) if r.schema == PHYSX and r.instance == instance)

    def do(self):
        stage = self._stage()
        problem = self._follower_problem(stage) or self._problem(stage)
        if problem:
            self._refuse(problem)
        self._snapshot = PrimSpecSnapshot.of_edit_target(stage, self._prim_path)
        try:
            return self._apply(stage, stage.GetPrimAtPath(self._prim_path))
        except Exception:
            self._snapshot.restore()
            self._snapshot = None
            raise

    def undo(self):
        if self._snapshot is not None:
            self._snapshot.restore()
            self._snapshot = None


class AddMimicJointCommand(_MimicEditCommand):
    """Make ``prim_path`` follow ``reference_joint_path``: ``q_f + gearing*q_ref + offset = 0``.

    The default gearing -1 makes the follower move with its reference, 1:1.
    """

    def __init__(self, prim_path: str | Sdf.Path, reference_joint_path: str | Sdf.Path, gearing: float = -1.0,
                 offset: float = 0.0, instance: str = "rotX", reference_axis: str = "rotX",
                 natural_frequency: float = 0.0, damping_ratio: float = 0.0, stage: Usd.Stage | None = None,
                 usd_context_name: str = ""):
        super().__init__(prim_path, instance, stage, usd_context_name)
        self._reference = str(reference_joint_path)
        self._values = {"gearing": gearing, "offset": offset, "natural_frequency": natural_frequency,
                        "damping_ratio": damping_ratio}
        self._axis = reference_axis

    def _problem(self, stage):
        v = self._values
        return (edits.instance_problem(stage, self._prim_path, self._instance, must_exist=False)
                or edits.reference_problem(stage, self._prim_path, self._reference)
                or edits.axis_problem(self._axis)
                or edits.value_problem("gearing", v["gearing"], nonzero=True)
                or edits.value_problem("offset", v["offset"])
                or edits.value_problem("natural frequency", v["natural_frequency"], non_negative=True)
                or edits.value_problem("damping ratio", v["damping_ratio"], non_negative=True))

    def _apply(self, stage, prim):
        return edits.add_relation(stage, self._prim_path, self._reference, instance=self._instance,
                                  reference_axis=self._axis, **self._values)


class RemoveMimicJointCommand(_MimicEditCommand):
    """Remove the mimic relation(s) of ``prim_path``: one instance, one schema, or (None, None) all."""

    def __init__(self, prim_path: str | Sdf.Path, instance: str | None = None, schema: str | None = None,
                 stage: Usd.Stage | None = None, usd_context_name: str = ""):
        super().__init__(prim_path, instance, stage, usd_context_name)
        self._schema = schema

    def _follower_problem(self, stage):
        # A relation on a prim that is not a joint is a validator error the user must be able to remove.
        if stage is None:
            return edits.follower_problem(stage, self._prim_path)
        if not Sdf.Path.IsValidPathString(self._prim_path) or not stage.GetPrimAtPath(self._prim_path):
            return f"no prim at '{self._prim_path}': select the prim that carries the mimic relation"
        return None

    def _problem(self, stage):
        if self._schema is not None and self._schema not in SCHEMAS:
            return f"unknown schema '{self._schema}': use one of {', '.join(SCHEMAS)}"
        prim = stage.GetPrimAtPath(self._prim_path)
        if not any((self._schema is None or r.schema == self._schema)
                   and (self._instance is None or r.instance == self._instance) for r in read_joint_relations(prim)):
            which = f" {self._instance}" if self._instance else ""
            return f"{self._prim_path} has no mimic relation{which} to remove"
        return None

    def _apply(self, stage, prim):
        return remove_relation(stage, self._prim_path, self._instance, self._schema)


class SetMimicGearingCommand(_MimicEditCommand):
    """Author ``physxMimicJoint:<instance>:gearing`` (PhysX convention: -1 follows 1:1)."""

    def __init__(self, prim_path: str | Sdf.Path, gearing: float, instance: str = "rotX",
                 stage: Usd.Stage | None = None, usd_context_name: str = ""):
        super().__init__(prim_path, instance, stage, usd_context_name)
        self._gearing = gearing

    def _problem(self, stage):
        return (edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True)
                or edits.value_problem("gearing", self._gearing, nonzero=True))

    def _apply(self, stage, prim):
        edits.author_value(prim, self._instance, "gearing", float(self._gearing))
        return self._relation(prim, self._instance)


class SetMimicOffsetCommand(_MimicEditCommand):
    """Author ``physxMimicJoint:<instance>:offset`` (degrees for a revolute follower, stage distance otherwise)."""

    def __init__(self, prim_path: str | Sdf.Path, offset: float, instance: str = "rotX",
                 stage: Usd.Stage | None = None, usd_context_name: str = ""):
        super().__init__(prim_path, instance, stage, usd_context_name)
        self._offset = offset

    def _problem(self, stage):
        return (edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True)
                or edits.value_problem("offset", self._offset))

    def _apply(self, stage, prim):
        edits.author_value(prim, self._instance, "offset", float(self._offset))
        return self._relation(prim, self._instance)


class SetMimicReferenceJointCommand(_MimicEditCommand):
    """Point ``physxMimicJoint:<instance>:referenceJoint`` at another joint (and optionally set its axis)."""

    def __init__(self, prim_path: str | Sdf.Path, reference_joint_path: str | Sdf.Path, instance: str = "rotX",
                 reference_axis: str | None = None, stage: Usd.Stage | None = None, usd_context_name: str = ""):
        super().__init__(prim_path, instance, stage, usd_context_name)
        self._reference = str(reference_joint_path)
        self._axis = reference_axis

    def _problem(self, stage):
        return (edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True)
                or edits.reference_problem(stage, self._prim_path, self._reference)
                or (edits.axis_problem(self._axis) if self._axis is not None else None))

    def _apply(self, stage, prim):
        edits.author_reference(prim, self._instance, self._reference)
        if self._axis is not None:
            edits.author_value(prim, self._instance, "referenceJointAxis", self._axis)
        return self._relation(prim, self._instance)


class SetMimicComplianceCommand(_MimicEditCommand):
    """Author natural frequency and damping ratio; the relation is hard unless both are > 0."""

    def __init__(self, prim_path: str | Sdf.Path, natural_frequency: float, damping_ratio: float,
                 instance: str = "rotX", stage: Usd.Stage | None = None, usd_context_name: str = ""):
        super().__init__(prim_path, instance, stage, usd_context_name)
        self._nf = natural_frequency
        self._dr = damping_ratio

    def _problem(self, stage):
        return (edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True)
                or edits.value_problem("natural frequency", self._nf, non_negative=True)
                or edits.value_problem("damping ratio", self._dr, non_negative=True))

    def _apply(self, stage, prim):
        edits.author_value(prim, self._instance, "naturalFrequency", float(self._nf))
        edits.author_value(prim, self._instance, "dampingRatio", float(self._dr))
        return self._relation(prim, self._instance)


#: Registered on extension startup, unregistered on shutdown.
COMMANDS = (AddMimicJointCommand, RemoveMimicJointCommand, SetMimicGearingCommand, SetMimicOffsetCommand,
            SetMimicReferenceJointCommand, SetMimicComplianceCommand)


def register_commands() -> None:
    for cls in COMMANDS:
        omni.kit.commands.register(cls)


def unregister_commands() -> None:
    for cls in COMMANDS:
        omni.kit.commands.unregister(cls)
