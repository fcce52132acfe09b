"""``import_robot``: URDF or MJCF file -> checked relations -> USD stage (-> file, atomically).

The relations are checked before anything is written (types, one leader per follower,
contradicting cycles through ``MimicForest``), so a bad file never leaves an output.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from pxr import Usd

from ..errors import MimicInputError
from ..schema.forest import REDUNDANT, MimicConflictError, MimicForest
from ..schema.hosts import host
from ..schema.relation import NEWTON, PHYSX, MimicRelation
from .drive_gains import DEFAULT_DAMPING_RATIO, DEFAULT_FREQUENCY
from .mjcf import read_mjcf
from .model import PRISMATIC, REVOLUTE, Mimic, RobotModel
from .urdf import read_urdf
from .usd_shapes import save_with_mesh_library
from .usd_writer import write_stage
from .xmltree import parse_xml

#: the mimic schema the importer writes by default: one schema per follower (PhysX reads
#: NewtonMimicAPI too and would apply two constraints; see schema/schema_choice.py), and the one
#: Isaac Sim 6's URDF importer writes, which PhysX, Newton and our solver all read
DEFAULT_SCHEMA = NEWTON
SCHEMA_CHOICES = (NEWTON, PHYSX)
#: why ``both`` is refused (it was the default before): one line for the CLI and the API
BOTH_REFUSED = (
    "'both' is no longer offered: PhysX reads NewtonMimicAPI as well as PhysxMimicJointAPI and "
    "would apply two constraints on every follower; use newton (the default: PhysX, Newton and "
    "mimic_ext read it) or physx (for older PhysX builds that read only "
    "PhysxMimicJointAPI)"
)
_LIST_MAX = 8


@dataclass
class ImportResult:
    """The imported stage (in memory), the relations as computed (float64, SI), warnings.

    ``relations`` are the exact canonical values; USD stores gearing/offset as float32,
    so reading the stage back gives them to float32 precision.
    """

    stage: Usd.Stage
    relations: list[MimicRelation]
    warnings: list[str]
    source: Path
    format: str
    robot_path: str
    joint_paths: dict[str, str] = field(default_factory=dict)
    body_paths: dict[str, str] = field(default_factory=dict)
    frame_paths: dict[str, str] = field(default_factory=dict)  # URDF links folded into a body (frames)
    massless_bodies: list[str] = field(default_factory=list)
    meshes_left_out: list[str] = field(default_factory=list)
    out: Path | None = None
    files: list[Path] = field(default_factory=list)  # everything written (the stage, its mesh library)
    schema: str = ""  # the mimic schema written ("newton" or "physx": ``schema_for_target``)


def schema_for_target(schema: str | None, target: str | None) -> str:
    """The schema to write: ``schema`` when given (refused when ``target`` would not read it), else
    the one ``target`` reads, else the default (NewtonMimicAPI)."""
    if target is None:
        return schema or DEFAULT_SCHEMA
    h = host(target)
    if schema is not None and schema != "both" and schema not in h.reads:
        raise MimicInputError(
            f"--schema {schema} is not read by --target {target} ({h.label}): leave --schema out, or use --schema {h.schema}"
        )
    return schema or h.schema


def _listing(items: list[str]) -> str:
    uniq = list(dict.fromkeys(items))
    shown = ", ".join(uniq[:_LIST_MAX])
    return shown + (f" (+{len(uniq) - _LIST_MAX} more)" if len(uniq) > _LIST_MAX else "")


def read_robot(path: str | os.PathLike) -> RobotModel:
    """Parse URDF or MJCF (told apart by the root element) into a ``RobotModel``."""
    p = Path(path)
    root = parse_xml(p)
    if root.tag == "robot":
        model = read_urdf(p)
    elif root.tag == "mujoco":
        model = read_mjcf(p)
    else:
        raise MimicInputError(f"{root.where}: <{root.tag}> is neither a URDF <robot> nor an MJCF <mujoco> file")
    check_relations(model)
    return model


def check_relations(model: RobotModel) -> None:
    """Refuse relations no simulator can keep; chains and redundant ones stay (with a warning)."""
    forest = MimicForest()
    leader_of: dict[str, Mimic] = {}
    keep = []
    for m in model.mimics:
        where = f"{m.file}:{m.line}"
        for role, name in (("follower", m.follower), ("leader", m.leader)):
            joint = model.joint(name)
            if joint is None:
                raise MimicInputError(f"{where}: mimic {role} joint '{name}' does not exist")
            if joint.kind not in (REVOLUTE, PRISMATIC):
                raise MimicInputError(
                    f"{where}: mimic {role} '{name}' is a {joint.kind} joint; a mimic relation "
                    "needs revolute, continuous or prismatic joints"
                )
        key = f"'{m.follower}' (line {m.line})"
        try:
            status = forest.add(key, m.follower, m.leader, m.multiplier, m.offset)
        except MimicConflictError as exc:
            raise MimicInputError(f"{where}: {exc}") from None
        if status == REDUNDANT:
            model.warnings.append(
                f"{where}: the relation of '{m.follower}' on '{m.leader}' repeats others (redundant): not written"
            )
            continue
        if m.follower in leader_of:
            first = leader_of[m.follower]
            raise MimicInputError(
                f"{where}: joint '{m.follower}' already follows '{first.leader}' "
                f"(line {first.line}); a joint can mimic only one leader"
            )
        leader_of[m.follower] = m
        keep.append(m)
    model.mimics = keep


def _summarise(model: RobotModel, writer) -> list[str]:
    warnings = list(model.warnings)
    src = model.source
    massless = [
        b for b in model.massless_bodies if b not in model.mesh_inertia_bodies and not model.bodies[b].chain_link
    ]
    if massless:
        what = "<inertial>" if model.format == "URDF" else "mass (no <inertial> and no massive geoms)"
        warnings.append(
            f"{src}: {len(massless)} body(ies) have no {what}, so no mass is written "
            f"(a simulator applies its default): {_listing(massless)}"
        )
    if model.unresolved_meshes:
        warnings.append(
            f"{src}: {len(set(model.unresolved_meshes))} mesh file(s) cannot be found "
            f"(unresolvable package:// or missing path), skipped: {_listing(model.unresolved_meshes)}"
        )
    missing = [
        g.mesh_ref or g.name  # an MJCF mesh geom always names its asset
        for b in model.bodies.values()
        for g in b.geoms
        if g.shape == "mesh" and g.mesh_file is None and model.format == "MJCF"
    ]
    if missing:
        warnings.append(f"{src}: {len(set(missing))} mesh file(s) do not exist, skipped: {_listing(missing)}")
    if writer.meshes_left_out:
        warnings.append(
            f"{src}: {len(set(writer.meshes_left_out))} mesh(es) left out (no mesh library installed: "
            f"pip install trimesh to convert them; bodies, mass, joints and primitive shapes are "
            f"imported): {_listing(writer.meshes_left_out)}"
        )
    if writer.mixed:
        warnings.append(
            f"{src}: {len(writer.mixed)} relation(s) couple a revolute and a prismatic joint, which "
            "NewtonMimicAPI does not support (PhysX and Newton read its coef1 in different units): "
            f"written as PhysxMimicJointAPI instead: {_listing(writer.mixed)}"
        )
    if writer.mesh_failures:
        warnings.append(
            f"{src}: {len(writer.mesh_failures)} mesh(es) could not be read, left out: {_listing(writer.mesh_failures)}"
        )
    if writer.follower_caps_dropped:
        warnings.append(
            f"{src}: {len(writer.follower_caps_dropped)} mimic follower(s) keep no velocity limit: "
            f"{_listing(writer.follower_caps_dropped)} (as Isaac Sim's URDF importer does: a follower "
            "moves at multiplier times its leader's speed, so its own limit could make the relation "
            "impossible to hold, and its leader's limit already bounds it)"
        )
    # (a body whose moments break the triangle inequality is written as the source has it, and said
    # once, by the validator's MIMIC_INERTIA_TRIANGLE, which `import` and `validate` print)
    if model.folded_links:
        warnings.append(
            f"{src}: {len(model.folded_links)} link(s) without mass on a fixed joint are folded into their "
            f"parent's body as frames (Xforms keeping their shapes), as Isaac Sim's URDF importer merges fixed "
            f"joints; as bodies of their own a simulator would give each its default mass (PhysX 1 kg): "
            f"{_listing(model.folded_links)}"
        )
    if writer.default_gains:
        warnings.append(
            f"{src}: {len(writer.default_gains)} joint(s) have no position gains in the source and get Isaac Sim's "
            f"URDF importer defaults (natural frequency {writer.drive_frequency:g}, damping ratio "
            f"{writer.drive_damping_ratio:g}: stiffness I f^2, damping 2 z f I from the inertia I each joint "
            f"moves; --drive-frequency / --drive-damping-ratio change them): {_listing(writer.default_gains)}"
        )
    if writer.gains_reflected:
        warnings.append(
            f"{src}: {len(writer.gains_reflected)} mimic follower(s) keep no drive gains: their stiffness and "
            f"damping are written on their chain's root leader as multiplier^2 times them (the same forces "
            f"through the relation; a drive with gains on a follower fights it): {_listing(writer.gains_reflected)}"
        )
    if writer.leader_caps_physx_only:
        warnings.append(
            f"{src}: {len(writer.leader_caps_physx_only)} mimic leader(s) keep their velocity limit as "
            f"physxJoint:maxJointVelocity only, not newton:velocityLimit: "
            f"{_listing(writer.leader_caps_physx_only)} (ovphysx reads newton:velocityLimit as a cap "
            "that makes the leader and its mimic relation diverge)"
        )
    return warnings


def import_robot(
    path: str | os.PathLike,
    out: str | os.PathLike | None = None,
    schema: str | None = None,
    target: str | None = None,
    drive_frequency: float = DEFAULT_FREQUENCY,
    drive_damping_ratio: float = DEFAULT_DAMPING_RATIO,
) -> ImportResult:
    """Import a URDF or MJCF robot into a USD stage with its mimic relations.

    ``schema``: 'newton' (default: NewtonMimicAPI, which PhysX, Newton and our solver read;
    a relation between a revolute and a prismatic joint is written as PhysxMimicJointAPI,
    with a warning) or 'physx' (PhysxMimicJointAPI only). One schema per follower: PhysX
    reads both and would apply two constraints. ``target`` (``schema.hosts.TARGETS``: isaacsim-6,
    isaacsim-5, newton, mujoco) picks the schema that host reads; a ``schema`` it does not read is
    refused. With ``out`` the stage is written there atomically
    (nothing is written on error); a large mesh library goes to ``<stem>.meshes.usdc``
    beside a ``.usda`` stage. ``drive_frequency`` and ``drive_damping_ratio``: the position gains of
    joints whose source has none (Isaac Sim's URDF importer's defaults; ``drive_gains``).
    """
    schema = schema_for_target(schema, target)
    if schema == "both":
        raise MimicInputError(f"schema {BOTH_REFUSED}")
    if schema not in SCHEMA_CHOICES:
        raise MimicInputError(f"unknown schema '{schema}' (use one of {', '.join(SCHEMA_CHOICES)})")
    if out is not None and Path(out).suffix.lower() not in (".usd", ".usda", ".usdc"):
        raise MimicInputError(f"{out}: the output must be a .usda, .usdc or .usd file")
    if not (math.isfinite(drive_frequency) and drive_frequency > 0):
        raise MimicInputError(f"drive frequency {drive_frequency:g}: must be a finite number > 0")
    if not (math.isfinite(drive_damping_ratio) and drive_damping_ratio >= 0):
        raise MimicInputError(f"drive damping ratio {drive_damping_ratio:g}: must be a finite number >= 0")
    model = read_robot(path)
    stage, relations, writer = write_stage(model, schema, drive_frequency, drive_damping_ratio)
    result = ImportResult(
        stage=stage,
        relations=relations,
        warnings=_summarise(model, writer),
        source=Path(path),
        format=model.format,
        robot_path=writer.robot,
        joint_paths=dict(writer.joint_paths),
        body_paths=dict(writer.body_paths),
        frame_paths=dict(writer.frame_paths),
        massless_bodies=list(model.massless_bodies),
        meshes_left_out=list(writer.meshes_left_out),
        schema=schema,
    )
    if out is not None:
        result.files = save_with_mesh_library(
            stage.GetRootLayer(), out, library=writer.shapes.library, mesh_bytes=writer.shapes.mesh_bytes
        )
        result.out = result.files[-1]
    return result
