"""Smoke test of mimic_ext inside your own Kit app or Isaac Sim: run it there and send back what it prints.

Run it headless at start-up (the last argument makes Kit exit with the verdict's code):
    ./isaac-sim.sh --no-window --exec "/path/to/mimic-ext/tools/kit_smoke.py --quit"
    kit/kit apps/omni.app.full.kit --no-window --exec "/path/to/mimic-ext/tools/kit_smoke.py --quit"
or open it in *Window > Script Editor* and run it there (File > Open, then Run; pasted text works
too when mimic_ext is already enabled or ``MIMIC_EXT_ROOT`` names the project folder). Options after
the script's path: ``--stage NAME_OR_PATH`` (repeatable; default the samples geared_pair.usda,
gripper_prismatic.usda and invalid/MIMIC_BOTH_SCHEMAS.usda (a follower carrying both schemas, for
RemoveMimicDuplicate) from the extension's data/ folder), ``--out DIR`` (where the stage copies and the
reports go; default a new temporary folder), ``--quit`` (post_quit with the exit code at the end).

What it does, in order, on Kit's thread between frames (the app keeps updating):
1. enables the extension as Kit's extension manager does (``set_extension_enabled_immediate``), first
   adding this project as an extension folder when Kit does not know it yet, and checks that
   MimicExtension started and that its commands (and only they) are registered;
2. per sample: opens a copy of it, runs each of its commands with undo and redo (every layer of the
   stage, session layer included, has the same text after undo as before the command, and after redo as
   after the command), undoes them all (the stage as opened), then runs the in-stage FET022 sweep
   (``mimic_ext::run_fet022_sweep``'s runner) on the stage's own PhysX (``kit-physx``, CPU pipeline) and on
   ``warp`` (mimic_ext's solver on the CPU), checks that neither changed a layer, and compares them.

It prints one JSON line per check, ``{"smoke": "mimic_ext", "name": ..., "status": ..., "detail": ...}``
with status ``pass``, ``fail`` or ``not-run`` (the check could not run in this host, e.g. ``kit-physx``
without omni.physx; the detail says why: never counted as a pass), then one verdict line
``{"smoke": "mimic_ext", "verdict": ..., "counts": {"pass": n, "fail": n, "not-run": n}, "exit_code": c,
"host": {...}, "out": DIR}``. Verdict and exit code: ``pass`` (0) every check passed; ``fail`` (1) at least
one failed; ``incomplete`` (2) none failed but at least one was not run; ``cannot-run`` (3) the app cannot run
the checks at all, said by a failed check ``kit_app`` whose ``why`` names the flag to add: no
``omni.kit.async_engine`` started before ``--exec`` (Kit then runs no asyncio loop: add
``--enable omni.kit.async_engine``), or Kit quit before the checks ended (an app without a run loop, e.g.
``omni.app.empty.kit``, quits right after ``--exec``: add ``--/app/runWithoutRunloop=true``). Then Kit exits
with 3 whether or not ``--quit`` was given. Nothing needs a GPU: PhysX is forced onto its CPU pipeline for the
sweep and Warp runs on the CPU.

It runs on Kit's own loop: ``omni.kit.async_engine.run_coroutine`` and ``IApp.next_update_async``.

It opens the samples in the app's stage (save your work first) and leaves the last one open; it writes
only into ``--out``. The sample files of the project are never changed.
"""

import difflib
import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

import omni.kit.app

EXT_NAME = "mimic_ext"
SAMPLES = ("geared_pair.usda", "gripper_prismatic.usda", "invalid/MIMIC_BOTH_SCHEMAS.usda")
PASS, FAIL, NOT_RUN = "pass", "fail", "not-run"
EXIT_CODES = {"pass": 0, "fail": 1, "incomplete": 2, "cannot-run": 3}
#: the extension that runs Python's asyncio loop in Kit's updates (what a bare app lacks)
ASYNC_ENGINE = "omni.kit.async_engine"
ENGINES = ("kit-physx", "warp")
#: Longest a single sweep may take before the check fails (the samples take seconds).
SWEEP_TIMEOUT_S = 600.0


def _options(argv):
    """The options after the script's path (Kit's --exec passes them in sys.argv); none in the Script Editor."""
    opts = {"stages": [], "out": None, "quit": False}
    args = list(argv[1:]) if argv and Path(str(argv[0])).name == "kit_smoke.py" else []
    while args:
        arg = args.pop(0)
        if arg == "--quit":
            opts["quit"] = True
        elif arg == "--stage" and args:
            opts["stages"].append(args.pop(0))
        elif arg == "--out" and args:
            opts["out"] = args.pop(0)
        else:
            print(f"kit_smoke.py: ignoring unknown argument {arg!r} (use --stage, --out, --quit)", flush=True)
    opts["stages"] = opts["stages"] or list(SAMPLES)
    return opts


def _project_root():
    """This project's folder (the extension's root): MIMIC_EXT_ROOT, else the folder above tools/."""
    if os.environ.get("MIMIC_EXT_ROOT"):
        return Path(os.environ["MIMIC_EXT_ROOT"]).resolve()
    here = globals().get("__file__")
    return Path(here).resolve().parents[1] if here else None


def _layer_texts(stage):
    """Every layer of the stage (session layer and sublayers included) as text, by identifier."""
    return {layer.identifier: layer.ExportToString() for layer in stage.GetLayerStack(includeSessionLayers=True)}


def _diff(a, b, limit=20):
    """The first lines that differ between two {layer: text} maps (for the report)."""
    out = []
    for ident in sorted(set(a) | set(b)):
        if a.get(ident) != b.get(ident):
            lines = difflib.unified_diff(
                (a.get(ident) or "").splitlines(),
                (b.get(ident) or "").splitlines(),
                fromfile=ident,
                tofile=ident,
                lineterm="",
                n=0,
            )
            out.extend(list(lines)[: limit - len(out)])
        if len(out) >= limit:
            break
    return out


class Smoke:
    def __init__(self, opts):
        self.opts = opts
        self.app = omni.kit.app.get_app()
        self.counts = {PASS: 0, FAIL: 0, NOT_RUN: 0}
        self.out = Path(opts["out"]) if opts["out"] else Path(tempfile.mkdtemp(prefix="mimic_ext_smoke_"))
        self.host = {"python": sys.version.split()[0], "platform": platform.platform()}
        self.ext = None
        self.verdict = None  # set once the verdict line is printed

    def report(self, name, status, detail):
        self.counts[status] += 1
        print(
            json.dumps({"smoke": EXT_NAME, "name": name, "status": status, "detail": detail}, default=str), flush=True
        )
        return status

    async def frame(self, n=1):
        for _ in range(n):
            await self.app.next_update_async()

    # -- 1. the extension ---------------------------------------------------------------------------
    def _search_folder(self, root):
        """A folder Kit can search that holds this project under the extension's name."""
        if root.name == EXT_NAME:
            return root.parent
        folder = self.out / "exts"
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / EXT_NAME
        if not link.exists():
            link.symlink_to(root, target_is_directory=True)
        return folder

    async def enable(self):
        manager = self.app.get_extension_manager()
        detail = {"was_enabled": manager.is_extension_enabled(EXT_NAME)}
        if not detail["was_enabled"]:
            root = _project_root()
            if not any(e["name"] == EXT_NAME for e in manager.get_extensions()):
                if root is None:
                    return self.report(
                        "extension_enabled",
                        FAIL,
                        {
                            **detail,
                            "why": (
                                "Kit does not know mimic_ext and this script cannot tell where the project is: start Kit "
                                "with --ext-folder (docs/kit.md), or set MIMIC_EXT_ROOT, or run the file rather than "
                                "pasted text"
                            ),
                        },
                    )
                try:
                    folder = self._search_folder(root)
                except OSError as exc:
                    return self.report(
                        "extension_enabled",
                        FAIL,
                        {
                            **detail,
                            "why": (
                                f"cannot link {root} as {EXT_NAME} ({exc}): add the extension folder yourself (docs/kit.md)"
                            ),
                        },
                    )
                manager.add_path(str(folder))
                detail["extension_folder_added"] = str(folder)
                await self.frame()
            detail["set_extension_enabled_immediate"] = manager.set_extension_enabled_immediate(EXT_NAME, True)
            await self.frame(2)
        detail["ext_id"] = manager.get_enabled_extension_id(EXT_NAME)
        try:
            kit_layer = importlib.import_module("mimic_ext.kit")
        except Exception as exc:
            return self.report(
                "extension_enabled",
                FAIL,
                {
                    **detail,
                    "why": (
                        f"mimic_ext.kit does not import: {type(exc).__name__}: {exc} (Kit's log has the traceback)"
                    ),
                },
            )
        import mimic_ext

        self.ext = kit_layer.get_extension()
        detail.update(
            {
                "mimic_ext.kit imported": True,
                "MimicExtension started": self.ext is not None,
                "loaded_from": str(Path(mimic_ext.__file__).resolve().parent),
            }
        )
        self.host["mimic_ext"] = detail["loaded_from"]
        if self.ext is None:
            return self.report(
                "extension_enabled",
                FAIL,
                {
                    **detail,
                    "why": (
                        "mimic_ext.kit imported but MimicExtension did not start: see Kit's log for the enable's errors"
                    ),
                },
            )
        return self.report("extension_enabled", PASS, detail)

    def commands(self):
        import omni.kit.commands

        from mimic_ext.kit.commands import COMMANDS

        names = [c.__name__.removesuffix("Command") for c in COMMANDS]
        missing = [n for n in names if omni.kit.commands.get_command_class(n) is None]
        private = omni.kit.commands.get_command_class("_MimicEdit") is not None
        detail = {
            "registered": [n for n in names if n not in missing],
            "missing": missing,
            "_MimicEdit registered": private,
        }
        return self.report("commands_registered", FAIL if missing or private else PASS, detail)

    # -- 2. a sample --------------------------------------------------------------------------------
    def _sample_file(self, name):
        import mimic_ext

        given = Path(name)
        return (
            given
            if given.is_absolute() or given.exists()
            else Path(mimic_ext.__file__).resolve().parents[1] / "data" / name
        )

    async def sample(self, name):
        import omni.usd

        src = self._sample_file(name)
        tag = src.name
        engines_left = [f"{tag}/sweep/{e}" for e in ENGINES] + [f"{tag}/compare/kit-physx-vs-warp"]
        if not src.is_file():
            self.report(f"{tag}/open", FAIL, {"file": str(src), "why": "no such file"})
            for n in engines_left:
                self.report(n, NOT_RUN, {"why": "the stage did not open"})
            return
        folder = self.out / src.stem
        folder.mkdir(parents=True, exist_ok=True)
        copy = folder / src.name
        shutil.copyfile(src, copy)
        context = omni.usd.get_context()
        ok, err = await context.open_stage_async(str(copy))
        await self.frame(2)
        stage = context.get_stage()
        if not ok or stage is None:
            self.report(f"{tag}/open", FAIL, {"file": str(copy), "why": err or "open_stage_async returned False"})
            for n in engines_left:
                self.report(n, NOT_RUN, {"why": "the stage did not open"})
            return
        self.report(f"{tag}/open", PASS, {"file": str(copy), "source": str(src)})
        await self.edits(tag, stage)
        results = {}
        for engine in ENGINES:
            results[engine] = await self.sweep(tag, stage, engine, folder / engine)
        self.compare(tag, results)

    async def edits(self, tag, stage):
        """Each command with undo and redo, then everything undone."""
        import omni.kit.commands
        import omni.kit.undo

        from mimic_ext.schema import PHYSX, read_relations

        rel = next((r for r in read_relations(stage) if r.schema == PHYSX), None)
        names = (
            "SetMimicGearing",
            "SetMimicOffset",
            "SetMimicReferenceJoint",
            "SetMimicCompliance",
            "RemoveMimicJoint",
            "AddMimicJoint",
            "ConvertMimicSchema",
            "RemoveMimicDuplicate",
        )
        if rel is None:
            for n in (*names, "undo_all"):
                self.report(f"{tag}/command/{n}", NOT_RUN, {"why": "the stage has no PhysxMimicJointAPI relation"})
            return
        a = dict(rel.authored or {})
        gearing, offset = float(a.get("gearing", -1.0)), float(a.get("offset", 0.0))
        axis = str(a.get("referenceJointAxis", "rotX"))
        nf, dr = float(a.get("naturalFrequency", 0.0)), float(a.get("dampingRatio", 0.0))
        common = {"prim_path": rel.follower, "instance": rel.instance}
        plan = [
            ("SetMimicGearing", {**common, "gearing": 2.0 * gearing if gearing else -1.0}),
            ("SetMimicOffset", {**common, "offset": offset + 1.0}),
            (
                "SetMimicReferenceJoint",
                {**common, "reference_joint_path": rel.leader, "reference_axis": "rotZ" if axis == "rotY" else "rotY"},
            ),
            ("SetMimicCompliance", {**common, "natural_frequency": nf + 10.0, "damping_ratio": dr + 0.5}),
            ("RemoveMimicJoint", {**common, "schema": PHYSX}),
            (
                "AddMimicJoint",
                {
                    **common,
                    "reference_joint_path": rel.leader,
                    "gearing": gearing,
                    "offset": offset,
                    "reference_axis": axis,
                    "natural_frequency": nf,
                    "damping_ratio": dr,
                },
            ),
            ("ConvertMimicSchema", {"prim_path": rel.follower, "to_schema": "newton"}),
        ]
        from mimic_ext.schema.schema_choice import carried_schemas

        # where a follower carries both schemas (the MIMIC_BOTH_SCHEMAS sample): nothing to remove elsewhere
        pair = next((p for p in stage.Traverse() if len(carried_schemas(p)) == 2), None)
        if pair is not None:
            plan.insert(0, ("RemoveMimicDuplicate", {"prim_path": str(pair.GetPath()), "keep": "physx"}))
        opened = _layer_texts(stage)
        done = 0
        for name, kwargs in plan:
            before = _layer_texts(stage)
            ok, _ = omni.kit.commands.execute(name, **kwargs)
            await self.frame()
            after = _layer_texts(stage)
            detail = {"kwargs": kwargs, "executed": bool(ok)}
            if not ok:
                self.report(
                    f"{tag}/command/{name}",
                    FAIL,
                    {**detail, "why": "execute returned (False, None): see the command's error line in Kit's log"},
                )
                continue
            done += 1
            detail["changed_layers"] = [i for i in after if after[i] != before.get(i)]
            omni.kit.undo.undo()
            await self.frame()
            undone = _layer_texts(stage)
            omni.kit.undo.redo()
            await self.frame()
            redone = _layer_texts(stage)
            detail["undo_restored_byte_for_byte"] = undone == before
            detail["redo_gave_the_edit_back"] = redone == after
            problems = []
            if not detail["changed_layers"]:
                problems.append("the command changed no layer")
            if undone != before:
                problems.append("undo did not restore the layers: " + "\n".join(_diff(before, undone)))
            if redone != after:
                problems.append("redo did not give the edit back: " + "\n".join(_diff(after, redone)))
            if problems:
                detail["why"] = problems
            self.report(f"{tag}/command/{name}", FAIL if problems else PASS, detail)
        for _ in range(done):
            omni.kit.undo.undo()
            await self.frame()
        back = _layer_texts(stage)
        self.report(
            f"{tag}/command/undo_all",
            PASS if back == opened else FAIL,
            {
                "undone": done,
                "layers_as_opened": back == opened,
                **({} if back == opened else {"why": "\n".join(_diff(opened, back))}),
            },
        )

    async def sweep(self, tag, stage, engine, report_dir):
        """The extension's in-stage sweep runner on ``engine``; returns its SweepResult or None."""
        from mimic_ext.errors import MimicInputError

        name = f"{tag}/sweep/{engine}"
        if engine == "kit-physx":
            from mimic_ext.kit.physx_stage_engine import check_available, physx_label

            try:
                check_available()
            except MimicInputError as exc:
                self.report(name, NOT_RUN, {"why": str(exc)})
                return None
            self.host["omni.physx"] = physx_label()
        runner = self.ext.runner
        before = _layer_texts(stage)
        started = time.monotonic()
        task = runner.start(report_dir=str(report_dir), engine=engine)
        if task is None:
            self.report(name, FAIL, {"why": "the runner refused to start (see Kit's log)"})
            return None
        while not task.done() and time.monotonic() - started < SWEEP_TIMEOUT_S:
            await self.frame()
        if not task.done():
            runner.cancel()
            while not task.done():
                await self.frame()
            self.report(name, FAIL, {"why": f"the sweep did not end within {SWEEP_TIMEOUT_S:.0f} s (cancelled)"})
            return None
        seconds = round(time.monotonic() - started, 2)
        await self.frame()
        after = _layer_texts(stage)
        result = runner.result
        detail = {
            "engine": runner.engine_label,
            "runner": runner.status,
            "message": runner.message,
            "seconds": seconds,
            "frames_while_running": runner.frames_while_running,
            "layers_unchanged": after == before,
            "reports": {k: str(v) for k, v in runner.report_paths.items()},
        }
        problems = []
        if result is None:
            problems.append(f"the sweep did not finish: {runner.message}")
        else:
            detail["fet022"] = result.status
            detail["followers"] = [
                {
                    "follower": f.follower,
                    "status": f.status,
                    "motion_ratio": f.motion_ratio,
                    "expected": abs(f.gearing),
                    "ratio_error": f.ratio_error,
                    "messages": f.messages,
                }
                for f in result.followers
            ]
            if result.warnings:
                detail["warnings"] = result.warnings
            if result.status != "pass":
                problems.append(f"FET022 says {result.status}")
        if engine == "kit-physx" and not str(runner.engine_label).startswith("kit-physx"):
            problems.append(f"ran on {runner.engine_label or 'nothing'}, not on the stage's PhysX")
        if after != before:
            problems.append("the sweep changed the stage: " + "\n".join(_diff(before, after)))
        if problems:
            detail["why"] = problems
        self.report(name, FAIL if problems else PASS, detail)
        return result

    def compare(self, tag, results):
        """Per follower: the same verdict, and motion ratios within FET022's own ratio tolerance of each other."""
        name = f"{tag}/compare/kit-physx-vs-warp"
        missing = [e for e in ENGINES if results.get(e) is None]
        if missing:
            return self.report(name, NOT_RUN, {"why": f"{' and '.join(missing)} gave no result"})
        physx, warp = results["kit-physx"], results["warp"]
        cfg = warp.config
        tol, mode = float(cfg.get("gear_ratio_tolerance", 0.1)), cfg.get("tolerance_mode", "absolute")
        by_path = {f.follower: f for f in warp.followers}
        rows, problems = [], []
        for f in physx.followers:
            w = by_path.get(f.follower)
            if w is None:
                problems.append(f"{f.follower}: only kit-physx swept it")
                continue
            bound = tol if mode == "absolute" else tol * abs(f.gearing)
            gap = abs(f.motion_ratio - w.motion_ratio)
            row = {
                "follower": f.follower,
                "kit-physx": [f.status, f.motion_ratio],
                "warp": [w.status, w.motion_ratio],
                "difference": gap,
                "bound": bound,
            }
            rows.append(row)
            if f.status != w.status:
                problems.append(f"{f.follower}: {f.status} on kit-physx, {w.status} on warp")
            elif f.motion_ratio != f.motion_ratio and w.motion_ratio != w.motion_ratio:
                row["difference"] = "no ratio measured on either (e.g. rejected by the validator)"
            elif not gap <= bound:  # also fails when only one of them measured a ratio (NaN)
                problems.append(f"{f.follower}: motion ratios differ by {gap:.4g} (> {bound:g})")
        problems += [f"{p}: only warp swept it" for p in by_path if p not in {f.follower for f in physx.followers}]
        detail = {"followers": rows, "tolerance": f"{tol:g} ({mode}), FET022's gear_ratio_tolerance"}
        if problems:
            detail["why"] = problems
        return self.report(name, FAIL if problems else PASS, detail)

    # -- all of it ----------------------------------------------------------------------------------
    async def run(self):
        await self.frame(2)
        try:
            if await self.enable() == PASS:
                self.commands()
                for stage in self.opts["stages"]:
                    await self.sample(stage)
            else:
                self.report("everything_else", NOT_RUN, {"why": "the extension did not start"})
        except Exception:
            self.report("smoke_script", FAIL, {"why": traceback.format_exc()})
        verdict = "fail" if self.counts[FAIL] else "incomplete" if self.counts[NOT_RUN] else "pass"
        code = self.finish(verdict)
        if self.opts["quit"]:
            self.app.post_quit(code)
        return code

    def finish(self, verdict):
        """Print the verdict line (once); returns its exit code."""
        try:
            import warp

            self.host["warp"] = warp.config.version
        except Exception:
            self.host["warp"] = "not importable"
        for attr in ("get_app_name", "get_app_version", "get_kit_version"):
            fn = getattr(self.app, attr, None)
            if fn is not None:
                self.host[attr[4:]] = fn()
        self.verdict = verdict
        code = EXIT_CODES[verdict]
        print(
            json.dumps(
                {
                    "smoke": EXT_NAME,
                    "verdict": verdict,
                    "counts": self.counts,
                    "exit_code": code,
                    "host": self.host,
                    "out": str(self.out),
                },
                default=str,
            ),
            flush=True,
        )
        return code

    def cannot_run(self, why):
        """The app cannot run the checks: a failed ``kit_app`` check saying why, the verdict, and Kit exits with 3."""
        self.report("kit_app", FAIL, {"why": why, "checks_reported": sum(self.counts.values())})
        code = self.finish("cannot-run")
        self.app.post_quit(code)

    def on_shutdown(self, event):
        """Kit shuts down (its shutdown stream): before the verdict, the checks cannot have run here.

        A ``post_quit`` from here still sets Kit's exit code (seen with the real kernel 6.2: an
        ``omni.app.empty.kit`` that quits for want of a run loop exits with the code posted here)."""
        if self.verdict is None:
            self.cannot_run(
                "Kit quit before the checks ended: an app without a run loop (e.g. omni.app.empty.kit) quits right "
                "after --exec; add --/app/runWithoutRunloop=true to its command line (or run a full app such as "
                "Isaac Sim or omni.app.full.kit)"
            )


def _start(argv):
    """Schedule the checks on Kit's loop, or say at once why this app cannot run them."""
    app = omni.kit.app.get_app()
    smoke = Smoke(_options(argv))
    # keep the subscription (dropping it unsubscribes) for as long as Kit runs
    _RUNNING.add(app.get_shutdown_event_stream().create_subscription_to_pop(smoke.on_shutdown, name="mimic_ext smoke"))
    if not app.get_extension_manager().is_extension_enabled(ASYNC_ENGINE):
        smoke.cannot_run(
            f"{ASYNC_ENGINE} is not started, so Kit runs no asyncio loop and the checks would never run: start Kit "
            f"with --enable {ASYNC_ENGINE} (omni.app.empty.kit does not enable it)"
        )
        return
    from omni.kit.async_engine import run_coroutine

    task = run_coroutine(smoke.run())
    # the loop holds only a weak reference to a task: keep a strong one until it ends
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)


#: what must live as long as the checks run: the task and the shutdown subscription
_RUNNING: set = set()
_start(sys.argv)
