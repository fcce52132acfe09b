"""MJCF contact filtering: ``<contact><exclude>`` and the ``contype``/``conaffinity`` bit masks
as filtered pairs, so a simulator reading USD keeps apart what MuJoCo keeps apart.
"""

from __future__ import annotations

from ..errors import MimicInputError
from .mjcf_file import MjcfFile
from .model import Geom

#: the most collider pairs written as FilteredPairsAPI for contype/conaffinity
MAX_FILTERED_PAIRS = 20000


class MjcfContacts(MjcfFile):
    """Which colliders never touch."""

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
        colliders: list[tuple[str | None, Geom]] = [
            (b.name, g) for b in model.bodies.values() for g in b.geoms if g.collision
        ]
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
