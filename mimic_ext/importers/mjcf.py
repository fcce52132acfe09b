"""MJCF (MuJoCo XML) -> ``RobotModel``.

What MuJoCo does at compile time and a converter must do too: ``<include>`` and
``<default>`` classes (with ``childclass``), the compiler's angle unit and Euler sequence,
inertia from geoms when a body has no ``<inertial>``, and joint ``ref``: the file's
configuration is ``q = ref``, so each joint's frame in its child body carries the ref
displacement and the USD joint coordinate equals MuJoCo's ``q``. That keeps ranges,
drive targets and the relation ``q1 - ref1 = a0 + a1 (q2 - ref2)`` in MuJoCo's numbers:
canonical ``multiplier = a1``, ``offset = a0 + ref1 - a1 ref2``. ``polycoef`` is used
by MuJoCo as written (never converted by ``<compiler angle>``), and so is it here.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import MimicInputError
from ..math3d import axis_angle, quat_to_mat
from . import meshes
from .known_attributes import MJCF_EQUALITY_JOINT, check_attributes
from .mesh_inertia import MODES as MESH_INERTIA_MODES
from .mesh_inertia import MeshInertiaError, mesh_mass
from .model import FIXED, PRISMATIC, REVOLUTE, SPHERICAL, Body, Closure, Geom, Inertia, Joint, Mimic, RobotModel
from .transforms import (
    AXES,
    Transform,
    euler_to_rot,
    inertia_tensor,
    joint_axis_frame,
    shift_inertia,
    xyaxes_to_rot,
    z_to_vec,
)
from .values import ascii_split, number, numbers, parse_number
from .xmltree import Element, parse_xml

DEG = math.pi / 180.0
ACTUATOR_TAGS = (
    "general",
    "motor",
    "position",
    "velocity",
    "intvelocity",
    "damper",
    "cylinder",
    "muscle",
    "adhesion",
    "plugin",
)
IGNORED_TOP = {
    "option",
    "size",
    "visual",
    "statistic",
    "custom",
    "extension",
    "keyframe",
    "sensor",
    "asset",
    "default",
    "compiler",
    "contact",
    "tendon",
    "actuator",
    "equality",
    "worldbody",
}
UNSUPPORTED = {"composite", "flexcomp", "replicate", "attach", "plugin", "deformable", "flex", "skin"}
BODY_CHILDREN = {"inertial", "joint", "freejoint", "geom", "site", "camera", "light", "body", "frame"}
PRIMITIVES = ("sphere", "capsule", "cylinder", "box", "ellipsoid")
#: the most collider pairs written as FilteredPairsAPI for contype/conaffinity
MAX_FILTERED_PAIRS = 20000


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


def _bool(text: str | None, el: Element, name: str, default: bool | None) -> bool | None:
    if text is None or text == "auto":
        return default
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise MimicInputError(f'{el.where}: <{el.tag}> {name}="{text}" must be true or false')


class _Attrs:
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


class MjcfReader:
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

    # ---------------------------------------------------------------- file structure
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
        self.autolimits = _bool(c.get("autolimits"), el, "autolimits", True)
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

    def _attrs(self, el: Element, childclass: str | None = None, tag: str | None = None) -> _Attrs:
        cls = el.get("class") or childclass or "main"
        if cls not in self.defaults:
            raise MimicInputError(f"{el.where}: <{el.tag}> names default class '{cls}', which does not exist")
        values = dict(self.defaults[cls].get(tag or el.tag, {}))
        values.update(el.attrib)
        return _Attrs(el, values)

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

    # ---------------------------------------------------------------- orientation
    def _rotation(self, a: _Attrs) -> np.ndarray:
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

    def _pose(self, a: _Attrs) -> Transform:
        return Transform.make(a.numbers("pos", 3, default=(0, 0, 0)), self._rotation(a))

    # ---------------------------------------------------------------- bodies
    def read(self) -> RobotModel:
        model = self.model
        for opt in self.root.findall("option"):
            g = numbers(opt, "gravity", 3)
            if g is not None:
                model.gravity = g
        for top in self.root.children:
            if top.tag in UNSUPPORTED:
                raise MimicInputError(f"{top.where}: <{top.tag}> is not supported by the importer")
            if top.tag not in IGNORED_TOP:
                raise MimicInputError(f"{top.where}: unknown MJCF element <{top.tag}>")
        tree = 0
        for world in self.root.findall("worldbody"):
            for el, frame, cls in self._items(world, Transform.identity(), None):
                if el.tag == "body":
                    self._bodies(el, frame, cls, tree)
                    tree += 1
                elif el.tag == "geom":
                    g = self._geom(self._attrs(el, cls), frame, "world")
                    if g is not None:
                        model.world_geoms.append(g)
                elif el.tag == "site" and el.get("name"):
                    self.sites[el.get("name")] = (None, frame * self._pose(self._attrs(el, cls)))
                elif el.tag in ("joint", "freejoint", "inertial"):
                    raise MimicInputError(f"{el.where}: <{el.tag}> directly in <worldbody> is not allowed")
        if not model.bodies:
            raise MimicInputError(f"{self.source}: the model has no body")
        self._actuators()
        self._equalities()
        self._contacts()
        self._tendons()
        model.mesh_inertia_bodies = list(self._mesh_inertia_bodies)
        if self._mesh_inertia_bodies:
            model.warnings.append(
                f"{self.source}: mass left out for {len(self._mesh_inertia_bodies)} body(ies) whose inertia "
                f"MuJoCo computes from meshes ({', '.join(self._mesh_inertia_bodies)}); add <inertial> to import it"
            )
        if self.not_imported:
            model.warnings.append(f"{self.source}: not imported (not mimic relations): " + "; ".join(self.not_imported))
        return model

    def _items(self, el: Element, frame: Transform, cls: str | None):
        """Children of a body or worldbody, with ``<frame>`` elements flattened."""
        for child in el.children:
            if child.tag == "frame":
                a = self._attrs(child, cls)
                yield from self._items(child, frame * self._pose(a), child.get("childclass") or cls)
            elif child.tag in UNSUPPORTED:
                raise MimicInputError(f"{child.where}: <{child.tag}> is not supported by the importer")
            elif child.tag not in BODY_CHILDREN:
                raise MimicInputError(f"{child.where}: unknown element <{child.tag}> in <{el.tag}>")
            else:
                yield child, frame, cls

    def _unique_body_name(self, el: Element) -> str:
        name = el.get("name")
        if not name:
            self._unnamed += 1
            name = f"body{self._unnamed}"
        if name in self.model.bodies:
            raise MimicInputError(f"{el.where}: body '{name}' is defined twice")
        return name

    def _bodies(self, el: Element, frame: Transform, cls: str | None, tree: int) -> None:
        """A top-level body and everything below it, depth first in file order (with an
        explicit stack: a chain of bodies may be as deep as the XML allows)."""
        stack = [(el, None, frame, cls)]
        while stack:
            el, parent, frame, cls = stack.pop()
            name, items, child_cls = self._body(el, parent, frame, cls, tree)
            children = [(c, name, f, k) for c, f, k in items if c.tag == "body"]
            stack.extend(reversed(children))

    def _body(self, el: Element, parent: str | None, frame: Transform, inherited_cls: str | None, tree: int):
        model = self.model
        cls = el.get("childclass") or inherited_cls
        if cls is not None and cls not in self.defaults:
            raise MimicInputError(f"{el.where}: childclass '{cls}' does not exist")
        a = _Attrs(el, dict(el.attrib))
        local = frame * self._pose(a)
        parent_world = model.bodies[parent].world if parent else Transform.identity()
        name = self._unique_body_name(el)
        body = Body(name=name, world=parent_world * local, line=el.line, tree=tree)
        model.bodies[name] = body
        if parent is None:
            model.roots[tree] = name
            model.floating[tree] = False
        if _bool(el.get("mocap"), el, "mocap", False):
            model.warnings.append(f"{el.where}: mocap body '{name}' imported as an ordinary body")

        items = list(self._items(el, Transform.identity(), cls))
        joints = [(c, f, k) for c, f, k in items if c.tag in ("joint", "freejoint")]
        geoms = [(c, f, k) for c, f, k in items if c.tag == "geom"]
        inertials = [c for c, f, k in items if c.tag == "inertial"]
        if len(inertials) > 1:
            raise MimicInputError(f"{inertials[1].where}: body '{name}' has more than one <inertial>")

        for g_el, g_frame, g_cls in geoms:
            g = self._geom(self._attrs(g_el, g_cls), g_frame, name)
            if g is not None:
                body.geoms.append(g)
        for c, f, k in items:
            if c.tag == "site" and c.get("name"):
                self.sites[c.get("name")] = (name, f * self._pose(self._attrs(c, k)))
        body.inertia = self._inertia(name, inertials[0] if inertials else None, geoms)
        if body.inertia is None:
            model.massless_bodies.append(name)

        self._joints(body, parent, local, joints, tree)
        return name, items, cls

    def _joints(self, body: Body, parent: str | None, local: Transform, joints, tree: int) -> None:
        """The body's joints. MuJoCo composes several joints of one body in order, each
        about its axis as moved by the ones before; that is a chain of massless bodies
        (one per joint but the last, all at the body's pose), so every joint keeps its own
        prim, axis, limits and relations, and all the mass stays on the body."""
        model = self.model
        if not joints:
            if parent is not None:
                model.joints.append(
                    Joint(f"{body.name}_weld", FIXED, parent, body.name, local, Transform.identity(), line=body.line)
                )
            return
        kinds = [(el, self._attrs(el, j_cls, tag="joint")) for el, _, j_cls in joints]
        free = [el for el, a in kinds if el.tag == "freejoint" or a.get("type", "hinge") == "free"]
        if free:
            if len(joints) > 1:
                raise MimicInputError(
                    f"{free[0].where}: body '{body.name}' has a free joint and other joints; "
                    "a free joint must be the body's only joint (as MuJoCo requires)"
                )
            a = kinds[0][1]
            name = a.get("name") or f"{body.name}_joint"
            if parent is not None:
                raise MimicInputError(f"{free[0].where}: free joint '{name}' is only allowed in a top-level body")
            model.floating[tree] = True
            return
        prev, prev_frame = parent, local  # the body before this joint, and the body's frame in it
        for k, ((el, j_frame, j_cls), (_, a)) in enumerate(zip(joints, kinds)):
            last = k == len(joints) - 1
            name = a.get("name") or (f"{body.name}_joint" if len(joints) == 1 else f"{body.name}_joint{k}")
            child = body.name
            if not last:
                child = self._unique_generated_body(f"{body.name}_{name}_link")
                model.bodies[child] = Body(name=child, world=body.world, line=el.line, tree=tree, chain_link=True)
            self._joint(el, a, j_frame, name, prev, child, prev_frame)
            prev, prev_frame = child, Transform.identity()

    def _unique_generated_body(self, base: str) -> str:
        name, k = base, 1
        while name in self.model.bodies:
            name, k = f"{base}_{k}", k + 1
        return name

    def _joint(
        self, el: Element, a: _Attrs, j_frame: Transform, name: str, parent: str | None, child: str, local: Transform
    ) -> None:
        """One hinge, slide or ball joint from ``parent`` to ``child``; ``local`` is the
        child's frame in the parent, ``j_frame`` the joint's ``<frame>`` in the child."""
        model = self.model
        jtype = a.get("type", "hinge")
        if jtype not in ("hinge", "slide", "ball"):
            raise MimicInputError(f"{el.where}: joint '{name}' has unknown type \"{jtype}\"")
        if name in self.joint_info:
            raise MimicInputError(
                f"{el.where}: joint '{name}' is defined twice (first at line {self.joint_info[name]['el'].line})"
            )
        what = f"joint '{name}'"
        pos = j_frame.apply(a.numbers("pos", 3, default=(0, 0, 0), what=what))
        axis = j_frame.R @ a.numbers("axis", 3, default=(0, 0, 1), what=what)
        if np.linalg.norm(axis) < 1e-12:
            raise MimicInputError(f"{el.where}: {what} has a zero axis")
        axis = axis / np.linalg.norm(axis)
        angular = jtype in ("hinge", "ball")
        scale = self.angle if angular else 1.0
        ref = a.number("ref", 0.0, what) * scale if jtype != "ball" else 0.0
        rng = a.numbers("range", 2, what=what)
        limited = _bool(a.get("limited"), el, "limited", None)
        if limited is None:
            limited = rng is not None if self.autolimits else False
        if limited and rng is None:
            raise MimicInputError(f"{el.where}: {what} is limited but has no range")
        token, R = joint_axis_frame(axis)
        frame0 = local * Transform.make(pos, R)
        if jtype == "ball":
            joint = Joint(
                name, SPHERICAL, parent, child, local * Transform.make(pos), Transform.make(pos), line=el.line
            )
            if limited:
                joint.cone_limit = float(rng[1]) * scale
        elif jtype == "hinge":
            joint = Joint(
                name,
                REVOLUTE,
                parent,
                child,
                frame0,
                Transform.make(pos, R @ axis_angle(AXES[token], ref)),
                axis=token,
                line=el.line,
            )
        else:
            joint = Joint(
                name, PRISMATIC, parent, child, frame0, Transform.make(pos + axis * ref, R), axis=token, line=el.line
            )
        if limited and jtype != "ball":
            lo, hi = float(rng[0]) * scale, float(rng[1]) * scale
            if lo > hi:
                raise MimicInputError(f"{el.where}: {what} range {rng[0]:g} {rng[1]:g} is reversed")
            joint.lower, joint.upper = lo, hi
        joint.damping = a.number("damping", 0.0, what)
        joint.armature = a.number("armature", 0.0, what)
        joint.friction = a.number("frictionloss", 0.0, what)
        for field_name in ("damping", "armature", "friction"):
            if getattr(joint, field_name) < 0:
                attr = "frictionloss" if field_name == "friction" else field_name
                raise MimicInputError(f'{el.where}: {what} {attr}="{a.get(attr)}" is negative; it must be >= 0')
        stiffness = a.number("stiffness", 0.0, what)
        if stiffness < 0:
            raise MimicInputError(f'{el.where}: {what} stiffness="{a.get("stiffness")}" is negative; it must be >= 0')
        if stiffness:
            joint.stiffness = stiffness
            joint.target = a.number("springref", 0.0, what) * scale
        frc = a.numbers("actuatorfrcrange", 2, what=what)
        frc_limited = _bool(a.get("actuatorfrclimited"), el, "actuatorfrclimited", None)
        if frc is not None and (frc_limited or (frc_limited is None and self.autolimits)):
            joint.effort_limit = float(max(abs(frc[0]), abs(frc[1])))
        model.joints.append(joint)
        self.joint_info[name] = {"el": el, "ref": ref, "type": jtype, "joint": joint}

    # ---------------------------------------------------------------- geoms and inertia
    def _geom_shape(self, a: _Attrs, frame: Transform, body: str):
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

    def _geom(self, a: _Attrs, frame: Transform, body: str) -> Geom | None:
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
        extra = dict(
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

    def _mesh_asset(self, a: _Attrs, body: str) -> MeshAsset:
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

    def _rgba(self, a: _Attrs, what: str) -> np.ndarray:
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
            a = _Attrs(inertial, dict(inertial.attrib))
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
            shell = _bool(a.get("shellinertia"), g_el, "shellinertia", False)
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
                volume, unit = _primitive_inertia(gtype, size, shell)
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

    # ---------------------------------------------------------------- actuators, equalities
    def _actuators(self) -> None:
        skipped = []
        for section in self.root.findall("actuator"):
            for el in section.children:
                if el.tag not in ACTUATOR_TAGS:
                    raise MimicInputError(f"{el.where}: unknown actuator <{el.tag}>")
                a = self._merged_actuator(el)
                label = f"{el.tag} '{a.get('name')}'" if a.get("name") else f"{el.tag} (line {el.line})"
                joint_name = a.get("joint")
                info = self.joint_info.get(joint_name) if joint_name else None
                if joint_name and info is None:
                    raise MimicInputError(
                        f"{el.where}: actuator {label} names joint '{joint_name}', which does not exist"
                    )
                gains = self._drive_gains(el.tag, a) if info and info["type"] in ("hinge", "slide") else None
                if gains is None:
                    skipped.append(label)
                    continue
                kp, kv, dampratio = gains
                for gain_name, value in (("kp", kp), ("kv", kv), ("dampratio", dampratio)):
                    if value < 0:
                        raise MimicInputError(
                            f"{el.where}: actuator {label} has {gain_name} = {value:g} < 0: a USD "
                            "drive has no negative gains (use kp, kv, dampratio >= 0)"
                        )
                gear = a.numbers("gear", (1, 2, 3, 4, 5, 6), default=(1,))[0]
                if gear == 0:
                    raise MimicInputError(f"{el.where}: actuator {label} has gear 0, which drives nothing")
                joint: Joint = info["joint"]
                if dampratio:
                    kv = dampratio * 2.0 * math.sqrt(kp * self._reflected_mass(joint, el, label) / gear**2)
                if joint.stiffness:
                    self.model.warnings.append(
                        f"{el.where}: joint '{joint.name}' has a passive spring and a servo; "
                        "one USD drive holds the servo, the spring is dropped"
                    )
                joint.stiffness = kp * gear**2
                joint.damping += kv * gear**2
                joint.target = 0.0
                frc = a.numbers("forcerange", 2)
                limited = _bool(a.get("forcelimited"), el, "forcelimited", None)
                if frc is not None and (limited or (limited is None and self.autolimits)):
                    effort = float(max(abs(frc[0]), abs(frc[1]))) * abs(gear)
                    joint.effort_limit = min(effort, joint.effort_limit or math.inf)
        if skipped:
            self.model.warnings.append(
                f"{self.source}: actuators not imported as joint drives (only position, "
                f"velocity and affine general actuators on a joint are): {', '.join(skipped)}"
            )

    def _merged_actuator(self, el: Element) -> _Attrs:
        cls = el.get("class") or "main"
        if cls not in self.defaults:
            raise MimicInputError(f"{el.where}: <{el.tag}> names default class '{cls}', which does not exist")
        values: dict[str, str] = {}
        for tag in ("general", el.tag):
            values.update(self.defaults[cls].get(tag, {}))
        values.update(el.attrib)
        return _Attrs(el, values)

    def _drive_gains(self, tag: str, a: _Attrs):
        """(kp, kv, dampratio) when the actuator is a PD servo, else None."""
        if tag == "position":
            return a.number("kp", 1.0), a.number("kv", 0.0), a.number("dampratio", 0.0)
        if tag == "velocity":
            return 0.0, a.number("kv", 1.0), 0.0
        if tag == "general":
            if a.get("gaintype", "fixed") != "fixed" or a.get("biastype", "none") != "affine":
                return None
            if a.get("dyntype", "none") != "none":
                return None
            gain = a.numbers("gainprm", None, default=(1,))
            bias = np.concatenate([a.numbers("biasprm", None, default=(0, 0, 0)), np.zeros(3)])
            kp = float(gain[0])
            if bias[0] != 0 or abs(bias[1] + kp) > 1e-12 * max(1.0, abs(kp)):
                return None
            return kp, -float(bias[2]), 0.0
        return None

    def _reflected_mass(self, joint: Joint, el: Element, label: str) -> float:
        """1 / (M^-1)_jj at the file's configuration: the inertia MuJoCo's dampratio uses.

        A tree with a massless moving body has a singular M; MuJoCo refuses such a model
        ("mass and inertia of moving bodies must be larger than mjMINVAL"), and so does this.
        """
        M, index = joint_space_inertia(self.model, self.model.bodies[joint.child].tree)
        k = index[joint.name]
        scale = float(np.max(np.abs(np.diag(M)))) if M.size else 0.0
        try:
            inv = np.linalg.inv(M) if scale > 0 and np.linalg.cond(M) < 1e12 else None
        except np.linalg.LinAlgError:
            inv = None
        if inv is None or not np.isfinite(inv[k, k]) or inv[k, k] <= 0:
            raise MimicInputError(
                f"{el.where}: actuator {label} uses dampratio, which needs the mass that joint "
                f"'{joint.name}' moves, but a body of its tree moves no mass (MuJoCo refuses that "
                "model too): give each moving body mass, or set kv instead of dampratio"
            )
        return 1.0 / inv[k, k]

    def _equalities(self) -> None:
        model = self.model
        for section in self.root.findall("equality"):
            for el in section.children:
                a = self._attrs(el, tag="equality")
                label = f"equality {el.tag}" + (f" '{el.get('name')}'" if el.get("name") else "") + f" (line {el.line})"
                if el.tag in ("connect", "weld"):
                    self._closure(el, a, label)
                    continue
                if el.tag != "joint":
                    self.not_imported.append(label)
                    continue
                check_attributes(el, MJCF_EQUALITY_JOINT, label, model.warnings, strict=True)
                active = _bool(a.get("active"), el, "active", True)
                j1, j2 = a.get("joint1"), a.get("joint2")
                if not j1:
                    raise MimicInputError(f"{el.where}: {label} needs joint1 (the follower)")
                if not j2:
                    raise MimicInputError(
                        f"{el.where}: {label} has no joint2: it fixes '{j1}' to a constant, "
                        "which is not a mimic relation (name the leader in joint2)"
                    )
                for j in (j1, j2):
                    if j not in self.joint_info:
                        raise MimicInputError(f"{el.where}: {label} names joint '{j}', which does not exist")
                    if self.joint_info[j]["type"] not in ("hinge", "slide"):
                        raise MimicInputError(
                            f"{el.where}: {label}: joint '{j}' is a {self.joint_info[j]['type']} "
                            "joint; mimic relations need hinge or slide joints"
                        )
                text = a.get("polycoef")
                coef = [0.0, 1.0, 0.0, 0.0, 0.0]
                if text is not None:
                    parts = ascii_split(text)
                    vals = [parse_number(p) for p in parts]
                    if not parts or len(parts) > 5 or any(v is None for v in vals):
                        raise MimicInputError(f'{el.where}: {label} polycoef="{text}" must be up to 5 finite numbers')
                    coef[: len(vals)] = vals
                if any(c != 0.0 for c in coef[2:]):
                    raise MimicInputError(
                        f"{el.where}: {label} has nonzero higher-order polycoef "
                        f"({' '.join(f'{c:g}' for c in coef)}): only a0 and a1 make a mimic relation"
                    )
                if not active:
                    model.warnings.append(
                        f'{el.where}: {label} has active="false": not loaded '
                        "(an inactive relation could not be switched on later)"
                    )
                    continue
                ref1, ref2 = self.joint_info[j1]["ref"], self.joint_info[j2]["ref"]
                a0, a1 = coef[0], coef[1]
                model.mimics.append(Mimic(j1, j2, a1, a0 + ref1 - a1 * ref2, Path(el.file), el.line))

    def _closure(self, el: Element, a: _Attrs, label: str) -> None:
        """``connect`` (a ball joint) or ``weld`` (a fixed one) between two bodies or sites:
        a loop closure, written as a joint excluded from the articulation."""
        model = self.model
        if not _bool(a.get("active"), el, "active", True):
            model.warnings.append(f'{el.where}: {label} has active="false": not loaded')
            return
        kind = SPHERICAL if el.tag == "connect" else FIXED
        world = Transform.identity()
        if a.get("site1") or a.get("site2"):
            ends = []
            for key in ("site1", "site2"):
                site = a.get(key)
                if site not in self.sites:
                    raise MimicInputError(f'{el.where}: {label} {key}="{site}" names no site')
                ends.append(self.sites[site])
            (b0, f0), (b1, f1) = ends
            if kind == SPHERICAL:  # the points meet; the frames turn freely
                f0, f1 = Transform.make(f0.p), Transform.make(f1.p)
        else:
            b0, b1 = a.get("body1"), a.get("body2")
            if not b0:
                raise MimicInputError(f"{el.where}: {label} needs body1 (or site1 and site2)")
            for b in (b0, b1):
                if b is not None and b != "world" and b not in model.bodies:
                    raise MimicInputError(f"{el.where}: {label} names body '{b}', which does not exist")
            b0 = None if b0 == "world" else b0
            b1 = None if b1 in (None, "world") else b1
            if b0 is None and b1 is None:
                raise MimicInputError(f"{el.where}: {label} joins the world to itself")
            pose0 = model.bodies[b0].world if b0 else world
            pose1 = model.bodies[b1].world if b1 else world
            anchor = a.numbers("anchor", 3, default=(0, 0, 0), what=label)
            if kind == SPHERICAL:  # anchor in body1; frames aligned at the file's pose
                f0 = Transform.make(anchor)
                f1 = Transform(pose1.R.T @ pose0.R, pose1.inverse().apply(pose0.apply(anchor)))
            else:  # weld: body2 held at relpose in body1 (the file's pose when its quat is 0)
                rel = a.numbers("relpose", 7, default=(0, 1, 0, 0, 0, 0, 0), what=label)
                relpose = (
                    Transform.make(rel[:3], quat_to_mat(rel[3:]))
                    if np.linalg.norm(rel[3:]) > 0
                    else pose0.inverse() * pose1
                )
                f1 = Transform.make(anchor)  # the weld point, in body2
                f0 = relpose * f1
        if b0 is None:  # body0 of a USD joint is a body; the world goes second
            b0, b1, f0, f1 = b1, None, f1, f0
        name = a.get("name") or f"{el.tag}_{el.line}"
        if b0 is None:  # two world sites
            raise MimicInputError(f"{el.where}: {label} joins the world to itself")
        model.closures.append(Closure(name, kind, b0, b1, f0, f1, line=el.line))

    def _contacts(self) -> None:
        self._mask_filters()
        for section in self.root.findall("contact"):
            for el in section.findall("exclude"):
                b1, b2 = el.get("body1"), el.get("body2")
                if b1 in self.model.bodies and b2 in self.model.bodies:
                    self.model.filtered_pairs.append((b1, b2))
                else:
                    raise MimicInputError(f"{el.where}: <exclude> names a body that does not exist")

    def _mask_filters(self) -> None:
        """MuJoCo lets two geoms collide when ``contype`` of one shares a bit with
        ``conaffinity`` of the other; every pair of colliders (of different bodies) that
        shares none becomes a filtered pair, so a simulator reading USD keeps them apart too."""
        model = self.model
        colliders = [(b.name, g) for b in model.bodies.values() for g in b.geoms if g.collision]
        colliders += [(None, g) for g in model.world_geoms if g.collision]
        masks = sorted({(g.contype, g.conaffinity) for _, g in colliders})
        apart = {(m1, m2) for m1 in masks for m2 in masks if not (m1[0] & m2[1]) and not (m2[0] & m1[1])}
        if not apart:
            return
        pairs = []
        for i, (b1, g1) in enumerate(colliders):
            for b2, g2 in colliders[i + 1 :]:
                if b1 != b2 and ((g1.contype, g1.conaffinity), (g2.contype, g2.conaffinity)) in apart:
                    pairs.append((g1, g2))
        if len(pairs) > MAX_FILTERED_PAIRS:
            model.warnings.append(
                f"{self.source}: contype/conaffinity keep {len(pairs)} collider pairs apart, more "
                f"than the {MAX_FILTERED_PAIRS} written as filtered pairs: none written"
            )
            return
        model.filtered_geoms.extend(pairs)

    def _tendons(self) -> None:
        for section in self.root.findall("tendon"):
            for el in section.children:
                self.not_imported.append(
                    f"tendon {el.tag}" + (f" '{el.get('name')}'" if el.get("name") else "") + f" (line {el.line})"
                )


def _primitive_inertia(gtype: str, size, shell: bool = False) -> tuple[float, np.ndarray]:
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


def joint_space_inertia(model: RobotModel, tree: int) -> tuple[np.ndarray, dict[str, int]]:
    """Joint-space mass matrix (with armature) of one tree at the file's configuration.

    From body Jacobians, ``M = sum_b m J_v^T J_v + J_w^T I J_w``; a floating root adds six
    free DOFs. Only used for MuJoCo's ``dampratio``, so a plain dense build is enough.
    """
    dofs: list[tuple[str, np.ndarray, np.ndarray | None]] = []  # (kind, axis, point)
    armature: dict[int, float] = {}
    index: dict[str, int] = {}
    body_dofs: dict[str, list[int]] = {}
    root = model.roots[tree]
    if model.floating.get(tree):
        origin = model.bodies[root].world.p
        for k in range(3):
            dofs.append(("slide", np.eye(3)[k], None))
        for k in range(3):
            dofs.append(("hinge", np.eye(3)[k], origin))
    body_dofs[root] = list(range(len(dofs)))
    # model.joints lists every joint after the one that reaches its parent body
    for j in model.joints:
        if j.child not in model.bodies or model.bodies[j.child].tree != tree:
            continue
        out = list(body_dofs.get(j.parent, [])) if j.parent else []
        parent_world = model.bodies[j.parent].world if j.parent else Transform.identity()
        f0 = parent_world * j.frame0
        if j.kind in (REVOLUTE, PRISMATIC):
            index[j.name] = len(dofs)
            out.append(len(dofs))
            armature[len(dofs)] = j.armature
            dofs.append(("hinge" if j.kind == REVOLUTE else "slide", f0.R @ AXES[j.axis], f0.p))
        elif j.kind == SPHERICAL:
            for k in range(3):
                out.append(len(dofs))
                dofs.append(("hinge", np.eye(3)[k], f0.p))
        body_dofs[j.child] = out
    n = len(dofs)
    M = np.zeros((n, n))
    for b in model.bodies.values():
        if b.tree != tree or b.inertia is None or b.name not in body_dofs:
            continue
        c = b.world.apply(b.inertia.com)
        I = b.world.R @ b.inertia.tensor @ b.world.R.T
        ids = body_dofs[b.name]
        Jv = np.zeros((3, len(ids)))
        Jw = np.zeros((3, len(ids)))
        for col, k in enumerate(ids):
            kind, axis, point = dofs[k]
            if kind == "slide":
                Jv[:, col] = axis
            else:
                Jw[:, col] = axis
                Jv[:, col] = np.cross(axis, c - point)
        M[np.ix_(ids, ids)] += b.inertia.mass * Jv.T @ Jv + Jw.T @ I @ Jw
    for k, arm in armature.items():
        M[k, k] += arm
    return M, index


def read_mjcf(path: str | os.PathLike) -> RobotModel:
    """Parse an MJCF file into a ``RobotModel`` (errors name the file and line)."""
    return MjcfReader(path).read()
