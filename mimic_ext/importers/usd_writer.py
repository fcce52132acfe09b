"""``RobotModel`` -> a simulation-ready USD stage (the layout Isaac Sim's importers use).

``/<Robot>`` (defaultPrim, ArticulationRootAPI) holds the bodies as flat Xforms placed at
their world poses, ``/<Robot>/Joints/<joint>`` the joints (loop closures among them,
excluded from the articulation), ``/PhysicsScene`` gravity. Units are converted here and
nowhere else: metres and kilograms stay (metersPerUnit = kilogramsPerUnit = 1); revolute
limits, targets and drive gains go to degrees; mimic relations are authored through
``mimic_ext.schema.set_relation`` from the canonical SI relation, never by writing
attributes. Joint armature, friction and velocity limits are written for both engines
(``physxJoint:*`` and Newton's ``newton:*``); a mimic follower gets no velocity limit (below).
"""

from __future__ import annotations

import math

import numpy as np
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, UsdPhysics

from ..schema import MimicRelation, set_relation
from ..schema.relation import NEWTON, PHYSX
from ..schema.schema_choice import mixed_units
from .model import PRISMATIC, REVOLUTE, SPHERICAL, Closure, Joint, RobotModel, chain_root
from .transforms import Transform
from .usd_pose import quatf, set_frames, set_pose, vec3f
from .usd_shapes import ShapeWriter

DEG = 180.0 / math.pi
#: customData key marking the FixedJoint the importer added to pin a fixed base.
GENERATED_KEY = "mimicExtGenerated"
FIXED_BASE = "fixedBase"
#: customData value marking a massless body between two joints of one MJCF body
CHAIN_LINK = "jointChainLink"
#: customData key keeping a name that was not a valid prim name (exported back as written).
SOURCE_NAME_KEY = "mimicExtSourceName"
#: Newton's joint attributes (newton-usd-schemas, ``NewtonJointAPI`` in generatedSchema.usda)
NEWTON_JOINT_API = "NewtonJointAPI"
NEWTON_JOINT_ATTRS = ("newton:armature", "newton:friction", "newton:velocityLimit")


def _no_self_collisions(root: Usd.Prim) -> None:
    """A URDF says nothing about links colliding with each other and its collision meshes
    overlap at the joints: like Isaac Sim's URDF importer (``self_collision`` off by
    default), the articulation's links do not collide with each other, for PhysX
    (``PhysxArticulationAPI``) and Newton (``NewtonArticulationRootAPI``). PhysX's own
    default (on) makes the Inspire hand's overlapping hulls diverge on the first step."""
    for api, attr in (
        ("PhysxArticulationAPI", "physxArticulation:enabledSelfCollisions"),
        ("NewtonArticulationRootAPI", "newton:selfCollisionEnabled"),
    ):
        root.AddAppliedSchema(api)
        root.CreateAttribute(attr, Sdf.ValueTypeNames.Bool).Set(False)


def _keep_name(prim: Usd.Prim, name: str) -> None:
    if prim.GetName() != name:
        prim.SetCustomDataByKey(SOURCE_NAME_KEY, name)


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
        #: followers whose Newton relation would couple a revolute and a prismatic joint (written for PhysX)
        self.mixed: list[str] = []
        self.names = _Names()
        self.body_paths: dict[str, str] = {}
        self.joint_paths: dict[str, str] = {}
        #: followers whose source velocity limit was not written (``_joint_properties``)
        self.follower_caps_dropped: list[str] = []
        #: leaders whose velocity limit was written for PhysX only
        self.leader_caps_physx_only: list[str] = []
        self._followers = {m.follower for m in model.mimics}
        self._leaders = {m.leader for m in model.mimics}

    @property
    def meshes_left_out(self) -> list[str]:
        return self.shapes.meshes_left_out

    @property
    def mesh_failures(self) -> list[str]:
        return self.shapes.mesh_failures

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
        materials = f"{self.robot}/{self.names(self.robot, 'PhysicsMaterials')}"
        self.names(self.scene, "world_geoms")
        self.shapes = ShapeWriter(stage, self.names, materials, model.format)

        scene = UsdPhysics.Scene.Define(stage, "/PhysicsScene")
        g = np.asarray(model.gravity, dtype=float)
        mag = float(np.linalg.norm(g))
        scene.CreateGravityDirectionAttr(vec3f(g / mag if mag > 0 else (0, 0, -1)))
        scene.CreateGravityMagnitudeAttr(mag)

        for body in model.bodies.values():
            self._body(body)
        for geom in model.world_geoms:
            if not stage.GetPrimAtPath(self.scene):
                UsdGeom.Xform.Define(stage, self.scene)
            self.shapes.write(f"{self.scene}/world_geoms", geom)

        trees_with_world_joint = {model.bodies[j.child].tree for j in model.joints if j.parent is None}
        for joint in model.joints:
            self._joint(joint)
        for closure in model.closures:
            self._closure(closure)
        for tree, root_body in model.roots.items():
            if tree != 0 and any(self.model.bodies[j.child].tree == tree for j in model.joints):
                UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(self.body_paths[root_body]))
            if not model.floating.get(tree) and tree not in trees_with_world_joint:
                self._fix_base(root_body, tree)
        if model.format == "URDF":
            for path in [self.robot] + [self.body_paths[b] for t, b in model.roots.items() if t != 0]:
                prim = stage.GetPrimAtPath(path)
                if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
                    _no_self_collisions(prim)
        for a, b in model.filtered_pairs:
            prim = stage.GetPrimAtPath(self.body_paths[a])
            UsdPhysics.FilteredPairsAPI.Apply(prim).CreateFilteredPairsRel().AddTarget(self.body_paths[b])
        for a, b in model.filtered_geoms:
            pa, pb = self.shapes.geom_paths.get(id(a)), self.shapes.geom_paths.get(id(b))
            if pa and pb:
                prim = stage.GetPrimAtPath(pa)
                UsdPhysics.FilteredPairsAPI.Apply(prim).CreateFilteredPairsRel().AddTarget(pb)
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
        set_pose(xf, body.world)
        prim = xf.GetPrim()
        _keep_name(prim, body.name)
        UsdPhysics.RigidBodyAPI.Apply(prim)
        if body.chain_link:
            prim.SetCustomDataByKey(GENERATED_KEY, CHAIN_LINK)
        if body.inertia is not None:
            mass = UsdPhysics.MassAPI.Apply(prim)
            mass.CreateMassAttr(float(body.inertia.mass))
            mass.CreateCenterOfMassAttr(Gf.Vec3f(*(float(x) for x in body.inertia.com)))
            mass.CreateDiagonalInertiaAttr(vec3f(body.inertia.moments))
            mass.CreatePrincipalAxesAttr(quatf(body.inertia.axes))
        for geom in body.geoms:
            self.shapes.write(f"{path}/{'collisions' if geom.collision else 'visuals'}", geom)

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
        set_frames(j, joint.frame0, joint.frame1)
        prim = j.GetPrim()
        _keep_name(prim, joint.name)
        if joint.kind in (REVOLUTE, PRISMATIC):
            scale = DEG if joint.kind == REVOLUTE else 1.0  # SI -> USD units (metersPerUnit = 1)
            j.CreateAxisAttr(joint.axis)
            if joint.lower is not None and joint.upper is not None:
                j.CreateLowerLimitAttr(joint.lower * scale)
                j.CreateUpperLimitAttr(joint.upper * scale)
            self._drive(prim, joint, scale)
            self._joint_properties(prim, joint, scale)
        elif joint.kind == SPHERICAL:
            j.CreateAxisAttr("X")
            if joint.cone_limit is not None:
                j.CreateConeAngle0LimitAttr(joint.cone_limit * DEG)
                j.CreateConeAngle1LimitAttr(joint.cone_limit * DEG)

    def _closure(self, closure: Closure) -> None:
        """A loop-closing joint: excluded from the articulation (PhysX and Newton then
        enforce it as a maximal-coordinate constraint), like NVIDIA's mujoco-usd-converter."""
        stage = self.stage
        scope = self._joints_scope(self.model.bodies[closure.body0].tree)
        path = f"{scope}/{self.names(scope, closure.name)}"
        self.joint_paths[closure.name] = path
        cls = UsdPhysics.SphericalJoint if closure.kind == SPHERICAL else UsdPhysics.FixedJoint
        j = cls.Define(stage, path)
        j.CreateBody0Rel().SetTargets([Sdf.Path(self.body_paths[closure.body0])])
        if closure.body1 is not None:
            j.CreateBody1Rel().SetTargets([Sdf.Path(self.body_paths[closure.body1])])
        set_frames(j, closure.frame0, closure.frame1)
        j.CreateExcludeFromArticulationAttr(True)
        if closure.kind == SPHERICAL:
            j.CreateAxisAttr("X")
        _keep_name(j.GetPrim(), closure.name)

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

    def _joint_properties(self, prim: Usd.Prim, joint: Joint, scale: float) -> None:
        """Armature, friction and velocity limit for PhysX (``PhysxJointAPI``, also what our
        solver reads) and for Newton (``NewtonJointAPI``), whatever the mimic schema: Newton reads
        only its own attributes, and ovphysx 0.7 applies the Newton ones where it ignores
        ``physxJoint:armature`` (the 2F-85 imported for PhysX alone: with ``physxJoint:armature``
        only, its leader moved 2 deg of 37 on ovphysx and Newton diverged at sample 0; with
        ``newton:armature`` beside it both pass). Both take armature (kg m^2 or kg) and friction
        (N m or N) in SI and the velocity limit in deg/s (revolute) or m/s.

        A mimic follower keeps no velocity limit, as in Isaac Sim's URDF importer
        (isaac-sim/urdf-importer-extension, ``UrdfImporter.cpp`` ``AddSingleJoint``: "velocity
        limit ignored" for a mimic joint): the follower moves at ``multiplier`` times its leader,
        so a cap of its own below ``|multiplier|`` times the leader's makes the relation
        infeasible (the Inspire hand caps every joint at 0.5 rad/s with multipliers up to 1.334:
        PhysX diverged on the first step where it read the cap). The leader's cap bounds the
        follower through the relation. A leader's cap is written as Isaac's importer writes it,
        ``physxJoint:maxJointVelocity`` (which our solver applies), but not as
        ``newton:velocityLimit``: ovphysx 0.7 reads that one as a cap of its own and diverges on
        the first step when it binds a mimic leader (the Inspire hand: with the leaders' 0.5 rad/s
        in ``newton:velocityLimit``, non-finite at sample 0; without it, ratios within 1e-4),
        and Newton's Featherstone does not apply it."""
        velocity = joint.velocity_limit * scale if joint.velocity_limit else None
        newton_velocity = velocity
        if velocity and joint.name in self._followers:
            self.follower_caps_dropped.append(joint.name)
            velocity = newton_velocity = None
        elif velocity and joint.name in self._leaders:
            newton_velocity = None
            self.leader_caps_physx_only.append(joint.name)
        physx_names = ("physxJoint:armature", "physxJoint:jointFriction", "physxJoint:maxJointVelocity")
        engines = [("PhysxJointAPI", physx_names), (NEWTON_JOINT_API, NEWTON_JOINT_ATTRS)]
        for api, names in engines:
            cap = newton_velocity if api == NEWTON_JOINT_API else velocity
            values = {n: v for n, v in zip(names, (joint.armature, joint.friction, cap)) if v}
            if not values:
                continue
            prim.AddAppliedSchema(api)
            for name, value in values.items():
                prim.CreateAttribute(name, Sdf.ValueTypeNames.Float, False).Set(float(value))

    def _fix_base(self, root_body: str, tree: int) -> None:
        scope = self._joints_scope(tree)
        path = f"{scope}/{self.names(scope, 'root_joint')}"
        j = UsdPhysics.FixedJoint.Define(self.stage, path)
        j.CreateBody1Rel().SetTargets([Sdf.Path(self.body_paths[root_body])])
        set_frames(j, self.model.bodies[root_body].world, Transform.identity())
        j.GetPrim().SetCustomDataByKey(GENERATED_KEY, FIXED_BASE)

    # ---------------------------------------------------------------- relations
    def relations(self) -> list[MimicRelation]:
        """PhysX relations as the file writes them (chains stay chains); Newton's flattened
        onto each chain's root, because Newton refuses a leader that is itself a follower
        ("Reference joint .. is already a mimic joint")."""
        out = []
        for schema in self.schemas:
            for mimic in self.model.mimics:
                leader, multiplier, offset = mimic.leader, mimic.multiplier, mimic.offset
                if schema == NEWTON:
                    leader, multiplier, offset = chain_root(self.model.mimics, mimic)
                    if mixed_units(self.stage, self.joint_paths[mimic.follower], self.joint_paths[leader]):
                        self.mixed.append(mimic.follower)
                        schema_here, leader, multiplier, offset = PHYSX, mimic.leader, mimic.multiplier, mimic.offset
                        out.append(self._relate(mimic.follower, leader, multiplier, offset, schema_here))
                        continue
                out.append(self._relate(mimic.follower, leader, multiplier, offset, schema))
        return out

    def _relate(self, follower: str, leader: str, multiplier: float, offset: float, schema: str) -> MimicRelation:
        rel = MimicRelation(
            follower=self.joint_paths[follower],
            leader=self.joint_paths[leader],
            multiplier=float(multiplier),
            offset=float(offset) + 0.0,
            instance="rotX" if schema == PHYSX else None,
            schema=schema,
        )
        set_relation(self.stage, rel)
        return rel


def write_stage(model: RobotModel, schema: str) -> tuple[Usd.Stage, list[MimicRelation], StageWriter]:
    """Build the stage with its relations in ``schema`` ('newton' or 'physx'), one per follower."""
    writer = StageWriter(model, (schema,))
    stage = writer.build()
    return stage, writer.relations(), writer
