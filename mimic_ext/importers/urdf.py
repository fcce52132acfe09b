"""URDF -> ``RobotModel``.

URDF's joint frame is its child link's frame; the joint rotates or slides along ``axis``
expressed in that frame. USD joints move along a coordinate axis of their joint frames,
so each joint frame is the URDF origin turned by the minimal rotation that takes the
nearest coordinate axis onto ``axis`` (identity for +X/+Y/+Z), which leaves the joint
coordinate, its limits and the mimic relations exactly as written.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ..errors import MimicInputError
from .known_attributes import URDF_MIMIC, check_attributes
from .model import FIXED, PRISMATIC, REVOLUTE, Body, Geom, Inertia, Joint, Mimic, RobotModel
from .transforms import Transform, inertia_tensor, joint_axis_frame, rpy_to_rot
from .values import UNBOUNDED, number, numbers
from .xmltree import Element, parse_xml

WORLD = "world"
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


def _origin(el: Element | None) -> Transform:
    if el is None:
        return Transform.identity()
    origin = el.find("origin")
    if origin is None:
        return Transform.identity()
    xyz = numbers(origin, "xyz", 3, default=(0, 0, 0))
    rpy = numbers(origin, "rpy", 3, default=(0, 0, 0))
    return Transform.make(xyz, rpy_to_rot(rpy))


def resolve_mesh_uri(uri: str, source: Path) -> Path | None:
    """A mesh filename as a local path: ``package://pkg/..`` is looked up in the folders
    above the URDF and in ROS_PACKAGE_PATH; None when it cannot be found."""
    if uri.startswith("file://"):
        p = Path(uri[len("file://") :])
        return p if p.exists() else None
    if uri.startswith("package://"):
        pkg, _, rest = uri[len("package://") :].partition("/")
        candidates = [d / pkg for d in source.resolve().parents]
        candidates += [Path(d) / pkg for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
        for base in candidates:
            if (base / rest).exists():
                return base / rest
        return None
    p = Path(uri)
    p = p if p.is_absolute() else source.parent / p
    return p if p.exists() else None


def _color(material: Element | None, named: dict[str, tuple], what: str) -> tuple | None:
    """RGBA of a ``<material>``: its own ``<color rgba>``, else the robot-level material of
    that name; None when neither gives one (a texture alone, or nothing)."""
    if material is None:
        return None
    color = material.find("color")
    if color is not None and color.get("rgba") is not None:
        rgba = numbers(color, "rgba", 4, what=f"<color> of {what}")
        assert rgba is not None  # the attribute is there
        return tuple(float(min(max(c, 0.0), 1.0)) for c in rgba)
    name = material.get("name")
    return named.get(name) if name else None


def _materials(root: Element) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for el in root.findall("material"):
        rgba = _color(el, {}, f"material '{el.get('name')}'")
        name = el.get("name")
        if name and rgba is not None:
            out[name] = rgba
    return out


def _geoms(link: Element, model: RobotModel, source: Path, named: dict[str, tuple]) -> list[Geom]:
    out = []
    for kind in ("collision", "visual"):
        for i, el in enumerate(link.findall(kind)):
            geometry = el.find("geometry")
            if geometry is None or not geometry.children:
                raise MimicInputError(f"{el.where}: <{kind}> of link '{link.get('name')}' has no <geometry>")
            shape = geometry.children[0]
            pose = _origin(el)
            name = el.get("name") or f"{kind}_{i}"
            what = f"<{shape.tag}> of link '{link.get('name')}'"
            collision = kind == "collision"
            rgba = None if collision else _color(el.find("material"), named, f"link '{link.get('name')}'")
            extra: dict[str, Any] = dict(rgba=rgba, visible=not collision)
            if shape.tag == "box":
                box = numbers(shape, "size", 3, what=what) if shape.get("size") else None
                if box is None:
                    _missing(shape, "size", what)
                out.append(Geom(name, "box", pose, tuple(box), collision, **extra))
            elif shape.tag == "sphere":
                out.append(Geom(name, "sphere", pose, (_req(shape, "radius", what),), collision, **extra))
            elif shape.tag in ("cylinder", "capsule"):
                r, length = _req(shape, "radius", what), _req(shape, "length", what)
                out.append(Geom(name, shape.tag, pose, (r, length), collision, **extra))
            elif shape.tag == "mesh":
                uri = shape.get("filename")
                if not uri:
                    raise MimicInputError(f"{shape.where}: {what} needs a filename")
                scale = tuple(numbers(shape, "scale", 3, default=(1, 1, 1), what=what))
                path = resolve_mesh_uri(uri, source)
                if path is None:
                    model.unresolved_meshes.append(uri)
                out.append(Geom(name, "mesh", pose, scale, collision, mesh_file=path, mesh_ref=uri, **extra))
            else:
                raise MimicInputError(
                    f"{shape.where}: unsupported geometry <{shape.tag}> in link "
                    f"'{link.get('name')}' (use box, sphere, cylinder, capsule or mesh)"
                )
    return out


def _req(el: Element, name: str, what: str) -> float:
    value = number(el, name, what=what)
    if value is None:
        _missing(el, name, what)
    return value


def _missing(el: Element, name: str, what: str) -> NoReturn:
    raise MimicInputError(f"{el.where}: {what} needs a {name} attribute")


def _inertia(link: Element) -> Inertia | None:
    inertial = link.find("inertial")
    if inertial is None:
        return None
    what = f"<inertial> of link '{link.get('name')}'"
    mass_el = inertial.find("mass")
    mass = number(mass_el, "value", what=what) if mass_el is not None else None
    if mass is None or mass <= 0.0:
        return None
    origin = _origin(inertial)
    el = inertial.find("inertia")
    if el is None:
        tensor = np.zeros((3, 3))
    else:
        vals = {k: number(el, k, 0.0, what=what) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
        tensor = inertia_tensor(**vals)
    return Inertia.from_tensor(mass, origin.p, origin.R @ tensor @ origin.R.T)


def _end_link(joint: Element, end: str) -> str:
    """The link a joint's ``<parent>`` or ``<child>`` names (each checked when the joints were read)."""
    el = joint.find(end)
    link = el.get("link") if el is not None else None
    assert link, f"{joint.where}: <{end}> was checked when the joints were read"
    return link


def _name(el: Element, what: str) -> str:
    name = el.get("name")
    if not name:
        raise MimicInputError(f"{el.where}: <{what}> without a name")
    return name


def read_urdf(path: str | os.PathLike) -> RobotModel:
    """Parse a URDF file into a ``RobotModel`` (errors name the file and line)."""
    source = Path(path)
    root = parse_xml(source)
    if root.tag != "robot":
        raise MimicInputError(f"{root.where}: expected <robot> as the root element of a URDF, found <{root.tag}>")
    model = RobotModel(name=root.get("name") or source.stem, source=source, format="URDF")
    named = _materials(root)

    links: dict[str, Element] = {}
    for el in root.findall("link"):
        name = _name(el, "link")
        if name in links:
            raise MimicInputError(f"{el.where}: link '{name}' is defined twice (first at line {links[name].line})")
        if len(el.findall("inertial")) > 1:
            raise MimicInputError(f"{el.where}: link '{name}' has more than one <inertial>")
        links[name] = el
    if not links:
        raise MimicInputError(f"{root.where}: the URDF has no <link>")

    joint_els: dict[str, Element] = {}
    parent_of: dict[str, Element] = {}
    children: dict[str, list[Element]] = {}
    for el in root.findall("joint"):
        name = _name(el, "joint")
        if name in joint_els:
            raise MimicInputError(f"{el.where}: joint '{name}' is defined twice (first at line {joint_els[name].line})")
        jtype = el.get("type")
        if jtype not in JOINT_TYPES:
            raise MimicInputError(
                f"{el.where}: joint '{name}' has unknown type \"{jtype}\" (use one of {', '.join(JOINT_TYPES)})"
            )
        ends = {}
        for end in ("parent", "child"):
            e = el.find(end)
            link = e.get("link") if e is not None else None
            if not link:
                raise MimicInputError(f"{el.where}: joint '{name}' needs <{end} link=\"...\"/>")
            if link not in links:
                raise MimicInputError(
                    f"{(e or el).where}: joint '{name}' names {end} link '{link}', which does not exist"
                )
            ends[end] = link
        if ends["child"] in parent_of:
            other = parent_of[ends["child"]]
            raise MimicInputError(
                f"{el.where}: link '{ends['child']}' is the child of two joints "
                f"('{other.get('name')}' at line {other.line} and '{name}'): URDF must be a tree"
            )
        parent_of[ends["child"]] = el
        children.setdefault(ends["parent"], []).append(el)
        joint_els[name] = el

    roots = [n for n in links if n not in parent_of]
    if len(roots) != 1:
        if not roots:
            raise MimicInputError(f"{root.where}: the joints form a loop (no root link): URDF must be a tree")
        raise MimicInputError(
            f"{root.where}: {len(roots)} root links ({', '.join(roots)}): connect them with joints into one tree"
        )
    root_link = roots[0]
    world_is_link = root_link == WORLD and not links[WORLD].children
    model.floating[0] = False

    # breadth-first over the tree: world poses and joints, parents before children
    in_mimic = {el.get("name") for el in root.findall("joint") if el.find("mimic") is not None}
    in_mimic |= {m.get("joint") for m in root.iter("mimic")}
    host: dict[str, tuple[str, Transform]] = {}  # folded link -> (its body, its pose in that body)
    order: deque[tuple[str, Transform]] = deque([(root_link, Transform.identity())])
    while order:
        link_name, pose = order.popleft()
        is_world = world_is_link and link_name == WORLD
        body_name, in_host = host.get(link_name, (link_name, Transform.identity()))
        if not is_world:
            el = links[link_name]
            body = Body(name=link_name, world=pose, inertia=_inertia(el), line=el.line)
            body.geoms = _geoms(el, model, source, named)
            if link_name in host:
                up = parent_of[link_name]
                body.frame_of, body.folded_joint = _end_link(up, "parent"), up.get("name") or ""
                model.folded_links.append(link_name)
            elif body.inertia is None:
                model.massless_bodies.append(link_name)
            model.bodies[link_name] = body
        for jel in children.get(link_name, []):
            child = _end_link(jel, "child")
            local = _origin(jel)
            origin = in_host * local
            if not is_world and _foldable(jel, links[child], in_mimic):
                host[child] = (body_name, origin)
            else:
                joint = _joint(jel, None if is_world else body_name, child, origin, model)
                if joint is not None:
                    model.joints.append(joint)
            order.append((child, pose * local))
    model.roots[0] = next(iter(model.bodies))

    for el in root.findall("joint"):
        name = _name(el, "joint")
        for tag in ("mimic", "limit", "axis", "dynamics", "origin"):
            extra = el.findall(tag)
            if len(extra) > 1:
                raise MimicInputError(
                    f"{extra[1].where}: joint '{name}' has a second <{tag}> (the first is at "
                    f"line {extra[0].line}); URDF allows one: remove one of them"
                )
        mimic = el.find("mimic")
        if mimic is None:
            continue
        what = f"joint '{name}' <mimic>"
        check_attributes(mimic, URDF_MIMIC, what, model.warnings, strict=False)
        leader = mimic.get("joint")
        if not leader:
            raise MimicInputError(f"{mimic.where}: {what} needs a joint attribute naming the leader")
        if leader not in joint_els:
            raise MimicInputError(f"{mimic.where}: {what} names joint '{leader}', which does not exist")
        multiplier = number(mimic, "multiplier", 1.0, what=what)
        offset = number(mimic, "offset", 0.0, what=what)
        model.mimics.append(Mimic(name, leader, multiplier, offset, source, mimic.line))
    return model


def _foldable(joint: Element, child: Element, in_mimic: set[str | None]) -> bool:
    """A fixed joint whose child link has no mass (no ``<inertial>``, or mass 0) is folded: the
    link becomes a frame of its parent's body, its visuals and collisions that body's, as Isaac
    Sim's URDF importer does with ``merge_fixed_joints`` (``ImportHelpers.cpp``,
    ``mergeFixedChildLinks``). Written as a body of its own, each simulator gives it a default
    mass (PhysX: 1 kg), which outweighs a light finger: the Inspire hand's fingertip frames.
    A joint a ``<mimic>`` names stays a joint."""
    if joint.get("type") != "fixed" or joint.get("name") in in_mimic:
        return False
    inertial = child.find("inertial")
    mass = inertial.find("mass") if inertial is not None else None
    try:
        return mass is None or float(mass.get("value") or 0.0) <= 0.0
    except ValueError:
        return False  # _inertia says what is wrong with the number


def _joint(el: Element, parent: str | None, child: str, origin: Transform, model: RobotModel) -> Joint | None:
    name = _name(el, "joint")
    jtype = el.get("type")
    what = f"joint '{name}'"
    if jtype == "planar":
        raise MimicInputError(f"{el.where}: {what}: planar joints are not supported (use two prismatic joints)")
    if jtype == "floating":
        if parent is None:
            model.floating[0] = True
            return None
        raise MimicInputError(f"{el.where}: {what}: a floating joint is only supported from the world link")
    if jtype == "fixed":
        return Joint(name, FIXED, parent, child, origin, Transform.identity(), line=el.line)
    axis_el = el.find("axis")
    axis = numbers(axis_el, "xyz", 3, what=f"{what} <axis>") if axis_el is not None and axis_el.get("xyz") else None
    if axis is None:
        axis = np.array([1.0, 0.0, 0.0])
    if np.linalg.norm(axis) < 1e-12:
        raise MimicInputError(f"{(axis_el or el).where}: {what} has a zero <axis>")
    token, R = joint_axis_frame(axis)
    kind = PRISMATIC if jtype == "prismatic" else REVOLUTE
    joint = Joint(
        name, kind, parent, child, origin * Transform.make(R=R), Transform.make(R=R), axis=token, line=el.line
    )
    limit = el.find("limit")
    if limit is not None:
        lw = f"{what} <limit>"
        if jtype != "continuous":
            joint.lower = number(limit, "lower", 0.0, what=lw)
            joint.upper = number(limit, "upper", 0.0, what=lw)
            if joint.lower > joint.upper:
                raise MimicInputError(f"{limit.where}: {lw} lower {joint.lower:g} is above upper {joint.upper:g}")
        effort = number(limit, "effort", None, what=lw)
        velocity = number(limit, "velocity", None, what=lw)
        # UNBOUNDED and above: the exporter's "no limit" (URDF requires the attributes)
        joint.effort_limit = effort if effort and 0 < effort < UNBOUNDED else None
        joint.velocity_limit = velocity if velocity and 0 < velocity < UNBOUNDED else None
    elif jtype != "continuous":
        model.warnings.append(f"{el.where}: {what} ({jtype}) has no <limit>: imported without limits")
    dyn = el.find("dynamics")
    if dyn is not None:
        joint.damping = number(dyn, "damping", 0.0, what=f"{what} <dynamics>")
        joint.friction = number(dyn, "friction", 0.0, what=f"{what} <dynamics>")
    return joint
