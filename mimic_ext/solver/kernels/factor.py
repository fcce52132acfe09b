"""Dense Cholesky factorisations in place in a work-array row, and solves with them.

``chol_*``: the reduced system ``H`` (SPD). ``drop_*``: a positive semi-definite Schur
complement (loop rows, whose planar loops repeat each other): a pivot that adds less
than ``tol`` of its row's own diagonal is a row the earlier ones already enforce; it is
dropped (its impulse is 0), which is the numerical rank selection of the solve.
Matrices are row-major at ``ws[e, o + i * k + j]``; the factor overwrites the lower part.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import warp as wp


def build(ns) -> None:
    T = ns.T
    A2 = wp.array2d(dtype=T)

    @wp.func(inline=False)
    def chol_factor(ws: A2, e: int, o: int, k: int):
        """Lower Cholesky factor of the k x k SPD matrix at ``o``, in place."""
        for j in range(k):
            s = ws[e, o + j * k + j]
            for p in range(j):
                s = s - ws[e, o + j * k + p] * ws[e, o + j * k + p]
            d = wp.sqrt(wp.max(s, T(1.0e-30)))
            ws[e, o + j * k + j] = d
            for i in range(j + 1, k):
                s2 = ws[e, o + i * k + j]
                for p in range(j):
                    s2 = s2 - ws[e, o + i * k + p] * ws[e, o + j * k + p]
                ws[e, o + i * k + j] = s2 / d

    @wp.func(inline=False)
    def chol_solve(ws: A2, e: int, o: int, k: int, ox: int):
        """x <- H^-1 x for the vector at ``ox``, with H's factor at ``o``."""
        for i in range(k):
            s = ws[e, ox + i]
            for p in range(i):
                s = s - ws[e, o + i * k + p] * ws[e, ox + p]
            ws[e, ox + i] = s / ws[e, o + i * k + i]
        for ii in range(k):
            i = k - 1 - ii
            s = ws[e, ox + i]
            for p in range(i + 1, k):
                s = s - ws[e, o + p * k + i] * ws[e, ox + p]
            ws[e, ox + i] = s / ws[e, o + i * k + i]

    @wp.func(inline=False)
    def drop_factor(ws: A2, e: int, o: int, m: int, okeep: int, tol: T):
        """Cholesky of the m x m PSD matrix at ``o`` dropping dependent rows (``ws[okeep + j]`` 0).

        On entry ``ws[okeep + j]`` holds each row's floor: a pivot must exceed it and ``tol`` of
        its own diagonal to be kept (the floor, ``tol`` of the largest diagonal of its kind,
        drops a direction that only a stiff drive lets move, whose impulse would be noise)."""
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

    @wp.func(inline=False)
    def drop_solve(ws: A2, e: int, o: int, m: int, okeep: int, ox: int):
        """x <- S^+ x over the kept rows (dropped rows get 0), with the factor at ``o``."""
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

    ns.chol_factor, ns.chol_solve, ns.drop_factor, ns.drop_solve = chol_factor, chol_solve, drop_factor, drop_solve
