"""Which collider pairs the contact filter lets through, from the colliders as read (numpy only).

``CollisionModel`` packs these tables for its kernels; ``solver.model.contact_model`` counts
the live pairs on them before any model is built, so a stage whose colliders can never touch
(a robot with self-collision off, the usual FET022 stage) loads neither the detection package
(Warp structs, kernels) nor builds a contact model only to drop it (issue 43).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .shapes import CollisionSpec


@dataclass
class PairFilter:
    """Per shape: its owner (a frame, or one per static actor) and frame (-1: static), its
    collision-group set; the group table; the filtered owner and shape pairs as keys."""

    owner_of: dict[str, int]  # actor -> owner
    n_owners: int
    owner: np.ndarray
    frame: np.ndarray
    gsets: list[frozenset]
    gset: np.ndarray
    table: list[int]  # len(gsets)**2 entries: 1 where the two group sets collide
    owner_keys: set[int]  # min*n_owners + max of owner pairs a joint or self-collision off filters
    shape_keys: set[int]  # min*n + max of shape pairs FilteredPairsAPI filters

    def live_pairs(self) -> int:
        """How many shape pairs the filter lets through: the host's reading of
        ``broadphase.filtered`` (same actor, two static shapes, collision groups, filtered actor
        pairs, filtered shape pairs) on the same tables. ``test_contact_fet022`` checks it
        against the kernel's own filter."""
        n = len(self.owner)
        if n < 2:
            return 0
        owner, frame = self.owner, self.frame
        gtable, n_gsets = np.array(self.table or [1], int), len(self.gsets) or 1
        i, j = np.triu_indices(n, 1)
        keep = (
            (owner[i] != owner[j])
            & ~((frame[i] < 0) & (frame[j] < 0))
            & (gtable[self.gset[i] * n_gsets + self.gset[j]] != 0)
        )
        if self.owner_keys:
            lo, hi = np.minimum(owner[i], owner[j]), np.maximum(owner[i], owner[j])
            keep &= ~np.isin(lo * self.n_owners + hi, np.fromiter(self.owner_keys, int))
        if self.shape_keys:
            keep &= ~np.isin(i * n + j, np.fromiter(self.shape_keys, int))
        return int(np.count_nonzero(keep))


def pair_filter(spec: CollisionSpec, body_frame: Mapping[str, int], n_frames: int) -> PairFilter:
    """The filter tables of ``spec``'s shapes against frames: ``body_frame`` maps each simulated
    body to its frame (the model's link, or a free body's frame), ``n_frames`` of them."""
    shapes = spec.shapes
    n = len(shapes)
    static_actors = sorted({s.actor for s in shapes if s.static})
    owner_of = {a: n_frames + i for i, a in enumerate(static_actors)}
    owner_of.update(body_frame)
    no = max(n_frames + len(static_actors), 1)
    frame = np.full(n, -1, int)
    for i, s in enumerate(shapes):
        if not s.static:
            assert s.body is not None  # a shape that is not static has a body
            frame[i] = body_frame[s.body]
    gsets = sorted({s.groups for s in shapes}, key=sorted)
    owner_keys = set()
    for a, b in spec.joint_pairs:
        if a in owner_of and b in owner_of and owner_of[a] != owner_of[b]:
            x, y = sorted((owner_of[a], owner_of[b]))
            owner_keys.add(x * no + y)
    for members in spec.no_self_collision:
        ids = sorted({owner_of[b] for b in members if b in owner_of})
        owner_keys.update(x * no + y for k, x in enumerate(ids) for y in ids[k + 1 :])
    return PairFilter(
        owner_of=owner_of,
        n_owners=no,
        owner=np.array([owner_of[s.actor] for s in shapes], int),
        frame=frame,
        gsets=gsets,
        gset=np.array([gsets.index(s.groups) for s in shapes], int),
        table=[int(spec.group_table.get((a, b), True)) for a in gsets for b in gsets],
        owner_keys=owner_keys,
        shape_keys={min(i, j) * n + max(i, j) for sa, sb in spec.filtered_pairs for i in sa for j in sb if i != j},
    )


__all__ = ["PairFilter", "pair_filter"]
