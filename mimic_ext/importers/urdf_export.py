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
from ..schema import joints as J
from ..schema.authoring import read_relations
from ..schema.relation import PHYSX
from ..schema.stage_io import open_stage
from .transforms import AXES, Transform, quat_to_rot, rot_to_rpy
from .usd_writer import FIXED_BASE, GENERATED_KEY, SOURCE_NAME_KEY

WORLD = "world"
EPS = 1e-9


@dataclass
class ExportResult:
    text: str
    warnings: list[str] = field(default_factory=list)
    out: Path | None = None
    joints: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    #: USD joint path -> its URDF joint name, and -> -1 where the URDF joint runs the other way
    #: (its coordinate is minus the USD one), else 1
    joint_paths: dict[str, str] = field(default_factory=dict)
    joint_signs: dict[str, float] = field(default_factory=dict)


def _f32(x: float, scale: float = 1.0) -> str:
    """Shortest decimal whose value, divided by ``scale``, rounds to the same float32."""
    x = float(x)
    if x == 0.0 or not math.isfinite(x):
        return "0" if x == 0.0 else repr(x)
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
    q = [rot.GetReal(), *rot.GetImaginary()]
    return Transform.make(np.array([float(x) for x in pos]), quat_to_rot(q))


def _joint_frames(prim: Usd.Prim, mpu: float) -> tuple[Transform, Transform]:
    j = UsdPhysics.Joint(prim)
    out = []
    for pos_attr, rot_attr in ((j.GetLocalPos0Attr(), j.GetLocalRot0Attr()), (j.GetLocalPos1Attr(), j.GetLocalRot1Attr())):
        pos = pos_attr.Get() if pos_attr.HasAuthoredValue() else (0.0, 0.0, 0.0)
        rot = rot_attr.Get()
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


@dataclass
class _Edge:
    prim: Usd.Prim
    parent: str | None  # body path; None = world
    child: str
    frame0: Transform
    frame1: Transform
    sign: float  # -1 when the USD joint points from child to parent


class UrdfExporter:
    def __init__(self, stage: Usd.Stage, robot_path: str | None = None):
        self.stage = stage
        self.warnings: list[str] = []
        self.mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
        self.root_prim = self._root(robot_path)
        self.xcache = UsdGeom.XformCache()
        self.partial_mass: list[str] = []

    def _root(self, robot_path: str | None) -> Usd.Prim:
        stage = self.stage
        if robot_path:
            prim = stage.GetPrimAtPath(robot_path)
            if not prim:
                raise MimicInputError(f"no prim at {robot_path} in {stage.GetRootLayer().identifier}")
            return prim
        roots = [p for p in stage.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI)]
        default = stage.GetDefaultPrim()
        if default and any(str(r.GetPath()).startswith(str(default.GetPath())) for r in roots):
            return default
        if roots:
            if len(roots) > 1:
                self.warnings.append(f"{len(roots)} articulations; exporting {roots[0].GetPath()} "
                                     "(choose another with robot_path)")
            return roots[0]
        if default:
            return default
        raise MimicInputError(f"{stage.GetRootLayer().identifier}: no articulation to export "
                              "(no ArticulationRootAPI and no default prim)")

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
                self.warnings.append(f"{prim.GetPath()}: a second joint from the world to the same body; "
                                     "URDF is a tree, not written")
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
            self.warnings.append(f"{len(unreached)} body(ies) not connected to {root} by joints, not written: "
                                 + ", ".join(Path(b).name for b in unreached))
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
        names = _UniqueNames()
        order = list(dict.fromkeys([root] + [e.child for e in edges]))
        link_name = {b: names(_source_name(bodies[b])) for b in order}
        has_world = any(e.parent is None for e in edges)
        world_name = names(WORLD) if has_world else None
        link_frame: dict[str, Transform] = {root: Transform.identity()}
        joint_name: dict[str, str] = {}
        sign: dict[str, float] = {}
        kinds: dict[str, str] = {}
        lines = ['<?xml version="1.0"?>',
                 f"<!-- written by mimic_ext from {self.stage.GetRootLayer().realPath or 'an in-memory stage'} -->",
                 f"<robot name={quoteattr(_source_name(self.root_prim))}>"]
        if world_name:
            lines.append(f"  <link name={quoteattr(world_name)}/>")
        joint_lines: list[str] = []
        servo_joints = []
        for e in edges:
            kind = J.joint_kind(e.prim)
            if kind not in (J.REVOLUTE, J.PRISMATIC, J.FIXED):
                raise MimicInputError(f"{e.prim.GetPath()}: a {kind} joint cannot be written as URDF "
                                      "(URDF has revolute, continuous, prismatic and fixed joints)")
            token = UsdPhysics.RevoluteJoint(e.prim).GetAxisAttr().Get() if kind == J.REVOLUTE else \
                UsdPhysics.PrismaticJoint(e.prim).GetAxisAttr().Get() if kind == J.PRISMATIC else "X"
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
            kinds[str(e.prim.GetPath())] = kind
            parent = world_name if e.parent is None else link_name[e.parent]
            limits = J.limits_si(e.prim) if kind != J.FIXED else None
            usd_scale = J.unit_scale(e.prim) if kind != J.FIXED else 1.0
            jtype = {J.FIXED: "fixed", J.PRISMATIC: "prismatic"}.get(kind, "revolute" if limits else "continuous")
            out = [f"  <joint name={quoteattr(name)} type=\"{jtype}\">",
                   f"    <origin xyz=\"{_vec(_clean(origin.p))}\" rpy=\"{_vec(_clean(rot_to_rpy(origin.R)))}\"/>",
                   f"    <parent link={quoteattr(parent)}/>",
                   f"    <child link={quoteattr(link_name[e.child])}/>"]
            if kind != J.FIXED:
                out.append(f"    <axis xyz=\"{_vec(_clean(axis, 1e-7))}\"/>")
                out.extend(self._limit_and_dynamics(e.prim, kind, limits, e.sign, usd_scale, servo_joints, name))
            joint_lines.append(out)
        # relations
        self._mimics(joint_lines, edges, joint_name, sign)
        for b in order:
            lines.extend(self._link(bodies[b], link_name[b], link_frame[b]))
        for out in joint_lines:
            lines.extend(out)
            lines.append("  </joint>")
        lines.append("</robot>")
        if self.partial_mass:
            self.warnings.append("mass without authored centre of mass or inertia (USD computes those from the "
                                 "colliders; written as 0): " + ", ".join(self.partial_mass))
        if servo_joints:
            self.warnings.append("drive stiffness has no URDF equivalent (URDF has no controllers); not written for: "
                                 + ", ".join(servo_joints))
        return ExportResult(text="\n".join(lines) + "\n", warnings=self.warnings,
                            joints=list(joint_name.values()), links=list(link_name.values()),
                            joint_paths=dict(joint_name), joint_signs=dict(sign))

    def _limit_and_dynamics(self, prim, kind, limits, sgn, usd_scale, servo_joints, name) -> list[str]:
        out = []
        drive_name = "angular" if kind == J.REVOLUTE else "linear"
        effort = velocity = None
        damping = 0.0
        if prim.HasAPI(UsdPhysics.DriveAPI, drive_name):
            drive = UsdPhysics.DriveAPI(prim, drive_name)
            mf = drive.GetMaxForceAttr().Get()
            if mf is not None and math.isfinite(mf) and mf > 0 and drive.GetMaxForceAttr().HasAuthoredValue():
                effort = float(mf)
            stiffness = drive.GetStiffnessAttr().Get() or 0.0
            if stiffness > 0:
                servo_joints.append(name)
            damping = (drive.GetDampingAttr().Get() or 0.0) / usd_scale
        cap = J.max_velocity_si(prim)
        if cap is not None:
            velocity = cap
        parts = []
        if limits:
            lo, hi = limits
            if sgn < 0:
                lo, hi = -hi, -lo
            parts += [f"lower=\"{_f32(lo, usd_scale)}\"", f"upper=\"{_f32(hi, usd_scale)}\""]
        parts += [f"effort=\"{_f32(effort) if effort else 0}\"", f"velocity=\"{_f32(velocity, usd_scale) if velocity else 0}\""]
        out.append(f"    <limit {' '.join(parts)}/>")
        friction_attr = prim.GetAttribute("physxJoint:jointFriction")
        friction = float(friction_attr.Get()) if friction_attr and friction_attr.Get() else 0.0
        if damping or friction:
            out.append(f"    <dynamics damping=\"{_f32(damping, 1 / usd_scale)}\" friction=\"{_f32(friction)}\"/>")
        return out

    def _mimics(self, joint_lines, edges, joint_name, sign) -> None:
        relations = [r for r in read_relations(self.stage) if r.follower in joint_name]
        by_follower: dict[str, list] = {}
        for r in relations:
            by_follower.setdefault(r.follower, []).append(r)
        index = {str(e.prim.GetPath()): i for i, e in enumerate(edges)}
        for follower, rels in by_follower.items():
            physx = [r for r in rels if r.schema == PHYSX]
            newton = [r for r in rels if r.schema != PHYSX and r.enabled]
            chosen = (physx or newton)
            if not chosen:
                self.warnings.append(f"{follower}: disabled NewtonMimicAPI relation not written")
                continue
            if len(physx) > 1:
                self.warnings.append(f"{follower}: {len(physx)} PhysxMimicJointAPI instances; URDF keeps one "
                                     f"(instance {physx[0].instance})")
            r = chosen[0]
            if physx and newton and (abs(physx[0].multiplier - newton[0].multiplier) > 1e-6
                                     or abs(physx[0].offset - newton[0].offset) > 1e-6):
                self.warnings.append(f"{follower}: PhysX and Newton relations differ; the PhysX one is written")
            if r.compliant:
                self.warnings.append(f"{follower}: compliant relation written as a hard <mimic> "
                                     "(URDF has no compliance)")
            if r.leader not in joint_name:
                self.warnings.append(f"{follower}: leader {r.leader} is not an exported joint; <mimic> not written")
                continue
            s_f, s_l = sign[follower], sign[r.leader]
            follower_prim = self.stage.GetPrimAtPath(follower)
            leader_prim = self.stage.GetPrimAtPath(r.leader)
            ratio = (J.unit_scale(follower_prim) or 1.0) / (J.unit_scale(leader_prim, r.reference_axis) or 1.0)
            m = s_f * s_l * r.multiplier
            c = s_f * r.offset
            scale_c = J.unit_scale(follower_prim) or 1.0
            joint_lines[index[follower]].append(
                f"    <mimic joint={quoteattr(joint_name[r.leader])} multiplier=\"{_f32(m, ratio)}\" "
                f"offset=\"{_f32(c, scale_c)}\"/>")

    def _link(self, prim: Usd.Prim, name: str, G: Transform) -> list[str]:
        out = [f"  <link name={quoteattr(name)}>"]
        Ginv = G.inverse()
        if prim.HasAPI(UsdPhysics.MassAPI):
            mass_api = UsdPhysics.MassAPI(prim)
            mass = mass_api.GetMassAttr().Get()
            if mass_api.GetMassAttr().HasAuthoredValue() and mass and mass > 0:
                com = np.array(mass_api.GetCenterOfMassAttr().Get() or (0, 0, 0), dtype=float) * self.mpu
                diag = np.array(mass_api.GetDiagonalInertiaAttr().Get() or (0, 0, 0), dtype=float) * self.mpu ** 2
                if not np.all(np.isfinite(com)) or not mass_api.GetDiagonalInertiaAttr().HasAuthoredValue():
                    # USD's fallbacks mean "compute from the colliders": URDF needs numbers
                    self.partial_mass.append(name)
                    com = np.where(np.isfinite(com), com, 0.0)
                pa = mass_api.GetPrincipalAxesAttr().Get()
                Rp = quat_to_rot([pa.GetReal(), *pa.GetImaginary()]) if pa is not None and pa.GetReal() ** 2 + \
                    sum(x * x for x in pa.GetImaginary()) > 0 else np.eye(3)
                tensor = Ginv.R @ Rp @ np.diag(diag) @ Rp.T @ Ginv.R.T
                tiny = 1e-7 * max(float(np.max(np.abs(diag))), 1e-300)
                tensor = np.where(np.abs(tensor) < tiny, 0.0, tensor)
                c = Ginv.apply(com)
                out += ["    <inertial>",
                        f"      <origin xyz=\"{_vec(c)}\" rpy=\"0 0 0\"/>",
                        f"      <mass value=\"{_f32(mass)}\"/>",
                        "      <inertia " + " ".join(f"{k}=\"{_f32(tensor[i, j])}\"" for k, (i, j) in
                                                    (("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)),
                                                     ("iyy", (1, 1)), ("iyz", (1, 2)), ("izz", (2, 2)))) + "/>",
                        "    </inertial>"]
        body_world, _ = _matrix_to_transform(self.xcache.GetLocalToWorldTransform(prim), self.mpu)
        for child in Usd.PrimRange(prim):
            if child == prim:
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
        pose = Ginv * body_world.inverse() * world
        s = scale * self.mpu
        if prim.IsA(UsdGeom.Cube):
            size = float(UsdGeom.Cube(prim).GetSizeAttr().Get())
            shape = f"<box size=\"{_vec(size * s)}\"/>"
        elif prim.IsA(UsdGeom.Sphere):
            shape = f"<sphere radius=\"{_f32(UsdGeom.Sphere(prim).GetRadiusAttr().Get() * s[0])}\"/>"
        elif prim.IsA(UsdGeom.Cylinder) or prim.IsA(UsdGeom.Capsule):
            g = UsdGeom.Cylinder(prim) if prim.IsA(UsdGeom.Cylinder) else UsdGeom.Capsule(prim)
            axis = str(g.GetAxisAttr().Get() or "Z")
            if axis != "Z":
                from .transforms import align
                pose = pose * Transform.make(R=align(AXES["Z"], AXES[axis]))
            tag = "cylinder" if prim.IsA(UsdGeom.Cylinder) else "capsule"
            shape = (f"<{tag} radius=\"{_f32(g.GetRadiusAttr().Get() * s[0])}\" "
                     f"length=\"{_f32(g.GetHeightAttr().Get() * s['XYZ'.index(axis)])}\"/>")
        else:
            if prim.IsA(UsdGeom.Mesh):
                self._mesh_skipped = getattr(self, "_mesh_skipped", 0) + 1
            return None
        kind = "collision" if prim.HasAPI(UsdPhysics.CollisionAPI) else "visual"
        return [f"    <{kind} name={quoteattr(prim.GetName())}>",
                f"      <origin xyz=\"{_vec(_clean(pose.p))}\" rpy=\"{_vec(_clean(rot_to_rpy(pose.R)))}\"/>",
                f"      <geometry>{shape}</geometry>",
                f"    </{kind}>"]


def _source_name(prim: Usd.Prim) -> str:
    """The name as the source file wrote it (kept by the importer when it was not a valid prim name)."""
    return str(prim.GetCustomDataByKey(SOURCE_NAME_KEY) or prim.GetName())


def _clean(v, tiny: float = 1e-9) -> np.ndarray:
    """Round-off (a nanometre, a nanoradian) written as 0."""
    v = np.asarray(v, dtype=float)
    return np.where(np.abs(v) < tiny, 0.0, v)


class _UniqueNames:
    def __init__(self):
        self.used: set[str] = set()

    def __call__(self, name: str) -> str:
        out, k = name, 1
        while out in self.used:
            out, k = f"{name}_{k}", k + 1
        self.used.add(out)
        return out


def export_urdf(stage: Usd.Stage | str | os.PathLike, out: str | os.PathLike | None = None,
                robot_path: str | None = None) -> ExportResult:
    """Write the stage's articulation as URDF (``out`` atomically; None: text only)."""
    if not isinstance(stage, Usd.Stage):
        stage = open_stage(stage).stage
    exporter = UrdfExporter(stage, robot_path)
    result = exporter.export()
    skipped = getattr(exporter, "_mesh_skipped", 0)
    if skipped:
        result.warnings.append(f"{skipped} mesh prim(s) not written (the URDF keeps primitive shapes only)")
    if out is not None:
        result.out = write_text_atomically(Path(out), result.text)
    return result
