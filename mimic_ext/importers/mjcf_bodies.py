"""MJCF bodies and joints: the body tree depth first (``<frame>`` flattened), a body's several
joints as a chain of massless bodies, and each hinge, slide or ball joint with its ``ref``
carried in its frame (module docstring of ``mjcf.py``).
"""

from __future__ import annotations

import numpy as np

from ..errors import MimicInputError
from ..math3d import axis_angle
from .mjcf_file import UNSUPPORTED, Attrs, mjcf_bool
from .mjcf_geoms import MjcfGeoms
from .model import FIXED, PRISMATIC, REVOLUTE, SPHERICAL, Body, Joint
from .transforms import AXES, Transform, joint_axis_frame
from .xmltree import Element

BODY_CHILDREN = {"inertial", "joint", "freejoint", "geom", "site", "camera", "light", "body", "frame"}


class MjcfBodies(MjcfGeoms):
    """The body tree under ``<worldbody>``, with geoms, inertia and joints."""

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
        a = Attrs(el, dict(el.attrib))
        local = frame * self._pose(a)
        parent_world = model.bodies[parent].world if parent else Transform.identity()
        name = self._unique_body_name(el)
        body = Body(name=name, world=parent_world * local, line=el.line, tree=tree)
        model.bodies[name] = body
        if parent is None:
            model.roots[tree] = name
            model.floating[tree] = False
        if mjcf_bool(el.get("mocap"), el, "mocap", False):
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
        self, el: Element, a: Attrs, j_frame: Transform, name: str, parent: str | None, child: str, local: Transform
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
        limited = mjcf_bool(a.get("limited"), el, "limited", None)
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
                model.warnings.append(
                    f"{el.where}: {what}: MuJoCo limits a ball joint's whole rotation angle (swing and "
                    f"twist) to {rng[1]:g}; a USD spherical joint's cone limits its swing only: the twist "
                    f"about the cone's axis is free after import"
                )
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
        frc_limited = mjcf_bool(a.get("actuatorfrclimited"), el, "actuatorfrclimited", None)
        if frc is not None and (frc_limited or (frc_limited is None and self.autolimits)):
            joint.effort_limit = float(max(abs(frc[0]), abs(frc[1])))
        if jtype != "ball":
            joint.initial = float(ref)
        model.joints.append(joint)
        self.joint_info[name] = {"el": el, "ref": ref, "type": jtype, "joint": joint}
