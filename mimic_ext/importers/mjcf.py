"""MJCF (MuJoCo XML) -> ``RobotModel``.

What MuJoCo does at compile time and a converter must do too: ``<include>`` and
``<default>`` classes (with ``childclass``), the compiler's angle unit and Euler sequence,
inertia from geoms when a body has no ``<inertial>``, and joint ``ref``: the file's
configuration is ``q = ref``, so each joint's frame in its child body carries the ref
displacement and the USD joint coordinate equals MuJoCo's ``q``. That keeps ranges,
drive targets and the relation ``q1 - ref1 = a0 + a1 (q2 - ref2)`` in MuJoCo's numbers:
canonical ``multiplier = a1``, ``offset = a0 + ref1 - a1 ref2``. ``polycoef`` is used
by MuJoCo as written (never converted by ``<compiler angle>``), and so is it here.

The reader is split by what it reads: ``mjcf_file`` (includes, compiler, defaults, assets,
orientation), ``mjcf_geoms``, ``mjcf_bodies``, ``mjcf_actuators``, ``mjcf_equality`` and
``mjcf_contacts``; ``MjcfReader`` joins them and reads the file in MuJoCo's order.
"""

from __future__ import annotations

import os

from ..errors import MimicInputError
from .joint_inertia import joint_space_inertia
from .mjcf_actuators import ACTUATOR_TAGS, MjcfActuators
from .mjcf_bodies import BODY_CHILDREN, MjcfBodies
from .mjcf_contacts import MAX_FILTERED_PAIRS, MjcfContacts
from .mjcf_equality import MjcfEqualities
from .mjcf_file import DEG, UNSUPPORTED, MeshAsset
from .mjcf_geoms import PRIMITIVES
from .model import RobotModel
from .transforms import Transform
from .values import numbers

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


class MjcfReader(MjcfBodies, MjcfActuators, MjcfEqualities, MjcfContacts):
    """An MJCF file read into a ``RobotModel`` (``read``)."""

    def read(self) -> RobotModel:
        model = self.model
        for opt in self.root.findall("option"):
            gravity = numbers(opt, "gravity", 3)
            if gravity is not None:
                model.gravity = gravity
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

    def _tendons(self) -> None:
        for section in self.root.findall("tendon"):
            for el in section.children:
                self.not_imported.append(
                    f"tendon {el.tag}" + (f" '{el.get('name')}'" if el.get("name") else "") + f" (line {el.line})"
                )


def read_mjcf(path: str | os.PathLike) -> RobotModel:
    """Parse an MJCF file into a ``RobotModel`` (errors name the file and line)."""
    return MjcfReader(path).read()


__all__ = [
    "ACTUATOR_TAGS",
    "BODY_CHILDREN",
    "DEG",
    "IGNORED_TOP",
    "MAX_FILTERED_PAIRS",
    "PRIMITIVES",
    "UNSUPPORTED",
    "MeshAsset",
    "MjcfReader",
    "joint_space_inertia",
    "read_mjcf",
]
