"""Where each tree link's coordinates and velocity DOFs sit in ``joint_q`` / ``joint_qd``.

One place computes it (Newton's ``joint_q_start`` / ``joint_qd_start``), from the joint types'
sizes (``joint_types.JOINT_TYPES``: dofs, coords), so a new joint type is a row there, not a
hunt for ``n1 + 7 * b``. The order: every 1-DOF joint first, in link order, so that joint j is
coordinate and DOF j (the per-joint rows, drives, limits, relations and ``joint_turns`` index
both by j); then each multi-DOF link (a floating base, a spherical joint) in link order, its
coordinates and DOFs contiguous.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import joint_types as JT


@dataclass(frozen=True)
class DofLayout:
    """Per tree link: its first coordinate (``q_start``) and velocity DOF (``qd_start``) and
    their counts; ``n1`` the 1-DOF joints (the first ``n1`` columns of both)."""

    q_start: tuple[int, ...]
    qd_start: tuple[int, ...]
    coords: tuple[int, ...]
    dofs: tuple[int, ...]
    n1: int
    coord_count: int
    dof_count: int

    @classmethod
    def of(cls, jtypes: Sequence[int]) -> DofLayout:
        """The layout of links with the solver codes ``jtypes`` (``LinkSpec.jtype``), in link order."""
        kinds = [JT.BY_CODE[int(c)] for c in jtypes]
        dofs = tuple(int(t.dofs or 0) for t in kinds)
        coords = tuple(int(t.coords or 0) for t in kinds)
        q_start, qd_start = [0] * len(kinds), [0] * len(kinds)
        qc = uc = 0
        for single in (True, False):  # the 1-DOF joints first, then the multi-DOF links
            for i, (nd, nc) in enumerate(zip(dofs, coords)):
                if (nd == 1) == single:
                    q_start[i], qd_start[i] = qc, uc
                    qc, uc = qc + nc, uc + nd
        return cls(
            q_start=tuple(q_start),
            qd_start=tuple(qd_start),
            coords=coords,
            dofs=dofs,
            n1=sum(1 for nd in dofs if nd == 1),
            coord_count=qc,
            dof_count=uc,
        )

    def q_slice(self, link: int) -> slice:
        return slice(self.q_start[link], self.q_start[link] + self.coords[link])

    def qd_slice(self, link: int) -> slice:
        return slice(self.qd_start[link], self.qd_start[link] + self.dofs[link])
