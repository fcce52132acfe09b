"""The relations as a projection ``u = S v + u0`` (docs/solver_design.md, sections 2-4), built in Python.

The kernel only needs, per DOF, its root column and gain (``S`` has one nonzero per row),
the offset to measure the position error, and, per relation, how to read its impulse back
from the residual ``G^T mu``. All of that is decided here, once per model and again when
a relation is added at runtime; the forest logic (chains, redundancy, conflicts) is the
shared ``MimicForest``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ..schema.forest import REDUNDANT, MimicForest

if TYPE_CHECKING:
    from .loops import LoopSpace

ACTIVE_ROW, REDUNDANT_ROW, SOFT_ROW = 0, 1, 2
STATUS = {ACTIVE_ROW: "active", REDUNDANT_ROW: "redundant", SOFT_ROW: "compliant"}


@dataclass(frozen=True)
class RelationRow:
    """One relation between two DOFs of the model, SI, ``q_f = multiplier q_l + offset``."""

    key: str
    follower: str
    leader: str
    fi: int
    li: int
    multiplier: float
    offset: float
    natural_frequency: float = 0.0
    damping_ratio: float = 0.0

    @property
    def compliant(self) -> bool:
        return self.natural_frequency > 0.0 and self.damping_ratio > 0.0


class Projection:
    """Relations of one model folded into root columns, gains and an impulse read-out order."""

    def __init__(self, n_u: int, rows: Sequence[RelationRow] = (), loops: LoopSpace | None = None):
        self.n_u = n_u
        self.loops = loops
        self.rows: list[RelationRow] = []
        self.kinds: list[int] = []
        self.forest = MimicForest()
        for row in rows:
            self.add(row)

    def add(self, row: RelationRow) -> str:
        """Add a relation; raises ``MimicConflictError`` (nothing changed) when it cannot hold.

        With loop closures, a hard relation that would join two trees of the forest is first
        checked against the loops (``LoopSpace.classify``): one the loops already hold is
        redundant and not eliminated; one they contradict raises ``LoopConflictError``.
        """
        if row.compliant:
            kind = SOFT_ROW
            if row.fi == row.li:
                self.forest.add(row.key, row.fi, row.li, row.multiplier, row.offset)  # raises SELF
        elif (
            self.loops is not None
            and row.fi != row.li
            and row.multiplier != 0.0
            and self.forest.find(row.fi)[0] != self.forest.find(row.li)[0]
            and self.loops.classify(row, self.active_rows())
        ):
            kind = REDUNDANT_ROW
        else:
            status = self.forest.add(row.key, row.fi, row.li, row.multiplier, row.offset)
            kind = REDUNDANT_ROW if status == REDUNDANT else ACTIVE_ROW
        self.rows.append(row)
        self.kinds.append(kind)
        return STATUS[kind]

    def active_rows(self) -> list[RelationRow]:
        return [r for r, k in zip(self.rows, self.kinds) if k == ACTIVE_ROW]

    def columns(self) -> tuple[list[int], list[float], list[float], list[int], int]:
        """Per DOF: reduced column, gain a, offset beta, root DOF; and the column count k."""
        roots: list[int] = []
        gains: list[float] = []
        betas: list[float] = []
        for j in range(self.n_u):
            r, a, b = self.forest.find(j)
            roots.append(cast(int, r))  # the forest's joints here are DOF indices
            gains.append(a)
            betas.append(b)
        order = sorted(set(roots))
        col = {r: i for i, r in enumerate(order)}
        return [col[r] for r in roots], gains, betas, roots, len(order)

    def elimination(self) -> list[tuple[int, int]]:
        """(relation, DOF) pairs: solve ``mu_relation`` from that DOF's residual, in this order.

        The active relations form a forest over the DOFs; peeling leaves leaves exactly one
        unknown impulse per equation (docs/solver_design.md, section 4, generalised to any tree shape).
        """
        active = [i for i, k in enumerate(self.kinds) if k == ACTIVE_ROW]
        incident: dict[int, set[int]] = {}
        for i in active:
            incident.setdefault(self.rows[i].fi, set()).add(i)
            incident.setdefault(self.rows[i].li, set()).add(i)
        # always the first DOF (in order of first mention) left with one relation: a heap of the
        # DOFs that have one, by that order (a DOF's count only falls, so a stale entry has 0)
        position = {node: k for k, node in enumerate(incident)}
        leaves = [position[node] for node, rels in incident.items() if len(rels) == 1]
        heapq.heapify(leaves)
        nodes = list(incident)
        order: list[tuple[int, int]] = []
        left = set(active)
        while left and leaves:
            node = nodes[heapq.heappop(leaves)]
            if len(incident[node]) != 1:
                continue
            rel = next(iter(incident[node]))
            order.append((rel, node))
            left.discard(rel)
            for end in (self.rows[rel].fi, self.rows[rel].li):
                incident[end].discard(rel)
                if len(incident[end]) == 1:
                    heapq.heappush(leaves, position[end])
        return order  # a forest always empties ``left``; the read-out stays total anyway

    def elimination_terms(self, order: list[tuple[int, int]]) -> list[list[tuple[int, float]]]:
        """Per step of ``order``: the other active relations at its DOF, with the coefficient
        of their impulse in that DOF's residual (-1 at a follower, the multiplier at a leader).

        Listed once here so that the kernel sums only those, not every relation per step.
        """
        at: dict[int, list[int]] = {}  # DOF -> the active relations there, in order
        for i, k in enumerate(self.kinds):
            if k == ACTIVE_ROW:
                at.setdefault(self.rows[i].fi, []).append(i)
                if self.rows[i].li != self.rows[i].fi:
                    at.setdefault(self.rows[i].li, []).append(i)
        return [
            [
                (other, -1.0 if self.rows[other].fi == node else self.rows[other].multiplier)
                for other in at.get(node, [])
                if other != rel
            ]
            for rel, node in order
        ]
