"""FET022 "mimic_joint" on the stage open in Kit, with a results window, without stalling Kit.

Why a flattened copy and a worker thread: the sweep simulates for seconds, and Kit must keep
drawing. USD stages are not safe to read from one thread while another edits them, so the
open stage is flattened once on Kit's thread (one frame's work) and the worker only ever
touches that private copy; the open stage is never modified. The coroutine awaits
``next_update_async()`` between checks, so Kit's update loop is never held for more than a
frame. Reports (JSON, JUnit XML, HTML) go next to the stage (``<stem>.fet022.*``) or to a
chosen folder (argument, the window's folder field, or the carb setting below).
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
import time
import traceback
from pathlib import Path

import carb
import carb.settings
import omni.kit.app
import omni.ui as ui
import omni.usd
from pxr import Usd

from ..errors import MimicInputError

MENU_NAME = "Mimic Joints"
MENU_ITEM = "Run FET022 sweep on stage"
#: Folder for the reports; empty means next to the stage (a temporary folder for an unsaved stage).
SETTING_REPORT_DIR = "/exts/mimic_ext/fet022/reportDir"

IDLE, PREPARING, RUNNING, DONE, FAILED = "idle", "preparing", "running", "done", "failed"


def _asset_name(stage: Usd.Stage) -> str:
    layer = stage.GetRootLayer()
    return layer.realPath or layer.identifier


def default_report_dir(stage: Usd.Stage) -> Path:
    real = stage.GetRootLayer().realPath
    return Path(real).parent if real else Path(tempfile.gettempdir()) / "mimic_ext_fet022"


def _sweep_and_report(private: Usd.Stage, asset: str, out_dir: Path):
    """Worker thread: sweep the private copy, then write the three reports."""
    from .. import fet022
    from ..fet022.reports import write_html, write_json, write_junit

    result = fet022.run(private)
    result.asset = asset
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = Path(asset).stem if Path(asset).is_file() else "stage"   # anonymous layers: "anon:0x..."
    paths = {"json": write_json(result, out_dir / f"{stem}.fet022.json"),
             "junit": write_junit(result, out_dir / f"{stem}.fet022.junit.xml"),
             "html": write_html(result, out_dir / f"{stem}.fet022.html")}
    return result, {k: Path(v) for k, v in paths.items()}


class StageSweepRunner:
    """Runs the sweep on the current stage of a USD context and shows the per-follower results."""

    WINDOW_TITLE = "Mimic Joints: FET022 sweep"

    def __init__(self, usd_context_name: str = ""):
        self._context_name = usd_context_name
        self._window: ui.Window | None = None
        self._task: asyncio.Future | None = None
        self._progress_label: ui.Label | None = None
        self._folder_model = ui.SimpleStringModel("")
        self.status = IDLE
        self.message = ""
        self.result = None
        self.report_paths: dict[str, Path] = {}
        #: Frames Kit drew while the sweep ran (a sweep that blocked Kit would leave this at 0).
        self.frames_while_running = 0

    # -- entry points -----------------------------------------------------------------------
    def on_menu_click(self, *_args) -> None:
        """Menu callback (takes no arguments in current Kit; older menus pass two)."""
        self.start()

    def start(self, report_dir: str | Path | None = None):
        """Schedule a sweep of the open stage; returns the task (None when no stage is open)."""
        if self._task is not None and not self._task.done():
            carb.log_warn("FET022 sweep: a sweep is already running")
            return self._task
        stage = omni.usd.get_context(self._context_name).get_stage()
        if stage is None:
            carb.log_error("FET022 sweep: no stage is open: open a stage with mimic joints first")
            return None
        folder = report_dir or self._folder_model.as_string.strip() or \
            carb.settings.get_settings().get_as_string(SETTING_REPORT_DIR)
        self._task = asyncio.ensure_future(self._run(stage, Path(folder) if folder else default_report_dir(stage)))
        return self._task

    def is_running(self) -> bool:
        return self._task is not None and not self._task.done()

    def destroy(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        if self._window is not None:
            self._window.destroy()
            self._window = None

    # -- the run ----------------------------------------------------------------------------
    async def _run(self, stage: Usd.Stage, out_dir: Path) -> None:
        app = omni.kit.app.get_app()
        asset = _asset_name(stage)
        self.result, self.report_paths, self.frames_while_running = None, {}, 0
        self._set_state(PREPARING, f"Preparing {Path(asset).name}")
        await app.next_update_async()  # let the window draw before the flatten
        try:
            private = Usd.Stage.Open(stage.Flatten())
        except Exception as exc:  # noqa: BLE001 - reported in the window and the log
            self._fail(f"cannot copy the stage for the sweep: {exc}")
            return
        self._set_state(RUNNING, f"Sweeping {Path(asset).name}")
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        work = loop.run_in_executor(None, functools.partial(_sweep_and_report, private, asset, out_dir))
        while not work.done():
            await app.next_update_async()
            self.frames_while_running += 1
            if self._progress_label is not None:
                self._progress_label.text = f"running for {time.monotonic() - started:.1f} s"
        try:
            self.result, self.report_paths = work.result()
        except MimicInputError as exc:
            self._fail(str(exc))
            return
        except Exception:  # noqa: BLE001
            self._fail("the sweep failed:\n" + traceback.format_exc())
            return
        counts = self.result.counts()
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or self.result.reason
        self._set_state(DONE, f"{self.result.status.upper()}: {summary}")
        carb.log_info(f"FET022 sweep of {asset}: {self.result.status}; reports in {out_dir}")

    def _fail(self, message: str) -> None:
        carb.log_error(f"FET022 sweep: {message}")
        self._set_state(FAILED, message)

    def _set_state(self, status: str, message: str) -> None:
        self.status, self.message = status, message
        self._show()

    # -- the window -------------------------------------------------------------------------
    def _show(self) -> None:
        if self._window is None:
            self._window = ui.Window(self.WINDOW_TITLE, width=760, height=420)
            self._window.frame.set_build_fn(self._build)
        self._window.visible = True
        self._window.frame.rebuild()

    def _build(self) -> None:
        with ui.ScrollingFrame():
            with ui.VStack(height=0, spacing=4):
                ui.Label(self.message, identifier="fet022.status", word_wrap=True)
                self._progress_label = ui.Label("", identifier="fet022.progress")
                if self.result is not None:
                    self._build_table()
                    if self.report_paths:
                        folder = next(iter(self.report_paths.values())).parent
                        ui.Label(f"Reports written to {folder}", identifier="fet022.reports", word_wrap=True)
                with ui.HStack(height=0, spacing=4):
                    ui.Label("Report folder", width=100)
                    ui.StringField(model=self._folder_model, identifier="fet022.report_dir",
                                   tooltip="Empty: next to the stage")
                    ui.Button("Run again", identifier="fet022.run", enabled=not self.is_running(),
                              clicked_fn=self.start)

    def _build_table(self) -> None:
        header = ("follower", "status", "ratio", "expected", "error", "messages")
        with ui.HStack(height=0, spacing=4):
            for text in header:
                ui.Label(text, name="header", width=ui.Fraction(3 if text == "messages" else 1))
        for i, f in enumerate(self.result.followers):
            notes = "; ".join(f.messages + f.warnings)
            cells = (f.name, f.status, number_or_dash(f.measured_ratio), number_or_dash(abs(f.gearing)),
                     number_or_dash(f.ratio_error), notes)
            with ui.HStack(height=0, spacing=4, identifier=f"fet022.row.{i}"):
                for col, text in zip(header, cells):
                    ui.Label(text, identifier=f"fet022.row.{i}.{col}", word_wrap=col == "messages",
                             width=ui.Fraction(3 if col == "messages" else 1))


def number_or_dash(value: float) -> str:
    return "-" if value is None or value != value else f"{value:.4g}"
