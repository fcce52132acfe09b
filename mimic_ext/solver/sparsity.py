"""The reduced system's sparsity, decided once per model (float64-free integer bookkeeping).

``H = S^T M S`` (k x k) can be nonzero only where two DOFs lie on one root path of a tree
(the composite pass visits exactly those pairs), gathered into the relations' columns, plus
where a compliant relation couples two columns. Ordering the columns so that each connected
group (trees joined by relations or loop closures) is contiguous, and inside a group the
leaves first (the column whose DOFs lie deepest in the link order first), is Featherstone's
LTDL order: a plain tree's factor has no fill beyond its branches (cost O(n d^2), d the depth)
and independent mechanisms are independent blocks. The symbolic LDL^T factor is computed
here (its below-diagonal slots and, per column, the slots its rank-one update touches), so
the kernel's numeric factorisation and solves only walk lists: no k x k storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class Sparsity:
    """A model's reduced-system layout. Value slots: ``0 .. k-1`` the diagonal of column c,
    ``k ..`` the below-diagonal entries of column q at ``colptr[q] .. colptr[q + 1] - 1`` (row
    ``row[slot]``, ascending). ``upd`` lists, column after column, the slot of ``(r_b, r_a)`` for
    every ``a <= b`` of the column's rows; ``ubase[a]`` (per below-diagonal slot a) is ``t - b`` for
    every target t of the slots b > a when those are consecutive (else -1: ``upd`` has them). Per composite-pass pair (in the kernel's visiting
    order): its DOFs ``(i, j, own)`` (own: both on one link, an ordered pair; else j is an
    ancestor DOF and the pair stands for both orders), the slot it adds to and its coefficient;
    ``runs``: the same with each run of one column's ancestors merged into one product (kind 2)."""

    k: int
    new_col: list[int]  # the renumbered column of each projection column
    colptr: np.ndarray
    row: np.ndarray
    upd: np.ndarray
    ubase: np.ndarray
    pairs: np.ndarray  # (n_pairs, 3): i, j, own
    pair_slot: np.ndarray
    pair_coef: np.ndarray
    dof_up: np.ndarray  # per DOF: where its run continues (-1: it ends there)
    runs: np.ndarray  # the pairs with runs merged (kind 2), their slots and coefficients
    run_slot: np.ndarray
    run_coef: np.ndarray
    group_lo: np.ndarray  # per column: its connected group's column range
    group_hi: np.ndarray
    _slots: dict

    @property
    def nnz(self) -> int:
        return int(self.colptr[-1]) if self.k else 0

    def slot(self, a: int, b: int) -> int:
        """The value slot of entry (a, b) (new columns), symmetric."""
        if a == b:
            return a
        return self._slots[(max(a, b), min(a, b))]


def _visit_pairs(parent: list[int], us: list[int], nd: list[int]) -> list[tuple[int, int, int]]:
    """The (i, j, own) pairs in the order the kernel's composite pass visits them."""
    out = []
    for ll in range(len(parent)):
        lk = len(parent) - 1 - ll
        for d in range(nd[lk]):
            i = us[lk] + d
            for d2 in range(nd[lk]):
                out.append((i, us[lk] + d2, 1))
            j = parent[lk]
            while j >= 0:
                for d2 in range(nd[j]):
                    out.append((i, us[j] + d2, 0))
                j = parent[j]
    return out


def _find(up: list[int], a: int) -> int:
    while up[a] != a:
        up[a] = up[up[a]]
        a = up[a]
    return a


def reduced_sparsity(
    parent: list[int],
    us: list[int],
    nd: list[int],
    cols: list[int],
    gains: list[float],
    k: int,
    couplings: Sequence[tuple[int, int]] = (),
    link_couplings: Sequence[tuple[int, int]] = (),
) -> Sparsity:
    """The layout of H for links (``parent``, first DOF ``us``, DOF count ``nd``; topological),
    DOF columns ``cols`` with gains; ``couplings``: DOF pairs a compliant relation couples in H;
    ``link_couplings``: link pairs a loop closure joins into one group (-1: the world)."""
    n = len(cols)
    visit = _visit_pairs(parent, us, nd)
    # tree order of each DOF: (link, d); a column's key is its deepest DOF's
    order_of = [0] * n
    for lk in range(len(parent)):
        for d in range(nd[lk]):
            order_of[us[lk] + d] = lk * 6 + d
    key = [-1] * k
    for i in range(n):
        key[cols[i]] = max(key[cols[i]], order_of[i])
    up = list(range(k))

    def join(a: int, b: int) -> None:
        ra, rb = _find(up, a), _find(up, b)
        if ra != rb:
            up[max(ra, rb)] = min(ra, rb)

    for i, j, _ in visit:
        join(cols[i], cols[j])
    for a, b in couplings:
        join(cols[a], cols[b])
    for la, lb in link_couplings:
        if la >= 0 and lb >= 0:
            join(cols[us[la]], cols[us[lb]])
    groups: dict[int, list[int]] = {}
    for c in range(k):
        groups.setdefault(_find(up, c), []).append(c)
    ordered: list[int] = []
    lo, hi = np.zeros(k, np.int64), np.zeros(k, np.int64)
    for members in sorted(groups.values(), key=lambda m: min(key[c] for c in m)):
        start = len(ordered)
        ordered += sorted(members, key=lambda c: -key[c])
        lo[start : len(ordered)], hi[start : len(ordered)] = start, len(ordered)
    new_col = [0] * k
    for pos, c in enumerate(ordered):
        new_col[c] = pos
    nc = [new_col[c] for c in cols]
    # the lower pattern of H, then the symbolic factor by the elimination tree
    below: list[set[int]] = [set() for _ in range(k)]
    for i, j, _ in visit:
        a, b = nc[i], nc[j]
        if a != b:
            below[min(a, b)].add(max(a, b))
    for a, b in couplings:
        x, y = nc[a], nc[b]
        if x != y:
            below[min(x, y)].add(max(x, y))
    children: list[list[int]] = [[] for _ in range(k)]
    struct: list[list[int]] = []
    for q in range(k):
        s = set(below[q])
        for ch in children[q]:
            s.update(r for r in struct[ch] if r != q)
        rows = sorted(s)
        struct.append(rows)
        if rows:
            children[rows[0]].append(q)
    colptr = np.zeros(k + 1, np.int64)
    slots: dict[tuple[int, int], int] = {}
    row = list(range(k))
    nxt = k
    for q in range(k):
        colptr[q] = nxt
        for r in struct[q]:
            slots[(r, q)] = nxt
            row.append(r)
            nxt += 1
    colptr[k] = nxt
    upd = []
    ubase = np.full(max(int(colptr[k]), 1), -1, np.int64)
    for q in range(k):
        rows = struct[q]
        for a in range(len(rows)):
            targets = [slots[(rows[b], rows[a])] for b in range(a + 1, len(rows))]
            upd += [rows[a]] + targets
            # below the diagonal, targets in consecutive slots (always on a plain tree, whose column r_a
            # holds exactly the rows after it here) are addressed from one base: slot(b) = base + b
            if all(t == targets[0] + i for i, t in enumerate(targets)):
                sa = int(colptr[q]) + a
                ubase[sa] = (targets[0] if targets else sa + 1) - (sa + 1)
    # what each visited pair adds to the lower slots: the entries it stands for that land there
    pslot, pcoef = [], []
    for i, j, own in visit:
        a, b = nc[i], nc[j]
        g = gains[i] * gains[j]
        if own:
            coef = g if a >= b else 0.0
        else:
            coef = 2.0 * g if a == b else g
        pslot.append(a if a == b else slots[(max(a, b), min(a, b))])
        pcoef.append(coef)
    # the same pairs with each run merged (for a deep tree's composite pass): a run is a stretch of a
    # DOF's ancestors on 1-DOF links in one column (a follower right below its leader), whose pairs all
    # add to one slot; ``dof_up[j]`` continues DOF j's run at its parent's DOF, so that with
    # Q_j = g_j s_j + Q_up(j) one product Q_j . F_i stands for the run from j up (kind 2, coefficient
    # g_i, twice that on the diagonal)
    dof_up = [-1] * n
    for lk in range(len(parent)):
        p = parent[lk]
        if p >= 0 and nd[lk] == 1 and nd[p] == 1 and cols[us[lk]] == cols[us[p]]:
            dof_up[us[lk]] = us[p]
    merged: list[tuple[int, int, int]] = []  # (i, j, own)
    mslot: list[int] = []
    mcoef: list[float] = []
    last = -1  # the previous pair's column (read only once ``merged`` holds a pair)
    for (i, j, own), sl, coef in zip(visit, pslot, pcoef):
        if not own and merged and merged[-1][0] == i and merged[-1][2] != 1 and dof_up[last] == j:
            if merged[-1][2] == 0:  # the run's first pair becomes its product
                merged[-1] = (i, merged[-1][1], 2)
                mcoef[-1] = gains[i] * (2.0 if nc[i] == nc[j] else 1.0)
            last = j
            continue
        merged.append((i, j, own))
        mslot.append(sl)
        mcoef.append(coef)
        last = j
    return Sparsity(
        k=k,
        new_col=new_col,
        colptr=colptr,
        row=np.array(row, np.int64),
        upd=np.array(upd, np.int64),
        ubase=ubase,
        pairs=np.array(visit, np.int64).reshape(-1, 3),
        pair_slot=np.array(pslot, np.int64),
        pair_coef=np.array(pcoef, float),
        dof_up=np.array(dof_up, np.int64),
        runs=np.array(merged, np.int64).reshape(-1, 3),
        run_slot=np.array(mslot, np.int64),
        run_coef=np.array(mcoef, float),
        group_lo=lo,
        group_hi=hi,
        _slots=slots,
    )
