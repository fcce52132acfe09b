"""The private copy of a stage that a simulator reading USD itself (PhysX, Newton) is given.

Such an engine cannot be handed a relation list or a temporary drive the way our solver
is: it reads the stage. So each gets its own flattened, in-memory copy with the few edits
the sweep needs (the validator's rejects hidden, a physics scene where there is none, the
test drive on a reference joint that has none, floating roots welded), and every edit
leaves one line in ``notes`` for the report. The user's layers are never written: the
copy is an anonymous layer, and the rejects are removed in a private session layer
before flattening (``stage_without``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

from ...native_stderr import quiet_native_stderr
from ...schema import joints, read_relations
from ...schema.relation import MimicRelation
from .base import stage_without

#: Gravity where a stage has no PhysicsScene: what our solver assumes (stage_reader._gravity).
DEFAULT_GRAVITY = 9.81
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def hidden_relations(stage: Usd.Stage, simulated: Sequence[MimicRelation]) -> list[MimicRelation]:
    """The stage's relations that are not to be simulated (validator rejects, disabled ones)."""
    keep = {r.key for r in simulated}
    return [r for r in read_relations(stage) if r.key not in keep]


@dataclass
class PreparedStage:
    """A flattened in-memory copy of a stage and what was changed in it (one line each)."""

    stage: Usd.Stage
    source: str
    notes: list[str] = field(default_factory=list)

    @property
    def meters_per_unit(self) -> float:
        return joints.meters_per_unit(self.stage)


def private_copy(stage: Usd.Stage, hidden: Sequence[MimicRelation] = ()) -> PreparedStage:
    """Flatten ``stage`` (with ``hidden`` relations removed) into an anonymous layer.

    Flattening composes sublayers, references and payloads into one layer: a simulator
    then reads exactly what USD composed, and a reference that did not resolve (the shared
    Robotiq's missing mesh payloads) is simply absent instead of a composition error.
    """
    source = stage.GetRootLayer().identifier
    view = stage_without(stage, hidden) if hidden else stage
    with quiet_native_stderr():  # USD warns per unknown metadata field while flattening Kit assets
        layer = view.Flatten()
    copy = Usd.Stage.Open(layer)
    prep = PreparedStage(stage=copy, source=source)
    prep.notes.append(
        "the stage was flattened into one in-memory layer (sublayers, references and payloads "
        "composed; nothing written to the asset)"
    )
    note_hidden(prep, hidden)
    return prep


def note_hidden(prep: PreparedStage, hidden: Sequence[MimicRelation], where: str = "the simulated copy") -> None:
    """One note per relation hidden from the simulator (removed from ``where``)."""
    for rel in hidden:
        what = f"PhysxMimicJointAPI:{rel.instance}" if rel.schema == "physx" else "NewtonMimicAPI"
        prep.notes.append(
            f"{what} on {rel.follower} removed from {where} "
            f"({'disabled' if not rel.enabled else 'rejected by the validator'})"
        )


def simulator_copy(
    stage: Usd.Stage, plan, simulated: Sequence[MimicRelation], instead: str, masses: bool = True, fix_base: bool = True
) -> PreparedStage:
    """The copy a USD-reading simulator runs the plan on: rejects hidden, then ``prepare``."""
    prep = private_copy(stage, hidden_relations(stage, simulated))
    prepare(prep, plan, instead, masses, fix_base)
    return prep


def prepare(prep: PreparedStage, plan, instead: str, masses: bool = True, fix_base: bool = True) -> None:
    """The edits a USD-reading simulator needs, written to ``prep.stage``'s edit target: a scene,
    the test drives, our default masses (``masses``; ``instead``: what the engine does without
    them) and floating roots welded (``fix_base``), the weld inside the robot's root prim so
    that a clone of that prim carries it."""
    ensure_scene(prep)
    write_test_drives(prep, plan)
    if masses:
        default_masses(prep, instead)
    if fix_base:
        weld_floating_roots(prep)


def weld_floating_roots(prep: PreparedStage) -> None:
    """Every floating root welded to the world inside the robot's root prim (a gripper's base
    held as a test bench holds it); where the solver's reader cannot say which roots float
    (a joint it does not model), a note says none was welded."""
    from ...errors import MimicInputError

    try:
        roots = floating_roots(prep.stage)
    except MimicInputError as exc:  # the solver's reader rejects joints it cannot model
        prep.notes.append(f"floating roots not looked for ({exc}); none welded")
        roots = []
    for body in roots:
        weld(prep, body, robot_root(prep.stage))


def self_collisions(root: Usd.Prim) -> bool | None:
    """Whether an articulation root lets its links collide: ``physxArticulation:enabledSelfCollisions``
    where ``PhysxArticulationAPI`` is applied (PhysX ignores it elsewhere: tests/test_contact_fet022.py),
    else Newton's ``newton:selfCollisionEnabled`` (PhysX's fallback); None when neither counts
    (PhysX's default then: they collide)."""
    physx = joints.has_api(root, "PhysxArticulationAPI")
    for name in ("physxArticulation:enabledSelfCollisions", "newton:selfCollisionEnabled"):
        if name.startswith("physx") and not physx:
            continue
        attr = root.GetAttribute(name)
        if attr and attr.HasAuthoredValue():
            return bool(attr.Get())
    return None


def articulation_roots(stage: Usd.Stage) -> list[Usd.Prim]:
    return [
        p
        for p in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate))
        if p.HasAPI(UsdPhysics.ArticulationRootAPI)
    ]


def down_axis(stage: Usd.Stage) -> tuple[float, float, float]:
    up = _AXES.get(UsdGeom.GetStageUpAxis(stage), _AXES["Z"])
    return (-up[0], -up[1], -up[2])


def ensure_scene(prep: PreparedStage, path: str = "/fet022_PhysicsScene") -> str:
    """The stage's PhysicsScene, or a new one with our solver's default gravity."""
    for prim in prep.stage.Traverse():
        if prim.IsA(UsdPhysics.Scene):
            return str(prim.GetPath())
    scene = UsdPhysics.Scene.Define(prep.stage, path)
    scene.CreateGravityDirectionAttr(Gf.Vec3f(*down_axis(prep.stage)))
    scene.CreateGravityMagnitudeAttr(DEFAULT_GRAVITY / prep.meters_per_unit)
    prep.notes.append(
        f"no PhysicsScene on the stage: {path} added (gravity {DEFAULT_GRAVITY} m/s^2 along -up, "
        f"as mimic_ext's solver assumes)"
    )
    return path


def drive_name(prim: Usd.Prim) -> str:
    return "linear" if joints.joint_kind(prim) == joints.PRISMATIC else "angular"


def write_drive(prim: Usd.Prim, stiffness_si: float, damping_si: float, max_force: float, target_si: float) -> None:
    """A position drive in USD units (gains per degree or per stage unit, as PhysX reads them)."""
    scale = joints.unit_scale(prim) or 1.0
    api = UsdPhysics.DriveAPI.Apply(prim, drive_name(prim))
    api.CreateTypeAttr("force")
    api.CreateStiffnessAttr(float(stiffness_si * scale))
    api.CreateDampingAttr(float(damping_si * scale))
    if math.isfinite(max_force):
        api.CreateMaxForceAttr(float(max_force))
    api.CreateTargetPositionAttr(float(target_si / scale))


def write_test_drives(prep: PreparedStage, plan) -> None:
    """The plan's temporary drive on every swept joint that has no drive of its own."""
    for pj in plan.joints:
        if pj.drive.source != "test":
            continue
        prim = prep.stage.GetPrimAtPath(pj.path)
        if not prim:
            continue
        write_drive(prim, pj.drive.stiffness, pj.drive.damping, pj.drive.max_force, pj.lo)
        unit = "N/m" if drive_name(prim) == "linear" else "N m/rad"
        prep.notes.append(
            f"{pj.path} has no position drive: the sweep's test drive was written on it "
            f"(stiffness {pj.drive.stiffness:g} {unit}, damping {pj.drive.damping:g})"
        )


def floating_roots(stage: Usd.Stage) -> list[str]:
    """Root bodies of the articulation trees that no joint ties to the world.

    The same trees and the same root choice as mimic_ext's solver (``read_stage``), so the
    body welded here is the one our engine welds with ``fix_base``.
    """
    from ...solver.stage_reader import FREE, read_stage

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = read_stage(stage, fix_base=False)
    return [link.body for link in spec.links if link.jtype == FREE]


def weld(prep: PreparedStage, body: str, parent: str | None = None) -> str:
    """A fixed joint from the world to ``body`` where it stands (a gripper on a bench)."""
    stage = prep.stage
    base = (parent or "").rstrip("/")
    name = "fet022_weld"
    path = f"{base}/{name}"
    k = 1
    while stage.GetPrimAtPath(path):
        k += 1
        path = f"{base}/{name}_{k}"
    world = UsdGeom.Xformable(stage.GetPrimAtPath(body)).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    rot = world.RemoveScaleShear().ExtractRotationQuat()
    joint = UsdPhysics.FixedJoint.Define(stage, path)
    joint.CreateBody1Rel().SetTargets([Sdf.Path(body)])
    joint.CreateLocalPos0Attr(Gf.Vec3f(world.ExtractTranslation()))
    joint.CreateLocalRot0Attr(Gf.Quatf(rot))
    joint.CreateLocalPos1Attr(Gf.Vec3f(0, 0, 0))
    joint.CreateLocalRot1Attr(Gf.Quatf(1, 0, 0, 0))
    prep.notes.append(f"floating articulation root {body} welded to the world where it stands ({path}; fix_base)")
    return path


#: Mass of a body without mass properties that is welded to one with mass (a fingertip
#: frame): small next to any real link, positive because PhysX and Newton need it.
WELDED_MASS = 1e-5
WELDED_RADIUS = 0.005


def _has_mass(prim: Usd.Prim) -> bool:
    """Mass authored, or colliders of its own from which a simulator computes it (density)."""
    if prim.HasAPI(UsdPhysics.MassAPI):
        m = UsdPhysics.MassAPI(prim).GetMassAttr().Get()
        if m is not None and math.isfinite(m) and m > 0:
            return True
    it = iter(Usd.PrimRange(prim))
    next(it)
    for child in it:
        if child.HasAPI(UsdPhysics.RigidBodyAPI):
            it.PruneChildren()
        elif child.HasAPI(UsdPhysics.CollisionAPI):
            return True
    return False


def _set_mass(prim: Usd.Prim, mass: float, radius: float) -> None:
    api = UsdPhysics.MassAPI.Apply(prim)
    api.CreateMassAttr(float(mass))
    api.CreateDiagonalInertiaAttr(Gf.Vec3f(*(0.4 * mass * radius**2,) * 3))
    api.CreateCenterOfMassAttr(Gf.Vec3f(0, 0, 0))


def default_masses(prep: PreparedStage, instead: str) -> None:
    """Give bodies without mass properties mimic_ext's documented default, as our solver does.

    A body with neither mass nor colliders has no mass in the asset; each simulator fills in
    its own (PhysX 1 kg with a guessed inertia, Newton none at all: NaN), so the engines
    would not simulate the same mechanism. Our solver merges bodies welded by fixed joints
    and gives a merged link with no mass at all ``DEFAULT_MASS`` (a ``DEFAULT_RADIUS`` solid
    sphere); a massless body welded to a massive one adds nothing. Here, per welded group:
    the same default on one body of a group that has no mass, and ``WELDED_MASS`` on the
    other massless bodies (the simulators need a positive mass on every link). ``instead``
    says what the engine would have done (for the note).
    """
    from ...solver.stage_reader import DEFAULT_MASS, DEFAULT_RADIUS

    stage = prep.stage
    kgpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage)) or 1.0
    mpu = prep.meters_per_unit
    bodies = [
        p
        for p in stage.Traverse()
        if p.HasAPI(UsdPhysics.RigidBodyAPI) and UsdPhysics.RigidBodyAPI(p).GetRigidBodyEnabledAttr().Get() is not False
    ]
    group = {str(b.GetPath()): str(b.GetPath()) for b in bodies}

    def find(x: str) -> str:
        while group[x] != x:
            group[x] = group[group[x]]
            x = group[x]
        return x

    for prim in stage.Traverse():
        if prim.IsA(UsdPhysics.FixedJoint) and UsdPhysics.Joint(prim).GetJointEnabledAttr().Get() is not False:
            b0, b1 = joints.joint_bodies(prim)
            if b0 in group and b1 in group:
                group[find(b0)] = find(b1)
    massive = {str(b.GetPath()): _has_mass(b) for b in bodies}
    members: dict[str, list[str]] = {}
    for path in group:
        members.setdefault(find(path), []).append(path)
    defaulted, welded = [], []
    for paths in members.values():
        light = [p for p in paths if not massive[p]]
        if not light:
            continue
        if len(light) == len(paths):
            _set_mass(stage.GetPrimAtPath(light[0]), DEFAULT_MASS / kgpu, DEFAULT_RADIUS / mpu)
            defaulted.append(light[0])
            light = light[1:]
        for p in light:
            _set_mass(stage.GetPrimAtPath(p), WELDED_MASS / kgpu, WELDED_RADIUS / mpu)
            welded.append(p)
    if defaulted:
        prep.notes.append(
            f"{len(defaulted)} bod{'y' if len(defaulted) == 1 else 'ies'} without mass or colliders "
            f"given mimic_ext's default {DEFAULT_MASS} kg ({DEFAULT_RADIUS} m solid sphere), as our "
            f"solver does ({instead}): {_listing(defaulted)}"
        )
    if welded:
        prep.notes.append(
            f"{len(welded)} massless bod{'y' if len(welded) == 1 else 'ies'} welded to a body with mass "
            f"given {WELDED_MASS} kg (our solver merges them, adding nothing): {_listing(welded)}"
        )


def _listing(items: Sequence[str], most: int = 6) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" (+{len(items) - most} more)" if len(items) > most else "")


def physics_prims(stage: Usd.Stage) -> list[str]:
    """Paths of every rigid body and joint (what a copy of the robot must contain)."""
    out = []
    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        if prim.HasAPI(UsdPhysics.RigidBodyAPI) or prim.IsA(UsdPhysics.Joint):
            out.append(str(prim.GetPath()))
    return out


def common_root(paths: Sequence[str]) -> str | None:
    """The deepest prim above (or at) all ``paths``; None when only the pseudo-root is."""
    if not paths:
        return None
    parts = [p.strip("/").split("/") for p in paths]
    common = []
    for names in zip(*parts):
        if len(set(names)) != 1:
            break
        common.append(names[0])
    return "/" + "/".join(common) if common else None


def robot_root(stage: Usd.Stage) -> str | None:
    """The prim whose subtree holds every body and joint and no PhysicsScene (one robot copy)."""
    root = common_root(physics_prims(stage))
    if root is None:
        return None
    for prim in Usd.PrimRange(stage.GetPrimAtPath(root)):
        if prim.IsA(UsdPhysics.Scene):
            return None
    return root


def extent(stage: Usd.Stage, root: str) -> float:
    """Largest size (stage units) of the world-space box around ``root``'s geometry and bodies."""
    cache = UsdGeom.BBoxCache(
        Usd.TimeCode.Default(),
        [UsdGeom.Tokens.default_, UsdGeom.Tokens.render, UsdGeom.Tokens.proxy, UsdGeom.Tokens.guide],
    )
    box = cache.ComputeWorldBound(stage.GetPrimAtPath(root)).ComputeAlignedRange()
    lo, hi = [], []
    if not box.IsEmpty():
        lo.append(box.GetMin())
        hi.append(box.GetMax())
    for path in physics_prims(stage):
        prim = stage.GetPrimAtPath(path)
        if path.startswith(root) and prim.HasAPI(UsdPhysics.RigidBodyAPI):
            p = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default()).ExtractTranslation()
            lo.append(p)
            hi.append(p)
    if not lo:
        return 0.0
    return max(max(h[i] for h in hi) - min(l[i] for l in lo) for i in range(3))
