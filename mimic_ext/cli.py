"""The ``mimic-ext`` command: list, validate and edit mimic relations; other parts add theirs.

Each part contributes sub-commands through ``<part>/commands.py:add_commands``; those
modules import only the standard library at top level so that ``--help`` is instant.
User errors (``MimicInputError``, and argparse's) become one line on stderr and exit
code 2. Edits are checked by the validator before anything is written, take a lock on
the file for the read-modify-write, and never write over one of their inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from .arguments import float32_number
from .command_stages import open_read_stage as _open
from .command_stages import warn as _warn
from .errors import MimicInputError

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2

#: Modules that add sub-commands, with the sub-commands each adds (so that a command line's
#: parser is built without importing the others); their absence is tolerated so parts can
#: land one by one.
COMMAND_MODULES = {
    "mimic_ext.importers.commands": ("import", "export", "diff"),
    "mimic_ext.fet022.commands": ("sweep", "report"),
}
#: the sub-commands this module adds itself
OWN_COMMANDS = ("list", "validate", "set", "remove", "convert")

#: the hosts ``validate --target`` and ``import --target`` know (``schema.hosts.HOSTS``; spelled here
#: because this module imports only the standard library at load)
HOST_TARGETS = ("isaacsim-6", "isaacsim-5", "newton", "mujoco")

CONVENTIONS = (
    "conventions: canonical q_f = multiplier*q_ref + offset (radians or metres); "
    "PhysX q_f + gearing*q_ref + offset = 0 (offset in degrees for a revolute follower, stage units "
    "for a prismatic one), so multiplier = -gearing; Newton q_f = coef0 + coef1*q_ref (USD units)."
)
#: the sub-commands that take no values in either convention point at the paragraph, said once
#: in ``mimic-ext --help`` (and in ``set``, whose flags are in those conventions)
SEE_CONVENTIONS = "Units and signs: mimic-ext --help, docs/conventions.md."


def _api_text(rel) -> str:
    return f"PhysxMimicJointAPI:{rel.instance}" if rel.schema == "physx" else "NewtonMimicAPI"


def _num(value) -> str:
    """An authored value for display: numbers with %g, anything else (a mistyped attribute) as written."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    return repr(value)


def _values_text(rel) -> str:
    a = rel.authored or {}
    if rel.schema == "physx":
        return f"gearing={_num(a.get('gearing', float('nan')))} offset={_num(a.get('offset', float('nan')))}"
    return (
        f"coef0={_num(a.get('newton:mimicCoef0', float('nan')))} "
        f"coef1={_num(a.get('newton:mimicCoef1', float('nan')))}" + ("" if rel.enabled else " (disabled)")
    )


def _authored_text(rel) -> str:
    return f"{_api_text(rel)} {_values_text(rel)}"


def _json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


def relation_record(rel) -> dict:
    """One relation as plain JSON data: canonical fields plus the authored values."""
    return {
        "follower": rel.follower,
        "leader": rel.leader,
        "schema": rel.schema,
        "instance": rel.instance,
        "reference_axis": rel.reference_axis,
        "multiplier": _json_value(rel.multiplier),
        "offset": _json_value(rel.offset),
        "natural_frequency": _json_value(rel.natural_frequency),
        "damping_ratio": _json_value(rel.damping_ratio),
        "compliant": rel.compliant,
        "enabled": rel.enabled,
        "authored": {k: _json_value(v) for k, v in (rel.authored or {}).items()},
    }


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def cmd_list(args) -> int:
    from .schema import read_relations

    opened = _open(args.stage, robots=True)
    rels = read_relations(opened.stage)
    if args.json:
        print(json.dumps({"stage": str(opened.path), "relations": [relation_record(r) for r in rels]}, indent=2))
        return EXIT_OK
    if not rels:
        print(f"{opened.path}: no mimic relations")
        return EXIT_OK
    rows = [
        [r.follower, r.leader or "(none)", _authored_text(r), r.describe() + (" (compliant)" if r.compliant else "")]
        for r in rels
    ]
    print(_table(rows, ["follower", "leader", "as authored", "canonical (rad/m)"]))
    return EXIT_OK


def cmd_validate(args) -> int:
    opened = _open(args.stage, robots=True)
    from .schema.tier_core_rules import unchecked_notice
    from .schema.validation import validate

    findings = validate(opened.stage, target=args.target)
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity == "warning"]
    notice = unchecked_notice()  # NVIDIA's DJ rules installed beside us but unable to check anything
    if args.json:
        print(
            json.dumps(
                {
                    "stage": str(opened.path),
                    "target": args.target,
                    "composition_errors": len(opened.composition_errors),
                    "findings": [
                        {"severity": f.severity, "code": f.code, "path": f.path, "message": f.message} for f in findings
                    ],
                    "notices": [notice] if notice else [],
                },
                indent=2,
            )
        )
    else:
        if notice:
            print(f"mimic-ext: note: {notice}", file=sys.stderr)
        for f in findings:
            print(f"{f.severity.upper():7s} {f.code:32s} {f.path}: {f.message}")
        print(
            f"{opened.path}: {len(errors)} error(s), {len(warnings)} warning(s), "
            f"{len(findings) - len(errors) - len(warnings)} info"
        )
    if errors or (args.strict and warnings):
        return EXIT_FAIL
    return EXIT_OK


@contextlib.contextmanager
def _editing(stage_path: str, output: str | None):
    """(opened stage, where to save) for a read-modify-write of ``stage_path``.

    In place (no ``-o``, or one naming the stage itself) the file is locked from the read to
    the write, so concurrent edits of one file all land; an ``-o`` that is another of the
    stage's files (a sublayer, a reference) or not a USD file is refused before any work.
    """
    from .atomic_write import check_output, locked_for_update, same_file
    from .schema.stage_io import WRITABLE_USD_EXTENSIONS

    in_place = output is None or same_file(output, stage_path)
    with locked_for_update(stage_path) if in_place else contextlib.nullcontext():
        opened = _open(stage_path)
        if in_place:
            yield opened, None
        else:
            check_output(output, opened.files, WRITABLE_USD_EXTENSIONS, what="edited stage")
            yield opened, output


def _save(opened, out) -> None:
    from .schema import save_stage_atomically

    if out is None:  # in place: a hand-written .usda's comments are lost; say so before writing
        from .usda_comments import dropped_comments_warning

        _warn([dropped_comments_warning(opened.path)])
    # in place, the user named this file (or a link to it) as the stage to edit: write through a link
    target = save_stage_atomically(opened.stage, out or opened.path, through_link=out is None)
    print(f"wrote {target}")


def _finding_keys(stage, body_facts: dict) -> set[tuple[str, str, str]]:
    """The stage's findings before an edit; ``body_facts`` carries what the edit cannot change
    (articulations, masses) to the validation after it."""
    from .schema.validation import validate

    return {(f.severity, f.code, f.path) for f in validate(stage, body_facts=body_facts)}


def _check_edit(
    opened, before: set[tuple[str, str, str]], written: Iterable[str] = (), body_facts: dict | None = None
) -> None:
    """Validate the edited (in-memory) stage: an error the edit introduced refuses it (one line,
    nothing written); a new warning is shown. Findings the stage already had elsewhere are not
    the edit's, but an error on a relation the edit writes (``written``: follower paths) refuses
    it even when the stage held it before: the tool does not write a relation it calls wrong."""
    from .schema.validation import validate

    written = set(written)
    findings = validate(opened.stage, body_facts=body_facts)
    new = [f for f in findings if (f.severity, f.code, f.path) not in before]
    errors = [f for f in findings if f.severity == "error" and (f in new or f.path in written)]
    if errors:
        f = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        kept = "" if f in new else " (the stage held this error before; the edit would write it again: fix it)"
        raise MimicInputError(f"{opened.path}: {f.path}: {f.message} ({f.code}){more}{kept}; nothing written")
    _warn(f"{f.path}: {f.message} ({f.code})" for f in new if f.severity == "warning")


def _same_relation(a, b) -> bool:
    """``a`` and ``b`` say the same thing: leader, reference DOF, ratio, offset and compliance
    (float32 storage and unit conversion: 1e-6 relative)."""
    close = lambda x, y: math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9)  # noqa: E731
    return (
        a.leader == b.leader
        and a.reference_axis == b.reference_axis
        and a.enabled == b.enabled
        and all(
            close(getattr(a, n), getattr(b, n)) for n in ("multiplier", "offset", "natural_frequency", "damping_ratio")
        )
    )


def _unchanged(before, after) -> bool:
    return (
        before is not None
        and before.leader == after.leader
        and before.reference_axis == after.reference_axis
        and before.authored == after.authored
    )


def _change_line(before, after) -> str:
    """What the edit changed, in the authored (file) values and in canonical form."""
    text = lambda r: f"{_values_text(r)} ({r.describe()})"  # noqa: E731
    head = f"{after.follower} {_api_text(after)}"
    if _unchanged(before, after):
        return f"{head}: unchanged, {text(after)}"
    leader = "" if before is not None and before.leader == after.leader else f" leader={after.leader}"
    was = "(none)" if before is None else text(before) + (f" leader={before.leader}" if leader else "")
    return f"{head}: before {was}; after {text(after)}{leader}"


def _prim_at(opened, path: str, role: str):
    """The prim at the absolute prim path ``path``, else a one-line error naming it."""
    from pxr import Sdf

    valid = Sdf.Path.IsValidPathString(path)
    valid = valid[0] if isinstance(valid, tuple) else valid  # (False, why) when ill-formed
    if not valid or not (Sdf.Path(path).IsAbsolutePath() and Sdf.Path(path).IsPrimPath()):
        raise MimicInputError(
            f"{opened.path}: '{path}' is not an absolute prim path for the {role} (e.g. /Robot/Joints/finger2)"
        )
    prim = opened.stage.GetPrimAtPath(path)
    if not prim:
        raise MimicInputError(f"{opened.path}: no prim at {path} (the {role})")
    return prim


def cmd_set(args) -> int:
    from .schema import MimicRelation, read_joint_relations, schema_for_edit, set_relation
    from .schema.joints import unit_scale
    from .schema.relation import physx_to_canonical

    with _editing(args.stage, args.output) as (opened, out):
        stage = opened.stage
        prim = _prim_at(opened, args.follower, "follower")
        _prim_at(opened, args.leader, "reference joint")
        try:  # one schema per follower: the one it carries, never the other beside it
            args.schema = schema_for_edit(prim, args.schema)
        except MimicInputError as exc:
            raise MimicInputError(f"{opened.path}: {exc}; nothing written") from None
        if (args.multiplier if args.multiplier is not None else args.gearing) == 0:
            raise MimicInputError("a gear ratio of 0 does not couple the joints: give a nonzero --multiplier/--gearing")
        offset = args.offset or 0.0
        if args.gearing is not None:
            s_f = unit_scale(prim) or 1.0
            s_l = unit_scale(stage.GetPrimAtPath(args.leader), args.reference_axis) or s_f
            multiplier, offset = physx_to_canonical(args.gearing, offset, s_f, s_l)
        else:
            multiplier = args.multiplier
        instance = args.instance if args.schema == "physx" else None
        rel = MimicRelation(
            follower=args.follower,
            leader=args.leader,
            multiplier=multiplier,
            offset=offset,
            instance=instance,
            reference_axis=args.reference_axis,
            natural_frequency=args.natural_frequency or 0.0,
            damping_ratio=args.damping_ratio or 0.0,
            schema=args.schema,
        )
        before = next(
            (
                r
                for r in read_joint_relations(prim)
                if r.schema == args.schema and (args.schema != "physx" or r.instance == instance)
            ),
            None,
        )
        facts: dict = {}
        findings_before = _finding_keys(stage, facts)
        written = set_relation(stage, rel)
        _check_edit(opened, findings_before, [args.follower], facts)
        print(_change_line(before, written))
        if out is None and _unchanged(before, written):
            print(f"{opened.path}: nothing to change, not rewritten")
        else:
            _save(opened, out)
    return EXIT_OK


def cmd_remove(args) -> int:
    from .schema import remove_relation

    with _editing(args.stage, args.output) as (opened, out):
        removed = remove_relation(opened.stage, args.follower, instance=args.instance, schema=args.schema)
        for rel in removed:
            print(f"removed {rel.follower} {_authored_text(rel)} ({rel.describe()})")
        _save(opened, out)
    return EXIT_OK


def cmd_convert(args) -> int:
    from .schema import convert_stage

    with _editing(args.stage, args.output) as (opened, out):
        facts: dict = {}
        findings_before = _finding_keys(opened.stage, facts)
        for f in args.follower or []:
            _prim_at(opened, f, "follower")
        done = convert_stage(opened.stage, args.to, followers=args.follower, duplicates_only=args.duplicates_only)
        _check_edit(opened, findings_before, [c.follower for c in done if c.changed], facts)
        for c in done:
            if c.converted:
                print(
                    f"converted {c.follower}: {_authored_text(c.removed[0])} -> {_authored_text(c.kept)} "
                    f"({c.kept.describe()})"
                )
            elif c.removed:
                for rel in c.removed:
                    same = (
                        "same relation"
                        if _same_relation(rel, c.kept)
                        else f"it said {rel.describe()} following {rel.leader}, a different relation"
                    )
                    print(
                        f"removed the duplicate {c.follower} {_authored_text(rel)} ({same}); kept "
                        f"{_authored_text(c.kept)} ({c.kept.describe()}"
                        + ("" if _same_relation(rel, c.kept) else f" following {c.kept.leader}")
                        + ")"
                    )
        changed = [c for c in done if c.changed]
        if not changed:
            print(
                f"{opened.path}: every relation is already {args.to}"
                + (" with no duplicate" if args.duplicates_only else "")
                + ", not rewritten"
            )
            return EXIT_OK
        _save(opened, out)
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    """argparse with errors as one line (``mimic-ext: error: ...``) plus where help is, exit 2."""

    def error(self, message: str):
        from .input_files import one_line

        command = self.prog.removeprefix("mimic-ext").strip()
        where = f"{command}: " if command else ""
        self.exit(EXIT_ERROR, f"mimic-ext: error: {one_line(f'{where}{message}')} (see: {self.prog} --help)\n")


class _NotBuilt:
    """Stands in for the parser of a sub-command the command line does not name: whatever
    ``add_commands`` calls on it (``add_argument``, ``set_defaults``, ...) does nothing."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self


class _OneCommand:
    """The sub-parsers action, building a real parser only for ``command`` (argparse's work
    for every option of every other sub-command and their modules' import: a few ms of each
    run, issue 43)."""

    def __init__(self, sub, command: str):
        self._sub, self._command = sub, command

    def add_parser(self, name: str, **kwargs):
        return self._sub.add_parser(name, **kwargs) if name == self._command else _NotBuilt()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``mimic-ext`` parser. ``command``: a sub-command's name when the command line names
    one; only its parser is then built (it is all that parses that command line). Otherwise
    (none, or a name no module adds, which the full parser refuses listing them) all are."""
    from . import __version__

    known = {*OWN_COMMANDS, *(name for names in COMMAND_MODULES.values() for name in names)}
    only = command if command in known else None
    parser = _Parser(prog="mimic-ext", description="Mimic joints in USD stages. " + CONVENTIONS)
    parser.add_argument("--version", action="version", version=f"mimic-ext {__version__}")
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    if only is not None:
        sub = _OneCommand(sub, only)

    p = sub.add_parser(
        "list",
        help="list the mimic relations of a stage",
        description="List every mimic relation, as authored and canonical. " + SEE_CONVENTIONS,
    )
    p.add_argument("stage", help="USD file (.usd/.usda/.usdc/.usdz), or a URDF/MJCF robot (imported in memory)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table (also --json -)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser(
        "validate",
        help="check mimic relations (exit 0 clean, 1 errors)",
        description="Validate every mimic relation of a stage. Exit 0 when clean, 1 on errors "
        "(or warnings with --strict), 2 when the stage cannot be read. " + SEE_CONVENTIONS,
    )
    p.add_argument("stage", help="USD file, or a URDF/MJCF robot (imported in memory, nothing written)")
    p.add_argument("--json", action="store_true", help="print the findings as JSON on stdout (also --json -)")
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.add_argument(
        "--target",
        choices=(*HOST_TARGETS, "simready"),
        default=None,
        help="also report what this host would not couple (isaacsim-5: omni.physx up to Isaac Sim 5.1 reads only "
        "PhysxMimicJointAPI; newton: a NewtonMimicAPI beside MjcEqualityJointAPI; isaacsim-6, mujoco), or "
        "(simready) what NVIDIA's SimReady FET_022 checks ask of mimic joints: PhysicsJointStateAPI on "
        "followers and references",
    )
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "set",
        help="add or replace a mimic relation (saved atomically)",
        description="Add or replace the mimic relation of FOLLOWER and print it before and after. "
        "The edit is validated first (nothing is written when it would be an error); "
        "the file is rewritten through a temporary file, so on failure the original is "
        "untouched. " + CONVENTIONS,
    )
    p.add_argument("stage", help="USD file to edit (its root layer is saved)")
    p.add_argument("follower", help="follower joint prim path, e.g. /Robot/Joints/finger2")
    p.add_argument("--leader", required=True, help="reference (leader) joint prim path")
    ratio = p.add_mutually_exclusive_group(required=True)
    ratio.add_argument(
        "--multiplier",
        type=float32_number,
        help="canonical: q_f = multiplier*q_ref + offset; --offset then in radians or metres",
    )
    ratio.add_argument(
        "--gearing",
        type=float32_number,
        help="PhysX: q_f + gearing*q_ref + offset = 0; --offset then in degrees (revolute "
        "follower) or stage units (prismatic)",
    )
    p.add_argument(
        "--offset",
        type=float32_number,
        default=0.0,
        help="offset in the convention of --multiplier (rad/m) or --gearing (deg/stage units); default 0",
    )
    p.add_argument(
        "--instance",
        default="rotX",
        choices=("rotX", "rotY", "rotZ"),
        help="PhysxMimicJointAPI instance: rotX, rotY or rotZ (default rotX; PhysX ignores any other)",
    )
    p.add_argument(
        "--reference-axis",
        default="rotX",
        choices=("rotX", "rotY", "rotZ"),
        help="DOF of a multi-DOF reference joint (ignored for revolute/prismatic references)",
    )
    p.add_argument(
        "--natural-frequency", type=float32_number, help="compliance natural frequency (1/s); hard when unset or <= 0"
    )
    p.add_argument("--damping-ratio", type=float32_number, help="compliance damping ratio; hard when unset or <= 0")
    p.add_argument(
        "--schema",
        choices=("physx", "newton"),
        help="author PhysxMimicJointAPI or NewtonMimicAPI (q_f = coef0 + coef1*q_ref, USD units); default: "
        "the one FOLLOWER carries, physx when it has none. The other one beside it is refused "
        "(PhysX reads both and would apply two constraints): convert it first",
    )
    p.add_argument("-o", "--output", help="write here (.usda/.usdc/.usd) instead of editing STAGE in place")
    p.set_defaults(func=cmd_set)

    p = sub.add_parser(
        "remove",
        help="remove a mimic relation (saved atomically)",
        description="Remove the mimic relation(s) of FOLLOWER and their attributes. " + SEE_CONVENTIONS,
    )
    p.add_argument("stage", help="USD file to edit")
    p.add_argument("follower", help="follower joint prim path")
    p.add_argument("--instance", help="only this PhysxMimicJointAPI instance (default: all)")
    p.add_argument("--schema", choices=("physx", "newton"), help="only this schema (default: both)")
    p.add_argument("-o", "--output", help="write here instead of editing STAGE in place")
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser(
        "convert",
        help="rewrite relations in one schema; remove a duplicate (saved atomically)",
        description="Leave each follower with its relation in one schema: a relation in the other "
        "schema is rewritten (same canonical relation) and removed; where a follower "
        "carries both, the --to one is kept and the other removed (PhysX reads both "
        "and would apply two constraints). Refused, with nothing written, when the "
        "target cannot say the relation (compliance or a D6 or revolute-prismatic pair "
        "in Newton, a disabled one in PhysX). " + SEE_CONVENTIONS,
    )
    p.add_argument("stage", help="USD file to edit")
    p.add_argument("--to", required=True, choices=("newton", "physx"), help="the schema to keep")
    p.add_argument(
        "--follower",
        action="append",
        metavar="PATH",
        help="only this follower (repeat for several; default: every follower)",
    )
    p.add_argument(
        "--duplicates-only",
        action="store_true",
        help="only followers that carry both schemas: remove the one that is not --to",
    )
    p.add_argument("-o", "--output", help="write here instead of editing STAGE in place")
    p.set_defaults(func=cmd_convert)

    for name, names in COMMAND_MODULES.items():
        if only is not None and only not in names:
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.add_commands(sub)
    return parser


#: sub-commands whose --json is a flag (stdout); "--json -" means the same there
_JSON_FLAG_COMMANDS = ("list", "validate")


def _json_dash(argv: list[str]) -> list[str]:
    """``--json -`` and ``--json=-`` as plain ``--json`` for the commands whose JSON goes to stdout."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command not in _JSON_FLAG_COMMANDS:
        return argv
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--json=-":
            out.append("--json")
        elif argv[i] == "--json" and argv[i + 1 : i + 2] == ["-"]:
            out.append("--json")
            i += 1
        else:
            out.append(argv[i])
        i += 1
    return out


def _check_device(args) -> None:
    device = getattr(args, "device", None)
    if device and str(device) != "cpu":
        from .warp_runtime import check_device

        check_device(device)


def main(argv: Sequence[str] | None = None) -> int:
    argv = _json_dash(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)  # -h before it: all
    args = parser.parse_args(argv)  # --help, --version and usage errors exit here (SystemExit)
    if args.command != "sweep":  # a sweep resumes it after its first unit (startup_gc)
        from .startup_gc import resume

        resume()
    from .input_files import check_regular_file, check_utf8_name, one_line

    try:
        for value in vars(args).values():  # file names (and prim paths) that are not UTF-8: before any work
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str):
                    check_utf8_name(text)
        inputs = ("stage", "robot") if args.command == "import" else ("stage",)  # export's --robot is a prim
        for name in inputs:  # a missing input in one line, before USD's seconds of import
            path = getattr(args, name, None)
            if isinstance(path, str):
                check_regular_file(path, name)
        _check_device(args)
        return int(args.func(args) or 0)
    except MimicInputError as exc:
        print(f"mimic-ext: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("mimic-ext: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """The ``mimic-ext`` command (the console script and ``python -m mimic_ext``): ``main``, then
    the process ends without the interpreter's teardown (``process_exit``: a quarter of a second
    of CPU after a sweep). ``main`` is what a Python caller runs, and returns. The garbage
    collector is held off while a sweep starts (``startup_gc``: 0.1 s of CPU), and numpy's
    OpenBLAS runs one thread unless the user set a number (``blas_threads``: 0.09 s of CPU)."""
    from .blas_threads import one_thread_unless_set
    from .process_exit import exit_now
    from .startup_gc import pause

    one_thread_unless_set()
    pause()
    exit_now(main())


if __name__ == "__main__":
    run()
