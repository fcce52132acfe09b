"""Shapes of the imported robot in USD: visuals that render and colliders that collide.

- A collider carries ``PhysicsCollisionAPI`` (a mesh also ``PhysicsMeshCollisionAPI`` with
  approximation ``convexHull``) and its friction as a ``PhysicsMaterialAPI`` material bound
  with the ``physics`` purpose; it is ``purpose = guide`` unless the source draws it (an
  MJCF collision geom in a group MuJoCo hides, every URDF ``<collision>``), so renderers
  show the visual meshes, not the hulls over them.
- A visual gets ``primvars:displayColor`` from its URDF/MJCF material, or else from the
  mesh file's own material or texture.
- Each mesh file (at a given scale) is written once, under an abstract ``class`` prim
  (``/Meshes``), and every geom that uses it references it; ``subdivisionScheme = "none"``
  (robot meshes are polygonal, not subdivision cages). A large library is moved into a
  ``.usdc`` beside the stage when the stage is saved (``save_with_mesh_library``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from pxr import Sdf, Usd, UsdGeom, UsdPhysics, UsdShade, Vt

from ..schema.stage_io import save_layer_atomically
from . import meshes
from .model import Geom
from .usd_pose import set_pose, vec3f

#: name of the abstract prim holding one Mesh per mesh file
LIBRARY = "Meshes"
#: mesh data (points and indices) above which ``save_with_mesh_library`` moves the
#: library into a binary ``.usdc`` beside a text stage
LIBRARY_INLINE_MAX_BYTES = 64 * 1024


class ShapeWriter:
    """Writes the geoms of one stage (``names`` makes valid unique prim names)."""

    def __init__(self, stage: Usd.Stage, names, material_scope: str, source_format: str):
        self.stage = stage
        self.names = names
        self.material_scope = material_scope
        self.source_format = source_format
        self.lib = meshes.mesh_library()
        self.library = f"/{names('/', LIBRARY)}"
        self.prototypes: dict[tuple, tuple[str, tuple | None] | None] = {}  # None: unreadable
        self.materials: dict[float, str] = {}
        self.geom_paths: dict[int, str] = {}  # id(Geom) -> prim path
        self.meshes_left_out: list[str] = []
        self.mesh_failures: list[str] = []
        self.mesh_bytes = 0

    # ---------------------------------------------------------------- meshes
    def _prototype(self, geom: Geom) -> tuple[str, tuple | None] | None:
        """(path of the library Mesh for this file and scale, the file's own colour)."""
        key = (str(geom.mesh_file), tuple(float(x) for x in geom.size))
        if key in self.prototypes:
            return self.prototypes[key]
        assert geom.mesh_file is not None  # write() leaves out a mesh without a file
        try:
            data = meshes.load_mesh(geom.mesh_file, geom.size)
        except Exception as exc:  # any parser failure leaves the mesh out, with the reason
            self.mesh_failures.append(f"{geom.mesh_ref} ({type(exc).__name__}: {exc})")
            self.prototypes[key] = None
            return None
        stage = self.stage
        if not stage.GetPrimAtPath(self.library):
            stage.CreateClassPrim(self.library)
        path = f"{self.library}/{self.names(self.library, Path(str(geom.mesh_file)).stem)}"
        mesh = UsdGeom.Mesh.Define(stage, path)
        points = np.ascontiguousarray(data.points, dtype=np.float32)
        indices = np.ascontiguousarray(data.faces.reshape(-1), dtype=np.int32)
        mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(points))
        mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(data.faces), 3, dtype=np.int32)))
        mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(indices))
        mesh.CreateExtentAttr([vec3f(points.min(axis=0)), vec3f(points.max(axis=0))])
        mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
        mesh.CreateDoubleSidedAttr(False)
        mesh.GetPrim().SetCustomDataByKey("mimicExtSourceFile", str(geom.mesh_ref))
        self.mesh_bytes += points.nbytes + 2 * indices.nbytes
        self.prototypes[key] = (path, data.rgba)
        return self.prototypes[key]

    # ---------------------------------------------------------------- materials
    def _friction_material(self, friction: float) -> str:
        if friction in self.materials:
            return self.materials[friction]
        stage = self.stage
        if not stage.GetPrimAtPath(self.material_scope):
            UsdGeom.Scope.Define(stage, self.material_scope)
        label = f"friction_{friction:g}".replace(".", "_").replace("-", "m").replace("+", "")
        path = f"{self.material_scope}/{self.names(self.material_scope, label)}"
        material = UsdShade.Material.Define(stage, path)
        api = UsdPhysics.MaterialAPI.Apply(material.GetPrim())
        api.CreateStaticFrictionAttr(float(friction))
        api.CreateDynamicFrictionAttr(float(friction))
        api.CreateRestitutionAttr(0.0)
        self.materials[friction] = path
        return path

    # ---------------------------------------------------------------- geoms
    def write(self, scope: str, geom: Geom) -> str | None:
        """The geom as a prim under ``scope`` (made when needed); None when left out."""
        stage = self.stage
        proto = None
        if geom.shape == "mesh":
            if geom.mesh_file is None:
                return None  # reported as unresolved by the reader
            if self.lib is None:
                self.meshes_left_out.append(str(geom.mesh_ref))
                return None
            proto = self._prototype(geom)
            if proto is None:
                return None
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
        else:  # a mesh: the library's copy, referenced
            assert proto is not None  # one that could not be read returned above
            g = UsdGeom.Mesh.Define(stage, path)
            g.GetPrim().GetReferences().AddInternalReference(Sdf.Path(proto[0]))
        set_pose(g, geom.pose, scale=s if geom.shape == "box" else None)
        prim = g.GetPrim()
        rgba = geom.rgba or (proto[1] if proto else None)
        if rgba is not None:
            g.CreateDisplayColorAttr([vec3f(rgba[:3])])
            if rgba[3] < 1.0:
                g.CreateDisplayOpacityAttr([float(rgba[3])])
        if geom.collision:
            UsdPhysics.CollisionAPI.Apply(prim)
            if geom.shape == "mesh":
                UsdPhysics.MeshCollisionAPI.Apply(prim).CreateApproximationAttr(UsdPhysics.Tokens.convexHull)
            if geom.friction is not None:
                material = UsdShade.Material(stage.GetPrimAtPath(self._friction_material(geom.friction)))
                UsdShade.MaterialBindingAPI.Apply(prim).Bind(material, UsdShade.Tokens.weakerThanDescendants, "physics")
        drawn = geom.visible and not (geom.collision and self.source_format == "URDF")
        if not drawn:
            g.CreatePurposeAttr(UsdGeom.Tokens.guide)
        self.geom_paths[id(geom)] = path
        return path


def save_with_mesh_library(
    layer: Sdf.Layer,
    out: str | os.PathLike,
    library: str = f"/{LIBRARY}",
    inline_max_bytes: int = LIBRARY_INLINE_MAX_BYTES,
    mesh_bytes: int = 0,
) -> list[Path]:
    """Save ``layer`` to ``out`` atomically; a text stage whose mesh library holds more than
    ``inline_max_bytes`` keeps it in ``<stem>.meshes.usdc`` beside it (written first, so the
    stage never names a file that is not there). Returns the files written."""
    out = Path(out)
    spec = layer.GetPrimAtPath(library)
    if spec is None or out.suffix.lower() == ".usdc" or mesh_bytes <= inline_max_bytes:
        return [save_layer_atomically(layer, out)]
    lib_name = f"{out.stem}.meshes.usdc"
    lib = Sdf.Layer.CreateAnonymous(".usdc")
    Sdf.CreatePrimInLayer(lib, library)
    Sdf.CopySpec(layer, library, lib, library)
    stage_layer = Sdf.Layer.CreateAnonymous(out.suffix or ".usda")
    stage_layer.TransferContent(layer)
    edit = Sdf.BatchNamespaceEdit()
    edit.Add(Sdf.NamespaceEdit.Remove(library))
    stage_layer.Apply(edit)
    prefix = Sdf.Path(library)

    def repath(path: Sdf.Path) -> None:
        if not path.IsPrimPath():
            return
        prim = stage_layer.GetPrimAtPath(path)
        refs = prim.referenceList
        items = list(refs.prependedItems)
        if not any(r.primPath.HasPrefix(prefix) and not r.assetPath for r in items):
            return
        refs.prependedItems = [
            Sdf.Reference(f"./{lib_name}", r.primPath) if r.primPath.HasPrefix(prefix) and not r.assetPath else r
            for r in items
        ]

    stage_layer.Traverse(Sdf.Path.absoluteRootPath, repath)
    written = [save_layer_atomically(lib, out.with_name(lib_name))]
    written.append(save_layer_atomically(stage_layer, out))
    return written
