"""The "Mimic Joint" section of Kit's Property window, shown for a selected joint.

One block per mimic instance (reference joint with a picker, reference axis, gearing,
offset with its unit, natural frequency, damping ratio, the relation in words, Flip
direction, Remove), the validator's findings for the joint, and "Add mimic joint" on a
joint without a PhysX relation. Every edit runs one of the commands in ``commands.py``, so
Ctrl+Z undoes it; a value the commands would refuse is refused here first with one log line.

Refresh: a ``Tf.Notice`` listener on ``Usd.Notice.ObjectsChanged`` requests a rebuild when
the selected joint, one of its reference joints, or any mimic property on the stage
changes (the findings depend on the other relations); other prims are ignored.
"""

from __future__ import annotations

import functools
import itertools

import carb
import numpy as np
import omni.kit.commands
import omni.ui as ui
from omni.kit.property.usd import UsdPropertiesWidget
from pxr import Sdf, Tf, Usd

from ..schema import joints
from ..schema.authoring import NEWTON_REL, PHYSX_PREFIX, read_joint_relations
from ..schema.relation import NEWTON, PHYSX, REFERENCE_AXES, MimicRelation
from . import physx_edits as edits
from .wording import describe, number, offset_unit

LABEL_WIDTH = 140
WIDGET_NAME = "mimic_joint"
_MIMIC_PROPERTY_PREFIXES = (PHYSX_PREFIX + ":", "newton:mimic")
SCHEME = "prim"


def _float32(value: float) -> float:
    """USD stores these attributes as float: compare typed values the way they will be stored."""
    return float(np.float32(value))


class ReferenceJointPicker:
    """A small window listing the joints a follower may follow; clicking one picks it."""

    TITLE = "Pick reference joint"

    def __init__(self, follower: str, candidates: list[str], on_pick):
        self._on_pick = on_pick
        self.window = ui.Window(self.TITLE, width=420, height=320)
        with self.window.frame:
            with ui.ScrollingFrame():
                with ui.VStack(height=0, spacing=2):
                    ui.Label(f"Reference joint for {Sdf.Path(follower).name}", identifier="mimic.picker.title")
                    if not candidates:
                        ui.Label("No other revolute or prismatic joint on this stage",
                                 identifier="mimic.picker.none")
                    for path in candidates:
                        ui.Button(path, identifier=f"mimic.picker.{path}",
                                  clicked_fn=functools.partial(self._pick, path))

    def _pick(self, path: str) -> None:
        on_pick, self._on_pick = self._on_pick, None
        self.destroy()
        if on_pick:
            on_pick(path)

    def destroy(self) -> None:
        if self.window is not None:
            self.window.destroy()
            self.window = None


class MimicPropertiesWidget(UsdPropertiesWidget):
    """Edits the mimic relations of the last selected joint (single prim: ``multi_edit=False``)."""

    def __init__(self):
        super().__init__(title="Mimic Joint", collapsed=False, multi_edit=False)
        self._watched: set[Sdf.Path] = set()
        self._prim_path = ""
        self._picker: ReferenceJointPicker | None = None
        #: How many times the section was built (a rebuild costs a validator pass).
        self.build_count = 0

    # -- Property window protocol -----------------------------------------------------------
    def on_new_payload(self, payload) -> bool:
        if not super().on_new_payload(payload):
            return False
        if not payload or len(payload) == 0:
            return False
        return joints.joint_kind(self._get_prim(payload[-1])) is not None

    def clean(self):
        self._close_picker()
        super().clean()

    def reset(self):
        # The picker belongs to the section as built; a rebuild or another selection closes it.
        self._close_picker()
        super().reset()

    def build_items(self):
        self.reset()
        if not self._payload or len(self._payload) == 0:
            return
        prim = self._get_prim(self._payload[-1])
        if not prim:
            return
        stage = prim.GetStage()
        self.build_count += 1
        self._prim_path = str(prim.GetPath())
        relations = read_joint_relations(prim)
        self._watched = {prim.GetPath()} | {Sdf.Path(r.leader) for r in relations
                                            if r.leader and Sdf.Path.IsValidPathString(r.leader)}
        self._listener = Tf.Notice.Register(Usd.Notice.ObjectsChanged, self._on_usd_changed, stage)
        with ui.VStack(height=0, spacing=6):
            for rel in relations:
                self._build_block(stage, prim, rel)
            if not any(r.schema == PHYSX for r in relations):
                ui.Button("Add mimic joint", identifier="mimic.add", clicked_fn=self._on_add,
                          tooltip="Make this joint follow another joint 1:1 (gearing -1); then pick its reference")
            self._build_findings(stage, prim)

    def _on_usd_changed(self, notice, stage):
        if self._payload is None or stage != self._payload.get_stage() or self._pending_rebuild_task is not None:
            return
        for path in itertools.chain(notice.GetResyncedPaths(), notice.GetChangedInfoOnlyPaths()):
            prim_path = path.GetPrimPath()
            if path.IsPropertyPath() and path.name.startswith(_MIMIC_PROPERTY_PREFIXES):
                self.request_rebuild()
                return
            if any(w == prim_path or w.HasPrefix(prim_path) for w in self._watched):
                self.request_rebuild()
                return

    # -- building ---------------------------------------------------------------------------
    def _stage(self) -> Usd.Stage | None:
        return self._payload.get_stage() if self._payload else None

    @staticmethod
    def _row(label: str):
        row = ui.HStack(height=0, spacing=4)
        with row:
            ui.Label(label, name="label", width=LABEL_WIDTH)
        return row

    def _build_block(self, stage: Usd.Stage, prim: Usd.Prim, rel: MimicRelation) -> None:
        key = rel.instance if rel.schema == PHYSX else NEWTON
        ident = f"mimic.{key}"
        title = f"PhysxMimicJointAPI:{rel.instance}" if rel.schema == PHYSX else "NewtonMimicAPI"
        with ui.CollapsableFrame(title, identifier=f"{ident}.frame", height=0):
            with ui.VStack(height=0, spacing=3):
                ui.Label(describe(stage, rel), identifier=f"{ident}.words", word_wrap=True)
                if rel.schema == PHYSX:
                    self._build_physx_fields(prim, rel, ident)
                else:
                    self._build_newton_fields(rel, ident)

    def _build_physx_fields(self, prim: Usd.Prim, rel: MimicRelation, ident: str) -> None:
        inst = rel.instance
        raw = rel.authored or {}
        with self._row("Reference joint"):
            field = ui.StringField(model=ui.SimpleStringModel(rel.leader or ""), identifier=f"{ident}.reference_joint")
            field.model.add_end_edit_fn(lambda m, i=inst: self._set_reference(i, m.as_string.strip()))
            ui.Button("...", width=24, identifier=f"{ident}.pick_reference",
                      tooltip="Pick the reference joint from the stage's joints",
                      clicked_fn=lambda i=inst: self._open_picker(i))
        with self._row("Reference axis"):
            axis = str(raw.get("referenceJointAxis", "rotX"))
            index = REFERENCE_AXES.index(axis) if axis in REFERENCE_AXES else 0
            combo = ui.ComboBox(index, *REFERENCE_AXES, identifier=f"{ident}.reference_axis",
                                tooltip="Used only when the reference is a multi-DOF (D6) joint")
            combo.model.add_item_changed_fn(lambda m, _item, i=inst: self._set_axis(
                i, REFERENCE_AXES[m.get_item_value_model().as_int]))
        unit = offset_unit(prim)
        fields = (("Gearing", "gearing", "q_f + gearing * q_ref + offset = 0 (-1 follows 1:1)"),
                  (f"Offset ({unit})", "offset", f"in the follower's unit ({unit})"),
                  ("Natural frequency", "naturalFrequency", "> 0 with damping ratio > 0 makes the relation compliant"),
                  ("Damping ratio", "dampingRatio", "> 0 with natural frequency > 0 makes the relation compliant"))
        for label, name, tip in fields:
            with self._row(label):
                field = ui.FloatField(model=ui.SimpleFloatModel(float(raw.get(name, 0.0))),
                                      identifier=f"{ident}.{name}", tooltip=tip)
                field.model.add_end_edit_fn(lambda m, i=inst, n=name: self._set_value(i, n, m.as_float))
        with ui.HStack(height=0, spacing=4):
            ui.Button("Flip direction", identifier=f"{ident}.flip", clicked_fn=lambda i=inst: self._flip(i),
                      tooltip="Negate the gearing: the follower moves the other way")
            ui.Button("Remove", identifier=f"{ident}.remove",
                      clicked_fn=lambda i=inst: self._execute("RemoveMimicJoint", instance=i, schema=PHYSX))

    def _build_newton_fields(self, rel: MimicRelation, ident: str) -> None:
        raw = rel.authored or {}
        targets = raw.get(NEWTON_REL) or []
        with self._row("Reference joint"):
            ui.StringField(model=ui.SimpleStringModel(targets[0] if targets else ""), read_only=True,
                           identifier=f"{ident}.reference_joint")
        for label, name in (("coef0", "newton:mimicCoef0"), ("coef1", "newton:mimicCoef1")):
            with self._row(label):
                ui.Label(number(float(raw.get(name, 0.0))), identifier=f"{ident}.{label}")
        with self._row("Enabled"):
            ui.Label(str(bool(raw.get("newton:mimicEnabled", True))), identifier=f"{ident}.enabled")
        ui.Label("NewtonMimicAPI is shown read-only; edit its attributes in the Raw USD Properties section",
                 word_wrap=True)
        ui.Button("Remove", identifier=f"{ident}.remove",
                  clicked_fn=lambda: self._execute("RemoveMimicJoint", schema=NEWTON))

    def _build_findings(self, stage: Usd.Stage, prim: Usd.Prim) -> None:
        with ui.CollapsableFrame("Checks", identifier="mimic.findings", height=0):
            with ui.VStack(height=0, spacing=2):
                try:
                    from ..schema.validation import validate
                except ImportError:
                    ui.Label("The mimic validator is not available in this build", identifier="mimic.findings.none")
                    return
                path = str(prim.GetPath())
                findings = [f for f in validate(stage) if f.path == path]
                if not findings:
                    ui.Label("No problems found", identifier="mimic.findings.none")
                for i, f in enumerate(findings):
                    ui.Label(f"{f.severity}: {f.code}: {f.message}", identifier=f"mimic.finding.{i}", word_wrap=True)

    # -- edits ------------------------------------------------------------------------------
    def _execute(self, command: str, **kwargs) -> bool:
        stage = self._stage()
        if stage is None:
            return False
        ok, _ = omni.kit.commands.execute(command, prim_path=self._prim_path, stage=stage, **kwargs)
        return ok

    def _refuse(self, problem: str) -> None:
        carb.log_error(f"Mimic Joint: {problem}")
        self.request_rebuild()  # put the authored value back in the field

    def _current(self, instance: str, name: str):
        prim = self._stage().GetPrimAtPath(self._prim_path)
        return edits.authored_value(prim, instance, name)

    def _live(self) -> bool:
        """The section still shows a joint of a live stage (a callback can outlive both)."""
        stage = self._stage()
        return stage is not None and bool(self._prim_path) and bool(stage.GetPrimAtPath(self._prim_path))

    def _set_value(self, instance: str, name: str, value: float) -> None:
        if not self._live():
            return
        if _float32(value) == _float32(float(self._current(instance, name))):
            return
        if name == "gearing":
            problem = edits.value_problem("gearing", value, nonzero=True)
            kwargs = {"gearing": value}
            command = "SetMimicGearing"
        elif name == "offset":
            problem = edits.value_problem("offset", value)
            kwargs = {"offset": value}
            command = "SetMimicOffset"
        else:
            label = "natural frequency" if name == "naturalFrequency" else "damping ratio"
            problem = edits.value_problem(label, value, non_negative=True)
            kwargs = {"natural_frequency": float(self._current(instance, "naturalFrequency")),
                      "damping_ratio": float(self._current(instance, "dampingRatio"))}
            kwargs["natural_frequency" if name == "naturalFrequency" else "damping_ratio"] = value
            command = "SetMimicCompliance"
        if problem:
            self._refuse(problem)
            return
        self._execute(command, instance=instance, **kwargs)

    def _leader(self, instance: str) -> str:
        prim = self._stage().GetPrimAtPath(self._prim_path)
        rel = next((r for r in read_joint_relations(prim) if r.schema == PHYSX and r.instance == instance), None)
        return (rel.leader or "") if rel else ""

    def _set_reference(self, instance: str, reference: str) -> None:
        if not self._live() or reference == self._leader(instance):
            return
        problem = edits.reference_problem(self._stage(), self._prim_path, reference)
        if problem:
            self._refuse(problem)
            return
        self._execute("SetMimicReferenceJoint", instance=instance, reference_joint_path=reference)

    def _set_axis(self, instance: str, axis: str) -> None:
        if not self._live() or axis == str(self._current(instance, "referenceJointAxis")):
            return
        leader = self._leader(instance)
        problem = edits.reference_problem(self._stage(), self._prim_path, leader)
        if problem:
            self._refuse(f"set a valid reference joint before its axis ({problem})")
            return
        self._execute("SetMimicReferenceJoint", instance=instance, reference_joint_path=leader, reference_axis=axis)

    def _flip(self, instance: str) -> None:
        if not self._live():
            return
        self._execute("SetMimicGearing", instance=instance, gearing=-float(self._current(instance, "gearing")))

    def _on_add(self) -> None:
        if not self._live():
            return
        stage = self._stage()
        reference = edits.default_reference(stage, self._prim_path)
        if reference is None:
            carb.log_warn(f"Mimic Joint: no other revolute or prismatic joint on the stage for {self._prim_path} "
                          "to follow")
            return
        self._execute("AddMimicJoint", reference_joint_path=reference, gearing=-1.0)

    def _open_picker(self, instance: str) -> None:
        self._close_picker()
        if not self._live():
            return
        candidates = edits.reference_candidates(self._stage(), self._prim_path)
        self._picker = ReferenceJointPicker(self._prim_path, candidates,
                                            lambda path, i=instance: self._set_reference(i, path))

    def _close_picker(self) -> None:
        if self._picker is not None:
            self._picker.destroy()
            self._picker = None
