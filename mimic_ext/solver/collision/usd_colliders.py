"""USD stage -> colliders, free bodies and collision filters, in SI units (run once).

What is read, and the rule each follows:

- ``UsdPhysics.CollisionAPI`` on ``UsdGeom`` Cube, Sphere, Capsule, Cylinder, Plane
  (infinite, as PhysX treats it) and Mesh; ``physics:collisionEnabled = false`` drops
  the collider. A collider belongs to its nearest ancestor-or-self ``RigidBodyAPI``
  prim; without one, or when that body is disabled, kinematic or welded to the world, it
  is static.
- Meshes become convex hulls: ``MeshCollisionAPI`` approximation ``convexHull``
  silently, any other (or none authored) with a warning, as PhysX does for dynamic
  bodies; ``physxConvexHullCollision:hullVertexLimit`` (default 64) caps the vertices.
  Every ``physx*`` attribute counts only where its PhysX API is applied, as PhysX reads them
  (else a note says it is ignored).
- Transforms relative to the body (its frame without scale); all scale is baked into
  sizes and hull points. Spheres take the largest scale, capsules and cylinders the
  largest cross-axis scale, with a warning when the scale is not uniform there.
- Offsets: ``physxCollision:contactOffset`` / ``restOffset`` (stage units); unauthored
  (``-inf``) as omni.physx computes them: rest 0, contact
  ``max(2 dt^2 max(g, 1), 0.02 * smallest local extent)`` plus a positive rest offset,
  with ``dt = 1 / physxScene:timeStepsPerSecond`` (default 60). Newton's
  ``newton:contactMargin`` / ``contactGap`` are read when no PhysX value is authored.
- Materials: ``material:binding:physics`` resolved on the collider (which inherits from
  its ancestors), then on the body, then the material bound to the physics scene, else
  PhysX's default (0.5, 0.5, 0). ``physxMaterial:*CombineMode`` (default average).
- The physics scene's ``physxScene:bounceThreshold`` (stage units per second; default 0, the
  schema's): contacts approaching slower do not bounce.
- Collision groups (``UsdPhysics.CollisionGroup``: ``colliders`` collection,
  ``filteredGroups``, ``invertFilteredGroups``, merge groups) through
  ``UsdPhysics.CollisionGroup.ComputeCollisionGroupTable``; ``FilteredPairsAPI`` on
  colliders, bodies and articulations; joints with ``physics:collisionEnabled = false``
  (the default) keep their two bodies apart; ``physxArticulation:enabledSelfCollisions
  = false`` keeps an articulation's links apart.
- Free bodies: enabled, non-kinematic rigid bodies that no enabled joint connects.
"""

from __future__ import annotations

import math
import warnings as _warnings

import numpy as np
from pxr import Usd, UsdGeom, UsdPhysics, UsdShade

from ...errors import MimicInputError
from ...math3d import transform
from ...schema import joints as J
from ..stage_reader import DEFAULT_MASS, DEFAULT_RADIUS, _attr, _body_mass, _gravity, applied_attr, world_pose
from .hull import DEFAULT_VERTEX_LIMIT, FlatHullError, convex_hull
from .shapes import COMBINE_MODES, CollisionSpec, FreeBody, MaterialSpec, ShapeSpec

DEFAULT_STEPS_PER_SECOND = 60.0
#: m/s: ``physxScene:bounceThreshold`` unauthored, PhysxSchema's fallback (physx-usd-schemas 25.11:
#: 0; real PhysX through ovphysx then bounces at any approach speed, tests/test_contact_restitution.py)
DEFAULT_BOUNCE_THRESHOLD = 0.0

_GEOMS = (
    (UsdGeom.Cube, "box"),
    (UsdGeom.Sphere, "sphere"),
    (UsdGeom.Capsule, "capsule"),
    (UsdGeom.Cylinder, "cylinder"),
    (UsdGeom.Plane, "plane"),
    (UsdGeom.Mesh, "hull"),
)
# columns taking the shape's z to the authored axis (right-handed)
_AXIS_PERM = {
    "X": np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]], float),
    "Y": np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], float),
    "Z": np.eye(3),
}
_AXIS_INDEX = {"X": (1, 2, 0), "Y": (2, 0, 1), "Z": (0, 1, 2)}  # (cross, cross, along)


def _finite(x) -> bool:
    return x is not None and math.isfinite(float(x))


def _matrix(prim: Usd.Prim, mpu: float) -> np.ndarray:
    """Local-to-world of a prim, column-vector convention, translation in metres."""
    m = np.array(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default()), float).T
    m[:3, 3] *= mpu
    return m


def _rotation_scale(a: np.ndarray, path: str, notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Split a linear map into a rotation and per-axis scales (mirroring dropped)."""
    s = np.linalg.norm(a, axis=0)
    if np.any(s <= 0):
        raise MimicInputError(f"{path}: collider has a zero scale; give it a nonzero size")
    r = a / s
    if not np.allclose(r.T @ r, np.eye(3), atol=1e-6):
        notes.append(f"{path}: sheared transform; the collider uses the nearest rotation")
        u, _, vt = np.linalg.svd(r)
        r = u @ vt
    if np.linalg.det(r) < 0:
        r[:, 0] = -r[:, 0]
    return r, s


def _size(prim, attr: str, default: float, mpu: float) -> float:
    v = prim.GetAttribute(attr).Get()
    v = default if v is None else float(v)
    if not math.isfinite(v) or v < 0:
        raise MimicInputError(f"{prim.GetPath()}: {attr} = {v}; it must be a finite, non-negative size")
    return v * mpu


class _Reader:
    def __init__(self, stage: Usd.Stage, dynamic: set[str], ground_plane):
        self.stage = stage
        self.dynamic = dynamic  # bodies a Model simulates (articulation links)
        self.ground = ground_plane
        self.mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
        if not self.mpu > 0 or not math.isfinite(self.mpu):
            raise MimicInputError(f"{stage.GetRootLayer().identifier}: metersPerUnit must be positive")
        self.kgpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
        self.notes: list[str] = []
        self.g = float(np.linalg.norm(_gravity(stage, self.mpu)))
        self.dt = 1.0 / DEFAULT_STEPS_PER_SECOND
        self.bounce_threshold = DEFAULT_BOUNCE_THRESHOLD
        self.scene_material = MaterialSpec()
        self.bodies: dict[str, Usd.Prim] = {}
        self.inactive: set[str] = set()  # disabled or kinematic bodies (static for contacts)
        self.jointed: set[str] = set()
        self.joint_pairs: list[tuple[str, str]] = []  # kept apart (collisionEnabled false)
        self.links: dict[str, str] = {}  # body -> union-find parent over joints
        self.roots: list[Usd.Prim] = []
        self.colliders: list[Usd.Prim] = []
        self.groups: list[tuple[str, Usd.CollectionMembershipQuery]] = []
        self.filters: list[tuple[str, list[str]]] = []

    # ---- one pass over the stage ----------------------------------------------------------
    def scan(self) -> None:
        for prim in self.stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
            path = str(prim.GetPath())
            if prim.IsA(UsdPhysics.Scene):
                sps = self._applied_attr(
                    prim,
                    "PhysxSceneAPI",
                    "physxScene:timeStepsPerSecond",
                    f"{DEFAULT_STEPS_PER_SECOND:g} steps per second",
                )
                if _finite(sps) and sps > 0:
                    self.dt = 1.0 / float(sps)
                self.bounce_threshold = self._bounce_threshold(prim)
                mat = self._bound_material(prim)
                if mat is not None:
                    self.scene_material = mat
            if prim.HasAPI(UsdPhysics.RigidBodyAPI):
                rb = UsdPhysics.RigidBodyAPI(prim)
                self.bodies[path] = prim
                if rb.GetRigidBodyEnabledAttr().Get() is False or rb.GetKinematicEnabledAttr().Get():
                    self.inactive.add(path)
            if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
                self.roots.append(prim)
            if J.joint_kind(prim) is not None:
                joint = UsdPhysics.Joint(prim)
                if joint.GetJointEnabledAttr().Get() is not False:
                    b0, b1 = J.joint_bodies(prim)
                    self.jointed.update(b for b in (b0, b1) if b)
                    if b0 and b1:
                        self.join(b0, b1)
                        if not joint.GetCollisionEnabledAttr().Get():
                            self.joint_pairs.append((b0, b1))
            if prim.IsA(UsdPhysics.CollisionGroup):
                group = UsdPhysics.CollisionGroup(prim)
                self.groups.append((path, group.GetCollidersCollectionAPI().ComputeMembershipQuery()))
            if prim.HasAPI(UsdPhysics.FilteredPairsAPI):
                targets = UsdPhysics.FilteredPairsAPI(prim).GetFilteredPairsRel().GetTargets()
                self.filters.append((path, [str(t) for t in targets]))
            if prim.HasAPI(UsdPhysics.CollisionAPI):
                self.colliders.append(prim)

    def _bounce_threshold(self, scene: Usd.Prim) -> float:
        """The scene's ``physxScene:bounceThreshold`` in m/s (stage units per second in USD)."""
        v = self._applied_attr(scene, "PhysxSceneAPI", "physxScene:bounceThreshold", "0")
        if v is None:
            return DEFAULT_BOUNCE_THRESHOLD
        v = float(v)
        if not math.isfinite(v) or v < 0:
            raise MimicInputError(
                f"{scene.GetPath()}: physxScene:bounceThreshold = {v}; it must be a finite "
                f"speed >= 0 (stage units per second)"
            )
        return v * self.mpu

    def find(self, b: str) -> str:
        while self.links.get(b, b) != b:
            b = self.links[b]
        return b

    def join(self, a: str, b: str) -> None:
        self.links.setdefault(a, a)
        self.links.setdefault(b, b)
        self.links[self.find(a)] = self.find(b)

    def articulation(self, root: str) -> list[str]:
        """Bodies an articulation root prim stands for: the bodies joined to it (when it is
        a body) and the bodies under it."""
        mine = self.find(root) if root in self.links else None
        return [
            b
            for b in self.bodies
            if (mine is not None and b in self.links and self.find(b) == mine) or b == root or b.startswith(root + "/")
        ]

    def owner(self, prim: Usd.Prim) -> str | None:
        p = prim
        while p and p.IsValid() and not p.IsPseudoRoot():
            if str(p.GetPath()) in self.bodies:
                return str(p.GetPath())
            p = p.GetParent()
        return None

    def is_free(self, body: str) -> bool:
        return body not in self.dynamic and body not in self.inactive and body not in self.jointed

    def moves(self, body: str | None) -> bool:
        return body is not None and (body in self.dynamic or self.is_free(body))

    # ---- materials --------------------------------------------------------------------------
    def _bound_material(self, prim: Usd.Prim) -> MaterialSpec | None:
        mat, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial("physics")
        if not mat or not mat.GetPrim().HasAPI(UsdPhysics.MaterialAPI):
            return None
        mp = mat.GetPrim()
        api = UsdPhysics.MaterialAPI(mp)
        vals = []
        for name, get in (
            ("staticFriction", api.GetStaticFrictionAttr),
            ("dynamicFriction", api.GetDynamicFrictionAttr),
            ("restitution", api.GetRestitutionAttr),
        ):
            v = get().Get()
            v = 0.0 if v is None else float(v)
            if not math.isfinite(v) or v < 0 or (name == "restitution" and v > 1):
                raise MimicInputError(
                    f"{mp.GetPath()}: physics:{name} = {v}; friction must be finite and >= 0, restitution in [0, 1]"
                )
            vals.append(v)
        modes = []
        for name in ("physxMaterial:frictionCombineMode", "physxMaterial:restitutionCombineMode"):
            m = self._applied_attr(mp, "PhysxMaterialAPI", name, "average")
            m = "average" if m is None else str(m)
            if m not in COMBINE_MODES:
                raise MimicInputError(f"{mp.GetPath()}: {name} = {m!r}; use one of {', '.join(COMBINE_MODES)}")
            modes.append(m)
        return MaterialSpec(vals[0], vals[1], vals[2], modes[0], modes[1], path=str(mp.GetPath()))

    def _applied_attr(self, prim: Usd.Prim, api: str, name: str, instead: str):
        """``stage_reader.applied_attr`` into this reader's notes: PhysX reads its attributes only
        where the API is applied (measured on ovphysx for the material combine modes, the
        collision offsets and the scene's bounce threshold, tests/test_contact_restitution.py,
        and an articulation's self-collision switch, tests/test_contact_fet022.py)."""
        return applied_attr(prim, api, name, instead, self.notes)

    def material(self, prim: Usd.Prim, body: str | None) -> MaterialSpec:
        for p in (prim, self.bodies.get(body) if body else None):
            if p is not None:
                m = self._bound_material(p)
                if m is not None:
                    return m
        return self.scene_material

    # ---- offsets ------------------------------------------------------------------------------
    def offsets(self, prim: Usd.Prim, half: np.ndarray) -> tuple[float, float]:
        path = prim.GetPath()
        rest = self._applied_attr(prim, "PhysxCollisionAPI", "physxCollision:restOffset", "the default")
        contact = self._applied_attr(prim, "PhysxCollisionAPI", "physxCollision:contactOffset", "the default")
        if not _finite(rest) and not _finite(contact):
            margin, gap = _attr(prim, "newton:contactMargin"), _attr(prim, "newton:contactGap")
            if _finite(margin):
                rest = margin
            if _finite(gap):
                contact = (float(margin) if _finite(margin) else 0.0) + float(gap)
        rest = float(rest) * self.mpu if _finite(rest) else 0.0
        if _finite(contact):
            contact = float(contact) * self.mpu
            if contact < 0:
                raise MimicInputError(f"{path}: physxCollision:contactOffset = {contact}; it must be >= 0")
        else:
            ext = 2.0 * half[np.isfinite(half)]
            contact = max(2.0 * self.dt * self.dt * max(self.g, 1.0), 0.02 * float(ext.min()) if ext.size else 0.0)
            if rest > 0:
                contact += rest
        if contact <= rest:  # PhysX then keeps no rest offset (measured on ovphysx: the shape rests at 0)
            self.notes.append(
                f"{path}: contact offset {contact:g} m is not above the rest offset {rest:g} m, "
                f"which PhysX requires; like PhysX, the rest offset is ignored (0)"
            )
            rest = 0.0
            if contact <= 0.0:
                contact = 1e-4
        return contact, rest

    # ---- one collider -------------------------------------------------------------------------
    def shape(self, prim: Usd.Prim) -> ShapeSpec | None:
        path = str(prim.GetPath())
        kind = next((k for schema, k in _GEOMS if prim.IsA(schema)), None)
        if kind is None:
            self.notes.append(
                f"{path}: CollisionAPI on a {prim.GetTypeName() or 'typeless prim'} is not "
                f"supported (Cube, Sphere, Capsule, Cylinder, Plane, Mesh); ignored"
            )
            return None
        if UsdPhysics.CollisionAPI(prim).GetCollisionEnabledAttr().Get() is False:
            return None
        if kind == "hull":
            pts = UsdGeom.Mesh(prim).GetPointsAttr().Get()
            if pts is None or len(pts) == 0:  # a mesh whose payload is missing: nothing to collide with
                self.notes.append(f"{path}: mesh collider has no points (a missing mesh payload?); ignored")
                return None
        body = self.owner(prim)
        dynamic = self.moves(body)
        m = _matrix(prim, self.mpu)
        if dynamic:
            assert body is not None  # moves(None) is False
            m = np.linalg.inv(world_pose(self.bodies[body], self.mpu)) @ m
        r, s = _rotation_scale(m[:3, :3], path, self.notes)
        t = m[:3, 3]
        size = np.zeros(3)
        hull = None
        if kind == "box":
            size = 0.5 * _size(prim, "size", 2.0, self.mpu) * s
        elif kind == "sphere":
            if s.max() - s.min() > 1e-6 * s.max():
                self.notes.append(
                    f"{path}: non-uniform scale ({', '.join(f'{x:g}' for x in s)}) on a sphere; using the largest"
                )
            size[0] = _size(prim, "radius", 1.0, self.mpu) * s.max()
        elif kind in ("capsule", "cylinder", "plane"):
            axis = str(prim.GetAttribute("axis").Get() or "Z")
            if axis not in _AXIS_PERM:
                raise MimicInputError(f"{path}: axis {axis!r}; use X, Y or Z")
            c1, c2, along = _AXIS_INDEX[axis]
            r = r @ _AXIS_PERM[axis]
            if kind != "plane":
                if abs(s[c1] - s[c2]) > 1e-6 * max(s[c1], s[c2]):
                    self.notes.append(f"{path}: non-uniform scale across the {kind}'s axis; using the larger")
                rad = _size(prim, "radius", 0.5 if kind == "capsule" else 1.0, self.mpu) * max(s[c1], s[c2])
                height = _size(prim, "height", 1.0 if kind == "capsule" else 2.0, self.mpu) * s[along]
                size[0], size[1] = rad, 0.5 * height
        else:
            hull, r, t = self.mesh_hull(prim, m)
        pose = transform(r, t)
        spec = ShapeSpec(
            path=path,
            kind=kind,
            body=body,
            static=not dynamic,
            pose=pose,
            size=size,
            contact_offset=0.0,
            rest_offset=0.0,
            material=self.material(prim, body),
            hull=hull,
        )
        spec.contact_offset, spec.rest_offset = self.offsets(prim, spec.local_bounds()[1])
        return spec

    def mesh_hull(self, prim: Usd.Prim, m: np.ndarray):
        path = prim.GetPath()
        approx = "none"
        if prim.HasAPI(UsdPhysics.MeshCollisionAPI):
            approx = str(UsdPhysics.MeshCollisionAPI(prim).GetApproximationAttr().Get() or "none")
        if approx != "convexHull":
            self.notes.append(
                f"{path}: mesh collision approximation {approx!r} is not supported; using its "
                f'convex hull (set physics:approximation = "convexHull")'
            )
        pts = UsdGeom.Mesh(prim).GetPointsAttr().Get()
        if pts is None or len(pts) == 0:
            raise MimicInputError(f"{path}: mesh collider has no points")
        local = np.asarray(pts, float) * self.mpu
        v = local @ m[:3, :3].T + m[:3, 3]
        if not np.all(np.isfinite(v)):
            raise MimicInputError(f"{path}: mesh collider has non-finite points")
        limit = self._applied_attr(
            prim,
            "PhysxConvexHullCollisionAPI",
            "physxConvexHullCollision:hullVertexLimit",
            f"{DEFAULT_VERTEX_LIMIT} vertices",
        )
        limit = int(limit) if _finite(limit) and limit >= 4 else DEFAULT_VERTEX_LIMIT
        centre = 0.5 * (v.min(0) + v.max(0))
        try:
            hull = convex_hull(v - centre, vertex_limit=limit)
        except FlatHullError as exc:
            raise MimicInputError(f"{path}: mesh collider has no volume ({exc}); a convex hull needs one") from None
        if hull.truncated:
            self.notes.append(f"{path}: convex hull cut to {limit} vertices (physxConvexHullCollision:hullVertexLimit)")
        return hull, np.eye(3), centre

    # ---- everything ------------------------------------------------------------------------
    def read(self) -> CollisionSpec:
        self.scan()
        shapes = [s for s in (self.shape(p) for p in self.colliders) if s is not None]
        for s in shapes:
            s.groups = frozenset(g for g, q in self.groups if q.IsPathIncluded(s.path))
        if self.ground is not None:
            shapes.append(self.ground_plane(float(self.ground)))
        kinematic = sorted({s.body for s in shapes if s.body in self.inactive})
        if kinematic:
            self.notes.append(
                f"kinematic or disabled bodies collide as static shapes at their initial pose: {', '.join(kinematic)}"
            )
        free = self.free_bodies(shapes)
        spec = CollisionSpec(
            shapes=shapes,
            free_bodies=free,
            group_table=self.group_table(shapes),
            joint_pairs=self.joint_pairs,
            no_self_collision=self.self_collision_off(),
            filtered_pairs=self.filtered_pairs(shapes),
            warnings=self.notes,
            bounce_threshold=self.bounce_threshold,
        )
        for n in self.notes:
            _warnings.warn(n, stacklevel=3)
        return spec

    def ground_plane(self, height: float) -> ShapeSpec:
        up = UsdGeom.GetStageUpAxis(self.stage)
        r = _AXIS_PERM.get(str(up), np.eye(3))
        t = r[:, 2] * height
        contact = 2.0 * self.dt * self.dt * max(self.g, 1.0)
        return ShapeSpec(
            path="<ground plane>",
            kind="plane",
            body=None,
            static=True,
            pose=transform(r, t),
            size=np.zeros(3),
            contact_offset=contact,
            rest_offset=0.0,
            material=self.scene_material,
        )

    def free_bodies(self, shapes: list[ShapeSpec]) -> list[FreeBody]:
        out = []
        for path, prim in self.bodies.items():
            if not self.is_free(path):
                continue
            mass, com, inertia = _body_mass(prim, self.mpu, self.kgpu)
            if mass <= 0:
                self.notes.append(
                    f"{path}: free body without mass properties; using {DEFAULT_MASS} kg "
                    f"with the inertia of a {DEFAULT_RADIUS} m solid sphere"
                )
                mass, inertia = DEFAULT_MASS, np.eye(3) * 0.4 * DEFAULT_MASS * DEFAULT_RADIUS**2
            rb = UsdPhysics.RigidBodyAPI(prim)
            v = rb.GetVelocityAttr().Get()
            w = rb.GetAngularVelocityAttr().Get()
            out.append(
                FreeBody(
                    path=path,
                    pose=world_pose(prim, self.mpu),
                    mass=mass,
                    com=com,
                    inertia=inertia,
                    velocity=np.array(v if v is not None else (0, 0, 0), float) * self.mpu,
                    angular_velocity=np.radians(np.array(w if w is not None else (0, 0, 0), float)),
                    shapes=[i for i, s in enumerate(shapes) if s.body == path],
                )
            )
        return out

    def group_table(self, shapes: list[ShapeSpec]) -> dict:
        sets = sorted({s.groups for s in shapes}, key=sorted)
        if not self.groups:
            return {(a, b): True for a in sets for b in sets}
        table = UsdPhysics.CollisionGroup.ComputeCollisionGroupTable(self.stage)
        inverted = {
            g
            for g, _ in self.groups
            if UsdPhysics.CollisionGroup(self.stage.GetPrimAtPath(g)).GetInvertFilteredGroupsAttr().Get()
        }

        def collide(a: frozenset, b: frozenset) -> bool:
            if not a or not b:  # an ungrouped collider meets every group but an inverted one
                return not ((a | b) & inverted)
            return all(table.IsCollisionEnabled(x, y) for x in a for y in b)

        return {(a, b): collide(a, b) for a in sets for b in sets}

    def self_collision_off(self) -> list[list[str]]:
        return [
            self.articulation(str(root.GetPath()))
            for root in self.roots
            if self._applied_attr(
                root, "PhysxArticulationAPI", "physxArticulation:enabledSelfCollisions", "self-collision on"
            )
            is False
        ]

    def filtered_pairs(self, shapes: list[ShapeSpec]) -> list[tuple[list[int], list[int]]]:
        def under(p: str, x: str | None) -> bool:
            return x is not None and (x == p or x.startswith(p.rstrip("/") + "/"))

        def resolve(p: str) -> list[int]:
            prim = self.stage.GetPrimAtPath(p)
            bodies = set(self.articulation(p)) if prim and prim.HasAPI(UsdPhysics.ArticulationRootAPI) else set()
            return [i for i, s in enumerate(shapes) if under(p, s.path) or under(p, s.body) or s.body in bodies]

        out = []
        for path, targets in self.filters:
            mine = resolve(path)
            for t in targets:
                out.append((mine, resolve(t)))
        return out


def read_colliders(stage: Usd.Stage, dynamic_bodies=(), ground_plane: float | None = None) -> CollisionSpec:
    """Colliders of ``stage``. ``dynamic_bodies``: the bodies a solver Model simulates as
    articulation links; other enabled, non-kinematic, unjointed rigid bodies are free
    bodies; the rest are static. ``ground_plane``: add an infinite plane at this height
    (metres) along the stage's up axis."""
    return _Reader(stage, set(dynamic_bodies), ground_plane).read()
