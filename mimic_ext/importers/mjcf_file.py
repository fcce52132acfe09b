"""An MJCF file as MuJoCo's compiler reads it before any body: ``<include>``, the compiler's
settings (angle unit, Euler sequence, inertia from geoms, asset folders), ``<default>``
classes, the assets, and an element's orientation. The other ``mjcf_*`` modules read the
bodies, actuators, equalities and contacts on top of it; ``mjcf.MjcfReader`` joins them.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import MimicInputError
from ..math3d import axis_angle, quat_to_mat
from .mesh_inertia import MODES as MESH_INERTIA_MODES
from .model import RobotModel
from .transforms import Transform, euler_to_rot, xyaxes_to_rot, z_to_vec
from .values import number, numbers
from .xmltree import Element, parse_xml

DEG = math.pi / 180.0


UNSUPPORTED = {"composite", "flexcomp", "replicate", "attach", "plugin", "deformable", "flex", "skin"}


@dataclass(frozen=True)
class MeshAsset:
    """A ``<mesh file>`` asset: where its file is and how MuJoCo transforms and weighs it."""

    path: Path
    ref: str
    scale: tuple[float, float, float]
    inertia: str
    refpos: np.ndarray
    refquat: np.ndarray
    line: int
    file: Path


def mjcf_bool(text: str | None, el: Element, name: str, default: bool | None) -> bool | None:
    if text is None or text == "auto":
        return default
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise MimicInputError(f'{el.where}: <{el.tag}> {name}="{text}" must be true or false')


class Attrs:
    """An element's attributes after its default class: ``el`` for line numbers."""

    def __init__(self, el: Element, values: dict[str, str]):
        self.el = el
        self.values = values

    def get(self, name, default=None):
        return self.values.get(name, default)

    def has(self, name) -> bool:
        return name in self.values

    def number(self, name, default=None, what=None):
        proxy = Element(self.el.tag, self.values, self.el.line, self.el.file)
        return number(proxy, name, default, what)

    def numbers(self, name, count=None, default=None, what=None):
        proxy = Element(self.el.tag, self.values, self.el.line, self.el.file)
        return numbers(proxy, name, count, default, what)


class MjcfFile:
    """The parsed file, its compiler settings, default classes and assets (``__init__``), and
    the attribute and orientation reading every element shares."""

    def __init__(self, path: str | os.PathLike):
        self.source = Path(path)
        root = parse_xml(self.source)
        if root.tag != "mujoco":
            raise MimicInputError(
                f"{root.where}: expected <mujoco> as the root element of an MJCF file, found <{root.tag}>"
            )
        self.root = self._expand(root, {self.source.resolve()})
        name = root.get("model") or self.source.stem
        self.model = RobotModel(name=name, source=self.source, format="MJCF")
        self._read_compiler()
        self.defaults: dict[str, dict[str, dict[str, str]]] = {"main": {}}
        for el in self.root.findall("default"):
            self._read_default(el, "main", {}, top=True)
        self._read_assets()
        self.joint_info: dict[str, dict] = {}
        self.not_imported: list[str] = []
        self._mesh_inertia_bodies: list[str] = []
        self._mesh_mass_cache: dict = {}
        self.sites: dict[str, tuple[str | None, Transform]] = {}  # name -> (body or world, pose in it)
        self._unnamed = 0

    def _expand(self, el: Element, stack: set) -> Element:
        """Replace each ``<include file>`` by the included file's top-level children."""
        out = []
        for child in el.children:
            if child.tag == "include":
                ref = child.get("file")
                if not ref:
                    raise MimicInputError(f"{child.where}: <include> needs a file attribute")
                cands = [Path(child.file).parent / ref, self.source.parent / ref]
                path = next((c for c in cands if c.exists()), None)
                if path is None:
                    raise MimicInputError(f"{child.where}: included file '{ref}' does not exist")
                if path.resolve() in stack:
                    raise MimicInputError(f"{child.where}: '{ref}' includes itself")
                sub = parse_xml(path)
                if sub.tag != "mujoco":
                    raise MimicInputError(f"{sub.where}: an included file must have <mujoco> as its root")
                sub = self._expand(sub, stack | {path.resolve()})
                out.extend(sub.children)
            else:
                out.append(self._expand(child, stack))
        el.children = out
        return el

    def _read_compiler(self) -> None:
        c: dict[str, str] = {}
        self.compiler_el = None
        for el in self.root.findall("compiler"):
            c.update(el.attrib)
            self.compiler_el = el
        el = self.compiler_el if self.compiler_el is not None else self.root
        if c.get("coordinate", "local") != "local":
            raise MimicInputError(
                f'{el.where}: <compiler coordinate="{c["coordinate"]}"> is not supported '
                "(MuJoCo 2.3.3 and later read only local coordinates)"
            )
        angle = c.get("angle", "degree")
        if angle not in ("degree", "radian"):
            raise MimicInputError(f'{el.where}: <compiler angle="{angle}"> must be degree or radian')
        self.angle = DEG if angle == "degree" else 1.0
        self.eulerseq = c.get("eulerseq", "xyz")
        if len(self.eulerseq) != 3 or any(ch not in "xyzXYZ" for ch in self.eulerseq):
            raise MimicInputError(f'{el.where}: <compiler eulerseq="{self.eulerseq}"> must be 3 of xyzXYZ')
        self.autolimits = mjcf_bool(c.get("autolimits"), el, "autolimits", True)
        ifg = c.get("inertiafromgeom", "auto")
        if ifg not in ("auto", "true", "false"):
            raise MimicInputError(f'{el.where}: <compiler inertiafromgeom="{ifg}"> must be auto, true or false')
        self.inertiafromgeom = ifg
        rng = numbers(Element("compiler", c, el.line, el.file), "inertiagrouprange", 2, default=(0, 5))
        self.groups = (int(rng[0]), int(rng[1]))
        base = self.source.parent
        self.meshdir = base / c.get("meshdir", c.get("assetdir", ""))  # meshdir overrides assetdir
        self.texturedir = base / c.get("texturedir", c.get("assetdir", ""))

    def _read_default(self, el: Element, parent: str, inherited: dict, top: bool = False) -> None:
        cls = el.get("class") or ("main" if top else None)
        if cls is None:
            raise MimicInputError(f"{el.where}: a nested <default> needs a class name")
        merged = {tag: dict(v) for tag, v in inherited.items()}
        for child in el.children:
            if child.tag != "default":
                merged.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[cls] = merged
        for child in el.findall("default"):
            self._read_default(child, cls, merged)

    def _attrs(self, el: Element, childclass: str | None = None, tag: str | None = None) -> Attrs:
        cls = el.get("class") or childclass or "main"
        if cls not in self.defaults:
            raise MimicInputError(f"{el.where}: <{el.tag}> names default class '{cls}', which does not exist")
        values = dict(self.defaults[cls].get(tag or el.tag, {}))
        values.update(el.attrib)
        return Attrs(el, values)

    def _read_assets(self) -> None:
        self.meshes: dict[str, MeshAsset] = {}
        self.inline_meshes: dict[str, Element] = {}
        self.materials: dict[str, tuple[np.ndarray, str | None]] = {}  # name -> (rgba, texture)
        self.textures: dict[str, Path] = {}
        for asset in self.root.findall("asset"):
            for el in asset.findall("mesh"):
                a = self._attrs(el)
                file = a.get("file")
                if not file:  # made from vertices in the file: not converted, and said where used
                    if a.get("name"):
                        self.inline_meshes[a.get("name")] = el
                    continue
                name = a.get("name") or Path(file).stem
                what = f"mesh '{name}'"
                inertia = a.get("inertia", "legacy")
                if inertia not in MESH_INERTIA_MODES:
                    raise MimicInputError(
                        f'{el.where}: {what} inertia="{inertia}" must be one of {", ".join(MESH_INERTIA_MODES)}'
                    )
                refquat = a.numbers("refquat", 4, default=(1, 0, 0, 0), what=what)
                if np.linalg.norm(refquat) == 0:
                    raise MimicInputError(f"{el.where}: {what} refquat is zero")
                self.meshes[name] = MeshAsset(
                    path=self.meshdir / file,
                    ref=file,
                    scale=tuple(a.numbers("scale", 3, default=(1, 1, 1), what=what)),
                    inertia=inertia,
                    refpos=a.numbers("refpos", 3, default=(0, 0, 0), what=what),
                    refquat=refquat,
                    line=el.line,
                    file=el.file,
                )
            for el in asset.findall("texture"):
                a = self._attrs(el)
                file = a.get("file")
                if file:
                    self.textures[a.get("name") or Path(file).stem] = self.texturedir / file
            for el in asset.findall("material"):
                a = self._attrs(el)
                name = a.get("name")
                if name:
                    rgba = a.numbers("rgba", 4, default=(1, 1, 1, 1), what=f"material '{name}'")
                    self.materials[name] = (np.clip(rgba, 0.0, 1.0), a.get("texture"))

    def _rotation(self, a: Attrs) -> np.ndarray:
        kinds = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
        # the element's own orientation wins over one inherited from its default class
        given = [k for k in kinds if k in a.el.attrib] or [k for k in kinds if a.has(k)]
        if len(given) > 1:
            raise MimicInputError(f"{a.el.where}: <{a.el.tag}> has more than one orientation ({', '.join(given)})")
        if not given:
            return np.eye(3)
        kind = given[0]
        if kind == "quat":
            q = a.numbers("quat", 4)
            if np.linalg.norm(q) == 0:
                raise MimicInputError(f"{a.el.where}: <{a.el.tag}> quat is zero")
            return quat_to_mat(q)
        if kind == "axisangle":
            v = a.numbers("axisangle", 4)
            return axis_angle(v[:3], v[3] * self.angle)
        if kind == "euler":
            return euler_to_rot(a.numbers("euler", 3) * self.angle, self.eulerseq)
        if kind == "xyaxes":
            return xyaxes_to_rot(a.numbers("xyaxes", 6))
        return z_to_vec(a.numbers("zaxis", 3))

    def _pose(self, a: Attrs) -> Transform:
        return Transform.make(a.numbers("pos", 3, default=(0, 0, 0)), self._rotation(a))
