"""Factorisations in place in a work-array row, and solves with them.

The reduced system ``H`` is factored as a sparse LDL^T on the slots its tree allows
(``sparsity.py``: the pattern, the order and every update's target are decided at build
time, so the numeric pass walks lists; a plain tree's factor is Featherstone's LTDL,
O(n d^2)). The loop rows' small Schur complement is factored densely (below).

The dense Cholesky serves the loop rows' Schur complement (one per model, rows x rows;
positive semi-definite: planar loops repeat rows): a pivot that adds no
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
    LP = ns.FactorPattern

    @wp.func(inline=False)
    def sparse_factor(lp: LP, ws: A2, e: int, o: int, okeep: int):
        """LDL^T of the reduced system in its slots at ``o``: D on the diagonal slots, the unit
        lower L below; a non-positive pivot's column is dropped (its unknown 0, flag at ``okeep``)."""
        ut = int(0)
        for q in range(lp.k):
            s0 = lp.colptr[q]
            s1 = lp.colptr[q + 1]
            d = ws[e, o + q]
            if d > T(0.0):
                ws[e, okeep + q] = T(1.0)
                idd = T(1.0) / d
                for a in range(s0, s1):
                    fa = ws[e, o + a] * idd
                    if fa != T(0.0):
                        ub = lp.ubase[a]
                        if ub >= 0:  # the targets below the diagonal in consecutive slots
                            t = o + lp.row[a]
                            ws[e, t] = ws[e, t] - fa * ws[e, o + a]
                            ob = o + ub
                            for b in range(a + 1, s1):
                                ws[e, ob + b] = ws[e, ob + b] - fa * ws[e, o + b]
                        else:
                            for b in range(a, s1):
                                t = o + lp.upd[ut + b - a]
                                ws[e, t] = ws[e, t] - fa * ws[e, o + b]
                    ut = ut + s1 - a
                    ws[e, o + a] = fa
            else:
                ws[e, okeep + q] = T(0.0)
                for a in range(s0, s1):
                    ws[e, o + a] = T(0.0)
                    ut = ut + s1 - a

    @wp.func(inline=False)
    def sparse_solve(lp: LP, ws: A2, e: int, o: int, okeep: int, ox: int, c0: int, c1: int):
        """x <- H^+ x with the factor at ``o``, for x at ``ox`` nonzero only in the columns
        ``c0 .. c1 - 1`` (a union of whole groups: the factor never leaves one)."""
        for q in range(c0, c1):
            xq = ws[e, ox + q]
            if xq != T(0.0):
                for a in range(lp.colptr[q], lp.colptr[q + 1]):
                    r = ox + lp.row[a]
                    ws[e, r] = ws[e, r] - ws[e, o + a] * xq
            if ws[e, okeep + q] != T(0.0):
                ws[e, ox + q] = xq / ws[e, o + q]
            else:
                ws[e, ox + q] = T(0.0)
        for qq in range(c0, c1):
            q = c1 - 1 - (qq - c0)
            if ws[e, okeep + q] != T(0.0):
                s = ws[e, ox + q]
                for a in range(lp.colptr[q], lp.colptr[q + 1]):
                    s = s - ws[e, o + a] * ws[e, ox + lp.row[a]]
                ws[e, ox + q] = s

    @wp.func
    def dot_run(ws: A2, e: int, oa: int, ob: int, n: int):
        """The dot product of the n entries at ``oa`` and at ``ob`` in four interleaved sums: one
        running sum is a chain of dependent adds (each waits for the last), four are not."""
        a0 = T(0.0)
        a1 = T(0.0)
        a2 = T(0.0)
        a3 = T(0.0)
        q = n // 4
        for h in range(q):
            i = 4 * h
            a0 = a0 + ws[e, oa + i] * ws[e, ob + i]
            a1 = a1 + ws[e, oa + i + 1] * ws[e, ob + i + 1]
            a2 = a2 + ws[e, oa + i + 2] * ws[e, ob + i + 2]
            a3 = a3 + ws[e, oa + i + 3] * ws[e, ob + i + 3]
        for i in range(4 * q, n):
            a0 = a0 + ws[e, oa + i] * ws[e, ob + i]
        return (a0 + a1) + (a2 + a3)

    @wp.func(inline=False)
    def factor(ws: A2, e: int, o: int, m: int, okeep: int, tol: T):
        """Lower Cholesky factor of the m x m matrix at ``o``, dropping dependent rows."""
        for j in range(m):
            diag = ws[e, o + j * m + j]
            s = diag - dot_run(ws, e, o + j * m, o + j * m, j)
            if diag > T(0.0) and s > tol * diag and s > ws[e, okeep + j]:
                d = wp.sqrt(s)
                ws[e, okeep + j] = T(1.0)
                ws[e, o + j * m + j] = d
                for i in range(j + 1, m):
                    s2 = ws[e, o + i * m + j] - dot_run(ws, e, o + i * m, o + j * m, j)
                    ws[e, o + i * m + j] = s2 / d
            else:
                ws[e, okeep + j] = T(0.0)
                ws[e, o + j * m + j] = T(1.0)
                for p in range(j):
                    ws[e, o + j * m + p] = T(0.0)
                for i in range(j + 1, m):
                    ws[e, o + i * m + j] = T(0.0)

    @wp.func(inline=False)
    def solve(ws: A2, e: int, o: int, m: int, okeep: int, ox: int):
        """x <- A^+ x for the vector at ``ox`` over the kept rows (dropped rows get 0)."""
        for i in range(m):
            s = T(0.0)
            if ws[e, okeep + i] != T(0.0):
                s = (ws[e, ox + i] - dot_run(ws, e, o + i * m, ox, i)) / ws[e, o + i * m + i]
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

    ns.factor, ns.solve, ns.dot_run = factor, solve, dot_run
    ns.sparse_factor, ns.sparse_solve = sparse_factor, sparse_solve
