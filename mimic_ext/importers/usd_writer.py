"""``RobotModel`` -> a simulation-ready USD stage (the layout Isaac Sim's importers use).

``/<Robot>`` (defaultPrim, ArticulationRootAPI) holds the bodies as flat Xforms placed at
their world poses, ``/<Robot>/Joints/<joint>`` the joints (loop closures among them,
excluded from the articulation), ``/PhysicsScene`` gravity. Units are converted here and
nowhere else: metres and kilograms stay (metersPerUnit = kilogramsPerUnit = 1); revolute
limits, targets and drive gains go to degrees; mimic relations are authored through
``mimic_ext.schema.set_relation`` from the canonical SI relation, never by writing
attributes. Joint armature, friction and velocity limits are written for both engines
(``physxJoint:*`` and Newton's ``newton:*``); a mimic follower gets no velocity limit (below).

What NVIDIA's SimReady checks ask of every revolute and prismatic joint (DJ.002, DJ.004,
DJ.006, NEWTON.DJ.001): a joint state (``PhysicsJointStateAPI:angular|linear``, the file's
configuration in degrees or metres, velocity 0); a drive with its gains authored and a finite
``maxForce`` (the source's effort limit, else ``UNBOUNDED``, which ``export`` reads back as no
limit) on every joint that is not a follower, with position gains from the source or Isaac Sim's
importer defaults (``drive_gains``); and no drive gains on a follower: its stiffness and damping are
carried by its chain's root leader (``_reflected_gains``) and its drive is gainless
(``follower_drives``: DJ.004 and NEWTON.DJ.001 each know only one mimic schema).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from pxr import Gf, Sdf, Tf, Usd, UsdGeom, UsdPhysics

from ..schema import MimicRelation, set_relation
from ..schema.joints import DEFAULT_GAINS_KEY
from ..schema.relation import NEWTON, PHYSX
from ..schema.schema_choice import mixed_units
from .drive_gains import DEFAULT_DAMPING_RATIO, DEFAULT_FREQUENCY, default_gains
from .joint_inertia import moved_inertias
from .model import PRISMATIC, REVOLUTE, SPHERICAL, Closure, Joint, RobotModel, chain_root
from .transforms import Transform
from .usd_pose import quatf, set_frames, set_pose, vec3f
from .usd_shapes import ShapeWriter
from .values import UNBOUNDED

DEG = 180.0 / math.pi
#: customData key marking the FixedJoint the importer added to pin a fixed base.
GENERATED_KEY = "mimicExtGenerated"
FIXED_BASE = "fixedBase"
#: customData value marking a massless body between two joints of one MJCF body
CHAIN_LINK = "jointChainLink"
#: customData key on the Xform of a massless URDF link folded into its parent's body (``urdf._foldable``):
#: the fixed joint it replaced, which ``export`` writes back with the link.
FOLDED_JOINT_KEY = "mimicExtFoldedJoint"
#: customData key keeping a name that was not a valid prim name (exported back as written).
SOURCE_NAME_KEY = "mimicExtSourceName"
#: customData key keeping a joint's own passive damping (SI) where its drive's damping is not
#: that alone (default gains, a follower's damping moved to its leader): exported back as written.
PASSIVE_DAMPING_KEY = "mimicExtPassiveDamping"

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


@dataclass
class _Reflected:
    """What a chain root leader takes over from its followers' drives (SI)."""

    stiffness: float = 0.0
    damping: float = 0.0
    pull: float = 0.0  # sum of stiffness * target, the target's share


def _reflected_gains(model: RobotModel) -> dict[str, _Reflected]:
    """Each chain root leader's share of its followers' drive gains (stiffness, damping).

    A follower held by a hard relation ``q_f = m q_l + c`` moves with its leader, so a spring
    ``k_f (t_f - q_f)`` and a damper ``c_f qd_f`` on it are, through the relation, a spring of
    ``m^2 k_f`` towards ``(t_f - c) / m`` and a damper of ``m^2 c_f`` on the leader: the same
    forces and the same energy. That is where they keep their meaning: PhysX has no joint
    damping outside a drive, and a drive with gains on a follower fights the relation (NVIDIA's
    DJ.004 / DJ.006 refuse it). An MJCF servo on a follower (the wx250s gripper's) thus drives
    the leader, as it drives the mechanism in MuJoCo."""
    out: dict[str, _Reflected] = {}
    for mimic in model.mimics:
        joint = model.joint(mimic.follower)
        if joint is None or not (joint.stiffness or joint.damping):
            continue
        root, multiplier, offset = chain_root(model.mimics, mimic)
        r = out.setdefault(root, _Reflected())
        r.stiffness += multiplier**2 * joint.stiffness
        r.damping += multiplier**2 * joint.damping
        r.pull += multiplier * joint.stiffness * (joint.target - offset)
    return out


class StageWriter:
    def __init__(
        self,
        model: RobotModel,
        schemas: tuple[str, ...],
        drive_frequency: float = DEFAULT_FREQUENCY,
        drive_damping_ratio: float = DEFAULT_DAMPING_RATIO,
    ):
        self.model = model
        self.schemas = schemas
        self.drive_frequency = drive_frequency
        self.drive_damping_ratio = drive_damping_ratio
        #: joints whose position gains are Isaac Sim's importer defaults (the source has none)
        self.default_gains: list[str] = []
        #: followers whose Newton relation would couple a revolute and a prismatic joint (written for PhysX)
        self.mixed: list[str] = []
        self.names = _Names()
        self.body_paths: dict[str, str] = {}
        self.frame_paths: dict[str, str] = {}  # folded links (frames in a body), by link name
        self.joint_paths: dict[str, str] = {}
        #: followers whose source velocity limit was not written (``_joint_properties``)
        self.follower_caps_dropped: list[str] = []
        #: leaders whose velocity limit was written for PhysX only
        self.leader_caps_physx_only: list[str] = []
        self._followers = {m.follower for m in model.mimics}
        self._leaders = {m.leader for m in model.mimics}
        self._roots = {chain_root(model.mimics, m)[0] for m in model.mimics}
        self._reflected = _reflected_gains(model)
        self._moved: dict[int, dict[str, float]] = {}  # tree -> joint -> the inertia it moves (SI)
        #: followers whose drive gains went to their leader (``_reflected_gains``)
        self.gains_reflected: list[str] = [
            m.follower for m in model.mimics if (j := model.joint(m.follower)) and (j.stiffness or j.damping)
        ]

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
        for ga, gb in model.filtered_geoms:
            pa, pb = self.shapes.geom_paths.get(id(ga)), self.shapes.geom_paths.get(id(gb))
            if pa and pb:
                prim = stage.GetPrimAtPath(pa)
                UsdPhysics.FilteredPairsAPI.Apply(prim).CreateFilteredPairsRel().AddTarget(pb)
        return stage

    # ---------------------------------------------------------------- bodies and shapes
    def _parent_of(self, tree: int) -> str:
        return self.robot if tree == 0 else self.scene

    def _body(self, body) -> None:
        if body.frame_of is not None:  # a folded massless link: a frame in its parent link's prim
            up = self.frame_paths.get(body.frame_of) or self.body_paths[body.frame_of]
            path = f"{up}/{self.names(up, body.name)}"
            self.frame_paths[body.name] = path
            xf = UsdGeom.Xform.Define(self.stage, path)
            set_pose(xf, self.model.bodies[body.frame_of].world.inverse() * body.world)
            _keep_name(xf.GetPrim(), body.name)
            xf.GetPrim().SetCustomDataByKey(FOLDED_JOINT_KEY, body.folded_joint)
            for geom in body.geoms:
                self.shapes.write(f"{path}/{'collisions' if geom.collision else 'visuals'}", geom)
            return
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
            self._joint_state(prim, joint, scale)
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

    def _wants_gains(self, joint: Joint) -> bool:
        """A joint the source drives without position gains: every URDF joint (URDF has no
        passive joints; Isaac Sim's importer drives them all) and any chain root leader (an
        MJCF leader driven through a tendon, or by nothing). MJCF joints without an actuator
        stay passive, as the file has them."""
        return self.model.format == "URDF" or joint.name in self._roots

    def _drive(self, prim: Usd.Prim, joint: Joint, scale: float) -> None:
        """Every joint but a follower gets a force drive with its gains authored (the module's
        docstring); a follower's is written after the relations (``follower_drives``)."""
        if joint.name in self._followers:
            return
        stiffness, damping, target = joint.stiffness, joint.damping, joint.target
        taken = self._reflected.get(joint.name)
        if taken is not None:
            pull = stiffness * target + taken.pull
            stiffness += taken.stiffness
            damping += taken.damping
            target = pull / stiffness if stiffness else target
        if stiffness == 0 and self._wants_gains(joint):
            tree = self.model.bodies[joint.child].tree
            if tree not in self._moved:  # every joint's moved inertia, one pass per tree
                self._moved[tree] = moved_inertias(self.model, tree)
            moved = self._moved[tree].get(joint.name, 0.0)
            stiffness, extra = default_gains(moved, self.drive_frequency, self.drive_damping_ratio)
            damping += extra
            target = joint.initial
            self.default_gains.append(joint.name)
            prim.SetCustomDataByKey(DEFAULT_GAINS_KEY, True)
        self._write_drive(prim, joint, scale, stiffness, damping, target)

    def _write_drive(
        self, prim: Usd.Prim, joint: Joint, scale: float, stiffness: float, damping: float, target: float
    ) -> None:
        drive = UsdPhysics.DriveAPI.Apply(prim, "angular" if joint.kind == REVOLUTE else "linear")
        drive.CreateTypeAttr(UsdPhysics.Tokens.force)
        # gains per USD unit: N m/rad -> N m/deg for revolute joints
        drive.CreateStiffnessAttr(stiffness / scale)
        drive.CreateDampingAttr(damping / scale)
        drive.CreateTargetPositionAttr(target * scale)
        drive.CreateTargetVelocityAttr(0.0)
        drive.CreateMaxForceAttr(float(joint.effort_limit) if joint.effort_limit else UNBOUNDED)
        if damping != joint.damping:
            prim.SetCustomDataByKey(PASSIVE_DAMPING_KEY, float(joint.damping))

    def follower_drives(self, relations: list[MimicRelation]) -> None:
        """A gainless drive on each follower: NVIDIA's DJ.004 counts only PhysxMimicJointAPI as a
        mimic and NEWTON.DJ.001 only NewtonMimicAPI, each failing a joint with neither a drive
        nor its own schema; with stiffness and damping 0 the drive applies no force (maxForce
        carries the source's effort limit). On a prismatic PhysX follower DJ.004 / DJ.006 want
        stiffness instead ("PhysX does not enforce linear mimic"), which docs/conventions.md
        answers with what PhysX measurably does."""
        by_path = {path: name for name, path in self.joint_paths.items()}
        for rel in relations:
            joint = self.model.joint(by_path[rel.follower])
            assert joint is not None
            scale = DEG if joint.kind == REVOLUTE else 1.0
            self._write_drive(self.stage.GetPrimAtPath(rel.follower), joint, scale, 0.0, 0.0, joint.initial)

    def _joint_state(self, prim: Usd.Prim, joint: Joint, scale: float) -> None:
        """``PhysicsJointStateAPI``: the file's configuration (degrees or metres), at rest."""
        name = "angular" if joint.kind == REVOLUTE else "linear"
        prim.AddAppliedSchema(f"PhysicsJointStateAPI:{name}")
        prim.CreateAttribute(f"state:{name}:physics:position", Sdf.ValueTypeNames.Float).Set(
            float(joint.initial * scale)
        )
        prim.CreateAttribute(f"state:{name}:physics:velocity", Sdf.ValueTypeNames.Float).Set(0.0)

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


def write_stage(
    model: RobotModel,
    schema: str,
    drive_frequency: float = DEFAULT_FREQUENCY,
    drive_damping_ratio: float = DEFAULT_DAMPING_RATIO,
) -> tuple[Usd.Stage, list[MimicRelation], StageWriter]:
    """Build the stage with its relations in ``schema`` ('newton' or 'physx'), one per follower;
    joints without position gains get Isaac Sim's importer defaults at these settings."""
    writer = StageWriter(model, (schema,), drive_frequency, drive_damping_ratio)
    stage = writer.build()
    relations = writer.relations()
    writer.follower_drives(relations)
    return stage, relations, writer
