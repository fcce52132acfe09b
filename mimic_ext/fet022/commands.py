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
    "the reason is given), 1 a follower failed, 2 a stage could not be swept.",
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
        help=f"write all reports into DIR ({', '.join(REPORT_NAMES.values())}, and the harness's "
        f"result.json per stage under {RESULT_DIR}/)",
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
        help="worker processes (default: a pool only when it pays off; 1: never)",
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
        help="Dask scheduler address for --executor dask (workers must see the stage files at the same paths)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no per-stage progress lines on stderr")
    p.set_defaults(func=cmd_sweep)


def _progress(done: int, total: int, res) -> None:
    t = res.timings.get("total_s", 0.0)
    note = f" ({res.reason})" if res.reason and res.status in ("skipped", "error", "not_applicable") else ""
    engine = f" [{res.engine}]" if res.engine else ""
    print(
        f"[{done}/{total}] {res.asset}{engine}: {res.status.upper()}, {len(res.followers)} follower(s), "
        f"{t:.2f} s{note}",
        file=sys.stderr,
        flush=True,
    )


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


def cmd_sweep(args) -> int:
    from pathlib import Path

    from ..atomic_write import write_texts_atomically
    from ..input_files import check_utf8_name
    from .batch import collect_stages, sweep_paths
    from .config import load_config
    from .engines import check_engine
    from .reports import format_console, format_html, format_json, format_junit, result_paths
    from .reports.result_json import format_result_json

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
    show = None if args.quiet or len(paths) * len(engines) < 2 else _progress
    run = sweep_paths(
        paths, config, engine=engines, jobs=args.jobs, progress=show, executor=args.executor, scheduler=args.scheduler
    )
    console = sys.stderr if to_stdout else sys.stdout
    print(format_console(run), file=console)
    for st in run.stages:
        if st.status == "error":
            reason = st.reason or "could not be swept"
            where = "" if st.asset in reason else f"{st.asset}: "
            tag = f" [{st.engine}]" if len(engines) > 1 else ""
            print(f"mimic-ext: error: {where}{reason}{tag}".replace("\n", " "), file=sys.stderr)
    # every report is made first and written together: one that cannot be written leaves none
    files: list[tuple[str, str]] = []
    if results_dir:
        planned = result_paths(run, results_dir)
        _refuse_inputs([str(p) for _, p in planned], inputs)
        files += [(str(path), format_result_json(stage)) for stage, path in planned]
    formats = {
        "json": lambda: format_json(run, samples=not args.no_samples),
        "junit": lambda: format_junit(run),
        "html": lambda: format_html(run),
    }
    for kind, make in formats.items():
        if targets[kind] == "-":
            sys.stdout.write(make())
        elif targets[kind]:
            files.append((targets[kind], make()))
    for path in write_texts_atomically(files, make_parent=True):
        print(f"wrote {path}", file=console)
    return run.exit_code
