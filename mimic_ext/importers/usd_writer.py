"""``RobotModel`` -> a simulation-ready USD stage (the layout Isaac Sim's importers use).

``/<Robot>`` (defaultPrim, ArticulationRootAPI) holds the bodies as flat Xforms placed at
their world poses, ``/<Robot>/Joints/<joint>`` the joints, ``/PhysicsScene`` gravity.
Units are converted here and nowhere else: metres and kilograms stay (metersPerUnit =
kilogramsPerUnit = 1); revolute limits, targets and drive gains go to degrees; mimic
relations are authored through ``mimic_ext.schema.set_relation`` from the canonical SI
relation, never by writing attributes.
"""

from __future__ import annotations

import math

import numpy as np
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, UsdPhysics

from ..schema import MimicRelation, set_relation
from ..schema.relation import NEWTON, PHYSX
from . import meshes
from .model import PRISMATIC, REVOLUTE, SPHERICAL, Geom, Joint, RobotModel
from .transforms import Transform, rot_to_quat

DEG = 180.0 / math.pi
#: customData key marking the FixedJoint the importer added to pin a fixed base.
GENERATED_KEY = "mimicExtGenerated"
FIXED_BASE = "fixedBase"
#: customData key keeping a name that was not a valid prim name (exported back as written).
SOURCE_NAME_KEY = "mimicExtSourceName"


def _keep_name(prim: Usd.Prim, name: str) -> None:
    if prim.GetName() != name:
        prim.SetCustomDataByKey(SOURCE_NAME_KEY, name)


def _quatf(R) -> Gf.Quatf:
    w, x, y, z = rot_to_quat(R)
    return Gf.Quatf(float(w), Gf.Vec3f(float(x), float(y), float(z)))


def _quatd(R) -> Gf.Quatd:
    w, x, y, z = [0.0 if abs(c) < 1e-12 else c for c in rot_to_quat(R)]
    return Gf.Quatd(float(w), Gf.Vec3d(float(x), float(y), float(z)))


def _vec3f(v) -> Gf.Vec3f:
    return Gf.Vec3f(*(float(x) for x in v))


class _Names:
    """Valid, unique prim names per parent (USD names are identifiers)."""

    def __init__(self):
        self.used: dict[str, set[str]] = {}

    def __call__(self, parent: str, name: str) -> str:
        base = Tf.MakeValidIdentifier(name) if name else "unnamed"
        used = self.used.setdefault(parent, set())
        out, k = base, 1
        while out in used:
            out, k = f"{base}_{k}", k + 1
        used.add(out)
        return out


class StageWriter:
    def __init__(self, model: RobotModel, schemas: tuple[str, ...]):
        self.model = model
        self.schemas = schemas
        self.names = _Names()
        self.body_paths: dict[str, str] = {}
        self.joint_paths: dict[str, str] = {}
        self.meshes_left_out: list[str] = []
        self.mesh_failures: list[str] = []
        self.lib = meshes.mesh_library()

    def build(self) -> Usd.Stage:
        model = self.model
        stage = Usd.Stage.CreateInMemory(f"{Tf.MakeValidIdentifier(model.name)}.usda")
        self.stage = stage
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
        robot_name = self.names("/", model.name)
        self.names("/", "PhysicsScene")
        scene_name = self.names("/", "Scene")
        self.robot = f"/{robot_name}"
        root = UsdGeom.Xform.Define(stage, self.robot).GetPrim()
        stage.SetDefaultPrim(root)
        _keep_name(root, model.name)
        UsdPhysics.ArticulationRootAPI.Apply(root)
        self.scene = f"/{scene_name}"
        for parent in (self.robot, self.scene):  # keep these names free of bodies
            self.names(parent, "Joints")
        self.names(self.scene, "world_geoms")

        scene = UsdPhysics.Scene.Define(stage, "/PhysicsScene")
        g = np.asarray(model.gravity, dtype=float)
        mag = float(np.linalg.norm(g))
        scene.CreateGravityDirectionAttr(_vec3f(g / mag if mag > 0 else (0, 0, -1)))
        scene.CreateGravityMagnitudeAttr(mag)

        for body in model.bodies.values():
            self._body(body)
        for geom in model.world_geoms:
            if not stage.GetPrimAtPath(self.scene):
                UsdGeom.Xform.Define(stage, self.scene)
            self._geom(f"{self.scene}/world_geoms", geom)

        trees_with_world_joint = {model.bodies[j.child].tree for j in model.joints if j.parent is None}
        for joint in model.joints:
            self._joint(joint)
        for tree, root_body in model.roots.items():
            if tree != 0 and any(self.model.bodies[j.child].tree == tree for j in model.joints):
                UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(self.body_paths[root_body]))
            if not model.floating.get(tree) and tree not in trees_with_world_joint:
                self._fix_base(root_body, tree)
        for a, b in model.filtered_pairs:
            prim = stage.GetPrimAtPath(self.body_paths[a])
            UsdPhysics.FilteredPairsAPI.Apply(prim).CreateFilteredPairsRel().AddTarget(self.body_paths[b])
        return stage

    # ---------------------------------------------------------------- bodies and shapes
    def _parent_of(self, tree: int) -> str:
        return self.robot if tree == 0 else self.scene

    def _body(self, body) -> None:
        parent = self._parent_of(body.tree)
        if body.tree != 0 and not self.stage.GetPrimAtPath(parent):
            UsdGeom.Xform.Define(self.stage, parent)
        path = f"{parent}/{self.names(parent, body.name)}"
        self.body_paths[body.name] = path
        xf = UsdGeom.Xform.Define(self.stage, path)
        _set_pose(xf, body.world)
        prim = xf.GetPrim()
        _keep_name(prim, body.name)
        UsdPhysics.RigidBodyAPI.Apply(prim)
        if body.inertia is not None:
            mass = UsdPhysics.MassAPI.Apply(prim)
            mass.CreateMassAttr(float(body.inertia.mass))
            mass.CreateCenterOfMassAttr(Gf.Vec3f(*(float(x) for x in body.inertia.com)))
            mass.CreateDiagonalInertiaAttr(_vec3f(body.inertia.moments))
            mass.CreatePrincipalAxesAttr(_quatf(body.inertia.axes))
        for geom in body.geoms:
            self._geom(f"{path}/{'collisions' if geom.collision else 'visuals'}", geom)

    def _geom(self, scope: str, geom: Geom) -> None:
        stage = self.stage
        if geom.shape == "mesh":
            if geom.mesh_file is None:
                return  # reported as unresolved by the reader
            if self.lib is None:
                self.meshes_left_out.append(str(geom.mesh_ref))
                return
            try:
                points, faces = meshes.load_mesh(geom.mesh_file, geom.size)
            except Exception as exc:  # any parser failure leaves the mesh out, with the reason
                self.mesh_failures.append(f"{geom.mesh_ref} ({type(exc).__name__}: {exc})")
                return
        if not stage.GetPrimAtPath(scope):
            UsdGeom.Xform.Define(stage, scope)
        path = f"{scope}/{self.names(scope, geom.name)}"
        s = geom.size
        if geom.shape == "box":
            g = UsdGeom.Cube.Define(stage, path)
            g.CreateSizeAttr(1.0)
            g.CreateExtentAttr([(-0.5, -0.5, -0.5), (0.5, 0.5, 0.5)])
        elif geom.shape == "sphere":
            g = UsdGeom.Sphere.Define(stage, path)
            g.CreateRadiusAttr(float(s[0]))
            g.CreateExtentAttr([(-s[0],) * 3, (s[0],) * 3])
        elif geom.shape in ("cylinder", "capsule"):
            cls = UsdGeom.Cylinder if geom.shape == "cylinder" else UsdGeom.Capsule
            g = cls.Define(stage, path)
            r, h = float(s[0]), float(s[1])
            g.CreateRadiusAttr(r)
            g.CreateHeightAttr(h)
            g.CreateAxisAttr(UsdGeom.Tokens.z)
            cap = r if geom.shape == "capsule" else 0.0
            g.CreateExtentAttr([(-r, -r, -h / 2 - cap), (r, r, h / 2 + cap)])
        elif geom.shape == "plane":
            g = UsdGeom.Plane.Define(stage, path)
            g.CreateAxisAttr(UsdGeom.Tokens.z)
            if s[0] > 0 and s[1] > 0:
                g.CreateWidthAttr(2 * float(s[0]))
                g.CreateLengthAttr(2 * float(s[1]))
        else:  # mesh
            g = UsdGeom.Mesh.Define(stage, path)
            g.CreatePointsAttr([Gf.Vec3f(*map(float, p)) for p in points])
            g.CreateFaceVertexCountsAttr([3] * len(faces))
            g.CreateFaceVertexIndicesAttr([int(i) for i in faces.reshape(-1)])
            g.CreateExtentAttr([_vec3f(points.min(axis=0)), _vec3f(points.max(axis=0))])
        _set_pose(g, geom.pose, scale=s if geom.shape == "box" else None)
        if geom.collision:
            UsdPhysics.CollisionAPI.Apply(g.GetPrim())
            if geom.shape == "mesh":
                UsdPhysics.MeshCollisionAPI.Apply(g.GetPrim()).CreateApproximationAttr(UsdPhysics.Tokens.convexHull)
            if self.model.format == "URDF":
                g.CreatePurposeAttr(UsdGeom.Tokens.guide)

    # ---------------------------------------------------------------- joints
    def _joints_scope(self, tree: int) -> str:
        scope = f"{self._parent_of(tree)}/Joints"
        if not self.stage.GetPrimAtPath(scope):
            UsdGeom.Scope.Define(self.stage, scope)
        return scope

    def _joint(self, joint: Joint) -> None:
        stage = self.stage
        tree = self.model.bodies[joint.child].tree
        scope = self._joints_scope(tree)
        path = f"{scope}/{self.names(scope, joint.name)}"
        self.joint_paths[joint.name] = path
        if joint.kind == REVOLUTE:
            j = UsdPhysics.RevoluteJoint.Define(stage, path)
        elif joint.kind == PRISMATIC:
            j = UsdPhysics.PrismaticJoint.Define(stage, path)
        elif joint.kind == SPHERICAL:
            j = UsdPhysics.SphericalJoint.Define(stage, path)
        else:
            j = UsdPhysics.FixedJoint.Define(stage, path)
        if joint.parent is not None:
            j.CreateBody0Rel().SetTargets([Sdf.Path(self.body_paths[joint.parent])])
        j.CreateBody1Rel().SetTargets([Sdf.Path(self.body_paths[joint.child])])
        _set_frames(j, joint.frame0, joint.frame1)
        prim = j.GetPrim()
        _keep_name(prim, joint.name)
        if joint.kind in (REVOLUTE, PRISMATIC):
            scale = DEG if joint.kind == REVOLUTE else 1.0  # SI -> USD units (metersPerUnit = 1)
            j.CreateAxisAttr(joint.axis)
            if joint.lower is not None and joint.upper is not None:
                j.CreateLowerLimitAttr(joint.lower * scale)
                j.CreateUpperLimitAttr(joint.upper * scale)
            self._drive(prim, joint, scale)
            self._physx_joint(prim, joint, scale)
        elif joint.kind == SPHERICAL:
            j.CreateAxisAttr("X")
            if joint.cone_limit is not None:
                j.CreateConeAngle0LimitAttr(joint.cone_limit * DEG)
                j.CreateConeAngle1LimitAttr(joint.cone_limit * DEG)

    def _drive(self, prim: Usd.Prim, joint: Joint, scale: float) -> None:
        if not (joint.stiffness > 0 or joint.damping > 0 or joint.effort_limit):
            return
        drive = UsdPhysics.DriveAPI.Apply(prim, "angular" if joint.kind == REVOLUTE else "linear")
        drive.CreateTypeAttr(UsdPhysics.Tokens.force)
        # gains per USD unit: N m/rad -> N m/deg for revolute joints
        drive.CreateStiffnessAttr(joint.stiffness / scale)
        drive.CreateDampingAttr(joint.damping / scale)
        drive.CreateTargetPositionAttr(joint.target * scale)
        drive.CreateTargetVelocityAttr(0.0)
        if joint.effort_limit:
            drive.CreateMaxForceAttr(float(joint.effort_limit))

    def _physx_joint(self, prim: Usd.Prim, joint: Joint, scale: float) -> None:
        values = {"physxJoint:armature": joint.armature, "physxJoint:jointFriction": joint.friction}
        if joint.velocity_limit:
            values["physxJoint:maxJointVelocity"] = joint.velocity_limit * scale
        values = {k: v for k, v in values.items() if v}
        if not values:
            return
        prim.AddAppliedSchema("PhysxJointAPI")
        for name, value in values.items():
            prim.CreateAttribute(name, Sdf.ValueTypeNames.Float, False).Set(float(value))

    def _fix_base(self, root_body: str, tree: int) -> None:
        scope = self._joints_scope(tree)
        path = f"{scope}/{self.names(scope, 'root_joint')}"
        j = UsdPhysics.FixedJoint.Define(self.stage, path)
        j.CreateBody1Rel().SetTargets([Sdf.Path(self.body_paths[root_body])])
        _set_frames(j, self.model.bodies[root_body].world, Transform.identity())
        j.GetPrim().SetCustomDataByKey(GENERATED_KEY, FIXED_BASE)

    # ---------------------------------------------------------------- relations
    def relations(self) -> list[MimicRelation]:
        out = []
        for schema in self.schemas:
            for mimic in self.model.mimics:
                rel = MimicRelation(follower=self.joint_paths[mimic.follower], leader=self.joint_paths[mimic.leader],
                                    multiplier=float(mimic.multiplier), offset=float(mimic.offset) + 0.0,
                                    instance="rotX" if schema == PHYSX else None, schema=schema)
                set_relation(self.stage, rel)
                out.append(rel)
        return out


def _tidy(v) -> list[float]:
    """Round-off below 1e-12 (e.g. cos 90 deg = 6e-17) written as 0, for readable files."""
    return [0.0 if abs(x) < 1e-12 else float(x) for x in v]


def _set_pose(xformable, pose: Transform, scale=None) -> None:
    xformable.ClearXformOpOrder()
    xformable.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*_tidy(pose.p)))
    xformable.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(_quatd(pose.R))
    if scale is not None:
        xformable.AddScaleOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*(float(x) for x in scale)))


def _set_frames(joint, frame0: Transform, frame1: Transform) -> None:
    joint.CreateLocalPos0Attr(_vec3f(frame0.p))
    joint.CreateLocalRot0Attr(_quatf(frame0.R))
    joint.CreateLocalPos1Attr(_vec3f(frame1.p))
    joint.CreateLocalRot1Attr(_quatf(frame1.R))


def write_stage(model: RobotModel, schema: str) -> tuple[Usd.Stage, list[MimicRelation], StageWriter]:
    """Build the stage for ``schema`` ('physx', 'newton' or 'both')."""
    schemas = (PHYSX, NEWTON) if schema == "both" else (schema,)
    writer = StageWriter(model, schemas)
    stage = writer.build()
    return stage, writer.relations(), writer
