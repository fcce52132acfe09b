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

import math
import os
from pathlib import Path

import numpy as np

from ..errors import MimicInputError
from .model import FIXED, PRISMATIC, REVOLUTE, SPHERICAL, Body, Geom, Inertia, Joint, Mimic, RobotModel
from .transforms import (
    AXES,
    Transform,
    axis_angle,
    euler_to_rot,
    inertia_tensor,
    joint_axis_frame,
    quat_to_rot,
    shift_inertia,
    xyaxes_to_rot,
    z_to_vec,
)
from .values import number, numbers, parse_number
from .xmltree import Element, parse_xml

DEG = math.pi / 180.0
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder",
                 "muscle", "adhesion", "plugin")
IGNORED_TOP = {"option", "size", "visual", "statistic", "custom", "extension", "keyframe", "sensor",
               "asset", "default", "compiler", "contact", "tendon", "actuator", "equality", "worldbody"}
UNSUPPORTED = {"composite", "flexcomp", "replicate", "attach", "plugin", "deformable", "flex", "skin"}
BODY_CHILDREN = {"inertial", "joint", "freejoint", "geom", "site", "camera", "light", "body", "frame"}
PRIMITIVES = ("sphere", "capsule", "cylinder", "box", "ellipsoid")


def _bool(text: str | None, el: Element, name: str, default: bool | None) -> bool | None:
    if text is None or text == "auto":
        return default
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise MimicInputError(f"{el.where}: <{el.tag}> {name}=\"{text}\" must be true or false")


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
            raise MimicInputError(f"{root.where}: expected <mujoco> as the root element of an MJCF file, "
                                  f"found <{root.tag}>")
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
            raise MimicInputError(f"{el.where}: <compiler coordinate=\"{c['coordinate']}\"> is not supported "
                                  "(MuJoCo 2.3.3 and later read only local coordinates)")
        angle = c.get("angle", "degree")
        if angle not in ("degree", "radian"):
            raise MimicInputError(f"{el.where}: <compiler angle=\"{angle}\"> must be degree or radian")
        self.angle = DEG if angle == "degree" else 1.0
        self.eulerseq = c.get("eulerseq", "xyz")
        if len(self.eulerseq) != 3 or any(ch not in "xyzXYZ" for ch in self.eulerseq):
            raise MimicInputError(f"{el.where}: <compiler eulerseq=\"{self.eulerseq}\"> must be 3 of xyzXYZ")
        self.autolimits = _bool(c.get("autolimits"), el, "autolimits", True)
        ifg = c.get("inertiafromgeom", "auto")
        if ifg not in ("auto", "true", "false"):
            raise MimicInputError(f"{el.where}: <compiler inertiafromgeom=\"{ifg}\"> must be auto, true or false")
        self.inertiafromgeom = ifg
        rng = numbers(Element("compiler", c, el.line, el.file), "inertiagrouprange", 2, default=(0, 5))
        self.groups = (int(rng[0]), int(rng[1]))
        base = self.source.parent
        self.meshdir = base / c.get("meshdir", c.get("assetdir", ""))  # meshdir overrides assetdir

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
        self.meshes: dict[str, tuple[Path, tuple[float, float, float]]] = {}
        self.mesh_refs: dict[str, str] = {}
        for asset in self.root.findall("asset"):
            for el in asset.findall("mesh"):
                a = self._attrs(el)
                file = a.get("file")
                if not file:
                    continue  # meshes made from vertices in the file: not converted
                name = a.get("name") or Path(file).stem
                scale = tuple(a.numbers("scale", 3, default=(1, 1, 1)))
                self.meshes[name] = (self.meshdir / file, scale)
                self.mesh_refs[name] = file

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
            return quat_to_rot(q)
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
                    self._body(el, None, frame, cls, tree)
                    tree += 1
                elif el.tag == "geom":
                    g = self._geom(self._attrs(el, cls), frame, "world")
                    if g is not None:
                        model.world_geoms.append(g)
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
                f"MuJoCo computes from meshes ({', '.join(self._mesh_inertia_bodies)}); add <inertial> to import it")
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

    def _body(self, el: Element, parent: str | None, frame: Transform, inherited_cls: str | None, tree: int) -> None:
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
        body.inertia = self._inertia(name, inertials[0] if inertials else None, geoms)
        if body.inertia is None:
            model.massless_bodies.append(name)

        self._joints(body, parent, local, joints, tree)
        for child, c_frame, c_cls in items:
            if child.tag == "body":
                self._body(child, name, c_frame, c_cls, tree)

    def _joints(self, body: Body, parent: str | None, local: Transform, joints, tree: int) -> None:
        model = self.model
        if len(joints) > 1:
            raise MimicInputError(f"{joints[1][0].where}: body '{body.name}' has {len(joints)} joints; bodies with "
                                  "several joints are not supported (split them with intermediate bodies)")
        if not joints:
            if parent is not None:
                model.joints.append(Joint(f"{body.name}_weld", FIXED, parent, body.name,
                                          local, Transform.identity(), line=body.line))
            return
        el, j_frame, j_cls = joints[0]
        a = self._attrs(el, j_cls, tag="joint")
        jtype = "free" if el.tag == "freejoint" else a.get("type", "hinge")
        name = a.get("name") or f"{body.name}_joint"
        if jtype == "free":
            if parent is not None:
                raise MimicInputError(f"{el.where}: free joint '{name}' is only allowed in a top-level body")
            model.floating[tree] = True
            return
        if jtype not in ("hinge", "slide", "ball"):
            raise MimicInputError(f"{el.where}: joint '{name}' has unknown type \"{jtype}\"")
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
            joint = Joint(name, SPHERICAL, parent, body.name, local * Transform.make(pos), Transform.make(pos),
                          line=el.line)
            if limited:
                joint.cone_limit = float(rng[1]) * scale
        elif jtype == "hinge":
            joint = Joint(name, REVOLUTE, parent, body.name, frame0,
                          Transform.make(pos, R @ axis_angle(AXES[token], ref)), axis=token, line=el.line)
        else:
            joint = Joint(name, PRISMATIC, parent, body.name, frame0, Transform.make(pos + axis * ref, R),
                          axis=token, line=el.line)
        if limited and jtype != "ball":
            lo, hi = float(rng[0]) * scale, float(rng[1]) * scale
            if lo > hi:
                raise MimicInputError(f"{el.where}: {what} range {rng[0]:g} {rng[1]:g} is reversed")
            joint.lower, joint.upper = lo, hi
        joint.damping = a.number("damping", 0.0, what)
        joint.armature = a.number("armature", 0.0, what)
        joint.friction = a.number("frictionloss", 0.0, what)
        stiffness = a.number("stiffness", 0.0, what)
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
        collision = int(a.number("contype", 1)) != 0 or int(a.number("conaffinity", 1)) != 0
        name = a.get("name") or f"{'collision' if collision else 'visual'}_{a.el.line}"
        if gtype == "box":
            return Geom(name, "box", pose, tuple(2 * size), collision)
        if gtype == "sphere":
            return Geom(name, "sphere", pose, (size[0],), collision)
        if gtype in ("capsule", "cylinder"):
            return Geom(name, gtype, pose, (size[0], 2 * size[1]), collision)
        if gtype == "plane":
            return Geom(name, "plane", pose, (size[0], size[1]), collision)
        if gtype == "mesh":
            ref = a.get("mesh")
            if ref not in self.meshes:
                raise MimicInputError(f"{a.el.where}: geom in body '{body}' names mesh '{ref}', which is not an asset")
            path, scale = self.meshes[ref]
            return Geom(name, "mesh", pose, scale, collision, mesh_file=path if path.exists() else None,
                        mesh_ref=self.mesh_refs[ref])
        self.model.warnings.append(f"{a.el.where}: {gtype} geom in body '{body}' has no USD collision shape: left out")
        return None

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
            group = int(a.number("group", 0))
            if not self.groups[0] <= group <= self.groups[1]:
                continue
            gtype, pose, size = self._geom_shape(a, g_frame, body)
            if gtype == "mesh":
                if a.number("mass", None) == 0 or a.number("density", 1000.0) == 0:
                    continue
                self._mesh_inertia_bodies.append(body)
                return None
            if gtype not in PRIMITIVES:
                continue
            volume, unit = _primitive_inertia(gtype, size)
            mass = a.number("mass", None)
            if mass is None:
                mass = a.number("density", 1000.0) * volume
            if mass <= 0:
                continue
            parts.append((mass, pose, unit * mass))
            total += mass
        if total <= 0:
            return None
        com = sum(m * p.p for m, p, _ in parts) / total
        tensor = sum(shift_inertia(p.R @ I @ p.R.T, m, p.p - com) for m, p, I in parts)
        return Inertia.from_tensor(total, com, tensor)

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
                    raise MimicInputError(f"{el.where}: actuator {label} names joint '{joint_name}', which does not exist")
                gains = self._drive_gains(el.tag, a) if info and info["type"] in ("hinge", "slide") else None
                if gains is None:
                    skipped.append(label)
                    continue
                kp, kv, dampratio = gains
                gear = a.numbers("gear", (1, 2, 3, 4, 5, 6), default=(1,))[0]
                joint: Joint = info["joint"]
                if dampratio:
                    kv = dampratio * 2.0 * math.sqrt(kp * self._reflected_mass(joint) / gear ** 2)
                if joint.stiffness:
                    self.model.warnings.append(f"{el.where}: joint '{joint.name}' has a passive spring and a servo; "
                                               "one USD drive holds the servo, the spring is dropped")
                joint.stiffness = kp * gear ** 2
                joint.damping += kv * gear ** 2
                joint.target = 0.0
                frc = a.numbers("forcerange", 2)
                limited = _bool(a.get("forcelimited"), el, "forcelimited", None)
                if frc is not None and (limited or (limited is None and self.autolimits)):
                    effort = float(max(abs(frc[0]), abs(frc[1]))) * abs(gear)
                    joint.effort_limit = min(effort, joint.effort_limit or math.inf)
        if skipped:
            self.model.warnings.append(f"{self.source}: actuators not imported as joint drives (only position, "
                                       f"velocity and affine general actuators on a joint are): {', '.join(skipped)}")

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

    def _reflected_mass(self, joint: Joint) -> float:
        """1 / (M^-1)_jj at the file's configuration: the inertia MuJoCo's dampratio uses."""
        M, index = joint_space_inertia(self.model, self.model.bodies[joint.child].tree)
        k = index[joint.name]
        return 1.0 / np.linalg.inv(M)[k, k]

    def _equalities(self) -> None:
        model = self.model
        for section in self.root.findall("equality"):
            for el in section.children:
                a = self._attrs(el, tag="equality")
                label = f"equality {el.tag}" + (f" '{el.get('name')}'" if el.get("name") else "") + f" (line {el.line})"
                if el.tag != "joint":
                    self.not_imported.append(label)
                    continue
                active = _bool(a.get("active"), el, "active", True)
                j1, j2 = a.get("joint1"), a.get("joint2")
                if not j1:
                    raise MimicInputError(f"{el.where}: {label} needs joint1 (the follower)")
                if not j2:
                    raise MimicInputError(f"{el.where}: {label} has no joint2: it fixes '{j1}' to a constant, "
                                          "which is not a mimic relation (name the leader in joint2)")
                for j in (j1, j2):
                    if j not in self.joint_info:
                        raise MimicInputError(f"{el.where}: {label} names joint '{j}', which does not exist")
                    if self.joint_info[j]["type"] not in ("hinge", "slide"):
                        raise MimicInputError(f"{el.where}: {label}: joint '{j}' is a {self.joint_info[j]['type']} "
                                              "joint; mimic relations need hinge or slide joints")
                text = a.get("polycoef")
                coef = [0.0, 1.0, 0.0, 0.0, 0.0]
                if text is not None:
                    parts = text.split()
                    vals = [parse_number(p) for p in parts]
                    if not parts or len(parts) > 5 or any(v is None for v in vals):
                        raise MimicInputError(f"{el.where}: {label} polycoef=\"{text}\" must be up to 5 finite numbers")
                    coef[:len(vals)] = vals
                if any(c != 0.0 for c in coef[2:]):
                    raise MimicInputError(f"{el.where}: {label} has nonzero higher-order polycoef "
                                          f"({' '.join(f'{c:g}' for c in coef)}): only a0 and a1 make a mimic relation")
                if not active:
                    model.warnings.append(f"{el.where}: {label} has active=\"false\": not loaded "
                                          "(an inactive relation could not be switched on later)")
                    continue
                ref1, ref2 = self.joint_info[j1]["ref"], self.joint_info[j2]["ref"]
                a0, a1 = coef[0], coef[1]
                model.mimics.append(Mimic(j1, j2, a1, a0 + ref1 - a1 * ref2, Path(el.file), el.line))

    def _contacts(self) -> None:
        for section in self.root.findall("contact"):
            for el in section.findall("exclude"):
                b1, b2 = el.get("body1"), el.get("body2")
                if b1 in self.model.bodies and b2 in self.model.bodies:
                    self.model.filtered_pairs.append((b1, b2))
                else:
                    raise MimicInputError(f"{el.where}: <exclude> names a body that does not exist")

    def _tendons(self) -> None:
        for section in self.root.findall("tendon"):
            for el in section.children:
                self.not_imported.append(f"tendon {el.tag}" + (f" '{el.get('name')}'" if el.get("name") else "")
                                         + f" (line {el.line})")


def _primitive_inertia(gtype: str, size) -> tuple[float, np.ndarray]:
    """(volume, inertia per unit mass about the centre) of a MuJoCo primitive."""
    if gtype == "sphere":
        r = size[0]
        return 4.0 / 3.0 * math.pi * r ** 3, np.eye(3) * 0.4 * r * r
    if gtype == "box":
        x, y, z = size[:3]
        return 8 * x * y * z, np.diag([(y * y + z * z), (x * x + z * z), (x * x + y * y)]) / 3.0
    if gtype == "ellipsoid":
        a, b, c = size[:3]
        return 4.0 / 3.0 * math.pi * a * b * c, np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 5.0
    r, half = size[0], size[1]
    h = 2 * half
    if gtype == "cylinder":
        return math.pi * r * r * h, np.diag([(3 * r * r + h * h) / 12] * 2 + [r * r / 2])
    # capsule: a cylinder plus two hemispheres, with their offset centres
    v_cyl = math.pi * r * r * h
    v_sph = 4.0 / 3.0 * math.pi * r ** 3
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
    parent_joint = {j.child: j for j in model.joints if j.child in model.bodies and model.bodies[j.child].tree == tree}
    dofs: list[tuple[str, np.ndarray, np.ndarray | None, str | None]] = []  # (kind, axis, point, joint)
    index: dict[str, int] = {}
    body_dofs: dict[str, list[int]] = {}
    root = model.roots[tree]
    if model.floating.get(tree):
        origin = model.bodies[root].world.p
        for k in range(3):
            dofs.append(("slide", np.eye(3)[k], None, None))
        for k in range(3):
            dofs.append(("hinge", np.eye(3)[k], origin, None))

    def chain(body: str) -> list[int]:
        if body in body_dofs:
            return body_dofs[body]
        j = parent_joint.get(body)
        if j is None:
            out = list(range(len(dofs))) if body == root and model.floating.get(tree) else []
        else:
            out = list(chain(j.parent)) if j.parent else []
            if j.kind in (REVOLUTE, PRISMATIC):
                parent_world = model.bodies[j.parent].world if j.parent else Transform.identity()
                f0 = parent_world * j.frame0
                axis = f0.R @ AXES[j.axis]
                index[j.name] = len(dofs)
                out.append(len(dofs))
                dofs.append(("hinge" if j.kind == REVOLUTE else "slide", axis, f0.p, j.name))
                dofs_armature[len(dofs) - 1] = j.armature
            elif j.kind == SPHERICAL:
                p = (model.bodies[j.parent].world if j.parent else Transform.identity()).apply(j.frame0.p)
                for k in range(3):
                    out.append(len(dofs))
                    dofs.append(("hinge", np.eye(3)[k], p, None))
        body_dofs[body] = out
        return out

    dofs_armature: dict[int, float] = {}
    bodies = [b for b in model.bodies.values() if b.tree == tree]
    for b in bodies:
        chain(b.name)
    n = len(dofs)
    M = np.zeros((n, n))
    for b in bodies:
        if b.inertia is None:
            continue
        c = b.world.apply(b.inertia.com)
        I = b.world.R @ b.inertia.tensor @ b.world.R.T
        ids = body_dofs[b.name]
        Jv = np.zeros((3, len(ids)))
        Jw = np.zeros((3, len(ids)))
        for col, k in enumerate(ids):
            kind, axis, point, _ = dofs[k]
            if kind == "slide":
                Jv[:, col] = axis
            else:
                Jw[:, col] = axis
                Jv[:, col] = np.cross(axis, c - point)
        block = b.inertia.mass * Jv.T @ Jv + Jw.T @ I @ Jw
        M[np.ix_(ids, ids)] += block
    for k, arm in dofs_armature.items():
        M[k, k] += arm
    return M, index


def read_mjcf(path: str | os.PathLike) -> RobotModel:
    """Parse an MJCF file into a ``RobotModel`` (errors name the file and line)."""
    return MjcfReader(path).read()
