"""``mimic-ext sweep``: FET022 mimic_joint on stages and folders, with reports.

Only the standard library is imported at module level, so ``mimic-ext --help`` stays
fast; USD, Warp and the solver load when the command runs.
"""

from __future__ import annotations

import argparse
import sys

CONVENTION_LINES = (
    "Units: |gearing| and the measured ratio are in the authored USD units (degrees, stage units); "
    "max error is SI (rad or m).",
    "Signs: PhysX q_f + gearing*q_ref + offset = 0, so a follower moving with its reference has gearing < 0; "
    "Newton q_f = coef0 + coef1*q_ref.",
    "Exit code: 0 every stage passed or was skipped, 1 a follower failed, 2 a stage could not be swept.",
)

REPORT_NAMES = {"json": "fet022_report.json", "junit": "fet022_junit.xml", "html": "fet022_report.html"}


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
        "sweep", help="FET022 mimic_joint: sweep reference joints, check follower motion ratios",
        description="Run the FET022 'mimic_joint' conformance test: drive each reference joint through its range "
                    "and check that every mimic follower moves by |gearing| times as much (within the tolerance). "
                    "The stage files are only read.\n\n" + "\n".join(CONVENTION_LINES),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stages", nargs="+", metavar="STAGE_OR_FOLDER",
                   help="USD files, or folders whose USD files are all swept (one level deep)")
    p.add_argument("--recursive", action="store_true", help="also sweep USD files in sub-folders")
    p.add_argument("--config", metavar="FILE", help="YAML file of settings over config/fet022.yaml's defaults")
    p.add_argument("--tolerance", type=_positive, metavar="X",
                   help="gear_ratio_tolerance: allowed |ratio - |gearing||, relative to |gearing| by default (0.10)")
    p.add_argument("--tolerance-mode", choices=("relative", "absolute"),
                   help="relative: error/|gearing| <= X; absolute: error <= X in the authored units")
    p.add_argument("--sweep-seconds", type=_positive, metavar="S", help="duration of the lo->hi->lo sweep (s)")
    p.add_argument("--settle-seconds", type=float, metavar="S", help="hold at the start pose before sampling (s)")
    p.add_argument("--physics-fps", type=_positive, metavar="HZ", help="solver steps per second")
    p.add_argument("--report", metavar="DIR",
                   help=f"write all reports into DIR ({', '.join(REPORT_NAMES.values())})")
    p.add_argument("--json", metavar="FILE", help="write the JSON report (schema: mimic_ext/fet022/report.schema.json)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (one testcase per follower)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report with one plot per follower")
    p.add_argument("--no-samples", action="store_true", help="leave the sampled displacements out of the JSON")
    p.add_argument("--jobs", "-j", type=_jobs, metavar="N", help="worker processes (default: one per CPU)")
    p.add_argument("--engine", default="warp", help="physics engine (default: warp, mimic_ext's own solver)")
    p.add_argument("--device", default="cpu", help="Warp device for the warp engine (cpu, cuda:0, ...)")
    p.add_argument("--quiet", "-q", action="store_true", help="no per-stage progress lines on stderr")
    p.set_defaults(func=cmd_sweep)


def _progress(done: int, total: int, res) -> None:
    t = res.timings.get("total_s", 0.0)
    note = f" ({res.reason})" if res.reason and res.status in ("skipped", "error") else ""
    print(f"[{done}/{total}] {res.asset}: {res.status.upper()}, {len(res.followers)} follower(s), "
          f"{t:.2f} s{note}", file=sys.stderr, flush=True)


def cmd_sweep(args) -> int:
    from pathlib import Path

    from .batch import collect_stages, sweep_paths
    from .config import load_config
    from .reports import format_console, write_html, write_json, write_junit

    config = load_config(args.config, gear_ratio_tolerance=args.tolerance, tolerance_mode=args.tolerance_mode,
                         sweep_seconds=args.sweep_seconds, settle_seconds=args.settle_seconds,
                         physics_fps=args.physics_fps)
    from .engines import check_engine_name

    check_engine_name(args.engine)   # an unknown engine is an input error, before any work
    paths = collect_stages(args.stages, recursive=args.recursive)
    show = None if args.quiet or len(paths) < 2 else _progress
    run = sweep_paths(paths, config, engine=args.engine, engine_options={"device": args.device},
                      jobs=args.jobs, progress=show)
    print(format_console(run))
    targets = {"json": args.json, "junit": args.junit, "html": args.html}
    if args.report:
        for kind, name in REPORT_NAMES.items():
            targets[kind] = targets[kind] or str(Path(args.report) / name)
    written = []
    if targets["json"]:
        written.append(write_json(run, targets["json"], samples=not args.no_samples))
    if targets["junit"]:
        written.append(write_junit(run, targets["junit"]))
    if targets["html"]:
        written.append(write_html(run, targets["html"]))
    for path in written:
        print(f"wrote {path}")
    return run.exit_code
