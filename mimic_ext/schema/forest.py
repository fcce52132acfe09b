"""The affine forest of hard mimic relations (docs/solver_design.md, section 2).

Both the validator and the solver must agree on which relations are chains, redundant
(duplicates, reciprocals, consistent cycles) or impossible (contradicting offsets, a
cycle whose gains do not multiply to 1), so that logic lives here once. Each joint j
has a parent edge ``q_j = a q_parent + beta`` (roots: none); ``find`` composes the edges
up to the root. Trees are shallow (grippers and hands), so no path compression: the
edges must stay readable to name the relations involved in a conflict.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from ..errors import MimicInputError

ACTIVE = "active"
REDUNDANT = "redundant"

GAIN_RTOL = 1e-6  # float32 authoring (USD `float`) carries ~6e-8 relative error per value
OFFSET_ATOL = 1e-6  # rad or m: same float32 round-off on offsets of a few radians


class MimicConflictError(MimicInputError):
    """Relations that no configuration satisfies (contradicting offsets or a locking cycle)."""

    CONTRADICTION = "contradiction"
    GAIN_CYCLE = "gain_cycle"
    SELF = "self"
    ZERO_GAIN = "zero_gain"

    def __init__(self, message: str, relations: list[Hashable], kind: str):
        super().__init__(message)
        self.relations = relations
        self.kind = kind


@dataclass
class _Edge:
    parent: Hashable
    gain: float
    offset: float
    key: Hashable


@dataclass
class MimicForest:
    """Union of relations ``q_f = m q_l + c`` keyed by any hashable relation key."""

    gain_rtol: float = GAIN_RTOL
    offset_atol: float = OFFSET_ATOL
    _edges: dict[Hashable, _Edge] = field(default_factory=dict)
    _links: dict[Hashable, list[tuple[Hashable, Hashable]]] = field(default_factory=dict)
    status: dict[Hashable, str] = field(default_factory=dict)

    def find(self, joint: Hashable) -> tuple[Hashable, float, float]:
        """(root, a, beta) with ``q_joint = a q_root + beta``."""
        a, beta = 1.0, 0.0
        while joint in self._edges:
            e = self._edges[joint]
            a, beta = a * e.gain, a * e.offset + beta
            joint = e.parent
        return joint, a, beta

    def add(self, key: Hashable, follower: Hashable, leader: Hashable, multiplier: float, offset: float) -> str:
        """Add ``q_follower = multiplier q_leader + offset``; return ACTIVE or REDUNDANT.

        Raises ``MimicConflictError`` naming the relations when it contradicts the others.
        """
        if follower == leader:
            raise MimicConflictError(f"relation {key}: a joint cannot follow itself", [key], MimicConflictError.SELF)
        if multiplier == 0.0:
            raise MimicConflictError(
                f"relation {key}: multiplier 0 does not couple the joints", [key], MimicConflictError.ZERO_GAIN
            )
        r_f, a_f, b_f = self.find(follower)
        r_l, a_l, b_l = self.find(leader)
        if r_f != r_l:
            self._edges[r_f] = _Edge(r_l, multiplier * a_l / a_f, (multiplier * b_l + offset - b_f) / a_f, key)
            self._links.setdefault(follower, []).append((leader, key))
            self._links.setdefault(leader, []).append((follower, key))
            self.status[key] = ACTIVE
            return ACTIVE
        involved = self._loop_keys(follower, leader) + [key]
        gain, want_gain = a_f, multiplier * a_l
        if abs(gain - want_gain) > self.gain_rtol * max(abs(gain), abs(want_gain)):
            raise MimicConflictError(
                f"relations {', '.join(map(str, involved))} form a cycle whose gains multiply to "
                f"{want_gain / gain:.6g}, not 1: it would lock the joints",
                involved,
                MimicConflictError.GAIN_CYCLE,
            )
        want_offset = multiplier * b_l + offset
        if abs(b_f - want_offset) > self.offset_atol:
            raise MimicConflictError(
                f"relations {', '.join(map(str, involved))} contradict each other: they require an "
                f"offset of {b_f:.6g} and {want_offset:.6g} (SI) between the same joints",
                involved,
                MimicConflictError.CONTRADICTION,
            )
        self.status[key] = REDUNDANT
        return REDUNDANT

    def _loop_keys(self, a: Hashable, b: Hashable) -> list[Hashable]:
        """Keys of the active relations linking two joints of one tree (breadth-first)."""
        came: dict[Hashable, tuple[Hashable, Hashable] | None] = {a: None}
        queue = [a]
        while queue and b not in came:
            j = queue.pop(0)
            for other, key in self._links.get(j, []):
                if other not in came:
                    came[other] = (j, key)
                    queue.append(other)
        keys = []
        j = b
        while (step := came.get(j)) is not None:
            j, key = step
            keys.append(key)
        return keys[::-1]
