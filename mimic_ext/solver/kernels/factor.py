"""Dense Cholesky factorisation in place in a work-array row, with numerical rank selection,
and solves with it.

One routine serves the reduced system ``H`` (SPD: every pivot kept) and the loop rows'
Schur complement (positive semi-definite: planar loops repeat rows): a pivot that adds no
more than ``tol`` of its row's own diagonal, or no more than the row's floor, belongs to a
row the earlier ones already enforce; it is dropped (its unknown is 0).
Matrices are row-major at ``ws[e, o + i * m + j]``; the factor overwrites the lower part;
``ws[e, okeep + j]`` is a row's floor on entry and its kept flag (1 or 0) after.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import warp as wp


def build(ns) -> None:
    T = ns.T
    A2 = wp.array2d(dtype=T)

    @wp.func(inline=False)
    def factor(ws: A2, e: int, o: int, m: int, okeep: int, tol: T):
        """Lower Cholesky factor of the m x m matrix at ``o``, dropping dependent rows."""
        for j in range(m):
            diag = ws[e, o + j * m + j]
            s = diag
            for p in range(j):
                s = s - ws[e, o + j * m + p] * ws[e, o + j * m + p]
            if diag > T(0.0) and s > tol * diag and s > ws[e, okeep + j]:
                d = wp.sqrt(s)
                ws[e, okeep + j] = T(1.0)
                ws[e, o + j * m + j] = d
                for i in range(j + 1, m):
                    s2 = ws[e, o + i * m + j]
                    for p in range(j):
                        s2 = s2 - ws[e, o + i * m + p] * ws[e, o + j * m + p]
                    ws[e, o + i * m + j] = s2 / d
            else:
                ws[e, okeep + j] = T(0.0)
                ws[e, o + j * m + j] = T(1.0)
                for p in range(j):
                    ws[e, o + j * m + p] = T(0.0)
                for i in range(j + 1, m):
                    ws[e, o + i * m + j] = T(0.0)

    @wp.func
    def factor_spd(ws: A2, e: int, o: int, k: int, okeep: int):
        """The reduced system's factor: every positive pivot kept."""
        for j in range(k):
            ws[e, okeep + j] = T(0.0)
        factor(ws, e, o, k, okeep, T(0.0))

    @wp.func(inline=False)
    def solve(ws: A2, e: int, o: int, m: int, okeep: int, ox: int):
        """x <- A^+ x for the vector at ``ox`` over the kept rows (dropped rows get 0)."""
        for i in range(m):
            s = T(0.0)
            if ws[e, okeep + i] != T(0.0):
                s = ws[e, ox + i]
                for p in range(i):
                    s = s - ws[e, o + i * m + p] * ws[e, ox + p]
                s = s / ws[e, o + i * m + i]
            ws[e, ox + i] = s
        for ii in range(m):
            i = m - 1 - ii
            s = T(0.0)
            if ws[e, okeep + i] != T(0.0):
                s = ws[e, ox + i]
                for p in range(i + 1, m):
                    s = s - ws[e, o + p * m + i] * ws[e, ox + p]
                s = s / ws[e, o + i * m + i]
            ws[e, ox + i] = s

    ns.factor, ns.factor_spd, ns.solve = factor, factor_spd, solve
