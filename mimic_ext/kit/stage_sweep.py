"""FET022 "mimic_joint" on the stage open in Kit, with a results window, without stalling Kit.

Why a flattened copy and a job thread: the sweep simulates for seconds, and Kit must keep
drawing. USD stages are not safe to read from one thread while another edits them, so the
open stage is flattened once on Kit's thread (one frame's work) and the job only ever
touches that private copy; the open stage is never modified. The coroutine awaits
``next_update_async()`` between checks, so Kit's update loop is never held for more than a
frame. Cancel stops the job itself (``worker.Job``), and so does the extension's shutdown.
A sweep can be limited to some prims (``scope``: a selected articulation, one joint): the
relations of followers outside them are removed from the private copy.

Engine: by default the stage's own PhysX (``kit-physx``, ``physx_stage_engine``): the analysis
still runs on the private copy in the job thread, while PhysX steps the open stage on Kit's
thread (the job posts the work through ``KitThreadCalls``, pumped once per frame here; the
sweep's edits live in a temporary session sublayer that is removed again). ``warp`` (our solver
on the private copy) is the other choice: the window's *Engine* field, the ``engine`` argument,
or the setting ``SETTING_ENGINE``. Where the app has no omni.physx, ``kit-physx`` falls back to
``warp`` and says so. Every result carries the label of the engine that produced it.

Reports (JSON, JUnit XML, HTML) go next to a local, writable stage (``<stem>.fet022.*``),
to a chosen folder (argument, the window's folder field, or ``SETTING_REPORT_DIR``), and
otherwise (a stage from ``omniverse://`` or ``https://``, a read-only folder, an unsaved
stage) to ``SETTING_FALLBACK_DIR`` (``report_folder.py``). When a sweep ends, a
notification says how it went.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import carb
import carb.settings
import omni.kit.app
import omni.ui as ui
import omni.usd
from pxr import Sdf, Usd

from ..errors import MimicInputError
from ..fet022.reports.headline import headlines
from .kit_thread import KitThreadCalls
from .report_folder import report_location
from .wording import number_or_dash
from .worker import Job, JobCancelled

#: Folder for the reports; empty: next to a local, writable stage, else the fallback folder.
SETTING_REPORT_DIR = "/exts/mimic_ext/fet022/reportDir"
#: Where reports of remote, read-only or unsaved stages go; empty: ~/Documents/mimic_ext/fet022 or the temp folder.
SETTING_FALLBACK_DIR = "/exts/mimic_ext/fet022/fallbackReportDir"
#: The engine a sweep uses: "kit-physx" (the stage's own PhysX, default) or "warp" (mimic_ext's solver).
SETTING_ENGINE = "/exts/mimic_ext/fet022/engine"
KIT_PHYSX, WARP = "kit-physx", "warp"
ENGINE_CHOICES = (KIT_PHYSX, WARP)
#: How long ``destroy()`` waits for a cancelled job to end.
SHUTDOWN_JOIN_S = 5.0
#: Seconds per frame spent on work the job thread posted for Kit's thread (stepping the stage's PhysX).
PUMP_BUDGET_S = 0.05

IDLE, PREPARING, RUNNING, DONE, FAILED, CANCELLED = "idle", "preparing", "running", "done", "failed", "cancelled"
#: Progress shown for each phase (the sweep itself reports no steps).
_PROGRESS = {PREPARING: 0.02, RUNNING: 0.1, "writing": 0.9, DONE: 1.0}


def _notify(text: str, warning: bool = False) -> None:
    """A Kit notification (bottom right), or a log line where omni.kit.notification_manager is not loaded."""
    try:
        import omni.kit.notification_manager as nm
    except ImportError:
        (carb.log_warn if warning else carb.log_info)(text)
        return
    nm.post_notification(text, status=nm.NotificationStatus.WARNING if warning else nm.NotificationStatus.INFO)


def _in_scope(path: str, scope: Sequence[str]) -> bool:
    p = Sdf.Path(path)
    return any(p.HasPrefix(Sdf.Path(s)) for s in scope)


def _limit_to(private: Usd.Stage, scope: Sequence[str]) -> None:
    """Remove, from the private copy, the relations of followers outside ``scope``."""
    from ..schema import read_relations, remove_relation

    for rel in read_relations(private):
        if not _in_scope(rel.follower, scope):
            remove_relation(private, rel.follower, rel.instance, rel.schema)


def _sweep_and_report(
    private: Usd.Stage,
    asset: str,
    out_dir: Path,
    stem: str,
    job_cancelled,
    engine="warp",
    label: str = WARP,
    note: str = "",
):
    """The job: sweep the private copy with ``engine``, run NVIDIA's phase on it (our solver: the
    headline, ``simready.verdicts``), then write the three reports (unless cancelled)."""
    from .. import fet022
    from ..fet022.reports import as_run, write_html, write_json, write_junit
    from ..simready.verdicts import add_verdicts

    result = fet022.run(private, engine=engine, label=label)
    if job_cancelled.is_set():
        raise JobCancelled("cancelled")
    if note:
        result.warnings.insert(0, note)
    result.asset = asset
    run = as_run(result)
    add_verdicts(run, on=WARP, stages={asset: private})
    if job_cancelled.is_set():
        raise JobCancelled("cancelled")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": write_json(run, out_dir / f"{stem}.fet022.json"),
        "junit": write_junit(run, out_dir / f"{stem}.fet022.junit.xml"),
        "html": write_html(run, out_dir / f"{stem}.fet022.html"),
    }
    return result, {k: Path(v) for k, v in paths.items()}, run


class StageSweepRunner:
    """Runs the sweep on the current stage of a USD context and shows the per-follower results."""

    WINDOW_TITLE = "Mimic Joints: FET022 sweep"

    def __init__(self, usd_context_name: str = ""):
        self._context_name = usd_context_name
        self._window: ui.Window | None = None
        self._task: asyncio.Future | None = None
        self._job: Job | None = None
        self._progress_label: ui.Label | None = None
        self._cancel_button: ui.Button | None = None
        self._folder_model = ui.SimpleStringModel("")
        self.progress_model = ui.SimpleFloatModel(0.0, min=0.0, max=1.0)
        self._calls = KitThreadCalls()  # made on Kit's thread: the thread that runs what the job posts
        self._engine = None  # the kit-physx engine of the running sweep (restored when it ends)
        chosen = carb.settings.get_settings().get_as_string(SETTING_ENGINE).strip() or KIT_PHYSX
        #: the engine the next sweep uses (the window's Engine field)
        self.engine_choice = chosen
        #: the label of the engine that produced ``result`` (what ran, e.g. "warp" after a fallback)
        self.engine_label = ""
        #: NVIDIA's verdict on the last sweep ("SimReady mimic_joint 1.1.0: pass"), "" before one
        self.headline = ""
        self._listeners: list[Callable[[], None]] = []
        self.status = IDLE
        self.message = ""
        self.result = None
        #: root layer identifier of the stage ``result`` belongs to, and the scope it was run with
        self.result_layer = ""
        self.result_scope: tuple[str, ...] = ()
        self.report_paths: dict[str, Path] = {}
        #: Frames Kit drew while the sweep ran (a sweep that blocked Kit would leave this at 0).
        self.frames_while_running = 0

    # -- entry points -----------------------------------------------------------------------
    def run_action(self, prim_list=None) -> None:
        """The registered action: menu (no argument) or the Stage window's context menu (selected prims)."""
        scope = [str(p.GetPath()) for p in (prim_list or []) if p]
        self.start(scope=scope or None)

    def start(
        self, report_dir: str | Path | None = None, scope: Sequence[str] | None = None, engine: str | None = None
    ):
        """Schedule a sweep of the open stage (only followers under ``scope`` when given) with ``engine``
        ("kit-physx" or "warp"; default: the window's choice); returns the task."""
        if self.is_running():
            carb.log_warn("FET022 sweep: a sweep is already running")
            return self._task
        context = omni.usd.get_context(self._context_name)  # None for a name no context has
        if context is None:
            carb.log_error(
                f"FET022 sweep: no USD context named '{self._context_name}': pass the name of an existing "
                'one (usd_context_name="" is the app\'s default)'
            )
            return None
        stage = context.get_stage()
        if stage is None:
            carb.log_error("FET022 sweep: no stage is open: open a stage with mimic joints first")
            return None
        settings = carb.settings.get_settings()
        chosen = report_dir or self._folder_model.as_string.strip() or settings.get_as_string(SETTING_REPORT_DIR)
        layer = stage.GetRootLayer()
        out_dir, stem = report_location(
            layer.identifier, layer.realPath, chosen, settings.get_as_string(SETTING_FALLBACK_DIR)
        )
        choice = (engine or self.engine_choice or KIT_PHYSX).strip()
        if choice not in ENGINE_CHOICES:
            carb.log_error(f"FET022 sweep: unknown engine '{choice}': choose {' or '.join(ENGINE_CHOICES)}")
            return None
        self._task = asyncio.ensure_future(self._run(stage, out_dir, stem, tuple(scope or ()), choice))
        return self._task

    def is_running(self) -> bool:
        return self._task is not None and not self._task.done()

    def cancel(self) -> bool:
        """Stop the running sweep (the Cancel button); True when one was running."""
        if self._job is not None and not self._job.done():
            return self._job.cancel()
        if self.is_running():
            self._task.cancel()
            return True
        return False

    def add_listener(self, fn: Callable[[], None]) -> None:
        """``fn()`` after every change of state (the Property section shows the last result)."""
        self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[], None]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def follower_result(self, stage: Usd.Stage, follower: str):
        """The last sweep's result for ``follower`` of ``stage``, or None."""
        if self.result is None or stage is None or self.result_layer != stage.GetRootLayer().identifier:
            return None
        return next((f for f in self.result.followers if f.follower == follower), None)

    def destroy(self) -> None:
        """Stop any sweep (the job too), put the stage's PhysX and the open stage back, close the window:
        the extension's shutdown."""
        if self._job is not None and not self._job.done():
            self._job.cancel()
            if not self._wait_for(self._job, SHUTDOWN_JOIN_S):
                carb.log_warn(
                    "FET022 sweep: the sweep did not stop within "
                    f"{SHUTDOWN_JOIN_S:.0f} s; it ends with its current native call"
                )
        self._job = None
        self._restore_engine()
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self._listeners.clear()
        if self._window is not None:
            self._window.destroy()
            self._window = None

    def _wait_for(self, job: Job, timeout_s: float) -> bool:
        """Wait for a (cancelled) job on Kit's thread, running what it posts meanwhile: its clean-up
        of the stage's PhysX is posted here too. True when it ended."""
        deadline = time.monotonic() + timeout_s
        while not job.done() and time.monotonic() < deadline:
            self._calls.pump()
            job.join(0.01)
        self._calls.pump()
        return job.done()

    def _restore_engine(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            try:
                engine.close()  # idempotent: the open stage and PhysX as they were before the sweep
            except Exception:
                carb.log_error("FET022 sweep: could not restore the stage after the sweep:\n" + traceback.format_exc())

    def _engine_for(self, choice: str, stage: Usd.Stage):
        """(engine for fet022.run, its label, a note when it is not the one asked for)."""
        if choice == WARP:
            return WARP, WARP, ""
        from .physx_stage_engine import KitPhysxEngine

        try:
            engine = KitPhysxEngine(live_stage=stage, calls=self._calls)
        except MimicInputError as exc:
            note = f"swept with {WARP} instead of {KIT_PHYSX}: {exc}"
            carb.log_warn(f"FET022 sweep: {note}")
            return WARP, WARP, note
        self._engine = engine
        return engine, engine.label, ""

    # -- the run ----------------------------------------------------------------------------
    async def _run(
        self, stage: Usd.Stage, out_dir: Path, stem: str, scope: tuple[str, ...], choice: str = KIT_PHYSX
    ) -> None:
        app = omni.kit.app.get_app()
        layer = stage.GetRootLayer()
        asset = layer.realPath or layer.identifier
        name = Path(asset).name if asset else "stage"
        self.result, self.report_paths, self.frames_while_running = None, {}, 0
        self.headline = ""
        self._set_state(PREPARING, f"Preparing {name}")
        await app.next_update_async()  # let the window draw before the flatten
        try:
            private = Usd.Stage.Open(stage.Flatten())
            if scope:
                _limit_to(private, scope)
        except Exception as exc:
            self._fail(f"cannot copy the stage for the sweep: {exc}")
            return
        what = f"{name} ({', '.join(Sdf.Path(s).name for s in scope)})" if scope else name
        engine, label, note = self._engine_for(choice, stage)
        self.engine_label = label
        self._set_state(RUNNING, f"Sweeping {what} on {label}")
        started = time.monotonic()
        cancelled = threading.Event()
        job = Job(
            functools.partial(_sweep_and_report, private, asset, out_dir, stem, cancelled, engine, label, note),
            name="mimic_ext FET022 sweep",
            cancelled=cancelled,
        )
        self._job = job.start()
        try:
            while not job.done():
                await app.next_update_async()
                self.frames_while_running += 1
                self._calls.pump(PUMP_BUDGET_S)
                if self._progress_label is not None:
                    self._progress_label.text = f"running for {time.monotonic() - started:.1f} s"
        except asyncio.CancelledError:
            job.cancel()
            self._wait_for(job, SHUTDOWN_JOIN_S)
            raise
        finally:
            self._job = None
            self._restore_engine()
        try:
            result, paths, run = job.result()
        except JobCancelled:
            self._set_state(CANCELLED, f"Cancelled after {time.monotonic() - started:.1f} s; no reports written")
            _notify(f"FET022 sweep of {what} cancelled", warning=True)
            return
        except MimicInputError as exc:
            self._fail(str(exc))
            return
        except Exception:
            self._fail("the sweep failed:\n" + traceback.format_exc())
            return
        self.result, self.report_paths = result, paths
        self.result_layer, self.result_scope = layer.identifier, scope
        counts = result.counts()
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or result.reason
        self._set_state(DONE, f"{result.status.upper()}: {summary}")
        ran_on = result.engine or label
        self.headline = "; ".join(headlines(run))
        carb.log_info(f"FET022 sweep of {asset} on {ran_on}: {result.status}; reports in {out_dir}; {self.headline}")
        _notify(
            f"FET022 sweep of {what}: {result.status.upper()} ({summary}) on {ran_on}; reports in {out_dir}"
            + (f"; {self.headline} (NVIDIA's phase on warp)" if self.headline else ""),
            warning=result.status != "pass" or bool(note) or "fail" in self.headline,
        )

    def _fail(self, message: str) -> None:
        carb.log_error(f"FET022 sweep: {message}")
        self._set_state(FAILED, message)
        _notify(f"FET022 sweep failed: {message.splitlines()[0]}", warning=True)

    def _set_state(self, status: str, message: str) -> None:
        self.status, self.message = status, message
        if status in _PROGRESS:
            self.progress_model.set_value(_PROGRESS[status])
        self._show()
        for fn in list(self._listeners):
            fn()

    # -- the window -------------------------------------------------------------------------
    def _show(self) -> None:
        if self._window is None:
            self._window = ui.Window(self.WINDOW_TITLE, width=760, height=420)
            self._window.frame.set_build_fn(self._build)
        self._window.visible = True
        self._window.frame.rebuild()

    def _build(self) -> None:
        running = self.status in (PREPARING, RUNNING)
        with ui.ScrollingFrame():
            with ui.VStack(height=0, spacing=4):
                if self.headline:
                    ui.Label(self.headline, identifier="fet022.simready", word_wrap=True)
                ui.Label(self.message, identifier="fet022.status", word_wrap=True)
                with ui.HStack(height=0, spacing=4):
                    ui.ProgressBar(model=self.progress_model, identifier="fet022.progress_bar", height=16)
                    self._cancel_button = ui.Button(
                        "Cancel",
                        identifier="fet022.cancel",
                        width=80,
                        enabled=running,
                        clicked_fn=self.cancel,
                        tooltip="Stop the sweep; no reports are written",
                    )
                self._progress_label = ui.Label("", identifier="fet022.progress")
                if self.engine_label and self.status not in (IDLE,):
                    ui.Label(f"Engine: {self.engine_label}", identifier="fet022.engine", word_wrap=True)
                if self.result is not None:
                    self._build_table()
                    if self.report_paths:
                        folder = next(iter(self.report_paths.values())).parent
                        ui.Label(f"Reports written to {folder}", identifier="fet022.reports", word_wrap=True)
                with ui.HStack(height=0, spacing=4):
                    ui.Label("Engine", width=100)
                    index = ENGINE_CHOICES.index(self.engine_choice) if self.engine_choice in ENGINE_CHOICES else 0
                    combo = ui.ComboBox(
                        index,
                        *ENGINE_CHOICES,
                        identifier="fet022.engine_choice",
                        tooltip="kit-physx: the stage's own PhysX (omni.physx); "
                        "warp: mimic_ext's solver on a copy of the stage",
                    )
                    combo.model.add_item_changed_fn(
                        lambda m, _item: self._choose_engine(ENGINE_CHOICES[m.get_item_value_model().as_int])
                    )
                with ui.HStack(height=0, spacing=4):
                    ui.Label("Report folder", width=100)
                    ui.StringField(
                        model=self._folder_model,
                        identifier="fet022.report_dir",
                        tooltip="Empty: next to a local stage, else the fallbackReportDir setting",
                    )
                    ui.Button(
                        "Run again",
                        identifier="fet022.run",
                        enabled=not running,
                        clicked_fn=lambda: self.start(scope=self.result_scope or None),
                    )

    def _choose_engine(self, choice: str) -> None:
        self.engine_choice = choice

    def _build_table(self) -> None:
        header = ("follower", "status", "ratio", "expected", "error", "messages")
        with ui.HStack(height=0, spacing=4):
            for text in header:
                ui.Label(text, name="header", width=ui.Fraction(3 if text == "messages" else 1))
        for i, f in enumerate(self.result.followers):
            notes = "; ".join(f.messages + f.warnings)
            cells = (
                f.name,
                f.status,
                number_or_dash(f.measured_ratio),
                number_or_dash(abs(f.gearing)),
                number_or_dash(f.ratio_error),
                notes,
            )
            with ui.HStack(height=0, spacing=4, identifier=f"fet022.row.{i}"):
                for col, text in zip(header, cells):
                    ui.Label(
                        text,
                        identifier=f"fet022.row.{i}.{col}",
                        word_wrap=col == "messages",
                        width=ui.Fraction(3 if col == "messages" else 1),
                    )
