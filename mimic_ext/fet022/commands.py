"""``mimic-ext sweep``: FET022 mimic_joint on stages and folders, with reports.

Only the standard library is imported at module level, so ``mimic-ext --help`` stays
fast; USD, Warp and the solver load when the command runs.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from ..errors import MimicInputError

CONVENTION_LINES = (
    "Units: |gearing| and the measured ratio are in the authored USD units (degrees, stage units); "
    "max error is SI (rad or m).",
    "Signs: PhysX q_f + gearing*q_ref + offset = 0, so a follower moving with its reference has gearing < 0; "
    "Newton q_f = coef0 + coef1*q_ref.",
    "Exit code: 0 every stage passed, was skipped or is not applicable to the engine (it cannot represent it: "
    "the reason is given), 1 a follower failed, 2 a stage could not be swept or timed out, or the run ended "
    "with stages unjudged (--resume sweeps them).",
)

REPORT_NAMES = {"json": "fet022_report.json", "junit": "fet022_junit.xml", "html": "fet022_report.html"}
#: the folder under --report that holds the harness's result.json files
RESULT_DIR = "result"


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="FET022 mimic_joint: sweep reference joints, check follower motion ratios",
        description=textwrap.fill(
            "Run the FET022 'mimic_joint' conformance test: drive each reference joint through its range "
            "and check that every mimic follower moves by |gearing| times as much (within the tolerance). "
            "The stage files are only read.",
            100,
        )
        + "\n\n"
        + "\n".join(textwrap.fill(line, 100) for line in CONVENTION_LINES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "stages",
        nargs="+",
        metavar="STAGE_OR_FOLDER",
        help="USD files, or folders whose USD files are all swept (one level deep)",
    )
    p.add_argument("--recursive", action="store_true", help="also sweep USD files in sub-folders")
    p.add_argument(
        "--config",
        metavar="FILE",
        help="YAML file of settings over the defaults (and over the file MIMIC_EXT_FET022_CONFIG names); "
        "mimic_ext/fet022/fet022.yaml lists every setting",
    )
    p.add_argument(
        "--tolerance",
        type=_positive,
        metavar="X",
        help="gear_ratio_tolerance: allowed |ratio - |gearing|| (absolute by default, as the harness; 0.10)",
    )
    p.add_argument(
        "--tolerance-mode",
        choices=("relative", "absolute"),
        help="relative: error/|gearing| <= X; absolute: error <= X in the authored units",
    )
    p.add_argument("--sweep-seconds", type=_positive, metavar="S", help="duration of the lo->hi->lo sweep (s)")
    p.add_argument("--settle-seconds", type=float, metavar="S", help="hold at the start pose before sampling (s)")
    p.add_argument("--physics-fps", type=_positive, metavar="HZ", help="solver steps per second")
    p.add_argument(
        "--report",
        metavar="DIR",
        help=f"make DIR the run folder: each result stored there as it finishes, in simready-benchmark's "
        f"layout (plan.json, results/<asset dir>/.simready/runtime/mimic_joint/result.json, which "
        f"`simready-benchmark --report-only --output-dir DIR` reads), then the reports "
        f"({', '.join(REPORT_NAMES.values())}: an index, one page per asset under fet022_assets/, JSON without "
        f"samples) built from it, and the harness's result.json per stage under {RESULT_DIR}/",
    )
    p.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue the run folder RUN_DIR (as --report RUN_DIR): reuse each stored result whose stage "
        "files, configuration, engine and mimic-ext version are unchanged; sweep the rest",
    )
    p.add_argument(
        "--timeout",
        type=_positive,
        metavar="S",
        help="per stage and engine: stop a sweep after S seconds and report it as 'timeout' (exit code 2)",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="write the JSON report (schema: mimic_ext/fet022/report.schema.json); - for stdout",
    )
    p.add_argument(
        "--junit", metavar="FILE", help="write JUnit XML (one testcase per follower and engine); - for stdout"
    )
    p.add_argument(
        "--html", metavar="FILE", help="write a self-contained HTML report with one plot per follower; - for stdout"
    )
    p.add_argument(
        "--result-json",
        metavar="DIR",
        help="write the public harness's result.json for every stage and engine, as "
        "DIR/<stage>/<engine>/result.json (on by default with --report)",
    )
    p.add_argument("--no-samples", action="store_true", help="leave the sampled displacements out of the JSON")
    p.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        metavar="N",
        help="worker processes (default: a pool only when it pays off; 1: never); not with --executor dask, "
        "whose workers set how many stages run at once",
    )
    p.add_argument(
        "--engine",
        default="warp",
        metavar="NAMES",
        help="physics engine(s), comma-separated: warp (mimic_ext's own solver, default), physx, newton, "
        "mujoco; several print a conformance matrix (follower x engine)",
    )
    p.add_argument("--device", default="cpu", help="Warp device for the warp engine (cpu, cuda:0, ...)")
    p.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where stages run: here and in a local pool (default) or on a Dask cluster",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address for --executor dask (stage paths are sent absolute: workers must see "
        "the stage files at the same paths)",
    )
    p.add_argument(
        "--source",
        metavar="ROBOT",
        help="the URDF or MJCF file the stage was made from: its mimic relations (follower, leader, "
        "multiplier, offset, joint kinds) are compared with the stage's, and every difference fails "
        "(mimic-ext diff prints the same table alone); one stage only",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="our port's findings fail the run too; by default NVIDIA's SimReady verdict (its phase run on the "
        "same engine) decides the exit code where it ran",
    )
    p.add_argument(
        "--no-simready",
        action="store_true",
        help="do not run NVIDIA's phase: our port's verdicts decide (as without the simready extra)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no per-stage progress lines on stderr")
    p.set_defaults(func=cmd_sweep)

    r = subparsers.add_parser(
        "report",
        help="rebuild a sweep run folder's reports from its stored results",
        description="Write the reports of a sweep run folder (sweep --report DIR) from the results stored in it: "
        "the HTML index and one page per asset, the JSON report without samples, the JUnit XML. Works on a "
        "run that was interrupted (its unfinished stages are listed as unjudged).",
    )
    r.add_argument("run_dir", metavar="RUN_DIR", help="a folder written by sweep --report or --resume")
    r.set_defaults(func=cmd_report)


class Progress:
    """One line per finished unit: done / total, the pass / fail / error counts so far, the rate and
    the time left at that rate."""

    def __init__(self) -> None:
        import time

        self.clock = time.monotonic
        self.start = self.clock()
        self.counts: dict[str, int] = {}

    def __call__(self, done: int, total: int, res) -> None:
        self.counts[res.status] = self.counts.get(res.status, 0) + 1
        elapsed = max(self.clock() - self.start, 1e-9)
        rate = done / elapsed
        eta = (total - done) / rate if rate > 0 else 0.0
        t = res.timings.get("total_s", 0.0)
        note = (
            f" ({res.reason})" if res.reason and res.status in ("skipped", "error", "not_applicable", "timeout") else ""
        )
        engine = f" [{res.engine}]" if res.engine else ""
        if res.nvidia is not None:
            note += f"; SimReady {res.nvidia['verdict']['status'].upper().replace('_', ' ')}"
        c = self.counts
        tally = f"{c.get('pass', 0)} pass, {c.get('fail', 0)} fail, {c.get('error', 0) + c.get('timeout', 0)} error"
        print(
            f"[{done}/{total}] {res.asset}{engine}: {res.status.upper()}, {len(res.followers)} follower(s), "
            f"{t:.2f} s{note}; so far {tally}; {rate * 60:.1f}/min, ETA {_duration(eta)}",
            file=sys.stderr,
            flush=True,
        )


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


def _simready_progress(stage, result) -> None:
    print(f"[SimReady] {stage.asset} [{stage.engine}]: {result.status.upper()}", file=sys.stderr, flush=True)


def _engines(text: str, device: str) -> list[str]:
    """The engine labels asked for; ``--device`` picks the warp engine's device."""
    out = []
    for name in (e.strip() for e in text.split(",")):
        if not name:
            continue
        out.append(f"warp:{device}" if name == "warp" and device and device != "cpu" else name)
    return list(dict.fromkeys(out))


def _outputs(targets: dict) -> list[str]:
    return [v for v in targets.values() if v and v != "-"]


def _refuse_inputs(outputs, inputs) -> None:
    """``MimicInputError`` when an output would replace an input (``atomic_write.check_output``:
    symlinks and hard links followed, devices and folders refused)."""
    from ..atomic_write import check_output

    for out in outputs:
        check_output(out, inputs, what="report")


def _input_files(paths, config_path) -> list:
    """Every file the run reads: the stages, the layers they compose in, the config files
    (the one ``--config`` names and the one ``MIMIC_EXT_FET022_CONFIG`` names)."""
    from .batch import _dependencies
    from .config import config_files

    files = list(paths) + config_files(config_path)
    for p in paths:
        files.extend(_dependencies(p))
    return files


def _source_comparison(paths, source: str):
    """The stage's relations against ``source``'s (before the sweep: a bad file stops it at once)."""
    from ..importers.opening import open_stage_or_robot
    from ..importers.source_check import compare_with_source

    if len(paths) != 1:
        raise MimicInputError(f"--source compares one stage with its robot description; {len(paths)} stages given")
    opened = open_stage_or_robot(paths[0])
    return compare_with_source(opened.stage, source, str(paths[0]))


def _error_lines(stages, several_engines: bool) -> list[str]:
    """One ``mimic-ext: error:`` line per stage that could not be swept; a reason that names no
    stage and is the same on several (an engine that cannot load where it runs) once, with the
    stages it stopped."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for st in stages:
        if st.status == "error":
            reason = st.reason or "could not be swept"
            tag = f" [{st.engine}]" if several_engines else ""
            own = st.asset if st.asset in reason else ""  # a reason naming its stage stays its own
            grouped.setdefault((reason, tag, own), []).append(st.asset)
    lines = []
    for (reason, tag, own), assets in grouped.items():
        if len(assets) == 1:
            line = f"{'' if own else assets[0] + ': '}{reason}{tag}"
        else:
            named = ", ".join(assets[:3]) + (f" and {len(assets) - 3} more" if len(assets) > 3 else "")
            line = f"{reason}{tag} ({len(assets)} stages: {named})"
        lines.append(f"mimic-ext: error: {line}".replace("\n", " "))
    return lines


def cmd_sweep(args) -> int:
    from pathlib import Path

    from ..atomic_write import write_texts_atomically
    from ..input_files import check_utf8_name
    from . import reports  # each writer is imported on first use: one not asked for never loads
    from .batch import collect_stages, sweep_paths
    from .config import load_config
    from .engines import check_engine
    from .reports.console import format_console

    config = load_config(
        args.config,
        gear_ratio_tolerance=args.tolerance,
        tolerance_mode=args.tolerance_mode,
        sweep_seconds=args.sweep_seconds,
        settle_seconds=args.settle_seconds,
        physics_fps=args.physics_fps,
    )
    engines = _engines(args.engine, args.device)
    if not engines:
        raise MimicInputError("--engine names no engine")
    for e in engines:
        check_engine(e)  # an unknown engine or a missing extra is one line, before any work
    targets = {"json": args.json, "junit": args.junit, "html": args.html}
    results_dir = args.result_json
    if args.resume:
        if args.report and Path(args.report).resolve() != Path(args.resume).resolve():
            raise MimicInputError("--resume RUN_DIR is the run folder: leave out --report, or name the same folder")
        args.report = args.resume
    if args.report:
        for kind, name in REPORT_NAMES.items():
            targets[kind] = targets[kind] or str(Path(args.report) / name)
        results_dir = results_dir or str(Path(args.report) / RESULT_DIR)
    if sum(1 for v in targets.values() if v == "-") > 1:
        raise MimicInputError("only one of --json, --junit, --html can be - (stdout)")
    to_stdout = next((k for k, v in targets.items() if v == "-"), None)
    paths = collect_stages(args.stages, recursive=args.recursive)
    for path in paths:  # a folder's file whose name is not UTF-8: one line before any work
        check_utf8_name(str(path))
    inputs = _input_files(paths, args.config) if (_outputs(targets) or results_dir) else []
    _refuse_inputs(_outputs(targets), inputs)
    if args.executor != "dask" and args.scheduler:
        raise MimicInputError("--scheduler needs --executor dask")
    comparison = _source_comparison(paths, args.source) if args.source else None
    show = None if args.quiet or len(paths) * len(engines) < 2 else Progress()
    nvidia = None
    if not args.no_simready:
        from ..simready.verdicts import UnitPhase

        nvidia = UnitPhase()  # NVIDIA's phase in each unit of work, stored with it (resumable)
    run_store = None
    if args.report:
        import os

        from .store import RunStore

        # opened here so that it is finished once, with NVIDIA's verdicts (sweep_paths leaves it open)
        run_store = RunStore.for_run(args.report, [os.path.abspath(p) for p in paths], bool(args.resume))
    run = sweep_paths(
        paths,
        config,
        engine=engines,
        jobs=args.jobs,
        progress=show,
        executor=args.executor,
        scheduler=args.scheduler,
        store=run_store,
        resume=bool(args.resume),
        timeout=args.timeout,
        isolate_alone=True,  # physx, newton or mujoco alone: a native crash still leaves a report
        nvidia=nvidia,
    )
    run.strict = bool(args.strict)
    headline_results: dict = {}
    if nvidia is not None:
        from ..simready.verdicts import add_verdicts

        # collects the verdicts the units stored (runs the phase only where a unit did not)
        headline_results = add_verdicts(run, progress=None if show is None else _simready_progress)
    if run_store is not None:
        from .result import finite_or_none

        # the manifest's end, the plan, the run summary and Kit's result.json (NVIDIA's verdict) where
        # the store's differs: each written once
        run_store.finish(run, headline=headline_results, simready=finite_or_none(run.simready), strict=run.strict)
    console = sys.stderr if to_stdout else sys.stdout
    if comparison is not None:
        from .source_verdict import apply_source_check

        apply_source_check(run.stages, comparison)
        print(comparison.table() + "\n" + comparison.summary() + "\n", file=console)
    print(format_console(run), file=console)
    for line in _error_lines(run.stages, several_engines=len(engines) > 1):
        print(line, file=sys.stderr)
    # every report is made first and written together: one that cannot be written leaves none
    files: list[tuple[str, str]] = []
    if results_dir:
        from .reports.result_json import format_result_json

        planned = reports.result_paths(run, results_dir)
        _refuse_inputs([str(p) for _, p in planned], inputs)
        files += [(str(path), format_result_json(stage)) for stage, path in planned]
    summary_files: dict = {}
    if args.report:
        # the run folder's summaries are built from the stored results (what `mimic-ext report`
        # rebuilds), streaming, by the store; only a "-" (stdout) target is formatted here
        summary_files = {k: (None if v == "-" else v) for k, v in targets.items()}
        targets = {k: (v if v == "-" else None) for k, v in targets.items()}
    formats = {
        "json": lambda: reports.format_json(run, samples=not args.no_samples),
        "junit": lambda: reports.format_junit(run),
        "html": lambda: reports.format_html(run),
    }
    for kind, make in formats.items():
        if targets[kind] == "-":
            sys.stdout.write(make())
        elif targets[kind]:
            files.append((targets[kind], make()))
    written: list = list(write_texts_atomically(files, make_parent=True))
    if args.report:
        from .reports.catalogue import write_summaries

        written += write_summaries(args.report, summary_files["json"], summary_files["junit"], summary_files["html"])[
            "written"
        ]
        written.append(Path(args.report) / "results")
    for path in written:
        print(f"wrote {path}", file=console)
    code = run.decided_exit_code
    if comparison is not None and comparison.mismatches:
        # asked for explicitly: a stage that differs from its source fails whoever's verdict decides
        code = max(code, 1)
    return code


def cmd_report(args) -> int:
    from .reports.catalogue import write_summaries

    out = write_summaries(args.run_dir)
    s = out["summary"]
    print(
        f"FET022 mimic_joint: {s.get('stages', 0)} stage run(s): "
        + ", ".join(
            f"{s.get('stages_' + k, 0)} {k.replace('_', ' ')}"
            for k in ("pass", "fail", "error", "timeout", "skipped", "not_applicable")
        )
        + (f"; {len(out['unjudged'])} unjudged (sweep --resume {args.run_dir} sweeps them)" if out["unjudged"] else "")
    )
    for path in out["written"]:
        print(f"wrote {path}")
    return int(out["exit_code"])
