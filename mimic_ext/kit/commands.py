"""Undoable Kit commands that add, edit and remove PhysxMimicJointAPI relations.

Arguments are plain values (prim paths as strings, numbers, ``usd_context_name``): Kit keeps
every executed command, with its arguments, on the undo stack, so a stage object passed in
would outlive the stage. The stage is looked up through ``omni.usd.get_context`` when the
command runs. The class docstrings have an ``Args:`` section because that is what Kit's
Commands window shows as parameter help.

Undo takes back exactly what the command changed, attribute by attribute
(``edit_undo.PrimEditUndo``, after ``omni.kit.usd_undo``): a joint state PhysX wrote or a
drive stiffness typed elsewhere after the command survives its undo. Kit's redo calls ``do``
again, which records afresh. Values are PhysX convention as typed (gearing; offset in
degrees for a revolute follower, stage distance for a prismatic one).

Refused input (non-finite values, zero gearing, a joint following itself, a reference that
is not a joint, an unknown instance) logs one line with ``carb.log_error`` and raises
``MimicInputError`` from ``do`` before anything is written: Kit then returns
``(False, None)`` from ``execute`` and keeps nothing on the undo stack, but its undo system
has already dropped the redo history (``omni/kit/undo/undo.py``: ``_create_entry`` clears
the redo stack for every top-level command before ``do`` runs; ``_execute`` then puts the
failed command itself on the redo stack). So callers that can check first ask
``command.problem()`` before ``execute`` (the Property section does).

Names end in ``Command``; Kit registers them without it (``execute("SetMimicGearing", ...)``).
The shared base ``_MimicEdit`` is not a ``Command`` subclass, so nothing that registers every
Command found in a module (``register_all_commands_in_module``, which Kit's ``command.py``
runs over ``dir(module)``) can register it as a command of its own.
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
from ..schema.schema_choice import carried_schemas, convert_relation, other_schema_problem, remove_duplicate
from . import physx_edits as edits
from .edit_undo import PrimEditUndo


class _MimicEdit:
    """Shared do/undo of the commands: check, record the follower, edit; undo takes back what the
    edit changed. A mix-in, not a Command: each command lists ``omni.kit.commands.Command`` itself."""

    def __init__(self, prim_path: str, instance: str | None = "rotX", usd_context_name: str = ""):
        self._prim_path = str(prim_path)
        self._instance = instance
        self._usd_context_name = str(usd_context_name)
        self._undo: PrimEditUndo | None = None

    def _stage(self) -> Usd.Stage | None:
        context = omni.usd.get_context(self._usd_context_name)  # None for a name no context has
        return context.get_stage() if context is not None else None

    def _context_problem(self) -> str | None:
        if omni.usd.get_context(self._usd_context_name) is None:
            return (
                f"no USD context named '{self._usd_context_name}': pass the name of an existing one "
                '(usd_context_name="" is the app\'s default)'
            )
        return None

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

    def problem(self) -> str | None:
        """Why ``do`` would refuse this command now (one line), or None: check before ``execute``,
        because a refused top-level command still costs Kit's redo history."""
        stage = self._stage()
        return self._context_problem() or self._follower_problem(stage) or self._problem(stage)

    def do(self):
        stage = self._stage()
        problem = self.problem()
        if problem:
            self._refuse(problem)
        record = PrimEditUndo(stage, self._prim_path)
        try:
            result = self._apply(stage, stage.GetPrimAtPath(self._prim_path))
        except Exception:
            record.commit()
            record.undo()
            raise
        record.commit()
        self._undo = record
        return result

    def undo(self):
        if self._undo is not None:
            self._undo.undo()
            self._undo = None


class AddMimicJointCommand(_MimicEdit, omni.kit.commands.Command):
    """Make a joint follow another one: ``q_f + gearing * q_ref + offset = 0`` (PhysxMimicJointAPI).

    The default gearing -1 makes the follower move with its reference, 1:1.

    Args:
        prim_path (str): The follower joint (revolute, prismatic or D6).
        reference_joint_path (str): The joint it follows.
        gearing (float): PhysX gearing (-1 follows 1:1, 2 turns twice as far the other way).
        offset (float): In the follower's unit, degrees (revolute) or stage distance (prismatic).
        instance (str): The API instance, the follower's DOF (rotX, what PhysX reads).
        reference_axis (str): Which DOF of a D6 reference (rotX, rotY or rotZ).
        natural_frequency (float): > 0 with damping_ratio > 0 makes the relation compliant (Hz).
        damping_ratio (float): > 0 with natural_frequency > 0 makes the relation compliant.
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(
        self,
        prim_path: str,
        reference_joint_path: str,
        gearing: float = -1.0,
        offset: float = 0.0,
        instance: str = "rotX",
        reference_axis: str = "rotX",
        natural_frequency: float = 0.0,
        damping_ratio: float = 0.0,
        usd_context_name: str = "",
    ):
        super().__init__(prim_path, instance, usd_context_name)
        self._reference = str(reference_joint_path)
        self._values = {
            "gearing": gearing,
            "offset": offset,
            "natural_frequency": natural_frequency,
            "damping_ratio": damping_ratio,
        }
        self._axis = reference_axis

    def _problem(self, stage):
        v = self._values
        return (
            other_schema_problem(stage.GetPrimAtPath(self._prim_path), PHYSX)
            or edits.instance_problem(stage, self._prim_path, self._instance, must_exist=False)
            or edits.reference_problem(stage, self._prim_path, self._reference)
            or edits.axis_problem(self._axis)
            or edits.value_problem("gearing", v["gearing"], nonzero=True)
            or edits.value_problem("offset", v["offset"])
            or edits.value_problem("natural frequency", v["natural_frequency"], non_negative=True)
            or edits.value_problem("damping ratio", v["damping_ratio"], non_negative=True)
        )

    def _apply(self, stage, prim):
        return edits.add_relation(
            stage, self._prim_path, self._reference, instance=self._instance, reference_axis=self._axis, **self._values
        )


class RemoveMimicJointCommand(_MimicEdit, omni.kit.commands.Command):
    """Remove mimic relations from a joint: one instance, one schema, or all of them.

    Args:
        prim_path (str): The prim that carries the relation (need not be a joint, so that an
            invalid relation on any prim can be removed).
        instance (str): Only this PhysxMimicJointAPI instance (e.g. rotX); None removes every instance.
        schema (str): Only "physx" (PhysxMimicJointAPI) or "newton" (NewtonMimicAPI); None removes both.
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(
        self, prim_path: str, instance: str | None = None, schema: str | None = None, usd_context_name: str = ""
    ):
        super().__init__(prim_path, instance, usd_context_name)
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
        if not any(
            (self._schema is None or r.schema == self._schema)
            and (self._instance is None or r.instance == self._instance)
            for r in read_joint_relations(prim)
        ):
            which = f" {self._instance}" if self._instance else ""
            return f"{self._prim_path} has no mimic relation{which} to remove"
        return None

    def _apply(self, stage, prim):
        return remove_relation(stage, self._prim_path, self._instance, self._schema)


class SetMimicGearingCommand(_MimicEdit, omni.kit.commands.Command):
    """Set the gearing of a mimic joint (``physxMimicJoint:<instance>:gearing``).

    Args:
        prim_path (str): The follower joint.
        gearing (float): PhysX convention, q_f + gearing * q_ref + offset = 0 (-1 follows 1:1).
        instance (str): The PhysxMimicJointAPI instance (rotX).
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(self, prim_path: str, gearing: float, instance: str = "rotX", usd_context_name: str = ""):
        super().__init__(prim_path, instance, usd_context_name)
        self._gearing = gearing

    def _problem(self, stage):
        return edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True) or edits.value_problem(
            "gearing", self._gearing, nonzero=True
        )

    def _apply(self, stage, prim):
        edits.author_value(prim, self._instance, "gearing", float(self._gearing))
        return self._relation(prim, self._instance)


class SetMimicOffsetCommand(_MimicEdit, omni.kit.commands.Command):
    """Set the offset of a mimic joint (``physxMimicJoint:<instance>:offset``).

    Args:
        prim_path (str): The follower joint.
        offset (float): Degrees for a revolute follower, stage distance for a prismatic one.
        instance (str): The PhysxMimicJointAPI instance (rotX).
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(self, prim_path: str, offset: float, instance: str = "rotX", usd_context_name: str = ""):
        super().__init__(prim_path, instance, usd_context_name)
        self._offset = offset

    def _problem(self, stage):
        return edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True) or edits.value_problem(
            "offset", self._offset
        )

    def _apply(self, stage, prim):
        edits.author_value(prim, self._instance, "offset", float(self._offset))
        return self._relation(prim, self._instance)


class SetMimicReferenceJointCommand(_MimicEdit, omni.kit.commands.Command):
    """Point a mimic joint at another reference joint, and optionally set the reference axis.

    Args:
        prim_path (str): The follower joint.
        reference_joint_path (str): The joint to follow (revolute, prismatic or D6).
        instance (str): The PhysxMimicJointAPI instance (rotX).
        reference_axis (str): rotX, rotY or rotZ of a D6 reference; None leaves it as it is.
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(
        self,
        prim_path: str,
        reference_joint_path: str,
        instance: str = "rotX",
        reference_axis: str | None = None,
        usd_context_name: str = "",
    ):
        super().__init__(prim_path, instance, usd_context_name)
        self._reference = str(reference_joint_path)
        self._axis = reference_axis

    def _problem(self, stage):
        return (
            edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True)
            or edits.reference_problem(stage, self._prim_path, self._reference)
            or (edits.axis_problem(self._axis) if self._axis is not None else None)
        )

    def _apply(self, stage, prim):
        edits.author_reference(prim, self._instance, self._reference)
        if self._axis is not None:
            edits.author_value(prim, self._instance, "referenceJointAxis", self._axis)
        return self._relation(prim, self._instance)


class SetMimicComplianceCommand(_MimicEdit, omni.kit.commands.Command):
    """Set natural frequency and damping ratio; the relation is hard unless both are > 0.

    Args:
        prim_path (str): The follower joint.
        natural_frequency (float): Natural frequency of the spring-damper (Hz), >= 0.
        damping_ratio (float): Damping ratio, >= 0.
        instance (str): The PhysxMimicJointAPI instance (rotX).
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(
        self,
        prim_path: str,
        natural_frequency: float,
        damping_ratio: float,
        instance: str = "rotX",
        usd_context_name: str = "",
    ):
        super().__init__(prim_path, instance, usd_context_name)
        self._nf = natural_frequency
        self._dr = damping_ratio

    def _problem(self, stage):
        return (
            edits.instance_problem(stage, self._prim_path, self._instance, must_exist=True)
            or edits.value_problem("natural frequency", self._nf, non_negative=True)
            or edits.value_problem("damping ratio", self._dr, non_negative=True)
        )

    def _apply(self, stage, prim):
        edits.author_value(prim, self._instance, "naturalFrequency", float(self._nf))
        edits.author_value(prim, self._instance, "dampingRatio", float(self._dr))
        return self._relation(prim, self._instance)


def _unknown_schema(name: str) -> str:
    return f"unknown schema '{name}': use one of {', '.join(SCHEMAS)}"


class ConvertMimicSchemaCommand(_MimicEdit, omni.kit.commands.Command):
    """Leave a joint with its relation in one schema (PhysX reads both and would apply two constraints).

    A relation in the other schema is rewritten in this one (the same relation) and removed;
    where the joint carries both, this schema's is kept and the other removed.

    Args:
        prim_path (str): The follower joint.
        to_schema (str): The schema to keep, "newton" (NewtonMimicAPI) or "physx" (PhysxMimicJointAPI:rotX).
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(self, prim_path: str, to_schema: str, usd_context_name: str = ""):
        super().__init__(prim_path, None, usd_context_name)
        self._to = to_schema

    def _problem(self, stage):
        if self._to not in SCHEMAS:
            return _unknown_schema(self._to)
        if not read_joint_relations(stage.GetPrimAtPath(self._prim_path)):
            return f"{self._prim_path} has no mimic relation to convert"
        return None

    def _apply(self, stage, prim):
        return convert_relation(stage, self._prim_path, self._to)


class RemoveMimicDuplicateCommand(_MimicEdit, omni.kit.commands.Command):
    """On a joint that carries both PhysxMimicJointAPI and NewtonMimicAPI, remove the one not kept.

    Args:
        prim_path (str): The follower joint.
        keep (str): The schema whose relation stays, "newton" or "physx".
        usd_context_name (str): The USD context whose stage is edited ("" is the default one).
    """

    def __init__(self, prim_path: str, keep: str, usd_context_name: str = ""):
        super().__init__(prim_path, None, usd_context_name)
        self._keep = keep

    def _problem(self, stage):
        if self._keep not in SCHEMAS:
            return _unknown_schema(self._keep)
        if len(carried_schemas(stage.GetPrimAtPath(self._prim_path))) < 2:
            return f"{self._prim_path} does not carry both mimic schemas: there is no duplicate to remove"
        return None

    def _apply(self, stage, prim):
        return remove_duplicate(stage, self._prim_path, self._keep)


#: Registered on extension startup, unregistered on shutdown.
COMMANDS = (
    AddMimicJointCommand,
    RemoveMimicJointCommand,
    SetMimicGearingCommand,
    SetMimicOffsetCommand,
    SetMimicReferenceJointCommand,
    SetMimicComplianceCommand,
    ConvertMimicSchemaCommand,
    RemoveMimicDuplicateCommand,
)


def _set_command_base(cls: type, attached: bool) -> None:
    """Make ``cls`` a ``Command`` subclass again (``attached``) or take ``Command`` out of its bases.

    Why: Kit's ``CommandExt`` (``omni/kit/commands/__init__.py``, ``CommandExt.on_startup``'s
    ``on_change``) registers ``Command`` and every class ``Command.__subclasses__()`` reaches on each
    ``EXTENSION_EVENT_SCRIPT_CHANGED`` of the extension manager, and disabling an extension sends one. A
    class stays alive after the disable whenever anything holds it: its module (Kit drops it from
    ``sys.modules`` only when the extension's own start put its folder on ``sys.path``), an instance on
    Kit's undo or redo stack (every command executed with undo), a traceback. Taking ``Command`` out of
    its bases is what makes it invisible to that scan whatever holds it; an instance kept by the undo
    history still undoes and redoes (``do``/``undo`` come from ``_MimicEdit``). ``issubclass`` answers
    from ``ABCMeta``'s caches, which are cleared so that it tells the truth after each change.
    """
    bases = tuple(b for b in cls.__bases__ if b is not omni.kit.commands.Command)
    cls.__bases__ = (*bases, omni.kit.commands.Command) if attached else bases
    omni.kit.commands.Command._abc_caches_clear()


def register_commands() -> None:
    for cls in COMMANDS:
        _set_command_base(cls, attached=True)
        omni.kit.commands.register(cls)


def unregister_commands() -> None:
    """Unregister the commands and take them out of ``Command``'s subclasses (see ``_set_command_base``):
    after a disable no later re-scan of Kit's can register them again."""
    for cls in COMMANDS:
        omni.kit.commands.unregister(cls)
        _set_command_base(cls, attached=False)
