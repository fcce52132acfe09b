"""Where PhysX's copies of a robot go, and along which axes a copy steps as the original does.

A copy cloned by ovphysx 0.7 (``PhysX.clone``, CPU) steps exactly as the same robot moved there
by hand, in one environment (measured: bit for bit the same joint positions; ``benchmarks/
physx_clones.py``). So a clone steps like environment 0 exactly where PhysX's motion of the
robot does not depend on where it stands, and two kinds of stage break that:

* **Loop-closing joints** (``physics:excludeFromArticulation``, solved by PhysX outside the
  articulation). The Menagerie-style 2F-85 linkage (the grasp scene's stage, the shared
  ``Robotiq_2F85_newton.usda``) moved 0.2 mm to 1 m within the plane of its linkage steps up to
  0.9 rad differently within 3 steps, or goes NaN, with or without contacts, under TGS or PGS,
  at 4 to 255 position iterations. The FET022 stages without loop joints (the Isaac 2F-85's
  parallel grip, data/robotiq_style_linkage.usda), moved anywhere, step bit for bit the same; the
  grasp scene without its loops still differs by 2e-3 to 0.4 rad (its loose fingers close on a
  box, and contact amplifies the rounding too). The joints' float32 world positions round
  differently where they stand, and these linkages amplify that. Moved along the one axis every body turns about
  (the hinge axis) the coordinates in the linkage's plane keep their bits: 1e-6 rad over the
  720-step sweep. So a loop stage is cloned along a stage axis parallel to every rotation axis
  of its tree joints, where it has one, and not at all (``faithful`` false) where it has none.
* **An articulation root body jointed to the world** (``PhysicsArticulationRootAPI`` on the
  body itself, a fixed joint from the world to it): the clone's world-anchored joint keeps the
  source's world frame, which the anchor does not move, so PhysX's first step pulls the copy
  most of the way back to the source (a clone 1 m out stood at 0.09 m after warmup, NaN after
  one step). The same root API on an Xform above the bodies clones correctly. Such a stage is
  not cloned.

Everything else (no loops, the root API above the bodies) clones along any axis; X is the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pxr import Gf, Usd, UsdGeom, UsdPhysics

from ...schema import joints

#: |axis x stage axis| below which a joint axis counts as that stage axis (float32 joint frames
#: turn an axis by ~1e-7 rad; a real tilt is far larger).
PARALLEL = 1e-6

_UNIT = {"X": Gf.Vec3d(1, 0, 0), "Y": Gf.Vec3d(0, 1, 0), "Z": Gf.Vec3d(0, 0, 1)}


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class Layout:
    """Where the copies of the robot are: the cloned subtree and its copies' root paths.

    ``unfaithful``: why a copy may not step like environment 0 on PhysX ("" when it does; the
    module doc gives the measurements)."""

    source: str | None  # None: one environment, nothing cloned
    targets: list[str]  # clone root paths, environment 1.. (environment 0 is the source)
    anchors: list[tuple[float, ...]]
    #: other subtrees cloned into the same environments, each as its own Layout (an object the
    #: robot handles, outside the robot's prim): one clone call per subtree, grouped by env_ids
    companions: list[Layout] = field(default_factory=list)
    axis: str = "X"
    unfaithful: str = ""

    @property
    def faithful(self) -> bool:
        return not self.unfaithful

    @property
    def note(self) -> str:
        """The line a report gets for a layout whose copies may step differently ("" otherwise)."""
        if not self.unfaithful:
            return ""
        return f"PhysX's copies of {self.source} along {self.axis} may not step like environment 0: {self.unfaithful}"

    def env_path(self, path: str, env: int) -> str:
        """``path`` inside environment ``env``'s copy."""
        if env == 0 or self.source is None:
            return path
        for c in self.companions:
            if c.source is not None and _under(path, c.source):
                return c.env_path(path, env)
        return self.targets[env - 1] + path[len(self.source) :]


def _enabled_joints(stage: Usd.Stage, root: str) -> list[Usd.Prim]:
    out = []
    for prim in Usd.PrimRange(stage.GetPrimAtPath(root), Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        if joints.joint_kind(prim) is None:
            continue
        enabled = UsdPhysics.Joint(prim).GetJointEnabledAttr().Get()
        if enabled is None or enabled:
            out.append(prim)
    return out


def _excluded(prim: Usd.Prim) -> bool:
    return bool(UsdPhysics.Joint(prim).GetExcludeFromArticulationAttr().Get())


def _is_body(stage: Usd.Stage, path: str | None) -> bool:
    if not path:
        return False
    prim = stage.GetPrimAtPath(path)
    return bool(prim) and prim.HasAPI(UsdPhysics.RigidBodyAPI)


def loop_joints(stage: Usd.Stage, root: str) -> list[str]:
    """Enabled joints under ``root`` that PhysX solves outside the articulation tree (loop closures)."""
    return [str(p.GetPath()) for p in _enabled_joints(stage, root) if _excluded(p)]


def world_anchored_roots(stage: Usd.Stage, root: str) -> list[str]:
    """Bodies under ``root`` carrying PhysicsArticulationRootAPI themselves that a joint ties to the world."""
    bodies = {
        str(p.GetPath())
        for p in Usd.PrimRange(stage.GetPrimAtPath(root))
        if p.HasAPI(UsdPhysics.ArticulationRootAPI) and p.HasAPI(UsdPhysics.RigidBodyAPI)
    }
    found = []
    for prim in _enabled_joints(stage, root):
        b0, b1 = joints.joint_bodies(prim)
        for here, there in ((b0, b1), (b1, b0)):
            if here in bodies and not _is_body(stage, there) and here not in found:
                found.append(here)
    return found


def _world_axis(stage: Usd.Stage, prim: Usd.Prim, local: Gf.Vec3d) -> Gf.Vec3d:
    """A direction given in the joint's frame 0, in the stage's (world) frame."""
    joint = UsdPhysics.Joint(prim)
    b0 = joints.joint_bodies(prim)[0]
    frame0 = stage.GetPrimAtPath(b0) if b0 else None
    rot = Gf.Rotation(Gf.Quatd(joint.GetLocalRot0Attr().Get() or Gf.Quatf(1, 0, 0, 0)))
    axis = rot.TransformDir(local)
    if frame0 and frame0.IsA(UsdGeom.Xformable):
        world = UsdGeom.Xformable(frame0).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
        axis = world.RemoveScaleShear().TransformDir(axis)
    return axis.GetNormalized()


def _rotation_axes(stage: Usd.Stage, root: str) -> list[Gf.Vec3d] | None:
    """World axes the tree joints under ``root`` turn bodies about; None where a body can turn
    about more than one (a spherical or free-rotation joint in the tree, a floating tree)."""
    axes: list[Gf.Vec3d] = []
    parent: dict[str, str] = {}

    def find(b: str) -> str:
        while parent.setdefault(b, b) != b:
            b = parent[b]
        return b

    grounded: set[str] = set()
    for prim in _enabled_joints(stage, root):
        if _excluded(prim):
            continue
        kind = joints.joint_kind(prim)
        if kind == joints.REVOLUTE:
            axis = UsdPhysics.RevoluteJoint(prim).GetAxisAttr().Get() or "X"
            axes.append(_world_axis(stage, prim, _UNIT[axis]))
        elif kind == joints.D6:
            free = [d for d in joints.ROT_DOFS if d not in joints.d6_locked_dofs(prim)]
            if len(free) > 1:
                return None
            axes += [_world_axis(stage, prim, _UNIT[d[-1]]) for d in free]
        elif kind not in (joints.PRISMATIC, joints.FIXED):
            return None  # spherical, distance or unknown: rotation about more than one axis
        b0, b1 = joints.joint_bodies(prim)
        ends = [b for b in (b0, b1) if b is not None and _is_body(stage, b)]
        if len(ends) == 1:
            grounded.add(find(ends[0]))
        elif len(ends) == 2:
            parent[find(ends[0])] = find(ends[1])
    bodies = [str(p.GetPath()) for p in Usd.PrimRange(stage.GetPrimAtPath(root)) if p.HasAPI(UsdPhysics.RigidBodyAPI)]
    roots = {find(g) for g in grounded}
    if any(find(b) not in roots for b in bodies):
        return None  # a tree no joint ties to the world turns freely
    return axes


def faithful_axes(stage: Usd.Stage, source: str) -> tuple[str, str]:
    """(the stage axes along which a PhysX copy of ``source`` steps like the source, why not the
    others): ``"XYZ"`` for most stages, one axis for a loop stage whose bodies all turn about that
    axis, ``""`` where no axis is safe (the module doc gives the measurements)."""
    anchored = world_anchored_roots(stage, source)
    if anchored:
        return "", (
            f"the articulation root {anchored[0]} is a body jointed to the world, and PhysX's clones of "
            "it keep the source's world-anchored joint frame, which pulls each copy back towards the source"
        )
    loops = loop_joints(stage, source)
    if not loops:
        return "XYZ", ""
    why = (
        f"its loop-closing joints ({', '.join(p.rsplit('/', 1)[-1] for p in loops[:3])}"
        f"{', ...' if len(loops) > 3 else ''}) make PhysX's motion of the linkage depend on where it stands"
    )
    axes = _rotation_axes(stage, source)
    if axes is None:
        return "", why + ", and its bodies turn about more than one axis"
    for name, unit in _UNIT.items():
        if all(Gf.Cross(a, unit).GetLength() < PARALLEL for a in axes):
            return name, why + f" except along {name}, the axis every body turns about"
    return "", why + ", and its joints' axes are not all parallel to one stage axis"


def layout(
    stage,
    source: str | None,
    num_envs: int,
    spacing: float,
    along: str | None = None,
    centred: bool = False,
    companions: Sequence[str] = (),
) -> Layout:
    """Clones of ``source`` placed ``spacing`` stage units apart along the stage axis ``along``;
    None: the first of ``faithful_axes`` (X where every axis is), X where none is (the layout
    then says ``faithful`` False, and why). ``centred``: on both sides of the source in turn
    (+1, -1, +2, ... spacings), which halves the farthest copy's distance from the origin
    (float32 poses lose 0.1 mm a step 1 km out). ``companions``: other subtrees cloned with the
    same offsets into the same environments."""
    if num_envs <= 1 or source is None:
        return Layout(None, [], [])
    safe, why = faithful_axes(stage, source)
    along = (along or (safe[:1] or "X")).upper()
    if along not in _UNIT:
        raise ValueError(f"clone axis must be X, Y or Z, got {along!r}")
    axis = "XYZ".index(along)

    def offset(k: int) -> float:
        return ((k + 1) // 2 if k % 2 else -(k // 2)) * spacing if centred else k * spacing

    def one(src: str) -> Layout:
        world = UsdGeom.Xformable(stage.GetPrimAtPath(src)).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
        p = world.ExtractTranslation()
        q = world.RemoveScaleShear().ExtractRotationQuat()
        im = q.GetImaginary()
        parent, name = src.rsplit("/", 1)
        targets = [f"{parent}/{name}_fet022_env{k}" for k in range(1, num_envs)]
        anchors: list[tuple[float, ...]] = []
        for k in range(1, num_envs):
            at = [p[0], p[1], p[2]]
            at[axis] += offset(k)
            anchors.append((*at, im[0], im[1], im[2], q.GetReal()))
        return Layout(src, targets, anchors, axis=along)

    main = one(source)
    main.companions = [one(c) for c in companions]
    if along not in safe:
        main.unfaithful = why
    return main
