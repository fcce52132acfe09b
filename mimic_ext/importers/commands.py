"""``mimic-ext import`` and ``mimic-ext export``: the importers on the command line.

Only the standard library is imported at module level (``mimic-ext --help`` stays fast);
pxr and the importers load inside the handlers.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

UNITS = (
    "units: the USD stage is in metres and kilograms (metersPerUnit = kilogramsPerUnit = 1); "
    "revolute limits, targets and drive gains in degrees."
)
SIGNS = (
    "signs: URDF q_f = multiplier*q_ref + offset (rad or m); MJCF q1 - ref1 = a0 + a1 (q2 - ref2), "
    "written as PhysX q_f + gearing*q_ref + offset = 0 with gearing = -multiplier, offset in degrees "
    "(revolute follower) or metres."
)


def _warn(lines) -> None:
    for line in lines:
        print(f"mimic-ext: warning: {line}", file=sys.stderr)


def _schema_choice(value: str) -> str:
    """``--schema``: newton or physx; ``both`` is refused with the reason (PhysX would apply two constraints)."""
    if value == "both":
        from .importing import BOTH_REFUSED

        raise argparse.ArgumentTypeError(BOTH_REFUSED)
    if value not in ("newton", "physx"):
        raise argparse.ArgumentTypeError(f"invalid choice: '{value}' (choose from newton, physx)")
    return value


def cmd_import(args) -> int:
    from ..atomic_write import check_output
    from ..schema.stage_io import WRITABLE_USD_EXTENSIONS
    from .importing import import_robot

    check_output(args.output, [args.robot], WRITABLE_USD_EXTENSIONS, what="imported stage")
    result = import_robot(args.robot, out=args.output, schema=args.schema)
    _warn(result.warnings)
    summary = (
        f"{result.out}: {len(result.body_paths)} bodies, {len(result.joint_paths)} joints, "
        f"{len(result.relations)} mimic relation(s) ({args.schema}) from {result.format} {result.source}"
    )
    if len(result.files) > 1:
        summary += f"; meshes in {', '.join(str(p) for p in result.files[:-1])}"
    try:
        from ..schema.validation import validate
    except ImportError:
        validate = None
    if validate is not None:
        findings = validate(result.stage)
        errors = sum(f.severity == "error" for f in findings)
        warnings = sum(f.severity == "warning" for f in findings)
        summary += f"; validation: {errors} error(s), {warnings} warning(s)"
        # the counted findings themselves, not only their number (``mimic-ext validate`` format)
        _warn(f"validation {f.severity} {f.code} {f.path}: {f.message}" for f in findings if f.severity != "info")
    print(summary)
    return 0


def cmd_export(args) -> int:
    from ..atomic_write import check_output
    from ..schema.stage_io import open_stage
    from .urdf_export import export_urdf

    check_output(
        args.output, [args.stage], (".urdf",), what="URDF", links=False
    )  # before the work, then with every layer
    opened = open_stage(args.stage)
    check_output(args.output, opened.files, (".urdf",), what="URDF")
    summary = opened.composition_summary()
    if summary:
        _warn([summary])
    result = export_urdf(opened.stage, args.output, robot_path=args.robot)
    _warn(result.warnings)
    mimics = result.text.count("<mimic ")
    print(f"{result.out}: {len(result.links)} links, {len(result.joints)} joints, {mimics} <mimic> tag(s)")
    return 0


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "import",
        help="URDF or MJCF robot -> simulation-ready USD with its mimic relations",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Import a URDF (<mimic>) or MJCF (<equality><joint>) robot into a USD stage: rigid bodies\n"
        "with mass, joints with limits and drives, an articulation root, a physics scene and\n"
        "NewtonMimicAPI (default) or PhysxMimicJointAPI relations. Exit 2 on bad input (nothing\n"
        "written).\n\n" + textwrap.fill(UNITS, 100) + "\n" + textwrap.fill(SIGNS, 100),
    )
    p.add_argument("robot", metavar="ROBOT", help="a .urdf file or an MJCF .xml file")
    p.add_argument("-o", "--output", required=True, metavar="OUT.usda", help="stage to write (atomically)")
    p.add_argument(
        "--schema",
        type=_schema_choice,
        default="newton",
        metavar="{newton,physx}",
        help="the mimic schema to author, one per follower (default: newton, which PhysX, Newton "
        "and mimic-ext read; physx for PhysX builds that read only PhysxMimicJointAPI)",
    )
    p.set_defaults(func=cmd_import)

    e = subparsers.add_parser(
        "export",
        help="USD articulation -> URDF with <mimic> tags",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write a stage's articulation as URDF: links with inertia and primitive shapes, joints\n"
        "with limits and <mimic> tags. Exit 2 on bad input (nothing written).\n\n"
        "units: URDF limits and offsets in radians (revolute) or metres (prismatic), from USD degrees.\n"
        + textwrap.fill(
            "signs: <mimic> means q_f = multiplier*q_ref + offset; from PhysX q_f + gearing*q_ref + offset = 0, "
            "multiplier = -gearing.",
            100,
        ),
    )
    e.add_argument("stage", metavar="STAGE", help="USD stage (.usd, .usda, .usdc)")
    e.add_argument("-o", "--output", required=True, metavar="ROBOT.urdf", help="URDF to write (atomically)")
    e.add_argument(
        "--robot",
        "--root",
        dest="robot",
        metavar="PRIM",
        help="articulation prim to export (default: the default prim, else the stage's only "
        "articulation; with several and no default prim, required)",
    )
    e.set_defaults(func=cmd_export)
