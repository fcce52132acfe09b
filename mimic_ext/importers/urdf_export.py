"""USD articulation -> URDF with ``<mimic>`` tags.

URDF puts each joint's axis through its child link's origin, while a USD joint may sit
anywhere in its bodies. So a link's URDF frame is its body frame when the joint passes
through the body origin (an imported URDF always does: the round trip keeps frames,
axes and numbers), and the joint frame otherwise (MJCF joints off the body origin); the
link's inertia and shapes are re-expressed in that frame. Relations come from
``read_relations`` (canonical SI), so ``multiplier``/``offset`` are in rad or m. USD keeps
float32, so each number is written as the shortest decimal that is the same float32.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np
from pxr import Usd, UsdGeom, UsdPhysics

from ..atomic_write import write_text_atomically
from ..errors import MimicInputError
from ..math3d import gf_wxyz, quat_to_mat
from ..schema import joints as J
from ..schema.authoring import read_relations
from ..schema.relation import PHYSX
from ..schema.stage_io import open_stage
from .model import chain_root
from .transforms import AXES, Transform, rot_to_rpy
from .usd_writer import (
    DEFAULT_GAINS_KEY,
    FIXED_BASE,
    FOLDED_JOINT_KEY,
    GENERATED_KEY,
    PASSIVE_DAMPING_KEY,
    SOURCE_NAME_KEY,
)
from .values import UNBOUNDED

WORLD = "world"
EPS = 1e-9
#: MuJoCo's lower bounds written for its URDF reader when a moving link has no mass or a
#: zero moment of inertia (1 mg and 1e-12 kg m^2: far below any real link)
BOUND_MASS = 1e-6
BOUND_INERTIA = 1e-12


@dataclass
class ExportResult:
    text: str
    warnings: list[str] = field(default_factory=list)
    out: Path | None = None
    joints: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    #: each link's URDF frame in its USD body's frame (identity unless the joint is off the body origin)
    link_frames: dict[str, Transform] = field(default_factory=dict)
    #: USD joint path -> its URDF joint name, and -> -1 where the URDF joint runs the other way
    #: (its coordinate is minus the USD one), else 1
    joint_paths: dict[str, str] = field(default_factory=dict)
    joint_signs: dict[str, float] = field(default_factory=dict)
    #: USD paths of the source's leaders written as followers: each lay below a joint it drives,
    #: which Pinocchio cannot build (the warnings say which and why)
    inverted: list[str] = field(default_factory=list)
    #: USD body path -> its URDF link name
    link_paths: dict[str, str] = field(default_factory=dict)


def _f32(x: float, scale: float = 1.0) -> str:
    """Shortest decimal whose value, divided by ``scale``, rounds to the same float32."""
    x = float(x)
    if not math.isfinite(x):  # callers check first, naming the prim; this is the last guard
        raise MimicInputError(f"a non-finite value ({x}) cannot be written to URDF")
    if x == 0.0:
        return "0"
    want = np.float32(x / scale)
    for digits in range(1, 18):
        s = f"{x:.{digits}g}"
        if np.float32(float(s) / scale) == want:
            return _plain(float(s))
    return _plain(x)


def _plain(v: float) -> str:
    """``1000`` rather than ``1e+03``, ``1e-6`` rather than ``1e-06``."""
    r = repr(v)
    if "e" in r:
        mant, exp = r.split("e")
        return f"{mant.removesuffix('.0')}e{int(exp)}"
    return r.removesuffix(".0")


def _vec(v, scale: float = 1.0) -> str:
    return " ".join(_f32(x + 0.0, scale) for x in v)


def _gf_transform(pos, rot) -> Transform:
    q = gf_wxyz(rot)
    return Transform.make(np.array([float(x) for x in pos]), quat_to_mat(q))


def _joint_frames(prim: Usd.Prim, mpu: float) -> tuple[Transform, Transform]:
    j = UsdPhysics.Joint(prim)
    out = []
    for pos_attr, rot_attr in (
        (j.GetLocalPos0Attr(), j.GetLocalRot0Attr()),
        (j.GetLocalPos1Attr(), j.GetLocalRot1Attr()),
    ):
        pos = pos_attr.Get() if pos_attr.HasAuthoredValue() else (0.0, 0.0, 0.0)
        rot = rot_attr.Get()
        _finite(prim, "a joint frame (localPos/localRot)", list(pos), [] if rot is None else list(gf_wxyz(rot)))
        t = _gf_transform(pos, rot) if rot is not None else Transform.make(np.array([float(x) for x in pos]))
        out.append(Transform(t.R, t.p * mpu))
    return out[0], out[1]


def _matrix_to_transform(m, mpu: float) -> tuple[Transform, np.ndarray]:
    """Gf.Matrix4d (row-vector convention) -> (rigid transform, scale per local axis)."""
    a = np.array(m, dtype=float).T  # column-vector convention
    lin = a[:3, :3]
    scale = np.linalg.norm(lin, axis=0)
    R = lin / np.where(scale > 0, scale, 1.0)
    return Transform(R, a[:3, 3] * mpu), scale


def _finite(prim: Usd.Prim, what: str, *values) -> None:
    """Refuse NaN or infinite values with the prim and attribute: URDF readers (and our
    own importer) reject ``nan``/``inf``, so writing them would make a file nobody loads."""
    flat = [float(v) for value in values for v in np.ravel(np.asarray(value, dtype=float))]
    bad = [v for v in flat if not math.isfinite(v)]
    if bad:
        raise MimicInputError(f"{prim.GetPath()}: {what} is {bad[0]}, which URDF cannot hold: author a finite value")


@dataclass
class _Edge:
    prim: Usd.Prim
    parent: str | None  # body path; None = world
    child: str
    frame0: Transform
    frame1: Transform
    sign: float  # -1 when the USD joint points from child to parent


@dataclass
class _UrdfJoint:
    """One ``<joint>`` being written: the head (``{name}`` filled in last), the body, and
    its parent, which ``_order_for_pinocchio`` may move onto an inserted link."""

    name: str
    parent: str
    child: str
    head: list[str]
    body: list[str] = field(default_factory=list)
    path: str | None = None

    @property
    def moving(self) -> bool:
        return 'type="fixed"' not in self.head[0]

    def lines(self) -> list[str]:
        return [
            self.head[0].format(name=quoteattr(self.name)[1:-1]),
            *self.head[1:],
            f"    <parent link={quoteattr(self.parent)}/>",
            f"    <child link={quoteattr(self.child)}/>",
            *self.body,
            "  </joint>",
        ]


def _moving_links(joints: list[_UrdfJoint]) -> set[str]:
    """Links below a moving joint (what MuJoCo calls moving bodies)."""
    children: dict[str, list] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    child_links = {k.child for k in joints}  # once, not per joint: 10,000 joints made this quadratic
    moving, stack = set(), [(j, False) for j in joints if j.parent not in child_links]
    while stack:
        j, below = stack.pop()
        below = below or j.moving
        if below:
            moving.add(j.child)
        stack.extend((k, below) for k in children.get(j.child, []))
    return moving


def _order_for_pinocchio(
    joints: list[_UrdfJoint], mimics: list[tuple[str, str]], names, link_names, warnings
) -> list[str]:
    """Make every leader come before its followers in urdfdom's traversal.

    urdfdom (Pinocchio, ROS) visits the children of a link in the order of their joint
    names, depth first, and Pinocchio refuses a follower reached before its leader ("The
    parent joint of the mimic joint is not in the kinematic tree"). Where the names give
    the wrong order, the link's children are each hung from a fixed joint on a massless
    link whose names sort in the needed order; every original joint, frame and relation
    stays as it was. Returns the links added.
    """
    by_path = {j.path: j for j in joints if j.path}
    parent_joint = {j.child: j for j in joints}

    def ancestry(j: _UrdfJoint) -> list[_UrdfJoint]:
        chain = [j]
        while chain[-1].parent in parent_joint:
            chain.append(parent_joint[chain[-1].parent])
        return chain[::-1]  # root first

    before: dict[str, set[tuple[str, str]]] = {}  # link -> {(earlier child joint, later one)}
    for follower, leader in mimics:
        f, l = by_path.get(follower), by_path.get(leader)
        if f is None or l is None:
            continue
        af, al = ancestry(f), ancestry(l)
        if l in af:
            continue  # the leader is above the follower: already visited first
        if f in al:
            warnings.append(
                f"{follower}: follows {leader}, which lies below it in the tree; URDF readers that "
                "build the tree first (Pinocchio) cannot take that relation"
            )
            continue
        k = 0
        while k < min(len(af), len(al)) and af[k] is al[k]:
            k += 1
        before.setdefault(af[k].parent, set()).add((al[k].name, af[k].name))
    added = []
    for link, pairs in before.items():
        children = [j for j in joints if j.parent == link]
        if all(a < b for a, b in pairs):
            continue  # the names already sort right (urdfdom compares bytes, as str does)
        ordered = _topological(children, pairs)
        if ordered is None:
            warnings.append(
                f"link {link}: its mimic relations ask for a cyclic order of its children; "
                "Pinocchio may refuse the file"
            )
            continue
        width = len(str(len(ordered)))
        for k, child in enumerate(ordered):
            hub = link_names(f"{link}_order_{k:0{width}d}")
            joints.append(
                _UrdfJoint(
                    names(f"{link}_order_{k:0{width}d}_joint"),
                    link,
                    hub,
                    ['  <joint name="{name}" type="fixed">', '    <origin xyz="0 0 0" rpy="0 0 0"/>'],
                )
            )
            child.parent = hub
            added.append(hub)
    return added


def _topological(children: list[_UrdfJoint], pairs: set[tuple[str, str]]) -> list[_UrdfJoint] | None:
    """Children ordered so that every (earlier, later) pair holds, else by name; None on a cycle.

    Kahn's algorithm with the free children in a heap by name: at each step the first name
    among those whose earlier ones are all placed, in O((children + pairs) log children)
    (a palm of 10,000 fingers took minutes when each step rescanned every pair)."""
    import heapq

    by_name = {j.name: j for j in children}
    later: dict[str, list[str]] = {}
    waiting = dict.fromkeys(by_name, 0)  # how many earlier ones each child still waits for
    for a, b in pairs:
        if a in by_name and b in by_name:
            later.setdefault(a, []).append(b)
            waiting[b] += 1
    free = [name for name, n in waiting.items() if n == 0]
    heapq.heapify(free)
    out = []
    while free:
        name = heapq.heappop(free)
        out.append(by_name[name])
        for b in later.get(name, ()):
            waiting[b] -= 1
            if waiting[b] == 0:
                heapq.heappush(free, b)
    return out if len(out) == len(by_name) else None


class UrdfExporter:
    def __init__(self, stage: Usd.Stage, robot_path: str | None = None, keep_leaders: bool = False):
        self.stage = stage
        self.keep_leaders = keep_leaders  # the source's leaders even below a joint they drive (not for Pinocchio)
        self.warnings: list[str] = []
        self.mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
        self.root_prim = self._root(robot_path)
        self.xcache = UsdGeom.XformCache()
        self.partial_mass: list[str] = []
        self.fixed_base = False  # the importer's generated fixed joint pins the root
        self.degenerate_inertia: list[str] = []  # links whose inertia has a zero principal moment
        self.inverted: list[str] = []  # the source leaders written as followers (below a joint they drive)

    def _root(self, robot_path: str | None) -> Usd.Prim:
        stage = self.stage
        if robot_path:
            prim = stage.GetPrimAtPath(robot_path)
            if not prim:
                raise MimicInputError(f"no prim at {robot_path} in {stage.GetRootLayer().identifier}")
            return prim
        roots = [p for p in stage.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
        default = stage.GetDefaultPrim()
        if default and any(r.GetPath().HasPrefix(default.GetPath()) for r in roots):
            return default
        # no default prim holding an articulation: never guess among several, and name the one used
        why = (
            f"the default prim {default.GetPath()} holds no articulation"
            if default
            else "the stage has no default prim"
        )
        if len(roots) > 1:
            listed = ", ".join(str(r.GetPath()) for r in roots)
            raise MimicInputError(
                f"{stage.GetRootLayer().identifier}: {len(roots)} articulations ({listed}) and "
                f"{why}: choose one with --robot PRIM (robot_path in Python)"
            )
        if roots:
            self.warnings.append(f"{why}; exporting the stage's only articulation, {roots[0].GetPath()}")
            return roots[0]
        if default:
            return default
        raise MimicInputError(
            f"{stage.GetRootLayer().identifier}: no articulation to export (no ArticulationRootAPI and no default prim)"
        )

    # ---------------------------------------------------------------- structure
    def _collect(self):
        predicate = Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)
        prims = list(Usd.PrimRange(self.root_prim, predicate))
        bodies = [p for p in prims if p.HasAPI(UsdPhysics.RigidBodyAPI)]
        joints = [p for p in prims if p.IsA(UsdPhysics.Joint)]
        if not bodies:
            raise MimicInputError(f"{self.root_prim.GetPath()}: no rigid bodies to export")
        return {str(b.GetPath()): b for b in bodies}, joints

    def build_tree(self):
        bodies, joints = self._collect()
        adjacency: dict[str, list[Usd.Prim]] = {b: [] for b in bodies}
        world_joints, root = [], None
        excluded = []
        for prim in joints:
            j = UsdPhysics.Joint(prim)
            if j.GetExcludeFromArticulationAttr().Get():
                excluded.append(prim.GetName())
                continue
            b0, b1 = self._ends(prim, bodies)
            if b0 is None and b1 is None:
                continue
            if b0 is None or b1 is None:
                body = b1 or b0
                if prim.GetCustomDataByKey(GENERATED_KEY) == FIXED_BASE:
                    root = root or body
                    self.fixed_base = True
                    continue
                world_joints.append(prim)
                root = root or body
                continue
            adjacency[b0].append(prim)
            adjacency[b1].append(prim)
        if excluded:
            self.warnings.append(f"loop-closing joints (excludeFromArticulation) not written: {', '.join(excluded)}")
        if root is None:
            with_root_api = [b for b, p in bodies.items() if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
            children = {str(t) for p in joints for t in UsdPhysics.Joint(p).GetBody1Rel().GetTargets()}
            candidates = with_root_api or [b for b in bodies if b not in children] or list(bodies)
            root = candidates[0]

        edges: list[_Edge] = []
        visited = {root}
        queue = [root]
        world_children: set[str] = set()
        for prim in world_joints:
            b0, b1 = self._ends(prim, bodies)
            f0, f1 = _joint_frames(prim, self.mpu)
            edge = _Edge(prim, None, b1, f0, f1, 1.0) if b0 is None else _Edge(prim, None, b0, f1, f0, -1.0)
            if edge.child in world_children:
                self.warnings.append(
                    f"{prim.GetPath()}: a second joint from the world to the same body; URDF is a tree, not written"
                )
                continue
            world_children.add(edge.child)
            edges.append(edge)
            if edge.child not in visited:
                visited.add(edge.child)
                queue.append(edge.child)
        used = set()
        while queue:
            body = queue.pop(0)
            for prim in adjacency[body]:
                key = str(prim.GetPath())
                if key in used:
                    continue
                used.add(key)
                b0, b1 = self._ends(prim, bodies)
                other = b1 if b0 == body else b0
                if other in visited:
                    self.warnings.append(f"{prim.GetPath()}: closes a kinematic loop; URDF is a tree, not written")
                    continue
                f0, f1 = _joint_frames(prim, self.mpu)
                if b0 == body:
                    edges.append(_Edge(prim, body, b1, f0, f1, 1.0))
                else:
                    edges.append(_Edge(prim, body, b0, f1, f0, -1.0))
                visited.add(other)
                queue.append(other)
        unreached = [b for b in bodies if b not in visited]
        if unreached:
            self.warnings.append(
                f"{len(unreached)} body(ies) not connected to {root} by joints, not written: "
                + ", ".join(Path(b).name for b in unreached)
            )
        return bodies, root, edges

    def _ends(self, prim: Usd.Prim, bodies: dict) -> tuple[str | None, str | None]:
        """(body0, body1); a target that is not a rigid body is the static world (as in PhysX)."""
        out = []
        for b in J.joint_bodies(prim):
            if b is not None and b not in bodies:
                target = self.stage.GetPrimAtPath(b)
                if not target:
                    raise MimicInputError(f"{prim.GetPath()}: body {b} does not exist")
                if target.HasAPI(UsdPhysics.RigidBodyAPI):
                    raise MimicInputError(f"{prim.GetPath()}: body {b} is outside {self.root_prim.GetPath()}")
                b = None
            out.append(b)
        return out[0], out[1]

    # ---------------------------------------------------------------- writing
    def export(self) -> ExportResult:
        bodies, root, edges = self.build_tree()
        link_names, names = _UniqueNames(), _UniqueNames()  # URDF keeps links and joints apart
        order = list(dict.fromkeys([root] + [e.child for e in edges]))
        link_name = {b: link_names(_source_name(bodies[b])) for b in order}
        base = self._base_joint(bodies[root], edges)
        has_world = base is not None or any(e.parent is None for e in edges)
        world_name = link_names(WORLD) if has_world else None
        link_frame: dict[str, Transform] = {root: Transform.identity()}
        joint_name: dict[str, str] = {}
        sign: dict[str, float] = {}
        lines = [
            '<?xml version="1.0"?>',
            f"<!-- written by mimic_ext from {self.stage.GetRootLayer().realPath or 'an in-memory stage'} -->",
            f"<robot name={quoteattr(_source_name(self.root_prim))}>",
        ]
        if world_name:
            lines.append(f"  <link name={quoteattr(world_name)}/>")
        joints: list[_UrdfJoint] = []
        if base is not None:
            assert world_name is not None  # has_world
            jtype, pose = base
            joints.append(
                _UrdfJoint(
                    names("root_joint"),
                    world_name,
                    link_name[root],
                    [
                        f'  <joint name="{{name}}" type="{jtype}">',
                        f'    <origin xyz="{_vec(_clean(pose.p))}" rpy="{_vec(_clean(rot_to_rpy(pose.R)))}"/>',
                    ],
                )
            )
        servo_joints: list[str] = []
        for e in edges:
            kind = J.joint_kind(e.prim)
            if kind not in (J.REVOLUTE, J.PRISMATIC, J.FIXED):
                raise MimicInputError(
                    f"{e.prim.GetPath()}: a {kind} joint cannot be written as URDF "
                    "(URDF has revolute, continuous, prismatic and fixed joints)"
                )
            token = (
                UsdPhysics.RevoluteJoint(e.prim).GetAxisAttr().Get()
                if kind == J.REVOLUTE
                else UsdPhysics.PrismaticJoint(e.prim).GetAxisAttr().Get()
                if kind == J.PRISMATIC
                else "X"
            )
            axis_local = AXES[str(token or "X")]
            off_origin = kind != J.FIXED and np.linalg.norm(e.frame1.p) > EPS
            G = e.frame1 if off_origin else Transform.identity()
            link_frame[e.child] = G
            G_parent = link_frame[e.parent] if e.parent else Transform.identity()
            origin = G_parent.inverse() * e.frame0 * e.frame1.inverse() * G
            axis = e.sign * (G.R.T @ e.frame1.R @ axis_local)
            name = names(_source_name(e.prim))
            joint_name[str(e.prim.GetPath())] = name
            sign[str(e.prim.GetPath())] = e.sign
            parent = world_name if e.parent is None else link_name[e.parent]
            assert parent is not None  # has_world when a joint has no parent
            limits = J.limits_si(e.prim) if kind != J.FIXED else None
            usd_scale = J.unit_scale(e.prim) if kind != J.FIXED else 1.0
            jtype = {J.FIXED: "fixed", J.PRISMATIC: "prismatic"}.get(kind, "revolute" if limits else "continuous")
            out = [
                f'  <joint name="{{name}}" type="{jtype}">',
                f'    <origin xyz="{_vec(_clean(origin.p))}" rpy="{_vec(_clean(rot_to_rpy(origin.R)))}"/>',
            ]
            body = []
            if kind != J.FIXED:
                body.append(f'    <axis xyz="{_vec(_clean(axis, 1e-7))}"/>')
                body.extend(self._limit_and_dynamics(e.prim, kind, limits, e.sign, usd_scale, servo_joints, name))
            joints.append(_UrdfJoint(name, parent, link_name[e.child], out, body, str(e.prim.GetPath())))
        offset = len(joints) - len(edges)
        written = self._mimics([j.body for j in joints[offset:]], edges, joint_name, sign)
        folded = self._folded_links(bodies, order, link_name, link_frame, link_names, names, joints)
        wrappers = _order_for_pinocchio(joints, written, names, link_names, self.warnings)
        weightless = []
        for b in order:
            link_lines = self._link(bodies[b], link_name[b], link_frame[b])
            lines.extend(link_lines)
            if len(link_lines) == 1 or "<inertial>" not in "".join(link_lines):
                weightless.append(link_name[b])
        for prim, name in folded:
            lines.extend(self._link(prim, name, Transform.identity()))
            weightless.append(name)
        lines.extend(f"  <link name={quoteattr(w)}/>" for w in wrappers)
        for j in joints:
            lines.extend(j.lines())
        moving = _moving_links(joints)
        weightless = [n for n in weightless + self.degenerate_inertia if n in moving]
        if weightless:
            # MuJoCo refuses moving bodies without mass or with a zero moment of inertia; its
            # URDF reader takes compiler options from a <mujoco> element (other readers ignore
            # it), so the links stay as they are and MuJoCo gets its documented lower bounds
            balance = ' balanceinertia="true"' if self.degenerate_inertia else ""
            lines.insert(
                3,
                f'  <mujoco><compiler boundmass="{_plain(BOUND_MASS)}" '
                f'boundinertia="{_plain(BOUND_INERTIA)}"{balance}/></mujoco>',
            )
            self.warnings.append(
                f"{len(weightless)} moving link(s) without mass or with a zero moment of inertia "
                f"({', '.join(weightless[:8])}); MuJoCo is told boundmass={_plain(BOUND_MASS)} kg, "
                f"boundinertia={_plain(BOUND_INERTIA)} kg m^2"
                + (
                    f"; zero moments written as {_plain(BOUND_INERTIA)} kg m^2 for "
                    + ", ".join(self.degenerate_inertia[:8])
                    if self.degenerate_inertia
                    else ""
                )
            )
        lines.append("</robot>")
        if self.partial_mass:
            self.warnings.append(
                "mass without authored centre of mass or inertia (USD computes those from the "
                "colliders; written as 0): " + ", ".join(self.partial_mass)
            )
        if servo_joints:
            self.warnings.append(
                "drive stiffness has no URDF equivalent (URDF has no controllers); not written for: "
                + ", ".join(servo_joints)
            )
        return ExportResult(
            text="\n".join(lines) + "\n",
            warnings=self.warnings,
            joints=list(joint_name.values()),
            links=list(link_name.values()),
            link_frames={link_name[b]: link_frame[b] for b in order},
            joint_paths=dict(joint_name),
            joint_signs=dict(sign),
            inverted=list(self.inverted),
            link_paths={str(b): link_name[b] for b in order} | {str(p.GetPath()): n for p, n in folded},
        )

    def _folded_links(self, bodies, order, link_name, link_frame, link_names, names, joints):
        """The massless links the importer folded into a body (Xforms marked ``FOLDED_JOINT_KEY``),
        written back as links on the fixed joints they replaced: [(prim, link name)], their joints
        appended to ``joints``."""
        out: list[tuple[Usd.Prim, str]] = []
        for b in order:
            named = {b: link_name[b]}  # the body and its folded links by path
            for prim in _folded_frames(bodies[b]):
                above = prim.GetParent()
                while str(above.GetPath()) not in named:  # the nearest link above: the body or a folded one
                    above = above.GetParent()
                up = str(above.GetPath())
                G_up = link_frame[b] if up == b else Transform.identity()
                up_world, _ = _matrix_to_transform(self.xcache.GetLocalToWorldTransform(above), self.mpu)
                world, _ = _matrix_to_transform(self.xcache.GetLocalToWorldTransform(prim), self.mpu)
                origin = G_up.inverse() * up_world.inverse() * world
                name = named[str(prim.GetPath())] = link_names(_source_name(prim))
                parent = named[up]
                head = [
                    '  <joint name="{name}" type="fixed">',
                    f'    <origin xyz="{_vec(_clean(origin.p))}" rpy="{_vec(_clean(rot_to_rpy(origin.R)))}"/>',
                ]
                joints.append(_UrdfJoint(names(str(prim.GetCustomDataByKey(FOLDED_JOINT_KEY))), parent, name, head))
                out.append((prim, name))
        return out

    def _base_joint(self, root: Usd.Prim, edges) -> tuple[str, Transform] | None:
        """("fixed" | "floating", the root's world pose) when the URDF needs a joint from the
        world to keep where the robot stands: a fixed base away from the origin, or any
        floating base. None when the root sits at the origin pinned, or joints already come
        from the world."""
        if any(e.parent is None for e in edges):
            return None
        pose, _ = _matrix_to_transform(self.xcache.GetLocalToWorldTransform(root), self.mpu)
        _finite(root, "the root body's pose", pose.p, pose.R)
        if not self.fixed_base:
            return "floating", pose
        if np.allclose(pose.p, 0.0, atol=EPS) and np.allclose(pose.R, np.eye(3), atol=EPS):
            return None
        return "fixed", pose

    def _limit_and_dynamics(self, prim, kind, limits, sgn, usd_scale, servo_joints, name) -> list[str]:
        out = []
        drive_name = "angular" if kind == J.REVOLUTE else "linear"
        effort = velocity = None
        damping = 0.0
        if prim.HasAPI(UsdPhysics.DriveAPI, drive_name):
            drive = UsdPhysics.DriveAPI(prim, drive_name)
            mf = drive.GetMaxForceAttr().Get()
            if mf is not None and drive.GetMaxForceAttr().HasAuthoredValue():
                if math.isnan(mf):
                    _finite(prim, "drive maxForce", mf)
                if math.isfinite(mf) and mf > 0:  # +inf is USD's "no limit"
                    effort = float(mf)
            stiffness = drive.GetStiffnessAttr().Get() or 0.0
            if stiffness > 0 and not prim.GetCustomDataByKey(DEFAULT_GAINS_KEY):
                servo_joints.append(name)
            damping = (drive.GetDampingAttr().Get() or 0.0) / usd_scale
            passive = prim.GetCustomDataByKey(PASSIVE_DAMPING_KEY)  # the importer's: the joint's own
            if isinstance(passive, (int, float)):
                damping = float(passive) / usd_scale  # SI, scaled back below
            _finite(prim, "drive damping", damping)
        cap = J.max_velocity_si(prim)
        if cap is not None and math.isfinite(cap) and cap > 0:
            velocity = cap
        parts = []
        if limits:
            lo, hi = limits
            _finite(prim, "a joint limit", lo, hi)
            if sgn < 0:
                lo, hi = -hi, -lo
            parts += [f'lower="{_f32(lo, usd_scale)}"', f'upper="{_f32(hi, usd_scale)}"']
        # URDF readers (urdfdom: Pinocchio, ROS) require effort and velocity; with no limit in
        # the USD they get UNBOUNDED, which MuJoCo, Pinocchio and Newton take as a limit never
        # reached and our importer reads back as "no limit". (0 would mean "cannot move" to
        # Newton's MuJoCo solver and a zero limit to Pinocchio.)
        parts += [
            f'effort="{_f32(effort) if effort else _plain(UNBOUNDED)}"',
            f'velocity="{_f32(velocity, usd_scale) if velocity else _plain(UNBOUNDED)}"',
        ]
        out.append(f"    <limit {' '.join(parts)}/>")
        friction_name = J.physx_joint_attr(prim, "friction")  # where PhysX reads it, if anywhere
        friction_attr = prim.GetAttribute(friction_name) if friction_name else None
        friction = float(friction_attr.Get()) if friction_attr and friction_attr.Get() else 0.0
        _finite(prim, "joint friction", friction)
        if damping or friction:
            out.append(f'    <dynamics damping="{_f32(damping, 1 / usd_scale)}" friction="{_f32(friction)}"/>')
        return out

    def _chosen_relations(self, joint_name) -> list:
        """One relation per follower: PhysX's first instance, else an enabled Newton one."""
        by_follower: dict[str, list] = {}
        for r in read_relations(self.stage):
            if r.follower in joint_name:
                by_follower.setdefault(r.follower, []).append(r)
        chosen, newton_of = [], {}
        for follower, rels in by_follower.items():
            physx = [r for r in rels if r.schema == PHYSX]
            newton = [r for r in rels if r.schema != PHYSX and r.enabled]
            if not physx and not newton:
                self.warnings.append(f"{follower}: disabled NewtonMimicAPI relation not written")
                continue
            if len(physx) > 1:
                self.warnings.append(
                    f"{follower}: {len(physx)} PhysxMimicJointAPI instances; URDF keeps one "
                    f"(instance {physx[0].instance})"
                )
            r = (physx or newton)[0]
            if physx and newton:
                newton_of[follower] = newton[0]
            if r.compliant:
                self.warnings.append(
                    f"{follower}: compliant relation written as a hard <mimic> (URDF has no compliance)"
                )
            if r.leader not in joint_name:
                self.warnings.append(f"{follower}: leader {r.leader} is not an exported joint; <mimic> not written")
                continue
            _finite(self.stage.GetPrimAtPath(follower), "the mimic multiplier (gearing)", r.multiplier)
            _finite(self.stage.GetPrimAtPath(follower), "the mimic offset", r.offset)
            kinds = {J.joint_kind(self.stage.GetPrimAtPath(p)) for p in (follower, r.leader)}
            if not kinds <= {J.REVOLUTE, J.PRISMATIC}:
                self.warnings.append(
                    f"{follower}: a relation with a {'/'.join(sorted(k for k in kinds if k))} joint "
                    "is not a URDF <mimic> (revolute and prismatic joints only); not written"
                )
                continue
            if r.multiplier == 0.0:
                self.warnings.append(f"{follower}: multiplier 0 couples nothing; <mimic> not written")
                continue
            chosen.append(r)
        for r in chosen:  # on a follower with both schemas, Newton's may name the chain's root: compare composed
            n = newton_of.get(r.follower)
            if n is not None:
                leader, m, c = chain_root(chosen, r)
                if n.leader != leader or abs(n.multiplier - m) > 1e-6 or abs(n.offset - c) > 1e-6:
                    self.warnings.append(f"{r.follower}: PhysX and Newton relations differ; the PhysX one is written")
        return chosen

    def _mimics(self, joint_lines, edges, joint_name, sign) -> list[tuple[str, str]]:
        """Write the ``<mimic>`` tags; returns the (follower, leader) joint paths written.

        URDF readers that build the tree first (Pinocchio) need every leader reached before
        its followers and no leader that is itself a follower. So the joints each set of
        relations couples are written against one of them, with each relation composed
        along the way (a chain becomes relations to its root): the source's leader, which
        a controller keyed on its joint names expects to drive, wherever it does not lie
        below one of its followers (a leader on another branch is reached first by
        ordering the branches, ``_order_for_pinocchio``); only where it does (MJCF's two
        joints of one body, the first following the second) the joint highest in the tree
        leads instead, the same constraint, named in a warning with that reason.
        """
        chosen = self._chosen_relations(joint_name)
        depth: dict[str, int] = {}
        body_depth: dict[str | None, int] = {None: 0}
        child_of: dict[str, str] = {}  # joint -> the body it carries
        kids: dict[str | None, list[str]] = {}
        for e in edges:  # breadth-first: a parent comes before its children
            d = body_depth.get(e.parent, 0) + 1
            body_depth[e.child] = d
            depth[str(e.prim.GetPath())] = d
            child_of[str(e.prim.GetPath())] = e.child
            kids.setdefault(e.parent, []).append(e.child)
        # each body's interval in a depth-first walk: a body is below another iff its interval nests in it
        enter: dict[str, int] = {}
        leave: dict[str, int] = {}
        clock, walk = (
            0,
            [(b, False) for b in kids.get(None, []) + [b for b in kids if b and b not in child_of.values()]],
        )
        while walk:
            body, done = walk.pop()
            clock += 1
            if done:
                leave[body] = clock
            elif body not in enter:
                enter[body] = clock
                walk.append((body, True))
                walk.extend((c, False) for c in kids.get(body, []))

        def above(a: str, b: str) -> bool:
            """Joint ``a`` lies between joint ``b`` and the root of the tree."""
            ca, cb = child_of.get(a), child_of.get(b)
            if ca is None or cb is None or ca == cb or ca not in enter or cb not in enter:
                return False
            return enter[ca] < enter[cb] and leave[cb] < leave[ca]

        links: dict[str, list[tuple[str, float, float, bool]]] = {}
        for r in chosen:  # q_f = m q_l + c, walked both ways
            links.setdefault(r.leader, []).append((r.follower, r.multiplier, r.offset, True))
            links.setdefault(r.follower, []).append((r.leader, r.multiplier, r.offset, False))
        followers = {r.follower for r in chosen}
        index = {str(e.prim.GetPath()): i for i, e in enumerate(edges)}
        written, seen, moved, cycles = [], set(), [], set()
        order = list(dict.fromkeys([j for r in chosen for j in (r.leader, r.follower)]))
        for start in order:
            if start in seen:
                continue
            component, stack = [], [start]
            seen.add(start)
            while stack:
                j = stack.pop()
                component.append(j)
                for other, *_ in links.get(j, []):
                    if other not in seen:
                        seen.add(other)
                        stack.append(other)
            original = [j for j in component if j not in followers]
            # the source's leader, unless a joint it drives lies above it (Pinocchio reaches that first)
            kept = [j for j in original if self.keep_leaders or not any(above(o, j) for o in component)]
            root = (
                min(kept, key=lambda j: depth.get(j, 0))
                if kept
                else min(component, key=lambda j: (depth.get(j, 0), j not in original))
            )
            affine = {root: (1.0, 0.0)}  # q_j = m q_root + c
            stack = [root]
            while stack:
                j = stack.pop()
                mj, cj = affine[j]
                for other, m, c, other_follows in links.get(j, []):
                    # other follows j: q_o = m q_j + c; j follows other: q_o = (q_j - c) / m
                    implied = (m * mj, m * cj + c) if other_follows else (mj / m, (cj - c) / m)
                    if other in affine:  # a cycle: the tree already says how ``other`` moves
                        mo, co = affine[other]
                        if abs(mo - implied[0]) > 1e-6 * max(1.0, abs(mo)) or abs(co - implied[1]) > 1e-6:
                            cycles.add(Path(other).name)
                        continue
                    affine[other] = implied
                    stack.append(other)
            if root not in original:
                below = [Path(j).name for j in original]
                over = sorted(Path(j).name for j in component if any(above(j, o) for o in original))
                moved.append(
                    f"{Path(root).name} now leads {', '.join(below)} (which lies below {', '.join(over)}, a joint it drives)"
                )
                self.inverted.extend(str(j) for j in original)
            for j in component:
                if j == root:
                    continue
                mj, cj = affine[j]
                s_f, s_l = sign[j], sign[root]
                follower_prim, leader_prim = self.stage.GetPrimAtPath(j), self.stage.GetPrimAtPath(root)
                ratio = (J.unit_scale(follower_prim) or 1.0) / (J.unit_scale(leader_prim) or 1.0)
                scale_c = J.unit_scale(follower_prim) or 1.0
                joint_lines[index[j]].append(
                    f'    <mimic joint={quoteattr(joint_name[root])} multiplier="{_f32(s_f * s_l * mj, ratio)}" '
                    f'offset="{_f32(s_f * cj, scale_c)}"/>'
                )
                written.append((j, root))
        chained = [Path(r.follower).name for r in chosen if r.leader in followers]
        if chained:
            self.warnings.append(
                f"mimic chains written onto their roots (Pinocchio refuses a leader that is itself a "
                f"follower; the motion is the same): {', '.join(chained)}"
            )
        if cycles:
            self.warnings.append(
                "relations that contradict the others in a cycle are not written (URDF keeps one "
                f"relation per follower): {', '.join(sorted(cycles))}"
            )
        if moved:
            self.warnings.append(
                "relations inverted where the source's leader lies below a joint it drives (Pinocchio and other "
                "readers that build the tree depth first need each leader reached before its followers; the "
                "constraint is the same, the joint driven is another): " + "; ".join(moved)
            )
        return written

    def _link(self, prim: Usd.Prim, name: str, G: Transform) -> list[str]:
        out = [f"  <link name={quoteattr(name)}>"]
        Ginv = G.inverse()
        if prim.HasAPI(UsdPhysics.MassAPI):
            mass_api = UsdPhysics.MassAPI(prim)
            mass = mass_api.GetMassAttr().Get()
            if mass_api.GetMassAttr().HasAuthoredValue() and mass is not None:
                _finite(prim, "physics:mass", mass)
            if mass_api.GetMassAttr().HasAuthoredValue() and mass and mass > 0:
                com = np.array(mass_api.GetCenterOfMassAttr().Get() or (0, 0, 0), dtype=float) * self.mpu
                diag = np.array(mass_api.GetDiagonalInertiaAttr().Get() or (0, 0, 0), dtype=float) * self.mpu**2
                if mass_api.GetDiagonalInertiaAttr().HasAuthoredValue():
                    _finite(prim, "physics:diagonalInertia", diag)
                if mass_api.GetCenterOfMassAttr().HasAuthoredValue() and not np.all(np.isinf(com)):
                    _finite(prim, "physics:centerOfMass", com)
                if not np.all(np.isfinite(com)) or not mass_api.GetDiagonalInertiaAttr().HasAuthoredValue():
                    # USD's fallbacks mean "compute from the colliders": URDF needs numbers
                    self.partial_mass.append(name)
                    com = np.where(np.isfinite(com), com, 0.0)
                pa = mass_api.GetPrincipalAxesAttr().Get()
                if pa is not None:
                    _finite(prim, "physics:principalAxes", list(gf_wxyz(pa)))
                Rp = (
                    quat_to_mat(gf_wxyz(pa))
                    if pa is not None and pa.GetReal() ** 2 + sum(x * x for x in pa.GetImaginary()) > 0
                    else np.eye(3)
                )
                c = Ginv.apply(com)
                rpy = np.zeros(3)
                if float(np.min(diag)) <= 1e-12 * max(float(np.max(diag)), 1e-300):
                    # not positive definite (a zero principal moment), which MuJoCo refuses:
                    # written in its principal frame with the zero moments raised to
                    # BOUND_INERTIA (1e-12 kg m^2, nothing to any simulator), and MuJoCo told
                    # to balance it (a lone moment breaks A + B >= C)
                    self.degenerate_inertia.append(name)
                    tensor, rpy = np.diag(np.maximum(diag, BOUND_INERTIA)), _clean(rot_to_rpy(Ginv.R @ Rp))
                else:
                    tensor = Ginv.R @ Rp @ np.diag(diag) @ Rp.T @ Ginv.R.T
                    tiny = 1e-7 * max(float(np.max(np.abs(diag))), 1e-300)
                    tensor = np.where(np.abs(tensor) < tiny, 0.0, tensor)
                out += [
                    "    <inertial>",
                    f'      <origin xyz="{_vec(c)}" rpy="{_vec(rpy)}"/>',
                    f'      <mass value="{_f32(mass)}"/>',
                    "      <inertia "
                    + " ".join(
                        f'{k}="{_f32(tensor[i, j])}"'
                        for k, (i, j) in (
                            ("ixx", (0, 0)),
                            ("ixy", (0, 1)),
                            ("ixz", (0, 2)),
                            ("iyy", (1, 1)),
                            ("iyz", (1, 2)),
                            ("izz", (2, 2)),
                        )
                    )
                    + "/>",
                    "    </inertial>",
                ]
        body_world, _ = _matrix_to_transform(self.xcache.GetLocalToWorldTransform(prim), self.mpu)
        walk = iter(Usd.PrimRange(prim))
        for child in walk:
            if child == prim:
                continue
            if _is_folded(child):  # a folded link's shapes are its own link's (_folded_links)
                walk.PruneChildren()
                continue
            if child.HasAPI(UsdPhysics.RigidBodyAPI):
                continue
            geom = self._geometry(child, body_world, Ginv)
            if geom:
                out += geom
        if len(out) == 1:
            return [f"  <link name={quoteattr(name)}/>"]
        out.append("  </link>")
        return out

    def _geometry(self, prim: Usd.Prim, body_world: Transform, Ginv: Transform) -> list[str] | None:
        if not prim.IsA(UsdGeom.Gprim):
            return None
        world, scale = _matrix_to_transform(self.xcache.GetLocalToWorldTransform(prim), self.mpu)
        _finite(prim, "the shape's transform", world.p, world.R, scale)
        pose = Ginv * body_world.inverse() * world
        s = scale * self.mpu
        if prim.IsA(UsdGeom.Cube):
            size = float(UsdGeom.Cube(prim).GetSizeAttr().Get())
            _finite(prim, "the box size", size * s)
            shape = f'<box size="{_vec(size * s)}"/>'
        elif prim.IsA(UsdGeom.Sphere):
            radius = UsdGeom.Sphere(prim).GetRadiusAttr().Get() * s[0]
            _finite(prim, "the sphere radius", radius)
            shape = f'<sphere radius="{_f32(radius)}"/>'
        elif prim.IsA(UsdGeom.Cylinder) or prim.IsA(UsdGeom.Capsule):
            g = UsdGeom.Cylinder(prim) if prim.IsA(UsdGeom.Cylinder) else UsdGeom.Capsule(prim)
            axis = str(g.GetAxisAttr().Get() or "Z")
            if axis != "Z":
                from .transforms import align

                pose = pose * Transform.make(R=align(AXES["Z"], AXES[axis]))
            radius = g.GetRadiusAttr().Get() * s[0]
            length = g.GetHeightAttr().Get() * s["XYZ".index(axis)]
            _finite(prim, "the radius or height", radius, length)
            shape = f'<cylinder radius="{_f32(radius)}" length="{_f32(length)}"/>'
            if prim.IsA(UsdGeom.Capsule):  # URDF has no capsule: its exact union of parts
                return self._shapes(
                    prim,
                    [(pose, shape)]
                    + [
                        (pose * Transform.make((0.0, 0.0, z)), f'<sphere radius="{_f32(radius)}"/>')
                        for z in (-length / 2, length / 2)
                    ],
                )
        else:
            if prim.IsA(UsdGeom.Mesh):
                self._mesh_skipped = getattr(self, "_mesh_skipped", 0) + 1
            return None
        return self._shapes(prim, [(pose, shape)])

    @staticmethod
    def _shapes(prim: Usd.Prim, parts) -> list[str]:
        kind = "collision" if prim.HasAPI(UsdPhysics.CollisionAPI) else "visual"
        out = []
        for k, (pose, shape) in enumerate(parts):
            name = prim.GetName() if k == 0 else f"{prim.GetName()}_{k}"
            out += [
                f"    <{kind} name={quoteattr(name)}>",
                f'      <origin xyz="{_vec(_clean(pose.p))}" rpy="{_vec(_clean(rot_to_rpy(pose.R)))}"/>',
                f"      <geometry>{shape}</geometry>",
                f"    </{kind}>",
            ]
        return out


def _is_folded(prim: Usd.Prim) -> bool:
    return prim.GetCustomDataByKey(FOLDED_JOINT_KEY) is not None and not prim.HasAPI(UsdPhysics.RigidBodyAPI)


def _folded_frames(body: Usd.Prim) -> list[Usd.Prim]:
    """The folded links inside ``body`` (not inside another body), parents before children."""
    out = []
    walk = iter(Usd.PrimRange(body))
    next(walk)
    for prim in walk:
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            walk.PruneChildren()
        elif _is_folded(prim):
            out.append(prim)
    return out


def _source_name(prim: Usd.Prim) -> str:
    """The name as the source file wrote it (kept by the importer when it was not a valid prim name)."""
    return str(prim.GetCustomDataByKey(SOURCE_NAME_KEY) or prim.GetName())


def _clean(v, tiny: float = 1e-9) -> np.ndarray:
    """Round-off (a nanometre, a nanoradian) written as 0."""
    v = np.asarray(v, dtype=float)
    return np.where(np.abs(v) < tiny, 0.0, v)


class _UniqueNames:
    """``name``, else ``name_K`` with the smallest K not yet used. Names are never released, so
    that K only grows: each name resumes where it stopped (5,000 links named ``palm`` were a
    quadratic scan, half of a 10,000-joint export)."""

    def __init__(self):
        self.used: set[str] = set()
        self.next_k: dict[str, int] = {}

    def __call__(self, name: str) -> str:
        out = name
        if out in self.used:
            k = self.next_k.get(name, 1)
            while f"{name}_{k}" in self.used:
                k += 1
            out, self.next_k[name] = f"{name}_{k}", k + 1
        self.used.add(out)
        return out


def export_urdf(
    stage: Usd.Stage | str | os.PathLike,
    out: str | os.PathLike | None = None,
    robot_path: str | None = None,
    keep_leaders: bool = False,
) -> ExportResult:
    """Write the stage's articulation as URDF (``out`` atomically; None: text only).

    ``keep_leaders``: every relation from the source's leader, also one that lies below a joint
    it drives (MuJoCo and Newton load that; Pinocchio refuses it: by default such a relation is
    inverted, with a warning)."""
    if not isinstance(stage, Usd.Stage):
        stage = open_stage(stage).stage
    exporter = UrdfExporter(stage, robot_path, keep_leaders=keep_leaders)
    result = exporter.export()
    skipped = getattr(exporter, "_mesh_skipped", 0)
    if skipped:
        result.warnings.append(f"{skipped} mesh prim(s) not written (the URDF keeps primitive shapes only)")
    if out is not None:
        result.out = write_text_atomically(Path(out), result.text)
    return result
