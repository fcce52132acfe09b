"""The mimic section of Kit's Property window, shown for a selected revolute or prismatic joint.

Isaac Sim already shows and edits PhysxMimicJointAPI: PhysX's property UI has a "Mimic
Joint" section with reference joint, reference axis, gearing, offset, natural frequency and
damping ratio (``omni.kit.property.physx`` ``database.py``: ``PhysxMimicJointAPI: "Mimic
Joint"``; in Isaac Sim 6, ``omni.physics.physx.ui`` ``schemas/physxschema.py``: ``widgets``
maps ``PhysxSchema.PhysxMimicJointAPI`` to ``ExtendedMimicJointWidget`` and
``property_order`` lists those six fields). So when PhysX's UI is enabled this section is
"Mimic Joint Check" and adds only what PhysX's does not show: the relation in words, the
validator's findings, the last FET022 result for the joint and "Sweep this joint". Without
PhysX's UI it is "Mimic Joint" and also holds the fields (reference with a picker, axis,
gearing, offset with its unit, natural frequency, damping ratio, Flip, Remove, Add). Every
edit runs one of the commands in ``commands.py``, so Ctrl+Z undoes it. A value the command
would refuse never reaches ``execute``: the section asks the command (``problem()``) first
and refuses with one log line, because Kit drops the redo history for every top-level
command it executes, a refused one included (``omni/kit/undo/undo.py`` ``_create_entry``).

The Property window's search box: each row is built only when its label matches the search
text (or the section's title does), and ``_any_item_visible`` is set when one is, as Kit's
``SimplePropertyWidget._build_frame`` hides the section otherwise.

Refresh without rebuilding: a ``Tf.Notice`` listener on ``Usd.Notice.ObjectsChanged`` updates
the fields' models and the sentences in place when a mimic property of the joint or its
reference changes, and rebuilds only the findings (any mimic property on the stage) or, when
the joint gains or loses a relation, the section. Everything else (PhysX writing joint state
every frame, an ancestor's transform) is ignored, so a field keeps its focus and what the
user is typing: a field being edited is never overwritten. The notice handler only notes what
changed; the work runs once on the next frame for all the notices of a frame, as Kit's own
``UsdPropertiesWidget`` does (``omni.kit.property.usd`` ``usd_property_widget.py``:
``_on_usd_changed`` gathers ``_pending_dirty_paths`` and schedules ``_delayed_dirty_handler``
once on Kit's asyncio loop; ``request_rebuild`` cancels it), so PhysX writing the leader's
joint state during play costs a set update per write, not a refresh.
"""

from __future__ import annotations

import asyncio
import functools
import itertools

import carb
import numpy as np
import omni.kit.app
import omni.kit.commands
import omni.ui as ui
import omni.usd
from omni.kit.property.usd import UsdPropertiesWidget
from pxr import Sdf, Tf, Usd

from ..schema import joints
from ..schema.authoring import NEWTON_REL, PHYSX_PREFIX, read_joint_relations
from ..schema.relation import NEWTON, PHYSX, REFERENCE_AXES, MimicRelation
from ..schema.schema_choice import other_schema_problem
from . import physx_edits as edits
from .stage_sweep import PREPARING, RUNNING
from .wording import describe, number, number_or_dash, offset_unit

LABEL_WIDTH = 140
WIDGET_NAME = "mimic_joint"
SCHEME = "prim"
_MIMIC_PROPERTY_PREFIXES = (PHYSX_PREFIX + ":", "newton:mimic")
#: frames a refresh waits while the section is collapsed (Kit's UsdPropertiesWidget waits as many)
COLLAPSED_WAIT_FRAMES = 100
#: Kit extensions that bring PhysX's own "Mimic Joint" property section (Isaac Sim 4-5, Isaac Sim 6).
PHYSX_UI_EXTENSIONS = ("omni.kit.property.physx", "omni.physics.physx.ui")
TITLE_WITH_PHYSX_UI = "Mimic Joint Check"
TITLE_ALONE = "Mimic Joint"
#: Joints the section is shown for: the ones a mimic relation can drive one-to-one.
SHOWN_KINDS = (joints.REVOLUTE, joints.PRISMATIC)
_FIELDS = (
    ("Gearing", "gearing", "q_f + gearing * q_ref + offset = 0 (-1 follows 1:1)"),
    ("Offset", "offset", "in the follower's unit"),
    ("Natural frequency", "naturalFrequency", "> 0 with damping ratio > 0 makes the relation compliant"),
    ("Damping ratio", "dampingRatio", "> 0 with natural frequency > 0 makes the relation compliant"),
)


def physx_ui_present() -> bool:
    """True when one of PhysX's property UI extensions is enabled (its Mimic Joint section is shown)."""
    manager = omni.kit.app.get_app().get_extension_manager()
    return any(manager.is_extension_enabled(name) for name in PHYSX_UI_EXTENSIONS)


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
                        ui.Label("No other revolute or prismatic joint on this stage", identifier="mimic.picker.none")
                    for path in candidates:
                        ui.Button(
                            path, identifier=f"mimic.picker.{path}", clicked_fn=functools.partial(self._pick, path)
                        )

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
    """The mimic relations of the last selected joint (single prim: ``multi_edit=False``)."""

    def __init__(self, runner=None, usd_context_name: str = ""):
        super().__init__(title=TITLE_ALONE, collapsed=False, multi_edit=False)
        self._runner = runner
        self._usd_context_name = usd_context_name
        self._prim_path = ""
        self._picker: ReferenceJointPicker | None = None
        self._forget_built()
        #: How many times the section was built (a rebuild costs a validator pass and loses focus).
        self.build_count = 0
        #: How many batched refreshes ran (one per frame with relevant USD changes, at most).
        self.refresh_count = 0
        self._pending_changes: set[str] = set()
        self._pending_refresh = None
        if runner is not None:
            runner.add_listener(self._on_sweep_changed)

    def _forget_built(self) -> None:
        self._field_models: dict = {}  # (instance, attribute) -> value model of a field
        self._axis_models: dict = {}  # instance -> ComboBox item model
        self._words: dict = {}  # relation key -> Label with the relation in words
        self._editing: set = set()  # models between begin_edit and end_edit
        self._keys: list = []  # [(schema, instance)] the section was built for
        self._leaders: set[Sdf.Path] = set()
        self._findings_frame = None
        self._fet_frame = None

    # -- Property window protocol -----------------------------------------------------------
    def on_new_payload(self, payload) -> bool:
        if not super().on_new_payload(payload):
            return False
        if not payload or len(payload) == 0:
            return False
        if joints.joint_kind(self._get_prim(payload[-1])) not in SHOWN_KINDS:
            return False
        self._title = TITLE_WITH_PHYSX_UI if physx_ui_present() else TITLE_ALONE
        return True

    def clean(self):
        if self._runner is not None:
            self._runner.remove_listener(self._on_sweep_changed)
            self._runner = None
        self._close_picker()
        super().clean()
        # Kit's SimplePropertyWidget.build_impl subscribes to the Property window's shared search model and its
        # clean() never unsubscribes: that model would keep this section (and its module) alive after a disable.
        if self._filter_changed_sub is not None:
            self._filter.name_model.remove_value_changed_fn(self._filter_changed_sub)
            self._filter_changed_sub = None

    def reset(self):
        # The picker belongs to the section as built; a rebuild or another selection closes it.
        self._close_picker()
        self._cancel_refresh()
        super().reset()
        self._forget_built()

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
        self._physx_ui = physx_ui_present()
        self._show_all = not self._filter.name or self._filter.matches(self._title)
        relations = read_joint_relations(prim)
        self._keys = [(r.schema, r.instance) for r in relations]
        self._leaders = {Sdf.Path(r.leader) for r in relations if r.leader and Sdf.Path.IsValidPathString(r.leader)}
        self._listener = Tf.Notice.Register(Usd.Notice.ObjectsChanged, self._on_usd_changed, stage)
        with ui.VStack(height=0, spacing=6):
            for rel in relations:
                self._build_block(stage, prim, rel)
            if (
                not self._physx_ui
                and not any(r.schema == PHYSX for r in relations)
                and self._row_visible("Add mimic joint")
            ):
                # A joint that follows through NewtonMimicAPI: AddMimicJoint would refuse (PhysX reads both and
                # would apply two constraints), so the button is off and says why and which command converts it.
                refusal = other_schema_problem(prim, PHYSX)
                ui.Button(
                    "Add mimic joint",
                    identifier="mimic.add",
                    clicked_fn=self._on_add,
                    enabled=refusal is None,
                    tooltip=refusal or "Make this joint follow another joint 1:1 (gearing -1); then pick its reference",
                )
                if refusal:
                    ui.Label(f"Add mimic joint is off: {refusal}", identifier="mimic.add.why", word_wrap=True)
            if self._row_visible("Checks"):
                with ui.CollapsableFrame("Checks", identifier="mimic.findings", height=0):
                    self._findings_frame = ui.Frame(height=0, build_fn=self._build_findings)
            if relations and self._row_visible("FET022"):
                with ui.CollapsableFrame("FET022 mimic_joint", identifier="mimic.fet022", height=0):
                    self._fet_frame = ui.Frame(height=0, build_fn=self._build_fet022)

    def _row_visible(self, label: str) -> bool:
        """Build this row? (the search text matches it or the title); marks the section visible."""
        if self._show_all or self._filter.matches(label):
            self._any_item_visible = True
            return True
        return False

    # -- USD changes ------------------------------------------------------------------------
    def request_rebuild(self):
        self._cancel_refresh()  # the rebuild reads everything afresh (as Kit's UsdPropertiesWidget)
        super().request_rebuild()

    def _cancel_refresh(self) -> None:
        if self._pending_refresh is not None:
            self._pending_refresh.cancel()
        self._pending_refresh = None
        self._pending_changes = set()

    def _on_usd_changed(self, notice, stage):
        """Note what the notice touched; the refresh runs once, on the next frame."""
        if self._payload is None or stage != self._payload.get_stage() or self._pending_rebuild_task is not None:
            return
        me = Sdf.Path(self._prim_path)
        values = findings = structure = False
        for path in itertools.chain(notice.GetResyncedPaths(), notice.GetChangedInfoOnlyPaths()):
            if path.IsPropertyPath():
                if path.name.startswith(_MIMIC_PROPERTY_PREFIXES):
                    findings = True
                    values |= path.GetPrimPath() == me
                elif path.GetPrimPath() in self._leaders:
                    values = True  # a reference's type or limits: units of the sentence
            elif path == me or me.HasPrefix(path):
                structure = True  # applied schemas, a removed or renamed ancestor
            elif any(leader.HasPrefix(path) for leader in self._leaders):
                values = True
        changes = {name for name, hit in (("values", values), ("findings", findings), ("structure", structure)) if hit}
        if not changes:
            return
        self._pending_changes |= changes
        if self._pending_refresh is None:
            self._pending_refresh = asyncio.ensure_future(self._delayed_refresh())  # on Kit's loop

    async def _delayed_refresh(self) -> None:
        # As Kit's UsdPropertiesWidget._delayed_dirty_handler: no refresh while the section is collapsed, a frame
        # at a time for at most COLLAPSED_WAIT_FRAMES (PhysX writing joint state every frame costs nothing then).
        for _ in range(COLLAPSED_WAIT_FRAMES):
            if not self._collapsed:
                break
            await omni.kit.app.get_app().next_update_async()
        self._pending_refresh = None  # cleared first: the refresh's own edits may schedule another
        changes, self._pending_changes = self._pending_changes, set()
        stage = self._stage()
        if not changes or stage is None or self._pending_rebuild_task is not None:
            return
        self.refresh_count += 1
        if "structure" in changes and self._structure_changed(stage):
            self.request_rebuild()
            return
        if changes & {"values", "structure"}:
            self._refresh_values()
        if "findings" in changes and self._findings_frame is not None:
            self._findings_frame.rebuild()

    def _structure_changed(self, stage: Usd.Stage) -> bool:
        prim = stage.GetPrimAtPath(self._prim_path)
        if not prim or joints.joint_kind(prim) not in SHOWN_KINDS:
            return True
        return [(r.schema, r.instance) for r in read_joint_relations(prim)] != self._keys

    def _refresh_values(self, force: bool = False) -> None:
        """Put the authored values into the fields and the sentences, in place."""
        stage = self._stage()
        prim = stage.GetPrimAtPath(self._prim_path) if stage else None
        if not prim:
            return
        relations = read_joint_relations(prim)
        self._leaders = {Sdf.Path(r.leader) for r in relations if r.leader and Sdf.Path.IsValidPathString(r.leader)}
        for rel in relations:
            key = rel.instance if rel.schema == PHYSX else NEWTON
            label = self._words.get(key)
            if label is not None:
                label.text = describe(stage, rel)
            if rel.schema != PHYSX:
                continue
            raw = rel.authored or {}
            for (inst, name), model in self._field_models.items():
                if inst != rel.instance or (model in self._editing and not force):
                    continue
                if name == "referenceJoint":
                    model.set_value(rel.leader or "")
                else:
                    model.set_value(float(raw.get(name, 0.0)))
            axis_model = self._axis_models.get(rel.instance)
            if axis_model is not None:
                axis = str(raw.get("referenceJointAxis", "rotX"))
                index = REFERENCE_AXES.index(axis) if axis in REFERENCE_AXES else 0
                value_model = axis_model.get_item_value_model()
                if value_model.as_int != index:
                    value_model.set_value(index)

    def _on_sweep_changed(self) -> None:
        if self._fet_frame is not None:
            self._fet_frame.rebuild()

    # -- building ---------------------------------------------------------------------------
    def _stage(self) -> Usd.Stage | None:
        return self._payload.get_stage() if self._payload else None

    @staticmethod
    def _row(label: str):
        row = ui.HStack(height=0, spacing=4)
        with row:
            ui.Label(label, name="label", width=LABEL_WIDTH)
        return row

    def _block_labels(self, rel: MimicRelation, unit: str) -> list[str]:
        labels = ["Relation"]
        if not self._physx_ui:
            labels += ["Reference joint", "Reference axis", f"Offset ({unit})"] + [f[0] for f in _FIELDS]
            labels += ["Flip direction", "Remove"] if rel.schema == PHYSX else ["coef0", "coef1", "Enabled", "Remove"]
        return labels

    def _build_block(self, stage: Usd.Stage, prim: Usd.Prim, rel: MimicRelation) -> None:
        key = rel.instance if rel.schema == PHYSX else NEWTON
        ident = f"mimic.{key}"
        title = f"PhysxMimicJointAPI:{rel.instance}" if rel.schema == PHYSX else "NewtonMimicAPI"
        unit = offset_unit(prim)
        if not self._show_all and not any(self._filter.matches(label) for label in self._block_labels(rel, unit)):
            return
        with ui.CollapsableFrame(title, identifier=f"{ident}.frame", height=0):
            with ui.VStack(height=0, spacing=3):
                if self._row_visible("Relation"):
                    self._words[key] = ui.Label(describe(stage, rel), identifier=f"{ident}.words", word_wrap=True)
                if self._physx_ui:
                    return
                if rel.schema == PHYSX:
                    self._build_physx_fields(prim, rel, ident, unit)
                else:
                    self._build_newton_fields(rel, ident)

    def _watch_edits(self, model, on_end) -> None:
        model.add_begin_edit_fn(self._editing.add)

        def end(m):
            self._editing.discard(m)
            on_end(m)

        model.add_end_edit_fn(end)

    def _build_physx_fields(self, prim: Usd.Prim, rel: MimicRelation, ident: str, unit: str) -> None:
        inst = rel.instance
        raw = rel.authored or {}
        if self._row_visible("Reference joint"):
            with self._row("Reference joint"):
                model = ui.SimpleStringModel(rel.leader or "")
                ui.StringField(model=model, identifier=f"{ident}.reference_joint")
                self._field_models[(inst, "referenceJoint")] = model
                self._watch_edits(model, lambda m, i=inst: self._set_reference(i, m.as_string.strip()))
                ui.Button(
                    "...",
                    width=24,
                    identifier=f"{ident}.pick_reference",
                    tooltip="Pick the reference joint from the stage's joints",
                    clicked_fn=lambda i=inst: self._open_picker(i),
                )
        if self._row_visible("Reference axis"):
            with self._row("Reference axis"):
                axis = str(raw.get("referenceJointAxis", "rotX"))
                index = REFERENCE_AXES.index(axis) if axis in REFERENCE_AXES else 0
                combo = ui.ComboBox(
                    index,
                    *REFERENCE_AXES,
                    identifier=f"{ident}.reference_axis",
                    tooltip="Used only when the reference is a multi-DOF (D6) joint",
                )
                self._axis_models[inst] = combo.model
                combo.model.add_item_changed_fn(
                    lambda m, _item, i=inst: self._set_axis(i, REFERENCE_AXES[m.get_item_value_model().as_int])
                )
        for label, name, tip in _FIELDS:
            shown = f"Offset ({unit})" if name == "offset" else label
            if not self._row_visible(shown):
                continue
            with self._row(shown):
                model = ui.SimpleFloatModel(float(raw.get(name, 0.0)))
                ui.FloatField(model=model, identifier=f"{ident}.{name}", tooltip=tip)
                self._field_models[(inst, name)] = model
                self._watch_edits(model, lambda m, i=inst, n=name: self._set_value(i, n, m.as_float))
        buttons = [b for b in ("Flip direction", "Remove") if self._row_visible(b)]
        if buttons:
            with ui.HStack(height=0, spacing=4):
                if "Flip direction" in buttons:
                    ui.Button(
                        "Flip direction",
                        identifier=f"{ident}.flip",
                        clicked_fn=lambda i=inst: self._flip(i),
                        tooltip="Negate the gearing: the follower moves the other way",
                    )
                if "Remove" in buttons:
                    ui.Button(
                        "Remove",
                        identifier=f"{ident}.remove",
                        clicked_fn=lambda i=inst: self._execute("RemoveMimicJoint", instance=i, schema=PHYSX),
                    )

    def _build_newton_fields(self, rel: MimicRelation, ident: str) -> None:
        raw = rel.authored or {}
        targets = raw.get(NEWTON_REL) or []
        if self._row_visible("Reference joint"):
            with self._row("Reference joint"):
                ui.StringField(
                    model=ui.SimpleStringModel(targets[0] if targets else ""),
                    read_only=True,
                    identifier=f"{ident}.reference_joint",
                )
        for label, name in (("coef0", "newton:mimicCoef0"), ("coef1", "newton:mimicCoef1")):
            if self._row_visible(label):
                with self._row(label):
                    ui.Label(number(float(raw.get(name, 0.0))), identifier=f"{ident}.{label}")
        if self._row_visible("Enabled"):
            with self._row("Enabled"):
                ui.Label(str(bool(raw.get("newton:mimicEnabled", True))), identifier=f"{ident}.enabled")
        if self._row_visible("Remove"):
            ui.Label(
                "NewtonMimicAPI is shown read-only; edit its attributes in the Raw USD Properties section",
                word_wrap=True,
            )
            ui.Button(
                "Remove",
                identifier=f"{ident}.remove",
                clicked_fn=lambda: self._execute("RemoveMimicJoint", schema=NEWTON),
            )

    def _build_findings(self) -> None:
        stage = self._stage()
        with ui.VStack(height=0, spacing=2):
            if stage is None:
                return
            from ..schema.validation import validate

            findings = [f for f in validate(stage) if f.path == self._prim_path]
            if not findings:
                ui.Label("No problems found", identifier="mimic.findings.none")
            for i, f in enumerate(findings):
                ui.Label(f"{f.severity}: {f.code}: {f.message}", identifier=f"mimic.finding.{i}", word_wrap=True)

    def _build_fet022(self) -> None:
        runner = self._runner
        with ui.VStack(height=0, spacing=2):
            if runner is None:
                ui.Label("The FET022 runner is not available", identifier="mimic.fet022.result")
                return
            running = runner.status in (PREPARING, RUNNING)
            res = runner.follower_result(self._stage(), self._prim_path)
            if running:
                text = f"sweeping: {runner.message}"
            elif res is None:
                text = "not swept yet in this session: press Sweep this joint"
            else:
                on = f" on {res.engine}" if res.engine else ""
                text = (
                    f"{res.status}{on}: measured ratio {number_or_dash(res.measured_ratio)} "
                    f"(expected {number_or_dash(abs(res.gearing))}), error {number_or_dash(res.ratio_error)}"
                )
                notes = res.messages + res.warnings
                if notes:
                    text += "; " + "; ".join(notes)
            ui.Label(text, identifier="mimic.fet022.result", word_wrap=True)
            ui.Button(
                "Sweep this joint",
                identifier="mimic.sweep",
                enabled=not running,
                clicked_fn=lambda: runner.start(scope=[self._prim_path]),
                tooltip="FET022 mimic_joint on this follower only (its reference is driven; reports like the menu's)",
            )

    # -- edits ------------------------------------------------------------------------------
    def _execute(self, command: str, **kwargs) -> bool:
        """Run a mimic command unless it would refuse (then one log line, the field reset, and
        Kit's undo and redo history untouched)."""
        if not self._live():
            return False
        kwargs.update(prim_path=self._prim_path, usd_context_name=self._usd_context_name)
        check = omni.kit.commands.create(command, **kwargs)
        problem = check.problem() if check is not None else None
        if problem:
            self._refuse(problem)
            return False
        ok, _ = omni.kit.commands.execute(command, **kwargs)
        return ok

    def _refuse(self, problem: str) -> None:
        carb.log_error(f"Mimic Joint: {problem}")
        self._refresh_values(force=True)  # put the authored value back in the field

    def _current(self, instance: str, name: str):
        prim = self._stage().GetPrimAtPath(self._prim_path)
        return edits.authored_value(prim, instance, name)

    def _live(self) -> bool:
        """The section shows a joint of the stage its commands edit (a callback can outlive both)."""
        stage = self._stage()
        if stage is None or not self._prim_path or not stage.GetPrimAtPath(self._prim_path):
            return False
        context = omni.usd.get_context(self._usd_context_name)  # None for a name no context has
        if context is None or context.get_stage() is not stage:
            carb.log_error(
                f"Mimic Joint: the selected joint is not on the stage of the USD context '{self._usd_context_name}'"
            )
            return False
        return True

    def _set_value(self, instance: str, name: str, value: float) -> None:
        if not self._live():
            return
        if _float32(value) == _float32(float(self._current(instance, name))):
            return
        if name == "gearing":
            kwargs = {"gearing": value}
            command = "SetMimicGearing"
        elif name == "offset":
            kwargs = {"offset": value}
            command = "SetMimicOffset"
        else:
            kwargs = {
                "natural_frequency": float(self._current(instance, "naturalFrequency")),
                "damping_ratio": float(self._current(instance, "dampingRatio")),
            }
            kwargs["natural_frequency" if name == "naturalFrequency" else "damping_ratio"] = value
            command = "SetMimicCompliance"
        self._execute(command, instance=instance, **kwargs)

    def _leader(self, instance: str) -> str:
        prim = self._stage().GetPrimAtPath(self._prim_path)
        rel = next((r for r in read_joint_relations(prim) if r.schema == PHYSX and r.instance == instance), None)
        return (rel.leader or "") if rel else ""

    def _set_reference(self, instance: str, reference: str) -> None:
        if not self._live() or reference == self._leader(instance):
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
        reference = edits.default_reference(self._stage(), self._prim_path)
        if reference is None:
            carb.log_warn(
                f"Mimic Joint: no other revolute or prismatic joint on the stage for {self._prim_path} to follow"
            )
            return
        self._execute("AddMimicJoint", reference_joint_path=reference, gearing=-1.0)

    def _open_picker(self, instance: str) -> None:
        self._close_picker()
        if not self._live():
            return
        candidates = edits.reference_candidates(self._stage(), self._prim_path)
        self._picker = ReferenceJointPicker(
            self._prim_path, candidates, lambda path, i=instance: self._set_reference(i, path)
        )

    def _close_picker(self) -> None:
        if self._picker is not None:
            self._picker.destroy()
            self._picker = None
