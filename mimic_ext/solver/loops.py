"""Loop closures at build time: where the mechanism closes, the loops' velocity null space
there, and what a hard mimic relation adds to them.

A relation whose velocity relation the loops (and the relations already active) imply is
*redundant*: it is listed but not eliminated, and the motion is unchanged. It must also
hold where the loops close, or it *contradicts* them (no configuration satisfies both). A
relation between two joints whose ratio the loops already fix to another value would leave
both joints only standing still: rejected too. Both errors name the relation and the
loop-closing joints. Everything here is float64 numpy on the kernel's own loop errors and
Jacobian (``evaluate(q) -> (e_L, J_L)``), at the configuration nearest the stage's initial
state that closes the loops (Gauss-Newton on the 1-DOF joints).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .errors import LoopConflictError
from .projection import RelationRow


class LoopSpace:
    """The loops of one model and the relations already eliminated, as linear algebra."""

    def __init__(
        self,
        evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
        q0: np.ndarray,
        n1: int,
        row_owner: list[str],
        tol: float,
        close_tol: float,
    ):
        self.evaluate = evaluate
        self.n1 = n1
        self.row_owner = row_owner  # loop-closing joint of each loop row
        self.tol = tol  # relative rank tolerance of the kernel's precision
        self.close_tol = close_tol  # m or rad: a loop error this small is closed
        self.q0 = np.asarray(q0, float)
        self.q_closed, self.closed = self.close(self.q0, [])
        _, self.J = self.evaluate(self.q_closed)

    # ---- configuration --------------------------------------------------------------------
    def close(self, q: np.ndarray, relations: list[RelationRow], iterations: int = 40) -> tuple[np.ndarray, bool]:
        """The configuration nearest ``q`` (1-DOF joints moved, least squares steps) where the
        loops close and ``relations`` hold; and whether it was reached."""
        q = np.array(q, float)
        for _ in range(iterations):
            err, J = self.evaluate(q)
            rows = [J[:, : self.n1]]
            res = [err]
            for r in relations:
                g = np.zeros(self.n1)
                g[r.fi] += 1.0
                g[r.li] -= r.multiplier
                rows.append(g[None])
                res.append(np.array([q[r.fi] - r.multiplier * q[r.li] - r.offset]))
            A, b = np.vstack(rows), np.concatenate(res)
            if np.abs(b).max(initial=0.0) < self.close_tol:
                return q, True
            step = np.linalg.lstsq(A, -b, rcond=None)[0]
            q[: self.n1] += step
        err, _ = self.evaluate(q)
        return q, bool(np.abs(err).max(initial=0.0) < self.close_tol)

    # ---- relations ------------------------------------------------------------------------
    def _null(self, active: list[RelationRow]) -> np.ndarray:
        """Orthonormal basis (n x d) of the velocities the loops and ``active`` relations allow."""
        n = self.J.shape[1]
        rows = [self.J]
        for r in active:
            g = np.zeros(n)
            g[r.fi] += 1.0
            g[r.li] -= r.multiplier
            rows.append(g[None])
        A = np.vstack(rows)
        if A.shape[0] == 0:
            return np.eye(n)
        _, s, vt = np.linalg.svd(A)
        rank = int((s > self.tol * max(s.max(initial=0.0), 1e-300)).sum())
        return vt[rank:].T

    def _owners(self, row: RelationRow) -> list[str]:
        touched = np.flatnonzero((np.abs(self.J[:, row.fi]) > 0) | (np.abs(self.J[:, row.li]) > 0))
        names = dict.fromkeys(self.row_owner[i] for i in touched) or dict.fromkeys(self.row_owner)
        return list(names)

    def classify(self, row: RelationRow, active: list[RelationRow]) -> bool:
        """True when ``row`` repeats what the loops and ``active`` relations already hold (it is
        redundant), False when it is a new constraint; raises ``LoopConflictError`` when it
        contradicts them."""
        n = self.J.shape[1]
        g = np.zeros(n)
        g[row.fi] += 1.0
        g[row.li] -= row.multiplier
        N = self._null(active)
        gn = g @ N
        if np.linalg.norm(gn) <= self.tol * 1e2 * np.linalg.norm(g):
            q, ok = self.close(self.q_closed, active)
            err = q[row.fi] - row.multiplier * q[row.li] - row.offset
            if ok and abs(err) > 1e2 * self.close_tol:
                self._conflict(
                    row,
                    f"where the loops close, {row.follower} - {row.multiplier:g} * {row.leader} is "
                    f"{err + row.offset:.6g}, not the offset {row.offset:.6g} (SI); fix the offset or "
                    f"remove the relation",
                    LoopConflictError.LOOP_OFFSET,
                )
            return True
        nf, nl = N[row.fi], N[row.li]
        scale = max(np.linalg.norm(nf), np.linalg.norm(nl))
        if np.linalg.norm(nf) > self.tol * 1e2 and np.linalg.norm(nl) > self.tol * 1e2:
            s = np.linalg.svd(np.vstack([nf, nl]), compute_uv=False)
            if len(s) < 2 or s[1] <= self.tol * 1e2 * scale:  # the loops move the two in a fixed ratio
                ratio = float(nf @ nl / (nl @ nl))
                self._conflict(
                    row,
                    f"the loops already move {row.follower} at {ratio:.6g} times {row.leader}, not "
                    f"{row.multiplier:g}, so both could only stand still; remove the relation or fix "
                    f"its multiplier",
                    LoopConflictError.LOOP_GAIN,
                )
        return False

    def _conflict(self, row: RelationRow, why: str, kind: str):
        owners = self._owners(row)
        raise LoopConflictError(
            f"relation {row.key} contradicts the loop closure(s) {', '.join(owners)}: {why}", [row.key, *owners], kind
        )
