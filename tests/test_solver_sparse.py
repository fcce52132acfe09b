"""The reduced system in its tree's sparsity (issue 13): the kernel's sparse LDL^T against a
dense numpy solve of the same system, the layout on wide and deep trees, many independent
mechanisms in one model (work space per environment stays small), and relations, loops and
rows together."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from benchmarks import mechanisms as M
from mimic_ext.importers.mjcf import joint_space_inertia
from mimic_ext.solver import Solver, build_model
from mimic_ext.solver.sparsity import reduced_sparsity
from tests import solver_stages as S


def _dense(model, slots: np.ndarray) -> np.ndarray:
    """The symmetric k x k matrix held in a model's reduced-system slots."""
    sp = model.sparsity
    k = sp.k
    H = np.diag(slots[:k]).astype(float)
    for q in range(k):
        for s in range(sp.colptr[q], sp.colptr[q + 1]):
            H[sp.row[s], q] = H[q, sp.row[s]] = slots[s]
    return H


def _factor(model, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit lower L, D) of the kernel's LDL^T in the slots (row and column in elimination order)."""
    sp = model.sparsity
    L = np.eye(sp.k)
    for q in range(sp.k):
        for s in range(sp.colptr[q], sp.colptr[q + 1]):
            L[sp.row[s], q] = slots[s]
    return L, slots[: sp.k].astype(float)


def _mechanism(make) -> M.Mechanism:
    """``make()``, or a skip where the shared asset it is built from is absent."""
    try:
        return make()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def _model(mech, num_envs=1, precision="float64"):
    stage, paths = M.usd_stage(mech)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(stage, num_envs=num_envs, fix_base=True, precision=precision)
    return model, paths


@pytest.mark.parametrize("name", ["humanoid", "chain16"])
def test_sparse_factor_matches_dense_solve(name):
    """One step from rest at the file's pose (no limit acts, no loops): the kernel's H is
    S^T (M + armature + dt damping) S with M the importer's dense joint-space inertia; its
    LDL^T reproduces H + the folded drives, and its solve is numpy's dense solve.

    float64: the kernel and numpy factor and solve the same matrix in different orders, so
    agreement to 1e-9 of the largest entry (a few hundred roundings of 1e-16 each, times the
    condition number of these systems, below 1e4) is what exactness means here."""
    mech = _mechanism({"humanoid": M.humanoid, "chain16": lambda: M.chain(16)}[name])
    model, paths = _model(mech)
    solver = Solver(model)
    s0, s1, ctl = model.state(), model.state(), model.control()
    s0.joint_q.zero_()  # the file's pose, where the importer's M is taken
    dt = 1.0 / 240.0
    solver.step(s0, s1, ctl, dt)
    md, ws = model.data, solver._scratch.ws.numpy()[0]
    k, nnz = md.k, md.nnz
    # the reduced system from the importer's dense mass matrix (at the file's pose, which the stage starts in)
    Mi, index = joint_space_inertia(M.robot_model(mech), 0)
    n = model.dof_count
    Mm = np.zeros((n, n))
    order = [model.dof_index(paths[j]) for j in index]
    for a, ja in enumerate(index):
        for b, jb in enumerate(index):
            Mm[order[a], order[b]] = Mi[index[ja], index[jb]]
    cols, gains = md.dof_col.numpy(), md.dof_gain.numpy()
    Sm = np.zeros((n, k))
    Sm[np.arange(n), cols] = gains
    Md = Mm + np.diag(model.damping * dt)  # importer's M carries the armature already
    H_ref = Sm.T @ Md @ Sm
    HB = _dense(model, ws[md.o_HB : md.o_HB + nnz])
    # the stage stores frames, masses and inertias as float32 (the importer's M is from the file's
    # float64 numbers): they agree to ~7e-8 of the largest entry; 1e-6 leaves margin
    assert np.abs(HB - H_ref).max() <= 1e-6 * np.abs(H_ref).max()
    # the factor of H = HB + folded drives (gamma a^2 on the drives' diagonals)
    H = HB.copy()
    drv = ws[md.o_drv : md.o_drv + 3 * model.dof_count].reshape(-1, 3)
    for j in range(len(model.joints)):
        if drv[j, 2] == 0.0:
            H[cols[j], cols[j]] += gains[j] ** 2 * drv[j, 1]
    L, D = _factor(model, ws[md.o_H : md.o_H + nnz])
    assert (D > 0).all()
    assert np.abs(L @ np.diag(D) @ L.T - H).max() <= 1e-9 * np.abs(H).max()
    # v = H^-1 bh (no row acts at rest inside the limits)
    bh = ws[md.o_bh : md.o_bh + k]
    v_ref = np.linalg.solve(H, bh)
    v = ws[md.o_v : md.o_v + k]
    assert np.abs(v - v_ref).max() <= 1e-9 * max(np.abs(v_ref).max(), 1e-12)
    # the sparsity held: a tree's factor keeps no more than its root paths (no k x k storage)
    assert nnz - k <= len(model.sparsity.pairs)


def _plain_tree(parents: list[int]):
    return reduced_sparsity(
        parents,
        list(range(len(parents))),
        [1] * len(parents),
        list(range(len(parents))),
        [1.0] * len(parents),
        len(parents),
    )


def test_tree_factor_has_only_its_branches():
    """Featherstone's LTDL property: with the leaves-first order a plain tree's factor has no fill,
    its below-diagonal entries are exactly the (DOF, ancestor) pairs; a chain is dense, a star
    has one entry per leaf; independent trees are independent groups."""

    def ancestors(parents):
        total = 0
        for i in range(len(parents)):
            j = parents[i]
            while j >= 0:
                total += 1
                j = parents[j]
        return total

    chain = list(range(-1, 63))  # deep: 64 joints in a row
    star = [-1] + [0] * 63  # wide: 63 leaves on one root
    rng = np.random.default_rng(3)
    rand = [-1] + [int(rng.integers(0, i)) for i in range(1, 200)]
    for parents in (chain, star, rand):
        sp = _plain_tree(parents)
        assert sp.nnz - sp.k == ancestors(parents)
    assert _plain_tree(star).nnz - 64 == 63
    forest = [-1, 0, -1, 2, -1, 4]  # three two-joint mechanisms
    sp = _plain_tree(forest)
    assert sorted(set(zip(sp.group_lo.tolist(), sp.group_hi.tolist()))) == [(0, 2), (2, 4), (4, 6)]


def test_consecutive_update_slots_name_the_listed_targets():
    """The factorisation addresses a column's rank-one update from one base where its targets are
    consecutive slots (``ubase``) and through the listed slots (``upd``) elsewhere: both name the
    same slots. Always consecutive on a plain tree; random trees with mimic columns and compliant
    couplings (fill) exercise the listed path too."""

    def check(sp):
        listed = ut = 0
        for q in range(sp.k):
            s0, s1 = int(sp.colptr[q]), int(sp.colptr[q + 1])
            for a in range(s0, s1):
                if sp.ubase[a] >= 0:
                    assert sp.upd[ut] == sp.row[a]
                    assert [int(sp.ubase[a]) + b for b in range(a + 1, s1)] == sp.upd[ut + 1 : ut + s1 - a].tolist()
                else:
                    listed += 1
                ut += s1 - a
        assert ut == len(sp.upd)
        return listed

    rng = np.random.default_rng(5)
    for parents in (list(range(-1, 63)), [-1] + [int(rng.integers(0, i)) for i in range(1, 200)]):
        assert check(_plain_tree(parents)) == 0
    listed = 0
    for _ in range(200):
        n = int(rng.integers(2, 25))
        parents = [-1] + [int(rng.integers(-1, i)) for i in range(1, n)]
        k = int(rng.integers(1, n + 1))
        cols = [int(c) for c in rng.integers(0, k, n)]
        cols[:k] = range(k)  # every column holds a DOF
        couplings = [tuple(int(x) for x in rng.integers(0, n, 2)) for _ in range(int(rng.integers(0, 4)))]
        listed += check(reduced_sparsity(parents, list(range(n)), [1] * n, cols, [1.0] * n, k, couplings))
    assert listed > 0  # the fallback path was met


def test_merged_runs_add_what_their_pairs_add():
    """A deep tree's composite pass takes a run of ancestors in one column as one product with
    their summed, gain-weighted axes (``runs``, ``dof_up``): for any axes s_j and forces F_i, every
    slot receives what the pairs one by one give it. Random trees with 6-DOF and 1-DOF links,
    shared columns (followers below their leaders and elsewhere) and random gains; float64 sums of
    a few dozen products of order 1, so 1e-12 is rounding."""
    rng = np.random.default_rng(11)
    merged_any = False
    for _ in range(100):
        L = int(rng.integers(2, 20))
        parent = [-1] + [int(rng.integers(-1, i)) for i in range(1, L)]
        nd = [6 if parent[lk] < 0 and rng.random() < 0.3 else 1 for lk in range(L)]
        us = np.concatenate([[0], np.cumsum(nd)[:-1]]).astype(int).tolist()
        n = sum(nd)
        cols, k = [], 0
        for lk in range(L):  # a 1-DOF link joins its 1-DOF parent's column half the time
            for d in range(nd[lk]):
                p = parent[lk]
                if nd[lk] == 1 and p >= 0 and nd[p] == 1 and rng.random() < 0.5:
                    cols.append(cols[us[p]])
                else:
                    cols.append(k)
                    k += 1
        gains = rng.uniform(-2.0, 2.0, n).tolist()
        sp = reduced_sparsity(parent, us, nd, cols, gains, k)
        S, F = rng.normal(size=(n, 6)), rng.normal(size=(n, 6))
        Q = np.zeros((n, 6))
        for j in range(n):
            Q[j] = gains[j] * S[j] + (Q[sp.dof_up[j]] if sp.dof_up[j] >= 0 else 0.0)
        one_by_one, merged = np.zeros(sp.nnz), np.zeros(sp.nnz)
        for (i, j, _), sl, coef in zip(sp.pairs, sp.pair_slot, sp.pair_coef):
            one_by_one[sl] += coef * S[j] @ F[i]
        for (i, j, kind), sl, coef in zip(sp.runs, sp.run_slot, sp.run_coef):
            merged[sl] += coef * (Q[j] if kind == 2 else S[j]) @ F[i]
        merged_any |= len(sp.runs) < len(sp.pairs)
        assert np.allclose(merged, one_by_one, rtol=0.0, atol=1e-12)
    assert merged_any


@pytest.mark.slow
def test_many_independent_mechanisms_stay_small():
    """300 two-joint mimic pairs (FET022's scale stage) in one model: 300 groups of one column
    each, a work space per environment linear in the joints (no k^2 anywhere: k = 300 would
    need 90,000 entries for one dense matrix), and every relation held while the leaders are
    driven into their limits."""
    pairs = 300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(M.scale_stage(pairs), num_envs=2)
    n, k = model.dof_count, model.data.k
    assert (n, k) == (2 * pairs, pairs)
    sp = model.sparsity
    assert len(set(zip(sp.group_lo.tolist(), sp.group_hi.tolist()))) == pairs
    assert sp.nnz == k  # each group's H is 1 x 1
    assert model.work_size <= 40 * n  # linear in the joints (measured 25 per DOF)
    assert model.work_size < k * k
    solver = Solver(model)
    s0, s1, ctl = model.state(), model.state(), model.control()
    leads = [model.dof_index(p) for p in model.joint_paths if "/lead" in p]
    follows = [model.dof_index(p.replace("/lead", "/follow")) for p in model.joint_paths if "/lead" in p]
    tp = ctl.joint_target_q.numpy()
    tp[:, leads] = 2.0  # past the +60 deg limit: rows act
    ctl.joint_target_q.assign(tp)
    for _ in range(240):
        solver.step(s0, s1, ctl, 1.0 / 240.0)
        s0, s1 = s1, s0
    q = s0.joint_q.numpy()
    # float32: the relation holds to round-off of angles of order 1 (1e-7), 1e-5 with margin
    assert np.abs(q[:, follows] - 0.5 * q[:, leads]).max() < 1e-5
    # the limit holds: speculative rows stop the leader at the bound (float32, 1e-4 rad margin)
    assert q[:, leads].max() <= math.radians(60.0) + 1e-4
    assert q[:, leads].min() > math.radians(50.0)  # and the drive really pushed it there


def test_relations_loops_and_rows_together():
    """A loop-closed four-bar whose crank leads a wheel on a second tree (a mimic at 2, the
    wheel limited to +-30 deg) and a third, unrelated limited pendulum: three groups, a loop
    Schur complement, a relation and limit rows in one step. Pushed by an effort on the crank,
    every step ends with the loop closed, the relation held and both limits respected, and
    the wheel's limit stops the crank (through the relation and the loop)."""
    bld, J, _ = S.four_bar(theta0=1.0, a=0.1, b=0.25, c=0.2, d=0.22)
    wheel = bld.body("wheel", mass=0.1, inertia=(1e-4, 1e-4, 1e-4))
    wj = bld.revolute("wheel_joint", None, wheel, "Z", limits_deg=(-30.0, 30.0), pos0=(0.5, 0.5, 0))
    bld.mimic(wj, J["A"], 2.0, 0.0)
    pend = bld.body("pend", mass=0.1, inertia=(1e-4, 1e-4, 1e-4), com=(1.0, 0.1, 0.0))
    pj = bld.revolute("pend_joint", None, pend, "Z", limits_deg=(-10.0, 10.0), pos0=(1.0, 0.0, 0))
    model = build_model(bld.stage)
    assert [r["status"] for r in model.relations()] == ["active"] and model.loop_row_count == 5
    sp = model.sparsity
    assert len(set(zip(sp.group_lo.tolist(), sp.group_hi.tolist()))) == 2  # four-bar + wheel, pendulum
    iA, iw, ip = model.dof_index(J["A"]), model.dof_index(wj), model.dof_index(pj)
    solver = Solver(model)
    s0, s1, c = model.state(), model.state(), model.control()
    ef = c.joint_f.numpy()
    ef[:, iA], ef[:, ip] = 0.05, 0.01
    c.joint_f.assign(ef)
    top = 0.0
    for _ in range(120):
        solver.step(s0, s1, c, 1.0 / 60.0)
        s0, s1 = s1, s0
        q = s0.joint_q.numpy()[0].astype(float)
        # float32 on 0.1-0.25 m bars: the loop's projection closes it to ~1e-7 m; 1e-6 m with margin
        assert S.closure_gaps(model, bld.stage, q) < 1e-6
        # relation: round-off of angles of order 1 in float32 (1e-7 rad), 1e-5 with margin
        assert abs(q[iw] - 2.0 * q[iA]) < 1e-5
        # speculative limits stop at the bound to float32 round-off (1e-4 rad margin)
        assert q[iw] <= math.radians(30.0) + 1e-4 and q[ip] <= math.radians(10.0) + 1e-4
        top = max(top, q[iw])
    assert top > math.radians(29.0)  # the wheel's limit was reached and held the crank
    assert q[ip] > math.radians(9.0)


def _probe(K):
    """A kernel applying the row interface (``row_to_solve_space`` then ``constrained_response``)
    to the row at ``oj`` of environment 0's work space, the result at ``ox``."""
    import warp as wp

    @wp.kernel(module="unique", enable_backward=False)
    def probe(md: K.ModelData, ws: wp.array2d(dtype=K.T), oj: int, ox: int, out: wp.array(dtype=K.T)):
        e = wp.tid()
        out[e] = K.row_to_solve_space(md, ws, e, oj, ox)
        K.constrained_response(md, ws, e, ox)

    return probe


def _apply_interface(model, solver, J):
    import warp as wp

    md = model.data
    ws = solver._scratch.ws.numpy()
    ws[0, md.o_res : md.o_res + model.dof_count] = J
    solver._scratch.ws.assign(ws)
    out = wp.zeros(model.num_envs, dtype=model.dtype, device=model.device)
    wp.launch(
        _probe(model.kernels), dim=1, inputs=[md, solver._scratch.ws, md.o_res, md.o_rtmp, out], device=model.device
    )
    after = solver._scratch.ws.numpy()[0]
    return float(out.numpy()[0]), after[md.o_rtmp : md.o_rtmp + md.k], ws[0]


def test_row_interface_is_the_constrained_inverse():
    """The interface other row families (contacts) build on: a joint-space row J becomes J S in
    the solve space (returning J u0), and ``constrained_response`` applies C = H^-1 there (no
    loops: the humanoid), checked against numpy on the kernel's own H (float64, 1e-9 as above).
    With loops (the four-bar, float64) the response moves no loop row: J_L C x = 0."""
    mech = _mechanism(M.humanoid)
    model, _ = _model(mech)
    solver = Solver(model)
    s0, s1, ctl = model.state(), model.state(), model.control()
    solver.step(s0, s1, ctl, 1.0 / 240.0)
    md = model.data
    rng = np.random.default_rng(7)
    J = rng.standard_normal(model.dof_count)
    ju0, x, ws = _apply_interface(model, solver, J)
    cols, gains = md.dof_col.numpy(), md.dof_gain.numpy()
    Sm = np.zeros((model.dof_count, md.k))
    Sm[np.arange(model.dof_count), cols] = gains
    u0 = ws[md.o_u0 : md.o_u0 + model.dof_count]
    assert ju0 == pytest.approx(float(J @ u0), rel=1e-12, abs=1e-15)
    L, D = _factor(model, ws[md.o_H : md.o_H + md.nnz])
    H = L @ np.diag(D) @ L.T
    ref = np.linalg.solve(H, Sm.T @ J)
    assert np.abs(x - ref).max() <= 1e-9 * np.abs(ref).max()

    bld, Jp, _ = S.four_bar(theta0=1.0, a=0.1, b=0.25, c=0.2, d=0.22)
    model = build_model(bld.stage, precision="float64")
    solver = Solver(model)
    s0, s1, ctl = model.state(), model.state(), model.control()
    solver.step(s0, s1, ctl, 1.0 / 60.0)
    md = model.data
    J = np.zeros(model.dof_count)
    J[model.dof_index(Jp["A"])] = 1.0
    _, x, ws = _apply_interface(model, solver, J)
    JLr = ws[md.o_JLr : md.o_JLr + md.m * md.k].reshape(md.m, md.k)
    assert np.abs(x).max() > 0
    # the loop rows after the step's projection are those the response was built with; float64
    assert np.abs(JLr @ x).max() <= 1e-9 * np.abs(JLr).max() * np.abs(x).max()


@pytest.mark.parametrize("name, deep", [("robotiq", False), ("chain64", True)])
def test_scratch_per_environment_holds_only_what_the_step_reads(name, deep):
    """A shallow tree's composite pass never reads the deep tree's summed axes ``Q``, and a
    fixed-base model never runs the float64 momentum bookkeeping of floating bases: neither is
    allocated per environment (on the Robotiq the scratch is 1.6 MB per 1000 environments
    instead of 2.1 MB)."""
    model, _ = _model(_mechanism(M.MECHANISMS[name]), num_envs=8, precision="float32")
    assert bool(model.data.tree_mass) == deep
    sc = Solver(model, threads=1)._scratch
    assert sc.Q.shape == ((8, model.dof_count) if deep else (1, 1))
    for f in ("Rd", "pd", "Vd", "Pd", "Td", "Imd", "Ihd", "IId"):
        assert getattr(sc, f).shape == (1, 1), f  # no floating base here
    assert sc.S.shape == (8, model.dof_count) and sc.ws.shape == (8, model.work_size)
