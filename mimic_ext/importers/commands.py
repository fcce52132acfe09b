"""``mimic-ext import`` and ``mimic-ext export``: the importers on the command line.

Only the standard library is imported at module level (``mimic-ext --help`` stays fast);
pxr and the importers load inside the handlers.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from ..command_stages import open_read_stage
from ..command_stages import warn as _warn

UNITS = (
    "units: the USD stage is in metres and kilograms (metersPerUnit = kilogramsPerUnit = 1); "
    "revolute limits, targets and drive gains in degrees."
)
SIGNS = (
    "signs: URDF q_f = multiplier*q_ref + offset (rad or m); MJCF q1 - ref1 = a0 + a1 (q2 - ref2), "
    "written as PhysX q_f + gearing*q_ref + offset = 0 with gearing = -multiplier, offset in degrees "
    "(revolute follower) or metres."
)


#: ``schema.hosts.TARGETS``, spelled here: this module imports only the standard library at load
TARGETS = ("isaacsim-6", "isaacsim-5", "newton", "mujoco")


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
    from ..schema.hosts import import_note
    from ..schema.stage_io import WRITABLE_USD_EXTENSIONS
    from .importing import import_robot

    check_output(args.output, [args.robot], WRITABLE_USD_EXTENSIONS, what="imported stage")
    result = import_robot(
        args.robot,
        out=args.output,
        schema=args.schema,
        target=args.target,
        drive_frequency=args.drive_frequency,
        drive_damping_ratio=args.drive_damping_ratio,
    )
    _warn(result.warnings)
    # which hosts couple what was written, on every import (Isaac Sim 5.x reads only PhysxMimicJointAPI)
    print(f"mimic-ext: note: {import_note(result.schema, args.target)}", file=sys.stderr)
    summary = (
        f"{result.out}: {len(result.body_paths)} bodies, {len(result.joint_paths)} joints, "
        f"{len(result.relations)} mimic relation(s) ({result.schema}) from {result.format} {result.source}"
    )
    if len(result.files) > 1:
        summary += f"; meshes in {', '.join(str(p) for p in result.files[:-1])}"
    try:
        from ..schema.validation import validate
    except ImportError:
        findings = None
    else:
        findings = validate(result.stage, target=args.target)
    if findings is not None:
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
    result = export_urdf(opened.stage, args.output, robot_path=args.robot, keep_leaders=args.keep_leaders)
    _warn(result.warnings)
    mimics = result.text.count("<mimic ")
    print(f"{result.out}: {len(result.links)} links, {len(result.joints)} joints, {mimics} <mimic> tag(s)")
    return 0


def cmd_diff(args) -> int:
    import json

    from .source_check import compare_with_source

    opened = open_read_stage(args.stage, robots=True)
    comparison = compare_with_source(opened.stage, args.robot, str(args.stage))
    if args.json:
        print(json.dumps(comparison.record(), indent=2))
    else:
        print(comparison.table())
        print(comparison.summary())
    return 1 if comparison.mismatches else 0


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
        default=None,
        metavar="{newton,physx}",
        help="the mimic schema to author, one per follower (default: the one --target reads; newton, which "
        "PhysX in Isaac Sim >= 6, ovphysx, Newton and mimic-ext read; physx for PhysX builds that read only "
        "PhysxMimicJointAPI)",
    )
    p.add_argument(
        "--target",
        choices=TARGETS,
        default=None,
        help="the host the stage is for: isaacsim-6 (default: NewtonMimicAPI, also read by ovphysx, Newton), "
        "isaacsim-5 (PhysxMimicJointAPI: omni.physx up to Isaac Sim 5.1 reads only that), newton, mujoco "
        "(Newton's MuJoCo solver); the import then validates for that host. Units are the same for all "
        "(degrees for revolute joints)",
    )
    p.add_argument(
        "--drive-frequency",
        type=float,
        default=25.0,
        metavar="F",
        help="natural frequency of the position drive written on joints whose source has no gains "
        "(stiffness I F^2 from the inertia I the joint moves; default 25, Isaac Sim's URDF importer's)",
    )
    p.add_argument(
        "--drive-damping-ratio",
        type=float,
        default=0.005,
        metavar="Z",
        help="damping ratio of that drive (damping 2 Z F I; default 0.005, Isaac Sim's URDF importer's)",
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
    e.add_argument(
        "--keep-leaders",
        action="store_true",
        help="write every relation from the source's leader, also where it lies below a joint it drives "
        "(MuJoCo and Newton load that, Pinocchio refuses it; by default such a relation is inverted, "
        "with a warning naming it)",
    )
    e.set_defaults(func=cmd_export)

    d = subparsers.add_parser(
        "diff",
        help="compare a stage's mimic relations with its URDF/MJCF source (exit 1 on a difference)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare every mimic relation of STAGE with the robot description it was made from:\n"
        "follower, leader, multiplier, offset and joint kinds, each follower composed down its chain\n"
        "to the chain's root, canonical q_f = multiplier*q_leader + offset in rad/m. Joints are\n"
        "matched by name. Exit 0 when they agree, 1 on any difference (a table says which), 2 on\n"
        "bad input. Every engine honours what the stage authors, so only this catches an offset\n"
        "off or a flipped sign written into the USD.",
    )
    d.add_argument("stage", metavar="STAGE", help="USD stage (.usd, .usda, .usdc)")
    d.add_argument("robot", metavar="ROBOT", help="the .urdf or MJCF .xml file it was made from")
    d.add_argument("--json", action="store_true", help="print the comparison as JSON")
    d.set_defaults(func=cmd_diff)
