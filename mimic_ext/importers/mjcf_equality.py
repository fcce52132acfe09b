"""MJCF equalities: ``joint`` equalities as mimic relations (``polycoef``'s a0 and a1, in
MuJoCo's numbers via each joint's ``ref``), ``connect`` and ``weld`` as loop closures.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np

from ..errors import MimicInputError
from ..math3d import quat_to_mat
from .known_attributes import MJCF_EQUALITY_JOINT, check_attributes
from .mjcf_file import Attrs, MjcfFile, mjcf_bool
from .model import FIXED, SPHERICAL, Closure, Mimic
from .transforms import Transform
from .values import ascii_split, parse_number
from .xmltree import Element


class MjcfEqualities(MjcfFile):
    """``<equality>`` between the joints, bodies and sites the bodies read."""

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
                active = mjcf_bool(a.get("active"), el, "active", True)
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
                    coef[: len(vals)] = cast(list[float], vals)  # none is None (refused above)
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

    def _closure(self, el: Element, a: Attrs, label: str) -> None:
        """``connect`` (a ball joint) or ``weld`` (a fixed one) between two bodies or sites:
        a loop closure, written as a joint excluded from the articulation."""
        model = self.model
        if not mjcf_bool(a.get("active"), el, "active", True):
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
