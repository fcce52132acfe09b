"""The ``mimic-ext`` command: list, validate and edit mimic relations; other parts add theirs.

Each part contributes sub-commands through ``<part>/commands.py:add_commands``; those
modules import only the standard library at top level so that ``--help`` is instant.
User errors (``MimicInputError``) become one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from typing import Sequence

from .errors import MimicInputError

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2

#: Modules that add sub-commands (their absence is tolerated so parts can land one by one).
COMMAND_MODULES = ("mimic_ext.importers.commands", "mimic_ext.fet022.commands")

CONVENTIONS = (
    "conventions: canonical q_f = multiplier*q_ref + offset (radians or metres); "
    "PhysX q_f + gearing*q_ref + offset = 0 (offset in degrees for a revolute follower, stage units "
    "for a prismatic one), so multiplier = -gearing; Newton q_f = coef0 + coef1*q_ref (USD units)."
)


def _open(path: str):
    from .schema import open_stage

    opened = open_stage(path)
    summary = opened.composition_summary()
    if summary:
        print(f"mimic-ext: warning: {summary}", file=sys.stderr)
    return opened


def _authored_text(rel) -> str:
    a = rel.authored or {}
    if rel.schema == "physx":
        return (f"PhysxMimicJointAPI:{rel.instance} gearing={a.get('gearing', float('nan')):g} "
                f"offset={a.get('offset', float('nan')):g}")
    return (f"NewtonMimicAPI coef0={a.get('newton:mimicCoef0', float('nan')):g} "
            f"coef1={a.get('newton:mimicCoef1', float('nan')):g}"
            + ("" if rel.enabled else " (disabled)"))


def _json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


def relation_record(rel) -> dict:
    """One relation as plain JSON data: canonical fields plus the authored values."""
    return {
        "follower": rel.follower, "leader": rel.leader, "schema": rel.schema, "instance": rel.instance,
        "reference_axis": rel.reference_axis, "multiplier": _json_value(rel.multiplier),
        "offset": _json_value(rel.offset), "natural_frequency": _json_value(rel.natural_frequency),
        "damping_ratio": _json_value(rel.damping_ratio), "compliant": rel.compliant, "enabled": rel.enabled,
        "authored": {k: _json_value(v) for k, v in (rel.authored or {}).items()},
    }


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def cmd_list(args) -> int:
    from .schema import read_relations

    opened = _open(args.stage)
    rels = read_relations(opened.stage)
    if args.json:
        print(json.dumps({"stage": str(opened.path), "relations": [relation_record(r) for r in rels]}, indent=2))
        return EXIT_OK
    if not rels:
        print(f"{opened.path}: no mimic relations")
        return EXIT_OK
    rows = [[r.follower, r.leader or "(none)", _authored_text(r), r.describe() + (" (compliant)" if r.compliant else "")]
            for r in rels]
    print(_table(rows, ["follower", "leader", "as authored", "canonical (rad/m)"]))
    return EXIT_OK


def cmd_validate(args) -> int:
    opened = _open(args.stage)
    from .schema.validation import validate

    findings = validate(opened.stage)
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity == "warning"]
    if args.json:
        print(json.dumps({
            "stage": str(opened.path),
            "composition_errors": len(opened.composition_errors),
            "findings": [{"severity": f.severity, "code": f.code, "path": f.path, "message": f.message}
                         for f in findings],
        }, indent=2))
    else:
        for f in findings:
            print(f"{f.severity.upper():7s} {f.code:32s} {f.path}: {f.message}")
        print(f"{opened.path}: {len(errors)} error(s), {len(warnings)} warning(s), "
              f"{len(findings) - len(errors) - len(warnings)} info")
    if errors or (args.strict and warnings):
        return EXIT_FAIL
    return EXIT_OK


def _save(opened, out) -> None:
    from .schema import save_stage_atomically

    target = save_stage_atomically(opened.stage, out or opened.path)
    print(f"wrote {target}")


def cmd_set(args) -> int:
    from pxr import Sdf

    from .schema import MimicRelation, set_relation
    from .schema.joints import unit_scale
    from .schema.relation import physx_to_canonical

    opened = _open(args.stage)
    stage = opened.stage
    prim = stage.GetPrimAtPath(args.follower) if Sdf.Path.IsValidPathString(args.follower) else None
    if not prim:
        raise MimicInputError(f"{opened.path}: no prim at {args.follower}")
    if not Sdf.Path.IsValidPathString(args.leader) or not stage.GetPrimAtPath(args.leader):
        raise MimicInputError(f"{opened.path}: no reference joint prim at {args.leader}")
    for name in ("multiplier", "gearing", "offset", "natural_frequency", "damping_ratio"):
        value = getattr(args, name)
        if value is not None and not math.isfinite(value):
            raise MimicInputError(f"--{name.replace('_', '-')} must be a finite number, got {value}")
    if (args.multiplier if args.multiplier is not None else args.gearing) == 0:
        raise MimicInputError("a gear ratio of 0 does not couple the joints: give a nonzero --multiplier/--gearing")
    offset = args.offset or 0.0
    if args.gearing is not None:
        s_f = unit_scale(prim) or 1.0
        s_l = unit_scale(stage.GetPrimAtPath(args.leader), args.reference_axis) or s_f
        multiplier, offset = physx_to_canonical(args.gearing, offset, s_f, s_l)
    else:
        multiplier = args.multiplier
    rel = MimicRelation(
        follower=args.follower, leader=args.leader, multiplier=multiplier, offset=offset,
        instance=args.instance if args.schema == "physx" else None, reference_axis=args.reference_axis,
        natural_frequency=args.natural_frequency or 0.0, damping_ratio=args.damping_ratio or 0.0,
        schema=args.schema)
    written = set_relation(stage, rel)
    _save(opened, args.output)
    print(f"{written.follower}: {_authored_text(written)}  ({written.describe()})")
    return EXIT_OK


def cmd_remove(args) -> int:
    from .schema import remove_relation

    opened = _open(args.stage)
    removed = remove_relation(opened.stage, args.follower, instance=args.instance, schema=args.schema)
    _save(opened, args.output)
    for rel in removed:
        print(f"removed {rel.follower} {rel.schema}{':' + rel.instance if rel.instance else ''}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="mimic-ext", description="Mimic joints in USD stages. " + CONVENTIONS)
    parser.add_argument("--version", action="version", version=f"mimic-ext {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list", help="list the mimic relations of a stage",
                       description="List every mimic relation, as authored and canonical. " + CONVENTIONS)
    p.add_argument("stage", help="USD file (.usd/.usda/.usdc/.usdz)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("validate", help="check mimic relations (exit 0 clean, 1 errors)",
                       description="Validate every mimic relation of a stage. Exit 0 when clean, 1 on errors "
                                   "(or warnings with --strict), 2 when the stage cannot be read. " + CONVENTIONS)
    p.add_argument("stage", help="USD file")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("set", help="add or replace a mimic relation (saved atomically)",
                       description="Add or replace the mimic relation of FOLLOWER. The file is rewritten through a "
                                   "temporary file; on failure the original is untouched. " + CONVENTIONS)
    p.add_argument("stage", help="USD file to edit (its root layer is saved)")
    p.add_argument("follower", help="follower joint prim path, e.g. /Robot/Joints/finger2")
    p.add_argument("--leader", required=True, help="reference (leader) joint prim path")
    ratio = p.add_mutually_exclusive_group(required=True)
    ratio.add_argument("--multiplier", type=float,
                       help="canonical: q_f = multiplier*q_ref + offset; --offset then in radians or metres")
    ratio.add_argument("--gearing", type=float,
                       help="PhysX: q_f + gearing*q_ref + offset = 0; --offset then in degrees (revolute "
                            "follower) or stage units (prismatic)")
    p.add_argument("--offset", type=float, default=0.0,
                   help="offset in the convention of --multiplier (rad/m) or --gearing (deg/stage units); default 0")
    p.add_argument("--instance", default="rotX", help="PhysxMimicJointAPI instance: rotX, rotY or rotZ (default rotX)")
    p.add_argument("--reference-axis", default="rotX", choices=("rotX", "rotY", "rotZ"),
                   help="DOF of a multi-DOF reference joint (ignored for revolute/prismatic references)")
    p.add_argument("--natural-frequency", type=float, help="compliance natural frequency (1/s); hard when unset or <= 0")
    p.add_argument("--damping-ratio", type=float, help="compliance damping ratio; hard when unset or <= 0")
    p.add_argument("--schema", choices=("physx", "newton"), default="physx",
                   help="author PhysxMimicJointAPI (default) or NewtonMimicAPI (q_f = coef0 + coef1*q_ref, USD units)")
    p.add_argument("-o", "--output", help="write here instead of editing STAGE in place")
    p.set_defaults(func=cmd_set)

    p = sub.add_parser("remove", help="remove a mimic relation (saved atomically)",
                       description="Remove the mimic relation(s) of FOLLOWER and their attributes. " + CONVENTIONS)
    p.add_argument("stage", help="USD file to edit")
    p.add_argument("follower", help="follower joint prim path")
    p.add_argument("--instance", help="only this PhysxMimicJointAPI instance (default: all)")
    p.add_argument("--schema", choices=("physx", "newton"), help="only this schema (default: both)")
    p.add_argument("-o", "--output", help="write here instead of editing STAGE in place")
    p.set_defaults(func=cmd_remove)

    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except MimicInputError as exc:
        print(f"mimic-ext: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("mimic-ext: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
