"""MJCF geoms and the mass a body gets from them: shapes (``fromto`` resolved), mesh assets'
offsets and colours, ``<inertial>`` or, as MuJoCo's compiler does, inertia from the geoms
(MuJoCo's primitive formulas, mesh volumes).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..errors import MimicInputError
from ..math3d import quat_to_mat
from . import meshes
from .mesh_inertia import MeshInertiaError, mesh_mass
from .mjcf_file import Attrs, MeshAsset, MjcfFile, mjcf_bool
from .model import Geom, Inertia
from .transforms import Transform, inertia_tensor, shift_inertia, z_to_vec
from .xmltree import Element

PRIMITIVES = ("sphere", "capsule", "cylinder", "box", "ellipsoid")


class MjcfGeoms(MjcfFile):
    """A body's geoms and inertia, read on top of the file's defaults and assets."""

    def _geom_shape(self, a: Attrs, frame: Transform, body: str):
        """(type, pose in body, MuJoCo size) with ``fromto`` resolved."""
        gtype = a.get("type", "sphere")
        size = a.numbers("size", (1, 2, 3), default=(0, 0, 0), what=f"geom in body '{body}'")
        size = np.concatenate([size, np.zeros(3 - len(size))])
        fromto = a.numbers("fromto", 6, what=f"geom in body '{body}'")
        if fromto is not None and gtype in ("capsule", "cylinder", "box", "ellipsoid"):
            p0, p1 = fromto[:3], fromto[3:]
            d = p1 - p0
            half = np.linalg.norm(d) / 2
            R = z_to_vec(d) if half > 0 else np.eye(3)
            pose = frame * Transform.make((p0 + p1) / 2, R)
            if gtype in ("capsule", "cylinder"):
                size = np.array([size[0], half, 0.0])
            else:  # box, ellipsoid: size[0] is both cross-section half-sizes (as MuJoCo)
                size = np.array([size[0], size[0], half])
        else:
            pose = frame * self._pose(a)
        return gtype, pose, size

    def _geom(self, a: Attrs, frame: Transform, body: str) -> Geom | None:
        gtype, pose, size = self._geom_shape(a, frame, body)
        what = f"geom in body '{body}'"
        contype, conaffinity = int(a.number("contype", 1, what)), int(a.number("conaffinity", 1, what))
        collision = contype != 0 or conaffinity != 0
        name = a.get("name") or f"{'collision' if collision else 'visual'}_{a.el.line}"
        rgba = self._rgba(a, what)
        # MuJoCo draws geom groups 0-2 by default; one it hides (or makes transparent) is
        # not a visual, so it is written purpose=guide and never covers the visual meshes
        visible = int(a.number("group", 0, what)) <= 2 and rgba[3] > 0
        friction = a.numbers("friction", (1, 2, 3), default=(1,), what=what)[0]
        extra: dict[str, Any] = dict(
            rgba=tuple(float(x) for x in rgba),
            friction=float(friction),
            visible=visible,
            contype=contype,
            conaffinity=conaffinity,
        )
        if gtype == "box":
            return Geom(name, "box", pose, tuple(2 * size), collision, **extra)
        if gtype == "sphere":
            return Geom(name, "sphere", pose, (size[0],), collision, **extra)
        if gtype in ("capsule", "cylinder"):
            return Geom(name, gtype, pose, (size[0], 2 * size[1]), collision, **extra)
        if gtype == "plane":
            return Geom(name, "plane", pose, (size[0], size[1]), collision, **extra)
        if gtype == "mesh":
            if a.get("mesh") in self.inline_meshes:
                self.model.warnings.append(
                    f"{a.el.where}: mesh '{a.get('mesh')}' is made of vertices in the file, "
                    "which are not converted: left out"
                )
                return None
            mesh = self._mesh_asset(a, body)
            return Geom(
                name,
                "mesh",
                pose * self._mesh_offset(mesh),
                mesh.scale,
                collision,
                mesh_file=mesh.path if mesh.path.exists() else None,
                mesh_ref=mesh.ref,
                **extra,
            )
        self.model.warnings.append(f"{a.el.where}: {gtype} geom in body '{body}' has no USD collision shape: left out")
        return None

    def _mesh_asset(self, a: Attrs, body: str) -> MeshAsset:
        ref = a.get("mesh")
        if ref not in self.meshes:
            raise MimicInputError(f"{a.el.where}: geom in body '{body}' names mesh '{ref}', which is not an asset")
        return self.meshes[ref]

    @staticmethod
    def _mesh_offset(mesh: MeshAsset) -> Transform:
        """MuJoCo moves a mesh's vertices to ``scale * refquat^-1 (v - refpos)``; as a rigid
        pose applied to the scaled vertices (exact for a uniform scale or no refquat)."""
        R = quat_to_mat(mesh.refquat)
        S = np.asarray(mesh.scale, dtype=float)
        turned = not np.allclose(R, np.eye(3), atol=1e-12)
        if turned and not np.allclose(S, S[0]):
            raise MimicInputError(
                f"{mesh.file}:{mesh.line}: mesh '{mesh.ref}' combines refquat with a non-uniform "
                "scale, which is not a rigid motion of the mesh: rotate the file instead"
            )
        return Transform.make(-(R.T @ (S * mesh.refpos)), R.T)

    def _rgba(self, a: Attrs, what: str) -> np.ndarray:
        """The geom's colour as MuJoCo draws it: its own ``rgba`` when set to something other
        than the default, else its material's (times the texture's mean colour)."""
        default = np.array([0.5, 0.5, 0.5, 1.0])
        rgba = a.numbers("rgba", 4, default=default, what=what)
        material = a.get("material")
        if material is None or not np.allclose(rgba, default) or material not in self.materials:
            return np.clip(rgba, 0.0, 1.0)
        color, texture = self.materials[material]
        if texture and texture in self.textures:
            mean = meshes.image_mean_color(self.textures[texture])
            if mean is not None:
                color = np.concatenate([color[:3] * mean[:3], color[3:]])
        return color

    def _inertia(self, body: str, inertial: Element | None, geoms) -> Inertia | None:
        if inertial is not None and self.inertiafromgeom != "true":
            a = Attrs(inertial, dict(inertial.attrib))
            what = f"<inertial> of body '{body}'"
            mass = a.number("mass", None, what)
            if mass is None:
                raise MimicInputError(f"{inertial.where}: {what} needs a mass")
            pose = self._pose(a)
            diag = a.numbers("diaginertia", 3, what=what)
            full = a.numbers("fullinertia", 6, what=what)
            if diag is None and full is None:
                raise MimicInputError(f"{inertial.where}: {what} needs diaginertia or fullinertia")
            local = np.diag(diag) if diag is not None else inertia_tensor(*full[:3], *full[3:])
            if mass <= 0:
                return None
            return Inertia.from_tensor(mass, pose.p, pose.R @ local @ pose.R.T)
        if self.inertiafromgeom == "false":
            return None
        total = 0.0
        parts = []
        for g_el, g_frame, g_cls in geoms:
            a = self._attrs(g_el, g_cls)
            what = f"geom in body '{body}'"
            group = int(a.number("group", 0, what))
            if not self.groups[0] <= group <= self.groups[1]:
                continue
            gtype, pose, size = self._geom_shape(a, g_frame, body)
            shell = bool(mjcf_bool(a.get("shellinertia"), g_el, "shellinertia", False))  # never None: default False
            given = a.number("mass", None, what)
            density = a.number("density", 1000.0, what)
            if (given is not None and given < 0) or density < 0:
                raise MimicInputError(f"{g_el.where}: {what} has a negative mass or density")
            if given == 0 or (given is None and density == 0):
                continue
            if gtype == "mesh":
                if a.get("mesh") in self.inline_meshes:
                    self._mesh_inertia_bodies.append(body)
                    return None
                mesh = self._mesh_asset(a, body)
                if shell:  # MuJoCo before 3.2 read this as the mesh's surface; MuJoCo 3.2+ refuses it
                    self.model.warnings.append(
                        f'{g_el.where}: {what}: shellinertia on a mesh geom, taken as the mesh\'s inertia="shell" '
                        '(current MuJoCo refuses it there: set inertia="shell" on the <mesh> asset)'
                    )
                    mesh = dataclasses.replace(mesh, inertia="shell")
                props = self._mesh_mass(mesh, g_el, body)
                if props is None:
                    return None
                volume, com, unit = props.volume, props.com, props.inertia / props.volume
                pose = pose * self._mesh_offset(mesh) * Transform.make(com)
            elif gtype in PRIMITIVES:
                volume, unit = primitive_inertia(gtype, size, shell)
            else:
                continue
            mass = given if given is not None else density * volume
            parts.append((mass, pose, unit * mass))
            total += mass
        if total <= 0:
            return None
        com = sum(m * p.p for m, p, _ in parts) / total
        tensor = sum(shift_inertia(p.R @ I @ p.R.T, m, p.p - com) for m, p, I in parts)
        return Inertia.from_tensor(total, com, tensor)

    def _mesh_mass(self, mesh: MeshAsset, geom: Element, body: str):
        """MuJoCo's mass properties of a mesh asset (cached), or None when no mesh library
        can read it (then the body gets no mass, said once)."""
        key = (str(mesh.path), mesh.scale, mesh.inertia)
        if key in self._mesh_mass_cache:
            return self._mesh_mass_cache[key]
        props = None
        if mesh.path.exists() and meshes.mesh_library() is not None:
            try:
                data = meshes.load_mesh(mesh.path, mesh.scale)
            except Exception as exc:  # a file the parser cannot read: said by the writer too
                self.model.warnings.append(
                    f"{geom.where}: mesh '{mesh.ref}' cannot be read for its mass ({type(exc).__name__}: {exc})"
                )
            else:
                try:
                    props = mesh_mass(data.points, data.faces, mesh.inertia)
                except MeshInertiaError as exc:
                    raise MimicInputError(
                        f"{mesh.file}:{mesh.line}: mesh '{mesh.ref}' (used for the mass of body "
                        f"'{body}'): {exc}, as MuJoCo says too"
                    ) from None
        if props is None:
            self._mesh_inertia_bodies.append(body)
        self._mesh_mass_cache[key] = props
        return props


def primitive_inertia(gtype: str, size, shell: bool = False) -> tuple[float, np.ndarray]:
    """(volume, or area for a shell; inertia per unit mass about the centre) of a MuJoCo
    primitive, with MuJoCo's formulas (``mjCGeom::GetVolume``, ``mjCGeom::SetInertia``)."""
    if gtype == "sphere":
        r = size[0]
        if shell:
            return 4 * math.pi * r * r, np.eye(3) * 2 * r * r / 3
        return 4.0 / 3.0 * math.pi * r**3, np.eye(3) * 0.4 * r * r
    if gtype == "box":
        x, y, z = size[:3]
        if not shell:
            return 8 * x * y * z, np.diag([(y * y + z * z), (x * x + z * z), (x * x + y * y)]) / 3.0
        lx, ly, lz = 2 * x, 2 * y, 2 * z
        a0, a1, a2 = lx * ly, ly * lz, lz * lx
        total = 2 * (a0 + a1 + a2)
        m0, m1, m2 = a0 / total, a1 / total, a2 / total
        ix = 2 * (m0 * z * z + m2 * y * y + m0 * ly * ly / 12 + m1 * (ly * ly + lz * lz) / 12 + m2 * lz * lz / 12)
        iy = 2 * (m0 * z * z + m1 * x * x + m0 * lx * lx / 12 + m1 * lz * lz / 12 + m2 * (lx * lx + lz * lz) / 12)
        iz = 2 * (m1 * x * x + m2 * y * y + m0 * (lx * lx + ly * ly) / 12 + m1 * ly * ly / 12 + m2 * lx * lx / 12)
        return total, np.diag([ix, iy, iz])
    if gtype == "ellipsoid":
        a, b, c = size[:3]
        solid = np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 5.0
        if not shell:
            return 4.0 / 3.0 * math.pi * a * b * c, solid
        p = 1.6075  # Thomsen's approximation of the surface, as MuJoCo
        area = 4 * math.pi * ((pow(a * b, p) + pow(b * c, p) + pow(c * a, p)) / 3) ** (1 / p)
        eps = 1e-6  # MuJoCo: the expanded ellipsoid minus the solid one
        va, vb = 4 * math.pi * a * b * c / 3, 4 * math.pi * (a + eps) * (b + eps) * (c + eps) / 3
        density = 1.0 / (vb - va)
        outer = (
            np.diag([(b + eps) ** 2 + (c + eps) ** 2, (a + eps) ** 2 + (c + eps) ** 2, (a + eps) ** 2 + (b + eps) ** 2])
            / 5.0
        )
        return area, vb * density * outer - va * density * solid
    r, half = size[0], size[1]
    h = 2 * half
    if gtype == "cylinder":
        if not shell:
            return math.pi * r * r * h, np.diag([(3 * r * r + h * h) / 12] * 2 + [r * r / 2])
        disk, side = math.pi * r * r, 2 * math.pi * r * h
        total = 2 * disk + side
        md = disk / total
        mc = 1.0 - 2 * md
        ix = mc * (6 * r * r + h * h) / 12 + 2 * (md * r * r / 4 + md * half * half)
        return total, np.diag([ix, ix, mc * r * r + 2 * md * r * r / 2])
    if shell:  # capsule surface: a tube and a sphere's surface in two halves
        sphere, tube = 4 * math.pi * r * r, 2 * math.pi * r * h
        total = sphere + tube
        ms = sphere / total
        mc = 1.0 - ms
        hs_com, hs_pos = r / 2, half + r / 2
        ix = mc * (6 * r * r + h * h) / 12 + 2 * ms * r * r / 3 + ms * (hs_pos * hs_pos - hs_com * hs_com)
        return total, np.diag([ix, ix, mc * r * r + 2 * ms * r * r / 3])
    # capsule: a cylinder plus two hemispheres, with their offset centres
    v_cyl = math.pi * r * r * h
    v_sph = 4.0 / 3.0 * math.pi * r**3
    v = v_cyl + v_sph
    f_cyl, f_sph = v_cyl / v, v_sph / v
    i_zz = f_cyl * r * r / 2 + f_sph * 0.4 * r * r
    i_xx = f_cyl * (3 * r * r + h * h) / 12 + f_sph * (83.0 / 320.0 * r * r + (half + 3.0 * r / 8.0) ** 2)
    return v, np.diag([i_xx, i_xx, i_zz])
